"""Safe fixes: `kblint validate --fix` and `--diff`.

Each case under fixtures/fixes/<case>/ is a KB as it is `before/`, and the files `--fix` changes as
they must be `after/` (byte for byte: comments, quoting, key order and line ends kept); every other
file must stay as it was. The diff `--diff` prints is applied with `patch`, as a user would.
"""

from __future__ import annotations

import difflib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
from conftest import FIXTURES, examples, issues_of, run_kblint, write_kb
from hypothesis import given, settings
from hypothesis import strategies as st

FIXES = FIXTURES / "fixes"
CASES = sorted(p.name for p in FIXES.iterdir() if p.is_dir())
# case → (issues fixed, files changed)
# chained: the type a missing_type fix writes makes a value of that type's fields fixable
COUNTS = {
    "chained": (2, 1),
    "crlf": (3, 1),
    "date": (2, 1),
    "links": (6, 2),
    "select": (5, 2),
    "table": (1, 1),
    "type": (2, 2),
}


def _files(root: Path) -> dict[str, bytes]:
    """Every file below ROOT by its relative path (the cache kblint keeps there left out)."""
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".kblint_cache" not in p.relative_to(root).parts
    }


def _before(case: str, tmp_path: Path) -> Path:
    kb = tmp_path / case
    shutil.copytree(FIXES / case / "before", kb)
    return kb


def _after(case: str) -> dict[str, bytes]:
    files = _files(FIXES / case / "before")
    files.update(_files(FIXES / case / "after"))
    return files


def _fixed(count: int, files: int) -> str:
    return f"kblint: fixed {count} issue{'' if count == 1 else 's'} in {files} file{'' if files == 1 else 's'}\n"


def test_every_case_has_its_counts():
    assert sorted(COUNTS) == CASES


@pytest.mark.parametrize("case", CASES)
def test_fix_writes_the_after_files_and_reports_what_is_left(case: str, tmp_path: Path):
    kb = _before(case, tmp_path)
    first = run_kblint("validate", ".", cwd=kb, env={"NO_COLOR": "1"})  # fills the result cache
    assert "[*]" in first.stdout
    result = run_kblint("validate", ".", "--fix", cwd=kb, env={"NO_COLOR": "1"})
    assert result.code in (0, 1), result.stderr
    assert result.stderr == _fixed(*COUNTS[case])
    assert _files(kb) == _after(case)
    # the report is of the files as fixed (not of the cached results of the files they replaced)
    assert "[*]" not in result.stdout and "noncanonical_link" not in result.stdout


@pytest.mark.parametrize("case", CASES)
def test_a_second_fix_changes_nothing(case: str, tmp_path: Path):
    kb = _before(case, tmp_path)
    run_kblint("validate", ".", "--fix", "--no-cache", cwd=kb)
    again = run_kblint("validate", ".", "--fix", "--no-cache", cwd=kb)
    assert again.stderr == _fixed(0, 0)
    assert _files(kb) == _after(case)
    diff = run_kblint("validate", ".", "--diff", "--no-cache", cwd=kb)
    assert (diff.code, diff.stdout) == (0, "")


@pytest.mark.parametrize("case", CASES)
def test_diff_prints_what_fix_would_write_and_writes_nothing(case: str, tmp_path: Path):
    kb = _before(case, tmp_path)
    result = run_kblint("validate", ".", "--diff", "--no-cache", cwd=kb)
    assert result.code == 1
    count, files = COUNTS[case]
    assert (
        result.stderr
        == f"kblint: would fix {count} issue{'s' if count > 1 else ''} in {files} file{'s' if files > 1 else ''}\n"
    )
    assert _files(kb) == _files(FIXES / case / "before")
    changed = sorted(_files(FIXES / case / "after"))
    assert [line[4:] for line in result.stdout.splitlines() if line.startswith("+++ ")] == changed
    if shutil.which("patch") is None:
        pytest.skip("no patch program to apply the diff with")
    subprocess.run(["patch", "-s", "-p0"], cwd=kb, input=result.stdout.encode(), check=True)
    assert _files(kb) == _after(case)


def test_diff_writes_no_cache_and_says_which_report_options_it_does_not_use(tmp_path: Path):
    kb = _before("date", tmp_path)
    result = run_kblint("validate", ".", "--diff", "--output", str(tmp_path / "report.txt"), cwd=kb)
    assert result.code == 1 and result.stdout.startswith("--- ")
    assert "kblint: warning: --diff prints the diff alone: --output not used\n" in result.stderr
    assert not (kb / ".kblint_cache").exists() and not (tmp_path / "report.txt").exists()


def test_the_report_marks_the_issues_it_can_fix_and_counts_them(tmp_path: Path):
    kb = _before("links", tmp_path)
    result = run_kblint("validate", ".", "--no-cache", cwd=kb, env={"NO_COLOR": "1"})
    lines = result.stdout.splitlines()
    marked = [line for line in lines if "[*]" in line and line.startswith("notes/")]
    assert len(marked) == 5
    assert all(" info noncanonical_link [*] Link " in line for line in marked)
    broken = next(line for line in lines if "broken_link" in line)
    assert "[*]" not in broken  # no fix for a link to nothing
    assert "  [*] 6 fixable with --fix (--diff shows the changes first)" in lines


def test_explain_and_the_rule_docs_say_which_rules_fix_has():
    for name in ("noncanonical_link", "missing_type", "invalid_field", "invalid_date"):
        page = run_kblint("explain", name).stdout
        assert "Fix: `kblint validate --fix` fixes it (a safe fix; `--diff` shows it first)" in " ".join(page.split())
    assert "Fix:" not in run_kblint("explain", "broken_link").stdout
    docs = (FIXTURES.parent / "docs" / "rules.md").read_text(encoding="utf-8")
    assert docs.count("Fix: `kblint validate --fix` fixes it") == 4


_CONFLICT_YAML = """\
name: harbor
types:
  finding:
    subdirectory: findings
    fields:
      confidence: {type: select, values: [high, low]}
validation:
  rules:
    - {field: confidence, enum: [HIGH, low]}
"""


def test_a_fix_that_would_not_clear_its_issue_is_left_out(tmp_path: Path):
    """`HIGH` → `high` fits the select field but breaks the validation rule: the same issue, so the
    fix is left out; the other file's fix, which clears its issue, is written."""
    stays = "---\ntitle: Dues\nconfidence: HIGH\n---\nDoubled.\n"
    kb = write_kb(
        tmp_path / "kb", _CONFLICT_YAML, {"findings/dues.md": stays, "findings/fee.md": stays.replace("HIGH", "Low")}
    )
    diff = run_kblint("validate", ".", "--diff", "--no-cache", cwd=kb)
    assert "+confidence: low" in diff.stdout and "dues.md" not in diff.stdout
    result = run_kblint("validate", ".", "--fix", "--no-cache", cwd=kb, env={"NO_COLOR": "1"})
    assert result.stderr == "kblint: 1 fix left out: it would not clear its issue\n" + _fixed(1, 1)
    assert (kb / "findings/dues.md").read_text() == stays
    assert (kb / "findings/fee.md").read_text() == stays.replace("HIGH", "low")
    dues = [line for line in result.stdout.splitlines() if line.startswith("findings/dues.md:3:")]
    assert len(dues) == 1 and "invalid_field" in dues[0]
    assert "[*]" not in dues[0]  # not marked: --fix just left it out


def test_files_kblint_does_not_edit_are_left_alone(tmp_path: Path):
    """A file with a parse error, one with a lone carriage return and a symlink are not written;
    the file the symlink leads to is fixed (once), and keeps its permissions."""
    kb = write_kb(
        tmp_path / "kb",
        "name: harbor\ntypes:\n  finding:\n    subdirectory: findings\n    fields:\n"
        "      confidence: {type: select, values: [high, low]}\n",
        {
            "findings/broken.md": "---\ntitle: [unclosed\nconfidence: HIGH\n---\nSee [[Real]].\n",
            "findings/old-mac.md": b"---\rtitle: Old\rconfidence: HIGH\r---\rSee [[Real]].\r",
            "findings/real.md": "---\ntitle: Real\nconfidence: HIGH\n---\nSee [[old-mac]].\n",
        },
    )
    os.chmod(kb / "findings/real.md", 0o640)
    os.symlink("real.md", kb / "findings/link.md")
    before = _files(kb)
    result = run_kblint("validate", ".", "--fix", "--no-cache", cwd=kb)
    assert result.stderr == _LONE_CR_NOT_FIXED.format("findings/old-mac.md") + _fixed(1, 1)
    after = _files(kb)
    assert after["findings/real.md"] == before["findings/real.md"].replace(b"HIGH", b"high")
    for name in ("findings/broken.md", "findings/old-mac.md"):
        assert after[name] == before[name]
    assert os.readlink(kb / "findings/link.md") == "real.md"
    assert (kb / "findings/real.md").stat().st_mode & 0o777 == 0o640
    assert "parse_error" in result.stdout


_LONE_CR_NOT_FIXED = (
    "kblint: warning: {}: not fixed: its lines end with a lone carriage return (CR), which kblint does not edit\n"
)


def test_a_file_with_lone_carriage_returns_is_not_fixed_and_the_run_says_why(tmp_path: Path):
    """The parser ends a line at a lone CR, the fixes do not: such a file is left as it is, and
    --diff and --fix say so rather than find nothing to fix."""
    cr = b"---\rtitle: Old\rconfidence: HIGH\r---\rSee [[Old]] and [[Ada]].\r"
    kb = write_kb(
        tmp_path / "kb",
        "name: harbor\ntypes:\n  finding:\n    subdirectory: findings\n    fields:\n"
        "      confidence: {type: select, values: [high, low]}\n",
        {
            "findings/old.md": cr,
            "findings/ada.md": "---\ntitle: Ada\nconfidence: low\n---\nSee [[old]].\n",
            "plain.md": b"---\rtitle: Plain\r---\rSee [[ada]].\r",  # a missing type no fix can give: not named
        },
    )
    report = run_kblint("validate", ".", "--format", "json", "--no-cache", "--fail-on", "never", cwd=kb).json
    assert {i["rule"] for i in report["issues"] if i["path"] == "findings/old.md"} >= {
        "invalid_field",
        "noncanonical_link",
    }
    diff = run_kblint("validate", ".", "--diff", cwd=kb)
    assert (diff.code, diff.stdout) == (0, "")
    assert diff.stderr == _LONE_CR_NOT_FIXED.format("findings/old.md") + "kblint: would fix 0 issues in 0 files\n"
    fixed = run_kblint("validate", ".", "--fix", "--no-cache", cwd=kb)
    assert fixed.stderr == _LONE_CR_NOT_FIXED.format("findings/old.md") + _fixed(0, 0)
    assert (kb / "findings/old.md").read_bytes() == cr


def test_fix_refuses_stdin(tmp_path: Path):
    kb = write_kb(tmp_path / "kb", "name: notes\n", {})
    for option in ("--fix", "--diff"):
        args = ("validate", "--kb", str(kb), "--stdin", "--stdin-path", "a.md", option)
        result = run_kblint(*args, input=b"---\ntitle: A\n---\nx\n")
        assert result.code == 2
        assert result.stderr == f"kblint: {option} edits files: it does not read an entry from --stdin\n"


def test_fix_and_diff_are_refused_with_watch(tmp_path: Path):
    kb = write_kb(tmp_path / "kb", "name: notes\n", {})
    for option in ("--fix", "--diff"):
        result = run_kblint("validate", ".", "--watch", option, cwd=kb)
        assert result.code == 2
        assert (
            result.stderr
            == f"kblint: {option} {'writes' if option == '--fix' else 'shows'} the fixes once: run it without --watch\n"
        )


# ---------------------------------------------------------------------------------------------
# Property: --fix changes no file it has no fix for.

_PROPERTY_YAML = """\
name: prop
types:
  finding:
    subdirectory: findings
    fields:
      confidence: {type: select, values: [low, high]}
      date: {type: date}
"""
_TARGET = "---\ntitle: Target\naliases: [The Target]\n---\nSee [[e]].\n"
_FIXABLE = "---\ntitle: Fixable\nconfidence: HIGH\n---\nSee [[target]].\n"

_words = st.text(alphabet="abcdefgh xyz-", min_size=1, max_size=12).map(str.strip).filter(bool)
_quoted = st.sampled_from(["{}", "'{}'", '"{}"'])
# values that are right, or wrong in ways no fix mends
_confidence = st.sampled_from(["low", "high", "medium", "unknown", "lo w", "hihg"])
_date = st.sampled_from(["2024-05-01", "May 2024", "2024/5/1", '"2024-3-7"', "'2024-3-7'", "2024-13-1", "24-3-7"])
_target = st.sampled_from(["target", "missing-one", "other:elsewhere", "e"])
_body_link = st.sampled_from(["[[target]]", "[[target|label]]", "[[nowhere]]", "`[[Target]]`", "[[target#Head]]"])
_comment = st.sampled_from(["", "  # a comment", " #x"])


@st.composite
def _entries(draw: st.DrawFn) -> bytes:
    """An entry that nothing --fix fixes is wrong with (other things may be)."""
    comment = lambda: draw(_comment)  # noqa: E731
    fields = {
        "title": draw(_quoted).format(draw(_words)) + comment(),
        "confidence": draw(_quoted).format(draw(_confidence)) + comment(),
        "date": draw(_date) + comment(),
        "links": draw(st.sampled_from(["[{}]", "\n  - {}", "\n  - target: {}"])).format(draw(_target)) + comment(),
        "tags": f"[{draw(_words)}, {draw(_words)}]" + comment(),
        "extra": draw(_quoted).format(draw(_words)),
    }
    keys = draw(st.permutations(list(fields)))
    keys = keys[: draw(st.integers(min_value=1, max_value=len(keys)))]
    lines = ["---", *(f"{k}: {fields[k]}" for k in keys), "---"]
    if draw(st.booleans()):
        lines.insert(1, "# a comment line")
    body = " ".join(draw(st.lists(st.one_of(_words, _body_link), max_size=6)))
    newline = draw(st.sampled_from(["\n", "\r\n"]))
    text = newline.join([*lines, body]) + (newline if draw(st.booleans()) else "")
    return text.encode("utf-8")


@settings(max_examples=examples(30), deadline=None)
@given(_entries())
def test_fix_changes_no_file_it_has_no_fix_for(entry: bytes):
    with tempfile.TemporaryDirectory() as directory:
        kb = write_kb(
            Path(directory) / "kb",
            _PROPERTY_YAML,
            {"findings/e.md": entry, "findings/target.md": _TARGET, "findings/fixable.md": _FIXABLE},
        )
        result = run_kblint("validate", ".", "--fix", "--no-cache", cwd=kb)
        assert result.stderr == _fixed(1, 1), result.stderr
        assert (kb / "findings/e.md").read_bytes() == entry
        assert (kb / "findings/target.md").read_text() == _TARGET
        assert (kb / "findings/fixable.md").read_text() == _FIXABLE.replace("HIGH", "high")


def test_the_diff_is_a_unified_diff_of_the_whole_file(tmp_path: Path):
    kb = _before("date", tmp_path)
    result = run_kblint("validate", ".", "--diff", "--no-cache", cwd=kb)
    name = "findings/dates.md"
    before = (FIXES / "date/before" / name).read_text().splitlines(keepends=True)
    after = (FIXES / "date/after" / name).read_text().splitlines(keepends=True)
    assert result.stdout == "".join(difflib.unified_diff(before, after, name, name))


def test_noncanonical_link_is_a_link_by_another_name_than_the_id(tmp_path: Path):
    """Reported: links by file name, alias or another case, across KBs too. Not reported: links
    by id, to a path (they name a file), and to an id two entries share (duplicate_id says so)."""
    notes = {
        "kb.yaml": "name: notes\n",
        "a.md": "---\nid: a\ntitle: A\naliases: [Alpha]\n---\n[[b]] [[dir/c]] [b](b.md) [[twin]]\n",
        "b.md": "---\ntitle: B\n---\n[[ALPHA]] [[A]] [[archive:Old Name]] [[archive:old]]\n",
        "dir/c.md": "---\nid: c-entry\ntitle: C\n---\n[[a]]\n",
        "t1.md": "---\nid: twin\ntitle: T1\n---\n[[a]]\n",
        "t2.md": "---\nid: twin\ntitle: T2\n---\n[[a]]\n",
    }
    archive = {"old.md": "---\ntitle: Old\naliases: [Old Name]\n---\n[[notes:a]]\n"}
    write_kb(tmp_path / "kbs" / "notes", notes.pop("kb.yaml"), notes)
    write_kb(tmp_path / "kbs" / "archive", "name: archive\n", archive)
    report = run_kblint("validate", "kbs", "--format", "json", "--no-cache", cwd=tmp_path).json
    found = sorted((i["path"], i["column"], i["message"]) for i in report["issues"] if i["rule"] == "noncanonical_link")
    assert found == [
        ("kbs/notes/b.md", 1, "Link 'ALPHA' names entry 'a' by an alias in another case; link it by its id"),
        ("kbs/notes/b.md", 11, "Link 'A' names entry 'a' by its id in another case; link it by its id"),
        ("kbs/notes/b.md", 17, "Link 'Old Name' names entry 'old' by an alias; link it by its id"),
    ]
    run_kblint("validate", "kbs", "--fix", "--no-cache", cwd=tmp_path)
    fixed = (tmp_path / "kbs/notes/b.md").read_text()
    # a wikilink by alias keeps it as its label: readers see the same text
    assert fixed == "---\ntitle: B\n---\n[[a|ALPHA]] [[a]] [[archive:old|Old Name]] [[archive:old]]\n"


def test_a_link_on_a_line_its_rule_is_suppressed_on_is_not_fixed(tmp_path: Path):
    """The issue is reported once per target; its fix edits the other links to that target, but
    not one the entry says to leave as it is."""
    body = (
        "See [[Council]].\n\n<!-- kblint-disable noncanonical_link -->\n"
        "The old spelling [[Council]] stays.\n<!-- kblint-enable noncanonical_link -->\n"
        "<!-- kblint-disable-next-line noncanonical_link -->\nAnd [[Council]] here.\n"
    )
    entries = {"council.md": "---\ntitle: City council\n---\n[[x]]\n", "x.md": f"---\ntitle: X\n---\n{body}"}
    kb = write_kb(tmp_path / "notes", "name: notes\n", entries)
    result = run_kblint("validate", str(kb), "--fix", "--no-cache", "--format", "json")
    assert (kb / "x.md").read_text() == "---\ntitle: X\n---\n" + body.replace("See [[Council]]", "See [[council]]", 1)
    assert issues_of(result.json, "noncanonical_link") == []


def test_a_link_in_indented_code_is_not_fixed(tmp_path: Path):
    body = "Example of the syntax:\n\n    [[Council]]\n\nReal link: [[Council]].\n"
    entries = {"council.md": "---\ntitle: City council\n---\n[[x]]\n", "x.md": f"---\ntitle: X\n---\n{body}"}
    kb = write_kb(tmp_path / "notes", "name: notes\n", entries)
    run_kblint("validate", str(kb), "--fix", "--no-cache")
    assert (kb / "x.md").read_text() == "---\ntitle: X\n---\n" + body.replace("link: [[Council]]", "link: [[council]]")


def test_a_name_two_entries_bear_is_not_fixed(tmp_path: Path):
    """An alias of two entries, or ids that differ only in case, name no one entry: no issue and no fix
    picks one of them."""
    kb = write_kb(
        tmp_path / "kb",
        "name: kb\n",
        {
            "ada.md": "---\ntitle: Ada\ntype: note\naliases: [Countess]\n---\nAda. [[bob]]\n",
            "bob.md": "---\ntitle: Bob\ntype: note\naliases: [Countess]\n---\nBob. [[ada]]\n",
            "Foo.md": "---\ntitle: Foo one\ntype: note\n---\nOne. [[ada]]\n",
            "foo.md": "---\ntitle: Foo two\ntype: note\n---\nTwo. [[ada]]\n",
            "c.md": "---\ntitle: C\ntype: note\n---\nSee [[Countess]] and [[FOO]]. [[ada]]\n",
        },
    )
    report = run_kblint("validate", str(kb), "--format", "json", "--fail-on", "never").json
    assert [i for i in report["issues"] if i["rule"] == "noncanonical_link"] == []
    diff = run_kblint("validate", str(kb), "--diff")
    assert "Countess" not in diff.stdout and "FOO" not in diff.stdout


def test_a_diff_breaks_lines_where_editors_do(tmp_path: Path):
    """A quoted U+2028 is a character of a line, not a line end (str.splitlines would split there)."""
    entry = '---\ntitle: "Dues\u2028paid"\nconfidence: HIGH\n---\nDoubled.\n'
    kb = write_kb(tmp_path / "kb", _CONFLICT_YAML.split("validation:", maxsplit=1)[0], {"findings/fee.md": entry})
    diff = run_kblint("validate", ".", "--diff", "--no-cache", cwd=kb).stdout
    assert "No newline" not in diff and ' title: "Dues\u2028paid"\n-confidence: HIGH\n+confidence: high\n' in diff


def test_a_write_cut_short_leaves_no_temporary_file(tmp_path: Path, monkeypatch):
    """Ctrl-C while a fixed file is written: the file is as it was, and nothing is left beside it."""
    from kblint.infra.files import replace_file

    target = tmp_path / "entry.md"
    target.write_bytes(b"before\n")

    def interrupted(fd: int) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "fsync", interrupted)
    with pytest.raises(KeyboardInterrupt):
        replace_file(str(target), b"after\n", os.stat(target))
    assert [p.name for p in tmp_path.iterdir()] == ["entry.md"] and target.read_bytes() == b"before\n"


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="only root may give a file away")
def test_a_fixed_file_keeps_its_owner_and_mode(tmp_path: Path):
    kb = _before("date", tmp_path)
    entries = [p for p in kb.rglob("*.md")]
    for entry in entries:
        os.chown(entry, 1234, 4321)
        entry.chmod(0o640)
    assert run_kblint("validate", str(kb), "--fix", "--no-cache").code in (0, 1)
    changed = [p for p in entries if p.read_bytes() != (FIXES / "date" / "before" / p.relative_to(kb)).read_bytes()]
    assert changed and all(
        (p.stat().st_uid, p.stat().st_gid, p.stat().st_mode & 0o777) == (1234, 4321, 0o640) for p in changed
    )


def test_a_diff_of_a_name_with_a_space_is_applied_by_patch(tmp_path: Path):
    """A tab after the name, as git writes it: patch would otherwise read `findings/My`."""
    kb_yaml = "name: k\ntypes:\n  note:\n    fields:\n      confidence: {type: select, values: [low, high]}\n"
    kb = write_kb(tmp_path / "k", kb_yaml, {"My Note.md": "---\ntitle: T\ntype: note\nconfidence: HIGH\n---\nx\n"})
    result = run_kblint("validate", ".", "--diff", "--no-cache", cwd=kb)
    assert result.stdout.startswith("--- My Note.md\t\n+++ My Note.md\t\n")
    if shutil.which("patch") is None:
        pytest.skip("no patch program to apply the diff with")
    subprocess.run(["patch", "-s", "-p0"], cwd=kb, input=result.stdout.encode(), check=True)
    assert "confidence: high\n" in (kb / "My Note.md").read_text(encoding="utf-8")
