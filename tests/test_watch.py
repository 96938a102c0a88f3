"""`kblint validate --watch`: the first report in full, then only how the issues changed.

The loop is driven here by scripted batches of changes (each edits the KB, then names what it
touched) with the engine's real runs; one test runs the command itself with a real watcher."""

from __future__ import annotations

import io
import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import ROOT, run_kblint, write_kb

from kblint.config import resolve
from kblint.engine.run import run
from kblint.model.issue import Issue, Report
from kblint.watch import (
    NEEDS_EXTRA,
    Batch,
    Relevant,
    RunFailed,
    WatchError,
    diff,
    follow,
    prepare,
    watched_paths,
)

ADDED, MODIFIED, DELETED = 1, 2, 3  # watchfiles.Change
NOTE = "---\ntype: note\ntitle: {title}\ntags: [t]\n---\n{body}\n"


@pytest.fixture
def kb(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)  # paths are shown relative to it, and the cache lives there
    return write_kb(
        tmp_path / "kb",
        "name: kb\n",
        {"a.md": NOTE.format(title="A", body="See [[b]]."), "b.md": NOTE.format(title="B", body="See [[a]].")},
    )


def lint(*paths: Path, **flags: object) -> Callable[[], tuple[Report, list[str]]]:
    """A run as watch mode makes it: the configuration read again each time."""

    def again() -> tuple[Report, list[str]]:
        return run(prepare(resolve({"paths": [str(p) for p in paths], **flags})))

    return again


def edit(path: Path, text: str | None, change: int = MODIFIED) -> Callable[[], Batch]:
    """A step: write TEXT to PATH (None: delete it), then the batch a watcher would give."""

    def step() -> Batch:
        if text is None:
            path.unlink()
        else:
            path.write_text(text, encoding="utf-8")
        return {(change, str(path))}

    return step


def watch(
    run_: Callable[[], tuple[Report, list[str]]], steps: list[Callable[[], Batch]], *paths: Path, **flags: object
) -> tuple[int, list[str], str, str]:
    """follow() over STEPS: exit code, the blocks of standard output (the first report, then one
    per run), standard error, and what it watched."""
    out, err = io.StringIO(), io.StringIO()
    watched: list[str] = []

    def changes(paths_: list[str], relevant: Relevant, started: Callable[[], None]) -> object:
        watched.extend(paths_)
        started()
        return (step() for step in steps)

    settings = prepare(resolve({"paths": [str(p) for p in paths], **flags}))
    code = follow(settings, run_, out, err, changes=changes, clock=iter(range(0, 1000, 1)).__next__)  # type: ignore[arg-type]
    blocks = re.split(r"\n\n(?=\d\d:\d\d:\d\d changed: )", out.getvalue())
    return code, blocks, err.getvalue(), " ".join(watched)


def test_first_run_is_the_usual_report_then_each_run_prints_what_changed(kb: Path):
    plain = run_kblint("validate", "kb", cwd=kb.parent).stdout
    steps = [
        edit(kb / "b.md", NOTE.format(title="B", body="See [[a]] and [[zz]].")),  # a broken link
        edit(kb / "b.md", NOTE.format(title="B", body="\n\nMoved down.\n\nSee [[a]] and [[zz]].")),  # moved
        edit(kb / "b.md", NOTE.format(title="B", body="See [[a]].")),  # fixed
    ]
    code, blocks, err, watched = watch(lint(kb), steps, kb)
    assert code == 0
    assert blocks[0] == plain.rstrip("\n") and "kb (kb): 2 files, 2 entries" in plain
    assert re.fullmatch(r"\d\d:\d\d:\d\d changed: kb/b\.md", blocks[1].splitlines()[0])
    assert blocks[1].splitlines()[1:] == [
        "+ kb/b.md:6:15: warning broken_link Link target 'zz' not found",
        "1 issue (0 errors, 1 warning, 0 info): 1 new, 0 fixed (1.00 s)",
    ]
    assert blocks[2].splitlines()[1:] == ["no change in issues: 1 issue (0 errors, 1 warning, 0 info) (1.00 s)"]
    assert blocks[3].splitlines()[1:] == [
        "- kb/b.md:10:15: warning broken_link Link target 'zz' not found",  # where it was last
        "no issues: 0 new, 1 fixed (1.00 s)",
    ]
    assert err == "kblint: watching kb for changes (Ctrl-C stops)\n"
    assert watched == str(kb)


def test_what_fix_would_clear_is_marked_as_in_the_text_report(kb: Path):
    steps = [edit(kb / "b.md", NOTE.format(title="B", body="See [[A]]."))]  # another case of the id
    _, blocks, _, _ = watch(lint(kb), steps, kb)
    assert blocks[1].splitlines()[1:] == [
        "+ kb/b.md:6:5: info noncanonical_link [*] Link 'A' names entry 'a' by its id in another case; "
        "link it by its id",
        "1 issue (0 errors, 0 warnings, 1 info), 1 fixable with --fix: 1 new, 0 fixed (1.00 s)",
    ]


def test_new_and_deleted_files(kb: Path):
    steps = [
        edit(kb / "c.md", "---\ntype: note\ntitle: C\n---\n", ADDED),
        edit(kb / "c.md", None, DELETED),
        edit(kb / "a.md", None, DELETED),
    ]
    _, blocks, _, _ = watch(lint(kb), steps, kb)
    added = blocks[1].splitlines()[1:]
    assert "+ kb/c.md:1:1: warning empty_body Entry 'c' has an empty body" in added
    assert added[-1].endswith(f": {len(added) - 1} new, 0 fixed (1.00 s)")
    assert [line.replace("-", "+", 1) for line in blocks[2].splitlines()[1:-1]] == added[:-1]
    assert blocks[3].splitlines()[1:] == [
        "+ kb/b.md:6:5: warning broken_link Link target 'a' not found",
        "1 issue (0 errors, 1 warning, 0 info): 1 new, 0 fixed (1.00 s)",
    ]


def test_kb_yaml_changes_are_linted_again(kb: Path):
    steps = [
        edit(kb / "kb.yaml", "name: kb\ntypes:\n  note:\n    required: [title, date]\n"),
        edit(kb / "kb.yaml", "name: [\n"),  # not YAML: the KB cannot be linted
        edit(kb / "kb.yaml", "name: kb\n"),
    ]
    _, blocks, _, _ = watch(lint(kb), steps, kb)
    assert [line.split(": ", 1)[1] for line in blocks[1].splitlines()[1:3]] == [
        "error missing_required Entry 'a' is missing required field 'date'",
        "error missing_required Entry 'b' is missing required field 'date'",
    ]
    broken = blocks[2].splitlines()
    assert broken[1].startswith("+ not linted: ") and "kb/kb.yaml" in broken[1]
    # a broken kb.yaml hides its KB's issues: they are not fixed (nor new once it is mended)
    assert broken[-1] == "2 issues (2 errors, 0 warnings, 0 info), 1 KB not linted: 0 new, 0 fixed (1.00 s)"
    assert len(broken) == 3
    mended = blocks[3].splitlines()
    assert mended[1] == "- " + broken[1][2:]
    assert mended[2:4] == [f"- {line[2:]}" for line in blocks[1].splitlines()[1:3]]  # fixed by the new kb.yaml
    assert mended[-1] == "no issues: 0 new, 2 fixed (1.00 s)"


def test_the_configuration_is_read_again(kb: Path):
    (kb / "b.md").write_text(NOTE.format(title="B", body="See [[a]] and [[zz]]."), encoding="utf-8")
    config = kb.parent / "kblint.toml"
    steps = [edit(config, 'ignore = ["broken_link"]\n', ADDED), edit(config, "", MODIFIED)]
    _, blocks, _, _ = watch(lint(kb), steps, kb)
    assert blocks[1].splitlines()[1:] == [
        "- kb/b.md:6:15: warning broken_link Link target 'zz' not found",
        "no issues: 0 new, 1 gone, the configuration changed (1.00 s)",  # hidden by it, not fixed
    ]
    assert blocks[2].splitlines()[1] == "+ kb/b.md:6:15: warning broken_link Link target 'zz' not found"


def test_a_run_that_fails_is_said_and_the_next_compares_with_the_last_that_linted(kb: Path):
    runs = iter([lint(kb), _failing, lint(kb)])
    steps = [
        edit(kb / "b.md", NOTE.format(title="B", body="See [[zz]].")),
        edit(kb / "a.md", NOTE.format(title="A", body="See [[b]].")),
    ]

    def lint_in_turn() -> tuple[Report, list[str]]:
        return next(runs)()

    code, blocks, err, _ = watch(lint_in_turn, steps, kb)
    assert code == 0
    assert "kblint: the KB went away\n" in err
    assert blocks[1].splitlines()[1] == "+ kb/b.md:6:5: warning broken_link Link target 'zz' not found"


def _failing() -> tuple[Report, list[str]]:
    raise RunFailed("the KB went away")


def test_a_first_run_that_cannot_lint_exits_2(kb: Path):
    code, blocks, err, watched = watch(_failing, [], kb)
    assert (code, blocks, err, watched) == (2, [""], "kblint: the KB went away\n", "")


def test_ctrl_c_ends_watching_with_exit_0(kb: Path):
    def interrupt() -> Batch:
        raise KeyboardInterrupt

    code, blocks, _, _ = watch(lint(kb), [interrupt], kb)
    assert code == 0 and len(blocks) == 1


def test_a_watcher_that_cannot_watch_is_a_watch_error(kb: Path):
    def too_many() -> Batch:
        raise OSError(28, "OS file watch limit reached")

    with pytest.raises(WatchError, match="cannot watch the files: OS file watch limit reached"):
        watch(lint(kb), [too_many], kb)


def test_quiet_prints_only_the_issues_and_what_changed(kb: Path):
    steps = [edit(kb / "b.md", NOTE.format(title="B", body="See [[zz]].")), edit(kb / "a.md", "---\ntitle: A\n")]
    _, blocks, _, _ = watch(lint(kb, quiet=True), steps, kb, quiet=True)
    lines = "\n\n".join(blocks).splitlines()
    assert lines[0] == "+ kb/b.md:6:5: warning broken_link Link target 'zz' not found"
    assert all(line[:2] in ("+ ", "- ") for line in lines) and len(lines) > 1


def issue(rule: str, line: int, discriminator: str = "") -> Issue:
    return Issue(
        rule, "warning", "structure", f"{rule} here", "kb", None, "/kb/a.md", line, 1, discriminator=discriminator
    )


def report(*issues: Issue) -> Report:
    return Report(kbs=[], issues=list(issues))


def test_diff_pairs_issues_by_fingerprint():
    one, two = issue("x", 3), issue("x", 9)  # the same fingerprint twice
    assert not diff(report(one), report(issue("x", 7)))  # moved
    change = diff(report(one, two), report(issue("x", 9)))
    assert change.fixed == [one] and change.new == []
    change = diff(report(one), report(issue("x", 3), issue("x", 4), issue("y", 3)))
    assert [(i.rule, i.line) for i in change.new] == [("y", 3), ("x", 4)] and change.fixed == []


def test_relevant_changes(tmp_path: Path):
    root = tmp_path / "kbs"
    (root / "kb" / "notes").mkdir(parents=True)
    (root / "moved-in").mkdir()
    relevant = Relevant([str(root)], str(root / ".kblint_cache"))
    relevant.dirs = {str(root / "kb"), str(root / "kb" / "notes")}
    yes = ["kb/notes/a.md", "kb/kb.yaml", "kb/cross-kb-links.yaml", "kblint.toml", "kb/.gitignore"]
    no = [".kblint_cache/x.md", ".git/kb.yaml", "kb/.hidden/a.md", "kb/.#a.md", "kb/a.md~", "kb/4913", "kb/a.txt"]
    assert [p for p in yes if not relevant(MODIFIED, str(root / p))] == []
    assert [p for p in no if relevant(MODIFIED, str(root / p))] == []
    assert relevant(DELETED, str(root / "kb" / "notes"))  # a directory of linted files went away
    assert not relevant(DELETED, str(root / "other"))
    assert relevant(ADDED, str(root / "moved-in"))
    cache = Relevant([str(root)], str(tmp_path / "elsewhere"))
    assert not cache(MODIFIED, str(tmp_path / "elsewhere" / "a.md"))


def test_watched_paths(kb: Path, tmp_path: Path):
    (kb / "notes").mkdir()
    (kb / "notes" / "n.md").write_text(NOTE.format(title="N", body="[[a]]"), encoding="utf-8")
    config = tmp_path / "conf" / "kblint.toml"
    config.parent.mkdir()
    config.write_text("", encoding="utf-8")
    settings = resolve({"paths": ["kb/notes/n.md", "kb/a.md"]}, str(config))
    first, _ = run(settings)
    assert watched_paths(settings, first) == [str(kb), str(config)]  # the entry's KB, and the configuration
    # in a git work tree, a .gitignore above the KB is read for its files: watched too
    (tmp_path / ".git").mkdir()
    (tmp_path / ".gitignore").write_text("*.tmp\n", encoding="utf-8")
    assert watched_paths(settings, first) == [str(kb), str(config), str(tmp_path / ".gitignore")]


def test_watch_refuses_options_made_for_one_run(kb: Path):
    for option, message in [
        (["--format", "json"], "--watch prints a text report and its changes: drop --format json"),
        (["--output", "r.txt"], "--watch prints to the terminal: drop --output"),
        (["--report", "json:r.json"], "--watch prints to the terminal: drop --report"),
        (["--write-baseline", "b.json"], "--write-baseline records the issues of one run: run it without --watch"),
        (["--dry-run"], "--dry-run shows once what the judge would be sent: run it without --watch"),
    ]:
        result = run_kblint("validate", "kb", "--watch", *option, cwd=kb.parent)
        assert (result.code, result.stderr) == (2, f"kblint: {message}\n"), option
    result = run_kblint("validate", "--stdin", "--kb", "kb", "--stdin-path", "c.md", "--watch", cwd=kb.parent)
    assert result.code == 2 and "--stdin reads one entry once" in result.stderr
    (kb.parent / "kblint.toml").write_text('format = "json"\noutput = "r.json"\n', encoding="utf-8")
    settings = prepare(resolve({"paths": ["kb"]}))  # the configuration's are for single runs: they give way
    assert (settings.format, settings.output) == ("text", None)


def test_without_watchfiles_it_says_which_extra(kb: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setitem(sys.modules, "watchfiles", None)  # as if it were not installed
    result = run_kblint("validate", "kb", "--watch", cwd=kb.parent)
    assert (result.code, result.stdout, result.stderr) == (2, "", f"kblint: {NEEDS_EXTRA}\n")


def _lines(stream: io.BufferedReader, into: queue.Queue[str]) -> None:
    for raw in iter(stream.readline, b""):
        into.put(raw.decode("utf-8"))


def _wait_for(lines: queue.Queue[str], pattern: str, seconds: float) -> str | None:
    end = time.monotonic() + seconds
    while (left := end - time.monotonic()) > 0:
        try:
            line = lines.get(timeout=left)
        except queue.Empty:
            return None
        if re.search(pattern, line):
            return line
    return None


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM])
def test_the_command_watches_and_stops_on_ctrl_c(kb: Path, stop: signal.Signals):
    env = {k: v for k, v in os.environ.items() if k not in ("GITHUB_ACTIONS", "NO_COLOR", "FORCE_COLOR", "KBLINT_LLM")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "kblint", "validate", "kb", "--watch"],
        cwd=kb.parent,
        env={**env, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    out: queue.Queue[str] = queue.Queue()
    err: queue.Queue[str] = queue.Queue()
    readers = [
        threading.Thread(target=_lines, args=(s, q), daemon=True) for s, q in ((proc.stdout, out), (proc.stderr, err))
    ]
    for reader in readers:
        reader.start()
    try:
        assert _wait_for(out, r"^kb \(kb\): 2 files", 20)
        assert _wait_for(err, r"watching kb for changes", 20)
        (kb / "b.md").write_text(NOTE.format(title="B", body="See [[zz]]."), encoding="utf-8")
        assert _wait_for(out, r"^\+ kb/b\.md:6:5: warning broken_link", 10)
        proc.send_signal(stop)
        assert proc.wait(timeout=10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    for reader in readers:
        reader.join(timeout=5)
    rest = []
    while not err.empty():
        rest.append(err.get())
    assert "Traceback" not in "".join(rest) and "interrupted" not in "".join(rest)
