"""The progress line: on a terminal only, after about a second, on standard error."""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import write_kb
from rich.console import Console

from kblint import progress
from kblint.config import resolve
from kblint.engine.run import run
from kblint.progress import Progress, TerminalProgress


class Recorder(Progress):
    shown = True  # it records the descriptions, as a progress line shows them

    def __init__(self) -> None:
        self.phases: list[tuple[str, int | None]] = []
        self.steps = 0
        self.descriptions: set[str] = set()

    def phase(self, description: str, total: int | None = None) -> None:
        self.phases.append((description, total))

    def advance(self, steps: int = 1, description: str | None = None) -> None:
        self.steps += steps
        if description:
            self.descriptions.add(description)


class FakeTimer:
    def __init__(self) -> None:
        self.callback: Callable[[], None] | None = None
        self.cancelled = False

    def __call__(self, delay: float, callback: Callable[[], None]) -> Callable[[], None]:
        assert delay == progress.SHOW_AFTER
        self.callback = callback
        return self.cancel

    def cancel(self) -> None:
        self.cancelled = True


def terminal() -> tuple[TerminalProgress, FakeTimer, io.StringIO, list[float]]:
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=100)
    now = [0.0]
    timer = FakeTimer()
    return TerminalProgress(console=console, clock=lambda: now[0], schedule=timer), timer, out, now


def test_a_quick_run_shows_nothing():
    bar, timer, out, _ = terminal()
    bar.phase("parsing", 3)
    bar.advance(3, "parsing kb")
    bar.close()
    assert out.getvalue() == "" and timer.cancelled


def test_a_long_run_shows_the_stage_and_the_count():
    bar, timer, out, now = terminal()
    bar.phase("parsing", 40)
    bar.advance(10, "parsing notes")
    assert timer.callback is not None
    timer.callback()  # a second has passed
    now[0] = 5.0
    bar.advance(5)
    bar._bar.refresh()
    assert "parsing notes" in out.getvalue() and "15/40" in out.getvalue()
    bar.phase("checking links")
    bar._bar.refresh()
    assert "checking links" in out.getvalue() and "/40" not in out.getvalue().rsplit("checking links", 1)[1]
    bar.phase("judging entries", 4)
    bar.update(1)  # within REFRESH of the last drawing: not drawn
    now[0] = 6.0
    bar.update(2)
    bar._bar.refresh()
    assert "judging entries" in out.getvalue() and "2/4" in out.getvalue()
    bar.close()


def test_progress_only_on_a_terminal(monkeypatch: pytest.MonkeyPatch):
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.delenv("CI", raising=False)
    monkeypatch.setattr("sys.stderr", io.StringIO())
    assert type(progress.for_run(quiet=False)) is Progress
    monkeypatch.setattr("sys.stderr", Tty())
    assert type(progress.for_run(quiet=True)) is Progress
    shown = progress.for_run(quiet=False)
    assert isinstance(shown, TerminalProgress)
    shown.close()
    monkeypatch.setenv("CI", "true")
    assert type(progress.for_run(quiet=False)) is Progress


def test_the_engine_tells_each_stage(tmp_path: Path):
    entry = "---\ntitle: {0}\ntype: note\n---\n[[{1}]]\n"
    a = write_kb(tmp_path / "a", "name: a\n", {"x.md": entry.format("X", "y"), "y.md": entry.format("Y", "x")})
    b = write_kb(tmp_path / "b", "name: b\n", {"z.md": entry.format("Z", "a:x")})
    recorder = Recorder()
    run(resolve({"paths": [str(a), str(b)], "no_cache": True, "jobs": 1}, cwd=str(tmp_path)), progress=recorder)
    assert recorder.phases == [("parsing", 3), ("comparing entries", None), ("checking links", None)]
    assert recorder.steps == 3 and recorder.descriptions == {"parsing a (1/2)", "parsing a (2/2)", "parsing b (1/1)"}


def test_judgment_shows_at_once():
    bar, timer, out, now = terminal()
    bar.phase("judging entries", 3, at_once=True)  # SPEC §9: always for the judgment tier
    bar._bar.refresh()
    assert "judging entries" in out.getvalue() and "0/3" in out.getvalue()
    bar.phase("checking links")
    bar._bar.refresh()
    assert "/?" not in out.getvalue()  # a stage of unknown size shows no count
    bar.close()


def test_judgment_shows_requests_in_flight_and_tokens():
    bar, timer, out, now = terminal()
    bar.phase("judging entries", 4, at_once=True)
    bar.update(1, 4)
    now[0] = 1.0  # past REFRESH: the next drawing is not held back
    bar.note("2 in flight, 1,234 tokens")
    bar._bar.refresh()
    assert "judging entries (2 in flight, 1,234 tokens)" in out.getvalue() and "1/4" in out.getvalue()
    bar.update(2, 4)
    now[0] = 2.0
    bar.note("1 in flight, 2,000 tokens")  # the note replaces the last one
    bar._bar.refresh()
    assert "judging entries (1 in flight, 2,000 tokens)" in out.getvalue()
    bar.close()
