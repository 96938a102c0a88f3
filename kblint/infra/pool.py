"""Work spread over processes: the standard library's process pool, with forked workers, so that
they inherit what the work needs (the plans, the schemas) instead of receiving it pickled.

This process works too: with JOBS processes, JOBS - 1 are workers. It has to take in their results
anyway, and one process more than there are cores would only make them take turns. Workers take
items from the front of the list, this process from the back, until they meet.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Generic, TypeVar

if TYPE_CHECKING:
    from concurrent.futures import Future, ProcessPoolExecutor

T = TypeVar("T")
R = TypeVar("R")

_WORK: dict[str, Callable[..., object]] = {}  # the function a forked worker runs, set as it starts


def can_fork() -> bool:
    import multiprocessing

    return "fork" in multiprocessing.get_all_start_methods()


def in_processes(work: Callable[[T], R], items: Sequence[T], jobs: int) -> Iterator[tuple[int, R]]:
    """(index, WORK(item)) for each of ITEMS, in no particular order, in JOBS processes (this one
    alone when JOBS is 1, there is a single item, or the platform cannot fork). WORK's result must
    pickle."""
    if jobs <= 1 or len(items) <= 1 or not can_fork():
        yield from enumerate(map(work, items))
        return
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    context = multiprocessing.get_context("fork")
    workers = min(jobs, len(items)) - 1
    with ProcessPoolExecutor(workers, mp_context=context, initializer=_start, initargs=(work,)) as pool:
        try:
            yield from _Sharing(pool, work, items, ahead=2 * workers).run()
        except BaseException:
            pool.shutdown(wait=False, cancel_futures=True)
            raise


class _Sharing(Generic[T, R]):
    """ITEMS done by the pool's workers from the front (at most AHEAD handed out at a time) and by
    this process from the back, until the two meet."""

    def __init__(self, pool: ProcessPoolExecutor, work: Callable[[T], R], items: Sequence[T], ahead: int):
        self.pool = pool
        self.work = work
        self.items = items
        self.ahead = ahead
        self.handed_out: deque[tuple[int, Future[R]]] = deque()
        self.front = 0  # the next item for the workers
        self.back = len(items)  # this process did the items from here on

    def _hand_out(self) -> None:
        while len(self.handed_out) < self.ahead and self.front < self.back:
            future: Future[R] = self.pool.submit(_run, self.items[self.front])  # type: ignore[arg-type]
            self.handed_out.append((self.front, future))
            self.front += 1

    def run(self) -> Iterator[tuple[int, R]]:
        self._hand_out()
        while self.front < self.back:
            self.back -= 1
            yield self.back, self.work(self.items[self.back])
            while self.handed_out and self.handed_out[0][1].done():  # what the workers finished meanwhile
                index, future = self.handed_out.popleft()
                yield index, future.result()
            self._hand_out()
        for index, future in self.handed_out:
            yield index, future.result()


def chunks(items: Sequence[T], processes: int, size: int, small: int) -> list[Sequence[T]]:
    """ITEMS in chunks of SIZE, but of SMALL about where the workers (from the front) and this
    process (from the back) are expected to meet: neither then waits long for the other's last."""
    if processes <= 1:
        return [items[i : i + size] for i in range(0, len(items), size)]
    meet = len(items) * (processes - 1) // processes
    slack = len(items) // 6
    out = []
    at = 0
    while at < len(items):
        step = max(1, small if abs(at - meet) <= slack else size)
        out.append(items[at : at + step])
        at += step
    return out


def _start(work: Callable[[T], R]) -> None:
    _WORK["work"] = work


def _run(item: T) -> object:
    return _WORK["work"](item)


def cpu_count() -> int:
    """The processors this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def own_children() -> None:
    """Have the children this process forks reported to it. A parent that ignores SIGCHLD passes
    that on across exec, and the kernel then reaps the children unseen: the pool could not wait
    for its workers."""
    import signal

    if hasattr(signal, "SIGCHLD") and signal.getsignal(signal.SIGCHLD) == signal.SIG_IGN:
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)


def tune_collector() -> None:
    """For a process that runs one lint: the cyclic garbage collector is off. A run makes millions
    of objects and next to no reference cycles (some hundreds in a run of 20,000 entries), and the
    main process keeps every entry's facts until the graph pass: the collector would scan them
    again and again for nothing. Reference counting frees everything else as usual."""
    import gc

    gc.disable()
