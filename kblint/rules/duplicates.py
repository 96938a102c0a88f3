"""Rules between two entries: possible_duplicate (found by `kblint.engine.pass_duplicates`), and
duplicate_entry and conflicting_entries (a pair as the LLM judge classifies it, pass 3)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..model.issue import Issue, Related
from ..paths import decodable, display_path
from . import RULES

if TYPE_CHECKING:
    from ..engine.pass_duplicates import Pair


def _why(pair: Pair) -> str:
    parts = []
    if pair.same_name:
        parts.append("the same title or alias")
    if pair.similarity is not None:
        parts.append(f"bodies {pair.similarity:.0%} alike")
    return "; ".join(parts)


def _discriminator(pair: Pair) -> str:
    """The other entry, as the fingerprint knows it: stable wherever the KBs are."""
    other = pair.older.facts
    return f"{other.kb_name}:{other.relpath}"


def _related(pair: Pair) -> Related:
    other = pair.older.facts
    return Related(other.path, decodable(other.id), None if pair.similarity is None else round(pair.similarity, 3))


def possible_duplicate(pair: Pair) -> Issue:
    other = display_path(pair.older.facts.path)
    return RULES["possible_duplicate"].issue(
        pair.newer.facts.site,
        f"May duplicate {other}: {_why(pair)}",
        discriminator=_discriminator(pair),
        related=_related(pair),
    )


def classified(cls: str, pair: Pair, reason: str, confidence: float, evaluator: str, cached: bool) -> Issue:
    """The issue of a pair the judge classified: duplicate_entry for "duplicate", else
    conflicting_entries (a conflict, which a human curates)."""
    other = pair.older.facts
    named = f"{display_path(other.path)} ('{other.id}')"
    rule, what = (
        ("duplicate_entry", f"Duplicates {named}")
        if cls == "duplicate"
        else (
            "conflicting_entries",
            f"Conflicts with {named}: needs curation",
        )
    )
    return RULES[rule].issue(
        pair.newer.facts.site,
        what + (f": {reason}" if reason else ""),
        discriminator=_discriminator(pair),
        related=_related(pair),
        confidence=round(confidence, 3),
        evaluator=evaluator,
        cached=cached,
    )
