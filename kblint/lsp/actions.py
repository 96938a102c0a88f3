"""Quick fixes: the edits a code action offers for an issue.

A fix provider takes an issue with the file it is on (the bytes the editor holds) and returns the
fixes it knows for it, each a title and the edits that make it; the server offers every
provider's fixes for the issues under the editor's selection. `register` adds a provider. The
one built in offers the safe fixes of `kblint validate --fix` (kblint.fix), as one edit each: the
part of the file the fix changes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..model.issue import Issue
from ..model.kbschema import KBSchema
from ..yamlread import Limits
from .ranges import lines_of


@dataclass(frozen=True, slots=True)
class Edit:
    """Replace the text from (LINE, START) to (END_LINE, END), in characters from 0, with TEXT."""

    line: int
    start: int
    end_line: int
    end: int
    text: str


@dataclass(frozen=True, slots=True)
class Fix:
    title: str
    edits: tuple[Edit, ...]
    preferred: bool = False  # the fix an editor may make on its own ("fix all")


@dataclass(frozen=True, slots=True)
class Subject:
    """An issue, and its file as the editor holds it."""

    issue: Issue
    data: bytes
    schema: KBSchema
    relpath: str
    limits: Limits


FixProvider = Callable[[Subject], list[Fix]]
PROVIDERS: list[FixProvider] = []


def register(provider: FixProvider) -> FixProvider:
    PROVIDERS.append(provider)
    return provider


def fixes_for(subject: Subject) -> list[Fix]:
    """Every registered provider's fixes for SUBJECT's issue; a provider that fails offers none."""
    found: list[Fix] = []
    for provider in PROVIDERS:
        try:
            found += provider(subject)
        except Exception:  # noqa: BLE001 - a quick fix that cannot be made is not offered
            continue
    return found


@register
def safe_fixes(subject: Subject) -> list[Fix]:
    """The fix `kblint validate --fix` makes for the issue, if it has one."""
    from ..fix.fixers import FIXERS, Target

    issue = subject.issue
    fixer = FIXERS.get(issue.rule)
    target = Target.read(subject.data, subject.schema, issue.path, subject.relpath, subject.limits) if fixer else None
    fixed = fixer(issue, target) if fixer is not None and target is not None else None
    if fixed is None or fixed == subject.data:
        return []
    edit = edit_between(subject.data.decode("utf-8", "surrogateescape"), fixed.decode("utf-8", "surrogateescape"))
    return [Fix(f"Fix {issue.rule}: {issue.message}", (edit,), preferred=True)]


def edit_between(old: str, new: str) -> Edit:
    """The one edit that turns OLD into NEW: what lies between their common beginning and end."""
    start = 0
    limit = min(len(old), len(new))
    while start < limit and old[start] == new[start]:
        start += 1
    tail = 0
    while tail < limit - start and old[-1 - tail] == new[-1 - tail]:
        tail += 1
    start, end = _whole_break(old, start), len(old) - tail
    if end < len(old) and end > start and old[end - 1] == "\r" and old[end] == "\n":
        end += 1  # a line break is one place, not two
    end = max(end, start)
    line, column = _position(old[:start])
    end_line, end_column = _position(old[:end])
    return Edit(line, column, end_line, end_column, new[start : len(new) - (len(old) - end)])


def _whole_break(text: str, at: int) -> int:
    return at - 1 if 0 < at < len(text) and text[at - 1] == "\r" and text[at] == "\n" else at


def _position(before: str) -> tuple[int, int]:
    lines = lines_of(before)
    return len(lines) - 1, len(lines[-1])
