"""Input written by anyone (a pull request's entries, kb.yaml and file system) ends in a report or
one clear line: no traceback, no hang, nothing dropped silently, nothing read outside the KB."""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import issues_of, run_kblint, write_kb

KB_YAML = "name: notes\n"
OK = "---\ntitle: Fine entry\ntype: note\ntags: [a]\n---\nSee [[other]].\n"
OTHER = "---\ntitle: Other entry\ntype: note\ntags: [a]\n---\nSee [[ok]].\n"


def _kb(tmp_path: Path, kb_yaml: str = KB_YAML, **entries: str | bytes) -> Path:
    return write_kb(tmp_path / "notes", kb_yaml, {"ok.md": OK, "other.md": OTHER, **entries})


def _validate(kb: Path, *args: str) -> dict:
    result = run_kblint("validate", ".", "--format", "json", "--no-cache", *args, cwd=kb)
    assert result.code in (0, 1), result.stderr
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr
    return result.json


def _messages(report: dict, rule: str) -> list[str]:
    return [i["message"] for i in issues_of(report, rule)]


# ---------------------------------------------------------------------------------------------
# Patterns from kb.yaml run under a time budget.

SLOW = "^(a|a)*$"  # backtracks exponentially on a run of a's followed by another character
SLOW_VALUE = "a" * 41 + "!"
FAST_LIMITS = "[limits]\nregex_timeout = 0.05\n"


def test_a_body_pattern_past_its_budget_is_a_checker_error_and_the_run_completes(tmp_path: Path):
    kb_yaml = f'name: notes\nevaluation_rubric:\n  - text: Body has it\n    checker: body_has_pattern\n    params: {{pattern: "{SLOW}"}}\n'
    kb = _kb(tmp_path, kb_yaml, **{"slow.md": f"---\ntitle: Slow one\ntype: note\n---\n{SLOW_VALUE}\n"})
    (kb / "kblint.toml").write_text(FAST_LIMITS)
    report = _validate(kb)
    errors = {i["path"]: i["message"] for i in issues_of(report, "checker_error")}
    assert "on this entry" in errors["slow.md"]  # entries after it get the error without waiting again
    assert all(SLOW in m and "0.05 s" in m and "regex_timeout" in m for m in errors.values())


def test_a_validation_pattern_past_its_budget_is_a_checker_error_on_the_field(tmp_path: Path):
    kb_yaml = f'name: notes\nvalidation:\n  rules:\n    - field: title\n      pattern: "{SLOW}"\n'
    kb = _kb(tmp_path, kb_yaml, **{"slow.md": f"---\ntitle: {SLOW_VALUE}\ntype: note\n---\nBody.\n"})
    (kb / "kblint.toml").write_text(FAST_LIMITS)
    report = _validate(kb)
    errors = issues_of(report, "checker_error")
    assert errors and all(e["field"] == "title" and SLOW in e["message"] for e in errors)


def test_a_quick_pattern_still_decides(tmp_path: Path):
    kb_yaml = 'name: notes\nvalidation:\n  rules:\n    - field: title\n      pattern: "^[A-Z]"\n'
    kb = _kb(tmp_path, kb_yaml, **{"low.md": "---\ntitle: lower case\ntype: note\n---\nBody.\n"})
    report = _validate(kb)
    assert [i["path"] for i in issues_of(report, "invalid_field")] == ["low.md"]
    assert not issues_of(report, "checker_error")


@pytest.mark.parametrize(
    ("toml", "message"),
    [
        ('[limits]\nregex_timeout = "x"\n', "'limits.regex_timeout' must be a number"),
        ("[limits]\nmax_file_bytez = 5\n", "unknown key 'limits.max_file_bytez'"),
        ("[limits]\nmax_path_depth = -1\n", "'limits.max_path_depth' must be a whole number, 0 or more, got -1"),
        ("limits = 5\n", "'limits' must be a table ([limits]), got 5"),
        ("a = " + "[" * 100_000 + "]" * 100_000 + "\n", "invalid TOML: nested too deep to read"),
        ("[llm]\nmin_confidence = nan\n", "'llm.min_confidence' must be a number from 0 to 1, got nan"),
        (
            "[llm]\ntimeout = inf\n",
            "'llm.timeout' must be a number of seconds above 0 and under a day (86400), got inf",
        ),
    ],
)
def test_bad_limits_are_a_configuration_error(tmp_path: Path, toml: str, message: str):
    kb = _kb(tmp_path)
    (kb / "kblint.toml").write_text(toml)
    result = run_kblint("validate", ".", cwd=kb)
    assert result.code == 2
    assert message in result.stderr and "Traceback" not in result.stderr


@pytest.mark.parametrize(
    ("option", "message"),
    [
        (["--llm-timeout", "nan"], "--llm-timeout: expected a number, got nan"),
        (["--llm-min-confidence", "nan"], "--llm-min-confidence: expected a number, got nan"),
        (["--llm-timeout", "inf"], "'--llm-timeout': inf is not in the range 0.001<=x<=86399.0"),
    ],
)
def test_numbers_past_reason_are_refused(tmp_path: Path, option: list[str], message: str):
    """A request that may wait for ever, or a confidence nothing compares with, is a usage error."""
    result = run_kblint("validate", str(_kb(tmp_path)), *option)
    assert result.code == 2
    assert message in result.stderr and "Traceback" not in result.stderr


def test_configured_limits_apply(tmp_path: Path):
    kb = _kb(tmp_path, **{"big.md": "---\ntitle: Big entry\ntype: note\n---\n" + "word " * 400})
    (kb / "kblint.toml").write_text("[limits]\nmax_file_bytes = 1000\nmax_yaml_depth = 2\n")
    (kb / "deep.md").write_text("---\ntitle: Deep\ntype: note\nx: [[[1]]]\n---\nBody.\n")
    report = _validate(kb)
    by_path = {i["path"]: i["message"] for i in issues_of(report, "parse_error")}
    assert "larger than 1000 bytes (the limit)" in by_path["big.md"]
    assert "nesting deeper than 2 levels (the limit)" in by_path["deep.md"]
    # a file named on the command line that the walk leaves out is held to the same limit
    (kb / ".hidden.md").write_text("---\ntitle: Hidden\ntype: note\n---\n" + "word " * 400)
    named = run_kblint("validate", ".hidden.md", "--format", "json", "--no-cache", cwd=kb).json
    assert [i["message"] for i in issues_of(named, "parse_error")] == [
        "cannot read the file: larger than 1000 bytes (the limit)"
    ]


# ---------------------------------------------------------------------------------------------
# Links never reach outside the KBs of the run.


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """Files that exist outside the KB, beside it."""
    out = tmp_path / "outside"
    out.mkdir()
    (out / "o.md").write_text("---\ntitle: Outside\n---\nBody.\n")
    (out / "o.png").write_bytes(b"png")
    return out


@pytest.mark.parametrize(
    "link",
    [
        "[x](../outside/o.md)",
        "[x](%2e%2e/outside/o.md)",
        "[x](..%2Foutside%2Fo.md)",
        "[x](sub/../../outside/o.md)",
        "![[../outside/o.png]]",
        "[[../outside/o.md]]",
        "![[sub/../../outside/o.png]]",
    ],
)
def test_a_link_leaving_the_kb_is_broken_whatever_exists_outside(tmp_path: Path, outside: Path, link: str):
    kb = _kb(tmp_path, **{"a.md": f"---\ntitle: Links out\ntype: note\n---\n{link}\n"})
    report = _validate(kb)
    broken = [i for i in issues_of(report, "broken_link") if i["path"] == "a.md"]
    assert len(broken) == 1 and "outside the KB" in broken[0]["message"]


def test_an_absolute_embed_is_looked_up_inside_the_kb_only(tmp_path: Path, outside: Path):
    target = outside / "o.png"
    kb = _kb(tmp_path, **{"a.md": f"---\ntitle: Links out\ntype: note\n---\n![[{target}]]\n"})
    report = _validate(kb)
    assert [i["path"] for i in issues_of(report, "broken_link")] == ["a.md"]
    (kb / target.relative_to("/")).parent.mkdir(parents=True)
    (kb / target.relative_to("/")).write_bytes(b"inside")  # the same path below the KB's root resolves
    assert not issues_of(_validate(kb), "broken_link")


def test_a_symlink_inside_the_kb_leading_out_is_not_followed(tmp_path: Path, outside: Path):
    kb = _kb(
        tmp_path, **{"a.md": "---\ntitle: Links out\ntype: note\n---\n![[pic.png]] ![[dir/o.png]] ![[fine.png]]\n"}
    )
    os.symlink(outside / "o.png", kb / "pic.png")
    os.symlink(outside, kb / "dir")
    (kb / "real.png").write_bytes(b"png")
    os.symlink("real.png", kb / "fine.png")  # a symlink that stays inside is followed
    report = _validate(kb)
    assert sorted(m.split("'")[1] for m in _messages(report, "broken_link")) == ["dir/o.png", "pic.png"]


def test_links_do_not_touch_the_file_system_outside_the_kb(tmp_path: Path, outside: Path, monkeypatch):
    """Every stat and open the run makes because of a link stays below the KB's root."""
    kb = _kb(tmp_path, **{"a.md": "---\ntitle: Out\ntype: note\n---\n![[../outside/o.png]] ![[/etc/hostname]]\n"})
    touched: list[str] = []
    for name in ("stat", "lstat", "open", "readlink"):
        real = getattr(os, name)

        def spy(path, *args, _real=real, **kwargs):
            if isinstance(path, (str, bytes, os.PathLike)):
                touched.append(os.fsdecode(path))
            return _real(path, *args, **kwargs)

        monkeypatch.setattr(os, name, spy)
    _validate(kb, "-j1")
    monkeypatch.undo()
    assert touched  # the spy saw the run's own file accesses
    assert not [p for p in touched if "outside" in p or p.startswith("/etc/hostname")]


def test_an_entry_symlinked_from_outside_the_kb_is_not_read(tmp_path: Path, outside: Path):
    kb = _kb(tmp_path)
    os.symlink(outside / "o.md", kb / "leak.md")
    os.symlink("ok.md", kb / "again.md")  # inside: read as an entry
    report = _validate(kb)
    assert _messages(report, "parse_error") == ["a symlink to a file outside the KB: not read"]
    assert report["kbs"][0]["files"] == 4 and report["kbs"][0]["entries"] == 3
    # named on the command line through a symlinked folder, the file is not read either
    os.symlink(outside, kb / "out")
    named = run_kblint("validate", "out/o.md", "--format", "json", "--no-cache", cwd=kb).json
    assert _messages(named, "parse_error") == ["cannot read the file: a symlink to a file outside the KB: not read"]


# ---------------------------------------------------------------------------------------------
# File names that are not UTF-8, or that hold quotes, backslashes and control characters.

ODD_NAMES = [
    b"\xff.md",
    b"\xed\xa0\x80.md",
    b'quote"d.md',
    b"back\\slash.md",
    b"new\nline.md",
    b"tab\t.md",
    b"esc\x1b[31m.md",
]


def _unquote(shown: str) -> bytes:
    """The bytes of a file name as reports show it (git's C quoting)."""
    return ast.literal_eval("b" + shown) if shown.startswith('"') else shown.encode()


@pytest.fixture
def odd_kb(tmp_path: Path) -> Path:
    kb = _kb(tmp_path)
    for name in ODD_NAMES:
        with open(os.path.join(os.fsencode(kb), name), "wb") as fh:
            fh.write(b"---\ntitle: Odd name\ntype: note\n---\nBody.\n")
    return kb


def test_odd_names_are_quoted_reversibly_in_json(odd_kb: Path):
    report = _validate(odd_kb)
    shown = {i["path"] for i in report["issues"]}
    assert {_unquote(p) for p in shown} >= set(ODD_NAMES)
    assert report["kbs"][0]["files"] == len(ODD_NAMES) + 2
    # an entry named after its file shows the bytes that are not UTF-8 as the path does: no lone surrogate
    assert {i["entry_id"] for i in report["issues"] if i["path"] == '"\\377.md"'} == {"\\377"}
    json.dumps(report, ensure_ascii=False).encode("utf-8")


@pytest.mark.parametrize("fmt", ["text", "github", "junit", "sarif"])
def test_odd_names_in_every_format(odd_kb: Path, fmt: str):
    result = run_kblint("validate", ".", "--format", fmt, "--no-cache", cwd=odd_kb)
    assert result.code == 0 and not result.stderr
    result.stdout.encode("utf-8")  # the report is valid UTF-8 text
    if fmt == "sarif":
        uris = {
            r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in result.json["runs"][0]["results"]
        }
        from urllib.parse import unquote_to_bytes

        assert {unquote_to_bytes(u) for u in uris} >= set(ODD_NAMES)
    elif fmt == "github":  # an annotation names the file itself, in the escapes of workflow commands
        assert "file=new%0Aline.md," in result.stdout and 'file=quote"d.md,' in result.stdout
        # a name that cannot be written as it is, as git shows it
        assert 'file="\\377.md",' in result.stdout and 'file="esc\\033[31m.md",' in result.stdout
        assert "\x1b" not in result.stdout
    elif fmt == "junit":  # a testcase per entry, named by its path in the KB as reports show it
        import xml.etree.ElementTree as ET

        names = {case.get("name") for case in ET.fromstring(result.stdout.encode("utf-8")).iter("testcase")}
        assert {_unquote(name) for name in names} >= set(ODD_NAMES)
    else:
        assert '"\\377.md"' in result.stdout and '"new\\nline.md"' in result.stdout


def test_an_entry_named_after_a_file_that_is_not_utf8_has_no_lone_surrogate_in_any_listing(odd_kb: Path):
    verdicts = run_kblint("validate", ".", "--format", "verdicts", "--no-cache", cwd=odd_kb).stdout
    assert '"candidate_id": "\\\\377"' in verdicts and "\\udc" not in verdicts and "\udcff" not in verdicts


def test_a_markdown_link_escaping_bytes_that_are_no_utf8_finds_the_file_so_named(tmp_path: Path):
    kb = _kb(tmp_path, **{"a.md": "---\ntitle: A\ntype: note\n---\nSee [b](%ff%fe.md) and [c](%ff%fd.md).\n"})
    (kb / os.fsdecode(b"\xff\xfe.md")).write_text("---\ntitle: B\ntype: note\n---\nSee [a](a.md).\n")
    report = _validate(kb)
    assert _messages(report, "broken_link") == ["Link target '\\377\\375' not found"]  # as git quotes it


def test_a_baseline_of_odd_names_is_written_and_read(odd_kb: Path):
    first = run_kblint("validate", ".", "--write-baseline", "base.json", "--no-cache", cwd=odd_kb)
    assert first.code == 0, first.stderr
    json.loads((odd_kb / "base.json").read_text(encoding="utf-8"))
    again = run_kblint("validate", ".", "--baseline", "base.json", "--format", "json", "--no-cache", cwd=odd_kb)
    assert again.code == 0 and again.json["issues"] == []


# ---------------------------------------------------------------------------------------------
# Only regular files are read.


def test_files_that_are_no_regular_files_are_counted_and_reported(tmp_path: Path):
    kb = _kb(tmp_path)
    os.symlink("nowhere.md", kb / "dangling.md")
    os.symlink("loop-b.md", kb / "loop-a.md")
    os.symlink("loop-a.md", kb / "loop-b.md")
    os.mkfifo(kb / "fifo.md")
    os.symlink("/dev/zero", kb / "zero.md")
    report = _validate(kb)
    by_path = {i["path"]: i["message"] for i in issues_of(report, "parse_error")}
    assert set(by_path) == {"dangling.md", "loop-a.md", "loop-b.md", "fifo.md", "zero.md"}
    assert "symlink loop" in by_path["loop-a.md"] and "FIFO" in by_path["fifo.md"]
    assert report["kbs"][0]["files"] == 7


@pytest.mark.parametrize("named", ["fifo.md", "zero.md"])
def test_a_special_file_named_on_the_command_line_is_not_read(tmp_path: Path, named: str):
    kb = _kb(tmp_path)
    os.mkfifo(kb / "fifo.md")
    os.symlink("/dev/zero", kb / "zero.md")
    result = run_kblint("validate", named, "--format", "json", "--no-cache", cwd=kb)
    assert result.code == 1
    assert [i["rule"] for i in result.json["issues"]] == ["parse_error"]


@pytest.mark.parametrize(
    ("flag", "expected"),
    [("--baseline", "--baseline fifo: not a regular file (a FIFO)"), ("--config", "--config fifo: not a regular file")],
)
def test_a_fifo_given_as_an_input_file_is_one_line(tmp_path: Path, flag: str, expected: str):
    kb = _kb(tmp_path)
    os.mkfifo(kb / "fifo")
    result = run_kblint("validate", ".", flag, "fifo", "--no-cache", cwd=kb)
    assert result.code == 2
    assert expected in result.stderr and len(result.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("flag", ["--output", "--report=json:", "--write-baseline"])
def test_a_fifo_no_process_reads_given_to_write_into_is_one_line_not_a_wait(tmp_path: Path, flag: str):
    kb = _kb(tmp_path)
    os.mkfifo(tmp_path / "out")
    option = [flag + str(tmp_path / "out")] if flag.endswith(":") else [flag, str(tmp_path / "out")]
    result = run_kblint("validate", ".", *option, "--no-cache", cwd=kb)
    assert result.code == 2
    assert result.stderr.endswith("out: a FIFO that no process reads\n") and len(result.stderr.splitlines()) == 1


def test_git_runs_no_program_the_repositorys_config_names(tmp_path: Path):
    kb = _kb(tmp_path)
    marker = tmp_path / "ran"
    subprocess.run(["git", "init", "-q"], cwd=kb, check=True)
    subprocess.run(["git", "config", "core.fsmonitor", f"touch {marker}; false"], cwd=kb, check=True)
    assert _validate(kb)["summary"]["entries"] == 2
    assert not marker.exists()


def test_a_socket_given_to_write_into_is_one_line(tmp_path: Path):
    import socket

    kb = _kb(tmp_path)
    with socket.socket(socket.AF_UNIX) as listening:
        listening.bind(str(tmp_path / "sock"))
        result = run_kblint("validate", ".", "--output", str(tmp_path / "sock"), "--no-cache", cwd=kb)
    assert (result.code, result.stderr) == (2, f"kblint: --output {tmp_path / 'sock'}: a socket, not a file\n")


def test_a_fifo_as_kb_yaml_is_a_clear_error(tmp_path: Path):
    kb = tmp_path / "notes"
    kb.mkdir()
    os.mkfifo(kb / "kb.yaml")
    (kb / "a.md").write_text(OK)
    result = run_kblint("validate", ".", "--no-cache", cwd=kb)
    assert result.code == 2
    assert "kb.yaml" in result.stderr and "not a regular file (a FIFO)" in result.stderr


def test_deep_directories_are_a_parse_error_past_the_limit(tmp_path: Path):
    kb = _kb(tmp_path)
    deep = kb
    for _ in range(150):
        deep = deep / "d"
    deep.mkdir(parents=True)
    (deep / "deep.md").write_text(OK)
    report = _validate(kb)
    assert any("directories deep (the limit)" in m for m in _messages(report, "parse_error"))


def test_kbs_deeper_than_the_limit_are_not_looked_for_without_a_word(tmp_path: Path):
    (tmp_path / "kblint.toml").write_text("[limits]\nmax_path_depth = 2\n")
    write_kb(tmp_path / "shallow", "name: shallow\n", {"a.md": OK})
    write_kb(tmp_path / "x" / "y" / "z" / "deep", "name: deep\n", {"a.md": OK})
    result = run_kblint("validate", ".", "--format", "json", "--no-cache", cwd=tmp_path)
    assert [kb["name"] for kb in result.json["kbs"]] == ["shallow"]
    assert result.stderr == "kblint: warning: x/y/z is more than 2 levels deep (max_path_depth): not searched for KBs\n"
    # a KB's own deep directories are its walk's to report: no warning for them
    (tmp_path / "x").rename(tmp_path / "shallow" / "x")
    again = run_kblint("validate", ".", "--format", "json", "--no-cache", cwd=tmp_path)
    assert again.stderr == ""


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any file")
def test_an_unreadable_directory_is_counted_and_reported(tmp_path: Path):
    kb = _kb(tmp_path, **{"sub/a.md": OK})
    os.chmod(kb / "sub", 0)
    try:
        report = _validate(kb)
    finally:
        os.chmod(kb / "sub", stat.S_IRWXU)
    assert any("cannot read the directory" in m for m in _messages(report, "parse_error"))


# ---------------------------------------------------------------------------------------------
# Cache faults never change a result.


def _many(tmp_path: Path, n: int = 1500) -> Path:
    entries = {
        f"e{i}.md": f"---\ntitle: Entry {i}\ntype: note\ntags: [t]\n---\nSee [[e{(i + 1) % n}]] [[gone{i % 7}]].\n"
        for i in range(n)
    }
    return write_kb(tmp_path / "many", KB_YAML, entries)


def _report(kb: Path, *args: str) -> str:
    result = run_kblint("validate", ".", "--format", "json", *args, cwd=kb)
    assert result.code == 0, result.stderr
    return result.stdout


def test_an_unusable_cache_directory_is_one_warning(tmp_path: Path):
    kb = _kb(tmp_path)
    (kb / "afile").write_text("")
    result = run_kblint("validate", ".", "--cache-dir", "afile/cache", cwd=kb)
    assert result.code == 0
    assert result.stderr.count("warning") == 1 and "running without it" in result.stderr
    run_kblint("validate", ".", "--cache-dir", "cache", cwd=kb)  # a cache kblint made
    shutil.rmtree(kb / "cache" / "results")
    shutil.rmtree(kb / "cache" / "runs")
    (kb / "cache" / "results").write_text("")  # where the cache puts its results: a file is in the way
    result = run_kblint("validate", ".", "--cache-dir", "cache", cwd=kb)
    assert result.code == 0
    assert (
        f"the cache cannot be used ({os.path.join('cache', 'results')}: " in result.stderr
    )  # that file, not the cache


def test_an_unwritable_cache_directory_is_named_rather_than_a_temporary_file(tmp_path: Path, monkeypatch):
    from kblint.infra import resultcache

    def refused(dir: str, suffix: str) -> tuple[int, str]:
        raise PermissionError(13, "Permission denied", os.path.join(dir, "tmp8sj2k1.tmp"))

    monkeypatch.setattr(resultcache.tempfile, "mkstemp", refused)
    results = os.path.join(str(tmp_path), "results")
    with pytest.raises(resultcache.CacheUnusable, match=f"^{re.escape(results)}: Permission denied$"):
        resultcache.KBResultCache(str(tmp_path), "key")
    with pytest.raises(resultcache.CacheUnusable, match=f"^{re.escape(os.path.join(str(tmp_path), 'runs'))}: "):
        resultcache.save_run(str(tmp_path), "key", resultcache.StoredRun({}, []))


def test_a_damaged_cache_is_one_warning_and_rebuilt(tmp_path: Path):
    kb = _many(tmp_path, 50)
    expected = _report(kb, "--no-cache")
    _report(kb)
    for path in (kb / ".kblint_cache").rglob("*.jsonl"):
        path.write_bytes(os.urandom(200))
    result = run_kblint("validate", ".", "--format", "json", cwd=kb)
    assert result.stdout == expected and result.stderr.count("was damaged") == 1
    again = run_kblint("validate", ".", "--format", "json", cwd=kb)
    assert again.stdout == expected and not again.stderr


def test_a_run_killed_mid_way_does_not_change_the_next(tmp_path: Path):
    import signal
    import sys
    import time

    kb = _many(tmp_path)
    expected = _report(kb, "--no-cache")
    proc = subprocess.Popen(
        [sys.executable, "-m", "kblint", "validate", ".", "-j2"],
        cwd=kb,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    results = kb / ".kblint_cache" / "results"
    deadline = time.monotonic() + 60
    while not (results.is_dir() and any(results.iterdir())) and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.001)  # until the run is writing its cache
    proc.send_signal(signal.SIGKILL)
    assert proc.wait() == -signal.SIGKILL  # killed, not finished
    assert _report(kb) == expected
    assert _report(kb) == expected  # and the cache it wrote


def test_two_runs_writing_one_cache_at_once(tmp_path: Path):
    import sys

    kb = _many(tmp_path)
    expected = _report(kb, "--no-cache")
    command = [sys.executable, "-m", "kblint", "validate", ".", "--format", "json"]
    procs = [subprocess.Popen(command, cwd=kb, stdout=subprocess.PIPE, stderr=subprocess.PIPE) for _ in range(3)]
    outputs = [p.communicate(timeout=120) for p in procs]
    assert all(out.decode() == expected and not err for out, err in outputs)
    assert _report(kb) == expected


@pytest.mark.parametrize("fifo", [".gitignore", "sub/.gitignore", ".git/info/exclude"])
def test_a_fifo_git_would_block_on_is_a_warning_and_the_files_are_linted(tmp_path: Path, fifo: str):

    kb = _kb(tmp_path, **{"sub/b.md": OK})
    subprocess.run(["git", "init", "-q", str(kb)], check=True)
    (kb / fifo).parent.mkdir(parents=True, exist_ok=True)
    (kb / fifo).unlink(missing_ok=True)
    os.mkfifo(kb / fifo)
    result = run_kblint("validate", ".", "--format", "json", "--no-cache", cwd=kb)
    assert result.code == 0
    assert f"{fifo} is not a regular file: files git ignores are linted too" in result.stderr
    assert result.json["kbs"][0]["files"] == 3


# ---------------------------------------------------------------------------------------------
# YAML that nests too deep or expands too far.


def _bomb(levels: int, key: str) -> str:
    lines = ["a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, levels)]
    return "\n".join(lines) + f"\n{key}: *a{levels - 1}\n"


@pytest.mark.parametrize("depth", [101, 999, 30_000])
@pytest.mark.parametrize("shape", ["flow", "block"])
def test_frontmatter_nested_too_deep_is_a_parse_error(tmp_path: Path, depth: int, shape: str):
    if shape == "flow":
        value = "[" * depth + "]" * depth
    else:
        value = "\n" + "".join(" " * i + "-\n" for i in range(1, min(depth, 1500)))
    kb = _kb(tmp_path, **{"deep.md": f"---\ntitle: Deep\ntype: note\ntags: {value}\n---\nBody.\n"})
    report = _validate(kb)
    (message,) = _messages(report, "parse_error")
    assert "nesting deeper than 100 levels (the limit)" in message


@pytest.mark.parametrize("option", ["--write-baseline", "--output", "--report"])
@pytest.mark.parametrize("name", ["ok.md", "new.md", "kb.yaml", "link-to-ok.json"])
def test_a_report_or_baseline_is_never_written_over_a_file_of_a_kb(tmp_path: Path, option: str, name: str):
    """Not over an entry (named through a symlink too), nor where an entry would be read, nor
    over kb.yaml."""
    kb = _kb(tmp_path)
    os.symlink(kb / "ok.md", tmp_path / "link-to-ok.json")
    target = kb / name if name != "link-to-ok.json" else tmp_path / name
    given = f"json:{target}" if option == "--report" else str(target)
    result = run_kblint("validate", ".", option, given, cwd=kb)
    assert result.code == 2 and "is a file of a KB: kblint writes no report or baseline over it" in result.stderr
    assert (kb / "ok.md").read_text() == OK and (kb / "kb.yaml").read_text() == KB_YAML
    assert not (kb / "new.md").exists()


def test_a_report_is_not_written_over_a_file_with_other_names(tmp_path: Path):
    """A hard link to an entry outside the KB: writing it would write the entry."""
    kb = _kb(tmp_path)
    os.link(kb / "ok.md", tmp_path / "report.json")
    result = run_kblint("validate", ".", "--output", str(tmp_path / "report.json"), cwd=kb)
    assert result.code == 2 and "has other names (hard links)" in result.stderr
    assert (kb / "ok.md").read_text() == OK


def test_cache_clear_says_when_it_could_not_remove(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    kb = _kb(tmp_path)
    run_kblint("validate", ".", "--cache-dir", "cache", cwd=kb)
    monkeypatch.setattr(shutil, "rmtree", lambda *args, **kwargs: None)  # as a read-only disk leaves them
    result = run_kblint("cache", "clear", "--cache-dir", "cache", cwd=kb)
    assert result.code == 2 and "could not remove results, runs (permissions?)" in result.stderr


def test_a_message_that_quotes_a_huge_value_is_cut(tmp_path: Path):
    kb = _kb(tmp_path, **{"long.md": "---\ntitle: Long\ntype: note\n---\n[[" + "x" * 100_000 + "]]\n"})
    (message,) = _messages(_validate(kb), "broken_link")
    assert message.startswith("Link target 'xxx") and message.endswith("…") and len(message) == 1000


def test_a_number_too_long_to_read_is_a_parse_error_in_kblints_words(tmp_path: Path):
    kb = _kb(tmp_path, **{"long.md": "---\ntitle: Long\ntype: note\nn: " + "9" * 100_000 + "\n---\nBody.\n"})
    (message,) = _messages(_validate(kb), "parse_error")
    assert message == f"invalid YAML in frontmatter: a number of more than {sys.get_int_max_str_digits()} digits"


@pytest.mark.parametrize("levels", [6, 9])
def test_an_alias_bomb_in_an_entry_is_a_parse_error(tmp_path: Path, levels: int):
    kb = _kb(tmp_path, **{"bomb.md": f"---\ntitle: Bomb\ntype: note\n{_bomb(levels, 'tags')}---\nBody.\n"})
    report = _validate(kb)
    (message,) = _messages(report, "parse_error")
    assert message.endswith("aliases expand to more than 100000 nodes (the limit)")


def test_an_alias_bomb_in_kb_yaml_is_one_line(tmp_path: Path):
    kb = _kb(tmp_path, "name: notes\n" + _bomb(9, "evaluation_rubric"))
    result = run_kblint("validate", ".", "--no-cache", cwd=kb)
    assert result.code == 2
    assert result.stderr.strip().endswith("aliases expand to more than 100000 nodes (the limit)")
    assert len(result.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("name", ["kb.yaml", "cross-kb-links.yaml"])
def test_a_kb_yaml_over_the_size_limit_is_not_read(tmp_path: Path, name: str):
    kb = _kb(tmp_path)
    at = kb / name
    text = at.read_text() if at.exists() else ""
    at.write_text(text + "# " + "y" * (5 * 1024 * 1024) + "\n")  # the default limit, which kb.yaml keeps
    result = run_kblint("validate", ".", "--no-cache", "--format", "json", cwd=kb)
    problem = "cannot read: larger than 5 MB (the limit)"
    if name == "kb.yaml":
        assert result.code == 2 and problem in result.stderr and len(result.stderr.strip().splitlines()) == 1
    else:
        assert [i["message"] for i in issues_of(result.json, "config_error")] == [problem]


def test_a_small_alias_is_fine(tmp_path: Path):
    kb = _kb(tmp_path, **{"alias.md": "---\ntitle: Alias\ntype: note\nx: &x [a, b]\ntags: *x\n---\nSee [[ok]].\n"})
    report = _validate(kb)
    assert not issues_of(report, "parse_error")


# ---------------------------------------------------------------------------------------------
# Text from an entry or kb.yaml never reaches a terminal as control characters.

ESCAPES = '---\ntitle: "\\e[31mRed\\e[0m title"\ntype: note\nlinks: ["\\e]0;pwned\\a", "two\\nlines"]\n---\nBody.\n'


@pytest.mark.parametrize("fmt", ["text", "github", "json"])
def test_control_characters_from_an_entry_are_escaped(tmp_path: Path, fmt: str):
    kb = _kb(tmp_path, 'name: "kb\\e[2J"\n', **{"esc.md": ESCAPES})
    result = run_kblint("validate", ".", "--format", fmt, "--no-cache", cwd=kb)
    assert result.code == 1
    assert "\x1b" not in result.stdout and "\x07" not in result.stdout
    shown = result.stdout if fmt != "json" else "\n".join(i["message"] for i in result.json["issues"])
    assert "\\x1b]0;pwned\\x07" in shown
    if fmt == "text":
        assert "Link target 'two\\nlines' not found" in result.stdout


@pytest.mark.parametrize("command", [["validate", "."], ["checkers", "--kb", "."], ["schema", "."], ["migrate", "."]])
@pytest.mark.parametrize(
    ("kb_yaml", "why"),
    [
        ("fifo", "not a regular file (a FIFO)"),
        ("bomb", "aliases expand"),
        ("directory", "not a regular file (a directory)"),
        ("loop", "a symlink loop"),
        ("outside", "a symlink to a file outside the KB: not read"),
    ],
)
def test_every_command_meets_a_bad_kb_yaml_with_one_line(
    tmp_path: Path, outside: Path, command: list[str], kb_yaml: str, why: str
):
    kb = tmp_path / "notes"
    kb.mkdir()
    (kb / "a.md").write_text(OK)
    _bad_kb_yaml(kb / "kb.yaml", kb_yaml, outside)
    result = run_kblint(*command, cwd=kb)
    assert result.code == 2
    (line,) = result.stderr.strip().splitlines()
    assert "kb.yaml" in line and why in line


def _bad_kb_yaml(path: Path, kind: str, outside: Path) -> None:
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "bomb":
        path.write_text("name: notes\n" + _bomb(9, "evaluation_rubric"))
    elif kind == "directory":
        path.mkdir()
    elif kind == "loop":
        os.symlink(path.name, path)
    else:
        (outside / "kb.yaml").write_text("name: elsewhere\n")
        os.symlink(outside / "kb.yaml", path)


@pytest.mark.parametrize("kind", ["directory", "loop"])
def test_a_kb_whose_kb_yaml_cannot_be_read_is_not_dropped_from_a_folder_of_kbs(
    tmp_path: Path, outside: Path, kind: str
):
    _kb(tmp_path / "all")
    bad = tmp_path / "all" / "bad"
    bad.mkdir()
    (bad / "a.md").write_text(OK)
    _bad_kb_yaml(bad / "kb.yaml", kind, outside)
    result = run_kblint("validate", ".", "--format", "json", "--no-cache", cwd=tmp_path / "all")
    assert result.code == 2
    assert [kb["path"] for kb in result.json["kbs"]] == ["notes"]
    assert "bad/kb.yaml" in json.dumps(result.json["summary"]["errors"])


# ---------------------------------------------------------------------------------------------
# Found by review: symlink spellings, NUL bytes, compile bombs, many slow patterns, cache symlinks.


def test_an_absolute_symlink_through_a_symlinked_directory_and_dotdot_is_outside(tmp_path: Path, outside: Path):
    kb = _kb(tmp_path)
    (outside / "deep").mkdir()
    os.symlink(outside / "deep", kb / "sub")
    os.symlink(f"{kb}/sub/../o.md", kb / "a.md")  # the kernel resolves sub first, then ..: outside
    report = _validate(kb)
    assert _messages(report, "parse_error") == ["a symlink to a file outside the KB: not read"]


def test_a_nul_in_a_link_is_a_broken_link(tmp_path: Path):
    kb = _kb(tmp_path, **{"nul.md": "---\ntitle: Nul\ntype: note\n---\n![[a\x00b.png]]\n"})
    assert [i["path"] for i in issues_of(_validate(kb), "broken_link")] == ["nul.md"]


@pytest.mark.parametrize(
    "pattern", ["(?:a{4294967294})", "((((a{100}){100}){100}){100})", "(" * 5000 + "a" + ")" * 5000]
)
def test_a_pattern_too_large_to_compile_is_a_config_error(tmp_path: Path, pattern: str):
    kb_yaml = f"name: notes\nvalidation:\n  rules:\n    - field: title\n      pattern: '{pattern}'\n"
    report = _validate(_kb(tmp_path, kb_yaml))
    (message,) = _messages(report, "config_error")
    assert "invalid pattern" in message and "(the limit)" in message


def test_many_slow_patterns_cost_a_few_budgets_in_all(tmp_path: Path):
    rules = "".join(f"    - field: title\n      pattern: '^(a|a)*(?#{n})$'\n" for n in range(40))
    kb = _kb(
        tmp_path,
        f"name: notes\nvalidation:\n  rules:\n{rules}",
        **{"slow.md": f"---\ntitle: {SLOW_VALUE}\ntype: note\n---\nB.\n"},
    )
    (kb / "kblint.toml").write_text(FAST_LIMITS)
    report = _validate(kb, "-j1")
    errors = [i["message"] for i in issues_of(report, "checker_error") if i["path"] == "slow.md"]
    assert len(errors) == 40  # every rule is reported on the slow entry, none dropped silently
    assert 0 < sum("on this entry" in m for m in errors) <= 6  # five budgets in all, then no more runs
    assert sum("was not run" in m for m in errors) >= 34


@pytest.mark.parametrize("value", ["0", "-1", "nan", "inf"])
def test_a_regex_timeout_must_be_a_positive_number_of_seconds(tmp_path: Path, value: str):
    kb = _kb(tmp_path)
    (kb / "kblint.toml").write_text(f"[limits]\nregex_timeout = {value}\n")
    result = run_kblint("validate", ".", cwd=kb)
    assert result.code == 2 and "'limits.regex_timeout' must be a number of seconds above 0" in result.stderr


def test_a_suppression_after_a_stray_comment_opening_still_counts(tmp_path: Path):
    body = "Write `<!--` to open a comment.\n<!-- kblint-disable orphan_entry -->\n"
    kb = _kb(tmp_path, **{"lonely.md": f"---\ntitle: Lonely\ntype: note\ntags: [a]\n---\n{body}"})
    assert "lonely.md" not in [i["path"] for i in issues_of(_validate(kb), "orphan_entry")]


def test_a_kb_name_with_ordinary_unicode_is_kept(tmp_path: Path):
    kb = _kb(tmp_path, 'name: "کتاب\u200cخانه"\n')
    report = _validate(kb)
    assert report["kbs"][0]["name"] == "کتاب\u200cخانه" and not issues_of(report, "config_error")


@pytest.mark.parametrize("name", ["kb.yaml", "cross-kb-links.yaml"])
def test_kb_files_symlinked_from_outside_are_not_read(tmp_path: Path, outside: Path, name: str):
    (outside / "secret.yaml").write_text("name: SECRET_TOKEN\nlinks: [{source: ok, target: SECRET_TOKEN}]\n")
    kb = _kb(tmp_path)
    (kb / name).unlink(missing_ok=True)
    os.symlink(outside / "secret.yaml", kb / name)
    result = run_kblint("validate", ".", "--format", "json", "--no-cache", cwd=kb)
    assert "SECRET_TOKEN" not in result.stdout + result.stderr
    assert "a symlink to a file outside the KB: not read" in result.stdout + result.stderr


def test_a_named_file_symlinked_from_outside_is_not_read(tmp_path: Path, outside: Path):
    kb = _kb(tmp_path)
    (kb / ".hidden").mkdir()
    os.symlink(outside / "o.md", kb / ".hidden" / "x.md")
    result = run_kblint("validate", ".hidden/x.md", "--format", "json", "--no-cache", cwd=kb)
    (issue,) = result.json["issues"]
    assert issue["rule"] == "parse_error" and issue["message"].endswith("a symlink to a file outside the KB: not read")


@pytest.mark.parametrize(
    ("linked", "said"),
    [(".kblint_cache", "is a symlink"), (".kblint_cache/runs", "holds files kblint did not write")],
)
def test_a_symlinked_cache_directory_is_not_used(tmp_path: Path, linked: str, said: str):
    kb = _kb(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    precious = [elsewhere / f"{n:040x}.jsonl" for n in range(12)]
    for path in precious:
        path.write_text("mine")
    (kb / linked).parent.mkdir(parents=True, exist_ok=True)
    os.symlink(elsewhere, kb / linked)
    result = run_kblint("validate", ".", cwd=kb)
    assert result.code == 0 and said in result.stderr
    assert all(p.read_text() == "mine" for p in precious) and sorted(elsewhere.iterdir()) == precious


def test_an_entry_on_standard_input_over_the_limit_is_a_parse_error(tmp_path: Path):
    kb = _kb(tmp_path)
    (kb / "kblint.toml").write_text("[limits]\nmax_file_bytes = 100\n")
    data = b"---\ntitle: Big\n---\n" + b"word " * 1000
    result = run_kblint(
        "validate", "--stdin", "--kb", ".", "--stdin-path", "n.md", "--format", "json", cwd=kb, input=data
    )
    (issue,) = result.json["issues"]
    assert issue["rule"] == "parse_error" and "larger than 100 bytes (the limit)" in issue["message"]


@pytest.mark.parametrize("max_depth", [100, 999])
def test_nesting_past_libyamls_own_limit_reads_as_kblints_limit_when_that_is_lower(max_depth: int):
    from kblint.yamlread import Limits, YamlError, check_limits

    text = "tags: " + "[" * 30_000 + "]" * 30_000
    with pytest.raises(YamlError) as raised:
        check_limits(text, Limits(max_depth=max_depth))
    assert raised.value.reason == f"nesting deeper than {max_depth} levels (the limit)"
    assert raised.value.line == 1 and raised.value.column > 1


def test_nesting_within_kblints_limit_never_reads_as_past_it():
    from kblint.yamlread import Limits, YamlError, check_limits

    text = "tags: " + "[" * 1_500 + "]" * 1_500
    try:
        check_limits(text, Limits(max_depth=5_000))
    except YamlError as exc:  # a libyaml with a limit of its own stops first, and that is said
        assert exc.reason == "nesting deeper than 999 levels (the YAML reader's own limit)"


@pytest.mark.parametrize("shape", ["flow", "block"])
def test_a_kb_yaml_nested_past_libyamls_own_limit_reads_as_kblints_limit(tmp_path: Path, shape: str):
    if shape == "flow":
        nested = "x: " + "[" * 1_500 + "]" * 1_500 + "\n"
    else:
        nested = "x:\n" + "".join("  " * (i + 1) + "y:\n" for i in range(1_500))
    kb = _kb(tmp_path, "name: notes\n" + nested)
    result = run_kblint("validate", ".", "--no-cache", cwd=kb)
    assert result.code == 2 and result.stderr.strip().endswith("nesting deeper than 100 levels (the limit)")
