"""Pass 1: each entry file on its own — parse, structure and schema rules, and the checker and
policy items that need only the entry — into issues and the compact EntryFacts the later passes
keep. Nothing of an entry's body outlives its pass-1 call.

Pass 1 works on one file at a time from plain data (`KBContext`, path, bytes), so that files can be
linted in worker processes and their results cached per file.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..checkers.base import CheckContext
from ..config import DuplicateSettings, Settings
from ..infra import pool
from ..infra.files import FileProblem, read_regular_file
from ..infra.pool import cpu_count
from ..infra.resultcache import CacheUnusable, KBResultCache, record_text, result_of
from ..infra.spill import IssueSpill
from ..measures import EntryMeasures
from ..model.entry import Entry, ParseFailure, RawEntry, build_entry, parse
from ..model.facts import EntryFacts
from ..model.issue import Issue, fingerprint_of
from ..model.kbschema import KBSchema
from ..model.likeness import entry_date, sketch
from ..model.link import Link, PackedLinks
from ..model.plan import Plan, build_plan
from ..model.suppression import suppressions
from ..policy import UNCHANGED
from ..progress import Progress
from ..rules import RULES, Site
from ..rules import schema as schema_rules
from ..rules import structure as structure_rules
from ..workspace import KB, Workspace
from ..yamlread import Limits
from ..yamlread.lines import json_ready
from .caching import Caches
from .checks import Subject, run_bindings
from .pass_graph import GraphKB


@dataclass(slots=True)
class KBContext:
    """What pass 1 needs to know about a KB: its schema and plan, and the cross-KB links by source."""

    schema: KBSchema
    plan: Plan
    limits: Limits
    duplicates: DuplicateSettings | None = None  # None: entries are not compared with each other
    cross_by_source: dict[str, list[Link]] = field(default_factory=dict)
    # --base: each entry's status at the base revision (or policy.NEW / policy.UNCHANGED), by path
    previous: dict[str, str | None] | None = None

    def previous_status(self, path: str) -> tuple[object, bool]:
        """(the entry's status at --base, whether there is a --base)."""
        if self.previous is None:
            return None, False
        return self.previous.get(path, UNCHANGED), True


@dataclass(slots=True)
class FileResult:
    """Pass 1 of one file: the facts the later passes need, and its issues."""

    facts: EntryFacts
    issues: Sequence[Issue]  # none while they wait in the spill, or once the report holds them
    cross_sources: tuple[str, ...] = ()  # cross-kb-links sources this entry answered to
    spilled: int = -1  # the slot of its issues in the IssueSpill, when they are there
    record: str | None = None  # the result as the result cache stores it


def parse_failure(ctx: KBContext, path: str, relpath: str, message: str, line: int = 1, column: int = 1) -> FileResult:
    issue = RULES["parse_error"].issue(Site(ctx.schema.name, path), message, line=line, column=column)
    return FileResult(EntryFacts(ctx.schema.name, path, relpath, parsed=False, reported=True), [issue])


def lint_source(
    ctx: KBContext, path: str, relpath: str, data: bytes, *, located: bool = True, reported: bool = True
) -> FileResult:
    """Pass 1 for one file's bytes: never raises for any content. LOCATED: the file is where it
    lives in the KB (not a candidate from elsewhere)."""
    raw = parse(data, ctx.limits)
    if isinstance(raw, ParseFailure):
        result = parse_failure(ctx, path, relpath, raw.message, raw.line, raw.column)
        result.facts.reported = reported
        return result
    schema = ctx.schema
    entry, defaulted = build_entry(raw, schema, path, relpath)
    cross_sources = _add_cross_links(entry, ctx.cross_by_source)
    issues = structure_rules.check(entry, schema, defaulted)
    issues.extend(schema_rules.check(entry, schema, located=located))
    suppress, malformed = suppressions(raw)
    issues.extend(RULES["invalid_suppression"].issue(entry.site, m.message, line=m.line) for m in malformed)
    facts = EntryFacts(
        kb_name=schema.name,
        path=path,
        relpath=relpath,
        parsed=True,
        reported=reported,
        id=entry.id,
        id_line=entry.key_line("id") if "id" in raw.frontmatter else 1,
        type=entry.type,
        status=entry.status,
        aliases=tuple(entry.aliases),
        links=PackedLinks.of(entry.links),
        suppress=suppress,
        judgment_items=len(ctx.plan.judgment_bindings(entry.type)),
        sketch=_sketch(entry, ctx.duplicates),
    )
    subject = Subject(
        entry,
        facts,
        entry.site,
        CheckContext(schema=schema),
        EntryMeasures(entry, schema),
        entry.field_line,
        *ctx.previous_status(path),
    )
    issues.extend(run_bindings(ctx.plan.entry_bindings(entry.type), subject))
    return FileResult(facts, issues, cross_sources)


def _sketch(entry: Entry, duplicates: DuplicateSettings | None) -> bytes:
    """What the duplicate search keeps of ENTRY: nothing when entries are not compared or its type
    is not."""
    if duplicates is None or (duplicates.types and entry.type not in duplicates.types):
        return b""
    return sketch(entry.title or "", entry.body, entry_date(entry.raw.frontmatter), duplicates.min_words)


def _add_cross_links(entry: Entry, cross_by_source: dict[str, list[Link]]) -> tuple[str, ...]:
    """The links cross-kb-links.yaml declares from ENTRY (by id, stem or alias), added to its links;
    the names they were declared under."""
    found = []
    if cross_by_source:
        for key in dict.fromkeys((entry.id, entry.stem, *entry.aliases)):
            extra = cross_by_source.get(key)
            if extra:
                entry.links.extend(extra)
                found.append(key)
    return tuple(found)


def lint_file(ctx: KBContext, path: str, relpath: str) -> FileResult:
    """Pass 1 for the file at PATH (read only if it is a regular file within the size limit)."""
    try:
        data = read_regular_file(path, ctx.limits.max_file_bytes)
    except FileProblem as exc:
        return parse_failure(ctx, path, relpath, f"cannot read the file: {exc.reason}")
    return lint_source(ctx, path, relpath, data)


def read_raw(ctx: KBContext, facts: EntryFacts, data: bytes | None = None) -> RawEntry | None:
    """An entry's frontmatter and body read again after pass 1 (from DATA, a candidate's text,
    else from its file); None when it cannot be read now."""
    if data is None:
        try:
            data = read_regular_file(facts.path, ctx.limits.max_file_bytes)
        except FileProblem:
            return None
    raw = parse(data, ctx.limits)
    return None if isinstance(raw, ParseFailure) else raw


def read_entry(ctx: KBContext, facts: EntryFacts, data: bytes | None = None) -> Entry | None:
    """An entry read again after pass 1 (for the judge, and for plugin checkers of the graph)."""
    raw = read_raw(ctx, facts, data)
    return build_entry(raw, ctx.schema, facts.path, facts.relpath)[0] if raw is not None else None


def judged_entry(ctx: KBContext, facts: EntryFacts, data: bytes | None = None) -> dict[str, Any] | None:
    """An entry read again, as the judge is shown it: id, type, title, metadata and body."""
    entry = read_entry(ctx, facts, data)
    if entry is None:
        return None
    meta = {k: v for k, v in entry.metadata.items() if k not in ("id", "type", "title", "kblint")}
    return {"id": entry.id, "type": entry.type, "title": entry.title, "metadata": json_ready(meta), "body": entry.body}


# ---------------------------------------------------------------------------------------------
# Pass 1 over many files: in worker processes, and with what the caches and the spill need.


@dataclass(frozen=True, slots=True)
class Task:
    """One file for pass 1: the index of its KB's context, its path and KB-relative path, and
    why it will not be read, when the walk found out already (an unreadable directory)."""

    kb: int
    path: str
    relpath: str
    problem: str | None = None


_CHUNK = 128  # files a worker lints between two results
_PARALLEL_MIN = 400  # below this many files, starting workers costs more than it saves
# Pass-1 issues kept in memory up to this many (some 20 MB); the others wait in the IssueSpill
# while the graph pass holds every entry's facts.
HELD_ISSUES = 50_000


@dataclass(slots=True)
class PassOne:
    """Pass 1 for a run's files: FINGERPRINTS computes the issues' fingerprints and RECORDS the
    result cache's records where the work is shared, in the workers."""

    contexts: list[KBContext]
    jobs: int
    fingerprints: bool
    records: bool
    spill: IssueSpill
    room: int  # issues that may still be held in memory

    def run(self, tasks: list[Task], forced: bool) -> Iterator[tuple[Task, FileResult]]:
        """Each task with its result; a result's issues are held while there is room, else spilled.
        FORCED: the user asked for JOBS processes, however few the files."""
        jobs = self.jobs if forced or len(tasks) >= _PARALLEL_MIN else 1
        chunks = pool.chunks(tasks, jobs, _CHUNK, _CHUNK // 8)
        work: Callable[[Sequence[Task]], list[FileResult]] = self._lint_chunk
        for index, results in pool.in_processes(work, chunks, jobs):
            for task, result in zip(chunks[index], results, strict=True):
                _own_paths(task, result)
            self.hold_or_spill(results)
            yield from zip(chunks[index], results, strict=True)

    def _lint_chunk(self, chunk: Sequence[Task]) -> list[FileResult]:
        results = []
        for task in chunk:
            ctx = self.contexts[task.kb]
            if task.problem is not None:
                result = parse_failure(ctx, task.path, task.relpath, task.problem)
            else:
                result = lint_file(ctx, task.path, task.relpath)
            if self.fingerprints:
                for issue in result.issues:
                    issue.fingerprint = fingerprint_of(issue, ctx.schema.root)
            if self.records and not any(issue.rule == "checker_error" for issue in result.issues):
                # not kept: a checker that failed (a pattern past its time limit) is tried again next run
                result.record = record_text(result.facts, result.issues, result.cross_sources)
            results.append(result)
        return results

    def hold_or_spill(self, results: list[FileResult]) -> None:
        count = sum(len(r.issues) for r in results)
        if count <= self.room:
            self.room -= count
            return
        first = self.spill.put([r.issues for r in results], [r.facts.path for r in results])
        for offset, result in enumerate(results):
            result.issues = ()
            result.spilled = first + offset


def _own_paths(task: Task, result: FileResult) -> None:
    """A worker's result comes with copies of the file's path strings: the task's own take their
    place, so that a 100,000-entry run holds each path once."""
    facts = result.facts
    if facts.path is task.path or facts.path != task.path:
        return
    facts.path = task.path
    if facts.relpath == task.relpath:
        facts.relpath = task.relpath
    for issue in result.issues:
        if issue.path == task.path:
            issue.path = task.path


# ---------------------------------------------------------------------------------------------
# Pass 1 over a workspace


@dataclass(slots=True)
class KBRun:
    """One KB's pass-1 results, in the order of its files and then its candidates."""

    kb: KB
    ctx: KBContext
    results: list[FileResult]

    def graph_kb(self) -> GraphKB:
        matched = {s for r in self.results for s in r.cross_sources}
        kb = self.kb
        return GraphKB(
            name=kb.name,
            root=kb.root,
            facts=[r.facts for r in self.results],
            cross_links_path=kb.cross_links_path,
            unmatched_cross_sources=[(c.source, c.source_line) for c in kb.cross_links if c.source not in matched],
            cross_reported=kb.reported is None or kb.cross_links_path in kb.reported,
        )


def context_of(kb: KB, settings: Settings) -> KBContext:
    ctx = KBContext(
        schema=kb.schema,
        plan=build_plan(kb.schema),
        limits=settings.limits,
        duplicates=settings.duplicates if settings.duplicates.enabled else None,
    )
    for c in kb.cross_links:
        link = Link(
            target=c.target, relation=c.relation, kb=c.target_kb, line=c.target_line, origin=kb.cross_links_path
        )
        ctx.cross_by_source.setdefault(c.source, []).append(link)
    if settings.base is not None:
        from ..history import statuses_at

        ctx.previous = statuses_at(settings.base, kb.root, kb.files)
    return ctx


def _kb_caches(ws: Workspace, caches: Caches | None) -> list[KBResultCache | None]:
    if caches is None:
        return [None] * len(ws.kbs)
    found: list[KBResultCache | None] = []
    for kb in ws.kbs:
        try:
            found.append(KBResultCache(caches.cache_dir, caches.kb_keys[kb.root]) if caches.usable else None)
        except CacheUnusable as exc:
            caches.unusable(exc)
            found.append(None)
    return found


def _reused(kb_cache: KBResultCache | None, kb: KB, caches: Caches | None) -> dict[str, FileResult]:
    """The results of KB's unchanged files, from its result cache."""
    if kb_cache is None or caches is None:
        return {}
    found = {}
    for path, text in kb_cache.reuse({p: caches.stamps.get(p) for p in kb.files if p not in kb.problems}):
        try:
            facts, issues, cross = result_of(text)
        except (TypeError, ValueError, RecursionError):  # RecursionError: JSON nested past the stack
            kb_cache.reject(path)
            continue  # that file is linted again
        found[path] = FileResult(facts, issues, cross)
    if kb_cache.damaged:
        caches.damaged(kb_cache.path)
    return found


def run_all(
    ws: Workspace, settings: Settings, caches: Caches | None, spill: IssueSpill, progress: Progress
) -> list[KBRun]:
    """Pass 1 for every file of every KB: from the result cache where nothing changed, else linted
    (in worker processes when there are many)."""
    contexts = [context_of(kb, settings) for kb in ws.kbs]
    kb_caches = _kb_caches(ws, caches)
    # a report in these formats, a baseline and the caches keep every issue's fingerprint
    fingerprints = (
        any(kb_caches) or settings.format in ("json", "sarif") or bool(settings.baseline or settings.write_baseline)
    )
    driver = PassOne(contexts, settings.jobs or cpu_count(), fingerprints, any(kb_caches), spill, HELD_ISSUES)
    by_path: dict[str, FileResult] = {}
    tasks: list[Task] = []
    progress.phase("parsing", sum(len(kb.files) for kb in ws.kbs))
    done = [0] * len(ws.kbs)  # files of each KB linted or taken from the cache
    for k, kb in enumerate(ws.kbs):
        reused = _reused(kb_caches[k], kb, caches)
        results = list(reused.values())
        for start in range(0, len(results), _CHUNK):
            driver.hold_or_spill(results[start : start + _CHUNK])
        by_path.update(reused)
        done[k] = len(reused)
        progress.advance(len(reused))
        tasks.extend(Task(k, path, kb.relpath(path), kb.problems.get(path)) for path in kb.files if path not in reused)
    for task, result in driver.run(tasks, forced=settings.jobs is not None):
        by_path[task.path] = result
        done[task.kb] += 1
        kb = ws.kbs[task.kb]
        progress.advance(1, f"parsing {kb.name} ({done[task.kb]}/{len(kb.files)})" if progress.shown else None)
        kb_cache = kb_caches[task.kb]
        if kb_cache is not None and result.record is not None and task.problem is None:
            kb_cache.add(task.path, caches.stamps.get(task.path) if caches else None, result.record)
        result.record = None  # written, or not to be kept: the run goes on without its text
    for kb_cache in kb_caches:
        if kb_cache is not None:
            kb_cache.commit()
    return [_kb_run(kb, ctx, by_path) for kb, ctx in zip(ws.kbs, contexts, strict=True)]


def _kb_run(kb: KB, ctx: KBContext, by_path: dict[str, FileResult]) -> KBRun:
    results = []
    for path in kb.files:
        result = by_path.pop(path)
        result.facts.reported = kb.reported is None or path in kb.reported
        results.append(result)
    for cand in kb.candidates:
        if cand.data is None:
            results.append(parse_failure(ctx, cand.path, cand.relpath, f"cannot read the file: {cand.problem}"))
        else:
            results.append(lint_source(ctx, cand.path, cand.relpath, cand.data, located=cand.inside))
    return KBRun(kb, ctx, results)
