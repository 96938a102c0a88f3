"""The result caches: pass-1 results per file, and the outcome of whole runs.

Per file: one file per KB under `CACHE_DIR/results/`, named by a key over everything a pass-1
result depends on besides the entry itself (kblint's version and code, the loaded plugins, the
configuration file, kb.yaml and cross-kb-links.yaml). Each line holds a file's path, modification
and change times and size, and its result as JSON; a file whose times or size differ is linted
again. The change time (ctime) is the one no program can set back: a file rewritten to the same
size with its modification time restored (`touch -r`, `cp -p`) is linted again too. The
graph pass is not cached per file, so a deleted link target shows up as a broken link in an
unchanged entry.

Per run: `CACHE_DIR/runs/` keeps the outcome of the last runs (their issues before filters, and the
KB totals), keyed by the KB keys, the path and stamp of every file and the settings that shape the
issues. A run in which nothing changed takes its outcome from there, without linting anything.

Both hold plain JSON data, never pickles: a cache restored from elsewhere (a CI cache) can at worst
give wrong results until it is cleared, never run code. Both are written to a temporary file and
renamed into place, so a run that is killed, or two runs at once, never leave a half-written file.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import re
import sys
import tempfile
import zlib
from collections.abc import Iterable, Iterator, Sequence
from contextlib import suppress
from dataclasses import dataclass
from functools import lru_cache
from operator import attrgetter
from typing import IO, Any

from .. import __version__
from ..model.facts import FACTS_FIELDS, FACTS_VALUES, EntryFacts
from ..model.issue import ISSUE_FIELDS, ISSUE_VALUES, Issue, Related
from ..model.link import PackedLinks
from ..model.suppression import Suppression
from ..yamlread import DEFAULT_LIMITS
from .files import FileProblem, read_regular_file, remove_tree

FORMAT = 13
_RESULTS = "results"
_RUNS = "runs"
_RUNS_KEPT = 8  # outcomes of this many recent runs are kept (several workspaces, settings or shards)

Stamp = tuple[int, int, int]  # (mtime_ns, ctime_ns, size)


class CacheUnusable(Exception):
    """The cache directory cannot be used (it cannot be created or written)."""


def _unusable(where: str, exc: OSError) -> CacheUnusable:
    """Why the cache cannot be used: WHERE, the file or directory the system refused, and why."""
    return CacheUnusable(f"{where}: {exc.strerror or exc}")


class CacheDamaged(Exception):
    """A cache file holds what kblint did not write (a damaged disk, another program)."""

    def __init__(self, path: str):
        super().__init__(path)
        self.path = path


# ---------------------------------------------------------------------------------------------
# Records: a pass-1 result as JSON data


def _json(data: object) -> str:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def issue_row(issue: Issue) -> list[Any]:
    return list(ISSUE_VALUES(issue))


_MESSAGE_AT = ISSUE_FIELDS.index("message")
_RELATED_AT = ISSUE_FIELDS.index("related")


def issue_of_row(row: list[Any]) -> Issue:
    """An issue from its record; its strings but the message are interned (they repeat)."""
    if len(row) != len(ISSUE_FIELDS):
        raise ValueError("issue record of another shape")
    values: list[Any] = [sys.intern(v) if isinstance(v, str) and n != _MESSAGE_AT else v for n, v in enumerate(row)]
    values[_RELATED_AT] = _related(values[_RELATED_AT])
    return Issue(*values)


def _related(value: Any) -> Related | None:
    """An issue's other entry as JSON stored it (a list), or None."""
    return Related(*value) if value is not None else None


def record_text(facts: EntryFacts, issues: Sequence[Issue], cross_sources: tuple[str, ...]) -> str:
    """One pass-1 result as JSON text."""
    facts_row = [v.values if isinstance(v, PackedLinks) else v for v in FACTS_VALUES(facts)]
    facts_row[_SKETCH_AT] = facts.sketch.hex()
    return _json([facts_row, [issue_row(i) for i in issues], list(cross_sources)])


_LINKS_AT = FACTS_FIELDS.index("links")
_SKETCH_AT = FACTS_FIELDS.index("sketch")
_SHARED_FACTS = tuple(FACTS_FIELDS.index(n) for n in ("kb_name", "type", "status"))


def result_of(text: str) -> tuple[EntryFacts, list[Issue], tuple[str, ...]]:
    """A result from its JSON text; ValueError or TypeError when it is not one."""
    facts_row, rows, cross = json.loads(text)
    if len(facts_row) != len(FACTS_FIELDS):
        raise ValueError("facts record of another shape")
    # The main process holds every entry's facts at once: one string object per distinct value.
    for n in _SHARED_FACTS:
        if isinstance(facts_row[n], str):
            facts_row[n] = sys.intern(facts_row[n])
    facts_row[_SKETCH_AT] = bytes.fromhex(facts_row[_SKETCH_AT])
    facts_row[_LINKS_AT] = PackedLinks(tuple(sys.intern(v) if isinstance(v, str) else v for v in facts_row[_LINKS_AT]))
    facts = EntryFacts(*facts_row)
    facts.aliases = tuple(facts.aliases)
    facts.suppress = tuple(Suppression(*row) for row in facts.suppress)
    facts.grades = tuple((str(item), str(level), float(score)) for item, level, score in facts.grades)
    facts.required_done = tuple(facts.required_done)
    return facts, [issue_of_row(row) for row in rows], tuple(cross)


# ---------------------------------------------------------------------------------------------
# Keys


_MARK = "# created by kblint: the cache is not for version control\n"  # the first line of its .gitignore


def ensure_dir(cache_dir: str, sub: str) -> str:
    """CACHE_DIR/SUB, created; raises CacheUnusable. CACHE_DIR gets kblint's .gitignore, which also
    marks it as kblint's (`is_kblint_cache`), when kblint makes it or finds it empty: a folder that
    holds other files is not taken for a cache (nor emptied by `kblint cache clear`)."""
    directory = os.path.join(cache_dir, sub)
    for path in (cache_dir, directory):
        if os.path.islink(path):  # it could lead anywhere: kblint writes and prunes only its own
            raise CacheUnusable(f"{path} is a symlink")
    try:
        if not is_kblint_cache(cache_dir):
            if os.path.isdir(cache_dir) and os.listdir(cache_dir):
                raise CacheUnusable(f"{cache_dir} holds files kblint did not write: not used as a cache")
            os.makedirs(cache_dir, exist_ok=True)
            _mark(cache_dir)
        os.makedirs(directory, exist_ok=True)
    except OSError as exc:  # named by what the system refused: makedirs names the directory it could not make
        raise _unusable(exc.filename or cache_dir, exc) from None
    return directory


def _mark(cache_dir: str) -> None:
    """Write kblint's .gitignore into CACHE_DIR in one write: a run that starts meanwhile reads
    it whole or not at all (and a run that marked it first has written the same)."""
    try:
        fd = os.open(os.path.join(cache_dir, ".gitignore"), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError:
        return
    try:
        os.write(fd, (_MARK + "*\n").encode())
    finally:
        os.close(fd)


def is_kblint_cache(cache_dir: str) -> bool:
    """Whether CACHE_DIR is a cache kblint made: its .gitignore is the one kblint writes."""
    try:
        return read_regular_file(os.path.join(cache_dir, ".gitignore"), 65_536).startswith(_MARK.encode())
    except FileProblem:
        return False


def _file_bytes(path: str | None) -> bytes:
    """The bytes of a file a cache key covers (kb.yaml, the configuration file, ...); a file that
    cannot be read (or is over the size kb.yaml is read up to) adds its reason instead."""
    if not path:
        return b""
    try:
        return read_regular_file(path, DEFAULT_LIMITS.max_file_bytes)  # as kb.yaml is read
    except FileProblem as exc:
        return f"\0unreadable: {exc.reason}".encode()


@lru_cache(maxsize=1)
def _code_stamp() -> str:
    """kblint's own code, so an edited (editable) install never reuses results of older code."""
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    parts = []
    for directory, _, names in os.walk(package):
        for name in sorted(names):
            if name.endswith(".py"):
                st = os.stat(os.path.join(directory, name))
                parts.append(f"{os.path.relpath(os.path.join(directory, name), package)}:{st.st_mtime_ns}:{st.st_size}")
    return ";".join(sorted(parts))


def kb_key(root: str, inputs: Iterable[str | None], plugins: Iterable[str], config_file: str | None) -> str:
    """A key over what a KB's pass-1 results depend on: kblint's code, the configuration file,
    the plugins (as `package=version`) and the KB's own files INPUTS (kb.yaml, cross-kb-links.yaml)."""
    h = hashlib.sha256()
    h.update(_code_stamp().encode())
    h.update(_file_bytes(config_file))
    h.update(f"\0{FORMAT}\0{__version__}\0{os.path.abspath(root)}\0".encode("utf-8", "surrogateescape"))
    for plugin in plugins:
        h.update(f"{plugin}\0".encode())
    for path in inputs:
        h.update(_file_bytes(path))
        h.update(b"\0")
    return h.hexdigest()[:40]


def stamp(path: str) -> Stamp | None:
    """(mtime_ns, ctime_ns, size) of a file, None when it cannot be read."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_mtime_ns, st.st_ctime_ns, st.st_size


def _crc32(text: str, crc: int = 0) -> int:
    """CRC continued over TEXT as the cache files hold it. A record or run that is still JSON, but
    not as kblint wrote it (edited, or damaged on disk), is not taken for a result."""
    return zlib.crc32(text.encode("utf-8", "surrogateescape"), crc)


def _checksum(text: str) -> str:
    """A record's CRC-32, as its line holds it."""
    return f"{_crc32(text):08x}"


def _writer(directory: str) -> tuple[IO[str], str]:
    fd, tmp = tempfile.mkstemp(dir=directory, suffix=".tmp")
    # "\n" ends a line on every system: the checksums are over the text as written
    return os.fdopen(fd, "w", encoding="utf-8", errors="surrogateescape", newline="\n"), tmp


# ---------------------------------------------------------------------------------------------
# Per-file results


class KBResultCache:
    """The cached pass-1 results of one KB. `reuse` reads the old cache file once, keeping the
    records of unchanged files and copying their lines into the new one; `add` appends fresh
    results; `commit` puts the new file in place."""

    def __init__(self, cache_dir: str, key: str):
        directory = ensure_dir(cache_dir, _RESULTS)
        self.path = os.path.join(directory, key + ".jsonl")
        try:
            self._out, self._tmp = _writer(directory)
        except OSError as exc:  # named by the directory: a temporary file's name would change each run
            raise _unusable(directory, exc) from None
        self._changed = False
        self.damaged = False  # a line of the old file was not a record
        self._rejected: str | None = None

    def reuse(self, stamps: dict[str, Stamp | None]) -> Iterator[tuple[str, str]]:
        """(path, record text) for every file whose cached record matches its stamp."""
        seen: set[str] = set()
        try:
            with open(self.path, encoding="utf-8", errors="surrogateescape") as fh:
                for line in fh:
                    path, mtime, ctime, size, checksum, text = line.rstrip("\n").split("\t", 5)
                    current = stamps.get(path)
                    if current is None or current != (int(mtime), int(ctime), int(size)) or path in seen:
                        self._changed = True
                        continue
                    if checksum != _checksum(text):  # changed since it was written: linted again
                        self.damaged = self._changed = True
                        continue
                    seen.add(path)
                    yield path, text
                    if self._rejected != path:
                        self._out.write(line)
        except OSError:
            self._changed = True
        except ValueError:
            self._changed = self.damaged = True  # what was read before the damage stays usable
        if len(seen) != len(stamps):
            self._changed = True

    def reject(self, path: str) -> None:
        """The record `reuse` just gave for PATH is damaged: it is not kept."""
        self._rejected = path
        self.damaged = self._changed = True

    def add(self, path: str, file_stamp: Stamp | None, text: str) -> None:
        if file_stamp is None or "\t" in path or "\n" in path or "\r" in path:
            return  # not representable in this format (a line of fields): such a file is simply not cached
        mtime, ctime, size = file_stamp
        self._out.write(f"{path}\t{mtime}\t{ctime}\t{size}\t{_checksum(text)}\t{text}\n")
        self._changed = True

    def commit(self) -> None:
        try:
            self._out.close()
            if self._changed or not os.path.exists(self.path):
                os.replace(self._tmp, self.path)
            else:
                os.unlink(self._tmp)
        except OSError:
            pass  # best effort: the next run lints again what this one could not store


# ---------------------------------------------------------------------------------------------
# Whole runs


def run_key(kb_keys: list[str], stamps: dict[str, Stamp | None], shape: dict[str, Any]) -> str:
    """A key over every input of a run's outcome: the KBs' keys, each file's path and stamp, and
    the settings that shape issues (SHAPE)."""
    h = hashlib.sha256()
    h.update(json.dumps([kb_keys, shape], sort_keys=True).encode())
    for path, st in stamps.items():
        h.update(f"\0{path}\t{st}".encode("utf-8", "surrogateescape"))
    return h.hexdigest()[:40]


@dataclass(slots=True)
class StoredRun:
    """A run's outcome as the run cache keeps it: a header of plain data and the issues."""

    header: dict[str, Any]
    issues: list[Issue]


# A run's issues are stored field by field: a column of numbers for each field of texts (indexes
# into one table of the distinct texts: every text is read once and shared by the issues that have
# it), and a column of values for the others (messages, lines, numbers). Issues in report order come
# file by file, so a column of texts mostly repeats its value (the KB, the file, an unset field): it
# is stored as runs, {"runs": [index, count, index, count, …]}, when it has fewer runs than half its
# length.
_UNSHARED = {"message", "line", "column", "confidence", "cached", "fingerprint"}


def _text_table(issues: list[Issue]) -> dict[str | None, int]:
    """Each distinct text of the issues' shared fields, and its index (None's is -1)."""
    table: dict[str | None, int] = {None: -1}
    for name in ISSUE_FIELDS:
        if name not in _UNSHARED:
            for value in map(attrgetter(name), issues):
                table.setdefault(value, len(table) - 1)
    return table


def _columns(issues: list[Issue], table: dict[str | None, int]) -> Iterator[list[Any] | dict[str, list[int]]]:
    """The column of each field in turn, made as it is written: one column is held at a time."""
    for name in ISSUE_FIELDS:
        values = list(map(attrgetter(name), issues))
        yield values if name in _UNSHARED else _as_runs(list(map(table.__getitem__, values)))


def _as_runs(indexes: list[int]) -> list[int] | dict[str, list[int]]:
    """A column of indexes as runs of one index, when that is shorter."""
    runs: list[int] = []
    for index, group in itertools.groupby(indexes):
        runs += (index, sum(1 for _ in group))
        if len(runs) >= len(indexes):
            return indexes
    return {"runs": runs}


def _column_values(texts: list[Any], column: Any, count: int) -> Iterable[Any]:
    """The texts a stored column of indexes (or of runs of them) names, one for each of COUNT
    issues; ValueError when it does not hold COUNT. Runs are expanded as they are asked for;
    indexes are replaced at once (the numbers are not held while later columns are read)."""
    if isinstance(column, dict):
        runs = column["runs"]
        lengths = runs[1::2]
        # a damaged file is not expanded
        if len(runs) % 2 or sum(lengths) != count or min(lengths, default=1) < 1:
            raise ValueError("runs of another length")
        named = map(texts.__getitem__, runs[0::2])
        return itertools.chain.from_iterable(map(itertools.repeat, named, lengths))
    if len(column) != count:
        raise ValueError("a column of another length")
    return list(map(texts.__getitem__, column))


def _issues_of_lines(texts: list[Any], lines: Iterator[str], count: int) -> list[Issue]:
    """COUNT issues from the stored columns, one line of LINES each."""
    if not isinstance(texts, list):
        raise ValueError("a table of texts that is not a list")
    texts.append(None)  # index -1
    decoded: list[Iterable[Any]] = []
    for name, line in zip(ISSUE_FIELDS, lines, strict=False):  # a line too few: below; too many: load_run
        column = json.loads(line)
        if name not in _UNSHARED:
            decoded.append(_column_values(texts, column, count))
        elif len(column) == count:
            decoded.append(column)
        else:
            raise ValueError("a column of another length")
    if len(decoded) != len(ISSUE_FIELDS):
        raise ValueError("columns of another shape")
    decoded[_RELATED_AT] = map(_related, decoded[_RELATED_AT])
    return list(map(Issue, *decoded))


def run_file(cache_dir: str, key: str) -> str:
    """Where the outcome of run KEY is kept."""
    return os.path.join(cache_dir, _RUNS, key + ".jsonl")


def load_run(cache_dir: str, key: str) -> StoredRun | None:
    """The stored outcome of run KEY, or None when it is not cached; CacheDamaged."""
    path = run_file(cache_dir, key)
    summed = _Summed()
    try:
        with open(path, "rb") as fh:
            lines = map(summed.decoded, fh)
            header = json.loads(next(lines, ""))
            if isinstance(header, dict) and header.get("format") != FORMAT:
                return None  # written by another version of kblint
            issues = _issues_of_lines(json.loads(next(lines, "")), lines, header["issues"])
            if json.loads(fh.readline()) != {"crc": summed.crc} or fh.read(1):
                raise ValueError("not the file as it was written")
        os.utime(path)  # most recently used: kept longest
    except OSError:
        return None  # not cached (or not readable: writing says so)
    except (ValueError, TypeError, KeyError, IndexError, RecursionError):  # (a line nested past the stack)
        raise CacheDamaged(path) from None
    return StoredRun(header, issues)


def save_run(cache_dir: str, key: str, run: StoredRun) -> None:
    """Store a run's outcome; raises CacheUnusable when it cannot."""
    directory = ensure_dir(cache_dir, _RUNS)
    table = _text_table(run.issues)
    try:
        out, tmp = _writer(directory)
        with out:
            summed = _Summed(out)
            summed.write(_json({**run.header, "format": FORMAT, "issues": len(run.issues)}) + "\n")
            _write_line(summed, [text for text in table if text is not None])
            for column in _columns(run.issues, table):
                _write_line(summed, column)
            out.write(_json({"crc": summed.crc}) + "\n")  # the last line: the CRC-32 of all before it
        os.replace(tmp, run_file(cache_dir, key))
        _prune(directory)
    except OSError as exc:
        raise _unusable(directory, exc) from None


class _Summed:
    """The CRC-32 of the bytes of a run file's lines, as they are written to OUT or read."""

    def __init__(self, out: IO[str] | None = None):
        self.out = out
        self.crc = 0

    def write(self, text: str) -> None:
        assert self.out is not None  # made to write
        self.out.write(text)
        self.crc = _crc32(text, self.crc)

    def decoded(self, line: bytes) -> str:
        self.crc = zlib.crc32(line, self.crc)
        return line.decode("utf-8", "surrogateescape")


_PIECE = 10_000  # values encoded at a time: a column of 100,000 entries' messages is 30 MB of text


def _write_line(out: _Summed, data: list[Any] | dict[str, list[int]]) -> None:
    """DATA as one line of JSON, as _json writes it, a piece of a long list at a time."""
    if isinstance(data, dict) or len(data) <= _PIECE:
        out.write(_json(data) + "\n")
        return
    out.write("[")
    for start in range(0, len(data), _PIECE):
        out.write(("," if start else "") + _json(data[start : start + _PIECE])[1:-1])
    out.write("]\n")


_RUN_FILE = re.compile(r"[0-9a-f]{40}\.jsonl")


def _prune(directory: str) -> None:
    """Remove all but the most recent outcomes (another run may be removing them too)."""
    runs = []
    for e in os.scandir(directory):
        if _RUN_FILE.fullmatch(e.name):
            with suppress(FileNotFoundError):
                runs.append((e.stat().st_mtime_ns, e.path))
    for _, path in sorted(runs, reverse=True)[_RUNS_KEPT:]:
        with suppress(FileNotFoundError):
            os.unlink(path)


# ---------------------------------------------------------------------------------------------
# `kblint cache info` / `clear`


def info(cache_dir: str) -> dict[str, int]:
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


def clear(cache_dir: str) -> list[str]:
    """Remove the lint results and stored runs; the folders that could not be removed."""
    for sub in (_RESULTS, _RUNS):
        remove_tree(os.path.join(cache_dir, sub))
    return [sub for sub in (_RESULTS, _RUNS) if os.path.lexists(os.path.join(cache_dir, sub))]
