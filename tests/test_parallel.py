"""parallel.spread: every chunk done exactly once, by a worker or by this process; failures stop the run."""

from __future__ import annotations

import os

import pytest

from kblint.parallel import WorkerFailed, spread


def test_every_chunk_is_done_once_here_or_in_a_worker():
    import time

    here_pid = os.getpid()

    def square(i):
        time.sleep(0.005)
        return i * i, os.getpid()

    got = list(spread(40, 2, square, square))
    assert sorted(n for n, _, _ in got) == list(range(40))
    assert any(remote for _, _, remote in got) and not all(remote for _, _, remote in got)
    assert all(result[0] == n * n for n, result, _ in got)
    assert all((result[1] == here_pid) == (not remote) for _, result, remote in got)


def test_a_failing_worker_stops_the_run():
    def there(i):
        raise ValueError(f"chunk {i} is bad")

    with pytest.raises(WorkerFailed, match="chunk"):
        list(spread(50, 1, lambda i: __import__("time").sleep(0.01), there))
