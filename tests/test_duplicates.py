"""Entries compared with each other: possible_duplicate found without an LLM (fixtures/duplicates),
pairs classified by a judge on the test server, the gate of a candidate, and --format verdicts."""

from __future__ import annotations

import json
import shutil
import textwrap
from pathlib import Path

import jsonschema
import pytest
from conftest import ROOT, issues_of, run_kblint, write_kb
from llm_server import FakeLLM

from kblint.model.likeness import BinTable, agreement, has_body, same_body, shingles, similarity, sketch, words

FIXTURE = ROOT / "fixtures" / "duplicates"
SERVICE_OBJECTS = (FIXTURE / "payments" / "service-objects.md").read_text(encoding="utf-8")
BODY = SERVICE_OBJECTS.split("---\n", 2)[2]


def _pairs(report: dict, rule: str = "possible_duplicate") -> set[tuple[str, str]]:
    return {(Path(i["path"]).stem, Path(i["related_path"]).stem) for i in issues_of(report, rule)}


@pytest.fixture
def kb(tmp_path: Path) -> Path:
    shutil.copytree(FIXTURE, tmp_path / "kb")
    return tmp_path / "kb"


@pytest.fixture(scope="module")
def server():
    with FakeLLM() as fake:
        yield fake


@pytest.fixture(autouse=True)
def _fresh_server(server: FakeLLM):
    server.bad_level, server.level_confidence, server.garbage = None, None, 0
    server.requests.clear()


def _llm(server: FakeLLM, cache: Path) -> list[str]:
    return ["--llm", "openai:test-model", "--llm-base-url", server.openai_url, "--cache-dir", str(cache)]


# -- found without an LLM ------------------------------------------------------------------------


def test_copies_near_copies_and_shared_titles_are_found_near_misses_are_not():
    report = run_kblint("validate", str(FIXTURE), "--format", "json", "--no-cache").json
    assert _pairs(report) == {
        ("service-objects-again", "service-objects"),  # the same body under another title
        ("refunds", "refund-process"),  # two words changed
        ("ledger", "ledger-notes"),  # "Ledger" and "ledger!": one title; short bodies compare by title
    }  # idempotency and retries share half their body: not reported
    by_stem = {Path(i["path"]).stem: i for i in issues_of(report, "possible_duplicate")}
    assert by_stem["service-objects-again"]["similarity"] == 1.0
    assert 0.8 <= by_stem["refunds"]["similarity"] < 1.0
    assert "similarity" not in by_stem["ledger"] and "the same title or alias" in by_stem["ledger"]["message"]
    assert by_stem["refunds"]["related_id"] == "refund-process" and by_stem["refunds"]["severity"] == "warning"
    assert report["duplicates"] == {
        "enabled": True,
        "pairs": 3,
        "not_classified": 3,
        "reason": "no LLM configured",
    }


def test_the_issue_goes_on_the_newer_looking_entry(kb: Path):
    # service-objects-again was created after service-objects; make it the older one
    again = kb / "payments" / "service-objects-again.md"
    again.write_text(again.read_text(encoding="utf-8").replace("2025-03-01", "2024-12-01"), encoding="utf-8")
    report = run_kblint("validate", str(kb), "--format", "json", "--no-cache").json
    assert ("service-objects", "service-objects-again") in _pairs(report)


def test_the_text_report_says_the_pairs_are_not_classified():
    out = run_kblint("validate", str(FIXTURE), "--no-cache").stdout
    assert "duplicates: 3 possible pairs not classified (no LLM configured)" in out


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        ("enabled = false", set()),
        ("threshold = 0.9", {("service-objects-again", "service-objects"), ("ledger", "ledger-notes")}),
        ("min_words = 1000", {("ledger", "ledger-notes")}),  # every body compares by title only
        ('types = ["note"]', set()),
    ],
)
def test_the_duplicates_table_configures_it(kb: Path, config: str, expected: set):
    (kb / "kblint.toml").write_text(f"[duplicates]\n{config}\n", encoding="utf-8")
    report = run_kblint("validate", ".", "--format", "json", "--no-cache", cwd=kb).json
    assert _pairs(report) == expected
    assert report["duplicates"]["enabled"] is (config != "enabled = false")


def test_a_bad_duplicates_setting_is_a_config_error(kb: Path):
    (kb / "kblint.toml").write_text('[duplicates]\nthreshold = 2\nscope = "everything"\n', encoding="utf-8")
    result = run_kblint("validate", ".", cwd=kb)
    assert result.code == 2 and "'duplicates.threshold' must be a number above 0 and at most 1" in result.stderr


def test_the_workspace_scope_compares_entries_of_different_kbs(tmp_path: Path):
    entry = f"---\ntitle: Service objects\ntype: note\n---\n{BODY}"
    write_kb(tmp_path / "a", "name: a\n", {"so.md": entry})
    write_kb(tmp_path / "b", "name: b\n", {"so-copy.md": entry.replace("Service objects", "Business logic")})
    apart = run_kblint("validate", ".", "--format", "json", "--no-cache", cwd=tmp_path).json
    assert _pairs(apart) == set()
    (tmp_path / "kblint.toml").write_text('[duplicates]\nscope = "workspace"\n', encoding="utf-8")
    together = run_kblint("validate", ".", "--format", "json", "--no-cache", cwd=tmp_path).json
    assert _pairs(together) == {("so-copy", "so")}


def test_a_suppression_in_the_entry_hides_it(kb: Path):
    refunds = kb / "payments" / "refunds.md"
    text = refunds.read_text(encoding="utf-8").replace("---\n", "---\nkblint: {disable: [possible_duplicate]}\n", 1)
    refunds.write_text(text, encoding="utf-8")
    report = run_kblint("validate", str(kb), "--format", "json", "--no-cache").json
    assert ("refunds", "refund-process") not in _pairs(report) and len(_pairs(report)) == 2


def test_a_thousand_copies_make_a_pair_each_not_every_pair(tmp_path: Path):
    entries = {f"n{i:04}.md": f"---\ntitle: Copy {i}\n---\n{BODY}" for i in range(1000)}
    kb = write_kb(tmp_path / "kb", "name: notes\n", entries)
    report = run_kblint(
        "validate", ".", "--format", "json", "--no-cache", "--select", "possible_duplicate", cwd=kb
    ).json
    found = issues_of(report, "possible_duplicate")
    assert len(found) == 999 and {Path(i["related_path"]).name for i in found} == {"n0000.md"}


# -- the sketch ----------------------------------------------------------------------------------


def test_the_sketch_finds_alike_bodies_and_not_others():
    changed = BODY.replace("receives", "takes").replace("small class", "little class")  # two words changed
    other = (FIXTURE / "payments" / "idempotency.md").read_text(encoding="utf-8").split("---\n", 2)[2]
    assert similarity(shingles(words(BODY)), shingles(words(changed))) >= 0.8
    assert similarity(shingles(words(BODY)), shingles(words(other))) < 0.8
    a, b, c = (sketch("t", body, 0, 50) for body in (BODY, changed, other))
    assert agreement(a, b) >= 6 and any(
        BinTable([a]).band_keys(n) == BinTable([b]).band_keys(n) for n in range(8)
    )  # a candidate
    assert agreement(a, c) <= 2 and not same_body(a, b)
    assert sketch("t", BODY, 0, 50) == sketch("t", str(BODY), 0, 50)  # the same on every run and in every process
    assert sketch("Title", "Too short.", 20250101, 50) == sketch("title!", "Short.", 20250101, 50)
    assert not has_body(sketch("Title", BODY, 0, 1000))  # a short body: compared by title only


# -- classified by an LLM ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("level", "rule", "severity"),
    [
        ("duplicate", "duplicate_entry", "error"),
        ("conflict", "conflicting_entries", "warning"),
        ("unrelated", None, None),
    ],
)
def test_the_judge_classifies_each_pair(server: FakeLLM, tmp_path: Path, level: str, rule: str | None, severity):
    server.bad_level = level
    report = run_kblint("validate", str(FIXTURE), "--format", "json", *_llm(server, tmp_path / "c")).json
    pair_requests = [r for r in server.requests if "existing_entry" in (r["block"] or {}).get("entry", {})]
    assert len(pair_requests) == 3
    sent = pair_requests[0]["block"]
    assert [lv["id"] for lv in sent["items"][0]["levels"]] == ["unrelated", "conflict", "duplicate", "uncertain"]
    assert sent["entry"]["existing_entry"]["body"] and sent["guidelines"]
    assert not issues_of(report, "possible_duplicate")  # each pair got its class
    assert report["duplicates"]["classified"] == {"unrelated": 0, "conflict": 0, "duplicate": 0} | {level: 3}
    assert report["duplicates"]["requests"] == 3 and report["judgment"]["calls"] == 3  # no rubric item is judged
    if rule is None:
        assert not issues_of(report, "duplicate_entry") and not issues_of(report, "conflicting_entries")
        return
    found = issues_of(report, rule)
    assert len(found) == 3 and {i["severity"] for i in found} == {severity}
    assert found[0]["evaluator"] == "openai:test-model" and found[0]["confidence"] == 0.9
    curation = report["curation"]
    assert len(curation) == (3 if level == "conflict" else 0)


@pytest.mark.parametrize(("level", "confidence"), [("duplicate", 0.5), ("uncertain", 0.9)])
def test_a_pair_the_judge_is_not_sure_of_is_a_conflict(server: FakeLLM, tmp_path: Path, level: str, confidence: float):
    server.bad_level, server.level_confidence = level, confidence
    report = run_kblint("validate", str(FIXTURE), "--format", "json", *_llm(server, tmp_path / "c")).json
    assert not issues_of(report, "duplicate_entry") and len(issues_of(report, "conflicting_entries")) == 3
    out = run_kblint("validate", str(FIXTURE), *_llm(server, tmp_path / "c")).stdout
    assert "needs curation: 3 pairs of conflicting entries" in out


def test_a_pair_without_a_class_stays_a_possible_duplicate(server: FakeLLM, tmp_path: Path):
    from llm_server import ALWAYS

    server.garbage = ALWAYS
    report = run_kblint("validate", str(FIXTURE), "--format", "json", *_llm(server, tmp_path / "c")).json
    assert len(issues_of(report, "possible_duplicate")) == 3 and not issues_of(report, "duplicate_entry")
    assert report["duplicates"]["not_classified"] == 3
    assert report["duplicates"]["reason"] == "3 without a class from the judge"


def test_a_classified_pair_is_cached_by_both_entries(server: FakeLLM, kb: Path, tmp_path: Path):
    server.bad_level = "duplicate"
    first = run_kblint("validate", str(kb), "--format", "json", *_llm(server, tmp_path / "c")).json
    calls = len(server.requests)
    again = run_kblint("validate", str(kb), "--format", "json", *_llm(server, tmp_path / "c")).json
    assert len(server.requests) == calls and _pairs(again, "duplicate_entry") == _pairs(first, "duplicate_entry")
    assert all(i["cached"] for i in issues_of(again, "duplicate_entry"))
    older = kb / "payments" / "refund-process.md"  # the older entry of one pair changes: that pair is asked again
    older.write_text(older.read_text(encoding="utf-8").replace("three times", "twice"), encoding="utf-8")
    run_kblint("validate", str(kb), "--format", "json", *_llm(server, tmp_path / "c"))
    assert len(server.requests) == calls + 1


# -- a candidate gated against the KB --------------------------------------------------------------


def _gate(text: str, *extra: str) -> dict:
    args = ("--kb", str(FIXTURE), "--stdin", "--stdin-path", "payments/new.md", "--format", "json", "--no-cache")
    return run_kblint("validate", *args, *extra, input=text.encode()).json


def test_a_candidate_learns_what_it_duplicates_before_it_is_saved():
    candidate = f"---\ntitle: Our service layer\ntype: decision\ntags: [payments, design]\n---\n{BODY}"
    report = _gate(candidate)
    assert _pairs(report) == {("new", "service-objects"), ("new", "service-objects-again")}  # both have its body
    assert {i["similarity"] for i in issues_of(report, "possible_duplicate")} == {1.0}
    assert {Path(i["path"]).name for i in report["issues"]} == {"new.md"}  # only the candidate is reported on


def test_a_short_candidate_is_compared_by_title_only():
    """A body under min_words is not measured: a candidate of one line is a possible duplicate by
    its title alone, with no similarity to show."""
    title = SERVICE_OBJECTS.split("title: ", 1)[1].split("\n", 1)[0]
    report = _gate(f"---\ntitle: {title}\ntype: decision\ntags: [payments, design]\n---\nA stub for now.\n")
    found = issues_of(report, "possible_duplicate")
    assert ("new", "service-objects") in _pairs(report)
    assert all("similarity" not in i and "alike" not in i["message"] for i in found), found


def test_a_shared_title_pairs_entries_of_one_type_only(tmp_path: Path):
    """A writing and the concept it names may share a title: that alone makes no pair, and the
    concept, read first, does not keep the two writings from making theirs."""
    note = "---\ntitle: Destruction and Creation\ntype: {}\ntags: [a, b]\n---\n{} [[{}]]\n"
    kb = write_kb(
        tmp_path / "k",
        "name: k\n",
        {
            "paper.md": note.format("writing", "Boyd's essay of 1976.", "a-idea"),
            "a-idea.md": note.format("concept", "Taking apart and putting together.", "paper"),  # the first
            "again.md": note.format("writing", "The essay again.", "paper"),
        },
    )
    report = run_kblint("validate", str(kb), "--format", "json", "--fail-on", "never").json
    assert [(i["entry_id"], i["related_path"].rsplit("/", 1)[1]) for i in issues_of(report, "possible_duplicate")] == [
        ("paper", "again.md")
    ]


def test_with_a_judge_a_candidate_is_compared_with_its_closest_entries(server: FakeLLM, tmp_path: Path):
    # half of an existing body: below the threshold, yet close enough for the judge to look
    half = " ".join(BODY.split()[: len(BODY.split()) // 2]) + " Payouts now run hourly instead of nightly."
    candidate = f"---\ntitle: Payout timing\ntype: decision\ntags: [payments, design]\n---\n{half}\n"
    assert not issues_of(_gate(candidate), "possible_duplicate")
    server.bad_level = "conflict"
    report = _gate(candidate, *_llm(server, tmp_path / "c"))
    assert _pairs(report, "conflicting_entries") == {("new", "service-objects"), ("new", "service-objects-again")}
    assert {c["related_id"] for c in report["curation"]} == {"service-objects", "service-objects-again"}


# -- --format verdicts -----------------------------------------------------------------------------


def test_verdicts_give_one_line_per_entry_in_the_published_shape(server: FakeLLM, tmp_path: Path):
    schema = json.loads((ROOT / "docs" / "verdicts.schema.json").read_text(encoding="utf-8"))
    server.bad_level = "conflict"
    args = ("--format", "verdicts", "--fail-on", "warning", *_llm(server, tmp_path / "c"))
    result = run_kblint("validate", str(FIXTURE), *args)
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    for line in lines:
        jsonschema.validate(line, schema)
    assert len(lines) == 8 and result.code == 1
    by_id = {line["candidate_id"]: line for line in lines}
    refunds = by_id["refunds"]
    assert refunds["verdict"] == "fail" and refunds["rejection_codes"] == ["conflicting_entries"]
    assert refunds["curation_queue_entry"]["related_id"] == "refund-process"
    assert by_id["idempotency"] == {
        "candidate_id": "idempotency",
        "kb_name": "payments",
        "path": by_id["idempotency"]["path"],
        "verdict": "pass",
        "rejection_codes": [],
        "curation_queue_entry": None,
        "notes": [],
    }


def test_verdicts_list_every_code_that_failed():
    text = (FIXTURE / "payments" / "refunds.md").read_text(encoding="utf-8").replace("title: How refunds work\n", "")
    args = ("--kb", str(FIXTURE), "--stdin", "--stdin-path", "payments/new.md", "--format", "verdicts")
    result = run_kblint("validate", *args, "--fail-on", "warning", "--no-cache", input=text.encode())
    (line,) = [json.loads(x) for x in result.stdout.splitlines()]
    assert line["verdict"] == "fail"
    assert set(line["rejection_codes"]) == {"missing_title", "duplicate_id", "possible_duplicate"}
    assert len(line["notes"]) >= len(line["rejection_codes"])


def test_a_body_of_short_lines_and_a_rewrapped_body_are_found(tmp_path: Path):
    listed = "\n".join(f"- check ledger {n}" for n in range(40))  # no fragment long enough for the sketch
    wrapped = " ".join(BODY.split())
    rewrapped = textwrap.fill(wrapped, width=60)  # as an editor rewraps a paragraph
    entries = {
        "list.md": f"---\ntitle: Checks\n---\n{listed}\n",
        "list-copy.md": f"---\ntitle: Checks, again\n---\n{listed}\n",
        "prose.md": f"---\ntitle: Service objects\n---\n{wrapped}\n",
        "prose-rewrapped.md": f"---\ntitle: Business logic\n---\n{rewrapped}\n",
    }
    kb = write_kb(tmp_path / "kb", "name: notes\n", entries)
    report = run_kblint("validate", ".", "--format", "json", "--no-cache", cwd=kb).json
    assert _pairs(report) == {("list", "list-copy"), ("prose", "prose-rewrapped")}  # undated: the later path


def test_a_suppressed_pair_is_not_sent_to_the_judge(server: FakeLLM, kb: Path, tmp_path: Path):
    refunds = kb / "payments" / "refunds.md"
    text = refunds.read_text(encoding="utf-8").replace("---\n", "---\nkblint: {disable: [possible_duplicate]}\n", 1)
    refunds.write_text(text, encoding="utf-8")
    server.bad_level = "duplicate"
    report = run_kblint("validate", str(kb), "--format", "json", *_llm(server, tmp_path / "c")).json
    assert _pairs(report, "duplicate_entry") == {
        ("service-objects-again", "service-objects"),
        ("ledger", "ledger-notes"),
    }
    assert report["summary"]["hidden"] == {"suppressions": 1}


def test_with_shards_a_pair_is_reported_by_the_shard_of_its_newer_entry():
    found = set()
    for n in (1, 2, 3):
        report = run_kblint("validate", str(FIXTURE), "--format", "json", "--no-cache", "--shard", f"{n}/3").json
        shard = {Path(line["path"]).stem for line in map(json.loads, _verdicts(n).splitlines())}
        found |= _pairs(report)
        assert {a for a, _ in _pairs(report)} <= shard  # the verdicts of the shard's entries carry them
    assert len(found) == 3


def _verdicts(shard: int) -> str:
    return run_kblint("validate", str(FIXTURE), "--format", "verdicts", "--no-cache", "--shard", f"{shard}/3").stdout


def test_a_cached_run_reports_the_pairs_as_the_first(tmp_path: Path):
    args = ("validate", str(FIXTURE), "--format", "json", "--cache-dir", str(tmp_path / "c"))
    first, again = run_kblint(*args).json, run_kblint(*args).json
    assert again["issues"] == first["issues"] and again["duplicates"] == first["duplicates"]
    assert {i["similarity"] for i in issues_of(again, "possible_duplicate") if "similarity" in i} == {1.0, 0.85}
