"""bench/generate.py: deterministic synthetic workspaces whose planted defects kblint reports."""

from __future__ import annotations

import importlib.util
import json
import os
from collections import defaultdict
from pathlib import Path

import pytest
from conftest import run_kblint

ROOT = Path(__file__).resolve().parent.parent
ENTRIES = 300
DUPLICATES = 0.02  # 6 pairs of 300 entries: every kind at least once


def _load(name: str, script: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "bench" / script)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


gen = _load("bench_generate", "generate.py")
dup_bench = _load("bench_duplicates", "duplicates.py")


def _files(root: Path) -> dict[str, bytes]:
    out = {}
    for dirpath, _, names in os.walk(root):
        for name in names:
            path = Path(dirpath, name)
            out[path.relative_to(root).as_posix()] = path.read_bytes()
    return out


@pytest.fixture(scope="module")
def workspace(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("gen") / "ws"
    gen.generate(str(out), ENTRIES, seed=7)
    return out


def _lint(workspace: Path) -> dict:
    result = run_kblint("validate", ".", "--format", "json", "--fail-on", "never", "--no-cache", cwd=workspace)
    assert result.code == 0, result.stderr
    return result.json


@pytest.fixture(scope="module")
def report(workspace: Path) -> dict:
    return _lint(workspace)


@pytest.fixture(scope="module")
def manifest(workspace: Path) -> dict:
    return json.loads((workspace / gen.MANIFEST).read_text(encoding="utf-8"))


def test_same_seed_gives_byte_identical_files(workspace: Path, tmp_path: Path):
    again = tmp_path / "again"
    gen.generate(str(again), ENTRIES, seed=7)
    first, second = _files(workspace), _files(again)
    assert sorted(first) == sorted(second)
    different = [p for p in first if first[p] != second[p]]
    assert different == []


def test_another_seed_gives_another_workspace(workspace: Path, tmp_path: Path):
    other = tmp_path / "other"
    gen.generate(str(other), ENTRIES, seed=8)
    first, second = _files(workspace), _files(other)
    assert first != second
    # most entries differ, not just a byte here and there
    common = set(first) & set(second)
    assert len([p for p in common if first[p] == second[p]]) < len(first) // 10


def test_workspace_shape(workspace: Path, manifest: dict):
    kbs = manifest["kbs"]
    assert 3 <= len(kbs) <= 5
    assert sum(kbs.values()) == ENTRIES
    assert len(set(kbs.values())) > 1, "KBs are sized unevenly"
    for name in kbs:
        assert (workspace / name / "kb.yaml").is_file()
    assert (workspace / manifest["cross_kb_links"]).is_file()
    md = [p for p in _files(workspace) if p.endswith(".md") and not p.endswith("README.md")]
    assert len(md) == ENTRIES
    # every kind of defect is planted, at a low rate
    kinds = defaultdict(int)
    for d in manifest["defects"]:
        kinds[d["kind"]] += 1
    assert set(gen.DEFECTS) <= set(kinds)
    for kind in gen.DEFECTS:
        assert kinds[kind] <= max(2, 0.04 * ENTRIES), kind


def test_kb_yaml_uses_every_rubric_form(workspace: Path, manifest: dict):
    import yaml

    for name in manifest["kbs"]:
        doc = yaml.safe_load((workspace / name / "kb.yaml").read_text(encoding="utf-8"))
        items = list(doc["evaluation_rubric"])
        for tspec in doc["types"].values():
            items.extend(tspec.get("evaluation_rubric", []))
            assert tspec["subdirectory"] and tspec["required"] and tspec["fields"]
        strings = [i for i in items if isinstance(i, str)]
        maps = [i for i in items if isinstance(i, dict)]
        assert any(s.startswith(("tags count", "outlinks count", "links.", "body.section")) for s in strings)
        assert any(s.startswith("status ") and " requires " in s for s in strings + [m.get("policy", "") for m in maps])
        assert any(not gen.re.match(r"^(tags|outlinks|links|body|status|metadata)\b", s) for s in strings)
        assert any("checker" in m and "params" in m for m in maps)
        assert any(m.get("covered_by") == "schema" and "field" in m for m in maps)
        assert any("policy" in m for m in maps)
        for key in ("id", "severity", "weight", "applies_to"):
            assert any(key in m for m in maps), key
        assert doc["guidelines"] and doc["goals"] and doc["validation"]["rules"]
        field_types = {f["type"] for t in doc["types"].values() for f in t["fields"].values()}
        assert {"select", "date", "list", "url", "object-ref"} <= field_types
        assert any(t.get("workflow") for t in doc["types"].values())


def test_kblint_reports_every_planted_defect(report: dict, manifest: dict):
    issues = report["issues"]
    assert [i for i in issues if i["rule"] == "config_error"] == []
    for kb in report["kbs"]:
        cov = kb["coverage"]
        assert cov["broken"] == 0
        assert cov["schema"] and cov["checker"] and cov["policy"] and cov["judgment"], kb["name"]

    reported = defaultdict(set)
    for i in issues:
        reported[i["rule"]].add(i["path"])
    missing = [
        d
        for d in manifest["defects"]
        if d["path"] not in reported[d["rule"]] and d.get("source_path") not in reported[d["rule"]]
    ]
    assert missing == []


def test_kblint_reports_nothing_unplanted_for_the_planted_rules(report: dict, manifest: dict):
    """The generator plants these defects and no others: any other report of these rules is a
    generator bug or a kblint false positive."""
    assert "duplicates" not in manifest  # none unless asked for
    _assert_nothing_unplanted(report, manifest)


def _assert_nothing_unplanted(report: dict, manifest: dict) -> None:
    planted = defaultdict(set)
    for d in manifest["defects"]:
        planted[d["rule"]].update(p for p in (d["path"], d.get("also"), d.get("source_path")) if p)
    reported = defaultdict(set)
    for i in report["issues"]:
        reported[i["rule"]].add(i["path"])
    for rule in (
        "parse_error",
        "invalid_date",
        "unknown_type",
        "duplicate_id",
        "missing_required",
        "invalid_field",
        "broken_link",
        "orphan_entry",
        "unresolved_external",
    ):
        assert reported[rule] - planted[rule] == set(), rule
    for rule in (
        "unknown_field",
        "invalid_status",
        "subdirectory_mismatch",
        "missing_title",
        "empty_body",
        "checker_error",
    ):
        assert reported[rule] == set(), rule
    assert report["summary"]["files"] == ENTRIES


def test_cli_prints_a_summary_and_refuses_a_non_empty_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    out = str(tmp_path / "ws")
    assert gen.main(["--entries", "60", "--seed", "3", out]) == 0
    printed = capsys.readouterr().out
    assert printed.count("\n") == 1 and "60 entries" in printed and " s" in printed
    with pytest.raises(SystemExit) as refused:  # argparse's error: exit 2
        gen.main(["--entries", "60", out])
    assert refused.value.code == 2 and "not empty" in capsys.readouterr().err
    assert gen.main(["--entries", "60", "--seed", "3", "--force", out]) == 0


@pytest.fixture(scope="module")
def dup_workspace(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("gen") / "dup"
    gen.generate(str(out), ENTRIES, seed=7, duplicates=DUPLICATES)
    return out


def _entry(workspace: Path, path: str) -> tuple[str, str]:
    """(normalised title, body) of the entry at PATH."""
    text = (workspace / path).read_text(encoding="utf-8")
    title = next(line for line in text.splitlines() if line.startswith("title: "))
    return gen.title_key(json.loads(title[len("title: ") :])), gen.body_of(text)


def test_planted_duplicates_are_what_their_kind_says(dup_workspace: Path):
    pairs = json.loads((dup_workspace / gen.MANIFEST).read_text(encoding="utf-8"))["duplicates"]
    assert len(pairs) == round(DUPLICATES * ENTRIES)
    assert {p["kind"] for p in pairs} == set(gen.DUPLICATE_KINDS)
    for pair in pairs:
        (title, body), (title0, body0) = _entry(dup_workspace, pair["path"]), _entry(dup_workspace, pair["original"])
        assert pair["path"].split("/")[0] == pair["original"].split("/")[0] == pair["kb"]
        assert (title == title0) == (pair["kind"] == "exact"), pair
        similarity = gen.jaccard(gen.shingles(body), gen.shingles(body0))
        assert similarity == pytest.approx(pair["similarity"], abs=1e-4)
        if pair["kind"] in ("exact", "retitled"):
            assert body == body0
        elif pair["kind"] == "few_words":
            assert body != body0 and similarity >= 0.85 and len(gen._WORD.findall(body0)) >= 150
        else:
            assert similarity <= 0.6 and body.startswith(gen.first_half(body0))


def test_a_workspace_with_duplicates_has_no_other_equal_titles(dup_workspace: Path):
    titles = defaultdict(list)
    for path in dup_workspace.rglob("*.md"):
        if path.name != "README.md":
            text = path.read_text(encoding="utf-8")
            line = next((x for x in text.splitlines() if x.startswith("title: ")), None)
            if line:
                titles[gen.title_key(json.loads(line[len("title: ") :]))].append(path)
    manifest = json.loads((dup_workspace / gen.MANIFEST).read_text(encoding="utf-8"))
    exact = sum(1 for p in manifest["duplicates"] if p["kind"] == "exact")
    assert sorted(len(v) for v in titles.values() if len(v) > 1) == [2] * exact


def test_planted_duplicates_bring_no_other_defect(dup_workspace: Path):
    manifest = json.loads((dup_workspace / gen.MANIFEST).read_text(encoding="utf-8"))
    _assert_nothing_unplanted(_lint(dup_workspace), manifest)


def test_duplicates_fraction_is_bounded(tmp_path: Path, capsys):
    with pytest.raises(SystemExit) as exc:
        gen.main(["--entries", "60", "--duplicates", "0.5", str(tmp_path / "ws")])
    assert exc.value.code == 2 and "--duplicates" in capsys.readouterr().err


def test_duplicate_scoring_matches_pairs_either_way_round():
    planted = [
        {"kind": "exact", "path": "a/x-copy.md", "original": "a/x.md"},
        {"kind": "few_words", "path": "a/y2.md", "original": "a/y.md"},
        {"kind": "retitled", "path": "a/z2.md", "original": "a/z.md"},
        {"kind": "near_miss", "path": "a/n2.md", "original": "a/n.md"},
    ]
    ws, cwd = Path("/w/ws"), Path("/w")  # kblint shows paths relative to the directory it ran in
    issues = [
        {"rule": "possible_duplicate", "path": "ws/a/x.md", "related_path": "ws/a/x-copy.md", "similarity": 1.0},
        {"rule": "possible_duplicate", "path": "ws/a/y2.md", "related_path": "ws/a/y.md", "similarity": 0.9},
        {"rule": "possible_duplicate", "path": "ws/a/n.md", "related_path": "ws/a/n2.md", "similarity": 0.3},
        {"rule": "possible_duplicate", "path": "ws/a/p.md", "related_path": "ws/a/q.md", "similarity": 0.1},
        {"rule": "broken_link", "path": "ws/a/z.md"},
    ]
    result = dup_bench.score(issues, planted, ws, cwd)
    assert result["recall"] == pytest.approx(2 / 3)
    assert {k: (t["planted"], t["found"]) for k, t in result["kinds"].items()} == {
        "exact": (1, 1),
        "few_words": (1, 1),
        "retitled": (1, 0),
        "near_miss": (1, 1),
    }
    assert result["near_miss_reported"] == 1 and result["reported_pairs"] == 4
    assert result["unmatched"] == 1
    assert result["unmatched_examples"][0]["path"] == "a/p.md"
