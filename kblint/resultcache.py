"""The result cache: pass-1 results per file, reused while nothing they depend on changed.

One file per KB under `CACHE_DIR/results/`, named by a key over everything a pass-1 result depends
on besides the entry itself: kblint's version, the loaded plugins, the configuration file, kb.yaml
and cross-kb-links.yaml. Inside, each entry's result is kept with the file's size and modification
time; a file whose size or time differs is linted again. The graph pass is never cached, so a
deleted link target shows up as a broken link in an unchanged entry.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from dataclasses import fields

from . import __version__

_FORMAT = 3

# The cache holds plain JSON data, never pickles: a cache restored from elsewhere (a CI cache)
# can at worst give wrong results until it is cleared, never run code.


def _names(cls) -> tuple[str, ...]:
    return tuple(f.name for f in fields(cls))


def encode(result) -> list:
    from .engine import FileResult  # noqa: F401 - the shape encoded here

    facts = result.facts
    return [
        [[getattr(i, n) for n in _ISSUE] for i in result.issues],
        [[getattr(facts, n) for n in _FACTS if n != "links"],
         [[getattr(link, n) for n in _LINK] for link in facts.links]],
        list(result.cross_sources),
    ]


def decode(data: list):
    from .engine import FileResult
    from .entry import Link
    from .graph import EntryFacts
    from .issue import Issue

    issues_data, (facts_data, links_data), cross = data
    facts = EntryFacts(**dict(zip((n for n in _FACTS if n != "links"), facts_data)))
    facts.aliases = tuple(facts.aliases)
    facts.suppress = tuple(tuple(x) for x in facts.suppress)
    facts.links = [Link(*row) for row in links_data]
    issues = [Issue(**dict(zip(_ISSUE, row))) for row in issues_data]
    return FileResult(issues, facts, tuple(cross))


def _shapes() -> None:
    global _ISSUE, _FACTS, _LINK
    from .entry import Link
    from .graph import EntryFacts
    from .issue import Issue

    _ISSUE, _FACTS, _LINK = _names(Issue), _names(EntryFacts), _names(Link)


_ISSUE = _FACTS = _LINK = ()


def _ensure_dir(cache_dir: str) -> str:
    results = os.path.join(cache_dir, "results")
    os.makedirs(results, exist_ok=True)
    ignore = os.path.join(cache_dir, ".gitignore")
    if not os.path.exists(ignore):
        try:
            with open(ignore, "w", encoding="utf-8") as fh:
                fh.write("# created by kblint: the cache is not for version control\n*\n")
        except OSError:
            pass
    return results


def _file_bytes(path: str | None) -> bytes:
    if not path:
        return b""
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except OSError:
        return b""


def _code_stamp() -> str:
    """kblint's own code, so an edited (editable) install never reuses results of older code."""
    package = os.path.dirname(os.path.abspath(__file__))
    parts = []
    for directory, _, names in os.walk(package):
        for name in sorted(names):
            if name.endswith(".py"):
                st = os.stat(os.path.join(directory, name))
                parts.append(f"{name}:{st.st_mtime_ns}:{st.st_size}")
    return ";".join(sorted(parts))


def kb_key(root: str, kb_yaml: str | None, cross_links: str | None, plugins, config_file: str | None = None) -> str:
    h = hashlib.sha256()
    h.update(_code_stamp().encode())
    h.update(_file_bytes(config_file))
    h.update(b"\0")
    h.update(f"{_FORMAT}\0{__version__}\0{os.path.abspath(root)}\0".encode())
    for p in getattr(plugins, "loaded", ()) or ():
        h.update(f"{p.package}={p.version}\0".encode())
    h.update(_file_bytes(kb_yaml))
    h.update(b"\0")
    h.update(_file_bytes(cross_links))
    return h.hexdigest()[:40]


class KBResultCache:
    """The cached pass-1 results of one KB."""

    def __init__(self, cache_dir: str, key: str):
        if not _ISSUE:
            _shapes()
        self.path = os.path.join(_ensure_dir(cache_dir), key + ".jsonl")
        # path → (mtime_ns, size, the record's JSON text): parsed only when the entry is reused
        self.entries: dict[str, tuple[int, int, str]] = {}
        try:
            with open(self.path, encoding="utf-8") as fh:
                for line in fh:
                    path, mtime, size, record = line.rstrip("\n").split("\t", 3)
                    self.entries[path] = (int(mtime), int(size), record)
        except (OSError, ValueError):
            self.entries = {}  # a missing or unreadable cache is an empty one

    @staticmethod
    def stamp(path: str) -> tuple[int, int] | None:
        try:
            st = os.stat(path)
        except OSError:
            return None
        return st.st_mtime_ns, st.st_size

    def get(self, path: str, stamp: tuple[int, int] | None):
        found = self.entries.get(path)
        if found is None or stamp is None or (found[0], found[1]) != stamp:
            return None
        del self.entries[path]  # the text is not needed once decoded: keep memory flat
        try:
            return decode(json.loads(found[2]))
        except (TypeError, ValueError, IndexError):
            return None  # a damaged record: lint the file again

    def save(self, results: dict[str, tuple[int, int, object]]) -> None:
        """Write atomically, so a run that is interrupted never leaves a half-written cache."""
        directory = os.path.dirname(self.path)
        try:
            fd, tmp = tempfile.mkstemp(dir=directory, suffix=".tmp")
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                for path, (mtime, size, result) in results.items():
                    if "\t" in path or "\n" in path:
                        continue  # not representable in this format: such a file is simply not cached
                    found = self.entries.get(path)
                    # unchanged entries keep their stored record: no need to encode them again
                    record = found[2] if found is not None and (found[0], found[1]) == (mtime, size) else \
                        json.dumps(encode(result), ensure_ascii=False, separators=(",", ":"))
                    fh.write(f"{path}\t{mtime}\t{size}\t{record}\n")
            os.replace(tmp, self.path)
        except (OSError, TypeError, ValueError):
            pass
