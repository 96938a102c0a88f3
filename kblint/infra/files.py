"""Reading the files a run is given, safely: only regular files, never more than a limit, never
waiting on a FIFO or a device (SPEC §2; README "Limits")."""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from typing import TextIO

from ..paths import relative_to


class FileProblem(Exception):
    """A file kblint will not or cannot read, and why (`reason` is one short phrase)."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)


def kind_of(mode: int) -> str:
    """What a file of MODE is, in words ("a regular file", "a FIFO", ...)."""
    for test, name in _KINDS:
        if test(mode):
            return name
    return "a regular file" if stat.S_ISREG(mode) else "not a regular file"


def _open_problem(path: str, exc: OSError) -> FileProblem:
    if exc.errno == errno.ELOOP:
        return FileProblem("a symlink loop")
    if exc.errno == errno.ENOENT and os.path.islink(path):
        return FileProblem("a symlink to a file that does not exist")
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return FileProblem(exc.strerror or str(exc))
    if not stat.S_ISREG(mode):
        return FileProblem(f"not a regular file ({kind_of(mode)})")
    return FileProblem(exc.strerror or str(exc))


def not_regular_reason(path: str) -> str | None:
    """None when PATH is a regular file (symlinks followed), else why it is not, in words."""
    try:
        mode = os.stat(path).st_mode
    except OSError as exc:
        return _open_problem(path, exc).reason if os.path.lexists(path) else "no such file"
    return None if stat.S_ISREG(mode) else f"not a regular file ({kind_of(mode)})"


def read_regular_file(path: str, max_bytes: int | None = None) -> bytes:
    """The bytes of the regular file at PATH (symlinks followed); raises FileProblem for anything
    else, for a file larger than MAX_BYTES, and when it cannot be read."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise _open_problem(path, exc) from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise FileProblem(f"not a regular file ({kind_of(st.st_mode)})")
        return _read_all(fd, st.st_size, max_bytes)
    except OSError as exc:
        raise FileProblem(exc.strerror or str(exc)) from None
    finally:
        os.close(fd)


def _read_all(fd: int, expected: int, max_bytes: int | None) -> bytes:
    """The rest of FD, whose size was EXPECTED (it may have changed since)."""
    parts: list[bytes] = []
    size = 0
    while True:
        wanted = max(expected - size + 1, 1 << 16)
        chunk = os.read(fd, wanted)
        size += len(chunk)
        if max_bytes is not None and size > max_bytes:
            raise FileProblem(over_the_limit(max_bytes))
        if chunk:
            parts.append(chunk)
        # A short read of just the size the file had is its end: no second read to be told so (a
        # file of another size, such as one that grows or a pseudo-file, is read until nothing comes).
        if not chunk or (len(chunk) < wanted and size == expected):
            return parts[0] if len(parts) == 1 else b"".join(parts)


def over_the_limit(max_bytes: int) -> str:
    """Why a file larger than MAX_BYTES is not read."""
    return f"larger than {_megabytes(max_bytes)} (the limit)"


def _megabytes(n: int) -> str:
    return f"{n / (1024 * 1024):g} MB" if n >= 1024 * 1024 else f"{n} bytes"


_MAX_SYMLINKS = 40  # as the kernel's own limit on following symlinks in one path


OUTSIDE = "a symlink to a file outside the KB: not read"  # the file's own symlink, or a folder's


def leads_outside(root: str, path: str) -> bool:
    """Whether the file at PATH, below the KB directory ROOT, is reached through a symlink (its
    own, or a folder's on the way) that leads outside it."""
    relpath = relative_to(path, root)
    return why_not_within(os.path.realpath(root), relpath) == "outside the KB"


def is_regular_file_within(root: str, relpath: str) -> bool:
    """Whether the KB-relative RELPATH names a regular file inside the directory ROOT (a real path)."""
    return why_not_within(root, relpath) is None


def why_not_within(root: str, relpath: str) -> str | None:
    """None when RELPATH names a regular file inside ROOT, else why not. It is walked one name at
    a time and symlinks are followed only while they stay inside ROOT: nothing outside it is
    ever stat'ed, so what a link names cannot probe the machine."""
    if "\0" in relpath:
        return "does not exist"
    parts = [p for p in relpath.split("/") if p not in ("", ".")]
    current = root
    hops = 0
    while parts:
        part = parts.pop(0)
        if part == "..":
            if current == root:
                return "outside the KB"
            current = os.path.dirname(current)
            continue
        path = os.path.join(current, part)
        try:
            mode = os.lstat(path).st_mode
            target = os.readlink(path) if stat.S_ISLNK(mode) else ""
        except OSError as exc:
            return "does not exist" if exc.errno in (errno.ENOENT, errno.ENOTDIR) else exc.strerror or str(exc)
        if target:
            hops += 1
            if hops > _MAX_SYMLINKS:
                return "a symlink loop"
            if os.path.isabs(target):
                # `..` in the target is walked like any name (after the symlinks before it), never
                # simplified as text: only a target spelled from the root onward stays inside
                if not (target + os.sep).startswith(root + os.sep):
                    return "outside the KB"
                current, target = root, target[len(root) :]
            parts[:0] = [p for p in target.split(os.sep) if p not in ("", ".")]
        elif not parts:
            return None if stat.S_ISREG(mode) else f"not a regular file ({kind_of(mode)})"
        elif stat.S_ISDIR(mode):
            current = path
        else:
            return "does not exist"
    return "not a regular file (a directory)"


def _give_back(tmp: str, kept: os.stat_result) -> None:
    """The owner and group of KEPT to the file TMP, as far as this user may: only root gives a
    file away, but a user may keep a group of theirs."""
    try:
        os.chown(tmp, kept.st_uid, kept.st_gid)
    except OSError:
        with contextlib.suppress(OSError):
            os.chown(tmp, -1, kept.st_gid)


def replace_file(path: str, data: bytes, kept: os.stat_result) -> None:
    """Put DATA in place of the file at PATH at once: written to a temporary file beside it, which
    gets the permissions, owner and group KEPT gives (the file's, as read; the owner only when this
    user is root), then renamed over it.
    Raises OSError; however it ends (an interrupt too), no temporary file is left behind."""
    import tempfile

    directory, base = os.path.split(path)
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=f".{base}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        if (kept.st_uid, kept.st_gid) != (os.getuid(), os.getgid()):
            _give_back(tmp, kept)
        os.chmod(tmp, stat.S_IMODE(kept.st_mode))
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def open_output(path: str) -> TextIO:
    """PATH opened to write a report or a baseline into (created or emptied). A FIFO that no
    process reads is refused at once (OSError) rather than waited on; one being read, such as
    /dev/stdout in a pipe, is written as any file."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NONBLOCK | os.O_NOCTTY, 0o666)
    except OSError as exc:
        if exc.errno == errno.ENXIO:  # a FIFO without a reader, opened without blocking; or a socket
            raise OSError(exc.errno, _no_reader(path)) from None
        raise
    try:
        os.set_blocking(fd, True)
        return os.fdopen(fd, "w", encoding="utf-8", errors="backslashreplace")
    except BaseException:
        os.close(fd)
        raise


def _no_reader(path: str) -> str:
    try:
        return "a FIFO that no process reads" if stat.S_ISFIFO(os.stat(path).st_mode) else "a socket, not a file"
    except OSError as exc:
        return exc.strerror or str(exc)


def remove_tree(path: str) -> None:
    """Remove the folder at PATH and what it holds, as far as permissions allow; a symlink in its
    place is removed itself, and what it leads to is left alone."""
    import shutil

    if os.path.islink(path):
        with contextlib.suppress(OSError):
            os.unlink(path)
    else:
        shutil.rmtree(path, ignore_errors=True)
