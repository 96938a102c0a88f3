"""What a user sees in a terminal: the summary says what to fix first, --min-severity, colour,
--show-settings, help, `checkers --kb` on whatever `validate` takes, and --write-baseline."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import ROOT, run_kblint, write_kb

ENTRY = "---\ntitle: {0}\ntype: note\ntags: [a, b]\n---\nSee [[{1}]].\n"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    kbs = tmp_path / "kbs"
    write_kb(
        kbs / "good",
        "name: good\nevaluation_rubric:\n  - {text: Has a status, checker: status_present}\n  - Reads well\n",
        {"a.md": ENTRY.format("A", "b"), "b.md": ENTRY.format("B", "gone")},
    )
    (kbs / "broken").mkdir()
    (kbs / "broken" / "kb.yaml").write_text("name: [broken\n")
    return kbs


def test_summary_opens_with_what_stopped_checking_then_the_top_rules(workspace: Path):
    result = run_kblint("validate", str(workspace), cwd=workspace.parent)
    assert result.code == 2
    summary = result.stdout.split("\n\n")[-1].splitlines()
    assert summary[0].startswith("not linted: kbs/broken/kb.yaml:2: invalid YAML")
    assert summary[1] == "3 issues: 0 errors, 3 warnings, 0 info"
    assert summary[2:5] == [
        "       2  warning  status_present",
        "       1  warning  broken_link",
        "  to see one rule only: --select status_present",
    ]
    assert "total: 2 files, 2 entries: 0 errors, 3 warnings, 0 info, 1 KB not linted" in summary


def test_kb_yaml_issues_come_first_and_issues_in_a_file_by_line(tmp_path: Path):
    kb = write_kb(
        tmp_path / "k",
        "name: k\nevaluation_rubric:\n  - {text: Bad, checker: no_such_checker}\n",
        {
            "a.md": "---\ntitle: A\ntype: note\nstatus: x\n---\n[[gone-1]]\n\n[[gone-2]]\n",
            "b.md": ENTRY.format("B", "a"),
        },
    )
    lines = [line for line in run_kblint("validate", str(kb), cwd=tmp_path).stdout.splitlines() if ": " in line]
    paths = [line.split(":", 1)[0] for line in lines if re.match(r"^k/\S+:\d+:\d+:", line)]
    assert paths[0] == "k/kb.yaml"
    a_lines = [int(line.split(":")[1]) for line in lines if line.startswith("k/a.md:")]
    assert a_lines == sorted(a_lines) and len(a_lines) >= 2
    assert "config: k/kb.yaml has 1 config error: fix them first (listed above)" in lines


def test_the_config_line_counts_errors_and_warnings_apart(tmp_path: Path):
    kb = write_kb(tmp_path / "k", 'name: k\nevaluation_rubric:\n  - "tags cont >= 2"\nvalidaton: 1\n', {})
    lines = run_kblint("validate", str(kb), cwd=tmp_path).stdout.splitlines()
    assert "config: k/kb.yaml has 1 config error and 1 config warning: fix them first (listed above)" in lines


def test_min_severity_hides_and_counts(tmp_path: Path):
    kb = write_kb(tmp_path / "k", "name: k\n", {"a.md": "---\ntitle: A\ntype: note\n---\n[[gone]] [[elsewhere:x]]\n"})
    every = run_kblint("validate", str(kb), "--format", "json", "--fail-on", "never", cwd=tmp_path).json
    infos = sum(1 for i in every["issues"] if i["severity"] == "info")
    assert infos >= 1
    hidden = run_kblint("validate", str(kb), "--format", "json", "--min-severity", "warning", cwd=tmp_path).json
    assert all(i["severity"] != "info" for i in hidden["issues"])
    assert hidden["summary"]["hidden"] == {"--min-severity": infos}
    text = run_kblint("validate", str(kb), "--min-severity", "warning", cwd=tmp_path).stdout
    assert f"hidden: {infos} issue" in text and "by --min-severity" in text
    (tmp_path / "kblint.toml").write_text('min_severity = "error"\n')
    assert run_kblint("validate", str(kb), "--format", "json", cwd=tmp_path).json["issues"] == []
    bad = run_kblint("validate", str(kb), "--min-severity", "loud", cwd=tmp_path)
    assert bad.code == 2 and "--min-severity: expected one of error, warning, info, got 'loud'" in bad.stderr


@pytest.mark.parametrize(
    "args, env, colored",
    [
        ([], {}, False),  # not a terminal
        (["--color", "always"], {}, True),
        (["--color", "always"], {"NO_COLOR": "1"}, True),  # the flag wins
        ([], {"FORCE_COLOR": "1"}, True),
        (["--color", "never"], {"FORCE_COLOR": "1"}, False),
        ([], {"NO_COLOR": "1"}, False),
    ],
)
def test_color(args: list[str], env: dict[str, str], colored: bool):
    out = run_kblint("validate", "fixtures/example", *args, cwd=ROOT, env=env).stdout
    assert ("\x1b[" in out) is colored


def test_show_settings_says_where_each_value_came_from(tmp_path: Path):
    (tmp_path / "kblint.toml").write_text('fail_on = "warning"\n[limits]\nmax_file_bytes = 1000\n')
    result = run_kblint("validate", "--show-settings", "--select", "broken_link", cwd=tmp_path)
    assert result.code == 0
    lines = result.stdout.splitlines()
    config = str(tmp_path / "kblint.toml")
    assert lines[0] == f"# configuration file: {config}"
    assert f'fail_on = "warning"  # {config}' in lines
    assert 'select = ["broken_link"]  # command line' in lines
    assert 'format = "text"  # default' in lines
    assert f"limits.max_file_bytes = 1000  # {config}" in lines
    assert "limits.max_yaml_depth = 100  # default" in lines


def test_help_has_real_metavars_and_sections():
    text = run_kblint("validate", "--help").stdout
    assert "<str>" not in text
    for metavar in ("--output FILE", "--base REV", "--shard K/N", "--llm PROVIDER:MODEL", "--report FORMAT:FILE"):
        assert metavar in text
    sections = [line for line in text.splitlines() if re.match(r"^[A-Z][a-z]+:$", line)]
    assert sections == ["Arguments:", "Input:", "Filters:", "Output:", "Judgment:", "Performance:", "Options:"]
    for command in ("checkers", "schema", "migrate", "explain", "cache info", "cache clear"):
        assert "<str>" not in run_kblint(*command.split(), "--help").stdout


def test_checkers_takes_a_workspace_an_entry_and_reports_unreadable_kbs(workspace: Path):
    result = run_kblint("checkers", "--kb", str(workspace), cwd=workspace.parent)
    assert result.code == 2
    assert result.stdout.startswith("good (kbs/good)")
    assert "cannot read this KB: kbs/broken/kb.yaml:2: invalid YAML" in result.stderr
    (workspace / "broken" / "kb.yaml").write_text("name: fixed\n")
    result = run_kblint("checkers", "--kb", str(workspace), cwd=workspace.parent)
    assert result.code == 0 and "fixed (kbs/broken)" in result.stdout and "good (kbs/good)" in result.stdout
    entry = run_kblint("checkers", "--kb", str(workspace / "good" / "a.md"), cwd=workspace.parent)
    assert entry.code == 0 and entry.stdout.startswith("good (kbs/good)")
    several = run_kblint("schema", str(workspace), cwd=workspace.parent)
    assert several.code == 2 and "holds several KBs (kbs/broken, kbs/good); give one of them" in several.stderr


def test_write_baseline_says_what_it_wrote(tmp_path: Path, workspace: Path):
    baseline = tmp_path / "baseline.json"
    result = run_kblint("validate", str(workspace / "good"), "--write-baseline", str(baseline), cwd=workspace.parent)
    assert f"kblint: wrote 3 issues to {baseline}" in result.stderr
    again = run_kblint(
        "validate", str(workspace / "good"), "--baseline", str(baseline), "--write-baseline", str(baseline)
    )
    assert f"kblint: wrote 3 issues to {baseline}" in again.stderr  # every issue found, baselined or not
