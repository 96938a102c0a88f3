"""Chunks of work spread over worker processes and the main process.

The main process works too: with `--jobs N` it runs N - 1 workers beside itself. It has to take in
the workers' results anyway, and one process more than there are cores would only make them take
turns. Workers take chunks from the front of the list and the main process from the back until they
meet, so however fast each one runs, none waits for another. Workers are forked: they inherit what
they need instead of receiving it pickled.

Plain os.fork rather than multiprocessing, whose machinery (ctypes, sockets, a feeder thread per
queue) costs more to import and start than a small run spends linting in a worker. The two ends of
the list are two numbers in a shared file, under a POSIX record lock (released by the kernel if its
holder dies). Each worker appends its results to a file of its own, which the main process reads as
it goes: a worker never waits for the main process to take a result.
"""

from __future__ import annotations

from typing import Callable, Iterator


class WorkerFailed(RuntimeError):
    pass


_DONE = b"done"  # a worker's last record: it finished every chunk it took


def spread(count: int, workers: int, here: Callable[[int], object],
           there: Callable[[int], object]) -> Iterator[tuple[int, object, bool]]:
    """(chunk number, result, from a worker) for chunks 0..COUNT-1, in no particular order.
    HERE(i) does chunk i in this process, THERE(i) in a worker (its result must pickle)."""
    import os
    import sys
    import tempfile

    ends = tempfile.TemporaryFile()
    os.pwrite(ends.fileno(), _number(0) + _number(count - 1), 0)
    outboxes: list = []
    pids: list[int] = []
    try:
        sys.stdout.flush()  # what this process buffered is written once, not again by each child
        sys.stderr.flush()
        for _ in range(workers):
            outbox = tempfile.TemporaryFile()
            try:
                pid = os.fork()
            except OSError:  # no more processes to be had (a process limit): fewer workers
                outbox.close()
                break
            if pid == 0:
                _work(ends.fileno(), outbox.fileno(), there)  # never returns
            outboxes.append(_Outbox(outbox, pid))
            pids.append(pid)
        while True:
            i = _claim(ends.fileno(), front=False)
            if i is None:
                break
            yield i, here(i), False
            for outbox in outboxes:  # take in what the workers sent meanwhile
                yield from outbox.received()
        for outbox in outboxes:
            yield from outbox.until_done()
    finally:
        for outbox in outboxes:
            outbox.close()
        ends.close()


def _number(n: int) -> bytes:
    return n.to_bytes(8, "little", signed=True)


def _claim(fd: int, front: bool) -> int | None:
    """The next chunk from the FRONT of the list (workers) or from its back, or None when none is left."""
    import fcntl
    import os

    fcntl.lockf(fd, fcntl.LOCK_EX)
    try:
        ends = os.pread(fd, 16, 0)
        first = int.from_bytes(ends[:8], "little", signed=True)
        last = int.from_bytes(ends[8:], "little", signed=True)
        if first > last:
            return None
        if front:
            os.pwrite(fd, _number(first + 1), 0)
            return first
        os.pwrite(fd, _number(last - 1), 8)
        return last
    finally:
        fcntl.lockf(fd, fcntl.LOCK_UN)


def _work(ends: int, outbox: int, there) -> None:
    """A worker: chunks from the front, each result appended to OUTBOX as a record; then out,
    without any of the parent's exit work (its buffers, its atexit functions)."""
    import os
    import pickle

    code = 1
    try:
        try:
            while True:
                i = _claim(ends, front=True)
                if i is None:
                    break
                _append(outbox, pickle.dumps((i, there(i)), protocol=pickle.HIGHEST_PROTOCOL))
            _append(outbox, _DONE)
            code = 0
        except BaseException as exc:  # noqa: BLE001 - reported to the main process, which stops the run
            _append(outbox, pickle.dumps(("error", f"{type(exc).__name__}: {exc}")))
    finally:
        os._exit(code)


def _append(fd: int, payload: bytes) -> None:
    import os

    data = memoryview(len(payload).to_bytes(8, "little") + payload)
    while data:
        data = data[os.write(fd, data):]


class _Outbox:
    """The records one worker has appended to its file, read as they become whole."""

    def __init__(self, file, pid: int):
        self.file = file
        self.pid = pid
        self.at = 0  # where the next record starts
        self.done = False
        self.reaped = False

    def received(self) -> Iterator[tuple[int, object, bool]]:
        import os
        import pickle

        fd = self.file.fileno()
        while not self.done:
            head = os.pread(fd, 8, self.at)
            if len(head) < 8:
                return
            size = int.from_bytes(head, "little")
            payload = os.pread(fd, size, self.at + 8)
            if len(payload) < size:
                return  # still being written
            self.at += 8 + size
            if payload == _DONE:
                self.done = True
                return
            message = pickle.loads(payload)
            if message[0] == "error":
                raise WorkerFailed(f"a worker process failed: {message[1]}")
            yield message[0], message[1], True

    def until_done(self) -> Iterator[tuple[int, object, bool]]:
        """The records still to come, once the worker has finished."""
        import time

        while True:
            yield from self.received()
            if self.done:
                return
            if not self._alive():
                yield from self.received()  # what it wrote before it ended
                if not self.done:
                    raise WorkerFailed("a worker process ended without finishing its work")
                return
            time.sleep(0.0005)

    def _alive(self) -> bool:
        import os

        if self.reaped:
            return False
        try:
            pid, _ = os.waitpid(self.pid, os.WNOHANG)
        except ChildProcessError:  # reaped unseen (a parent ignoring SIGCHLD): is it still there?
            try:
                os.kill(self.pid, 0)
                return True
            except ProcessLookupError:
                pid = self.pid
        if pid == 0:
            return True
        self.reaped = True
        return False

    def close(self) -> None:
        """Stops the worker if it still runs (the run was cut short) and takes back its process."""
        import os
        import signal

        if not self.reaped:
            if not self.done:
                try:
                    os.kill(self.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            _reap(self.pid)
            self.reaped = True
        self.file.close()


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
