"""Helpers shared by the rule modules: building issues and reading entry values."""

from __future__ import annotations

from ..entry import Entry
from ..issue import Issue
from . import RULES


def entry_issue(entry: Entry, rule: str, message: str, *, line: int = 1, column: int = 1,
                field: str | None = None, severity: str | None = None, discriminator: str = "") -> Issue:
    spec = RULES[rule]
    return Issue(
        rule=rule,
        severity=severity or spec.severity,
        tier=spec.tier,
        message=message,
        kb_name=entry.kb_name,
        entry_id=entry.id,
        path=entry.path,
        line=line,
        column=column,
        field=field,
        discriminator=discriminator,
        entry_type=entry.type,
    )


def is_empty(value) -> bool:
    """Missing, null, empty or whitespace string, empty list or mapping."""
    if value is None:
        return True
    if isinstance(value, str):
        return not value.strip()
    if isinstance(value, (list, dict, tuple, set)):
        return len(value) == 0
    return False


def field_line(entry: Entry, name: str) -> int:
    """Line of a frontmatter key; a key only inside the nested `metadata:` points at that mapping."""
    fm = entry.raw.frontmatter
    if name in fm:
        return entry.key_line(name)
    if isinstance(fm.get("metadata"), dict) and name in fm["metadata"]:
        return entry.key_line("metadata")
    return 1
