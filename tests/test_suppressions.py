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
        ("a", 7, "Suppression of 'broken_link' suppressed nothing"),
        ("a", 7, "Suppression of 'needs-status' suppressed nothing"),
    ]  # llm_rubric_violation did not run (no LLM), so it is not reported
    invalid = [
        (i["entry_id"], i["line"], i["message"], i["severity"]) for i in issues_of(report, "invalid_suppression")
    ]
    assert invalid == [
        ("a", 7, "Suppression names 'not_a_thing', which is no rule, checker or rubric item id here", "warning")
    ]
    assert issues_of(report, "broken_link") == []  # b's broken link is suppressed
    assert all(i["severity"] == "info" for i in issues_of(report, "unused_suppression"))


LINKS_KB = "name: s\n"


def broken_links(report: dict) -> list[tuple[str, int]]:
    return sorted((i["entry_id"], i["line"]) for i in issues_of(report, "broken_link"))


def test_disable_next_line_hides_only_the_next_line(tmp_path: Path):
    body = (
        "---\ntitle: A\ntype: note\n---\n"  # lines 1-4
        "[[gone-1]]\n"  # 5
        "<!-- kblint-disable-next-line broken_link -->\n"  # 6
        "[[gone-2]]\n"  # 7: hidden
        "[[gone-3]]\n"  # 8
    )
    kb = write_kb(tmp_path / "s", LINKS_KB, {"a.md": body, "b.md": "---\ntitle: B\ntype: note\n---\n[[a]]\n"})
    report = lint(kb)
    assert broken_links(report) == [("a", 5), ("a", 8)]
    assert issues_of(report, "unused_suppression") == [] and issues_of(report, "invalid_suppression") == []


def test_a_target_linked_on_a_suppressed_line_and_on_another_is_reported_on_the_other(tmp_path: Path):
    """A target is reported once per entry: at its first link that no suppression covers, and a
    suppression that covers another link to it is used, not 'suppressed nothing'."""
    for suppressed_first in (True, False):
        shown = "Spelled [[gone]] here.\n"
        hidden = "<!-- kblint-disable-next-line broken_link -->\nAn example [[gone]].\n"
        body = "---\ntitle: A\ntype: note\n---\n" + (hidden + shown if suppressed_first else shown + hidden)
        kb = write_kb(
            tmp_path / f"s{suppressed_first}", LINKS_KB, {"a.md": body, "b.md": "---\ntitle: B\n---\n[[a]]\n"}
        )
        report = lint(kb)
        assert broken_links(report) == [("a", 7 if suppressed_first else 5)]
        assert issues_of(report, "unused_suppression") == []


def test_disable_enable_range(tmp_path: Path):
    body = (
        "---\ntitle: A\ntype: note\n---\n"
        "[[gone-1]]\n"  # 5
        "<!-- kblint-disable broken_link -->\n"  # 6
        "[[gone-2]]\n"  # 7: hidden
        "[[gone-3]]\n"  # 8: hidden
        "<!-- kblint-enable broken_link -->\n"  # 9
        "[[gone-4]]\n"  # 10
        "<!-- kblint-disable broken_link -->\n"  # 11: never enabled again: the whole entry
    )
    kb = write_kb(tmp_path / "s", LINKS_KB, {"a.md": body, "b.md": "---\ntitle: B\ntype: note\n---\n[[a]]\n"})
    report = lint(kb)
    assert broken_links(report) == []
    # the open one at line 11 hides gone-1 and gone-4; the range hides gone-2 and gone-3
    assert issues_of(report, "unused_suppression") == []


def test_unused_range_and_next_line_are_reported(tmp_path: Path):
    body = (
        "---\ntitle: A\ntype: note\n---\n"
        "<!-- kblint-disable-next-line broken_link -->\n"  # 5
        "Nothing broken here.\n"
        "<!-- kblint-disable broken_link -->\n"  # 7
        "Still nothing.\n"
        "<!-- kblint-enable broken_link -->\n"
        "[[gone]]\n"  # 10: not covered
    )
    kb = write_kb(tmp_path / "s", LINKS_KB, {"a.md": body, "b.md": "---\ntitle: B\ntype: note\n---\n[[a]]\n"})
    report = lint(kb)
    assert broken_links(report) == [("a", 10)]
    unused = sorted((i["line"], i["message"]) for i in issues_of(report, "unused_suppression"))
    assert unused == [(5, "Suppression of 'broken_link' suppressed nothing")] * 1 + [
        (7, "Suppression of 'broken_link' suppressed nothing")
    ]


def test_malformed_directives_are_invalid_suppressions(tmp_path: Path):
    body = (
        "---\ntitle: A\ntype: note\nkblint: {disabel: [broken_link]}\n---\n"  # 5
        "<!-- kblint-disable-nextline broken_link -->\n"  # 6
        "<!-- kblint-disable-next-line -->\n"  # 7
        "<!-- kblint-enable orphan_entry -->\n"  # 8
        "<!-- kblint-disable brokn_link -->\n"  # 9
        "[[gone]]\n"
    )
    kb = write_kb(tmp_path / "s", LINKS_KB, {"a.md": body, "b.md": "---\ntitle: B\ntype: note\n---\n[[a]]\n"})
    report = lint(kb)
    invalid = sorted((i["line"], i["message"]) for i in issues_of(report, "invalid_suppression"))
    assert invalid == [
        (4, "'kblint' has no key 'disabel'; did you mean 'disable'?"),
        (6, "unknown directive 'kblint-disable-nextline'; did you mean 'kblint-disable-next-line'?"),
        (7, "'kblint-disable-next-line' names no rule: write the rules, checkers or items it is for"),
        (8, "'kblint-enable orphan_entry' has no 'kblint-disable orphan_entry' above it"),
        (
            9,
            "Suppression names 'brokn_link', which is no rule, checker or rubric item id here; did you mean 'broken_link'?",
        ),
    ]
    assert broken_links(report) == [("a", 10)]  # none of them hid it


def test_per_file_ignores(tmp_path: Path):
    kb = write_kb(
        tmp_path / "proj" / "s",
        LINKS_KB,
        {
            "drafts/a.md": "---\ntitle: A\ntype: note\n---\n[[gone]]\n",
            "notes/b.md": "---\ntitle: B\ntype: note\n---\n[[gone]]\n",
        },
    )
    (tmp_path / "proj" / "kblint.toml").write_text('per_file_ignores = {"drafts/**" = ["broken_link", "structure"]}\n')
    report = run_kblint("validate", str(kb), "--format", "json", "--fail-on", "never", cwd=tmp_path / "proj").json
    assert [i["rule"] for i in report["issues"] if i["entry_id"] == "a" and i["tier"] == "structure"] == []
    assert ("broken_link", "b") in [(i["rule"], i["entry_id"]) for i in report["issues"]]
    assert report["summary"]["hidden"]["per_file_ignores"] == 1  # a's broken link


def test_a_name_is_checked_where_it_was_given(tmp_path: Path):
    """An unknown name is told as the user gave it: in the configuration file, or as an option."""
    kb = write_kb(tmp_path / "proj" / "s", LINKS_KB, {"a.md": "---\ntitle: A\ntype: note\n---\nText.\n"})
    config = tmp_path / "proj" / "kblint.toml"
    config.write_text('ignore = ["orphan_entry", "nosuchrule"]\n')
    result = run_kblint("validate", str(kb), cwd=tmp_path / "proj")
    assert result.code == 2
    assert f"ignore in {config}: unknown rule, tier or checker 'nosuchrule'" in result.stderr
    result = run_kblint("validate", str(kb), "--select", "brokn_link", cwd=tmp_path / "proj")
    assert "--select: unknown rule, tier or checker 'brokn_link'; did you mean 'broken_link'?" in result.stderr


def test_per_file_ignores_names_are_checked(tmp_path: Path):
    kb = write_kb(tmp_path / "proj" / "s", LINKS_KB, {"a.md": "---\ntitle: A\ntype: note\n---\nText.\n"})
    (tmp_path / "proj" / "kblint.toml").write_text('per_file_ignores = {"drafts/**" = ["brokn_link"]}\n')
    result = run_kblint("validate", str(kb), cwd=tmp_path / "proj")
    assert result.code == 2
    assert "per_file_ignores: unknown rule, tier or checker 'brokn_link'; did you mean 'broken_link'?" in result.stderr
    (tmp_path / "proj" / "kblint.toml").write_text('per_file_ignores = ["drafts/**"]\n')
    result = run_kblint("validate", str(kb), cwd=tmp_path / "proj")
    assert result.code == 2 and "'per_file_ignores' must be a table of glob = [names]" in result.stderr


def test_directives_in_code_are_examples_not_directives(tmp_path: Path):
    body = (
        "---\ntitle: A\ntype: note\n---\n"
        "Write `<!-- kblint-disable broken_link -->` to silence a finding.\n"
        "```markdown\n<!-- kblint-disable-next-line broken_link -->\n```\n"
        "See [[gone]].\n"
    )
    kb = write_kb(tmp_path / "s", LINKS_KB, {"a.md": body, "b.md": "---\ntitle: B\ntype: note\n---\n[[a]]\n"})
    report = lint(kb)
    assert broken_links(report) == [("a", 9)]
    assert issues_of(report, "unused_suppression") == [] and issues_of(report, "invalid_suppression") == []
