"""The Markdown report: a summary of the run in GitHub-flavoured Markdown, for the summary page of a
CI job (`$GITHUB_STEP_SUMMARY`).

It gives the counts, each KB's line, what kept kblint from linting, the rules (and checkers) with
the most issues, linked to their documentation, what filters and the baseline hid, and whether
GitHub shows every annotation of the `github` report. Names, paths and messages come from the
linted files: their ASCII punctuation is escaped, so none of them makes a link, an HTML tag or a
table cell.
"""

from __future__ import annotations

import os
import re

from ..checkers.core import CHECKERS
from ..model.issue import SEVERITY_RANK, Report
from ..model.json_schema import JSON_SCHEMA
from ..paths import display_path, printable
from ..rules import RULES, doc_url
from . import github
from .words import plural

TOP_RULES = 10
MAX_KBS = 50  # rows of the KB table (a step's summary may hold 1 MiB)
MAX_PROBLEMS = 20
MAX_MESSAGE = 500  # characters of a problem's message

# Every ASCII punctuation character may be escaped with a backslash in CommonMark, `|` in a table too.
_PUNCTUATION = re.compile(r"[!-/:-@\[-`{-~]")
_ICONS = {0: "✅", 1: "❌", 2: "⚠️"}


def escape(text: str) -> str:
    """TEXT as literal inline Markdown: control characters (line breaks too) written as escapes,
    ASCII punctuation backslash-escaped."""
    return _PUNCTUATION.sub(r"\\\g<0>", printable(text))


def _counts(counts: dict[str, int]) -> str:
    return f"{plural(counts['error'], 'error')}, {plural(counts['warning'], 'warning')}, {counts['info']} info"


def _status(report: Report) -> str:
    return {0: "passed", 1: f"failed (fails on {report.fail_on})", 2: "could not lint everything"}[report.exit_code]


def _kb_table(report: Report) -> list[str]:
    if not report.kbs:
        return []
    lines = [
        "| KB | Directory | Files | Entries | Errors | Warnings | Info | Score |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for kb in report.kbs[:MAX_KBS]:
        score = "incomplete" if kb.incomplete else ("" if kb.score is None else f"{kb.score:.2f}")
        c = kb.counts
        lines.append(
            f"| {escape(kb.name)} | {escape(display_path(kb.root))} | {kb.files} | {kb.entries} "
            f"| {c['error']} | {c['warning']} | {c['info']} | {score} |"
        )
    if len(report.kbs) > MAX_KBS:
        lines.append(f"\nand {plural(len(report.kbs) - MAX_KBS, 'more KB')}")
    lines += [
        f"\nScore of {escape(kb.name)} incomplete: {escape(kb.incomplete)}"
        for kb in report.kbs[:MAX_KBS]
        if kb.incomplete
    ]
    return ["", *lines]


def _problems(report: Report) -> list[str]:
    problems = report.problems
    if not problems:
        return []
    lines = ["", "#### Not linted", ""]
    for message in problems[:MAX_PROBLEMS]:
        cut = message[:MAX_MESSAGE] + ("…" if len(message) > MAX_MESSAGE else "")
        lines.append(f"- {escape(cut)}")
    if len(problems) > MAX_PROBLEMS:
        lines.append(f"- and {len(problems) - MAX_PROBLEMS} more: see the log")
    return lines


def top_rules(report: Report) -> list[tuple[str, str | None, str, int]]:
    """(rule, checker, severity, issues) of every rule (and checker) that has issues: the most
    severe first, then the most issues. A group's severity is that of its most severe issue."""
    groups: dict[tuple[str, str | None], list[int]] = {}
    for issue in report.issues:
        group = groups.setdefault((issue.rule, issue.checker), [0, 0])
        group[0] = max(group[0], SEVERITY_RANK[issue.severity])
        group[1] += 1
    severity = {rank: name for name, rank in SEVERITY_RANK.items()}
    ranked = sorted(groups.items(), key=lambda kv: (-kv[1][0], -kv[1][1], kv[0][0], kv[0][1] or ""))
    return [(rule, checker, severity[rank], n) for (rule, checker), (rank, n) in ranked]


def _linked(name: str, documented: set[str]) -> str:
    """NAME, linked to its section of the rule documentation when it has one (plugins' checkers do not)."""
    return f"[{escape(name)}]({doc_url(name)})" if name in documented else escape(name)


def _rules_table(report: Report) -> list[str]:
    rows = top_rules(report)
    if not rows:
        return []
    lines = ["", "#### Top rules", "", "| Rule | Severity | Issues |", "| --- | --- | ---: |"]
    documented = set(RULES) | {checker.name for checker in CHECKERS} | {JSON_SCHEMA}
    for rule, checker, severity, n in rows[:TOP_RULES]:
        name = " / ".join(_linked(part, documented) for part in (rule, checker) if part)
        lines.append(f"| {name} | {severity} | {n} |")
    if len(rows) > TOP_RULES:
        rest = sum(n for *_, n in rows[TOP_RULES:])
        lines.append(f"\nand {plural(len(rows) - TOP_RULES, 'more rule')} with {plural(rest, 'issue')}")
    return lines


def _hidden(report: Report) -> list[str]:
    lines = []
    if report.hidden:
        by = ", ".join(f"{n} by {escape(name)}" for name, n in sorted(report.hidden.items()))
        lines.append(f"Hidden: {plural(sum(report.hidden.values()), 'issue')} ({by}).")
    if report.baseline_stale:
        n = report.baseline_stale
        lines.append(
            f"Baseline: {plural(n, 'recorded issue')} no longer {'occurs' if n == 1 else 'occur'} "
            "(write the baseline again to prune)."
        )
    return ["", *lines] if lines else []


def _limit_note(report: Report) -> list[str]:
    """A note when GitHub does not show every annotation the `github` report makes (in a GitHub
    Actions run: elsewhere no annotation is made)."""
    counts = github.annotation_counts(report)
    if os.environ.get("GITHUB_ACTIONS") != "true" or not github.over_limit(counts):
        return []
    limit = github.STEP_LIMIT
    return [
        "",
        f"> **Not every annotation is shown.** The run has {plural(counts['error'], 'error annotation')} and "
        f"{plural(counts['warning'], 'warning annotation')}; GitHub shows at most {limit} error and {limit} "
        f"warning annotations of a step ({github.JOB_LIMIT} of a job), so only the first ones appear on the "
        "pull request. The step's log lists them all, and so do the code scanning alerts when the SARIF "
        "report is uploaded.",
    ]


def render(report: Report) -> str:
    code = report.exit_code
    lines = [
        f"### {_ICONS[code]} kblint: {_status(report)}",
        "",
        f"{_counts(report.counts)} in {plural(report.files, 'file')} ({plural(report.entries, 'entry', 'entries')}).",
    ]
    for part in (_limit_note, _problems, _kb_table, _rules_table, _hidden):
        lines.extend(part(report))
    return "\n".join(lines) + "\n"
