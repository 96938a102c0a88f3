"""The result cache: pass-1 results per file, reused while nothing they depend on changed.

One file per KB under `CACHE_DIR/results/`, named by a key over everything a pass-1 result depends
on besides the entry itself: kblint's version, the loaded plugins, the configuration file, kb.yaml
and cross-kb-links.yaml. Inside, each entry's result is kept with the file's size and modification
time; a file whose size or time differs is linted again. The graph pass is never cached, so a
deleted link target shows up as a broken link in an unchanged entry.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import tempfile

from . import __version__

_FORMAT = 2


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


def kb_key(root: str, kb_yaml: str | None, cross_links: str | None, plugins, config_file: str | None = None) -> str:
    h = hashlib.sha256()
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
        self.path = os.path.join(_ensure_dir(cache_dir), key + ".pickle")
        self.entries: dict[str, tuple[int, int, object]] = {}
        try:
            with open(self.path, "rb") as fh:
                data = pickle.load(fh)
            if isinstance(data, dict):
                self.entries = data
        except (OSError, EOFError, pickle.UnpicklingError, AttributeError, ImportError, TypeError, ValueError):
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
        return found[2]

    def save(self, results: dict[str, tuple[int, int, object]]) -> None:
        """Write atomically, so a run that is interrupted never leaves a half-written cache."""
        directory = os.path.dirname(self.path)
        try:
            fd, tmp = tempfile.mkstemp(dir=directory, suffix=".tmp")
            with os.fdopen(fd, "wb") as fh:
                pickle.dump(results, fh, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(tmp, self.path)
        except OSError:
            pass
