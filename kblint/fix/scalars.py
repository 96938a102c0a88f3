"""Where a value is written on a line of YAML frontmatter, found conservatively: a plain, 'single' or
"double" quoted scalar that starts after `- `, `: `, `[`, `{` or `,` and ends at the end of the line,
before a comment, or (in a flow collection) at `,`, `]` or `}`. A key, a comment, a block scalar's
text or part of a longer value is never taken for it; the fixes then check the edit by parsing
the result again, so what this misses costs a fix, never a wrong one."""

from __future__ import annotations

from dataclasses import dataclass

_QUOTES = ("", "'", '"')
_PLAIN_PUNCTUATION = frozenset("_-./ ()+")


@dataclass(frozen=True, slots=True)
class Scalar:
    """VALUE's text at characters [start, end) of a line (inside its quotes), and how it is quoted."""

    start: int
    end: int
    quote: str  # "", "'" or '"'


def comment_start(text: str) -> int:
    """Where a line's comment starts (len(TEXT) when it has none), quotes taken into account."""
    quote = ""
    i = 0
    while i < len(text):
        c = text[i]
        if quote == '"' and c == "\\":
            i += 2
            continue
        if quote and c == quote:
            quote = ""
        elif not quote and c in "'\"" and (i == 0 or text[i - 1] in " \t[{,:-"):
            quote = c
        elif not quote and c == "#" and (i == 0 or text[i - 1] in " \t"):
            return i
        i += 1
    return len(text)


def _starts_scalar(text: str, at: int) -> bool:
    """Whether a scalar may start at AT: after an indicator, never at the start of a line (a key)."""
    before = text[:at]
    stripped = before.rstrip(" \t")
    if not stripped:
        return False
    last = stripped[-1]
    if last in "[{,":
        return True
    spaced = len(stripped) < len(before)
    if last == ":":
        return spaced
    if last == "-":
        return spaced and (len(stripped) == 1 or stripped[-2] in " \t-")
    return False


def _ends_scalar(text: str, at: int, limit: int) -> bool:
    """Whether a scalar may end at AT (the comment starts at LIMIT)."""
    rest = text[at:limit].strip(" \t")
    if not rest:
        return True
    in_flow = "[" in text[:at] or "{" in text[:at]
    return in_flow and rest[0] in ",]}"


def find(text: str, value: str, prefix: str = "") -> list[Scalar]:
    """The scalars of the line TEXT written as PREFIX + VALUE, with the span of VALUE's part."""
    if not value:
        return []
    limit = comment_start(text)
    found = []
    for quote in _QUOTES:
        if quote and (quote in prefix + value or (quote == '"' and "\\" in prefix + value)):
            continue
        needle = quote + prefix + value + quote
        at = text.find(needle)
        while at >= 0 and at + len(needle) <= limit:
            end = at + len(needle)
            if _starts_scalar(text, at) and _ends_scalar(text, end, limit):
                start = at + len(quote) + len(prefix)
                found.append(Scalar(start, start + len(value), quote))
            at = text.find(needle, at + 1)
    return found


def can_write(value: str, quote: str) -> bool:
    """Whether VALUE can stand where a scalar quoted with QUOTE was, in the same quotes (plain
    text that YAML would read as another type is caught when the edit is parsed again)."""
    if not value or not value.isprintable():
        return False
    if quote == '"':
        return '"' not in value and "\\" not in value
    if quote == "'":
        return "'" not in value
    return (
        (value[0].isalnum() or value[0] == "_")
        and not value.endswith(" ")
        and all(c.isalnum() or c in _PLAIN_PUNCTUATION for c in value)
    )
