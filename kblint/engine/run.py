"""The engine: one run from settings to report. It only orchestrates the passes —

    pass 1  pass_entries   each entry file on its own (in worker processes, cached per file)
    pass 2  pass_graph     the link graph over every entry's facts, and the checks that need it
    pass 3  pass_judgment  the LLM judge
            scoring        the entries' and KBs' scores

— then applies suppressions, filters and baselines (filters) and builds the Report.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from .. import userpattern
from ..config import Settings, llm_spec
from ..infra import budget
from ..infra.spill import IssueSpill
from ..model.issue import DuplicateSummary, JudgmentSummary, Report, empty_counts, in_report_order
from ..progress import Progress
from ..workspace import Workspace
from . import caching, changes, filters, inputs, pass_duplicates, pass_entries, pass_graph, pass_judgment
from .assembly import Assembly
from .outcome import Outcome


def run(
    settings: Settings,
    stdin_data: bytes | None = None,
    progress: Progress | None = None,
    overlay: Mapping[str, bytes] | None = None,
) -> tuple[Report, list[str]]:
    """Lint what SETTINGS name: the report, and warnings for the user (PROGRESS is told how far
    the passes are). OVERLAY: bytes to lint in place of what files of the KBs hold now (by
    absolute path), as `--fix` checks its edits before writing them; such a run uses no cache."""
    progress = progress or Progress()
    filters.check_names(settings.select, settings.given_as("select"))
    filters.check_names(settings.ignore, settings.given_as("ignore"))
    filters.per_file_ignores(settings.per_file_ignores)  # its names are checked before the run
    userpattern.set_budget(settings.limits.regex_timeout)
    budget.set_seconds(settings.limits.plugin_timeout)
    kb_dir = settings.kb if settings.kb and os.path.isdir(settings.kb) else None
    ws = inputs.workspace(settings, kb_dir, stdin_data)
    if overlay:
        inputs.apply_overlay(ws, overlay)
    kb_name = inputs.kb_name(settings, kb_dir, ws)
    inputs.check_type(settings, ws)
    caches = caching.caches_for(ws, settings) if not overlay else None
    key = caching.run_key(ws, settings, kb_name, caches) if caches is not None else None
    outcome = caching.load_outcome(caches, key) if caches is not None and key is not None else None
    if outcome is None:
        outcome = _lint(ws, settings, kb_name, caches, progress)
        if caches is not None and key is not None and caches.usable:
            caching.save_outcome(caches, key, outcome)
    warnings = ws.warnings + (caches.warnings if caches is not None else [])
    if stdin_data is not None:
        warnings.extend(_kb_yaml_warnings(ws))
    return _report(outcome, settings, ws), warnings


def _kb_yaml_warnings(ws: Workspace) -> list[str]:
    """What a run of the whole KB reports on its kb.yaml (a broken rubric item, a misspelt key): the
    report of a candidate lists the candidate's issues only, and its pass would not say that the
    rubric it passed is enforced in part."""
    from ..model.plan import build_plan
    from ..report.text import issue_line
    from ..rules.config import config_errors

    return [
        f"{issue_line(issue, color=False)} (the KB's own, not counted in this entry's verdict)"
        for kb in ws.kbs
        for issue in config_errors(kb.schema, build_plan(kb.schema))
    ]


def _lint(
    ws: Workspace, settings: Settings, kb_name: str | None, caches: caching.Caches | None, progress: Progress
) -> Outcome:
    """Passes 1 to 3, the scores and the suppressions."""
    spill = IssueSpill()
    try:
        assembly, judged, probes = _passes(ws, settings, kb_name, caches, spill, progress)
        # The facts and the link graph are gone by now: the spilled issues take their memory.
        issues = spill.take(assembly.spilled)
        issues.extend(assembly.issues)
        assembly.issues.clear()
        hidden: dict[str, int] = {}
        issues = filters.apply_suppressions(issues, assembly.suppressed, hidden, assembly.elsewhere)
        return Outcome(
            kbs=assembly.reports,
            # sorted once, here: the run cache keeps them so, and a report keeps their order
            issues=in_report_order(issues, {kb.name: kb.root for kb in assembly.reports}),
            hidden=hidden,
            judgment=judged.summary,
            judgment_items=assembly.judgment_items,
            dry_run=judged.dry_run,
            unavailable=judged.unavailable,
            probes=probes,
            duplicates=_duplicate_summary(judged, settings),
        )
    finally:
        spill.close()


def _duplicate_summary(judged: pass_judgment.JudgmentResult, settings: Settings) -> DuplicateSummary:
    summary = judged.pairs.summary if judged.pairs is not None else DuplicateSummary()
    summary.enabled = settings.duplicates.enabled
    return summary


def _passes(
    ws: Workspace,
    settings: Settings,
    kb_name: str | None,
    caches: caching.Caches | None,
    spill: IssueSpill,
    progress: Progress,
) -> tuple[Assembly, pass_judgment.JudgmentResult, dict[tuple[str, str], bool]]:
    """The reported KBs after passes 1 to 3 and the scores, the judgment, and the probes of the
    graph pass (the pass-1 issues beyond what memory holds are still in SPILL)."""
    since = changes.restrict_to_changed(ws, settings.changed_since, settings) if settings.changed_since else None
    runs = pass_entries.run_all(ws, settings, caches, spill, progress)
    shard = filters.parse_shard(settings.shard) if settings.shard else None
    touched = changes.touched_names(runs, since) if since is not None else None
    reported = [r for r in runs if kb_name is None or r.kb.name == kb_name]
    first_shard = shard is None or shard[0] == 1  # the graph issues of every entry are shard 1's
    # Before the link graph is built: the memory the comparison takes is then the graph's to reuse.
    pairs = _pairs(runs, reported, settings, progress, shard)
    progress.phase("checking links")
    graph, graph_issues = pass_graph.analyse(
        [r.graph_kb() for r in runs], strict_links=settings.strict_links, touched=touched
    )
    assembly = Assembly(shard, judging=not settings.no_judgment and llm_spec(settings) is not None)
    if since is not None:
        rechecked = changes.linked_before(runs, since, graph)
        graph_issues.extend(pass_graph.orphans(graph, rechecked))
        assembly.rechecked = {f.path for f in rechecked}
    for r in reported:
        assembly.add_kb(r, graph)
    names = {r.kb.name for r in reported}
    (assembly.issues if first_shard else assembly.elsewhere).extend(i for i in graph_issues if i.kb_name in names)
    judged = _judgment(assembly, settings, progress, pairs)
    if judged.pairs is not None:
        assembly.issues.extend(judged.pairs.issues)
    assembly.pending.clear()  # judged: their facts are not needed any more
    assembly.issues.extend(judged.issues)
    for report in assembly.reports:
        report.coverage.judgment_evaluated = judged.evaluated(report.name)
        report.incomplete = judged.incomplete(report.name)
    assembly.score(reported)
    return assembly, judged, graph.probes


def _pairs(
    runs: list[pass_entries.KBRun],
    reported: list[pass_entries.KBRun],
    settings: Settings,
    progress: Progress,
    shard: tuple[int, int] | None,
) -> list[pass_duplicates.Pair]:
    """The alike entries of the reported KBs (of every KB, for the workspace scope) whose newer
    entry is this run's to report (its shard's, with --shard)."""
    if not settings.duplicates.enabled:
        return []
    progress.phase("comparing entries")
    names = {r.kb.name for r in reported}
    compared = runs if settings.duplicates.scope == "workspace" else reported
    pairs = [
        p
        for p in pass_duplicates.find(compared, settings.duplicates)
        if p.newer.facts.kb_name in names
        and (shard is None or filters.in_shard(p.newer.facts.kb_name, p.newer.facts.relpath, shard))
    ]
    pass_duplicates.forget_sketches(runs)
    return pairs


def _judgment(
    assembly: Assembly, settings: Settings, progress: Progress, pairs: list[pass_duplicates.Pair]
) -> pass_judgment.JudgmentResult:
    """Pass 3. Without an LLM (or with --no-judgment) the judgment items are counted as not
    evaluated, and the alike entries stay unclassified."""
    if not assembly.judging:
        return pass_judgment.not_run(assembly.judgment_checks, settings, pairs)
    pending = [p for p in assembly.pending if p.items]
    if not pending and not any(p.reported for p in pairs):
        config = pass_judgment.judge_config(settings)
        return pass_judgment.JudgmentResult(JudgmentSummary(enabled=True, reason=None, evaluator=config.evaluator))
    return pass_judgment.run_judgment(pending, settings, progress, pairs)


def _report(outcome: Outcome, settings: Settings, ws: Workspace) -> Report:
    flt = filters.IssueFilter(
        set(settings.select),
        set(settings.ignore),
        settings.type,
        min_severity=settings.min_severity,
        per_file=filters.per_file_ignores(settings.per_file_ignores),
        roots={kb.name: kb.root for kb in outcome.kbs},
    )
    kept = [i for i in outcome.issues if flt.keep(i)] if flt.active else outcome.issues
    hidden = dict(outcome.hidden)
    for name, count in flt.hidden.items():
        hidden[name] = hidden.get(name, 0) + count
    report = Report(
        kbs=outcome.kbs,
        issues=kept,
        hidden=hidden,
        fail_on=settings.fail_on,
        unreadable=[str(e) for e in ws.unreadable],
        judgment=outcome.judgment,
        judgment_items=outcome.judgment_items,
        dry_run=outcome.dry_run,
        duplicates=outcome.duplicates,
        shard=settings.shard,
        changed_since=settings.changed_since,
    )
    partial = bool(settings.shard or settings.changed_since)
    filters.apply_baseline(report, settings.write_baseline, settings.baseline, partial)
    by_kb = {kb.name: kb for kb in outcome.kbs}
    for kb_report in outcome.kbs:
        kb_report.counts = empty_counts()
    for issue in report.issues:
        by_kb[issue.kb_name or ""].counts[issue.severity] += 1
    if outcome.unavailable and settings.llm_required:
        report.fatal = f"--llm-required: the LLM is not reachable: {outcome.unavailable}"
    return report
