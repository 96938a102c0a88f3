"""Suppressions in an entry (SPEC §12): by rule, checker or rubric item id; unused ones reported."""

from __future__ import annotations

from pathlib import Path

from conftest import issues_of, run_kblint, write_kb

KB = """\
name: s
evaluation_rubric:
  - {text: "Has a status", checker: status_present, id: needs-status}
  - {text: "Has priority", checker: priority_present}
"""


def lint(kb: Path) -> dict:
    return run_kblint("validate", str(kb), "--format", "json", "--fail-on", "never").json


def rules_of(report: dict, entry: str) -> set[tuple[str, str | None]]:
    return {(i["rule"], i.get("checker")) for i in report["issues"] if i["entry_id"] == entry}


def test_frontmatter_and_comment_suppressions(tmp_path: Path):
    kb = write_kb(
        tmp_path / "s",
        KB,
        {
            "plain.md": "---\ntitle: Plain\ntype: note\n---\n[[by-rule]]\n",
            "by-rule.md": "---\ntitle: By rule\ntype: note\nkblint: {disable: [rubric_violation]}\n---\n[[plain]]\n",
            "by-checker.md": "---\ntitle: By checker\ntype: note\n---\n<!-- kblint-disable has_tags, priority_present -->\n"
            "[[plain]]\n",
            "by-id.md": "---\ntitle: By id\ntype: note\nkblint:\n  disable: needs-status\n---\n[[plain]]\n",
        },
    )
    report = lint(kb)
    assert rules_of(report, "plain") == {
        ("rubric_violation", "has_tags"),
        ("rubric_violation", "status_present"),
        ("rubric_violation", "priority_present"),
    }
    assert rules_of(report, "by-rule") == set()
    assert rules_of(report, "by-checker") == {("rubric_violation", "status_present")}
    assert rules_of(report, "by-id") == {("rubric_violation", "has_tags"), ("rubric_violation", "priority_present")}
    out = run_kblint("validate", str(kb), "--fail-on", "never").stdout
    assert "6 by suppressions" in out  # 3 + 2 + 1 issues hidden


def test_unused_suppression(tmp_path: Path):
    kb = write_kb(
        tmp_path / "s",
        KB,
        {
            "a.md": "---\ntitle: A\ntype: note\ntags: [t]\nstatus: s\npriority: 1\n"
            "kblint: {disable: [broken_link, needs-status, not_a_thing, llm_rubric_violation]}\n---\n[[b]]\n",
            "b.md": "---\ntitle: B\ntype: note\ntags: [t]\nstatus: s\npriority: 1\n---\n[[a]] [[gone]]\n"
            "<!-- kblint-disable broken_link -->\n",
        },
    )
    report = lint(kb)
    unused = sorted((i["entry_id"], i["line"], i["message"]) for i in issues_of(report, "unused_suppression"))
    assert unused == [
        ("a", 7, "Suppression names 'not_a_thing', which is no rule, checker or rubric item id here"),
        ("a", 7, "Suppression of 'broken_link' suppressed nothing"),
        ("a", 7, "Suppression of 'needs-status' suppressed nothing"),
    ]  # llm_rubric_violation did not run (no LLM), so it is not reported
    assert issues_of(report, "broken_link") == []  # b's broken link is suppressed
    assert all(i["severity"] == "info" for i in issues_of(report, "unused_suppression"))
