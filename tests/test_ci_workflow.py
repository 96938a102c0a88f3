"""Living in CI (SPEC §12): configuration files, baselines, --changed-since (with real git history)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from conftest import FIXTURES, issues_of, run_kblint, write_kb

KB = "name: ci\nevaluation_rubric:\n  - {text: Has status, checker: status_present}\n"


def entry(title: str, link: str, status: str | None = None) -> str:
    st = f"status: {status}\n" if status else ""
    return f"---\ntitle: {title}\ntype: note\ntags: [t]\n{st}---\nSee [[{link}]].\n"


@pytest.fixture
def kb(tmp_path: Path) -> Path:
    return write_kb(
        tmp_path / "proj" / "ci",
        KB,
        {
            "a.md": entry("Alpha", "b"),
            "b.md": entry("Beta", "a", status="ok"),
            "c.md": entry("Gamma", "a", status="ok"),
        },
    )


# --- configuration ------------------------------------------------------------------------------


def test_kblint_toml_is_found_upward_and_flags_override(kb: Path):
    proj = kb.parent
    (proj / "kblint.toml").write_text(
        'fail_on = "warning"\nignore = ["orphan_entry"]\nformat = "json"\n', encoding="utf-8"
    )
    sub = kb / "deeper"
    sub.mkdir()
    result = run_kblint("validate", "..", cwd=sub)
    assert result.code == 1  # a warning fails with fail_on = warning
    assert result.json["summary"]["fail_on"] == "warning"
    assert run_kblint("validate", "..", "--fail-on", "error", cwd=sub).code == 0
    assert "Traceback" not in run_kblint("validate", "..", "--format", "text", cwd=sub).stdout


def test_pyproject_tool_table(kb: Path):
    (kb.parent / "pyproject.toml").write_text(
        '[project]\nname = "x"\n\n[tool.kblint]\nselect = ["status_present"]\nformat = "json"\n', encoding="utf-8"
    )
    report = run_kblint("validate", "ci", cwd=kb.parent).json
    assert {i["checker"] for i in report["issues"]} == {"status_present"}


def test_pyproject_without_the_table_is_skipped(kb: Path):
    (kb / "pyproject.toml").write_text('[project]\nname = "x"\n', encoding="utf-8")
    (kb.parent / "kblint.toml").write_text('format = "json"\n', encoding="utf-8")
    assert run_kblint("validate", ".", cwd=kb).json["schema_version"] == 1


def test_pyproject_that_cannot_hold_the_table_is_not_parsed(kb: Path):
    # No `[tool.kblint]` can be written without "kblint" or an escape: such a file is passed over
    # unread, even when it is not valid TOML (it is another tool's business).
    (kb / "pyproject.toml").write_text('[project\nname = "x"\n', encoding="utf-8")
    (kb.parent / "kblint.toml").write_text('format = "json"\n', encoding="utf-8")
    assert run_kblint("validate", ".", cwd=kb).json["schema_version"] == 1
    (kb / "pyproject.toml").write_text('[tool."kbl\\u0069nt"]\nformat = "text"\n', encoding="utf-8")
    assert "schema_version" not in run_kblint("validate", ".", cwd=kb).stdout


def test_config_that_is_not_utf8_is_a_clear_error(kb: Path):
    (kb / "kblint.toml").write_bytes(b'format = "\xff"\n')
    result = run_kblint("validate", ".", cwd=kb)
    assert result.code == 2 and "kblint.toml: invalid TOML: not UTF-8" in result.stderr
    assert "Traceback" not in result.stderr


def test_config_flag_and_unknown_keys(kb: Path, tmp_path: Path):
    conf = tmp_path / "custom.toml"
    conf.write_text('fail_on = "never"\n', encoding="utf-8")
    assert run_kblint("validate", str(kb), "--config", str(conf)).code == 0
    conf.write_text('fail_onn = "never"\n', encoding="utf-8")
    result = run_kblint("validate", str(kb), "--config", str(conf))
    assert result.code == 2 and "unknown key 'fail_onn'" in result.stderr and "did you mean 'fail_on'" in result.stderr
    conf.write_text('[llm]\nprovider = "openai"\nmodle = "x"\n', encoding="utf-8")
    result = run_kblint("validate", str(kb), "--config", str(conf))
    assert result.code == 2 and "llm.modle" in result.stderr
    conf.write_text("fail_on = 3\n", encoding="utf-8")
    result = run_kblint("validate", str(kb), "--config", str(conf))
    assert result.code == 2 and "'fail_on' must be one of" in result.stderr
    py = tmp_path / "pyproject.toml"
    py.write_text("[tool.kblint]\nbogus = 1\n", encoding="utf-8")
    result = run_kblint("validate", str(kb), "--config", str(py))
    assert result.code == 2 and "unknown key 'tool.kblint.bogus'" in result.stderr
    assert run_kblint("validate", str(kb), "--config", str(tmp_path / "none.toml")).code == 2


def test_exclude_globs_from_the_configuration(kb: Path):
    (kb / "drafts" / "deep").mkdir(parents=True)
    (kb / "drafts" / "deep" / "x.md").write_text("no frontmatter", encoding="utf-8")
    (kb / "scratch.md").write_text("no frontmatter", encoding="utf-8")
    (kb.parent / "kblint.toml").write_text('exclude = ["drafts/**", "scr*.md"]\n', encoding="utf-8")
    report = run_kblint("validate", "ci", "--format", "json", cwd=kb.parent).json
    assert report["summary"]["files"] == 3 and issues_of(report, "parse_error") == []


# --- baselines ----------------------------------------------------------------------------------


def test_baseline_round_trip(kb: Path, tmp_path: Path):
    base = tmp_path / "baseline.json"
    first = run_kblint("validate", str(kb), "--format", "json", "--write-baseline", str(base))
    assert first.json["issues"]  # a has no status
    text = base.read_text(encoding="utf-8")
    data = json.loads(text)
    assert [r["path"] for r in data["issues"]] == sorted(r["path"] for r in data["issues"])
    assert len(text.splitlines()) == len(data["issues"]) + 5  # one issue per line
    again = run_kblint("validate", str(kb), "--format", "json", "--baseline", str(base)).json
    assert again["issues"] == []
    assert again["summary"]["baseline"] == {"baselined": len(data["issues"]), "stale": 0}
    assert again["summary"]["exit_code"] == 0
    # an unrelated edit keeps the fingerprint; a new problem is reported; a fixed one is stale
    (kb / "a.md").write_text(entry("Alpha", "b") + "\nMore words later.\n", encoding="utf-8")
    (kb / "b.md").write_text(entry("Beta", "a"), encoding="utf-8")  # loses its status: new issue
    (kb / "c.md").write_text(entry("Gamma", "a", status="ok"), encoding="utf-8")
    report = run_kblint("validate", str(kb), "--format", "json", "--baseline", str(base)).json
    assert [(i["entry_id"], i["checker"]) for i in report["issues"]] == [("b", "status_present")]
    text_out = run_kblint("validate", str(kb), "--baseline", str(base)).stdout
    assert "issues baselined" in text_out or "issue baselined" in text_out


def test_a_partial_run_counts_no_baseline_entry_as_gone_and_warns_when_it_writes_one(kb: Path, tmp_path: Path):
    """--shard lints a part: what it did not lint did not occur in it, and is not fixed."""
    base = tmp_path / "baseline.json"
    run_kblint("validate", str(kb), "--write-baseline", str(base))
    summaries = [
        run_kblint("validate", str(kb), "--format", "json", "--shard", f"{k}/3", "--baseline", str(base)).json[
            "summary"
        ]
        for k in (1, 2, 3)
    ]
    assert [s["baseline"]["stale"] for s in summaries] == [0, 0, 0]
    assert sum(s["baseline"]["baselined"] for s in summaries) == len(json.loads(base.read_text())["issues"])
    written = run_kblint("validate", str(kb), "--shard", "1/3", "--write-baseline", str(tmp_path / "part.json"))
    assert "kblint: warning: the baseline holds only what this --shard run linted" in written.stderr


def test_issues_alike_but_for_their_source_have_fingerprints_of_their_own(tmp_path: Path):
    """Two entries' cross-kb links to one missing target (in one cross-kb-links.yaml), and one name
    suppressed twice for nothing in one entry: a baseline of one must not hide the other."""
    entries = {
        "a.md": "---\ntitle: A\ntags: [t]\n---\n[[b]]\n",
        "b.md": "---\ntitle: B\ntags: [t]\n---\n[[a]]\n<!-- kblint-disable-next-line broken_link -->\nx\n"
        "<!-- kblint-disable-next-line broken_link -->\ny\n",
    }
    kb = write_kb(tmp_path / "k", "name: k\n", entries)
    (kb / "cross-kb-links.yaml").write_text(
        "- {source: a, target: nowhere, target_kb: k}\n- {source: b, target: nowhere, target_kb: k}\n", encoding="utf-8"
    )
    issues = run_kblint("validate", str(kb), "--format", "json", "--no-cache").json["issues"]
    for rule, count in (("broken_link", 2), ("unused_suppression", 2)):
        prints = [i["fingerprint"] for i in issues if i["rule"] == rule]
        assert len(prints) == count and len(set(prints)) == count, rule


def test_fingerprints_stable_under_unrelated_edits_and_distinct(tmp_path: Path):
    kb = write_kb(
        tmp_path / "k",
        "name: k\ntypes:\n  t:\n    required: [title, x, y]\n",
        {
            "e.md": "---\ntitle: E\ntype: t\ntags: [a]\n---\n[[gone]] [[lost]]\n",
        },
    )
    before = {
        (i["rule"], i["field"], i["message"]): i["fingerprint"]
        for i in run_kblint("validate", str(kb), "--format", "json").json["issues"]
    }
    assert len(set(before.values())) == len(before)  # two missing fields, two broken links: all distinct
    (kb / "e.md").write_text(
        "---\ntitle: E\ntype: t\nsummary: added\ntags: [a]\n---\n\nNew paragraph.\n\n[[gone]] and later [[lost]]\n",
        encoding="utf-8",
    )
    after = {
        (i["rule"], i["field"], i["message"]): i["fingerprint"]
        for i in run_kblint("validate", str(kb), "--format", "json").json["issues"]
    }
    assert after == before
    # and independent of the directory kblint runs from
    moved = {
        (i["rule"], i["field"], i["message"]): i["fingerprint"]
        for i in run_kblint("validate", ".", "--format", "json", cwd=kb).json["issues"]
    }
    assert moved == before


@pytest.mark.parametrize(
    "content, why",
    [
        ("[1, 2]", "write one with --write-baseline"),
        ('{"kblint_baseline": 1, "issues": [{"fingerprint": []}]}', "an issue without a fingerprint text"),
        ('{"kblint_baseline": 1, "issues": [{"rule": "x"}]}', "an issue without a fingerprint text"),
        ("[" * 100_000, "JSON nested too deep"),
    ],
)
def test_bad_baseline_file_is_exit_2(kb: Path, tmp_path: Path, content: str, why: str):
    bad = tmp_path / "b.json"
    bad.write_text(content, encoding="utf-8")
    result = run_kblint("validate", str(kb), "--baseline", str(bad))
    assert result.code == 2
    assert result.stderr.startswith(f"kblint: --baseline {bad}: not a kblint baseline") and why in result.stderr


# --- --changed-since ----------------------------------------------------------------------------


def git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args], cwd=repo, check=True, capture_output=True
    )


def test_changed_since_lints_changed_entries_and_the_links_that_involve_them(kb: Path):
    repo = kb.parent
    (kb / "d.md").write_text(entry("Delta", "c"), encoding="utf-8")  # no status: an issue, unchanged later
    git(repo, "init", "-q")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "base")
    (kb / "b.md").write_text(entry("Beta", "a"), encoding="utf-8")  # edited: now lacks a status
    (kb / "c.md").unlink()  # d links to c: now broken
    (kb / "e.md").write_text(entry("Epsilon", "a"), encoding="utf-8")  # new, untracked
    report = run_kblint("validate", str(kb), "--format", "json", "--changed-since", "HEAD").json
    found = sorted((i["entry_id"], i["rule"], i.get("checker")) for i in report["issues"])
    assert found == [
        ("b", "rubric_violation", "status_present"),
        ("d", "broken_link", None),  # unchanged, but its link names the deleted entry
        ("e", "rubric_violation", "status_present"),
    ]
    assert report["summary"]["files"] == 2
    text = run_kblint("validate", str(kb), "--changed-since", "HEAD").stdout
    assert ", changed since HEAD): 2 files, 2 entries" in text  # the part of the KB the counts are of
    full = run_kblint("validate", str(kb), "--format", "json").json
    assert ("d", "status_present") in {(i["entry_id"], i.get("checker")) for i in full["issues"]}
    bad = run_kblint("validate", str(kb), "--changed-since", "nope\nmore")
    assert bad.code == 2 and bad.stderr == "kblint: --changed-since nope\\nmore: no such git revision\n"
    empty = run_kblint("validate", str(kb), "--changed-since", "")
    assert empty.code == 2 and "--changed-since: expected a git revision" in empty.stderr
    for option in (
        "--shard",
        "--baseline",
        "--write-baseline",
        "--output",
        "--select",
        "--ignore",
    ):  # unset CI variables
        empty = run_kblint("validate", str(kb), option, "")
        assert empty.code == 2 and f"kblint: {option}: expected " in empty.stderr, option


def test_changed_since_reports_what_a_change_made_of_the_entries_it_linked_to(tmp_path: Path):
    rubric = "  - {text: Linked to, policy: inlinks required, applies_to: [topic]}\n"
    kb = write_kb(
        tmp_path / "proj" / "ci",
        f"name: ci\ntypes:\n  topic: {{}}\n  note: {{}}\nevaluation_rubric:\n{rubric}",
        {
            "hub.md": "---\ntitle: Hub\ntype: note\n---\nSee [[lone]], [[topic]] and [[kept]].\n",
            "lone.md": "---\ntitle: Lone\ntype: note\n---\nNo links.\n",
            "topic.md": "---\ntitle: Topic\ntype: topic\n---\nNo links.\n",
            "kept.md": "---\ntitle: Kept\ntype: topic\nkblint:\n  disable: [orphan_entry]\n---\nNo links.\n",
            "gone.md": "---\ntitle: Gone\ntype: note\n---\nSee [[other]].\n",
            "other.md": "---\ntitle: Other\ntype: note\ntags: [x]\n---\nNo links.\n",
        },
    )
    git(kb.parent, "init", "-q")
    git(kb.parent, "add", ".")
    git(kb.parent, "commit", "-q", "-m", "base")
    (kb / "hub.md").write_text("---\ntitle: Hub\ntype: note\n---\nNo links now.\n", encoding="utf-8")
    (kb / "gone.md").unlink()
    report = run_kblint("validate", str(kb), "--format", "json", "--changed-since", "HEAD").json
    found = sorted((i["entry_id"], i["rule"], i.get("checker")) for i in report["issues"])
    assert found == [
        ("hub", "orphan_entry", None),
        ("hub", "rubric_violation", "has_outlinks"),
        ("hub", "rubric_violation", "has_tags"),
        ("kept", "rubric_violation", "policy"),  # its suppression hides the orphan, not the item
        ("lone", "orphan_entry", None),  # unchanged: the changed hub linked to it
        ("other", "orphan_entry", None),  # unchanged: the deleted entry linked to it
        ("topic", "orphan_entry", None),
        ("topic", "rubric_violation", "policy"),
    ]
    assert report["summary"]["files"] == 1


def _ring(tmp_path: Path) -> Path:
    """A committed KB where each topic must be linked to: hub links to one and two, one to two (by
    its alias) and hub, two to hub."""
    topic = "---\ntitle: {0}\ntype: topic\nid: {1}\ntags: [a, b]\n{2}---\n{3}\n"
    kb = write_kb(
        tmp_path / "proj" / "ci",
        "name: ci\ntypes:\n  topic: {}\nevaluation_rubric:\n  - {text: Linked to, policy: inlinks required}\n",
        {
            "hub.md": topic.format("Hub", "hub", "", "See [[one]] and [[two]]."),
            "one.md": topic.format("One", "one", "", "See [[Second]] and [[hub]]."),
            "t2.md": topic.format("Two", "two", "aliases: [Second]\n", "See [[hub]]."),
            "_templates/t.md": topic.format("T", "t", "", "See [[one]]."),
        },
    )
    git(kb.parent, "init", "-q")
    git(kb.parent, "add", ".")
    git(kb.parent, "commit", "-q", "-m", "base")
    return kb


def _found(kb: Path, *args: str) -> list[tuple[str, str]]:
    report = run_kblint("validate", *args, "--format", "json", "--changed-since", "HEAD", cwd=kb).json
    return sorted((i["entry_id"], i["rule"]) for i in report["issues"])


def test_changed_since_reports_a_link_to_a_name_a_changed_entry_had(tmp_path: Path):
    kb = _ring(tmp_path)
    (kb / "t2.md").write_text("---\ntitle: Two\ntype: topic\nid: deux\ntags: [a, b]\n---\nSee [[hub]].\n")
    # [[two]] and [[Second]] named its id and alias: no link reaches it now
    assert _found(kb, ".") == [("deux", "rubric_violation"), ("hub", "broken_link"), ("one", "broken_link")]


def test_changed_since_rechecks_only_what_lost_a_link_and_in_its_own_shard(tmp_path: Path):
    kb = _ring(tmp_path)
    (kb / "_templates" / "t.md").write_text("---\ntitle: T\n---\nNo links.\n", encoding="utf-8")  # no entry
    (kb / "hub.md").write_text((kb / "hub.md").read_text(encoding="utf-8") + "More.\n", encoding="utf-8")
    assert _found(kb, ".") == []  # the same links: nothing lost one
    (kb / "hub.md").write_text("---\ntitle: Hub\ntype: topic\ntags: [a, b]\n---\nNo links.\n")
    (kb / "one.md").unlink()
    # hub links nowhere now; two, unchanged, lost its inlinks from hub and the deleted one
    lost = [("hub", "rubric_violation"), ("two", "rubric_violation")]
    assert _found(kb, ".") == lost
    shards = [_found(kb, ".", "--shard", f"{k}/2") for k in (1, 2)]
    assert sorted(shards[0] + shards[1]) == lost
    assert _found(kb, "hub.md") == lost[:1]  # two is not named
    assert _found(kb, "t2.md") == lost[1:]


def test_changed_since_rechecks_a_target_in_another_kb_among_its_kbs_files(tmp_path: Path):
    note = "---\ntitle: {0}\ntype: note\ntags: [a, b]\n---\n{1}\n"
    for name in ("ka", "kb"):
        write_kb(tmp_path / name, f"name: {name}\ntypes:\n  note: {{}}\n", {})
    (tmp_path / "ka" / "a.md").write_text(note.format("A", "See [[kb:x]] and [[b]]."), encoding="utf-8")
    (tmp_path / "ka" / "b.md").write_text(note.format("B", "See [[a]]."), encoding="utf-8")
    (tmp_path / "kb" / "x.md").write_text(note.format("X", "Nothing."), encoding="utf-8")
    git(tmp_path, "init", "-q")
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-q", "-m", "base")
    (tmp_path / "ka" / "a.md").write_text(note.format("A", "See [[b]]."), encoding="utf-8")
    for named in (("ka", "kb"), ("ka/a.md", "kb")):  # kb's files: all of them
        assert ("x", "orphan_entry") in _found(tmp_path, *named), named


def test_changed_since_rechecks_the_ends_of_a_link_cross_kb_links_yaml_no_longer_declares(tmp_path: Path):
    note = "---\ntitle: {0}\ntype: note\ntags: [a, b]\n---\nNo links.\n"
    kb = write_kb(
        tmp_path / "proj" / "ci",
        "name: ci\ntypes:\n  note: {}\n",
        {"a.md": note.format("A"), "b.md": note.format("B"), "cross-kb-links.yaml": "- {source: a, target: b}\n"},
    )
    git(kb.parent, "init", "-q")
    git(kb.parent, "add", ".")
    git(kb.parent, "commit", "-q", "-m", "base")
    (kb / "cross-kb-links.yaml").write_text("[]\n", encoding="utf-8")
    assert _found(kb, ".") == [("a", "orphan_entry"), ("b", "orphan_entry")]


def test_a_revision_git_does_not_know_says_why_when_it_can(kb: Path, tmp_path: Path):
    repo = kb.parent
    git(repo, "init", "-q")
    empty = run_kblint("validate", str(kb), "--changed-since", "HEAD")
    assert empty.code == 2 and "no such git revision (the repository has no commit yet)" in empty.stderr
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "one")
    (kb / "a.md").write_text(entry("Alpha", "b", status="ok"), encoding="utf-8")
    git(repo, "commit", "-q", "-am", "two")
    subprocess.run(["git", "clone", "-q", "--depth", "1", f"file://{repo}", str(tmp_path / "shallow")], check=True)
    shallow = run_kblint("validate", str(tmp_path / "shallow" / "ci"), "--changed-since", "HEAD~1")
    assert shallow.code == 2 and "(this clone is shallow: fetch the history" in shallow.stderr


def test_a_duplicate_pair_stays_on_its_newer_entry_when_only_the_older_changed(kb: Path):
    """One entry, one fingerprint in every run: a baselined pair does not come back as new."""
    repo = kb.parent
    words = " ".join(f"word{n}" for n in range(80))
    for name, created in (("old", "2024-01-01"), ("new", "2025-01-01")):
        (kb / f"{name}.md").write_text(
            f"---\ntitle: Copy {name}\ntags: [t]\nstatus: ok\ncreated: {created}\n---\n{words}\n[[a]]\n",
            encoding="utf-8",
        )
    git(repo, "init", "-q")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "base")
    full = issues_of(run_kblint("validate", str(kb), "--format", "json").json, "possible_duplicate")
    (kb / "old.md").write_text(
        (kb / "old.md").read_text(encoding="utf-8").replace("status: ok", "status: done"), encoding="utf-8"
    )
    changed = run_kblint("validate", str(kb), "--format", "json", "--changed-since", "HEAD").json
    pairs = issues_of(changed, "possible_duplicate")
    assert [(i["entry_id"], i["fingerprint"]) for i in pairs] == [(i["entry_id"], i["fingerprint"]) for i in full]
    assert [i["entry_id"] for i in full] == ["new"]


def test_changed_since_a_branch_counts_from_where_this_branch_left_it(kb: Path):
    """What the other branch changed since is no change of this one, as a pull request counts."""
    repo = kb.parent
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "base")
    git(repo, "checkout", "-q", "-b", "pr")
    (kb / "b.md").write_text(entry("Beta", "a"), encoding="utf-8")  # the branch's change: loses its status
    git(repo, "commit", "-q", "-am", "pr")
    git(repo, "checkout", "-q", "main")
    (kb / "a.md").write_text(entry("Alpha", "b", status="ok"), encoding="utf-8")  # main moves on: fixes a
    git(repo, "commit", "-q", "-am", "main")
    git(repo, "checkout", "-q", "pr")
    report = run_kblint("validate", str(kb), "--format", "json", "--changed-since", "main").json
    assert {i["entry_id"] for i in report["issues"]} == {"b"}


def test_changed_since_reports_a_changed_kb_yaml_and_cross_kb_links(kb: Path):
    repo = kb.parent
    git(repo, "init", "-q")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "base")
    unchanged = run_kblint("validate", str(kb), "--format", "json", "--changed-since", "HEAD").json
    assert unchanged["issues"] == []
    (kb / "kb.yaml").write_text((kb / "kb.yaml").read_text(encoding="utf-8") + "validaton: 1\n", encoding="utf-8")
    (kb / "cross-kb-links.yaml").write_text("- {source: nobody, target: a}\n", encoding="utf-8")
    report = run_kblint("validate", str(kb), "--format", "json", "--changed-since", "HEAD").json
    full = run_kblint("validate", str(kb), "--format", "json").json
    assert report["issues"] == full["issues"]  # a changed kb.yaml: the whole KB, its entries too
    assert {("cross-kb-links.yaml", "broken_link"), ("kb.yaml", "config_error"), ("a.md", "rubric_violation")} <= {
        (Path(i["path"]).name, i["rule"]) for i in report["issues"]
    }
    named = run_kblint("validate", str(kb / "a.md"), "--format", "json", "--changed-since", "HEAD").json
    alone = run_kblint("validate", str(kb / "a.md"), "--format", "json").json
    assert named["issues"] == alone["issues"] != []  # the entry named, under a changed kb.yaml: its issues alone
    git(repo, "commit", "-q", "-am", "kb.yaml")
    (kb / "cross-kb-links.yaml").write_text("links: 5\n", encoding="utf-8")  # its own config error only
    report = run_kblint("validate", str(kb), "--format", "json", "--changed-since", "HEAD").json
    assert [(Path(i["path"]).name, i["rule"]) for i in report["issues"]] == [("cross-kb-links.yaml", "config_error")]


def test_changed_since_reports_links_to_a_deleted_entry_by_its_id_or_aliases_then(kb: Path):
    repo = kb.parent
    gamma = entry("Gamma", "a", status="ok").replace("tags: [t]\n", "tags: [t]\nid: gamma\naliases: [The Third]\n")
    (kb / "c.md").write_text(gamma, encoding="utf-8")
    (kb / "d.md").write_text(entry("Delta", "gamma", status="ok"), encoding="utf-8")  # by its id
    (kb / "f.md").write_text(entry("Phi", "the third", status="ok"), encoding="utf-8")  # by an alias
    (kb / "g.md").write_text(entry("Gimel", "nowhere", status="ok"), encoding="utf-8")  # broken before
    by_path = entry("Heth", "a", status="ok") + "See [the third](c.md) and [[c.md]].\n"  # by its path
    (kb / "h.md").write_text(by_path, encoding="utf-8")
    (kb / "cross-kb-links.yaml").write_text("- {source: gamma, target: a, target_kb: ci}\n", encoding="utf-8")
    git(repo, "init", "-q")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "base")
    (kb / "c.md").unlink()
    report = run_kblint("validate", str(kb), "--format", "json", "--changed-since", "HEAD").json
    broken = sorted((i["entry_id"] or "", i["message"]) for i in report["issues"] if i["rule"] == "broken_link")
    assert broken == [
        ("", "cross-kb-links.yaml: source 'gamma' is not an entry of KB 'ci'"),  # a link declared from it
        ("d", "Link target 'gamma' not found"),
        ("f", "Link target 'the third' not found"),
        ("h", "Link target 'c' not found"),
    ]


def test_names_at_a_revision_are_read_in_one_git_call_whatever_the_paths(kb: Path):
    from kblint.history import names_at

    (kb / "a b.md").write_text("---\ntitle: Spaced\nid: spaced\naliases: Other Name\n---\nBody.\n", encoding="utf-8")
    (kb / "tab\there.md").write_text("---\ntitle: Dated\nid: 2024-01-02\n---\nBody.\n", encoding="utf-8")
    (kb / "d.md").write_text("---\ntitle: Padded\nid: '  padded  '\n---\nBody.\n", encoding="utf-8")
    (kb / "plain.md").write_text("No frontmatter.\n", encoding="utf-8")
    git(kb.parent, "init", "-q")
    git(kb.parent, "add", ".")
    git(kb.parent, "commit", "-q", "-m", "base")
    names = ["never there.md missing", "a b.md", "tab\there.md", "d.md", "plain.md", "b.md"]
    # ids as an entry's own are read: a date in ISO form, padding gone, else the file's name
    assert names_at("HEAD", str(kb), [str(kb / n) for n in names]) == {
        str(kb / "a b.md"): ["spaced", "Other Name"],
        str(kb / "tab\there.md"): ["2024-01-02"],
        str(kb / "d.md"): ["padded"],
        str(kb / "plain.md"): [],  # no frontmatter: its file name alone, which the caller knows
        str(kb / "b.md"): ["b"],
    }


def test_statistics_counts_per_rule_and_checker(kb: Path):
    out = run_kblint("validate", str(kb), "--statistics").stdout
    assert "statistics:" in out and "rubric_violation/status_present" in out
    # past the top rules, the summary points at the list below rather than at the option given
    example = run_kblint("validate", str(FIXTURES / "example"), "--no-cache", "--statistics").stdout
    assert "more rules (listed under statistics: below)" in example and "--statistics lists" not in example


def test_pre_commit_hook_and_action_definitions():
    import yaml
    from conftest import ROOT

    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    (hook,) = hooks
    assert hook["id"] == "kblint" and hook["entry"].startswith("kblint validate") and "--no-judgment" in hook["entry"]
    assert hook["language"] == "python"
    action = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
    assert action["runs"]["using"] == "composite"
    runs = " ".join(step.get("run", "") for step in action["runs"]["steps"])
    assert "pip install" in runs and '"$GITHUB_ACTION_PATH"' in runs
    assert "--format github" in runs and '"sarif:$INPUT_SARIF"' in runs  # tests/test_action.py runs them
