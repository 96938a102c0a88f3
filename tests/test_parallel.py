"""infra.pool.in_processes: every item done once, in order, in forked workers; failures stop the run."""

from __future__ import annotations

import os
import signal
from concurrent.futures.process import BrokenProcessPool

import pytest

from kblint.infra.pool import in_processes, own_children


def square(i: int) -> tuple[int, int]:
    return i * i, os.getpid()


def test_every_item_is_done_once_in_order_in_workers():
    got = list(in_processes(square, list(range(40)), jobs=2))
    assert [r for r, _ in got] == [i * i for i in range(40)]
    assert all(pid != os.getpid() for _, pid in got)


def test_one_job_or_one_item_runs_here():
    assert [pid for _, pid in in_processes(square, [1, 2, 3], jobs=1)] == [os.getpid()] * 3
    assert [pid for _, pid in in_processes(square, [7], jobs=4)] == [os.getpid()]


def test_workers_inherit_what_the_work_needs():
    table = {n: f"value {n}" for n in range(10)}  # not pickled: a forked worker has it already

    def look_up(n: int) -> str:
        return table[n]

    assert list(in_processes(look_up, list(range(10)), jobs=2)) == [table[n] for n in range(10)]


def test_a_failing_item_stops_the_run_with_its_error():
    def fails(i: int) -> int:
        if i == 5:
            raise ValueError(f"item {i} is bad")
        return i

    with pytest.raises(ValueError, match="item 5 is bad"):
        list(in_processes(fails, list(range(20)), jobs=2))


def test_a_worker_that_dies_stops_the_run():
    def dies(i: int) -> int:
        os._exit(3)  # as if killed: no result, no word

    with pytest.raises(BrokenProcessPool):
        list(in_processes(dies, list(range(20)), jobs=2))


def test_workers_are_waited_for_under_a_parent_that_ignores_its_children():
    before = signal.signal(signal.SIGCHLD, signal.SIG_IGN)
    try:
        own_children()
        assert signal.getsignal(signal.SIGCHLD) == signal.SIG_DFL
        assert [r for r, _ in in_processes(square, list(range(30)), jobs=2)] == [i * i for i in range(30)]
    finally:
        signal.signal(signal.SIGCHLD, before)
