"""Suppressions written in an entry (SPEC §12, README "Suppressions"):

- frontmatter `kblint: {disable: [NAME, ...]}` and a lone `<!-- kblint-disable NAMES -->` in the
  body apply to the whole entry;
- `<!-- kblint-disable-next-line NAMES -->` applies to the line after the comment;
- `<!-- kblint-disable NAMES -->` … `<!-- kblint-enable NAMES -->` applies to the lines between
  (`kblint-enable` with no names closes every open range).

A directive kblint cannot read is a `Malformed` note, which pass 1 reports as `invalid_suppression`;
names are checked against the rules, checkers and rubric items later (`engine.filters`).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, NamedTuple

from .markdown import strip_code

if TYPE_CHECKING:
    from .entry import RawEntry


class Suppression(NamedTuple):
    """One name suppressed: where it is written and the lines it covers (0, 0: the whole entry).
    A tuple, so that the result cache stores it as a plain JSON list."""

    name: str
    line: int
    first: int = 0
    last: int = 0

    def covers(self, line: int) -> bool:
        return self.first == 0 or self.first <= line <= self.last


class Malformed(NamedTuple):
    line: int
    message: str


DIRECTIVES = ("kblint-disable-next-line", "kblint-disable", "kblint-enable")
_DIRECTIVE_RE = re.compile(r"\s*(kblint-[\w-]*)")  # after `<!--`
_FRONTMATTER_KEYS = ("disable",)


def split_names(text: str) -> list[str]:
    return [n for n in re.split(r"[\s,]+", text) if n]


def suppressions(raw: RawEntry) -> tuple[tuple[Suppression, ...], tuple[Malformed, ...]]:
    """The entry's suppressions, and the directives that could not be read."""
    found: list[Suppression] = []
    bad: list[Malformed] = []
    _frontmatter(raw, found, bad)
    if "kblint-" in raw.body:  # a directive shown in code is an example, not a directive
        _comments(strip_code(raw.body), raw.body_line, found, bad)
    return tuple(found), tuple(bad)


def _frontmatter(raw: RawEntry, found: list[Suppression], bad: list[Malformed]) -> None:
    if "kblint" not in raw.frontmatter:
        return
    conf = raw.frontmatter["kblint"]
    line = raw.key_line("kblint")
    if not isinstance(conf, dict):
        bad.append(Malformed(line, "'kblint' must be a mapping such as {disable: [RULE, ...]}"))
        return
    for key in conf:
        if key not in _FRONTMATTER_KEYS:
            bad.append(Malformed(line, f"'kblint' has no key '{key}'{_did_you_mean(str(key), _FRONTMATTER_KEYS)}"))
    names = conf.get("disable")
    if isinstance(names, str):
        names = split_names(names)
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        if "disable" in conf:
            bad.append(Malformed(line, "'kblint.disable' must be a list of rule, checker or rubric item names"))
        return
    found.extend(Suppression(n.strip(), line) for n in names if n.strip())


def _comments(body: str, body_line: int, found: list[Suppression], bad: list[Malformed]) -> None:
    """Read the directives in order: ranges open at `kblint-disable` and close at `kblint-enable`;
    one still open at the end covers the whole entry, as a lone `kblint-disable` always has."""
    open_at: dict[str, int] = {}
    for line, end_line, directive, names in _directives(body, body_line):
        if directive not in DIRECTIVES:
            bad.append(Malformed(line, f"unknown directive '{directive}'{_did_you_mean(directive, DIRECTIVES)}"))
        elif directive == "kblint-enable":
            _close(names or list(open_at), open_at, line, found, bad)
        elif not names:
            bad.append(Malformed(line, f"'{directive}' names no rule: write the rules, checkers or items it is for"))
        elif directive == "kblint-disable-next-line":
            found.extend(Suppression(n, line, end_line + 1, end_line + 1) for n in names)
        else:
            for name in names:
                open_at.setdefault(name, line)
    found.extend(Suppression(name, line) for name, line in open_at.items())


def _close(
    names: list[str], open_at: dict[str, int], line: int, found: list[Suppression], bad: list[Malformed]
) -> None:
    for name in names:
        start = open_at.pop(name, None)
        if start is None:
            bad.append(Malformed(line, f"'kblint-enable {name}' has no 'kblint-disable {name}' above it"))
        else:
            found.append(Suppression(name, start, start, line))


def _directives(text: str, first_line: int) -> Iterator[tuple[int, int, str, list[str]]]:
    """(line, last line, directive, names) of each `<!-- kblint-... -->` comment in TEXT, in one
    pass: each `<!--` is tried once, and the search for `-->` goes on from the end of the comment."""
    line, counted = first_line, 0
    start = text.find("<!--")
    while start >= 0:
        head = _DIRECTIVE_RE.match(text, start + 4)
        if head is None:
            start = text.find("<!--", start + 4)
            continue
        end = text.find("-->", head.end())
        if end < 0:
            return  # no later comment can close either
        line += text.count("\n", counted, start)
        counted = start
        inner = text[head.end() : end]
        yield line, line + inner.count("\n"), head.group(1), split_names(inner)
        start = text.find("<!--", end + 3)


def _did_you_mean(name: str, known: tuple[str, ...]) -> str:
    near = difflib.get_close_matches(name, known, n=1)
    return f"; did you mean '{near[0]}'?" if near else ""
