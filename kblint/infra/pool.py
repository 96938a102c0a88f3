"""Work spread over forked processes, which inherit what the work needs (the plans, the schemas)
instead of receiving it pickled.

This process works too: with JOBS processes, JOBS - 1 are workers. It has to take in their results
anyway, and one process more than there are cores would only make them take turns. Workers take
items from the front of the list and this process from the back until they meet, so however fast
each one runs, none waits for another.

Why not the standard library's process pool: there, every item a worker gets and every result it
sends passes through threads of this process, which wait for the interpreter lock while this
process lints; workers then sit idle (bench/README.md has the figures). Here the two ends of the
list are two numbers in a shared file under a POSIX record lock (which the kernel releases if its
holder dies), so workers take their next item without this process; each sends its results down a
pipe of its own, written by a thread so that linting goes on while this process is busy, and this
process reads what has arrived after each of its own items. A pipe that ends without the worker's
last record means the worker failed.
"""

from __future__ import annotations

import contextlib
import os
import pickle
from collections.abc import Callable, Iterator, Sequence
from typing import IO, TYPE_CHECKING, Generic, TypeVar

if TYPE_CHECKING:
    import queue

T = TypeVar("T")
R = TypeVar("R")


class WorkerFailed(RuntimeError):
    """A worker raised (the message names the error) or ended without finishing its work."""


_DONE = b"done"  # a worker's last record: it finished every item it took
_SIZE = 8  # bytes of the length that comes before each record


def in_processes(work: Callable[[T], R], items: Sequence[T], jobs: int) -> Iterator[tuple[int, R]]:
    """(index, WORK(item)) for each of ITEMS, in no particular order, in JOBS processes (this one
    alone when JOBS is 1, there is a single item, or the platform cannot fork). WORK's result must
    pickle; an item that raises in a worker stops the run with WorkerFailed."""
    if jobs <= 1 or len(items) <= 1 or not hasattr(os, "fork"):
        yield from enumerate(map(work, items))
        return
    import tempfile

    inboxes: list[_Inbox[R]] = []
    with tempfile.TemporaryFile() as ends:
        os.pwrite(ends.fileno(), _number(0) + _number(len(items) - 1), 0)
        try:
            _flush_std_streams()  # what this process buffered is written once, not again by each child
            for _ in range(min(jobs, len(items)) - 1):
                inbox = _start_worker(ends, work, items, inboxes)
                if inbox is None:
                    break
                inboxes.append(inbox)
            while (index := _claim(ends.fileno(), front=False)) is not None:
                yield index, work(items[index])
                for inbox in inboxes:  # take in what the workers sent meanwhile
                    yield from inbox.received()
            for inbox in inboxes:
                yield from inbox.until_done()
        finally:
            for inbox in inboxes:
                inbox.stop()
            for inbox in inboxes:
                inbox.close()


def _start_worker(
    ends: IO[bytes], work: Callable[[T], R], items: Sequence[T], others: list[_Inbox[R]]
) -> _Inbox[R] | None:
    """A forked worker and the pipe it answers down; None when the system has no pipe or process
    to give (the run then goes on with the workers it has)."""
    try:
        read_end, write_end = os.pipe()
    except OSError:
        return None
    try:
        pid = os.fork()
    except OSError:
        os.close(read_end)
        os.close(write_end)
        return None
    if pid == 0:
        try:
            os.close(read_end)
            for inbox in others:
                os.close(inbox.fd)
            _work(ends.fileno(), write_end, lambda index: work(items[index]))
        finally:
            os._exit(1)  # never back into the caller's code: _work leaves by os._exit itself
    os.close(write_end)
    os.set_blocking(read_end, False)
    return _Inbox[R](read_end, pid)


def _flush_std_streams() -> None:
    import sys

    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(AttributeError, ValueError, OSError):  # none (pythonw), closed, or gone
            stream.flush()


def _number(n: int) -> bytes:
    return n.to_bytes(8, "little", signed=True)


def _claim(fd: int, front: bool) -> int | None:
    """The next item from the FRONT of the list (workers) or from its back, or None when none is left."""
    import fcntl

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


def _work(ends: int, out: int, work: Callable[[int], object]) -> None:
    """A worker: items from the front, each result a record down OUT (written by a thread, so a
    full pipe never holds up the work); then out, without any of the parent's exit work (its
    atexit functions)."""
    import queue
    import threading

    outgoing: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
    sender = threading.Thread(target=_send_all, args=(outgoing, out), daemon=True)
    sender.start()
    code = 1
    try:
        try:
            while sender.is_alive():  # the main process may have gone: then so does the work
                index = _claim(ends, front=True)
                if index is None:
                    outgoing.put(_DONE)
                    code = 0
                    break
                outgoing.put(pickle.dumps((index, work(index)), protocol=pickle.HIGHEST_PROTOCOL))
        except BaseException as exc:  # noqa: BLE001 - reported to the main process, which stops the run
            outgoing.put(pickle.dumps(("error", f"{type(exc).__name__}: {exc}")))
        outgoing.put(None)
        sender.join()
    finally:
        _flush_std_streams()  # what the work printed
        os._exit(code)


def _send_all(outgoing: queue.SimpleQueue[bytes | None], out: int) -> None:
    while (payload := outgoing.get()) is not None:
        data = memoryview(len(payload).to_bytes(_SIZE, "little") + payload)
        while data:
            data = data[os.write(out, data) :]


class _Inbox(Generic[R]):
    """The records one worker sends, taken in as they arrive."""

    def __init__(self, fd: int, pid: int):
        self.fd = fd
        self.pid = pid
        self.buffer = bytearray()
        self.ended = False  # the pipe reached its end: the worker is gone
        self.done = False  # its last record came

    def _read(self) -> bool:
        """Takes what the pipe holds into the buffer (waiting for it once the pipe blocks); False
        when nothing has arrived."""
        try:
            data = os.read(self.fd, 1 << 20)
        except BlockingIOError:
            return False
        if not data:
            self.ended = True
        self.buffer += data
        return True

    def received(self) -> Iterator[tuple[int, R]]:
        """The records that have arrived, without waiting for more."""
        while not self.ended and self._read():
            pass
        yield from self._records()

    def until_done(self) -> Iterator[tuple[int, R]]:
        """The records still to come, up to the worker's last."""
        os.set_blocking(self.fd, True)
        yield from self._records()
        while not self.ended:
            self._read()
            yield from self._records()
        if not self.done:
            raise WorkerFailed("a worker process ended without finishing its work")

    def _records(self) -> Iterator[tuple[int, R]]:
        buffer = self.buffer
        at = 0
        try:
            while len(buffer) - at >= _SIZE:
                size = int.from_bytes(buffer[at : at + _SIZE], "little")
                if len(buffer) - at - _SIZE < size:
                    break  # the rest is still on its way
                payload = bytes(buffer[at + _SIZE : at + _SIZE + size])
                at += _SIZE + size
                if payload == _DONE:
                    self.done = True
                    continue
                index, result = pickle.loads(payload)
                if index == "error":
                    raise WorkerFailed(f"a worker process failed: {result}")
                yield index, result
        finally:
            del buffer[:at]

    def stop(self) -> None:
        """Kills the worker if it may still run (the run was cut short). Until its pipe ends, the
        worker holds the other end: it is alive, or a zombie whose process id is still its own."""
        import signal

        os.set_blocking(self.fd, False)  # until_done may have made it wait
        while not self.ended and self._read():  # whatever is left unread: only the pipe's end matters
            pass
        if not self.ended:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGKILL)

    def close(self) -> None:
        """Takes back the worker's process."""
        try:
            os.close(self.fd)
        finally:
            with contextlib.suppress(ChildProcessError):  # reaped unseen: a parent that ignores SIGCHLD
                os.waitpid(self.pid, 0)


def chunks(items: Sequence[T], processes: int, size: int, small: int) -> list[Sequence[T]]:
    """ITEMS in chunks of SIZE, smaller (down to SMALL) the nearer they are to where the workers
    (from the front) and this process (from the back) are expected to meet: neither then waits
    long for the other's last chunk."""
    if processes <= 1:
        return [items[i : i + size] for i in range(0, len(items), size)]
    meet = len(items) * (processes - 1) // processes
    out = []
    at = 0
    while at < len(items):
        step = max(1, small, min(size, abs(meet - at) // 4))
        out.append(items[at : at + step])
        at += step
    return out


def cpu_count() -> int:
    """The processors this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def own_children() -> None:
    """Have the children this process forks reported to it. A parent that ignores SIGCHLD passes
    that on across exec, and the kernel then reaps the children unseen."""
    import signal

    if hasattr(signal, "SIGCHLD") and signal.getsignal(signal.SIGCHLD) == signal.SIG_IGN:
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
