"""A time budget for a call into code kblint does not own, a plugin's checker: past it, the call
is stopped with OverBudget, so that one checker that loops or waits for ever cannot hang the run.

It rests on SIGALRM, which only the main thread of a process receives: a call made from another
thread runs without a budget.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

DEFAULT_SECONDS = 10.0  # Limits.plugin_timeout
_seconds = DEFAULT_SECONDS


class OverBudget(Exception):
    """The call took longer than its budget."""

    def __init__(self, seconds: float):
        super().__init__(f"took longer than {seconds:g} s (the limit, plugin_timeout)")


def set_seconds(seconds: float) -> None:
    """The budget of each call from now on (this process, and the workers it forks)."""
    global _seconds  # noqa: PLW0603 - one setting for the run, as userpattern's budget
    _seconds = seconds


@contextmanager
def within_budget() -> Iterator[None]:
    """Run the block with the budget: OverBudget is raised in it once the time is up."""
    if not hasattr(signal, "setitimer") or threading.current_thread() is not threading.main_thread():
        yield
        return
    seconds = _seconds

    def expired(signum: int, frame: FrameType | None) -> None:
        raise OverBudget(seconds)

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
