"""Work spread over processes: the standard library's process pool, with forked workers, so that
they inherit what the work needs (the plans, the schemas) instead of receiving it pickled."""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Iterator, Sequence
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")

_WORK: dict[str, Callable[..., object]] = {}  # the function a forked worker runs, set as it starts


def can_fork() -> bool:
    return "fork" in multiprocessing.get_all_start_methods()


def in_processes(work: Callable[[T], R], items: Sequence[T], jobs: int) -> Iterator[R]:
    """WORK(item) for each of ITEMS, in order, in up to JOBS worker processes (here when JOBS is 1,
    there is a single item, or the platform cannot fork). WORK's result must pickle."""
    if jobs <= 1 or len(items) <= 1 or not can_fork():
        yield from map(work, items)
        return
    from concurrent.futures import ProcessPoolExecutor

    context = multiprocessing.get_context("fork")
    workers = min(jobs, len(items))
    with ProcessPoolExecutor(workers, mp_context=context, initializer=_start, initargs=(work,)) as pool:
        try:
            yield from pool.map(_run, items)
        except BaseException:
            pool.shutdown(wait=False, cancel_futures=True)
            raise


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
    """For a process that runs one lint. A run makes millions of small objects and next to no
    reference cycles, and the main process keeps every entry's facts until the graph pass: with the
    default thresholds the cyclic collector would scan them again and again. What exists before
    the run (modules, the plan) is frozen out of its scans altogether."""
    import gc

    gc.freeze()
    gc.set_threshold(50_000, 20, 100)
