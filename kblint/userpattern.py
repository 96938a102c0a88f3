"""Regular expressions written in kb.yaml (`validation.rules` patterns, `body_has_pattern`): run
with the `regex` module under a time budget per match, so that a pattern that backtracks
catastrophically, such as `^(a|a)*$`, costs at most the budget and cannot stop a run (README
"Limits"; `bench/README.md` has the measurements behind the choice of engine).

A pattern that exceeds the budget raises PatternTooSlow for that entry; the process then no longer
runs it, and every later entry gets the same error at once instead of waiting the budget again.
Once the patterns of a run have used up `_TOTAL_BUDGETS` budgets in a process, none runs any more:
a kb.yaml of many slow patterns costs seconds, not one budget each.

The engine expands counted repeats when it compiles (`(a{1000}){1000}` takes hundreds of MB), so
a pattern whose repeats would expand past `MAX_PIECES` is refused before it is compiled.
"""

from __future__ import annotations

import re
import time
from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import regex

DEFAULT_BUDGET = 1.0  # seconds; Limits.regex_timeout
MAX_PIECES = 10_000  # what counted repeats may expand a pattern to
MAX_NESTING = 100  # groups inside groups
_TOTAL_BUDGETS = 5  # budgets the slow patterns of a run may take in one process, in all

_budget = DEFAULT_BUDGET
_too_slow: set[tuple[str, int]] = set()  # patterns (with flags) that exceeded the budget here
_lost = 0.0  # seconds this process spent on matches that exceeded the budget


class PatternTooSlow(Exception):
    """A kb.yaml pattern took longer than the budget on one value (or was not run any more)."""

    def __init__(self, pattern: str, why: str):
        super().__init__(f"pattern {pattern!r} {why} (the limit, regex_timeout): not checked")
        self.pattern = pattern


def set_budget(seconds: float) -> None:
    """The time one match may take, for the run that starts (from the configuration's limits)."""
    global _budget, _lost  # noqa: PLW0603 - one setting for the run, inherited by the worker processes
    _budget = seconds
    _lost = 0.0
    _too_slow.clear()


def pattern_error(pattern: str, flags: int = 0) -> str | None:
    """Why PATTERN is not a valid regular expression kblint will run, or None."""
    import regex

    try:
        _compiled(pattern, flags)
    except (regex.error, PatternTooLarge) as exc:
        return str(exc)
    return None


class PatternTooLarge(Exception):
    """A pattern whose compiled form would be too large (counted repeats, nesting)."""


_COUNT = re.compile(r"\{(\d+)(?:,\d*)?\}")


def _class_end(pattern: str, i: int) -> int:
    """Where the character class opening at I ends (after its `]`)."""
    j = i + 1
    if pattern.startswith("^", j):
        j += 1
    if pattern.startswith("]", j):
        j += 1
    while j < len(pattern) and pattern[j] != "]":
        j += 2 if pattern[j] == "\\" else 1
    return j + 1


def expanded_pieces(pattern: str) -> int:
    """An upper bound of the pieces PATTERN becomes once its counted repeats (`x{n}`, `x{n,m}`:
    n copies) are expanded; PatternTooLarge when its groups nest past MAX_NESTING."""
    sizes = [0]  # the size of each open group so far, the whole pattern at the bottom
    last = 0  # the size of what a quantifier would repeat
    i = 0
    while i < len(pattern):
        c = pattern[i]
        count = _COUNT.match(pattern, i) if c == "{" else None
        if count is not None:
            digits = count.group(1)
            n = int(digits) if len(digits) < 10 else 10**10  # noqa: PLR2004 - beyond any limit
            sizes[-1] += last * max(n - 1, 0)
            i = count.end()
            continue
        if c == "(":
            sizes.append(0)
            if len(sizes) > MAX_NESTING:
                raise PatternTooLarge(f"groups nest deeper than {MAX_NESTING} levels (the limit)")
            i += 1
            continue
        last = max(sizes.pop(), 1) if c == ")" and len(sizes) > 1 else 1
        sizes[-1] += last
        i = _class_end(pattern, i) if c == "[" else i + (2 if c == "\\" else 1)
    return sum(sizes)


@lru_cache(maxsize=256)
def _compiled(pattern: str, flags: int) -> regex.Pattern[str]:
    import regex

    if expanded_pieces(pattern) > MAX_PIECES:
        raise PatternTooLarge(f"its counted repeats expand to more than {MAX_PIECES} pieces (the limit)")
    try:
        return regex.compile(pattern, flags)
    except (RecursionError, MemoryError, OverflowError):
        raise PatternTooLarge("too large to compile") from None


def search(pattern: str, text: str, flags: int = 0) -> bool:
    """Whether PATTERN matches somewhere in TEXT; PatternTooSlow past the budget."""
    global _lost  # noqa: PLW0603 - what slow patterns cost this process so far
    key = (pattern, flags)
    if key in _too_slow:
        raise PatternTooSlow(pattern, f"took longer than {_budget:g} s on an earlier entry")
    if _lost >= _TOTAL_BUDGETS * _budget:
        raise PatternTooSlow(pattern, f"was not run: slow patterns took {_lost:.1f} s already")
    start = time.monotonic()
    try:
        return _compiled(pattern, flags).search(text, timeout=_budget) is not None
    except TimeoutError:
        _too_slow.add(key)
        _lost += time.monotonic() - start
        raise PatternTooSlow(pattern, f"took longer than {_budget:g} s on this entry") from None


MULTILINE_IGNORECASE = 8 | 2  # regex.MULTILINE | regex.IGNORECASE, without importing regex here
