"""Paths as kblint shows and compares them: one place for an entry's stem, a KB-relative path and
the path a report shows (SPEC §9: relative to the current directory, with `/` separators)."""

from __future__ import annotations

import os
import posixpath
from functools import lru_cache


def stem(relpath: str) -> str:
    """The file name of a KB-relative posix path without its `.md` (the name a link may use)."""
    base = posixpath.basename(relpath)
    return base[:-3] if base.endswith(".md") else base


def relative_to(path: str, root: str) -> str:
    """PATH relative to the directory ROOT, with `/` separators."""
    prefix = root.rstrip(os.sep) + os.sep
    rel = path[len(prefix) :] if path.startswith(prefix) else os.path.relpath(path, root)
    return rel.replace(os.sep, "/")


def is_within(path: str, root: str) -> bool:
    """Whether PATH (made absolute) is ROOT or lies below it."""
    try:
        return os.path.commonpath([os.path.abspath(path), root]) == root
    except ValueError:
        return False


def display_path(path: str) -> str:
    """PATH as reports show it: relative to the current directory, with `/` separators."""
    return _display_path(os.getcwd(), path)


@lru_cache(maxsize=65536)
def _display_path(cwd: str, path: str) -> str:
    if path.startswith(cwd) and path[len(cwd) : len(cwd) + 1] == os.sep:
        shown = path[len(cwd) + 1 :]
    else:
        try:
            shown = os.path.relpath(path, cwd)
        except ValueError:  # another drive (Windows)
            shown = path
    return shown.replace(os.sep, "/")
