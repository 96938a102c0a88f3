"""Paths as kblint shows and compares them: one place for an entry's stem, a KB-relative path and
the path a report shows (SPEC §9: relative to the current directory, with `/` separators; absolute
in the MCP server)."""

from __future__ import annotations

import os
import posixpath
import re
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


def link_relpath(target: str) -> str:
    """A link target as a normalized KB-relative path (a leading `/` is the KB's root)."""
    return posixpath.normpath(target.lstrip("/"))


def leaves_kb(target: str) -> bool:
    """Whether a link's TARGET names a path outside its KB's folder."""
    rel = link_relpath(target)
    return rel == ".." or rel.startswith("../")


def is_within(path: str, root: str) -> bool:
    """Whether PATH (made absolute) is ROOT or lies below it."""
    try:
        return os.path.commonpath([os.path.abspath(path), root]) == root
    except ValueError:
        return False


_absolute = False  # show_absolute()


def show_absolute() -> None:
    """Show every path absolute from now on, for a reader that knows nothing of this process's
    current directory (an MCP client, which may well have started the server in `/`)."""
    global _absolute  # noqa: PLW0603 - one setting for the life of the process
    _absolute = True


def display_path(path: str, cwd: str | None = None) -> str:
    """PATH as reports show it: relative to the current directory (CWD, when the caller has asked
    for it already), or absolute after show_absolute(), with `/` separators, quoted as git quotes
    file names when it has to be (`quote_name`)."""
    if _absolute:
        return quote_name(os.path.abspath(path or os.curdir).replace(os.sep, "/"))
    return _display_path(cwd or os.getcwd(), path)


def diff_name(name: str) -> str:
    """NAME as a unified diff's `---`/`+++` line gives it: followed by a tab when it holds a space,
    which patch would otherwise take for the name's end (git writes it so)."""
    return name + "\t" if " " in name else name


def plain_display_path(path: str, base: str | None = None) -> str:
    """display_path without quoting (for a URI, which has escapes of its own); relative to BASE
    instead of the current directory when it is given."""
    return _plain_display_path(base or os.getcwd(), path)


# What makes a name quoted: control characters (C0 and C1), the bidi controls, a quote, a
# backslash, and the undecodable bytes of a name that is not UTF-8 (Python keeps each as a lone
# surrogate, U+DC80 to U+DCFF).
CONTROLS = "\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069"  # C0, C1 and the bidi controls, as a regex class
UNDECODABLE = "\udc80-\udcff"  # the bytes of a name that are not UTF-8, as Python keeps them
_NEEDS_QUOTES = re.compile(f'[{CONTROLS}"\\\\{UNDECODABLE}]')
_SURROGATE_BASE = 0xDC00
_C_ESCAPES = {
    "\\": "\\\\",
    '"': '\\"',
    "\a": "\\a",
    "\b": "\\b",
    "\t": "\\t",
    "\n": "\\n",
    "\v": "\\v",
    "\f": "\\f",
    "\r": "\\r",
}


def quote_name(name: str) -> str:
    """NAME unchanged when it is plain text, else in double quotes with C escapes, the way git
    shows file names (core.quotePath): `"\\377.md"` is the one-byte name 0xFF followed by `.md`.
    Unquoted names never begin with `"`, so the quoting can always be undone."""
    if not _NEEDS_QUOTES.search(name):
        return name
    return '"' + _NEEDS_QUOTES.sub(_escape, name) + '"'


def _escape(m: re.Match[str]) -> str:
    c = m.group()
    if c in _C_ESCAPES:
        return _C_ESCAPES[c]
    code = ord(c)
    if code > _SURROGATE_BASE:  # U+DCFF stands for the byte 0xFF
        return f"\\{code - _SURROGATE_BASE:03o}"
    return "".join(f"\\{byte:03o}" for byte in c.encode())  # the character's UTF-8 bytes


# Characters text taken from an input is never shown with as they are: control characters (a
# terminal would obey an escape sequence taken from an entry; a newline would split an issue's
# line) and the bidi controls that reorder what a reader sees.
_UNSHOWN = re.compile(f"[{CONTROLS}]")
_UNDECODABLE = re.compile(f"[{UNDECODABLE}]")


def printable(text: str) -> str:
    """TEXT with its control characters written as escapes (`\\x1b`, `\\n`), and the bytes of a
    file name that is not UTF-8 as a quoted name writes them (`\\377`)."""
    if text.isprintable():
        return text
    return decodable(_UNSHOWN.sub(lambda m: repr(m.group())[1:-1], text))


def decodable(text: str) -> str:
    """TEXT with the bytes of a file name that is not UTF-8 written as a quoted name writes them
    (`\\377`): a report is UTF-8, which has no character for them."""
    return _UNDECODABLE.sub(_escape, text) if _UNDECODABLE.search(text) else text


@lru_cache(maxsize=1024)  # a report shows each file's path with each of its issues
def _display_path(cwd: str, path: str) -> str:
    return quote_name(_plain_display_path(cwd, path))


@lru_cache(maxsize=1024)
def _plain_display_path(cwd: str, path: str) -> str:
    try:
        shown = os.path.relpath(path or os.curdir, cwd)  # an empty path is the current directory
    except ValueError:  # another drive (Windows)
        shown = path
    return shown.replace(os.sep, "/")
