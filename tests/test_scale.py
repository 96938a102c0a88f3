"""Speed features that must not change results: --jobs, the result cache, --shard (SPEC §10, §13)."""

from __future__ import annotations

import json
import os
import shutil
import zlib
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import FIXTURES, run_kblint, write_kb

from kblint.model.issue import ISSUE_FIELDS


def report(*args: str, cwd=None) -> dict:
    result = run_kblint("validate", *args, "--format", "json", "--fail-on", "never", **({"cwd": cwd} if cwd else {}))
    assert result.code == 0, result.stderr
    return result.json


def without_version(data: dict) -> dict:
    data = dict(data)
    data.pop("kblint_version")
    return data


@pytest.mark.parametrize("fixture", ["example", "rules/broken_link/fail", "checkers/has_inlinks"])
def test_one_and_two_jobs_give_the_same_report(fixture: str):
    path = str(FIXTURES / fixture)
    one = report(path, "--jobs", "1", "--no-cache")
    two = report(path, "--jobs", "2", "--no-cache")
    assert one == two and one["issues"]


@pytest.mark.parametrize("held", [0, 5])
@pytest.mark.parametrize("cached", [False, True])
def test_issues_held_or_spilled_give_the_same_report(held: int, cached: bool, tmp_path: Path, monkeypatch):
    """Pass-1 issues stay in memory up to HELD_ISSUES and wait in the spill past it; with small
    chunks, in two processes, both kinds come from the workers (and, with the result cache being
    written and then read, from the cache)."""
    from kblint.engine import pass_entries

    path = str(FIXTURES / "example")
    whole = report(path, "--jobs", "1", "--no-cache")
    assert len(whole["issues"]) > held
    monkeypatch.setattr(pass_entries, "_CHUNK", 3)
    monkeypatch.setattr(pass_entries, "HELD_ISSUES", held)
    cache = ["--cache-dir", str(tmp_path / "cache")] if cached else ["--no-cache"]
    for _ in range(2 if cached else 1):  # the second time from the cache
        assert report(path, *cache, "--jobs", "2") == whole


def workspace(tmp: Path) -> Path:
    entries = {
        f"n{i:02d}.md": f"---\ntitle: Note {i}\ntype: note\ntags: [t]\n---\nTo [[n{(i + 1) % 12:02d}]].\n"
        for i in range(12)
    }
    entries["n05.md"] = "---\ntitle: Note 5\ntype: note\n---\nTo [[n06]] and [[ghost]].\n"
    return write_kb(tmp / "kb", "name: kb\nevaluation_rubric: ['tags count >= 1']\n", entries)


def test_result_cache_reuses_and_invalidates(tmp_path: Path):
    kb = workspace(tmp_path)
    cache = tmp_path / "cache"
    args = (str(kb), "--cache-dir", str(cache))
    cold = report(*args)
    assert (cache / ".gitignore").read_text(encoding="utf-8").strip().endswith("*")
    assert list((cache / "results").glob("*.jsonl"))  # plain data: a restored cache cannot run code
    warm = report(*args)
    assert warm == cold
    # editing one entry re-lints it
    (kb / "n05.md").write_text("---\ntitle: Note 5\ntype: note\ntags: [fixed]\n---\nTo [[n06]].\n", encoding="utf-8")
    edited = report(*args)
    assert {i["entry_id"] for i in edited["issues"]} == set()
    # deleting a link target makes the now-broken link appear in an unchanged entry
    os.remove(kb / "n07.md")
    deleted = report(*args)
    assert [(i["entry_id"], i["rule"]) for i in deleted["issues"] if i["rule"] == "broken_link"] == [
        ("n06", "broken_link")
    ]
    # changing kb.yaml re-lints everything: a new policy applies to cached entries
    (kb / "kb.yaml").write_text("name: kb\nevaluation_rubric: ['tags count >= 2']\n", encoding="utf-8")
    stricter = report(*args)
    assert len([i for i in stricter["issues"] if i.get("policy") == "tags count >= 2"]) == 11
    assert report(*args, "--no-cache") == stricter


def test_a_cached_run_gives_the_same_junit(tmp_path: Path):
    """The JUnit report lists every linted entry, clean ones too: a run taken from the run cache,
    or from the per-file results, knows them as a fresh run does."""

    kb = workspace(tmp_path)
    cache = tmp_path / "cache"

    def junit(*extra: str) -> str:
        result = run_kblint("validate", str(kb), "--format", "junit", "--fail-on", "warning", *extra)
        assert result.code == 1, result.stderr
        return result.stdout

    cold = junit("--cache-dir", str(cache))
    assert cold.count("<testcase ") == 12 and cold.count("<failure ") == 1
    assert junit("--cache-dir", str(cache)) == cold  # from the run cache
    shutil.rmtree(cache / "runs")
    assert junit("--cache-dir", str(cache)) == cold  # from the per-file results
    assert junit("--no-cache") == cold


def test_cache_clear_removes_results(tmp_path: Path):
    kb = workspace(tmp_path)
    cache = tmp_path / "cache"
    report(str(kb), "--cache-dir", str(cache))
    out = run_kblint("cache", "clear", "--cache-dir", str(cache))
    assert out.code == 0 and not (cache / "results").exists()


def test_cache_clear_removes_a_symlink_in_a_caches_place_and_not_what_it_leads_to(tmp_path: Path):
    kb = workspace(tmp_path)
    cache = tmp_path / "cache"
    report(str(kb), "--cache-dir", str(cache))
    elsewhere = tmp_path / "elsewhere"
    for sub in ("results", "runs", "judgment"):
        (elsewhere / sub).mkdir(parents=True)
        (elsewhere / sub / "keep.txt").write_text("kept")
        shutil.rmtree(cache / sub, ignore_errors=True)
        (cache / sub).symlink_to(elsewhere / sub)
    out = run_kblint("cache", "clear", "--cache-dir", str(cache))
    assert out.code == 0, out.stderr
    assert not any((cache / sub).exists() or (cache / sub).is_symlink() for sub in ("results", "runs", "judgment"))
    assert all((elsewhere / sub / "keep.txt").read_text() == "kept" for sub in ("results", "runs", "judgment"))


def test_cache_clear_leaves_a_directory_kblint_did_not_make(tmp_path: Path):
    """`--cache-dir` (or cache_dir in the configuration) may name any folder: one without the
    .gitignore kblint writes in its caches is not emptied."""
    thesis = tmp_path / "work" / "results" / "thesis.txt"
    thesis.parent.mkdir(parents=True)
    thesis.write_text("years of work")
    out = run_kblint("cache", "clear", "--cache-dir", str(tmp_path / "work"))
    assert out.code == 2 and "is no kblint cache" in out.stderr and "nothing removed" in out.stderr
    assert thesis.read_text() == "years of work"
    # nor does a run take it for a cache, and mark it so that a later clear would empty it
    run = run_kblint("validate", str(workspace(tmp_path)), "--cache-dir", str(tmp_path / "work"))
    assert "holds files kblint did not write: not used as a cache" in run.stderr
    assert not (tmp_path / "work" / ".gitignore").exists()
    assert run_kblint("cache", "clear", "--cache-dir", str(tmp_path / "work")).code == 2
    assert thesis.read_text() == "years of work"


def test_shards_together_equal_the_whole_run(tmp_path: Path):
    path = str(FIXTURES / "example")
    whole = report(path, "--no-cache")

    def key(issue: dict) -> tuple:
        return (issue["path"], issue["line"], issue["rule"], issue["message"], issue["fingerprint"])

    parts = [report(path, "--no-cache", "--shard", f"{k}/3") for k in (1, 2, 3)]
    combined = [key(i) for part in parts for i in part["issues"]]
    assert sorted(combined) == sorted(key(i) for i in whole["issues"])
    assert len(combined) == len(set(combined))  # nothing twice
    assert sum(p["summary"]["files"] for p in parts) == whole["summary"]["files"]
    graph_rules = {"broken_link", "unresolved_external", "orphan_entry", "duplicate_id"}
    for part in parts[1:]:
        assert not any(i["rule"] in graph_rules for i in part["issues"])
    assert run_kblint("validate", path, "--shard", "4/3").code == 2
    assert run_kblint("validate", path, "--shard", "x").code == 2
    text = run_kblint("validate", path, "--no-cache", "--shard", "2/3").stdout
    assert "harbor-investigation (fixtures/example, shard 2/3): " in text  # a part, said so


def test_an_entrys_suppressions_hide_its_graph_issues_in_every_shard(tmp_path: Path):
    """Shard 1 reports the graph issues of every entry, the entry's own shard its suppressions."""
    hidden = "---\ntitle: Alone {n}\ntype: note\nkblint:\n  disable: [orphan_entry]\n---\nOn its own.\n"
    kb = write_kb(tmp_path / "kb", "name: solo\n", {f"n{n}.md": hidden.format(n=n) for n in range(6)})
    whole = report(str(kb), "--no-cache")
    parts = [report(str(kb), "--no-cache", "--shard", f"{k}/3") for k in (1, 2, 3)]
    assert not any(i["rule"] in ("orphan_entry", "unused_suppression") for i in whole["issues"])
    for part in parts:
        assert not any(i["rule"] in ("orphan_entry", "unused_suppression") for i in part["issues"])
    combined = sorted((i["path"], i["rule"], i["fingerprint"]) for part in parts for i in part["issues"])
    assert combined == sorted((i["path"], i["rule"], i["fingerprint"]) for i in whole["issues"])


def test_run_cache_takes_an_unchanged_run_and_nothing_else(tmp_path: Path):
    kb = workspace(tmp_path)
    (kb / "n01.md").write_text(
        "---\ntitle: Note 1\ntype: note\ntags: [t]\n---\nTo [[n02]], see [[diagram.png]].\n", encoding="utf-8"
    )
    cache = tmp_path / "cache"
    args = (str(kb), "--cache-dir", str(cache))
    cold = report(*args)
    assert [i["message"] for i in cold["issues"] if i["rule"] == "broken_link"] == [
        "Link target 'diagram.png' not found",
        "Link target 'ghost' not found",
    ]
    assert len(list((cache / "runs").glob("*.jsonl"))) == 1
    assert report(*args) == cold
    # filters apply to the cached outcome as to a fresh one
    assert report(*args, "--select", "orphan_entry,broken_link") == report(
        *args, "--select", "orphan_entry,broken_link", "--no-cache"
    )
    # a setting that shapes the issues is a different run
    assert report(*args, "--strict-links")["issues"] == report(*args, "--strict-links", "--no-cache")["issues"]
    # a file a link names (not an entry) appearing changes the outcome, though no entry changed
    (kb / "diagram.png").write_bytes(b"\x89PNG")
    assert [i["message"] for i in report(*args)["issues"] if i["rule"] == "broken_link"] == [
        "Link target 'ghost' not found"
    ]
    # a new entry is a new run
    (kb / "ghost.md").write_text("---\ntitle: Ghost\ntype: note\ntags: [t]\n---\nTo [[n05]].\n", encoding="utf-8")
    fresh = report(*args)
    assert not [i for i in fresh["issues"] if i["rule"] == "broken_link"]
    assert fresh == report(*args, "--no-cache")


def test_a_run_from_another_directory_names_other_files_from_there(tmp_path: Path):
    kb = write_kb(
        tmp_path / "kb",
        "name: kb\n",
        {f"notes/{n}.md": "---\nid: same\ntitle: Same\n---\nBody.\n" for n in ("one", "two")},
    )
    (tmp_path / "sub").mkdir()
    args = ("--cache-dir", str(tmp_path / "cache"))

    def duplicate_messages(target: str, cwd: Path) -> list[str]:
        issues = report(target, *args, cwd=cwd)["issues"]
        return [i["message"] for i in issues if i["rule"] == "duplicate_id"]

    assert duplicate_messages("kb", tmp_path) == [
        "Duplicate id 'same' (also in kb/notes/two.md)",
        "Duplicate id 'same' (also in kb/notes/one.md)",
    ]
    assert duplicate_messages(str(kb), tmp_path / "sub") == [
        "Duplicate id 'same' (also in ../kb/notes/two.md)",
        "Duplicate id 'same' (also in ../kb/notes/one.md)",
    ]


def test_damaged_caches_are_ignored(tmp_path: Path):
    kb = workspace(tmp_path)
    cache = tmp_path / "cache"
    args = (str(kb), "--cache-dir", str(cache))
    cold = report(*args)
    for path in [*(cache / "runs").glob("*.jsonl"), *(cache / "results").glob("*.jsonl")]:
        text = path.read_text(encoding="utf-8")
        path.write_text(text[: len(text) // 2], encoding="utf-8")  # cut short, mid-line
    assert report(*args) == cold
    assert report(*args) == cold


def test_an_unchanged_run_lints_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """With every file's stamp (modification and change times, size) unchanged, the outcome comes
    from the run cache alone."""
    from kblint.engine import pass_entries

    kb = workspace(tmp_path)
    cache = tmp_path / "cache"
    args = (str(kb), "--cache-dir", str(cache))
    cold = report(*args)
    shutil.rmtree(cache / "results")  # only the run cache is left

    def linted(*args: object, **kwargs: object) -> None:
        raise AssertionError("an entry was linted")

    monkeypatch.setattr(pass_entries, "lint_source", linted)
    assert report(*args) == cold


def test_a_file_rewritten_to_its_old_size_and_modification_time_is_linted_again(tmp_path: Path):
    kb = workspace(tmp_path)
    args = (str(kb), "--cache-dir", str(tmp_path / "cache"))
    cold = report(*args)
    entry = kb / "n03.md"
    before = entry.stat()
    entry.write_text(entry.read_text(encoding="utf-8").replace("tags: [t]", "tags: [ ]"), encoding="utf-8")
    os.utime(entry, ns=(before.st_atime_ns, before.st_mtime_ns))  # as `touch -r` or `cp -p` leave it
    assert entry.stat().st_size == before.st_size
    fresh = report(str(kb), "--no-cache")
    assert fresh != cold
    assert report(*args) == fresh


def test_spilled_issues_come_back_with_the_path_the_run_holds():
    from kblint.infra.spill import IssueSpill
    from kblint.rules import RULES, Site

    path = os.path.join("/kb", "entry.md")
    copy = "".join(["/kb/", "entry.md"])  # equal, another object, as a worker's result brings it
    assert copy == path and copy is not path
    issue = RULES["missing_title"].issue(Site("kb", copy), "Entry has no title")
    other = RULES["missing_title"].issue(Site("kb", "/kb/other.md"), "Entry has no title")
    spill = IssueSpill()
    first = spill.put([[issue], [other]], [path, "/kb/other.md"])
    taken = spill.take({first, first + 1})
    assert [i.message for i in taken] == ["Entry has no title"] * 2
    assert taken[0].path is path and taken[1].path == "/kb/other.md"


def _stored_issues(count: int) -> list:
    from kblint.rules import RULES, Site

    issues = []
    for n in range(count):
        site = Site("kb", f"/kb/e{n // 3}.md", entry_id=f"e{n // 3}")
        rule = ("missing_title", "missing_type")[n % 2]  # alternates: a column without runs
        issues.append(RULES[rule].issue(site, f"message {n}", line=n + 1))
    return issues


def test_the_run_cache_stores_repeated_texts_as_runs_and_reads_them_back(tmp_path: Path):
    from kblint.infra import resultcache

    issues = _stored_issues(30)
    resultcache.save_run(str(tmp_path), "k" * 40, resultcache.StoredRun({"x": 1}, issues))
    lines = resultcache.run_file(str(tmp_path), "k" * 40)
    with open(lines, encoding="utf-8") as fh:
        columns = dict(zip(resultcache.ISSUE_FIELDS, map(json.loads, fh.read().splitlines()[2:-1]), strict=True))
    assert len(columns["path"]["runs"]) == 20  # ten runs of three
    assert isinstance(columns["rule"], list) and len(columns["rule"]) == 30  # alternating: as they are
    loaded = resultcache.load_run(str(tmp_path), "k" * 40)
    assert loaded is not None and loaded.issues == issues


def _damaged_run_file(tmp_path: Path, edit: Callable[[list[str]], None], summed_again: bool = True) -> None:
    """A stored run whose lines (all but the checksum) EDIT changes; with SUMMED_AGAIN, the last line
    is made the checksum of the edited lines, so that the damage is found by what it is."""
    from kblint.infra import resultcache

    resultcache.save_run(str(tmp_path), "k" * 40, resultcache.StoredRun({"x": 1}, _stored_issues(30)))
    path = resultcache.run_file(str(tmp_path), "k" * 40)
    with open(path, encoding="utf-8") as fh:
        *lines, checksum = fh.read().splitlines()
    edit(lines)
    if summed_again:
        checksum = json.dumps({"crc": zlib.crc32("".join(line + "\n" for line in lines).encode())})
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("".join(line + "\n" for line in [*lines, checksum]))


def test_a_run_file_summed_again_unchanged_is_read(tmp_path: Path):
    from kblint.infra import resultcache

    _damaged_run_file(tmp_path, lambda lines: None)
    assert resultcache.load_run(str(tmp_path), "k" * 40) is not None  # the tests below damage only what they say


@pytest.mark.parametrize(
    "damage", ['{"runs":[0,1000000000000]}', '{"runs":[0,31,0,-1]}', '{"runs":"xx"}', '{"runs":[0,30,1]}', "[0]"]
)
def test_a_damaged_column_of_the_run_cache_is_reported_not_expanded(tmp_path: Path, damage: str):
    from kblint.infra import resultcache

    _damaged_run_file(tmp_path, lambda lines: lines.__setitem__(2 + ISSUE_FIELDS.index("path"), damage))
    with pytest.raises(resultcache.CacheDamaged):
        resultcache.load_run(str(tmp_path), "k" * 40)


def _replace_line(at: int, text: str | None) -> Callable[[list[str]], None]:
    def edit(lines: list[str]) -> None:
        if text is None:
            del lines[at]
        else:
            lines[at] = text

    return edit


@pytest.mark.parametrize(
    "edit",
    [
        _replace_line(1, "{}"),
        _replace_line(2 + ISSUE_FIELDS.index("message"), '["x"]'),
        _replace_line(-1, None),
        lambda lines: lines.append("[]"),
        _replace_line(2 + ISSUE_FIELDS.index("line"), "[" * 100_000 + "]" * 100_000),
    ],
    ids=["table-not-a-list", "short-message-column", "column-missing", "line-too-many", "nested-past-the-stack"],
)
def test_a_run_cache_file_of_another_shape_is_reported(tmp_path: Path, edit: Callable[[list[str]], None]):
    from kblint.infra import resultcache

    _damaged_run_file(tmp_path, edit)
    with pytest.raises(resultcache.CacheDamaged):
        resultcache.load_run(str(tmp_path), "k" * 40)


def test_a_run_file_edited_into_other_valid_json_is_reported(tmp_path: Path):
    from kblint.infra import resultcache

    at = 2 + ISSUE_FIELDS.index("message")
    _damaged_run_file(tmp_path, lambda lines: lines.__setitem__(at, lines[at].replace("message 0", "edited")), False)
    with pytest.raises(resultcache.CacheDamaged):
        resultcache.load_run(str(tmp_path), "k" * 40)


def test_an_edited_record_of_the_result_cache_is_linted_again(tmp_path: Path):
    kb = write_kb(tmp_path / "kb", "name: kb\n", {"a.md": "---\ntitle: A\ntype: note\n---\nBody [[nowhere]].\n"})
    first = run_kblint("validate", str(kb), "--format", "json", "--cache-dir", str(tmp_path / "c"))
    for path in (tmp_path / "c" / "runs").iterdir():
        path.unlink()  # the per-file records are read, not the run's outcome
    (results,) = (tmp_path / "c" / "results").iterdir()
    results.write_text(results.read_text(encoding="utf-8").replace('"warning"', '"bogus"'), encoding="utf-8")
    again = run_kblint("validate", str(kb), "--format", "json", "--cache-dir", str(tmp_path / "c"))
    assert again.code == first.code and again.json["issues"] == first.json["issues"]
    assert "was damaged: ignored, and written again" in again.stderr


@pytest.mark.parametrize("length", [0, 1, 2, 3, 4, 6, 7])
def test_a_long_column_written_in_pieces_is_the_json_of_the_whole(monkeypatch: pytest.MonkeyPatch, length: int):
    import io

    from kblint.infra import resultcache

    monkeypatch.setattr(resultcache, "_PIECE", 3)
    values = [None, "é", 1, "a,b", [2, "x"], "", 0.5][:length]
    out = io.StringIO()
    resultcache._write_line(out, values)
    assert out.getvalue() == json.dumps(values, ensure_ascii=False, separators=(",", ":")) + "\n"


def test_a_record_nested_past_the_stack_is_linted_again(tmp_path: Path):
    kb = write_kb(tmp_path / "kb", "name: kb\n", {"a.md": "---\ntitle: A\ntype: note\n---\nBody [[nowhere]].\n"})
    first = run_kblint("validate", str(kb), "--format", "json", "--cache-dir", str(tmp_path / "c"))
    for path in (tmp_path / "c" / "runs").iterdir():
        path.unlink()
    (results,) = (tmp_path / "c" / "results").iterdir()
    stamped, _, _ = results.read_text(encoding="utf-8").rstrip("\n").rsplit("\t", 2)
    deep = "[" * 100_000 + "]" * 100_000
    crc = f"{zlib.crc32(deep.encode()):08x}"  # summed as written: the damage is found by what it is
    results.write_text(f"{stamped}\t{crc}\t{deep}\n", encoding="utf-8")
    again = run_kblint("validate", str(kb), "--format", "json", "--cache-dir", str(tmp_path / "c"))
    assert again.code == first.code and again.json["issues"] == first.json["issues"]
    assert "was damaged: ignored, and written again" in again.stderr


def test_a_file_name_with_a_carriage_return_is_not_cached_nor_called_damaged(tmp_path: Path):
    entry = "---\ntitle: A\ntype: note\n---\nBody.\n"
    kb = write_kb(tmp_path / "kb", "name: kb\n", {"a.md": entry, "b\rc.md": entry.replace("A", "B")})
    for n in range(2):
        os.utime(kb / "a.md", ns=(n, n))  # a file changed: the run is not the last one, its records are read
        result = run_kblint("validate", str(kb), "--format", "json", "--cache-dir", str(tmp_path / "c"))
        assert "damaged" not in result.stderr and result.json["kbs"][0]["files"] == 2
