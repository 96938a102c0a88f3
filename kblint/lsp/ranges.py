"""Where an issue is in its file, as an editor underlines it: the link a link issue is about, the
frontmatter key an issue names, the column a parse error gives, else the text of its line.

Lines and columns here count from 0, in characters (code points); the server turns them into the
client's units."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..model.issue import Issue

LINK_RULES = frozenset({"broken_link", "unresolved_external", "noncanonical_link"})


@dataclass(frozen=True, slots=True)
class Span:
    line: int
    start: int
    end: int


def lines_of(text: str) -> list[str]:
    """TEXT's lines, split where an editor splits them (\\r\\n, \\r or \\n), as entries are read."""
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n")


def issue_span(issue: Issue, lines: list[str]) -> Span:
    index = min(max(issue.line - 1, 0), max(len(lines) - 1, 0))
    text = lines[index] if lines else ""
    found: tuple[int, int] | None = None
    if issue.rule in LINK_RULES:  # the discriminator ends in KB:NAME (noncanonical_link's after two lines)
        found = link_span(text, issue.column, issue.discriminator.rpartition("\n")[2].partition(":")[2])
    elif issue.field:
        found = key_span(text, issue.field)
    elif 1 < issue.column <= len(text):
        found = (issue.column - 1, len(text.rstrip()) or len(text))
    start, end = found or line_span(text)
    return Span(index, start, end)


def line_span(text: str) -> tuple[int, int]:
    """The line without its indentation and trailing blanks (a blank line: its start)."""
    stripped = text.strip()
    if not stripped:
        return 0, 0
    start = len(text) - len(text.lstrip())
    return start, start + len(stripped)


def key_span(text: str, key: str) -> tuple[int, int] | None:
    """The frontmatter KEY written on this line (at any depth, quoted or not, as a list item's key)."""
    m = re.match(r"""^[ \t]*(?:-[ \t]+)?(["']?)(""" + re.escape(key) + r""")\1[ \t]*:(?=[ \t]|$)""", text)
    return (m.start(2), m.end(2)) if m else None


def link_span(text: str, column: int, named: str) -> tuple[int, int] | None:
    """A link on this line: the `[[...]]` or `[...](...)` that starts at COLUMN (1-based) in a body,
    else the target NAMED as a frontmatter value."""
    at = column - 1
    if 0 < column <= len(text):
        if text.startswith(("[[", "![["), at):
            close = text.find("]]", at)
            if close >= 0:
                return at, close + 2
        if text[at] == "[":
            middle = text.find("](", at)
            close = text.find(")", middle) if middle >= 0 else -1
            if close >= 0:
                return at, close + 1
    for target in (named, named.removesuffix(".md")):
        if target:
            found = text.find(target, text.find(":") + 1)
            if found >= 0:
                return found, found + len(target)
    return None
