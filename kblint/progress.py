"""The progress line on standard error: files parsed, the graph pass, then judgment.

It is shown on a terminal only (not with --quiet, not under CI), and only once a run has taken
about a second, so that quick runs print nothing and do not even import `rich`. Standard output
never changes.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

SHOW_AFTER = 1.0  # seconds: a run quicker than this shows nothing
REFRESH = 0.1  # seconds between updates of the line


class Progress:
    """What the passes tell; this one shows nothing (not a terminal, --quiet, CI)."""

    shown = False  # whether descriptions are shown: a pass need not make them otherwise

    def phase(self, description: str, total: int | None = None, at_once: bool = False) -> None:
        """A new stage of the run, of TOTAL steps (None: not known); AT_ONCE: shown now, however
        quick the run has been so far (judgment: SPEC §9)."""

    def advance(self, steps: int = 1, description: str | None = None) -> None:
        """STEPS more done (and the stage's description changed, e.g. to the next KB)."""

    def update(self, done: int, total: int | None = None) -> None:
        """DONE of TOTAL steps done."""

    def note(self, text: str) -> None:
        """What else the stage has to say (the judge: requests in flight, tokens)."""

    def close(self) -> None:
        """Remove the line (the run is over)."""


def for_run(quiet: bool) -> Progress:
    """The progress of a run: on a terminal, unless --quiet or a CI system runs kblint."""
    if quiet or os.environ.get("CI") or not _is_terminal(sys.stderr):
        return Progress()
    return TerminalProgress()


def _is_terminal(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # none, or closed
        return False


Schedule = Callable[[float, Callable[[], None]], Callable[[], None]]  # (delay, callback) → cancel


def _timer(delay: float, callback: Callable[[], None]) -> Callable[[], None]:
    timer = threading.Timer(delay, callback)
    timer.daemon = True
    timer.start()
    return timer.cancel


class TerminalProgress(Progress):
    """A `rich` progress bar on standard error, started SHOW_AFTER seconds into the run."""

    shown = True

    def __init__(
        self, *, console: Any = None, clock: Callable[[], float] = time.monotonic, schedule: Schedule = _timer
    ) -> None:
        self._console = console
        self._clock = clock
        self._lock = threading.Lock()
        self._bar: Any = None
        self._task: Any = None
        self._closed = False
        self._description, self._done = "starting", 0
        self._total: int | None = None
        self._shown_at = 0.0
        self._cancel = schedule(SHOW_AFTER, self._show)

    def phase(self, description: str, total: int | None = None, at_once: bool = False) -> None:
        with self._lock:
            self._description, self._done, self._total = description, 0, total
            if self._bar is not None:  # a new task: the bar cannot set a known total back to unknown
                self._bar.remove_task(self._task)
                self._task = self._bar.add_task(description, total=total)
        if at_once:
            self._show()

    def advance(self, steps: int = 1, description: str | None = None) -> None:
        with self._lock:
            self._done += steps
            if description is not None and description != self._description:
                self._description = description
                self._draw(force=True)
            else:
                self._draw()

    def update(self, done: int, total: int | None = None) -> None:
        with self._lock:
            self._done = done
            if total is not None:
                self._total = total
            self._draw()

    def note(self, text: str) -> None:
        with self._lock:
            self._description = f"{self._description.partition(' (')[0]} ({text})"
            self._draw()

    def close(self) -> None:
        with self._lock:
            self._closed = True
            self._cancel()
            if self._bar is not None:
                self._bar.stop()

    def _show(self) -> None:
        with self._lock:
            if self._closed or self._bar is not None:
                return
            from rich.console import Console
            from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

            console = self._console or Console(stderr=True)
            columns = (TextColumn("{task.description}"), BarColumn(), _count_column(), TimeElapsedColumn())
            # the report and kblint's messages are written after the run: nothing to redirect
            self._bar = Progress(
                *columns, console=console, transient=True, redirect_stdout=False, redirect_stderr=False
            )
            self._task = self._bar.add_task(self._description, total=self._total, completed=self._done)
            self._bar.start()

    def _draw(self, force: bool = False) -> None:
        if self._bar is None:
            return
        now = self._clock()
        if not force and now - self._shown_at < REFRESH:
            return
        self._shown_at = now
        self._bar.update(self._task, description=self._description, completed=self._done, total=self._total)


def _count_column() -> Any:
    """`done/total`, or nothing for a stage whose size is not known (the link pass)."""
    from rich.progress import MofNCompleteColumn
    from rich.text import Text

    class Count(MofNCompleteColumn):
        def render(self, task: Any) -> Text:
            return Text("") if task.total is None else super().render(task)

    return Count()
