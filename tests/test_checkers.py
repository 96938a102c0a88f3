"""The 16 core checkers of SPEC §5.2, end to end on fixture KBs, and the validation of their params.

Each `fixtures/checkers/<checker>/` is a KB whose `kb.yaml` binds that checker in one or more
rubric items. Its entries are named `pass*.md` (no item bound to the checker fails) and
`fail*.md` (at least one does); EXPECTED below says exactly which (entry, item) pairs fail.
Entries are otherwise clean (descriptive title, a tag, a link), so the system rubric is quiet.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from checker_examples import examples, run_example
from conftest import ROOT, issues_of, run_kblint, write_kb
from hypothesis import given
from hypothesis import strategies as st

from kblint.checkers.registry import registry, validate_params

CHECKER_FIXTURES = ROOT / "fixtures" / "checkers"

SPEC_CHECKERS = {
    "descriptive_title",
    "has_tags",
    "has_outlinks",
    "has_inlinks",
    "status_present",
    "priority_present",
    "has_field",
    "has_any_field",
    "body_has_section",
    "body_has_heading",
    "body_has_pattern",
    "body_has_code_block",
    "body_min_words",
    "cites_source",
    "not_oversized",
    "orphan_backlog_item",
}

# checker → rubric item text → the entries (ids) that fail that item. Every other entry passes.
EXPECTED: dict[str, dict[str, list[str]]] = {
    "descriptive_title": {
        # The KB-level item has the system item's text: it replaces it (severity error in kb.yaml).
        "Entry has a descriptive title": ["fail", "fail-wip-padded", "fail-new-entry", "fail-placeholder"],
    },
    "has_tags": {
        "Entry has at least one tag": ["fail", "fail-missing"],
        "Pair entry has at least two tags": ["fail-pair-one", "fail-pair-string", "fail-pair-twice"],
    },
    "has_outlinks": {
        "Entry links to at least one related entry (unless a stub)": ["fail", "fail-self", "fail-code"],
        "Hub links to at least two other entries": ["fail-hub-one", "fail-hub-self"],
    },
    "has_inlinks": {
        "Another entry links to this one": ["fail", "fail-self", "fail-code"],
        "At least two entries link to this one": ["fail-popular-once"],
    },
    "status_present": {
        "Entry has a status": ["fail", "fail-empty", "fail-null"],
    },
    "priority_present": {
        "Entry has a priority": ["fail", "fail-empty", "fail-null"],
    },
    "has_field": {
        "Entry describes the role": [
            "fail",
            "fail-empty-string",
            "fail-empty-list",
            "fail-null",
            "fail-nested-empty",
            "fail-other-field",
        ],
    },
    "has_any_field": {
        "Entry has a source URL or author": ["fail", "fail-empty", "fail-other-field"],
    },
    "body_has_section": {
        "Entry has a Sources section": ["fail", "fail-level3", "fail-level1", "fail-in-code", "fail-longer"],
    },
    "body_has_heading": {
        "Entry has a level-3 Timeline heading": ["fail", "fail-none"],
        "Entry has a Timeline heading": ["fail-any-code", "fail-any-plain"],
    },
    "body_has_pattern": {
        "Entry names its source on a line of its own": ["fail", "fail-mid-line"],
    },
    "body_has_code_block": {
        "Entry shows an example in a code block": ["fail", "fail-indented"],
    },
    "body_min_words": {
        "Entry body has at least ten words": ["fail", "fail-code", "fail-tilde-code"],
    },
    "cites_source": {
        "Entry cites a source": ["fail", "fail-empty-section", "fail-empty-fields", "fail-label-only", "fail-mid-line"],
        "Entry cites its evidence": ["fail-custom-default-section", "fail-custom-default-field"],
    },
    "not_oversized": {
        "Large items are broken into subtasks": ["fail", "fail-xxl"],
    },
    "orphan_backlog_item": {
        "Open backlog items belong to a larger item": ["fail", "fail-no-status", "fail-wrong-relation"],
    },
}


def _validate_json(*paths: str) -> dict:
    """`kblint validate PATHS --format json --fail-on never`, run from the repo root."""
    result = run_kblint("validate", *paths, "--format", "json", "--fail-on", "never")
    assert result.code == 0, result.stderr
    return json.loads(result.stdout)


def _bound_items(kb_yaml: dict, checker: str) -> dict[str, str]:
    """text → severity of every rubric item of kb.yaml (KB level and types) bound to CHECKER."""
    items = list(kb_yaml.get("evaluation_rubric") or [])
    for spec in (kb_yaml.get("types") or {}).values():
        items.extend(spec.get("evaluation_rubric") or [])
    return {
        item["text"]: item.get("severity", "warning")
        for item in items
        if isinstance(item, dict) and item.get("checker") == checker
    }


def _violations(report: dict, checker: str) -> list[dict]:
    return [i for i in issues_of(report, "rubric_violation") if i.get("checker") == checker]


def test_every_spec_checker_has_a_fixture_and_expectations():
    assert set(EXPECTED) == SPEC_CHECKERS
    assert {p.name for p in CHECKER_FIXTURES.iterdir() if p.is_dir()} >= SPEC_CHECKERS


@pytest.mark.parametrize("name", sorted(SPEC_CHECKERS))
def test_checker_fixture(name: str):
    kb_dir = CHECKER_FIXTURES / name
    kb_yaml = yaml.safe_load((kb_dir / "kb.yaml").read_text(encoding="utf-8"))
    bound = _bound_items(kb_yaml, name)
    expected = EXPECTED[name]
    # The table and the fixture agree: every item bound to the checker has expectations.
    assert set(bound) == set(expected)

    stems = sorted(p.stem for p in kb_dir.glob("*.md"))
    passing = [s for s in stems if s.startswith("pass")]
    failing = [s for s in stems if s.startswith("fail")]
    assert "pass" in passing and "fail" in failing
    assert sorted(passing + failing) == stems, "fixture entries are named pass*.md or fail*.md"
    expected_pairs = {(entry_id, text) for text, ids in expected.items() for entry_id in ids}
    assert {entry_id for entry_id, _ in expected_pairs} == set(failing)

    report = _validate_json(f"fixtures/checkers/{name}")
    summary = report["kbs"][0]
    assert summary["entries"] == len(stems)
    # No entry failed to parse and no item is broken: the fixture itself is sound.
    assert not issues_of(report, "parse_error") and not issues_of(report, "config_error")
    assert not issues_of(report, "checker_error")
    assert summary["coverage"]["broken"] == 0

    found = _violations(report, name)
    assert {(i["entry_id"], i["rubric_item"]) for i in found} == expected_pairs
    assert len(found) == len(expected_pairs), "one issue per failing (entry, item)"
    for issue in found:
        assert issue["entry_id"] not in passing
        assert issue["severity"] == bound[issue["rubric_item"]]
        assert issue["tier"] == "checker"
        assert issue["path"] == f"fixtures/checkers/{name}/{issue['entry_id']}.md"
        assert issue["message"]


@pytest.mark.parametrize("name", sorted(SPEC_CHECKERS))
def test_checker_fixture_plan(name: str):
    """`kblint checkers --kb` shows each fixture item bound to its checker, nothing broken."""
    result = run_kblint("checkers", "--kb", f"fixtures/checkers/{name}")
    assert result.code == 0, result.stdout + result.stderr
    assert "[broken]" not in result.stdout
    for text in EXPECTED[name]:
        assert f"[checker] {text} → {name}(" in result.stdout


def test_descriptive_title_override_replaces_system_item():
    """The fixture's KB-level item (same text as the system one, severity error) is the only one."""
    report = _validate_json("fixtures/checkers/descriptive_title")
    found = _violations(report, "descriptive_title")
    assert found and all(i["severity"] == "error" for i in found)
    padded = [i["message"] for i in found if i["entry_id"] == "fail-wip-padded"]
    assert len(padded) == 1 and "WIP" in padded[0]


def test_has_inlinks_counts_links_from_other_kbs(tmp_path: Path):
    """Incoming links are counted over the whole workspace (every KB of the run)."""
    entry = "---\ntitle: {title}\ntype: note\ntags: [fixture]\n---\n{body}\n"
    write_kb(
        tmp_path / "alpha",
        'name: alpha\nevaluation_rubric:\n  - {text: "Another entry links to this one", checker: has_inlinks}\n',
        {
            "target.md": entry.format(title="Target", body="See [[beta:source]]."),
        },
    )
    write_kb(
        tmp_path / "beta",
        "name: beta\n",
        {
            "source.md": entry.format(title="Source", body="See [[alpha:target]]."),
        },
    )

    both = run_kblint("validate", "alpha", "beta", "--format", "json", "--fail-on", "never", cwd=tmp_path)
    assert both.code == 0, both.stderr
    assert _violations(both.json, "has_inlinks") == []

    alone = run_kblint("validate", "alpha", "--format", "json", "--fail-on", "never", cwd=tmp_path)
    assert alone.code == 0, alone.stderr
    found = _violations(alone.json, "has_inlinks")
    assert [(i["entry_id"], i["rubric_item"]) for i in found] == [("target", "Another entry links to this one")]


# --- the registry ------------------------------------------------------------------------------


def test_registry_holds_exactly_the_spec_checkers():
    reg = registry()
    assert set(reg.names()) == SPEC_CHECKERS
    for name in SPEC_CHECKERS:
        checker = reg.get(name)
        assert checker is not None and checker.name == name and checker.source == "core"
        assert callable(checker.func)


@pytest.mark.parametrize("name", sorted(SPEC_CHECKERS))
def test_checker_docstring_examples(name: str, tmp_path: Path):
    """Each checker's docstring describes it on its first line and shows an entry that passes and one
    that fails; the examples are run."""
    checker = registry().checkers[name]
    assert checker.description and not checker.description.startswith(("Passes", "Fails"))
    found = examples(checker.doc)
    assert {e.passes for e in found} == {True, False}, checker.doc
    for i, example in enumerate(found):
        messages = run_example(tmp_path / str(i), name, example)
        assert len(messages) == (0 if example.passes else 1), f"{example}: {messages}"


def test_checkers_listing_names_every_checker():
    result = run_kblint("checkers")
    assert result.code == 0, result.stderr
    for name in SPEC_CHECKERS:
        assert name in result.stdout


# --- params validation -------------------------------------------------------------------------


def test_validate_params_fills_defaults():
    reg = registry()
    assert validate_params(reg.get("has_tags"), {}) == ({"min": 1}, [])
    assert validate_params(reg.get("has_tags"), None) == ({"min": 1}, [])
    assert validate_params(reg.get("has_outlinks"), {"min": 3}) == ({"min": 3}, [])
    assert validate_params(reg.get("has_field"), {"field": "role"}) == ({"field": "role"}, [])
    assert validate_params(reg.get("body_has_heading"), {"heading": "Timeline", "level": 3}) == (
        {"heading": "Timeline", "level": 3},
        [],
    )
    assert validate_params(reg.get("descriptive_title"), {}) == ({}, [])


BAD_PARAMS = [
    # (checker, params, words every problem message must contain)
    pytest.param("has_field", {}, ["has_field", "field"], id="missing-required"),
    pytest.param("has_field", {"field": None}, ["has_field", "field"], id="required-null"),
    pytest.param("body_min_words", {}, ["body_min_words", "min"], id="missing-required-min"),
    pytest.param("has_tags", {"min": "two"}, ["has_tags", "min", "integer"], id="wrong-type-str"),
    pytest.param("has_tags", {"min": True}, ["has_tags", "min", "integer"], id="wrong-type-bool"),
    pytest.param("has_any_field", {"fields": "url"}, ["has_any_field", "fields", "list"], id="wrong-type-list"),
    pytest.param(
        "body_has_heading", {"heading": "Timeline", "level": "3"}, ["body_has_heading", "level"], id="wrong-type-level"
    ),
    pytest.param("has_tags", {"minimum": 2}, ["has_tags", "minimum"], id="unknown-param"),
    pytest.param("status_present", {"field": "status"}, ["status_present", "field"], id="unknown-param-none-declared"),
    pytest.param(
        "body_has_pattern", {"pattern": "(unclosed"}, ["body_has_pattern", "pattern", "regex"], id="invalid-regex"
    ),
]


@pytest.mark.parametrize("name, params, words", BAD_PARAMS)
def test_validate_params_reports_problems(name, params, words):
    _, problems = validate_params(registry().get(name), params)
    assert len(problems) == 1, problems
    for word in words:
        assert word in problems[0]


def test_validate_params_rejects_a_non_mapping():
    _, problems = validate_params(registry().get("has_tags"), ["min", 2])
    assert problems and "has_tags" in problems[0]


BROKEN_ITEMS = [
    # (params line of the item, checker, words the reason must contain)
    pytest.param("has_field", "params: {}", ["has_field", "field"], id="missing-required"),
    pytest.param("has_tags", 'params: {min: "two"}', ["has_tags", "min"], id="wrong-type"),
    pytest.param("has_tags", "params: {minimum: 2}", ["has_tags", "minimum"], id="unknown-param"),
    pytest.param(
        "body_has_pattern",
        'params: {pattern: "(unclosed"}',
        ["body_has_pattern", "pattern", "regex"],
        id="invalid-regex",
    ),
    pytest.param("has_feild", "params: {field: role}", ["has_feild"], id="unknown-checker"),
]

BROKEN_KB = """\
name: broken
description: "A KB with one broken rubric item"
evaluation_rubric:
  - text: "Entry has a status"
    checker: status_present
  - text: "The broken item"
    checker: {checker}
    {params}
"""
BROKEN_ITEM_LINE = 6  # the line of `- text: "The broken item"`

CLEAN_ENTRY = "---\ntitle: {title}\ntype: note\ntags: [fixture]\nstatus: draft\nrole: Chair\n---\nSee [[{other}]].\n"


@pytest.fixture
def broken_kb(tmp_path: Path):
    def make(checker: str, params: str) -> Path:
        return write_kb(
            tmp_path / "broken",
            BROKEN_KB.format(checker=checker, params=params),
            {
                "one.md": CLEAN_ENTRY.format(title="First entry", other="two"),
                "two.md": CLEAN_ENTRY.format(title="Second entry", other="one"),
            },
        )

    return make


@pytest.mark.parametrize("checker, params, words", BROKEN_ITEMS)
def test_broken_item_in_checkers_plan(broken_kb, checker, params, words):
    kb = broken_kb(checker, params)
    result = run_kblint("checkers", "--kb", str(kb))
    assert result.code == 1, result.stdout + result.stderr
    lines = [line for line in result.stdout.splitlines() if "[broken]" in line]
    assert len(lines) == 1, result.stdout
    assert "[broken] The broken item — " in lines[0]
    reason = lines[0].split(" — ", 1)[1]
    for word in words:
        assert word in reason
    # The good item next to it is still bound.
    assert "[checker] Entry has a status → status_present(" in result.stdout

    as_json = run_kblint("checkers", "--kb", str(kb), "--format", "json")
    assert as_json.code == 1
    items = [
        item
        for kb_plan in as_json.json["kbs"]
        for scope in kb_plan["scopes"]
        for item in scope["items"]
        if item["text"] == "The broken item"
    ]
    assert len(items) == 1
    assert items[0]["binding"] == "broken"
    assert items[0]["line"] == BROKEN_ITEM_LINE
    assert all(word in items[0]["reason"] for word in words)
    assert as_json.json["kbs"][0]["totals"]["broken"] == 1


@pytest.mark.parametrize("checker, params, words", BROKEN_ITEMS)
def test_broken_item_is_a_config_error_in_validate(broken_kb, checker, params, words):
    kb = broken_kb(checker, params)
    result = run_kblint("validate", str(kb), "--format", "json")
    assert result.code == 1, result.stderr  # config_error is an error: fails the default --fail-on
    errors = issues_of(result.json, "config_error")
    assert len(errors) == 1, errors
    error = errors[0]
    assert error["entry_id"] is None
    assert error["path"].endswith("broken/kb.yaml")
    assert error["line"] == BROKEN_ITEM_LINE
    assert error["severity"] == "error"
    assert error["rubric_item"] == "The broken item"
    for word in words:
        assert word in error["message"]
    # The broken item never runs; the good item beside it still does (and passes on clean entries).
    assert [i for i in issues_of(result.json, "rubric_violation") if i.get("rubric_item") == "The broken item"] == []
    assert result.json["kbs"][0]["coverage"]["broken"] == 1
    missing_status = CLEAN_ENTRY.format(title="Third entry", other="one").replace("status: draft\n", "")
    (kb / "three.md").write_text(missing_status, encoding="utf-8")
    again = run_kblint("validate", str(kb), "--format", "json", "--fail-on", "never")
    found = [i for i in issues_of(again.json, "rubric_violation") if i.get("checker") == "status_present"]
    assert [i["entry_id"] for i in found] == ["three"]


# --- regressions: checker behaviour that was once wrong (SPEC §3, §5.2) ----


SELF_LINKS = [
    # (entry path, extra frontmatter, body): each body links only to the entry itself.
    pytest.param("case-self.md", "", "See [[CASE-SELF]].", id="case-insensitive-wikilink"),
    pytest.param("alias-self.md", "aliases: [myself]\n", "See [[myself]].", id="alias"),
    pytest.param("sub/path-self.md", "", "See [[sub/path-self]].", id="path-wikilink"),
    pytest.param("sub/md-self.md", "", "See [me](md-self.md).", id="markdown-link-in-subfolder"),
]


@pytest.mark.parametrize("rel, extra, body", SELF_LINKS)
def test_has_outlinks_ignores_every_kind_of_self_link(tmp_path: Path, rel, extra, body):
    """§3: "a link to the entry itself does not count" — whatever spelling resolves to it."""
    write_kb(
        tmp_path / "kb",
        "name: selflinks\n",
        {
            rel: f"---\ntitle: Only a self link\ntype: note\ntags: [fixture]\n{extra}---\n{body}\n",
        },
    )
    result = run_kblint("validate", "kb", "--format", "json", "--fail-on", "never", cwd=tmp_path)
    # The graph agrees the entry links nowhere (orphan_entry) ...
    assert len(issues_of(result.json, "orphan_entry")) == 1
    # ... so the system has_outlinks item must fail it too.
    assert len(_violations(result.json, "has_outlinks")) == 1


def test_cites_source_bare_source_label_followed_by_other_text(tmp_path: Path):
    """§5.2: passes on a line starting `Source:` *followed by text*; a bare label cites nothing."""
    write_kb(
        tmp_path / "kb",
        'name: cites\nevaluation_rubric:\n  - {text: "Entry cites a source", checker: cites_source}\n',
        {
            "one.md": "---\ntitle: Bare label\ntype: note\ntags: [fixture]\n---\n"
            "Source:\n\n## Notes\n\nSee [[two]] for the rest.\n",
            "two.md": "---\ntitle: Other\ntype: note\ntags: [fixture]\n---\nSee [[one]].\nSource: council minutes\n",
        },
    )
    result = run_kblint("validate", "kb", "--format", "json", "--fail-on", "never", cwd=tmp_path)
    assert [i["entry_id"] for i in _violations(result.json, "cites_source")] == ["one"]


INLINE_TRIPLE_BACKTICKS = (
    "---\ntitle: Inline code span\ntype: note\ntags: [fixture]\n---\n"
    "```make all``` builds it, one two three four five six seven eight, see [[two]].\n"
)


def test_body_has_code_block_inline_triple_backtick_span_is_not_a_block(tmp_path: Path):
    """CommonMark: a backtick fence's info string cannot contain backticks, so this is inline code."""
    write_kb(
        tmp_path / "kb",
        'name: spans\nevaluation_rubric:\n  - {text: "Entry has a code block", checker: body_has_code_block}\n',
        {
            "one.md": INLINE_TRIPLE_BACKTICKS,
            "two.md": "---\ntitle: Other\ntype: note\ntags: [fixture]\n---\nSee [[one]].\n",
        },
    )
    result = run_kblint("validate", "kb", "--format", "json", "--fail-on", "never", cwd=tmp_path)
    assert sorted(i["entry_id"] for i in _violations(result.json, "body_has_code_block")) == ["one", "two"]


def test_body_min_words_and_links_after_an_inline_triple_backtick_span(tmp_path: Path):
    write_kb(
        tmp_path / "kb",
        "name: spans\nevaluation_rubric:\n"
        '  - {text: "Entry body has at least ten words", checker: body_min_words, params: {min: 10}}\n',
        {
            "one.md": INLINE_TRIPLE_BACKTICKS,
            "two.md": "---\ntitle: Other\ntype: note\ntags: [fixture]\n---\n"
            "One two three four five six seven eight, see [[one]].\n",
        },
    )
    result = run_kblint("validate", "kb", "--format", "json", "--fail-on", "never", cwd=tmp_path)
    # 12 words outside the code span; the [[two]] link after the span is a real link.
    assert _violations(result.json, "body_min_words") == []
    assert _violations(result.json, "has_outlinks") == []


@given(st.text(alphabet="sSourceOURCE:\u017f \t\n#x", max_size=40))
def test_source_lines_are_found_at_the_start_of_any_line(body):
    import re

    from kblint.checkers.core import _SOURCE_FIRST_LINE_RE, _SOURCE_LATER_LINE_RE, _SOURCE_LINE

    found = bool(_SOURCE_FIRST_LINE_RE.match(body) or _SOURCE_LATER_LINE_RE.search(body))
    assert found == bool(re.search("^" + _SOURCE_LINE, body, re.MULTILINE | re.IGNORECASE))


@given(st.text(alphabet="ab \t\n\x1c\u3000`", max_size=60), st.integers(min_value=-2, max_value=70))
def test_words_up_to_a_threshold_are_the_count_capped_there(body, n):
    from kblint.model.entry import build_entry, split_and_load
    from kblint.model.kbschema import default_schema

    raw = split_and_load("---\ntitle: t\n---\n" + body)
    entry, _ = build_entry(raw, default_schema("/kb"), "/kb/x.md", "x.md")
    capped = entry.words_up_to(n)
    assert capped == min(entry.word_count, max(n, 0))
    assert entry.words_up_to(10**20) == entry.word_count
