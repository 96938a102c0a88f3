"""Scores (SPEC §5.4): an item's outcome on an entry is pass, fail, or none; the entry's score is
the weighted share of its items that passed; the KB's score is the mean of its entries' scores."""

from __future__ import annotations

from ..model.facts import EntryFacts
from ..model.issue import Issue
from ..rules import RULES


def record(facts: EntryFacts, weight: float, passed: bool) -> None:
    """An outcome of a rubric item with WEIGHT on the entry of FACTS."""
    facts.score_total += weight
    if passed:
        facts.score_passed += weight


def entry_score(facts: EntryFacts) -> float:
    """Σ(weight × pass) / Σ(weight) over the items with an outcome; 1 when none has one."""
    return facts.score_passed / facts.score_total if facts.score_total else 1.0


def kb_score(entries: list[EntryFacts]) -> float | None:
    """The mean of the entries' scores (None for a KB with no parsed entry)."""
    if not entries:
        return None
    return round(sum(entry_score(f) for f in entries) / len(entries), 4)


def below_threshold(facts: EntryFacts, threshold: float | None) -> Issue | None:
    """score_below_threshold for an entry whose score is below the KB's pass_threshold."""
    score = entry_score(facts)
    if threshold is None or score >= threshold:
        return None
    message = f"Entry '{facts.id}' scores {score:.2f}, below the KB's pass_threshold {threshold:.2f}"
    return RULES["score_below_threshold"].issue(facts.site, message, discriminator="score")
