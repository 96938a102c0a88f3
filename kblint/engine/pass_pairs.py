"""Pairs of alike entries classified by the LLM judge (pass 3): duplicate, conflict or unrelated.

A pair is asked as one graded item on the newer entry, with the older one beside it in the block
(`existing_entry`): the judge's verdict cache then keys it by both entries' content, and the
request gets the judge's structured output, budgets and retries. Its three levels are the three
classes; a class the judge is not confident of is a conflict (a human looks), never a duplicate.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..model.issue import DuplicateSummary, Issue
from ..rules import duplicates as duplicate_rules
from ..yamlread.lines import json_ready
from .pass_duplicates import Member, Pair
from .pass_entries import judged_entry

if TYPE_CHECKING:
    from ..judge import JudgeConfig, JudgeItem, JudgeOutcome, JudgeRequest

PAIR_ITEM = "same_knowledge"
PAIR_KEY = "pair:"  # the requests of pairs, among the judge's requests of entries
CLASSES = ("unrelated", "conflict", "duplicate")
UNSURE = "uncertain"  # the judge cannot tell: a conflict, so that a human looks
_ITEM_TEXT = (
    "Compare this entry with `existing_entry`, an entry already in the knowledge base, and say which "
    "level describes the two (not how good the entry is): `duplicate` when both make the same claim at "
    "the same scope, so this entry adds nothing; `conflict` when both are about the same subject at the "
    "same scope but their conclusions differ or contradict each other; `unrelated` otherwise (other "
    "subjects, or one subject at different scopes); `uncertain` when the two do not let you decide."
)
_LEVELS = [
    {"id": "unrelated", "description": "different subjects, or one subject at different scopes"},
    {"id": "conflict", "description": "same subject and scope, different or contradicting conclusions"},
    {"id": "duplicate", "description": "same claim at the same scope: the entry adds nothing new"},
    {"id": UNSURE, "description": "the two entries do not let you decide"},
]


@dataclass(slots=True)
class PairJudgment:
    """What pass 3 made of the pairs: their issues, and the counts of the report's duplicates block."""

    summary: DuplicateSummary
    issues: list[Issue] = field(default_factory=list)


def to_classify(pairs: list[Pair], max_compare: int) -> tuple[list[Pair], list[Pair]]:
    """(the pairs an LLM classifies, the others): of each entry's pairs, the MAX_COMPARE closest
    (a shared name first, then the most alike bodies). A pair whose newer entry suppresses
    possible_duplicate is not sent: its issue stays, for the suppression to hide."""
    by_entry: dict[str, list[Pair]] = {}
    rest: list[Pair] = []
    for p in pairs:
        if _quiet(p):
            rest.append(p)
        elif p.reported:
            by_entry.setdefault(p.newer.facts.path, []).append(p)
    chosen: list[Pair] = []
    for group in by_entry.values():
        group.sort(key=lambda p: (not p.same_name, -(p.similarity or 0.0)))
        chosen.extend(group[:max_compare])
        rest.extend(p for p in group[max_compare:] if p.alike)
    return chosen, [p for p in rest if p.alike]


def _quiet(pair: Pair) -> bool:
    """Whether the newer entry suppresses possible_duplicate as a whole."""
    return any(s.name == "possible_duplicate" and s.first == 0 for s in pair.newer.facts.suppress)


def unclassified(pairs: list[Pair], reason: str) -> PairJudgment:
    """possible_duplicate for each alike pair: no LLM classifies them."""
    alike = [p for p in pairs if p.alike and p.reported]
    summary = DuplicateSummary(enabled=True, pairs=len(alike), not_classified=len(alike))
    summary.reason = reason if alike else None
    return PairJudgment(summary, [duplicate_rules.possible_duplicate(p) for p in alike])


def _sent(m: Member, max_body_chars: int) -> dict[str, Any] | None:
    from ..judge.prompt import prompt_entry

    sent = judged_entry(m.ctx, m.facts, m.data)
    return prompt_entry(sent, max_body_chars) if sent is not None else None


def requests(pairs: list[Pair], config: JudgeConfig) -> list[JudgeRequest]:
    """One request for each pair whose entries can still be read, keyed PAIR_KEY + its index."""
    from ..judge import JudgeRequest

    found = []
    for n, p in enumerate(pairs):
        newer, older = _sent(p.newer, config.max_body_chars), _sent(p.older, config.max_body_chars)
        if newer is None or older is None:
            continue
        guidelines = json_ready(dict(p.newer.ctx.schema.guidelines))
        found.append(JudgeRequest(f"{PAIR_KEY}{n}", {**newer, "existing_entry": older}, [_item()], guidelines))
    return found


def _item() -> JudgeItem:
    from ..judge import JudgeItem

    return JudgeItem(PAIR_ITEM, _ITEM_TEXT, [dict(level) for level in _LEVELS])


def classified(pairs: list[Pair], rest: list[Pair], outcomes: list[JudgeOutcome], config: JudgeConfig) -> PairJudgment:
    """The issues of the judge's classes for PAIRS (by their outcomes), and possible_duplicate for
    the pairs it gave no class (and for REST, the pairs beyond max_compare)."""
    summary = DuplicateSummary(enabled=True, pairs=len(pairs) + len(rest))
    summary.classified = dict.fromkeys(CLASSES, 0)
    result = PairJudgment(summary)
    answered: set[int] = set()
    for outcome in outcomes:
        n = int(outcome.key[len(PAIR_KEY) :])
        verdict = next((v for v in outcome.verdicts if v.level in (*CLASSES, UNSURE)), None)
        if verdict is None or verdict.level is None:
            continue
        answered.add(n)
        sure = verdict.level != UNSURE and verdict.confidence >= config.min_confidence
        cls = verdict.level if sure else "conflict"
        summary.classified[cls] += 1
        pair = pairs[n]
        if cls != "unrelated":
            args = (verdict.reason, verdict.confidence, config.evaluator, verdict.cached)
            result.issues.append(duplicate_rules.classified(cls, pair, *args))
    unanswered = [p for n, p in enumerate(pairs) if n not in answered and p.alike]
    left = unanswered + rest
    summary.not_classified = len(left)
    reasons = [f"{len(unanswered)} without a class from the judge"] if unanswered else []
    reasons += [f"{len(rest)} beyond duplicates.max_compare of their entry, or suppressed"] if rest else []
    summary.reason = "; ".join(reasons) or None
    result.issues.extend(duplicate_rules.possible_duplicate(p) for p in left)
    return result
