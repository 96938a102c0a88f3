"""infra.pool.in_processes: every item done once, by a forked worker or this process; failures stop the run."""

from __future__ import annotations

import os
import select
import signal
from collections.abc import Callable, Iterator

import pytest

from kblint.infra.pool import WorkerFailed, in_processes, own_children


def square(i: int) -> tuple[int, int]:
    return i * i, os.getpid()


class PipeEvent:
    """One process tells another that something happened, down a pipe: a test waits for the event,
    not for the clock."""

    def __init__(self) -> None:
        self.read_end, self.write_end = os.pipe()
        self.seen = False

    def set(self) -> None:
        os.write(self.write_end, b"!")

    def wait(self) -> None:
        """Until the other process has set it (once: then at once)."""
        if not self.seen:
            ready, _, _ = select.select([self.read_end], [], [], 60)  # a broken pool fails here rather than hang
            assert ready, "the other process never signalled"
            self.seen = True

    def close(self) -> None:
        os.close(self.read_end)
        os.close(self.write_end)


@pytest.fixture
def event() -> Iterator[Callable[[], PipeEvent]]:
    """Make PipeEvents, closed after the test."""
    made: list[PipeEvent] = []

    def make() -> PipeEvent:
        made.append(PipeEvent())
        return made[-1]

    yield make
    for e in made:
        e.close()


def test_every_item_is_done_once_by_a_worker_or_here(event):
    here, started, worked = os.getpid(), event(), event()

    def square_in_turn(i: int) -> tuple[int, int]:
        if os.getpid() != here:
            started.wait()  # the worker's items wait until this process has taken one ...
            worked.set()
        else:
            started.set()
            worked.wait()  # ... and this process's until the worker has done one
        return i * i, os.getpid()

    got = dict(in_processes(square_in_turn, list(range(60)), jobs=2))
    assert sorted(got) == list(range(60))
    assert all(r == i * i for i, (r, _) in got.items())
    pids = {pid for _, pid in got.values()}
    assert os.getpid() in pids and len(pids) == 2  # this process took its share, one worker the rest


def test_one_job_or_one_item_runs_here():
    assert [pid for _, (_, pid) in in_processes(square, [1, 2, 3], jobs=1)] == [os.getpid()] * 3
    assert [pid for _, (_, pid) in in_processes(square, [7], jobs=4)] == [os.getpid()]


def test_workers_inherit_what_the_work_needs():
    table = {n: f"value {n}" for n in range(10)}  # not pickled: a forked worker has it already

    def look_up(n: int) -> str:
        return table[n]

    assert dict(in_processes(look_up, list(range(10)), jobs=3)) == table


def test_a_failing_item_stops_the_run_with_its_error(event):
    here, failing = os.getpid(), event()

    def fails_in_a_worker(i: int) -> int:
        if os.getpid() != here:
            failing.set()
            raise ValueError(f"item {i} is bad")
        failing.wait()  # this process's items wait until the worker has failed
        return i

    with pytest.raises(WorkerFailed, match=r"a worker process failed: ValueError: item \d+ is bad"):
        list(in_processes(fails_in_a_worker, list(range(20)), jobs=2))

    started = event()

    def fails_here(i: int) -> int:
        if os.getpid() == here:
            started.set()
            raise ValueError("bad here")
        started.wait()  # the worker's items wait until this process has taken one
        return i

    with pytest.raises(ValueError, match="bad here"):
        list(in_processes(fails_here, list(range(20)), jobs=2))


def test_a_worker_that_dies_stops_the_run(event):
    here = os.getpid()

    died = event()

    def dies_in_a_worker(i: int) -> int:
        if os.getpid() != here:
            died.set()
            os._exit(3)  # as if killed: no result, no word
        died.wait()  # this process's items wait until the worker is gone
        return i

    with pytest.raises(WorkerFailed, match="ended without finishing"):
        list(in_processes(dies_in_a_worker, list(range(20)), jobs=2))


def test_workers_are_waited_for_under_a_parent_that_ignores_its_children():
    before = signal.signal(signal.SIGCHLD, signal.SIG_IGN)
    try:
        own_children()
        assert signal.getsignal(signal.SIGCHLD) == signal.SIG_DFL
        got = dict(in_processes(square, list(range(30)), jobs=3))
        assert sorted((i, r) for i, (r, _) in got.items()) == [(i, i * i) for i in range(30)]
    finally:
        signal.signal(signal.SIGCHLD, before)


def test_chunks_cover_the_items_in_order_and_are_small_where_the_processes_meet():
    from kblint.infra.pool import chunks

    items = list(range(1000))
    for processes, size, small in ((1, 64, 8), (2, 64, 8), (4, 64, 8), (2, 3, 0)):
        parts = chunks(items, processes, size=size, small=small)
        assert [i for part in parts for i in part] == items
    parts = chunks(items, 2, size=64, small=8)
    sizes = [len(p) for p in parts]
    meeting = next(k for k, p in enumerate(parts) if 500 in p)
    assert sizes[0] == 64 and sizes[meeting] == 8
    assert sizes[: meeting + 1] == sorted(sizes[: meeting + 1], reverse=True)  # smaller towards the meeting point
    assert sizes[meeting:-1] == sorted(sizes[meeting:-1])  # and larger after it
