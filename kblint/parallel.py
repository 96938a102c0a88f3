"""Chunks of work spread over worker processes and the main process.

The main process works too: with `--jobs N` it runs N - 1 workers beside itself. It has to take in
the workers' results anyway, and one process more than there are cores would only make them take
turns. Workers take chunks from the front of the list and the main process from the back until they
meet, so however fast each one runs, none waits for another. Workers are forked: they inherit what
they need instead of receiving it pickled.

Plain os.fork rather than multiprocessing, whose machinery (ctypes, sockets, semaphores) costs more
to import and start than a small run spends linting in a worker. The two ends of the list are two
numbers in a shared file, under a POSIX record lock (which the kernel releases if its holder dies).
Each worker sends its results down a pipe of its own, written by a thread so that linting goes on
while the main process is busy; the main process takes in what has arrived after each of its own
chunks. A worker's pipe reaching its end without the worker's last record means it failed.
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
    import tempfile

    inboxes: list[_Inbox] = []
    ends = None
    try:
        ends = tempfile.TemporaryFile()
        os.pwrite(ends.fileno(), _number(0) + _number(count - 1), 0)
        _flush_std_streams()  # what this process buffered is written once, not again by each child
        for _ in range(workers):
            try:
                read_end, write_end = os.pipe()
            except OSError:  # no more files to be had: fewer workers
                break
            try:
                pid = os.fork()
            except OSError:  # no more processes to be had (a process limit): fewer workers
                os.close(read_end)
                os.close(write_end)
                break
            if pid == 0:
                try:
                    os.close(read_end)
                    for inbox in inboxes:
                        os.close(inbox.fd)
                    _work(ends.fileno(), write_end, there)
                finally:
                    os._exit(1)  # never back into the caller's code: _work leaves by os._exit itself
            os.close(write_end)
            os.set_blocking(read_end, False)
            inboxes.append(_Inbox(read_end, pid))
        while True:
            i = _claim(ends.fileno(), front=False)
            if i is None:
                break
            yield i, here(i), False
            for inbox in inboxes:  # take in what the workers sent meanwhile
                yield from inbox.received()
        for inbox in inboxes:
            yield from inbox.until_done()
    finally:
        for inbox in inboxes:
            inbox.stop()
        for inbox in inboxes:
            inbox.close()
        if ends is not None:
            ends.close()


def _flush_std_streams() -> None:
    import sys

    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (AttributeError, ValueError, OSError):  # none (pythonw), closed, or gone
            pass


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


def _work(ends: int, out: int, there) -> None:
    """A worker: chunks from the front, each result a record down OUT (written by a thread, so a
    full pipe never holds up the linting); then out, without any of the parent's exit work (its
    atexit functions)."""
    import os
    import pickle
    import queue
    import threading

    outgoing: queue.SimpleQueue = queue.SimpleQueue()

    def send() -> None:
        while True:
            payload = outgoing.get()
            if payload is None:
                return
            data = memoryview(len(payload).to_bytes(8, "little") + payload)
            while data:
                data = data[os.write(out, data):]

    sender = threading.Thread(target=send, daemon=True)
    sender.start()
    code = 1
    try:
        try:
            while sender.is_alive():  # the main process may have gone: then so does the work
                i = _claim(ends, front=True)
                if i is None:
                    outgoing.put(_DONE)
                    code = 0
                    break
                outgoing.put(pickle.dumps((i, there(i)), protocol=pickle.HIGHEST_PROTOCOL))
        except BaseException as exc:  # noqa: BLE001 - reported to the main process, which stops the run
            outgoing.put(pickle.dumps(("error", f"{type(exc).__name__}: {exc}")))
        outgoing.put(None)
        sender.join()
    finally:
        _flush_std_streams()  # what the work printed
        os._exit(code)


class _Inbox:
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
        import os

        try:
            data = os.read(self.fd, 1 << 20)
        except BlockingIOError:
            return False
        if not data:
            self.ended = True
        self.buffer += data
        return True

    def received(self) -> Iterator[tuple[int, object, bool]]:
        """The records that have arrived, without waiting for more."""
        while not self.ended and self._read():
            pass
        yield from self._records()

    def until_done(self) -> Iterator[tuple[int, object, bool]]:
        """The records still to come, up to the worker's last."""
        import os

        os.set_blocking(self.fd, True)
        yield from self._records()
        while not self.ended:
            self._read()
            yield from self._records()
        if not self.done:
            raise WorkerFailed("a worker process ended without finishing its work")

    def _records(self) -> Iterator[tuple[int, object, bool]]:
        import pickle

        buffer = self.buffer
        at = 0
        try:
            while len(buffer) - at >= 8:
                size = int.from_bytes(buffer[at:at + 8], "little")
                if len(buffer) - at - 8 < size:
                    break  # the rest is still on its way
                payload = bytes(buffer[at + 8:at + 8 + size])
                at += 8 + size
                if payload == _DONE:
                    self.done = True
                    continue
                message = pickle.loads(payload)
                if message[0] == "error":
                    raise WorkerFailed(f"a worker process failed: {message[1]}")
                yield message[0], message[1], True
        finally:
            del buffer[:at]

    def stop(self) -> None:
        """Kills the worker if it may still run (the run was cut short). Until its pipe ends, the
        worker holds the other end: it is alive, or a zombie whose process id is still its own (a
        parent that ignores SIGCHLD, and so has its children reaped unseen, leaves a moment
        between the worker's end and this look at its pipe)."""
        import os
        import signal

        os.set_blocking(self.fd, False)  # until_done may have made it wait
        while not self.ended and self._read():  # whatever is left unread: only the pipe's end matters
            pass
        if not self.ended:
            try:
                os.kill(self.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    def close(self) -> None:
        """Takes back the worker's process."""
        import os

        try:
            os.close(self.fd)
        finally:
            _reap(self.pid)


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
    that on across exec, and the kernel then reaps the children unseen: their exit status is lost,
    and write_in_halves would take a child that rendered its half for one that failed and render
    that half again."""
    import signal

    if hasattr(signal, "SIGCHLD") and signal.getsignal(signal.SIGCHLD) == signal.SIG_IGN:
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
