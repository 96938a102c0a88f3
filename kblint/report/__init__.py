"""Report formatters: one module per format. Each exposes `render(report) -> str`."""

from __future__ import annotations

import os
from functools import lru_cache

FORMATS = ("text", "json", "sarif", "github", "junit")


def display_path(path: str) -> str:
    """A path relative to the current directory, with `/` separators (SPEC §9)."""
    return _display_path(os.getcwd(), path)


@lru_cache(maxsize=65536)
def _display_path(cwd: str, path: str) -> str:
    if path.startswith(cwd) and path[len(cwd):len(cwd) + 1] == os.sep:
        rel = path[len(cwd) + 1:]  # what relpath gives, without its normalising of both paths
    else:
        head, tail = os.path.split(path)
        rel = os.path.join(_relative_dir(head, cwd), tail) if head and tail else _relpath(path)
    return rel.replace(os.sep, "/")


class PathDisplay:
    """display_path for the many paths of one report: the current directory is read once, and a
    directory's part of the result is made once for all the files in it."""

    def __init__(self):
        self._cwd = os.getcwd()
        self._prefixes: dict[str, str] = {}  # directory → what its files' displayed paths begin with

    def __call__(self, path: str) -> str:
        directory, _, name = path.rpartition(os.sep)
        prefix = self._prefixes.get(directory)
        if prefix is not None:
            return prefix + name
        shown = _display_path(self._cwd, path)
        if directory and name and shown.endswith(name):
            self._prefixes[directory] = shown[:len(shown) - len(name)]
        return shown


@lru_cache(maxsize=4096)
def _relative_dir(directory: str, cwd: str) -> str:
    """relpath of a directory: computed once for all the files in it."""
    return _relpath(directory)


def _relpath(path: str) -> str:
    try:
        return os.path.relpath(path)
    except ValueError:  # another drive on Windows
        return path


def _no_default(value):
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


try:  # the C encoder itself, made once: json.dumps and JSONEncoder.encode make one per call
    from json.encoder import c_make_encoder as _c_make_encoder, encode_basestring as _encode_basestring

    _C_ENCODE = _c_make_encoder(None, _no_default, _encode_basestring, None, ": ", ", ", False, False, True)
except (ImportError, TypeError):  # pragma: no cover - Pythons without the C accelerator
    _C_ENCODE = None


def json_line(value) -> str:
    """VALUE as JSON on one line, as json.dumps(value, ensure_ascii=False) writes it."""
    if _C_ENCODE is None:  # pragma: no cover
        import json

        return json.dumps(value, ensure_ascii=False)
    if value.__class__ is str:
        return _encode_basestring(value)  # what json.dumps calls for a string, without the encoder around it
    return "".join(_C_ENCODE(value, 0))


def render(report, fmt: str, *, color: bool = False, statistics: bool = False) -> str:
    if fmt == "json":
        from . import json as json_report

        return json_report.render(report)
    if fmt == "sarif":
        from . import sarif

        return sarif.render(report)
    if fmt == "github":
        from . import github

        return github.render(report)
    if fmt == "junit":
        from . import junit

        return junit.render(report)
    from . import text as text_report

    return text_report.render(report, color=color, statistics=statistics)
