"""Regular expressions written in kb.yaml (`validation.rules` patterns, `body_has_pattern`): run
with the `regex` module under a time budget per match, so that a pattern that backtracks
catastrophically, such as `^(a|a)*$`, costs at most the budget and cannot stop a run (README
"Limits"; `bench/README.md` has the measurements behind the choice of engine).

A pattern that exceeds the budget raises PatternTooSlow for that entry; the process then no longer
runs it, and every later entry gets the same error at once instead of waiting the budget again.
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import regex

DEFAULT_BUDGET = 1.0  # seconds; Limits.regex_timeout

_budget = DEFAULT_BUDGET
_too_slow: set[tuple[str, int]] = set()  # patterns (with flags) that exceeded the budget here


class PatternTooSlow(Exception):
    """A kb.yaml pattern took longer than the budget on one value."""

    def __init__(self, pattern: str, budget: float, earlier: bool):
        when = "on an earlier entry" if earlier else "on this entry"
        super().__init__(
            f"pattern {pattern!r} took longer than {budget:g} s {when} (the limit, regex_timeout): not checked"
        )
        self.pattern = pattern


def set_budget(seconds: float) -> None:
    """The time one match may take, for the run that starts (from the configuration's limits)."""
    global _budget  # noqa: PLW0603 - one setting for the run, inherited by the worker processes
    _budget = seconds
    _too_slow.clear()


def pattern_error(pattern: str, flags: int = 0) -> str | None:
    """Why PATTERN is not a valid regular expression, or None."""
    import regex

    try:
        _compiled(pattern, flags)
    except regex.error as exc:
        return str(exc)
    return None


@lru_cache(maxsize=256)
def _compiled(pattern: str, flags: int) -> regex.Pattern[str]:
    import regex

    return regex.compile(pattern, flags)


def search(pattern: str, text: str, flags: int = 0) -> bool:
    """Whether PATTERN matches somewhere in TEXT; PatternTooSlow past the budget."""
    key = (pattern, flags)
    if key in _too_slow:
        raise PatternTooSlow(pattern, _budget, earlier=True)
    try:
        return _compiled(pattern, flags).search(text, timeout=_budget) is not None
    except TimeoutError:
        _too_slow.add(key)
        raise PatternTooSlow(pattern, _budget, earlier=False) from None


MULTILINE_IGNORECASE = 8 | 2  # regex.MULTILINE | regex.IGNORECASE, without importing regex here
