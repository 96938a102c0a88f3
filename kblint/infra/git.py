"""Asking git: which files it ignores (once per repository), and what changed since a revision.

git runs with a time limit; a repository git cannot answer about is reported by the caller and
linted as if it had no .gitignore.
"""

from __future__ import annotations

import os
import stat
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass

TIMEOUT = 30.0  # seconds for one git command
# A repository's own configuration can name a program git runs to list changed files (an
# fsmonitor hook); a KB's repository may come from anyone (an archive), so git runs none.
_UNTRUSTED = ["-c", "core.fsmonitor=false"]


class GitError(Exception):
    """git could not be run, or failed."""


def run(args: list[str], cwd: str, timeout: float = TIMEOUT, given: bytes = b"") -> bytes:
    """git ARGS in CWD, reading GIVEN: its standard output; GitError when it cannot run, fails or
    takes too long."""
    try:
        proc = subprocess.run(
            ["git", *_UNTRUSTED, *args], cwd=cwd, capture_output=True, timeout=timeout, input=given, check=False
        )
    except subprocess.TimeoutExpired:
        raise GitError(f"git {args[0]} took longer than {timeout:g} s") from None
    except (OSError, subprocess.SubprocessError) as exc:
        raise GitError(f"cannot run git: {exc}") from None
    if proc.returncode != 0:
        raise GitError(proc.stderr.decode("utf-8", "replace").strip() or f"git {args[0]} failed")
    return proc.stdout


def run_ok(args: list[str], cwd: str) -> bool:
    """Whether git ARGS succeeds in CWD."""
    try:
        run(args, cwd)
    except GitError:
        return False
    return True


def paths_of(output: bytes) -> list[str]:
    """The NUL-separated paths git printed (with -z)."""
    return [p for p in output.decode("utf-8", "surrogateescape").split("\0") if p]


def work_tree(path: str) -> str | None:
    """The top of the git work tree holding PATH (a directory with .git), or None."""
    current = os.path.abspath(path)
    while True:
        if os.path.lexists(os.path.join(current, ".git")):
            return current
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent


def by_work_tree(roots: Iterable[str]) -> dict[str, list[str]]:
    """ROOTS grouped by the work tree holding them (roots outside any are left out)."""
    groups: dict[str, list[str]] = {}
    for root in roots:
        top = work_tree(root)
        if top is not None:
            groups.setdefault(top, []).append(root)
    return groups


def _is_irregular(path: str) -> bool:
    """Whether PATH exists and is not a regular file (git would block on a FIFO there)."""
    try:
        return not stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return False


def bad_gitignore_above(top: str, roots: Iterable[str]) -> str | None:
    """A .gitignore between TOP and one of ROOTS (both included), or the work tree's
    .git/info/exclude, that is not a regular file."""
    exclude = os.path.join(top, ".git", "info", "exclude")
    if _is_irregular(exclude):
        return exclude
    return next((found for root in roots for found in gitignores(top, root) if _is_irregular(found)), None)


def gitignores(top: str, root: str) -> list[str]:
    """Where git looks for the .gitignore files that apply to ROOT's files: in ROOT and in each
    folder above it, up to the work tree's TOP (both included)."""
    found = []
    current = root
    while True:
        found.append(os.path.join(current, ".gitignore"))
        if current == top or os.path.dirname(current) == current:
            return found
        current = os.path.dirname(current)


@dataclass(frozen=True, slots=True)
class Ignored:
    """The files and directories git ignores, as absolute paths (directories end with a separator)."""

    files: frozenset[str]
    directories: frozenset[str]

    def covers(self, path: str) -> bool:
        if path in self.files:
            return True
        if not self.directories:
            return False
        parent = os.path.dirname(path)
        while True:
            if parent + os.sep in self.directories:
                return True
            up = os.path.dirname(parent)
            if up == parent:
                return False
            parent = up


def ignored(top: str, roots: list[str]) -> Ignored | None:
    """What git ignores under ROOTS in the work tree TOP (one query), or None when git cannot say."""
    specs = [os.path.relpath(root, top) for root in roots]
    try:
        output = run(
            ["ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--directory", "--", *specs], top
        )
    except GitError:
        return None
    files, directories = set(), set()
    for rel in paths_of(output):
        full = os.path.join(top, rel)
        if rel.endswith("/"):
            directories.add(os.path.normpath(full) + os.sep)
        else:
            files.add(os.path.normpath(full))
    return Ignored(frozenset(files), frozenset(directories))
