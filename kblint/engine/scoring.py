"""Scores (README "Graded rubrics"): an item's outcome on an entry is a score from 0 to 1 (its
level's score for a graded item, 1 or 0 for a pass or a fail) or none; the entry's score is the
weighted mean of its items' scores; the KB's score is the mean of its entries' scores. A
`required: true` item without an outcome makes the entry's score incomplete. An entry whose score
is below `pass_threshold` (its type's, else the KB's) is `score_below_threshold`; a score equal to
it passes."""

from __future__ import annotations

import math

from ..model.facts import EntryFacts
from ..model.issue import Issue
from ..model.kbschema import KBSchema
from ..model.levels import Level, reaches
from ..model.plan import Binding, Plan
from ..rules import RULES


def record(facts: EntryFacts, b: Binding, passed: bool) -> None:
    """A pass or a fail of the rubric item B on the entry of FACTS."""
    facts.score_total += b.weight
    if passed:
        facts.score_passed += b.weight
    _settled(facts, b)


def not_applicable(facts: EntryFacts, b: Binding) -> None:
    """The rubric item B does not apply to the entry of FACTS (a status gate of another status): no
    outcome to score, and none missing, even when B is `required: true`."""
    _settled(facts, b)


def _settled(facts: EntryFacts, b: Binding) -> None:
    """B has an outcome on the entry of FACTS, or needs none: if it is required, it is not missing."""
    if b.required:
        facts.required_done = (*facts.required_done, b.id)


def record_level(facts: EntryFacts, b: Binding, level: Level) -> None:
    """The LEVEL the graded item B reached on the entry of FACTS."""
    facts.score_total += b.weight
    facts.score_passed += b.weight * level.score
    _settled(facts, b)
    facts.grades = (*facts.grades, (b.id, level.id, level.score))


def entry_score(facts: EntryFacts) -> float:
    """Σ(weight × score) / Σ(weight) over the items with an outcome; 1 when none has one."""
    return facts.score_passed / facts.score_total if facts.score_total else 1.0


def missing_required(facts: EntryFacts, bindings: list[Binding]) -> list[Binding]:
    """The `required: true` items among BINDINGS (those of the entry's type) without an outcome."""
    return [b for b in bindings if b.required and b.id not in facts.required_done]


def kb_score(entries: list[EntryFacts]) -> float | None:
    """The mean of the entries' scores (None for a KB with no parsed entry)."""
    if not entries:
        return None
    return round(sum(entry_score(f) for f in entries) / len(entries), 4)


def _shown(score: float, threshold: float) -> str:
    """SCORE with two decimals, or four cut short when two would show it equal to THRESHOLD (0.7951
    is not 0.80)."""
    shown = f"{score:.2f}"
    return shown if shown != f"{threshold:.2f}" else f"{math.floor(score * 10_000) / 10_000:.4f}"


def threshold_issue(facts: EntryFacts, plan: Plan, schema: KBSchema) -> Issue | None:
    """score_below_threshold for the entry of FACTS, unless its score is incomplete (a `required:
    true` item of its type has no outcome): an incomplete score is judged by no threshold."""
    if plan.has_required and missing_required(facts, plan.for_type(facts.type)):
        return None
    return below_threshold(facts, schema)


def below_threshold(facts: EntryFacts, schema: KBSchema) -> Issue | None:
    """score_below_threshold for an entry whose score is below the pass_threshold of its type, or
    else of its KB (SCHEMA)."""
    threshold = schema.threshold_for(facts.type)
    score = entry_score(facts)
    if threshold is None or reaches(score, threshold):
        return None
    ts = schema.types.get(facts.type)
    whose = f"of type '{facts.type}'" if ts is not None and ts.pass_threshold is not None else "of the KB"
    message = f"Entry '{facts.id}' scores {_shown(score, threshold)}, below the pass_threshold {threshold:.2f} {whose}"
    return RULES["score_below_threshold"].issue(facts.site, message, discriminator="score")
