"""The result caches: pass-1 results per file, and the issues of whole runs.

Per file: one file per KB under `CACHE_DIR/results/`, named by a key over everything a pass-1 result
depends on besides the entry itself: kblint's version and code, the loaded plugins, the configuration
file, kb.yaml and cross-kb-links.yaml. Each line holds a file's path, modification time and size,
and its issues and facts as JSON; a file whose time or size differs is linted again. The graph pass is not
cached per file, so a deleted link target shows up as a broken link in an unchanged entry.

Per run: `CACHE_DIR/runs/` keeps the outcome of the last runs (their issues before filters, and the
KB totals), keyed by the KB keys, the path and stamp of every file and the settings that shape the
issues. A run in which nothing changed takes its outcome from there, without linting anything.

Both hold plain JSON data, never pickles: a cache restored from elsewhere (a CI cache) can at worst
give wrong results until it is cleared, never run code.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from dataclasses import fields
from functools import lru_cache
from operator import attrgetter
from sys import intern

from . import __version__

_FORMAT = 5
_RESULTS = "results"
_RUNS = "runs"
_RUNS_KEPT = 8  # outcomes of this many recent runs are kept (several workspaces, settings or shards)
_SPILL_CHUNK = 128  # reused entries whose issues go to the spill together


# ---------------------------------------------------------------------------------------------
# Records: a pass-1 result as nested tuples of plain values. Workers send them to the main process
# (pickle moves tuples of strings and numbers many times faster than objects) and the cache
# stores them as JSON.


def _names(cls) -> tuple[str, ...]:
    return tuple(f.name for f in fields(cls))


_ISSUE: tuple[str, ...] = ()
_FACTS: tuple[str, ...] = ()
_ISSUE_VALUES = _FACTS_VALUES = None  # attrgetters of those fields: one call gives the record
_LINKS_AT = 0
_INTERNED_FACTS: tuple[int, ...] = ()
_UNSHARED: tuple[int, ...] = ()


def _shapes() -> None:
    global _ISSUE, _FACTS, _ISSUE_VALUES, _FACTS_VALUES, _LINKS_AT, _INTERNED_FACTS, _UNSHARED
    from .graph import EntryFacts
    from .issue import Issue

    _ISSUE, _FACTS = _names(Issue), _names(EntryFacts)
    _ISSUE_VALUES, _FACTS_VALUES = attrgetter(*_ISSUE), attrgetter(*_FACTS)
    _LINKS_AT = _FACTS.index("packed_links")
    _INTERNED_FACTS = tuple(_FACTS.index(n) for n in ("kb_name", "id", "type", "status"))
    # the message is unique; numbers and booleans must not be shared (1, 1.0 and True are one key)
    _UNSHARED = tuple(_ISSUE.index(n) for n in ("message", "line", "column", "confidence", "cached"))


def issues_record(issues) -> tuple:
    if not _ISSUE:
        _shapes()
    return tuple(map(_ISSUE_VALUES, issues))


def facts_record(result) -> tuple:
    """(facts, cross-kb-links sources) of a FileResult as plain tuples."""
    if not _ISSUE:
        _shapes()
    facts = result.facts
    return _FACTS_VALUES(facts), tuple(result.cross_sources)


def from_facts_record(data):
    """The FileResult (without its issues) of a facts record (from a worker, or from JSON: lists
    where tuples were)."""
    from .engine import FileResult
    from .graph import EntryFacts

    if not _ISSUE:
        _shapes()
    facts_data, cross = data
    row = list(facts_data)
    if len(row) != len(_FACTS):
        raise ValueError("record of another shape")
    # The main process holds every entry's facts and links at once: one string object for each
    # distinct id, type, status, relation and link target, not one per occurrence.
    for n in _INTERNED_FACTS:
        if row[n].__class__ is str:
            row[n] = intern(row[n])
    row[_LINKS_AT] = _links(row[_LINKS_AT])
    facts = EntryFacts(*row)
    if facts.aliases.__class__ is not tuple:
        facts.aliases = tuple(facts.aliases)
        facts.suppress = tuple(tuple(x) for x in facts.suppress)
    return FileResult((), facts, tuple(cross))


def _links(packed) -> tuple:
    """Packed links with their targets interned (and, from JSON, their relations, KB names and
    fields: from a worker these repeat within a record already)."""
    from .graph import LINK_FIELDS

    if len(packed) % LINK_FIELDS:
        raise ValueError("links of another shape")
    values = list(packed)
    values[0::LINK_FIELDS] = map(intern, values[0::LINK_FIELDS])
    if packed.__class__ is list:  # from JSON, where every relation, KB name and field is a string of its own
        values[1::LINK_FIELDS] = map(intern, values[1::LINK_FIELDS])
        for at in (2, 6):
            column = values[at::LINK_FIELDS]
            values[at::LINK_FIELDS] = [v if v is None else intern(v) for v in column]
    return tuple(values)


def shared_issue_rows(rows, shared: dict) -> list[list]:
    """Issue records read from JSON, checked for shape, with every string but the message replaced
    by the one object SHARED keeps for it (JSON gives each occurrence its own object)."""
    if not _ISSUE:
        _shapes()
    keep = shared.setdefault
    unshared = _UNSHARED
    out = []
    for data in rows:
        row = list(data)
        if len(row) != len(_ISSUE):
            raise ValueError("issue record of another shape")
        kept = [row[n] for n in unshared]
        for n in unshared:
            row[n] = None
        row = list(map(keep, row, row))
        for n, value in zip(unshared, kept):
            row[n] = value
        out.append(row)
    return out


def record_json(data: tuple) -> str:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


# ---------------------------------------------------------------------------------------------
# Keys


def _ensure_dir(cache_dir: str, sub: str) -> str:
    directory = os.path.join(cache_dir, sub)
    os.makedirs(directory, exist_ok=True)
    ignore = os.path.join(cache_dir, ".gitignore")
    if not os.path.exists(ignore):
        try:
            with open(ignore, "w", encoding="utf-8") as fh:
                fh.write("# created by kblint: the cache is not for version control\n*\n")
        except OSError:
            pass
    return directory


def _file_bytes(path: str | None) -> bytes:
    if not path:
        return b""
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except OSError:
        return b""


@lru_cache(maxsize=1)
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


def stamp(path: str) -> tuple[int, int] | None:
    """(mtime_ns, size) of a file, None when it cannot be read."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_mtime_ns, st.st_size


# ---------------------------------------------------------------------------------------------
# Per-file results


class KBResultCache:
    """The cached pass-1 results of one KB. `reuse` reads the old cache file once, decoding the
    records of unchanged files and copying their lines into the new one; `add` appends the fresh
    results; `commit` puts the new file in place. No record is held as text in memory."""

    def __init__(self, cache_dir: str, key: str):
        self.path = os.path.join(_ensure_dir(cache_dir, _RESULTS), key + ".jsonl")
        self._out = None
        self._tmp = None
        self._changed = False
        try:
            fd, self._tmp = tempfile.mkstemp(dir=os.path.dirname(self.path), suffix=".tmp")
            self._out = os.fdopen(fd, "w", encoding="utf-8")
        except OSError:
            self._out = None  # a read-only cache directory: reuse what is there, store nothing

    def reuse(self, stamps: dict[str, tuple[int, int] | None], spill) -> dict:
        """path → FileResult for every file whose cached record matches its stamp; its issues go
        to SPILL (an IssueSpill) a chunk of entries at a time, never all held at once."""
        from .spill import pack_chunk

        found = {}
        dropped = 0
        pending: list = []  # (result, issue rows) not yet in the spill
        shared: dict = {}

        def flush() -> None:
            first = spill.put_chunk(pack_chunk([rows for _, rows in pending]), len(pending))
            for offset, (result, _) in enumerate(pending):
                result.spilled = first + offset
            pending.clear()
            shared.clear()

        try:
            with open(self.path, encoding="utf-8") as fh:
                for line in fh:
                    path, mtime, size, issues_text, facts_text = line.rstrip("\n").split("\t", 4)
                    current = stamps.get(path)
                    if current is None or current != (int(mtime), int(size)) or path in found:
                        dropped += 1
                        continue
                    try:
                        result = from_facts_record(json.loads(facts_text))
                        rows = shared_issue_rows(json.loads(issues_text), shared)
                    except (TypeError, ValueError, IndexError):
                        dropped += 1
                        continue  # a damaged record: that file is linted again
                    found[path] = result
                    pending.append((result, rows))
                    if len(pending) == _SPILL_CHUNK:
                        flush()
                    if self._out is not None:
                        self._out.write(line)
        except (OSError, ValueError):
            dropped += 1  # a missing or unreadable cache is an empty one (what was read stays usable)
        if pending:
            flush()
        self._changed = dropped > 0
        return found

    def add(self, path: str, file_stamp: tuple[int, int] | None, issues_text: str, facts_text: str) -> None:
        if self._out is None or file_stamp is None or "\t" in path or "\n" in path:
            return  # not representable in this format: such a file is simply not cached
        self._out.write(f"{path}\t{file_stamp[0]}\t{file_stamp[1]}\t{issues_text}\t{facts_text}\n")
        self._changed = True

    def commit(self) -> None:
        """Put the new cache file in place (atomically: an interrupted run never leaves half a file)."""
        if self._out is None:
            return
        try:
            self._out.close()
            if self._changed or not os.path.exists(self.path):
                os.replace(self._tmp, self.path)
            else:
                os.unlink(self._tmp)
        except OSError:
            pass
        self._out = None


# ---------------------------------------------------------------------------------------------
# Whole runs


def run_key(kb_keys: list[str], stamps: list[tuple[str, tuple[int, int] | None]], shape: dict) -> str:
    """A key over every input of a run's outcome: the KBs' keys, each file's path and stamp, and
    the settings that shape issues (SHAPE)."""
    h = hashlib.sha256()
    h.update(json.dumps([kb_keys, shape], sort_keys=True).encode())
    for path, st in stamps:
        h.update(f"\0{path}\t{st}".encode("utf-8", "surrogateescape"))
    return h.hexdigest()[:40]


def load_run(cache_dir: str, key: str) -> tuple[dict, list] | None:
    """(the run's header, its issues), or None when the run is not cached (or the file is damaged)."""
    from .issue import Issue

    path = os.path.join(cache_dir, _RUNS, key + ".jsonl")
    try:
        with open(path, encoding="utf-8") as fh:
            header = json.loads(fh.readline())
            if not isinstance(header, dict) or header.get("format") != _FORMAT:
                return None
            issues = _issues_from_columns(fh, Issue, header["issues"])
    except (OSError, ValueError, TypeError, KeyError, IndexError, StopIteration):
        return None  # missing, damaged, or cut short
    try:
        os.utime(path)  # most recently used: kept longest
    except OSError:
        pass
    return header, issues


def _issues_from_columns(lines, cls, count: int) -> list:
    """Issues from the lines after the header: the string table, then one line per field, each
    read and turned into values before the next (never the whole file as JSON data at once)."""
    if not _ISSUE:
        _shapes()
    table = json.loads(next(lines))
    table.append(None)  # index -1
    columns = []
    for _ in _ISSUE:
        coded, column = json.loads(next(lines))
        if len(column) != count:
            raise ValueError("a column cut short")
        columns.append(list(map(table.__getitem__, column)) if coded else column)
    return list(map(cls, *columns))


def _issue_columns(issues: list) -> dict:
    """The issues field by field. A field of strings (and nulls) is written as indexes into one
    table of distinct strings: reading integers back is several times faster than reading strings,
    and each distinct string is made once."""
    if not _ISSUE:
        _shapes()
    table: dict[str, int] = {}
    coded, columns = [], []
    for name in _ISSUE:
        column = list(map(attrgetter(name), issues))
        if name not in ("message", "stored_fingerprint") and all(v is None or v.__class__ is str for v in column):
            coded.append(True)
            columns.append([-1 if v is None else table.setdefault(v, len(table)) for v in column])
        else:
            coded.append(False)
            columns.append(column)
    return {"strings": list(table), "coded": coded, "columns": columns}


def save_run(cache_dir: str, key: str, header: dict, issues: list) -> None:
    try:
        directory = _ensure_dir(cache_dir, _RUNS)
        fd, tmp = tempfile.mkstemp(dir=directory, suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(record_json({**header, "format": _FORMAT, "issues": len(issues)}) + "\n")
            columns = _issue_columns(issues)
            fh.write(record_json(columns["strings"]) + "\n")
            for coded, column in zip(columns["coded"], columns["columns"]):
                fh.write(record_json([coded, column]) + "\n")
        os.replace(tmp, os.path.join(directory, key + ".jsonl"))
        runs = sorted((e for e in os.scandir(directory) if e.name.endswith(".jsonl")),
                      key=lambda e: e.stat().st_mtime_ns, reverse=True)
        for old in runs[_RUNS_KEPT:]:
            os.unlink(old.path)
    except (OSError, TypeError, ValueError):
        pass  # the cache is best effort: a read-only disk does not fail the run


# ---------------------------------------------------------------------------------------------
# `kblint cache info` / `clear`


def info(cache_dir: str) -> dict:
    """Lint results: the number of KBs and runs cached and their size in bytes."""
    out = {"kbs": 0, "runs": 0, "bytes": 0}
    for sub, name in ((_RESULTS, "kbs"), (_RUNS, "runs")):
        directory = os.path.join(cache_dir, sub)
        if not os.path.isdir(directory):
            continue
        for e in os.scandir(directory):
            if e.is_file() and not e.name.endswith(".tmp"):
                out[name] += 1
                out["bytes"] += e.stat().st_size
    return out


def clear(cache_dir: str) -> None:
    for sub in (_RESULTS, _RUNS):
        shutil.rmtree(os.path.join(cache_dir, sub), ignore_errors=True)
