"""The markdown report: the summary a CI job shows (`$GITHUB_STEP_SUMMARY`)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import run_kblint

from kblint.model.issue import Issue, KBReport, Report
from kblint.report import FORMATS, github, markdown, render
from kblint.rules import doc_url

EXAMPLE = "fixtures/example"


def issue(rule: str, severity: str, path: str, message: str = "m", checker: str | None = None) -> Issue:
    return Issue(rule=rule, severity=severity, tier="structure", message=message, path=path, checker=checker)


def cells(row: str) -> list[str]:
    """The cells of a table row, split at the pipes that are not escaped."""
    return [c.strip() for c in re.split(r"(?<!\\)\|", row.strip())[1:-1]]


def test_markdown_is_offered():
    assert "markdown" in FORMATS


def test_a_passing_run(tmp_path: Path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    kb = KBReport(name="notes", root=str(tmp_path / "kb"), files=2, entries=2, score=1.0)
    out = render(Report(kbs=[kb], issues=[]), "markdown")
    lines = out.splitlines()
    assert lines[0] == "### ✅ kblint: passed"
    assert "0 errors, 0 warnings, 0 info in 2 files (2 entries)." in lines
    assert cells(next(line for line in lines if line.startswith("| notes"))) == [
        "notes",
        "kb",
        "2",
        "2",
        "0",
        "0",
        "0",
        "1.00",
    ]
    assert "Top rules" not in out and "Not every annotation" not in out and "Hidden" not in out


def odd_report(tmp_path: Path) -> Report:
    odd = str(tmp_path / "a|b" / "[x](javascript:y) <img>.md")
    kb = KBReport(name="k|b <b>", root=str(tmp_path / "a|b"), files=3, entries=3, score=0.5)
    issues = [
        issue("broken_link", "warning", odd, "Link '|x|' not found"),
        issue("broken_link", "warning", odd),
        issue("rubric_violation", "error", odd, checker="ns:has_|tags"),
        issue("rubric_violation", "warning", odd, checker="has_tags"),
        issue("orphan_entry", "info", odd),
    ]
    kb.counts = {"error": 1, "warning": 3, "info": 1}
    return Report(kbs=[kb], issues=issues, hidden={"--ignore": 2, "baseline": 1}, baselined=1, baseline_stale=3)


def test_a_failing_run_escapes_what_comes_from_the_kb(tmp_path: Path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    out = markdown.render(odd_report(tmp_path))
    lines = out.splitlines()
    assert lines[0] == "### ❌ kblint: failed (fails on error)"
    assert "1 error, 3 warnings, 1 info in 3 files (3 entries)." in lines
    # every row of a table has as many cells as its header: no `|` from a name splits a cell
    tables = [line for line in lines if line.startswith("|")]
    widths = {len(cells(line)) for line in tables}
    assert widths == {8, 3}
    kb_row = cells(tables[2])
    assert kb_row[:2] == [r"k\|b \<b\>", r"a\|b"] and kb_row[-1] == "0.50"
    assert "<" not in out.replace(r"\<", "") and "](javascript" not in out
    # the rules: errors first, then the most issues; each linked to its documentation, and so is
    # a core checker (a plugin's has no section there)
    rows = [cells(line) for line in tables if line.startswith("| [")]
    assert rows == [
        [f"[rubric\\_violation]({doc_url('rubric_violation')}) / ns\\:has\\_\\|tags", "error", "1"],
        [f"[broken\\_link]({doc_url('broken_link')})", "warning", "2"],
        [f"[rubric\\_violation]({doc_url('rubric_violation')}) / [has\\_tags]({doc_url('has_tags')})", "warning", "1"],
        [f"[orphan\\_entry]({doc_url('orphan_entry')})", "info", "1"],
    ]
    assert "Hidden: 3 issues (2 by \\-\\-ignore, 1 by baseline)." in lines
    assert "Baseline: 3 recorded issues no longer occur (write the baseline again to prune)." in lines
    assert "Not every annotation" not in out


def test_escape():
    assert markdown.escape("a|b") == r"a\|b"
    assert markdown.escape("[x](y)") == r"\[x\]\(y\)"
    assert markdown.escape("<script>&amp;") == r"\<script\>\&amp\;"
    assert markdown.escape("line\nbreak") == r"line\\nbreak"
    assert markdown.escape("`*_~\\") == r"\`\*\_\~\\"


def test_problems_that_stopped_checking(tmp_path: Path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    report = Report(kbs=[], issues=[], unreadable=["kb/kb.yaml: not valid YAML\nline 3 | x"], fatal="no LLM")
    out = markdown.render(report)
    assert out.startswith("### ⚠️ kblint: could not lint everything\n")
    assert "#### Not linted" in out
    assert r"- kb\/kb\.yaml\: not valid YAML\\nline 3 \| x" in out.splitlines()
    assert "- no LLM" in out.splitlines()


def test_top_rules_are_the_ten_most_severe_then_most_frequent(tmp_path: Path):
    path = str(tmp_path / "a.md")
    issues = [issue("broken_link", "warning", path) for _ in range(5)]
    issues += [issue("rubric_violation", "warning", path, checker=f"c{i:02d}") for i in range(12)]
    issues += [issue("missing_title", "error", path)]
    rows = markdown.top_rules(Report(kbs=[], issues=issues))
    assert rows[:2] == [("missing_title", None, "error", 1), ("broken_link", None, "warning", 5)]
    out = markdown.render(Report(kbs=[], issues=issues))
    table = [line for line in out.splitlines() if line.startswith("| [")]
    assert len(table) == markdown.TOP_RULES
    assert "and 4 more rules with 4 issues" in out


def test_the_summary_says_when_annotations_are_over_githubs_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    path = str(tmp_path / "a.md")
    at_limit = [issue("broken_link", "warning", path) for _ in range(github.STEP_LIMIT)]
    assert "Not every annotation" not in markdown.render(Report(kbs=[], issues=at_limit))
    assert github.limit_line({"error": 0, "warning": 10}) not in github.render(Report(kbs=[], issues=at_limit))

    over = [*at_limit, issue("broken_link", "warning", path), issue("orphan_entry", "info", path)]
    out = markdown.render(Report(kbs=[], issues=over))
    note = next(line for line in out.splitlines() if "Not every annotation" in line)
    assert "0 error annotations and 11 warning annotations" in note
    assert "at most 10 error and 10 warning annotations of a step (50 of a job)" in note
    assert "log lists them all" in note and "SARIF" in note
    # the github report annotates every one, and says before its last line that GitHub shows fewer
    lines = github.render(Report(kbs=[], issues=over)).splitlines()
    assert sum(line.startswith("::warning ") for line in lines) == 11
    assert lines[-2] == (
        "kblint: 11 warnings annotated; GitHub shows the first 10 errors and 10 warnings of a step: this log has them all"
    )


def test_problems_count_as_error_annotations(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    path = str(tmp_path / "a.md")
    errors = [issue("missing_title", "error", path) for _ in range(github.STEP_LIMIT)]
    report = Report(kbs=[], issues=errors, unreadable=["x/kb.yaml: unreadable"])
    assert github.annotation_counts(report) == {"error": 11, "warning": 0}
    assert "11 error annotations and 0 warning annotations" in markdown.render(report)
    monkeypatch.delenv("GITHUB_ACTIONS")
    assert "annotations" not in markdown.render(report)  # outside GitHub Actions none is made


def test_report_markdown_from_the_cli(tmp_path: Path):
    summary = tmp_path / "summary dir" / "summary.md"
    summary.parent.mkdir()
    result = run_kblint(
        "validate", EXAMPLE, "--format", "github", "--report", f"markdown:{summary}", env={"GITHUB_ACTIONS": "true"}
    )
    assert result.code == 1 and result.stdout.startswith("::")
    text = summary.read_text(encoding="utf-8")
    assert text.startswith("### ❌ kblint: failed") and "#### Top rules" in text
    assert "Not every annotation is shown" in text  # the example has more than 10 warnings
