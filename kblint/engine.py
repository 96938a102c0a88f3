"""The engine: pass 1 streams entries (parse → structure, schema, entry-level checks) into issues
and compact EntryFacts; pass 2 runs the graph checks over the facts; then filters and the report.

Pass 1 works on one file at a time from plain data (`KBContext`, path, bytes), so it can run in
worker processes and be cached per file; nothing of an entry's body outlives its pass-1 call.
"""

from __future__ import annotations

import os
from dataclasses import field
from typing import Iterator

from . import graph
from .config import Settings
from .entry import Link, ParseFailure, build_entry, parse, suppressions
from .issue import SORT_KEY, Issue, KBReport, Report, fingerprint_in
from .checkers.core import CheckContext
from .checkers.registry import registry
from .kbschema import KBSchema
from .measures import EntryMeasures, FactsMeasures
from .plainclass import dataclass
from .policy import UNCHANGED, constraint_of
from .rubric import Binding, Plan, build_plan
from .rules import RULES, TIERS, schema as schema_rules, structure as structure_rules
from .rules.common import field_line
from .spill import IssueSpill
from .workspace import KB, UsageError, build_workspace


@dataclass(slots=True)
class KBContext:
    """What pass 1 needs to know about a KB: its schema and the cross-KB links by source entry."""

    schema: KBSchema
    plan: Plan
    cross_by_source: dict[str, list[Link]] = field(default_factory=dict)
    # --base: each entry's status at the base revision (or policy.NEW / policy.UNCHANGED), by path
    previous: dict[str, str | None] | None = None


@dataclass(slots=True)
class FileResult:
    """Pass 1 of one file: its issues and the facts the graph pass needs."""

    issues: list[Issue]  # empty while they wait in the spill
    facts: graph.EntryFacts
    cross_sources: tuple[str, ...] = ()  # cross-kb-links sources this entry answered to
    spilled: int = -1  # the number of its issues in the IssueSpill, if they are there


def lint_source(ctx: KBContext, path: str, relpath: str, data: bytes, *, located: bool = True,
                reported: bool = True) -> FileResult:
    """Pass 1 for one file: never raises for any content."""
    schema = ctx.schema
    raw = parse(data)
    if isinstance(raw, ParseFailure):
        spec = RULES["parse_error"]
        issue = Issue(rule="parse_error", severity=spec.severity, tier=spec.tier, message=raw.message,
                      kb_name=schema.name, entry_id=None, path=path, line=raw.line, column=raw.column)
        return FileResult([issue], graph.EntryFacts(kb_name=schema.name, path=path, relpath=relpath,
                                                    parsed=False, reported=reported))
    entry, defaulted = build_entry(raw, schema, path, relpath)
    cross_sources: list[str] = []
    if ctx.cross_by_source:
        for key in dict.fromkeys((entry.id, entry.stem, *entry.aliases)):
            extra = ctx.cross_by_source.get(key)
            if extra:
                entry.links.extend(extra)
                cross_sources.append(key)
    issues = structure_rules.check(entry, defaulted)
    issues.extend(schema_rules.check(entry, schema, located=located))
    facts = graph.EntryFacts(
        kb_name=schema.name, path=path, relpath=relpath, parsed=True, reported=reported, id=entry.id,
        id_line=entry.key_line("id") if "id" in raw.frontmatter else 1, type=entry.type, status=entry.status,
        aliases=tuple(entry.aliases), packed_links=graph.pack_links(entry.links), suppress=suppressions(raw),
    )
    facts.judgment_items = ctx.plan.judgment_count(entry.type)
    run_checkers(entry, ctx.plan.entry_bindings(entry.type), CheckContext(schema=schema), facts, issues,
                 measures=EntryMeasures(entry, schema), previous=ctx.previous, graph_pass=False)
    return FileResult(issues, facts, tuple(cross_sources))


def run_checkers(entry, bindings: list[Binding], context: CheckContext, facts: graph.EntryFacts,
                 issues: list[Issue], *, measures, previous: dict | None, graph_pass: bool) -> None:
    """Run the checker and policy items of one pass (Plan.entry_bindings or Plan.graph_bindings);
    record their outcomes. In pass 1 ENTRY is the full Entry; in the graph pass it is the entry's facts.
    """
    get = registry().get
    for b in bindings:
        if b.kind == "policy":
            _run_policy(entry, b, measures, previous, facts, issues)
            continue
        checker = get(b.checker)
        try:
            result = checker.func(entry, b.params, context)
        except Exception as exc:  # noqa: BLE001 - a failing checker is reported, the run goes on
            spec = RULES["checker_error"]
            issues.append(Issue(rule="checker_error", severity=spec.severity, tier=spec.tier,
                                message=f"checker '{b.checker}' ({checker.source}) raised "
                                        f"{type(exc).__name__}: {exc}",
                                kb_name=entry.kb_name, entry_id=entry.id, path=entry.path, rubric_item=b.text,
                                checker=b.checker, entry_type=entry.type))
            continue
        facts.score_total += b.weight
        if result is None:
            facts.score_passed += b.weight
            continue
        messages = _messages(result)
        if not messages:
            facts.score_passed += b.weight
            continue
        name = checker.field_for(b.params)
        line = field_line(entry, name) if name and not graph_pass else 1
        for message in messages:
            issues.append(Issue(rule="rubric_violation", severity=b.severity, tier="checker", message=message,
                                kb_name=entry.kb_name, entry_id=entry.id, path=entry.path, line=line,
                                field=name, rubric_item=b.text, checker=b.checker, entry_type=entry.type,
                                discriminator=b.id, item_id=b.id))


def _run_policy(entry, b: Binding, measures, previous: dict | None, facts: graph.EntryFacts,
                issues: list[Issue]) -> None:
    before = previous.get(entry.path, UNCHANGED) if previous is not None else None
    message = b.evaluate(measures, before, previous is not None)
    if message is None:
        return  # a gate that does not apply is no outcome
    facts.score_total += b.weight
    if not message:
        facts.score_passed += b.weight
        return
    name = _policy_field(constraint_of(b.parsed))
    line = field_line(entry, name) if name and hasattr(entry, "raw") else 1
    issues.append(Issue(rule="rubric_violation", severity=b.severity, tier="policy", message=message,
                        kb_name=entry.kb_name, entry_id=entry.id, path=entry.path, line=line, field=name,
                        rubric_item=b.text, checker="policy", policy=b.policy, entry_type=entry.type,
                        discriminator=b.id, item_id=b.id))


def _apply_baseline(report: Report, settings: Settings) -> None:
    from . import baseline
    from .report import display_path

    if settings.write_baseline:
        baseline.write(settings.write_baseline, [
            {"fingerprint": report.fingerprint(i), "path": display_path(i.path), "rule": i.rule,
             "checker": i.checker, "message": i.message} for i in report.issues])
    if settings.baseline:
        known = baseline.load(settings.baseline)
        prints = [(report.fingerprint(i), i) for i in report.issues]
        report.issues = [i for fp, i in prints if fp not in known]
        report.baselined = len(prints) - len(report.issues)
        current = {fp for fp, _ in prints}
        report.baseline_stale = sum(1 for fp in known if fp not in current)
        if report.baselined:
            report.hidden["baseline"] = report.baselined


def _needs_full_entry(bindings: list[Binding]) -> bool:
    """A plugin checker that needs the graph gets the whole entry, re-read (SPEC §11)."""
    reg = registry()
    for b in bindings:
        if b.kind == "checker":
            checker = reg.get(b.checker)
            if checker is not None and checker.needs_graph and checker.source != "core":
                return True
    return False


def read_entry(kb: KB, facts: graph.EntryFacts, data: bytes | None = None):
    """Read an entry again after pass 1 (for graph checkers of plugins and for the judge)."""
    if data is None:
        data = _read(facts.path)
    if data is None:
        return None
    raw = parse(data)
    if isinstance(raw, ParseFailure):
        return None
    entry, _ = build_entry(raw, kb.schema, facts.path, facts.relpath)
    return entry


def _policy_field(constraint) -> str | None:
    """The frontmatter key a policy's issue points at: its metadata field, or `tags`."""
    subject = getattr(constraint, "subject", None)
    if subject is None:
        return None
    if subject.kind == "metadata":
        return subject.name
    return "tags" if subject.kind == "tags" else None


def apply_suppressions(issues: list[Issue], suppressed_by: dict, hidden: dict[str, int]) -> list[Issue]:
    """Drop the issues an entry's suppressions name; report suppressions that suppressed nothing."""
    if not suppressed_by:
        return issues
    used: set[tuple[str, str]] = set()
    kept = []
    for issue in issues:
        entry = suppressed_by.get(issue.path) if issue.entry_id is not None else None
        if entry is not None:
            names = {issue.rule, issue.checker, issue.item_id}
            hit = [name for name, _ in entry[0].suppress if name in names]
            if hit:
                used.update((issue.path, name) for name in hit)
                hidden["suppressions"] = hidden.get("suppressions", 0) + 1
                continue
        kept.append(issue)
    spec = RULES["unused_suppression"]
    for path, (facts, bindings) in suppressed_by.items():
        ran = _names_that_ran(bindings)
        for name, line in facts.suppress:
            if (path, name) in used:
                continue
            if name in ran:
                message = f"Suppression of '{name}' suppressed nothing"
            elif name in RULES or name in registry().checkers or any(b.id == name for b in bindings):
                continue  # it did not run on this entry (e.g. the judgment tier without an LLM)
            else:
                message = f"Suppression names '{name}', which is no rule, checker or rubric item id here"
            kept.append(Issue(rule="unused_suppression", severity=spec.severity, tier=spec.tier, message=message,
                              kb_name=facts.kb_name, entry_id=facts.id, path=path, line=line, field="kblint",
                              discriminator=name, entry_type=facts.type))
    return kept


def _names_that_ran(bindings: list[Binding]) -> set[str]:
    ran = {name for name, rule in RULES.items() if rule.tier in ("structure", "schema")}
    for b in bindings:
        if b.kind in ("checker", "policy"):
            ran.update({"rubric_violation", b.checker or "policy", b.id})
    return ran


def _messages(result) -> list[str]:
    if result is None:
        return []
    if isinstance(result, str):
        return [result]
    if isinstance(result, Issue):
        return [result.message]
    return [m for item in result for m in _messages(item)]


def _context(kb: KB) -> KBContext:
    ctx = KBContext(schema=kb.schema, plan=build_plan(kb.schema))
    for link in kb.cross_links:
        ctx.cross_by_source.setdefault(link.source, []).append(
            Link(target=link.target, relation=link.relation, kb=link.target_kb, line=link.line,
                 origin=kb.cross_links_path))
    return ctx


def _config_issues(kb: KB, plan: Plan) -> list[Issue]:
    spec = RULES["config_error"]
    issues = []
    for b in plan.broken():
        issues.append(Issue(rule="config_error", severity=spec.severity, tier=spec.tier,
                            message=f"rubric item {b.text!r} is not enforced: {b.reason}", kb_name=kb.name,
                            entry_id=None, path=kb.schema.kb_yaml or kb.root, line=max(b.line, 1),
                            rubric_item=b.text, discriminator=b.id))
    for problem in kb.schema.problems:
        issues.append(Issue(rule="config_error", severity=spec.severity, tier=spec.tier, message=problem.message,
                            kb_name=kb.name, entry_id=None, path=problem.path or kb.schema.kb_yaml or kb.root,
                            line=problem.line, field=problem.field, discriminator=problem.message))
    return issues


def _read(path: str) -> bytes | None:
    """The bytes of the file at PATH, None when it cannot be read. Read by file descriptor: a
    file object (its raw file, its buffer) costs more to make than reading an entry takes."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        data = os.read(fd, _READ_SIZE)
        more = os.read(fd, _READ_SIZE) if data else b""
        if not more:
            return data
        parts = [data, more]
        while more:
            more = os.read(fd, _READ_SIZE)
            parts.append(more)
        return b"".join(parts)
    except OSError:
        return None
    finally:
        os.close(fd)


_READ_SIZE = 1 << 16


@dataclass(slots=True)
class _KBRun:
    """One KB's pass-1 results, with the plan they were linted by."""

    kb: KB
    plan: Plan
    results: list[FileResult]
    previous: dict | None = None


def _lint_file(ctx: KBContext, path: str, relpath: str) -> FileResult:
    data = _read(path)
    if data is None:
        spec = RULES["parse_error"]
        issue = Issue(rule="parse_error", severity=spec.severity, tier=spec.tier, message="cannot read the file",
                      kb_name=ctx.schema.name, path=path)
        return FileResult([issue], graph.EntryFacts(kb_name=ctx.schema.name, path=path, relpath=relpath,
                                                    parsed=False, reported=True))
    return lint_source(ctx, path, relpath, data)


_CHUNK = 128
_PARALLEL_MIN = 400  # below this many files, starting workers costs more than it saves
# Pass-1 issues kept in their results, as objects, up to this many (some 20 MB); the others wait
# in an IssueSpill while the graph pass holds every entry's facts.
_HELD_ISSUES = 50_000


def _lint_files(contexts: list[KBContext], tasks: list[tuple[int, str, str]], jobs: int, forced: bool,
                as_json: bool, fingerprints: bool,
                spill: IssueSpill) -> Iterator[tuple[int, FileResult, str | None, str | None]]:
    """Pass 1 for TASKS (context index, path, KB-relative path), in no particular order: each
    task's number, its result, and when AS_JSON its issues and facts as JSON for the result cache.
    A result keeps its issues while the run has found fewer than _HELD_ISSUES; the others wait in
    SPILL. With JOBS > 1, in JOBS processes (parallel.spread). With FINGERPRINTS, the issues'
    fingerprints are computed here, where the work is shared."""
    from .resultcache import facts_record, from_facts_record, issues_record, record_json
    from .spill import issues_from_rows, pack_chunk, unpack_chunk

    chunks = range(0, len(tasks), _CHUNK)
    room = _HELD_ISSUES

    def lint(n: int) -> list[FileResult]:
        results = []
        for k, path, relpath in tasks[chunks[n]:chunks[n] + _CHUNK]:
            result = _lint_file(contexts[k], path, relpath)
            if fingerprints:
                root = contexts[k].schema.root
                for issue in result.issues:
                    issue.stored_fingerprint = fingerprint_in(issue, root)
            results.append(result)
        return results

    def here(n: int):
        """(results, and when AS_JSON their issue records and the issues and facts of each as JSON)."""
        results = lint(n)
        if not as_json:
            return results, None, None
        rows = [issues_record(r.issues) for r in results]
        return results, rows, [(record_json(i), record_json(facts_record(r))) for i, r in zip(rows, results)]

    def there(n: int):
        """(facts records, (their issues pickled together, how many), and the JSON of here())."""
        results = lint(n)
        rows = [issues_record(r.issues) for r in results]
        facts = [facts_record(r) for r in results]
        texts = [(record_json(i), record_json(f)) for i, f in zip(rows, facts)] if as_json else None
        return facts, (pack_chunk(rows), sum(map(len, rows))), texts

    def received(n: int, part, remote: bool):
        nonlocal room
        results, issues, texts = part
        rows = None
        if remote:
            results = [from_facts_record(f) for f in results]
            chunk, count = issues
        else:
            rows, chunk, count = issues, None, sum(len(r.issues) for r in results)
        if count <= room:  # held: taken in here, while the work of pass 1 is shared
            room -= count
            if remote:
                for result, entry_rows in zip(results, unpack_chunk(chunk)):
                    result.issues = issues_from_rows(entry_rows)
        else:
            if chunk is None:  # records made for the result cache serve here too
                chunk = pack_chunk(rows if rows is not None else [issues_record(r.issues) for r in results])
            first_slot = spill.put_chunk(chunk, len(results))
            for offset, result in enumerate(results):
                result.issues = []
                result.spilled = first_slot + offset
        for offset, result in enumerate(results):
            issues_json, facts_json = texts[offset] if texts is not None else (None, None)
            yield chunks[n] + offset, result, issues_json, facts_json

    parallel = jobs > 1 and len(chunks) > 1 and (len(tasks) >= _PARALLEL_MIN or forced)
    if parallel and hasattr(os, "fork"):
        from .parallel import spread

        for n, part, remote in spread(len(chunks), min(jobs, len(chunks)) - 1, here, there):
            yield from received(n, part, remote)
        return
    for n in range(len(chunks)):
        yield from received(n, here(n), False)


@dataclass(slots=True)
class CacheInputs:
    """What the caches are keyed on, found once per run: each file's stamp and each KB's key."""

    cache_dir: str
    stamps: dict[str, tuple[int, int] | None]
    kb_keys: dict[str, str]  # KB root → resultcache.kb_key


def cache_inputs(ws, settings: Settings) -> CacheInputs | None:
    """None when results are not cached: --no-cache, or --base (results then depend on git history)."""
    if settings.no_cache or not settings.cache_dir or settings.base is not None:
        return None
    from .resultcache import kb_key, stamp

    return CacheInputs(
        cache_dir=settings.cache_dir,
        stamps={path: stamp(path) for kb in ws.kbs for path in kb.files},
        kb_keys={kb.root: kb_key(kb.root, kb.schema.kb_yaml, kb.cross_links_path, registry().plugins,
                                 settings.config_file) for kb in ws.kbs})


def pass_one(kbs: list[KB], settings: Settings, cached: CacheInputs | None, spill: IssueSpill) -> list[_KBRun]:
    """Pass 1 for every file of every KB: from the result cache where nothing changed, else linted
    (in worker processes when there are many). The issues of files taken from the cache, and those
    beyond what the results keep (_lint_files), go to SPILL."""
    from .resultcache import KBResultCache

    stamps = cached.stamps if cached is not None else {}
    contexts = []
    caches = []
    by_path: dict[str, FileResult] = {}
    tasks: list[tuple[int, str, str]] = []
    for k, kb in enumerate(kbs):
        ctx = _context(kb)
        if settings.base is not None:
            from .history import statuses_at

            ctx.previous = statuses_at(settings.base, kb.root, kb.files)
        contexts.append(ctx)
        cache = KBResultCache(cached.cache_dir, cached.kb_keys[kb.root]) if cached is not None else None
        caches.append(cache)
        if cache is not None:
            by_path.update(cache.reuse({p: stamps.get(p) for p in kb.files}, spill))
        tasks.extend((k, path, kb.relpath(path)) for path in kb.files if path not in by_path)
    jobs = settings.jobs or os.cpu_count() or 1
    as_json = any(c is not None for c in caches)
    # a report in these formats, a baseline and the caches keep every issue's fingerprint
    fingerprints = as_json or settings.format in ("json", "sarif") or bool(settings.baseline or settings.write_baseline)
    for n, result, issues_text, facts_text in _lint_files(contexts, tasks, jobs, forced=settings.jobs is not None,
                                                          as_json=as_json, fingerprints=fingerprints, spill=spill):
        k, path, _ = tasks[n]
        by_path[path] = result
        if caches[k] is not None:
            caches[k].add(path, stamps.get(path), issues_text, facts_text)
    for cache in caches:
        if cache is not None:
            cache.commit()
    runs = []
    for kb, ctx in zip(kbs, contexts):
        results = []
        for path in kb.files:
            result = by_path.pop(path)
            result.facts.reported = kb.reported is None or path in kb.reported
            results.append(result)
        for cand in kb.candidates:
            results.append(lint_source(ctx, cand.path, cand.relpath, cand.data, located=cand.inside,
                                       reported=True))
        runs.append(_KBRun(kb, ctx.plan, results, ctx.previous))
    return runs


def _check_unique_names(kbs: list[KB]) -> None:
    """Cross-KB links name KBs: two KBs of one name in a run would make them ambiguous."""
    seen: dict[str, KB] = {}
    for kb in kbs:
        other = seen.setdefault(kb.name, kb)
        if other is not kb:
            from .report import display_path

            raise UsageError(f"two KBs are named '{kb.name}': {display_path(other.root)} and {display_path(kb.root)}; "
                             "give one of them another `name:` in its kb.yaml")


def parse_shard(text: str) -> tuple[int, int]:
    try:
        k, n = (int(part) for part in text.split("/"))
    except ValueError:
        raise UsageError(f"--shard {text}: expected K/N, e.g. 1/4") from None
    if not (n >= 1 and 1 <= k <= n):
        raise UsageError(f"--shard {text}: K must be between 1 and N")
    return k, n


def in_shard(kb_name: str, relpath: str, shard: tuple[int, int]) -> bool:
    """Whether an entry belongs to shard K of N: a stable hash of its KB and path."""
    import hashlib

    digest = hashlib.sha1(f"{kb_name}\0{relpath}".encode("utf-8", "surrogateescape")).digest()
    return int.from_bytes(digest[:8], "big") % shard[1] == shard[0] - 1


class IssueFilter:
    """--select / --ignore (rule, tier or checker names) and --type; counts what each hid."""

    def __init__(self, select: list[str], ignore: list[str], type_name: str | None):
        self.select = set(select)
        self.ignore = set(ignore)
        self.type_name = type_name
        self.hidden: dict[str, int] = {}
        self.active = bool(self.select or self.ignore or type_name is not None)

    @staticmethod
    def _names(issue: Issue) -> set[str]:
        names = {issue.rule, issue.tier}
        if issue.checker:
            names.add(issue.checker)
        return names

    def keep(self, issue: Issue) -> bool:
        if self.type_name is not None and issue.entry_id is not None and issue.entry_type != self.type_name:
            return self._hide("--type")
        names = self._names(issue)
        if self.select and not names & self.select:
            return self._hide("--select")
        if self.ignore and names & self.ignore:
            return self._hide("--ignore")
        return True

    def _hide(self, name: str) -> bool:
        self.hidden[name] = self.hidden.get(name, 0) + 1
        return False


def check_names(names: list[str], option: str) -> None:
    known = set(RULES) | set(TIERS) | set(registry().names())
    for name in names:
        if name not in known:
            import difflib

            near = difflib.get_close_matches(name, sorted(known), n=1)
            hint = f"; did you mean '{near[0]}'?" if near else ""
            raise UsageError(f"{option}: unknown rule, tier or checker '{name}'{hint}")


def tune_collector() -> None:
    """For a process that runs one lint. A run makes millions of small objects and next to no
    reference cycles, and the main process keeps every entry's facts until the graph pass: with the
    default thresholds, the cyclic collector rescans them again and again, about a tenth of a cold
    run. What exists before the run (modules, the plan) is frozen out of its scans altogether."""
    import gc

    gc.freeze()
    gc.set_threshold(50_000, 20, 100)


def run(settings: Settings, stdin_data: bytes | None = None) -> Report:
    check_names(settings.select, "--select")
    check_names(settings.ignore, "--ignore")
    kb_dir = None
    kb_name = None
    if settings.kb:
        if os.path.isdir(settings.kb):
            kb_dir = settings.kb
        else:
            kb_name = settings.kb
    paths = settings.paths
    if kb_dir is not None and not paths and stdin_data is None:
        paths = [kb_dir]  # `--kb DIR` alone lints that KB
    ws = build_workspace(paths, kb_dir=kb_dir, stdin_data=stdin_data, stdin_path=settings.stdin_path,
                         exclude=tuple(settings.exclude), respect_gitignore=settings.respect_gitignore)
    _check_unique_names(ws.kbs)
    if kb_dir is not None:
        kb_name = next((kb.name for kb in ws.kbs if kb.root == os.path.abspath(kb_dir)), None)
    if kb_name is not None and not any(kb.name == kb_name for kb in ws.kbs):
        import difflib

        names = sorted(kb.name for kb in ws.kbs)
        near = difflib.get_close_matches(kb_name, names, n=1)
        hint = f"; did you mean '{near[0]}'?" if near else f" (KBs found: {', '.join(names) or 'none'})"
        raise UsageError(f"--kb {kb_name}: no such KB in this run{hint}")
    if settings.type is not None:
        known = {t for kb in ws.kbs for t in kb.schema.types}
        if settings.type not in known:
            import difflib

            near = difflib.get_close_matches(settings.type, sorted(known), n=1)
            hint = f"; did you mean '{near[0]}'?" if near else ""
            raise UsageError(f"--type {settings.type}: no KB in this run has that type{hint}")

    cached = cache_inputs(ws, settings)
    memo = _RunMemo.for_run(ws, settings, kb_name, cached) if cached is not None else None
    outcome = memo.load() if memo is not None else None
    if outcome is None:
        outcome = _lint(ws, settings, kb_name, cached)
        if memo is not None:
            memo.save(outcome)
    return _report(outcome, settings, ws)


@dataclass(slots=True)
class _Outcome:
    """What linting found, before --select/--ignore/--type, baselines and counts."""

    kbs: list[KBReport]
    issues: list[Issue]  # suppressions applied
    hidden: dict[str, int]
    judgment: dict
    judgment_items: int
    dry_run: list | None = None
    unavailable: str | None = None  # the LLM could not be reached (or none is configured)
    probes: dict[str, bool] = field(default_factory=dict)  # non-entry files links named: do they exist


def _report(outcome: _Outcome, settings: Settings, ws) -> Report:
    flt = IssueFilter(settings.select, settings.ignore, settings.type)
    kept = [i for i in outcome.issues if flt.keep(i)] if flt.active else list(outcome.issues)
    kept.sort(key=SORT_KEY)
    hidden = dict(outcome.hidden)
    for name, count in flt.hidden.items():
        hidden[name] = hidden.get(name, 0) + count
    report = Report(kbs=outcome.kbs, issues=kept, hidden=hidden, fail_on=settings.fail_on,
                    unreadable=[str(e) for e in ws.unreadable])
    _apply_baseline(report, settings)
    by_kb = {kb.name: kb for kb in outcome.kbs}
    for kb_report in outcome.kbs:
        kb_report.counts = {"error": 0, "warning": 0, "info": 0}
    for issue in report.issues:
        by_kb[issue.kb_name].counts[issue.severity] += 1
    report.judgment = outcome.judgment
    report.judgment_items = outcome.judgment_items
    report.dry_run = outcome.dry_run
    if outcome.unavailable and settings.llm_required:
        report.fatal = f"--llm-required: the LLM is not reachable: {outcome.unavailable}"
    return report


class _RunMemo:
    """The outcome of a run in which nothing changed, taken from the run cache (resultcache)."""

    def __init__(self, cache_dir: str, key: str):
        self.cache_dir = cache_dir
        self.key = key

    @classmethod
    def for_run(cls, ws, settings: Settings, kb_name: str | None, cached: CacheInputs) -> "_RunMemo | None":
        """The memo of this run, or None when its outcome depends on more than its files and
        settings (git history, standard input, an LLM)."""
        from .judgment import llm_spec
        from .resultcache import run_key

        if (settings.changed_since or settings.llm_required or settings.dry_run or ws.unreadable
                or any(kb.candidates for kb in ws.kbs) or (llm_spec(settings) is not None and not settings.no_judgment)):
            return None
        shape = {"kb": kb_name, "strict_links": settings.strict_links, "shard": settings.shard,
                 "no_judgment": settings.no_judgment,
                 "reported": [sorted(kb.reported) if kb.reported is not None else None for kb in ws.kbs]}
        key = run_key([cached.kb_keys[kb.root] for kb in ws.kbs], list(cached.stamps.items()), shape)
        return cls(cached.cache_dir, key)

    def load(self) -> _Outcome | None:
        from .resultcache import load_run

        found = load_run(self.cache_dir, self.key)
        if found is None:
            return None
        data, issues = found
        try:
            probes = dict(data["probes"])
            if any(os.path.isfile(path) != exists for path, exists in probes.items()):
                return None  # a file a link names appeared or went away
            kbs = [KBReport(name=k["name"], root=k["root"], files=k["files"], entries=k["entries"],
                            paths=k["paths"], score=k["score"], coverage=k["coverage"]) for k in data["kbs"]]
            return _Outcome(kbs=kbs, issues=issues, hidden=data["hidden"], judgment=data["judgment"],
                            judgment_items=data["judgment_items"], probes=probes)
        except (KeyError, TypeError, ValueError):
            return None

    def save(self, outcome: _Outcome) -> None:
        from .resultcache import save_run

        fingerprints = Report(kbs=outcome.kbs, issues=[])
        for issue in outcome.issues:
            fingerprints.fingerprint(issue)
        save_run(self.cache_dir, self.key, {
            "kbs": [{"name": k.name, "root": k.root, "files": k.files, "entries": k.entries, "paths": k.paths,
                     "score": k.score, "coverage": k.coverage} for k in outcome.kbs],
            "hidden": outcome.hidden, "judgment": outcome.judgment, "judgment_items": outcome.judgment_items,
            "probes": sorted(outcome.probes.items())}, outcome.issues)


def _lint(ws, settings: Settings, kb_name: str | None, cached: CacheInputs | None) -> _Outcome:
    """Passes 1 to 3, the scores and the suppressions."""
    spill = IssueSpill()
    try:
        outcome, wanted, suppressed_by = _passes(ws, settings, kb_name, cached, spill)
        # The facts and the graph are gone now: the pass-1 issues that waited in the spill come back.
        issues = spill.take(wanted)
        issues.extend(outcome.issues)
        outcome.issues = apply_suppressions(issues, suppressed_by, outcome.hidden)
        return outcome
    finally:
        spill.close()


def _passes(ws, settings: Settings, kb_name: str | None, cached: CacheInputs | None,
            spill: IssueSpill) -> tuple[_Outcome, list[int], dict]:
    """Passes 1 to 3 and the scores: the outcome without the spilled pass-1 issues, the spill
    numbers of those to report, and the entries with suppressions."""
    deleted_names: set[tuple[str, str]] = set()
    if settings.changed_since:
        from .history import changed_since

        for kb in ws.kbs:
            changed, deleted = changed_since(settings.changed_since, kb.root)
            kb.reported = {p for p in kb.files if p in changed and (kb.reported is None or p in kb.reported)}
            deleted_names.update((kb.name, os.path.basename(p)[:-3].casefold()) for p in deleted if p.endswith(".md"))

    shard = parse_shard(settings.shard) if settings.shard else None
    runs = pass_one(ws.kbs, settings, cached, spill)
    outside_shard: set[str] = set()
    if shard is not None:
        for r in runs:
            outside_shard.update(res.facts.path for res in r.results
                                 if not in_shard(r.kb.name, res.facts.relpath, shard))

    graph_kbs = []
    for r in runs:
        matched = {s for res in r.results for s in res.cross_sources}
        graph_kbs.append(graph.GraphKB(
            name=r.kb.name, root=r.kb.root, facts=[res.facts for res in r.results],
            cross_links_path=r.kb.cross_links_path,
            unmatched_cross_sources=[(c.source, c.line) for c in r.kb.cross_links if c.source not in matched],
            cross_reported=r.kb.reported is None,
        ))
    touched = None
    if settings.changed_since:
        touched = set(deleted_names)
        for gkb in graph_kbs:
            for facts in gkb.facts:
                if facts.reported:
                    touched.update((gkb.name, n.casefold()) for n in (facts.id, facts.stem, *facts.aliases) if n)
    graph_result = graph.analyse(graph_kbs, strict_links=settings.strict_links, touched=touched)

    issues: list[Issue] = []
    kb_reports: list[KBReport] = []
    by_kb: dict[str, KBReport] = {}
    judgment_items = 0
    suppressed_by: dict[str, tuple[graph.EntryFacts, list[Binding]]] = {}
    wanted: list[int] = []
    hidden: dict[str, int] = {}
    reported_runs = [r for r in runs if kb_name is None or r.kb.name == kb_name]

    # pass 2 (continued): the checks that need the graph, on each reported entry
    for r in reported_runs:
        kb = r.kb
        report = KBReport(name=kb.name, root=kb.root)
        kb_reports.append(report)
        by_kb[kb.name] = report
        judgment_items += r.plan.totals()["judgment"]
        graph_context = CheckContext(schema=kb.schema, inlinks=graph_result.inlinks, graph=graph_result)
        candidates = {c.path: c.data for c in kb.candidates}
        for res in r.results:
            facts = res.facts
            if not facts.reported:
                continue
            if facts.path in outside_shard:
                # still in the graph, but its own checks are another shard's to report
                continue
            report.files += 1
            report.paths.append(facts.path)
            issues.extend(res.issues)
            if res.spilled >= 0:
                wanted.append(res.spilled)
            if not facts.parsed:
                continue
            report.entries += 1
            if facts.suppress:
                suppressed_by[facts.path] = (facts, r.plan.for_type(facts.type))
            bindings = r.plan.graph_bindings(facts.type)
            if not bindings:
                continue
            subject = facts
            if _needs_full_entry(bindings):
                subject = read_entry(kb, facts, candidates.get(facts.path)) or facts
            run_checkers(subject, bindings, graph_context, facts, issues,
                         measures=FactsMeasures(facts, graph_result), previous=r.previous, graph_pass=True)
        if kb.reported is None and (shard is None or shard[0] == 1):
            issues.extend(_config_issues(kb, r.plan))
    if shard is None or shard[0] == 1:  # graph issues of every entry are shard 1's
        issues.extend(i for i in graph_result.issues if i.kb_name in by_kb)

    # pass 3: judgment
    judgment_block, dry_rows, unavailable = _judgment(reported_runs, settings, issues, outside_shard)
    for report in kb_reports:
        report.coverage = {**next(r.plan for r in reported_runs if r.kb.name == report.name).totals(),
                           "judgment_evaluated": bool(judgment_block["enabled"])}

    # scores (SPEC §5.4), once every tier has given its outcomes
    for r in reported_runs:
        scores = []
        threshold = r.kb.schema.pass_threshold
        for res in r.results:
            facts = res.facts
            if not (facts.reported and facts.parsed) or facts.path in outside_shard:
                continue
            scores.append(facts.score)
            if threshold is not None and facts.score < threshold:
                spec = RULES["score_below_threshold"]
                issues.append(Issue(rule="score_below_threshold", severity=spec.severity, tier=spec.tier,
                                    message=f"Entry '{facts.id}' scores {facts.score:.2f}, below the KB's "
                                            f"pass_threshold {threshold:.2f}",
                                    kb_name=r.kb.name, entry_id=facts.id, path=facts.path, entry_type=facts.type,
                                    discriminator="score"))
        by_kb[r.kb.name].score = round(sum(scores) / len(scores), 4) if scores else None

    outcome = _Outcome(kbs=kb_reports, issues=issues, hidden=hidden, judgment=judgment_block,
                       judgment_items=judgment_items, dry_run=dry_rows, unavailable=unavailable,
                       probes=graph_result.probes)
    return outcome, wanted, suppressed_by


def _judgment(runs: list[_KBRun], settings: Settings, issues: list[Issue],
              outside_shard: set[str]) -> tuple[dict, list | None, str | None]:
    """Pass 3. Without an LLM (or with --no-judgment) the judgment items are counted as not evaluated."""
    from .judgment import Pending, llm_spec, run_judgment

    wanted = llm_spec(settings) is not None and not settings.no_judgment
    pending = []
    checks = 0
    for r in runs:
        candidates = {c.path: c.data for c in r.kb.candidates} if wanted else {}
        for res in r.results:
            facts = res.facts
            if facts.reported and facts.parsed and facts.judgment_items and facts.path not in outside_shard:
                checks += facts.judgment_items
                if wanted:
                    items = [b for b in r.plan.for_type(facts.type) if b.kind == "judgment"]
                    pending.append(Pending(r.kb, facts, items, candidates.get(facts.path)))
    block = {"enabled": False, "reason": "no LLM configured", "evaluator": None, "calls": 0, "cache_hits": 0,
             "prompt_tokens": 0, "completion_tokens": 0, "not_evaluated": checks}
    if settings.no_judgment:
        block["reason"] = "judgment tier disabled (--no-judgment)"
        return block, None, None
    if llm_spec(settings) is None:
        if settings.llm_required:
            block["reason"] = "no LLM configured"
            return block, None, "no LLM configured (use --llm PROVIDER:MODEL or KBLINT_LLM)"
        return block, None, None
    if not pending:
        from .judgment import make_config

        block.update(enabled=True, reason=None, evaluator=make_config(settings).evaluator, not_evaluated=0)
        return block, None, None
    result = run_judgment(pending, settings)
    issues.extend(result.issues)
    return result.block, result.dry_run, result.unavailable
