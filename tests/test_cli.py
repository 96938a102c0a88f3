"""`kblint validate` as a user meets it: paths, candidates, stdin, filters, exit codes, reports."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import FIXTURES, issues_of, run_kblint, write_kb

from kblint import __version__

KB_YAML = """\
name: notes
types:
  finding:
    subdirectory: findings
    required: [title, date]
    fields:
      date: {type: date}
"""

GOOD = "---\ntitle: {title}\ntype: finding\ndate: 2025-01-02\ntags: [a]\n---\nSee [[other]].\n"


@pytest.fixture
def kb(tmp_path: Path) -> Path:
    return write_kb(
        tmp_path / "notes",
        KB_YAML,
        {
            "findings/one.md": GOOD.format(title="One").replace("[[other]]", "[[two]]"),
            "findings/two.md": GOOD.format(title="Two").replace("[[other]]", "[[one]]"),
            "findings/undated.md": "---\ntitle: Undated\ntype: finding\ntags: [a]\n---\nSee [[one]].\n",
            "misplaced.md": GOOD.format(title="Misplaced").replace("[[other]]", "[[one]]"),
        },
    )


def test_version():
    for args in (["--version"], ["-V"]):
        result = run_kblint(*args)
        assert result.code == 0
        assert result.stdout.strip() == f"kblint {__version__}"


def test_console_script_is_installed():
    exe = shutil.which("kblint", path=os.path.dirname(os.sys.executable))
    assert exe is not None
    proc = subprocess.run([exe, "--version"], capture_output=True, text=True)
    assert proc.returncode == 0 and __version__ in proc.stdout


def test_text_report_lines_and_totals(kb: Path):
    result = run_kblint("validate", "notes", cwd=kb.parent)
    assert result.code == 1
    lines = result.stdout.splitlines()
    assert (
        "notes/findings/undated.md:1:1: error missing_required Entry 'undated' is missing required field 'date'"
        in lines
    )
    assert (
        "notes/misplaced.md:3:1: warning subdirectory_mismatch Entry 'misplaced' of type 'finding' is not under findings/"
        in lines
    )
    assert "notes (notes): 4 files, 4 entries: 1 error, 1 warning, 0 info, score 1.00" in lines
    issue_lines = [line for line in lines if line.startswith("notes/")]
    assert issue_lines == sorted(issue_lines)


def test_json_report_shape(kb: Path):
    report = run_kblint("validate", "notes", "--format", "json", cwd=kb.parent).json
    assert set(report) == {
        *("schema_version", "kblint_version", "kbs", "issues", "judgment", "duplicates", "curation", "summary")
    }
    assert report["schema_version"] == 1 and report["kblint_version"] == __version__
    (kbr,) = report["kbs"]
    assert set(kbr) == {"name", "path", "files", "entries", "counts", "score", "coverage"}
    assert kbr["path"] == "notes" and kbr["files"] == 4 and kbr["entries"] == 4
    assert set(kbr["coverage"]) == {"schema", "checker", "policy", "judgment", "broken", "judgment_evaluated"}
    assert set(report["judgment"]) == {
        "enabled",
        "reason",
        "evaluator",
        "calls",
        "cache_hits",
        "prompt_tokens",
        "completion_tokens",
        "not_evaluated",
    }
    assert report["judgment"]["enabled"] is False
    issue = issues_of(report, "missing_required")[0]
    assert {
        "kb_name",
        "entry_id",
        "path",
        "line",
        "column",
        "tier",
        "rule",
        "severity",
        "field",
        "message",
        "rubric_item",
        "fingerprint",
    } <= set(issue)
    assert issue["path"] == "notes/findings/undated.md" and issue["tier"] == "schema"
    assert report["summary"] == {
        "files": 4,
        "entries": 4,
        "counts": {"error": 1, "warning": 1, "info": 0},
        "fail_on": "error",
        "exit_code": 1,
        "hidden": {},
    }


def test_paths_are_relative_to_the_current_directory(kb: Path):
    report = run_kblint("validate", ".", "--format", "json", cwd=kb / "findings" if False else kb).json
    assert {i["path"] for i in report["issues"]} == {"findings/undated.md", "misplaced.md"}


@pytest.mark.parametrize("fail_on, code", [("error", 1), ("warning", 1), ("info", 1), ("never", 0)])
def test_fail_on(kb: Path, fail_on: str, code: int):
    assert run_kblint("validate", str(kb), "--fail-on", fail_on).code == code


def test_fail_on_warning_without_errors(tmp_path: Path):
    kb = write_kb(tmp_path / "k", KB_YAML, {"a.md": GOOD.format(title="A").replace("[[other]]", "[[a]]")})
    assert run_kblint("validate", str(kb)).code == 0  # only a warning (subdirectory) and info
    assert run_kblint("validate", str(kb), "--fail-on", "warning").code == 1


def test_select_and_ignore_by_rule_and_tier(kb: Path):
    report = run_kblint("validate", str(kb), "--format", "json", "--select", "missing_required").json
    assert {i["rule"] for i in report["issues"]} == {"missing_required"}
    report = run_kblint("validate", str(kb), "--format", "json", "--ignore", "schema").json
    assert report["issues"] == [] and report["summary"]["exit_code"] == 0
    result = run_kblint("validate", str(kb), "--ignore", "missing_required,subdirectory_mismatch")
    assert result.code == 0
    assert "hidden: 2 issues (2 by --ignore)" in result.stdout


def test_unknown_rule_name_is_a_usage_error(kb: Path):
    result = run_kblint("validate", str(kb), "--select", "missing_requird")
    assert result.code == 2
    assert "did you mean 'missing_required'" in result.stderr


def test_type_filter(kb: Path, tmp_path: Path):
    (kb / "person.md").write_text("---\ntitle: P\ntype: person\n---\n", encoding="utf-8")
    result = run_kblint("validate", str(kb), "--format", "json", "--type", "person")
    report = result.json
    assert {i["entry_id"] for i in report["issues"]} == {"person"}
    result = run_kblint("validate", str(kb), "--type", "person")
    assert "by --type" in result.stdout


def test_kb_name_restricts_the_run(tmp_path: Path):
    write_kb(tmp_path / "a", "name: a\n", {"x.md": "---\ntype: note\ntitle: X\ntags: [t]\n---\nTo [[b:y]].\n"})
    write_kb(tmp_path / "b", "name: b\n", {"y.md": "---\ntype: note\ntitle: Y\ntags: [t]\n---\n"})
    report = run_kblint("validate", str(tmp_path), "--format", "json", "--kb", "a").json
    assert [k["name"] for k in report["kbs"]] == ["a"]
    assert report["issues"] == []  # the link into b still resolves; b's empty body is not reported
    result = run_kblint("validate", str(tmp_path), "--kb", "nope")
    assert result.code == 2 and "no such KB" in result.stderr


def test_single_file_in_its_kb_context(kb: Path):
    report = run_kblint("validate", str(kb / "findings" / "undated.md"), "--format", "json").json
    assert report["summary"]["files"] == 1
    assert {i["rule"] for i in report["issues"]} == {"missing_required"}


def test_candidate_outside_the_kb(kb: Path, tmp_path: Path):
    cand = tmp_path / "draft.md"
    cand.write_text(
        "---\ntitle: Draft finding\ntype: finding\ntags: [a]\n---\nSee [[one]] and [[missing]].\n", encoding="utf-8"
    )
    report = run_kblint("validate", str(cand), "--kb", str(kb), "--format", "json").json
    assert report["summary"]["files"] == 1
    rules = sorted(i["rule"] for i in report["issues"])
    assert rules == ["broken_link", "missing_required"]  # no subdirectory_mismatch for a candidate


def test_stdin_candidate_replaces_existing_entry(kb: Path):
    fixed = GOOD.format(title="Undated now dated").replace("[[other]]", "[[one]]").encode()
    result = run_kblint(
        "validate", "--kb", str(kb), "--stdin", "--stdin-path", "findings/undated.md", "--format", "json", input=fixed
    )
    report = result.json
    assert result.code == 0, result.stderr
    assert report["summary"]["files"] == 1 and report["issues"] == []
    bad = b"---\ntitle: New\ntype: finding\n---\n"
    report = run_kblint(
        "validate", "--kb", str(kb), "--stdin", "--stdin-path", "new.md", "--format", "json", input=bad
    ).json
    assert sorted((i["rule"], i.get("checker")) for i in report["issues"]) == [
        ("empty_body", None),
        ("missing_required", None),
        ("orphan_entry", None),
        ("rubric_violation", "has_outlinks"),
        ("rubric_violation", "has_tags"),
        ("subdirectory_mismatch", None),
    ]
    assert all(i["path"].endswith("new.md") for i in report["issues"])


def test_stdin_needs_kb_and_path(kb: Path):
    assert run_kblint("validate", "--stdin", input=b"x").code == 2
    result = run_kblint("validate", "--stdin", "--kb", str(kb), input=b"x")
    assert result.code == 2 and "--stdin-path" in result.stderr


def test_missing_path_and_no_kb_yaml_are_exit_2(tmp_path: Path):
    result = run_kblint("validate", str(tmp_path / "nope"))
    assert result.code == 2 and "no such file or directory" in result.stderr
    (tmp_path / "loose.md").write_text("---\ntitle: x\n---\n", encoding="utf-8")
    result = run_kblint("validate", str(tmp_path))
    assert result.code == 2 and "no kb.yaml found under" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize(
    "content, line, words",
    [
        ("name: x\ntypes:\n  a: [b\n", 4, "invalid YAML"),
        ("- just\n- a list\n", 1, "must be a mapping"),
    ],
)
def test_invalid_kb_yaml_is_exit_2_with_file_and_line(tmp_path: Path, content: str, line: int, words: str):
    (tmp_path / "kb.yaml").write_text(content, encoding="utf-8")
    result = run_kblint("validate", str(tmp_path))
    assert result.code == 2
    assert f"kb.yaml:{line}: " in result.stderr and words in result.stderr
    assert "Traceback" not in result.stderr


def test_other_kbs_still_linted_when_one_kb_yaml_is_invalid(tmp_path: Path):
    write_kb(tmp_path / "good", "name: good\n", {"a.md": "---\ntype: note\ntitle: A\ntags: [t]\n---\n"})
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "kb.yaml").write_text("name: [\n", encoding="utf-8")
    result = run_kblint("validate", str(tmp_path), "--format", "json")
    assert result.code == 2
    report = result.json
    assert [k["name"] for k in report["kbs"]] == ["good"]
    assert issues_of(report, "empty_body")
    assert "bad/kb.yaml" in result.stderr


def test_discovery_skips_what_spec_skips(tmp_path: Path):
    kb = write_kb(
        tmp_path / "kb",
        "name: kb\nexclude_me: true\n",
        {
            "a.md": "---\ntype: note\ntitle: A\ntags: [t]\n---\n[[b]]\n",
            "b.md": "---\ntype: note\ntitle: B\ntags: [t]\n---\n[[a]]\n",
            "README.md": "not an entry",
            "docs/readme.MD": "not an entry either",
            ".hidden/x.md": "not an entry",
            ".draft.md": "not an entry",
            "_templates/t.md": "not an entry",
            "nested/kb.yaml": "name: nested\n",
            "nested/n.md": "---\ntype: note\ntitle: N\ntags: [t]\n---\n[[kb:a]]\n",
        },
    )
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "o.md").write_text("---\ntype: note\ntitle: O\ntags: [t]\n---\n", encoding="utf-8")
    os.symlink(tmp_path / "outside", kb / "linked")
    report = run_kblint("validate", str(kb), "--format", "json").json
    by_name = {k["name"]: k for k in report["kbs"]}
    assert by_name["kb"]["files"] == 2
    assert by_name["nested"]["files"] == 1
    assert report["issues"] == []


def test_git_ignored_files_are_skipped(tmp_path: Path):
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    kb = write_kb(
        tmp_path / "repo" / "kb",
        "name: kb\n",
        {
            "a.md": "---\ntype: note\ntitle: A\ntags: [t]\n---\n[[a-friend]]\n",
            "a-friend.md": "---\ntype: note\ntitle: F\ntags: [t]\n---\n[[a]]\n",
            "scratch/ignored.md": "no frontmatter at all",
        },
    )
    (tmp_path / "repo" / ".gitignore").write_text("scratch/\n", encoding="utf-8")
    subprocess.run(["git", "init", "-q", str(tmp_path / "repo")], check=True)
    report = run_kblint("validate", str(kb), "--format", "json").json
    assert report["summary"]["files"] == 2 and report["issues"] == []
    report = run_kblint("validate", str(kb), "--format", "json", "--no-respect-gitignore").json
    assert report["summary"]["files"] == 3
    assert [i["rule"] for i in report["issues"]] == ["parse_error"]


def test_output_file_keeps_summary_on_terminal(kb: Path, tmp_path: Path):
    out = tmp_path / "report.json"
    result = run_kblint("validate", str(kb), "--format", "json", "--output", str(out))
    assert result.code == 1
    assert '"schema_version": 1' in out.read_text(encoding="utf-8")
    assert "4 files, 4 entries" in result.stdout


def test_example_kb_in_readme_runs():
    result = run_kblint("validate", "fixtures/example")
    assert result.code == 1
    assert "harbor-investigation (fixtures/example): 11 files, 10 entries" in result.stdout


def test_python_dash_m_and_bad_option():
    result = run_kblint("validate", "--format", "xml", "fixtures/example")
    assert result.code == 2 and "--format" in result.stderr
    result = run_kblint("validate", "--fail-on", "sometimes", "fixtures/example")
    assert result.code == 2


def test_no_traceback_on_internal_error_unless_verbose(tmp_path: Path):
    # a directory named like an entry cannot be read as a file: reported, never a crash
    kb = write_kb(tmp_path / "kb", "name: kb\n", {"a.md": "---\ntype: note\ntitle: A\ntags: [t]\n---\n"})
    os.chmod(kb / "a.md", 0o000)
    try:
        result = run_kblint("validate", str(kb), "--format", "json")
    finally:
        os.chmod(kb / "a.md", 0o644)
    assert "Traceback" not in result.stderr
    if os.geteuid() != 0:  # root reads anything
        assert issues_of(result.json, "parse_error")


def test_kb_dir_alone_lints_that_kb_and_restricts_a_workspace(tmp_path: Path):
    write_kb(tmp_path / "a", "name: a\n", {"x.md": "---\ntype: note\ntitle: X\ntags: [t]\n---\nTo [[b:y]].\n"})
    write_kb(tmp_path / "b", "name: b\n", {"y.md": "---\ntype: note\ntitle: Y\ntags: [t]\n---\n"})
    alone = run_kblint("validate", "--kb", str(tmp_path / "b"), "--format", "json").json
    assert [k["name"] for k in alone["kbs"]] == ["b"]
    both = run_kblint("validate", str(tmp_path), "--kb", str(tmp_path / "a"), "--format", "json").json
    assert [k["name"] for k in both["kbs"]] == ["a"] and both["issues"] == []  # b loaded: the link resolves


def test_two_kbs_with_one_name_are_refused(tmp_path: Path):
    write_kb(tmp_path / "one" / "notes", "description: x\n", {"a.md": "---\ntitle: A\n---\n"})
    write_kb(tmp_path / "two" / "notes", "description: y\n", {"b.md": "---\ntitle: B\n---\n"})
    result = run_kblint("validate", str(tmp_path))
    assert result.code == 2 and "two KBs are named 'notes'" in result.stderr
    schema = run_kblint("schema", "notes", cwd=tmp_path)
    assert schema.code == 2 and "several KBs have that name" in schema.stderr


def test_unknown_type_filter_and_bad_stdin_paths(kb: Path):
    result = run_kblint("validate", str(kb), "--type", "findng")
    assert result.code == 2 and "did you mean 'finding'" in result.stderr
    for bad in ("/abs/x.md", "../x.md", "x.txt"):
        result = run_kblint("validate", "--kb", str(kb), "--stdin", "--stdin-path", bad, input=b"---\ntitle: X\n---\n")
        assert result.code == 2 and "--stdin-path" in result.stderr
    assert run_kblint("validate", str(kb), "--stdin-path", "a.md").code == 2


def test_a_stdin_path_kblint_does_not_lint_as_an_entry_is_refused(kb: Path, tmp_path: Path):
    (kb / "kblint.toml").write_text('exclude = ["drafts/"]\n', encoding="utf-8")
    (kb / "escape").symlink_to(tmp_path, target_is_directory=True)
    (kb / "findings" / "folder.md").mkdir()
    subprocess.run(["git", "init", "-q"], cwd=kb, check=True)
    (kb / ".gitignore").write_text("scratch/\n", encoding="utf-8")
    for path, why in (
        ("scratch/x.md", "git ignores it (.gitignore; --no-respect-gitignore lints such files)"),
        ("findings/folder.md", "a directory is there"),
        ("README.md", "a README, which documents its folder"),
        ("findings/_templates/x.md", "a template: it lies in a _templates folder"),
        ("findings/.hidden.md", "hidden: its name, or a folder's on its path, begins with '.'"),
        ("drafts/x.md", "the configuration's `exclude` leaves it out"),
        ("escape/x.md", "escape is a symbolic link, which kblint does not follow"),
    ):
        result = run_kblint(
            "validate", "--kb", str(kb), "--stdin", "--stdin-path", path, input=b"---\ntitle: X\n---\n", cwd=kb
        )
        assert (result.code, result.stderr) == (2, f"kblint: --stdin-path {path}: not an entry: {why}\n")
    good = GOOD.format(title="New").replace("[[other]]", "[[one]]").encode()
    assert run_kblint("validate", "--kb", str(kb), "--stdin", "--stdin-path", "findings/new.md", input=good).code == 0


def test_a_folder_of_a_kb_is_its_entries_in_the_context_of_the_kb():
    findings = FIXTURES / "example" / "findings"
    report = run_kblint("validate", str(findings), "--format", "json", "--no-cache", "--fail-on", "never").json
    named = [str(p) for p in sorted(findings.glob("*.md"))]
    alone = run_kblint("validate", *named, "--format", "json", "--no-cache", "--fail-on", "never").json
    assert report["issues"] == alone["issues"] != []
    assert report["summary"]["files"] == len(named) == 3
    assert {i["path"].rsplit("/", 2)[-2] for i in report["issues"]} == {"findings"}


def test_a_folder_of_a_kb_with_no_entry_says_so(tmp_path: Path):
    kb = write_kb(tmp_path / "kb", "name: k\n", {"a.md": "---\ntitle: A\n---\nBody.\n", "_templates/t.md": "x"})
    result = run_kblint("validate", "_templates", "--no-cache", cwd=kb)
    assert result.code == 0
    assert "kblint: warning: _templates holds no entry of the KB at . (hidden, excluded or empty)" in result.stderr


def test_a_candidate_run_warns_of_what_is_wrong_in_kb_yaml(kb: Path):
    (kb / "kb.yaml").write_text(
        KB_YAML + "evaluation_rubric:\n  - {text: Tagged, checker: has_tagz}\n", encoding="utf-8"
    )
    good = GOOD.format(title="New").replace("[[other]]", "[[one]]").encode()
    result = run_kblint("validate", "--kb", str(kb), "--stdin", "--stdin-path", "findings/new.md", input=good, cwd=kb)
    assert result.code == 0  # the candidate's own issues decide it
    assert result.stderr == (
        "kblint: warning: kb.yaml:9:1: error config_error rubric item 'Tagged' is not enforced: unknown checker "
        "'has_tagz' (did you mean 'has_tags'?) (the KB's own, not counted in this entry's verdict)\n"
    )


def test_short_help_and_quiet(kb: Path):
    assert run_kblint("validate", "-h").code == 0
    bad = run_kblint("validate", "--bogus")
    assert bad.code == 2 and "No such option: --bogus" in bad.stderr and "╭" not in bad.stderr
    quiet = run_kblint("validate", str(kb), "-q").stdout.splitlines()
    assert quiet and all(line.split(":")[0].endswith(".md") for line in quiet)


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="reads /proc to see the handler is in place")
def test_ctrl_c_is_exit_2_with_a_message(kb: Path):
    """SPEC §10: 2 when kblint could not do its job; an interrupted run is one (not the framework's 130)."""
    import signal
    import sys
    import time

    proc = subprocess.Popen(
        [sys.executable, "-m", "kblint", "validate", "--stdin", "--stdin-path", "new.md", "--kb", str(kb)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # noqa: PLW1509 - the child runs no threads
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:  # until Python catches SIGINT (its KeyboardInterrupt handler)
            with open(f"/proc/{proc.pid}/status") as status:
                caught = next(int(line.split()[1], 16) for line in status if line.startswith("SigCgt:"))
            if caught & (1 << (signal.SIGINT - 1)):
                break
            time.sleep(0.01)
        while time.monotonic() < deadline:  # into the command, which waits for the entry on standard input
            with open(f"/proc/{proc.pid}/wchan") as wchan:
                if "pipe" in wchan.read():
                    break
            time.sleep(0.01)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 2
    assert err.decode().strip() == "kblint: interrupted"


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_output_that_cannot_be_written_is_one_line_and_exit_2():
    """A report that cannot be written (a full disk) is said in one line, never a traceback."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    for fmt in ("text", "json"):
        with open("/dev/full", "w") as full:
            proc = subprocess.run(
                [sys.executable, "-m", "kblint", "validate", str(FIXTURES / "example"), "--format", fmt, "--no-cache"],
                stdout=full,
                stderr=subprocess.PIPE,
                env=env,
                timeout=60,
            )
        assert proc.returncode == 2
        assert proc.stderr.decode() == "kblint: cannot write the report: No space left on device\n"


def test_a_reader_that_goes_away_ends_the_run_quietly():
    proc = subprocess.Popen(
        [sys.executable, "-m", "kblint", "validate", str(FIXTURES / "example"), "--no-cache"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # as `| head -0` does
    assert proc.wait(timeout=60) == 1 and proc.stderr.read() == b""


def _lsp_message(payload: dict) -> bytes:
    body = json.dumps(payload).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


@pytest.mark.parametrize(
    ("command", "hello"),
    [
        (["server"], _lsp_message({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}})),
        (
            ["mcp", "--kb", str(FIXTURES / "example")],
            json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "initialize",
                    "params": {
                        "protocolVersion": "2025-06-18",
                        "capabilities": {},
                        "clientInfo": {"name": "t", "version": "1"},
                    },
                }
            ).encode()
            + b"\n",
        ),
    ],
)
def test_ctrl_c_ends_a_serving_server(command: list[str], hello: bytes):
    """A server reads its input in a thread that Ctrl-C does not wake: it must end anyway, exit 2."""
    import select
    import signal
    import sys

    proc = subprocess.Popen(
        [sys.executable, "-m", "kblint", *command],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # noqa: PLW1509 - the child runs no threads yet
    )
    try:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(hello)
        proc.stdin.flush()
        answered, _, _ = select.select([proc.stdout], [], [], 60)  # never wait for ever
        assert answered and proc.stdout.read1(65536)  # it answered: it is serving
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=20)
    finally:
        proc.kill()
    assert proc.returncode == 2 and err.decode().strip().endswith("kblint: interrupted")
