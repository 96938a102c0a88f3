"""Chunks of work spread over worker processes and the main process.

The main process works too: with `--jobs N` it runs N - 1 workers beside itself. It has to take in
the workers' results anyway, and one process more than there are cores would only make them take
turns. Workers take chunks from the front of the list and the main process from the back until they
meet, so however fast each one runs, none waits for another. Workers are forked: they inherit what
they need instead of receiving it pickled.
"""

from __future__ import annotations

import queue as queue_module
from typing import Callable, Iterator


class WorkerFailed(RuntimeError):
    pass


def spread(count: int, workers: int, here: Callable[[int], object],
           there: Callable[[int], object]) -> Iterator[tuple[int, object, bool]]:
    """(chunk number, result, from a worker) for chunks 0..COUNT-1, in no particular order.
    HERE(i) does chunk i in this process, THERE(i) in a worker (its result must pickle)."""
    import multiprocessing

    mp = multiprocessing.get_context("fork")
    lock = mp.Lock()
    front = mp.RawValue("q", 0)  # the next chunk a worker takes
    back = mp.RawValue("q", count - 1)  # the next chunk this process takes
    results = mp.Queue()
    procs = [mp.Process(target=_work, args=(lock, front, back, results, there), daemon=True)
             for _ in range(workers)]
    for proc in procs:
        proc.start()
    finished = 0
    try:
        while True:
            with lock:
                i = back.value
                if i < front.value:
                    break
                back.value = i - 1
            yield i, here(i), False
            while True:  # take in what the workers sent meanwhile, so their queues stay short
                try:
                    message = results.get_nowait()
                except queue_module.Empty:
                    break
                finished += _received(message)
                if message is not None:
                    yield message[0], message[1], True
        while finished < workers:
            try:
                message = results.get(timeout=1.0)
            except queue_module.Empty:
                if sum(1 for p in procs if p.is_alive()) < workers - finished:
                    raise WorkerFailed("a worker process ended without finishing its work") from None
                continue
            finished += _received(message)
            if message is not None:
                yield message[0], message[1], True
    finally:
        for proc in procs:
            proc.join(timeout=5)
            if proc.is_alive():
                proc.terminate()
        results.close()


def _received(message) -> int:
    if message is None:
        return 1  # a worker is done
    if message[0] == "error":
        raise WorkerFailed(f"a worker process failed: {message[1]}")
    return 0


def _work(lock, front, back, results, there) -> None:
    try:
        while True:
            with lock:
                i = front.value
                if i > back.value:
                    break
                front.value = i + 1
            results.put((i, there(i)))
        results.put(None)
    except BaseException as exc:  # noqa: BLE001 - reported to the main process, which stops the run
        results.put(("error", f"{type(exc).__name__}: {exc}"))
    finally:
        results.close()
        results.join_thread()


_HALVES_MIN = 10_000  # below this many items, a second process costs more than it saves


def write_in_halves(items: list, render: Callable[[list, bool], Iterator[str]], write: Callable[[str], object]) -> None:
    """WRITE the texts RENDER(items, first) yields, in order, with the second half of ITEMS
    rendered meanwhile in a forked process (into an unlinked temporary file) when there are many.
    FIRST tells RENDER whether its part starts the whole, for separators. Rendering a large report
    otherwise leaves every core but one idle at the end of a run."""
    import os
    import threading

    def here(part: list, first: bool) -> None:
        for text in render(part, first):
            write(text)

    half = len(items) // 2
    if len(items) < _HALVES_MIN or not hasattr(os, "fork") or threading.active_count() > 1:
        here(items, True)
        return
    import signal
    import tempfile

    with tempfile.TemporaryFile("w+", encoding="utf-8") as spool:
        try:
            pid = os.fork()
        except OSError:  # no process to be had (a process limit): one process does it all
            here(items, True)
            return
        if pid == 0:  # the child: only the spool file, then out without any of the parent's exit work
            code = 1
            try:
                for text in render(items[half:], False):
                    spool.write(text)
                spool.flush()
                code = 0
            finally:
                os._exit(code)
        try:
            here(items[:half], True)
        except BaseException:  # a closed pipe, an interrupt: the child's half is not wanted either
            os.kill(pid, signal.SIGKILL)
            _reap(pid)
            raise
        if _reap(pid) != 0:  # the child failed (out of memory, say): do its half here
            here(items[half:], False)
            return
        spool.seek(0)
        while True:
            text = spool.read(1 << 20)
            if not text:
                break
            write(text)


def _reap(pid: int) -> int:
    """The exit status of child PID, once it has ended; -1 when it cannot be known (a parent that
    ignores SIGCHLD, inherited across exec, has children reaped unseen)."""
    import os

    try:
        return os.waitpid(pid, 0)[1]
    except ChildProcessError:
        return -1


def own_children() -> None:
    """Have the children this process forks reported to it. A parent that ignores SIGCHLD passes
    that on across exec, and the kernel then reaps the children unseen: waiting for workers would
    stall until their time limits."""
    import signal

    if hasattr(signal, "SIGCHLD") and signal.getsignal(signal.SIGCHLD) == signal.SIG_IGN:
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
