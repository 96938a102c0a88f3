"""The text report: `path:line:col: severity rule message [checker-or-item]`, then totals (SPEC §9)."""

from __future__ import annotations

from ..model.issue import SEVERITY_RANK, Issue, KBReport, Report
from ..paths import display_path, printable
from .words import plural

_COLORS = {"error": "\x1b[31m", "warning": "\x1b[33m", "info": "\x1b[36m"}
_BOLD = "\x1b[1m"
_DIM = "\x1b[2m"
_RESET = "\x1b[0m"


def issue_line(issue: Issue, color: bool) -> str:
    where = f"{display_path(issue.path)}:{issue.line}:{issue.column}:"
    # a config_error (or a finding on the rubric) already quotes its item; a judgment issue names the item it is about
    tag = issue.checker or (issue.rubric_item if issue.tier not in ("config", "rubric") else None)
    suffix = f" [{printable(tag)}]" if tag else ""
    fix = " [*]" if issue.fixable else ""  # as ruff marks what --fix fixes
    message = issue.message + (f' (evidence: "{printable(issue.evidence)}")' if issue.evidence else "")
    if not color:
        return f"{where} {issue.severity} {issue.rule}{fix} {message}{suffix}"
    sev = f"{_COLORS[issue.severity]}{issue.severity}{_RESET}"
    return f"{_BOLD}{where}{_RESET} {sev} {_DIM}{issue.rule}{_RESET}{fix} {message}{_DIM}{suffix}{_RESET}"


def counts_text(counts: dict[str, int]) -> str:
    return ", ".join((plural(counts["error"], "error"), plural(counts["warning"], "warning"), f"{counts['info']} info"))


def render(report: Report, *, color: bool = False, statistics: bool = False) -> str:
    lines: list[str] = []
    previous = None
    for issue in report.issues:
        if previous is not None and issue.path != previous:
            lines.append("")
        previous = issue.path
        lines.append(issue_line(issue, color))
    if report.issues:
        lines.append("")
    lines.extend(summary_lines(report, statistics=statistics))
    if statistics:
        lines.extend(statistics_lines(report))
    return "\n".join(lines) + "\n"


def _entries(n: int) -> str:
    return plural(n, "entry", "entries")


TOP_RULES = 5  # rules the summary names; --statistics lists them all


def summary_lines(report: Report, *, statistics: bool = False) -> list[str]:
    """What to fix first: the problems that stopped checking, the counts and the top rules; then
    per-KB totals, coverage, judgment, and what filters and the baseline hid."""
    lines = problem_lines(report)
    if report.issues:
        lines.append(f"{plural(len(report.issues), 'issue')}: {counts_text(report.counts)}")
        lines.extend(top_rule_lines(report, statistics=statistics))
        fixable = sum(1 for issue in report.issues if issue.fixable)
        if fixable:
            lines.append(f"  [*] {fixable} fixable with --fix (--diff shows the changes first)")
    part = f", shard {report.shard}" if report.shard else ""  # the files the run lints, when not all
    if report.changed_since:
        part += f", changed since {printable(report.changed_since)}"
    for kb in report.kbs:
        score = f", score {kb.score:.2f}" if kb.score is not None else ""
        if kb.incomplete:
            score = f", score incomplete: {kb.incomplete}"
        lines.append(
            f"{kb.name} ({display_path(kb.root)}{part}): {plural(kb.files, 'file')}, "
            f"{_entries(kb.entries)}: {counts_text(kb.counts)}{score}"
        )
    if len(report.kbs) > 1 or report.unreadable:
        skipped = f", {plural(len(report.unreadable), 'KB')} not linted" if report.unreadable else ""
        lines.append(
            f"total: {plural(report.files, 'file')}, {_entries(report.entries)}: {counts_text(report.counts)}{skipped}"
        )
    for kb in report.kbs:
        cov = kb.coverage
        lines.append(
            f"coverage {kb.name}: {cov.checker} checker, {cov.policy} policy, {cov.schema} schema, "
            f"{cov.judgment} judgment, {cov.broken} broken"
        )
    judgment_line = _judgment_line(report)
    if judgment_line:
        lines.append(judgment_line)
    lines.extend(duplicate_lines(report))
    if report.hidden:
        hid = ", ".join(f"{n} by {name}" for name, n in sorted(report.hidden.items()))
        total = sum(report.hidden.values())
        lines.append(f"hidden: {plural(total, 'issue')} ({hid})")
    if report.baselined is not None:
        n = report.baseline_stale
        stale = f", {n} baseline {'entry no longer occurs' if n == 1 else 'entries no longer occur'}" if n else ""
        lines.append(
            f"baseline: {plural(report.baselined, 'issue')} baselined{stale}"
            + (" (fixed: write the baseline again to prune)" if report.baseline_stale else "")
        )
    return lines


def duplicate_lines(report: Report) -> list[str]:
    """The pairs of alike entries no LLM classified, and the conflicts a human should curate."""
    lines = []
    found = report.duplicates
    if found.not_classified:
        lines.append(
            f"duplicates: {plural(found.not_classified, 'possible pair')} not classified ({found.reason}): "
            "possible_duplicate until an LLM (--llm) says duplicate, conflict or unrelated"
        )
    curation = report.curation
    if curation:
        lines.append(f"needs curation: {plural(len(curation), 'pair')} of conflicting entries")
        lines.extend(
            f"  {display_path(i.path)} <> {display_path(i.related.path if i.related else '')}" for i in curation
        )
    return lines


def problem_lines(report: Report) -> list[str]:
    """The KBs that could not be linted and why, the fatal error, and the kb.yaml files with
    config errors (some of their rules may not run)."""
    lines = [f"not linted: {printable(message)}" for message in report.unreadable]
    if report.fatal:
        lines.append(f"stopped: {printable(report.fatal)}")
    found: dict[str, dict[str, int]] = {}  # path → severity → config problems
    for issue in report.issues:
        if issue.rule == "config_error" or (issue.tier == "rubric" and issue.severity == "error"):
            counts = found.setdefault(issue.path, {})
            counts[issue.severity] = counts.get(issue.severity, 0) + 1
    for path, counts in found.items():
        said = " and ".join(plural(n, f"config {severity}") for severity, n in sorted(counts.items()))
        lines.append(f"config: {display_path(path)} has {said}: fix them first (listed above)")
    return lines


def top_rule_lines(report: Report, *, statistics: bool = False) -> list[str]:
    """The rules (or checkers) with the most issues, errors first, and how to see one of them
    (STATISTICS: every rule is listed under `statistics:` below)."""
    counts: dict[tuple[int, str, str], int] = {}
    for issue in report.issues:
        key = (-SEVERITY_RANK[issue.severity], issue.severity, printable(issue.checker or issue.rule))
        counts[key] = counts.get(key, 0) + 1
    ranked = sorted(counts.items(), key=lambda kv: (kv[0][0], -kv[1], kv[0][2]))
    width = max(len(name) for (_, _, name), _ in ranked[:TOP_RULES])
    lines = [f"  {n:6d}  {severity:<7}  {name:<{width}}" for (_, severity, name), n in ranked[:TOP_RULES]]
    more = len(ranked) - TOP_RULES
    if more > 0:
        where = "listed under statistics: below" if statistics else "--statistics lists them all"
        lines.append(f"  … and {plural(more, 'more rule')} ({where})")
    lines.append(f"  to see one rule only: --select {ranked[0][0][2]}")
    return [line.rstrip() for line in lines]


def _judgment_line(report: Report) -> str | None:
    judgment = report.judgment
    if not judgment.enabled:
        if not report.judgment_items:
            return None
        rubrics = "the rubric has" if len(report.kbs) == 1 else "the rubrics have"
        return printable(
            f"judgment: {plural(judgment.not_evaluated, 'check')} not evaluated on {_entries(report.entries)} "
            f"({rubrics} {plural(report.judgment_items, 'judgment item')}): {judgment.reason}"
        )
    tokens = f"{judgment.prompt_tokens} prompt + {judgment.completion_tokens} completion tokens"
    line = (
        f"judgment: {judgment.evaluator}: {plural(judgment.calls, 'call')}, "
        f"{plural(judgment.cache_hits, 'cache hit')}, {tokens}"
    )
    if judgment.timeouts:
        line += f"; {plural(judgment.timeouts, 'request')} timed out"
    if judgment.structured_output_fallbacks:
        refused = ", ".join(f.split(" ", 1)[0] for f in judgment.structured_output_fallbacks)
        line += f"; structured output: {judgment.structured_output} (the server refused {refused})"
    for note in judgment.notes:
        line += f"; {note}"
    if judgment.not_evaluated:
        why = judgment.not_evaluated_reason or "not evaluated"
        line += f"; {plural(judgment.not_evaluated, 'check')} not evaluated ({why})"
    return printable(line)  # a server's answer may be quoted in a note


def dry_run_lines(report: Report) -> list[str]:
    rows = report.dry_run or []
    lines = [
        f"dry run: {report.judgment.evaluator} would be sent "
        f"{plural(sum(1 for r in rows if r.items), 'request')}; nothing was sent"
    ]
    total = 0
    for row in rows:
        total += row.estimated_prompt_tokens
        cached = f", {len(row.cached_items)} cached" if row.cached_items else ""
        lines.append(
            f"  {display_path(row.path)}: {plural(len(row.items), 'item')} ({', '.join(map(printable, row.items))})"
            f"{cached}, ~{row.estimated_prompt_tokens} prompt tokens"
        )
    lines.append(f"total: ~{total} prompt tokens")
    return lines


def statistics_lines(report: Report) -> list[str]:
    by_rule: dict[tuple[str, str], int] = {}
    for issue in report.issues:
        key = (issue.rule, issue.checker or "")
        by_rule[key] = by_rule.get(key, 0) + 1
    lines = ["", "statistics:"]
    for (rule, checker), n in sorted(by_rule.items(), key=lambda kv: (-kv[1], kv[0])):
        name = f"{rule}/{checker}" if checker else rule
        lines.append(f"  {n:6d}  {printable(name)}")
    for kb in report.kbs:
        if kb.incomplete:
            lines.append(f"  score {kb.name}: incomplete: {kb.incomplete}")
        elif kb.score is not None:
            lines.append(f"  score {kb.name}: {kb.score:.2f}")
        lines.extend(_level_lines(kb))
    return lines


def _level_lines(kb: KBReport) -> list[str]:
    """Graded items: how many entries reached each level, then each entry's levels."""
    lines = []
    for found in kb.levels.values():
        counts = ", ".join(f"{printable(level)} {n}" for level, n in found.counts.items())
        lines.append(f"  levels {kb.name} '{printable(found.item)}': {counts}")
    for graded in kb.grades:
        criteria = "; ".join(printable(c.text()) for c in graded.criteria)
        lines.append(f"    {display_path(graded.path)}: {criteria}")
    return lines
