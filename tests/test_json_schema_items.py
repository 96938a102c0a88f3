"""JSON Schema rubric items (README "JSON Schema criteria"): `{text, json_schema: {...}}` validates
each entry's frontmatter, one rubric_violation per error with its path; an invalid schema is a
config_error; the plan, `kblint checkers --kb` and `kblint schema` show the schema."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import issues_of, run_kblint, write_kb
from test_startup import loaded_modules

from kblint.model.json_schema import (
    JSON_SCHEMA,
    MAX_ERRORS,
    InvalidSchema,
    compile_schema,
    json_path,
    validation_errors,
)
from kblint.model.kbschema import load_kb_schema
from kblint.model.plan import build_plan

SCHEMA_KB = """\
name: sourced
evaluation_rubric:
  - text: "Findings are sourced"                         # line 3
    id: sourced
    severity: error
    json_schema:
      required: [sources, confidence]
      properties:
        confidence: {enum: [low, medium, high]}
        date: {type: string, format: date}
        sources: {type: array, minItems: 1, items: {type: string, format: uri}}
        refs:
          type: array
          items:
            type: object
            required: [url]
            properties:
              url: {type: string, format: uri}
              pages: {type: array, items: {type: integer}}
  - text: "Slugs are lower case"                         # line 20
    applies_to: [note]
    json_schema:
      properties:
        slug: {type: string, pattern: "^[a-z-]+$"}
"""

GOOD = """\
---
title: Harbor lease
tags: [harbor]
date: 2025-01-31
confidence: high
slug: harbor-lease
sources:
  - https://council.example/minutes/12
refs:
  - {url: "https://a.example/x", pages: [1, 2]}
---
See [[bad]].
"""

BAD = """\
---
title: Harbor fees
tags: [harbor]
date: 2025-02-30
confidence: maybe
slug: Harbor_Fees
sources:
  - https://council.example/minutes/12
  - https://council.example/minutes/13
  - not a uri
refs:
  - url: https://a.example/x
    pages: [1, two]
  - pages: []
---
See [[good]].
"""


@pytest.fixture
def kb(tmp_path: Path) -> Path:
    return write_kb(tmp_path / "kb", SCHEMA_KB, {"notes/good.md": GOOD, "notes/bad.md": BAD})


def _report(kb: Path, *args: str) -> dict:
    result = run_kblint("validate", str(kb), "--format", "json", "--no-cache", *args)
    assert result.code in (0, 1), result.stderr
    return result.json


def _violations(report: dict, stem: str) -> list[tuple[int, str]]:
    return [
        (i["line"], i["message"])
        for i in issues_of(report, "rubric_violation")
        if i.get("checker") == JSON_SCHEMA and i["path"].endswith(f"{stem}.md")
    ]


def test_an_entry_that_satisfies_the_schema_passes_and_one_that_does_not_fails_with_each_error(kb: Path):
    report = _report(kb)
    assert _violations(report, "good") == []
    assert _violations(report, "bad") == [  # the report's order: by line
        (4, "metadata.date: '2025-02-30' is not a 'date'"),
        (5, "metadata.confidence: 'maybe' is not one of ['low', 'medium', 'high']"),
        (6, "metadata.slug: 'Harbor_Fees' does not match '^[a-z-]+$'"),
        (10, "metadata.sources[2]: 'not a uri' is not a 'uri'"),
        (12, "metadata.refs[0].pages[1]: 'two' is not of type 'integer'"),
        (14, "metadata.refs[1]: 'url' is a required property"),
    ]
    issue = next(i for i in issues_of(report, "rubric_violation") if i["field"] == "sources")
    assert issue["tier"] == "schema" and issue["severity"] == "error"
    assert issue["rubric_item"] == "Findings are sourced" and issue["url"].endswith("#json_schema")


def test_a_missing_required_key_is_at_the_frontmatter_and_scores_count_each_item(tmp_path: Path):
    entry = "---\ntitle: T\ntags: [a]\nconfidence: low\n---\nBody.\n"
    kb = write_kb(tmp_path / "kb", SCHEMA_KB, {"notes/t.md": entry})
    report = _report(kb)
    assert _violations(report, "t") == [(1, "metadata: 'sources' is a required property")]
    # descriptive title and tags pass, outlinks and the sourced item fail, the slug item passes: 3 of 5
    assert report["kbs"][0]["score"] == pytest.approx(0.6)


def test_a_broken_schema_item_does_not_run(tmp_path: Path):
    # the second item takes the first's id: it is broken, and neither reported on nor scored
    kb_yaml = SCHEMA_KB.replace("    applies_to: [note]\n", "    id: sourced\n    applies_to: [note]\n")
    entry = "---\ntitle: T\ntags: [a]\nconfidence: low\nslug: Not_A_Slug\n---\nBody.\n"
    report = _report(write_kb(tmp_path / "kb", kb_yaml, {"notes/t.md": entry}))
    assert [i["message"] for i in issues_of(report, "config_error")] == [
        "rubric item 'Slugs are lower case' is not enforced: duplicate item id 'sourced' (also used at kb.yaml line 3)"
    ]
    assert _violations(report, "t") == [(1, "metadata: 'sources' is a required property")]
    # descriptive title and tags pass, outlinks and the sourced item fail: 2 of 4
    assert report["kbs"][0]["score"] == pytest.approx(0.5)


def test_errors_are_capped_per_item_and_entry(tmp_path: Path):
    schema = "{properties: {title: {}, tags: {}}, additionalProperties: {type: integer}}"
    kb_yaml = f"name: many\nevaluation_rubric:\n  - text: Numbers\n    json_schema: {schema}\n"
    fields = "".join(f"k{n:02}: x\n" for n in range(MAX_ERRORS + 5))
    kb = write_kb(tmp_path / "kb", kb_yaml, {"a.md": f"---\ntitle: A\ntags: [a]\n{fields}---\n[[a]]\n"})
    found = _violations(_report(kb), "a")
    assert len(found) == MAX_ERRORS + 1
    assert found[0] == (1, f"5 more JSON Schema errors of 'Numbers' (the first {MAX_ERRORS} are shown)")
    assert found[1] == (4, "metadata.k00: 'x' is not of type 'integer'")
    assert found[-1] == (23, f"metadata.k{MAX_ERRORS - 1}: 'x' is not of type 'integer'")


def test_select_ignore_and_suppressions_name_json_schema(kb: Path):
    assert {i.get("checker") for i in _report(kb, "--select", JSON_SCHEMA)["issues"]} == {JSON_SCHEMA}
    assert not [i for i in _report(kb, "--ignore", JSON_SCHEMA)["issues"] if i.get("checker") == JSON_SCHEMA]
    bad = (kb / "notes/bad.md").read_text(encoding="utf-8")
    (kb / "notes/bad.md").write_text(bad.replace("---\nSee", "kblint: {disable: [json_schema]}\n---\nSee"), "utf-8")
    (kb / "notes/good.md").write_text(GOOD + "<!-- kblint-disable json_schema -->\n", encoding="utf-8")
    report = _report(kb)
    assert _violations(report, "bad") == []
    unused = issues_of(report, "unused_suppression")
    assert [(Path(i["path"]).name, i["message"]) for i in unused] == [
        ("good.md", "Suppression of 'json_schema' suppressed nothing")
    ]
    assert not issues_of(report, "invalid_suppression")


@pytest.mark.parametrize(
    ("schema", "reason"),
    [
        ("{type: strin}", "json_schema.type: 'strin' is not valid under any of the given schemas"),
        ("{properties: {a: {minItems: -1}}}", "json_schema.properties.a.minItems: -1 is less than the minimum of 0"),
        ("{properties: {a: {pattern: '(unclosed'}}}", "json_schema.properties.a.pattern: '(unclosed' is not a 'regex'"),
        ("'not a mapping'", "json_schema must be a mapping (a JSON Schema), got a string"),
        ("{$schema: 'https://example.com/mine'}", "$schema 'https://example.com/mine' is no JSON Schema draft"),
    ],
)
def test_an_invalid_schema_is_a_config_error_at_the_items_line(tmp_path: Path, schema: str, reason: str):
    kb_yaml = f"name: broken\nevaluation_rubric:\n  - text: Broken item\n    json_schema: {schema}\n"
    kb = write_kb(tmp_path / "kb", kb_yaml, {"a.md": "---\ntitle: A\ntags: [a]\n---\n[[a]]\n"})
    errors = issues_of(_report(kb), "config_error")
    assert [e["line"] for e in errors] == [3] and reason in errors[0]["message"]
    assert not [i for i in _report(kb)["issues"] if i.get("checker") == JSON_SCHEMA]


def test_a_schema_item_binds_one_way_only(tmp_path: Path):
    kb_yaml = "name: b\nevaluation_rubric:\n  - text: T\n    json_schema: {}\n    field: sources\n"
    kb = write_kb(tmp_path / "kb", kb_yaml, {})
    assert "field/fields are for covered_by" in issues_of(_report(kb), "config_error")[0]["message"]


def test_compiled_once_per_item_with_draft_2020_12_by_default():
    validator = compile_schema({"prefixItems": [{"type": "integer"}], "items": False})
    assert validator.META_SCHEMA["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert [e.message for e in validator.iter_errors([1, 2])] == ["Expected at most 1 item but found 1 extra: 2"]
    draft7 = compile_schema({"$schema": "http://json-schema.org/draft-07/schema#", "items": [{"type": "integer"}]})
    assert not list(draft7.iter_errors([1, "x"]))  # a draft-07 tuple: only the first item is checked
    with pytest.raises(InvalidSchema, match="groups nest deeper"):
        compile_schema({"patternProperties": {"(" * 101 + ")" * 101: {}}})
    assert json_path(("sources", 2, "odd key", "x")) == "metadata.sources[2]['odd key'].x"


def test_patterns_run_with_the_time_budget(tmp_path: Path):
    kb_yaml = (
        "name: slow\nevaluation_rubric:\n  - text: Slow\n    json_schema: {properties: {s: {pattern: '^(a|a)*$'}}}\n"
    )
    kb = write_kb(tmp_path / "kb", kb_yaml, {"a.md": f"---\ntitle: A\ntags: [a]\ns: {'a' * 40}b\n---\n[[a]]\n"})
    (tmp_path / "kblint.toml").write_text("[limits]\nregex_timeout = 0.05\n", encoding="utf-8")
    report = _report(kb, "--config", str(tmp_path / "kblint.toml"))
    errors = issues_of(report, "checker_error")
    assert len(errors) == 1 and errors[0]["checker"] == JSON_SCHEMA and "regex_timeout" in errors[0]["message"]


def test_a_ref_resolves_within_the_schema_and_one_that_does_not_is_a_checker_error(tmp_path: Path):
    schema = "{$defs: {url: {format: uri}}, properties: {a: {$ref: '#/$defs/url'}, b: {$ref: '#/$defs/none'}}}"
    kb_yaml = f"name: refs\nevaluation_rubric:\n  - text: Refs\n    json_schema: {schema}\n"
    entries = {"x.md": "---\ntitle: X\ntags: [t]\na: not a uri\n---\n[[y]]\n"}
    entries["y.md"] = "---\ntitle: Y\ntags: [t]\nb: 1\n---\n[[x]]\n"
    report = _report(write_kb(tmp_path / "kb", kb_yaml, entries))
    assert _violations(report, "x") == [(4, "metadata.a: 'not a uri' is not a 'uri'")]
    errors = issues_of(report, "checker_error")
    assert [Path(e["path"]).name for e in errors] == ["y.md"] and errors[0]["message"] == (
        "JSON Schema item 'Refs': $ref '/$defs/none' does not resolve (nothing is fetched from elsewhere)"
    )


def test_a_ref_to_a_file_or_a_web_address_is_never_fetched(tmp_path: Path):
    """kb.yaml is untrusted: a `$ref` outside the schema is a checker_error, and nothing is read or
    asked for (the file would fail the entry; the listening socket would have a connection)."""
    import socket

    outside = tmp_path / "outside.json"
    outside.write_text('{"type": "integer"}')
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        listener.setblocking(False)
        url = f"http://127.0.0.1:{listener.getsockname()[1]}/schema.json"
        kb_yaml = (
            f"name: refs\nevaluation_rubric:\n  - text: File\n    json_schema: {{$ref: '{outside.as_uri()}'}}\n"
            f"  - text: Web\n    json_schema: {{$ref: '{url}'}}\n  - text: Self\n    json_schema: {{$ref: '#'}}\n"
        )
        report = _report(write_kb(tmp_path / "kb", kb_yaml, {"x.md": "---\ntitle: X\ntags: [t]\n---\nBody.\n"}))
        with pytest.raises(BlockingIOError):
            listener.accept()
    assert [i for i in issues_of(report, "rubric_violation") if i["checker"] == JSON_SCHEMA] == []
    assert sorted(e["message"] for e in issues_of(report, "checker_error")) == [
        f"JSON Schema item 'File': $ref '{outside.as_uri()}' does not resolve (nothing is fetched from elsewhere)",
        "JSON Schema item 'Self': the schema refers to itself without end ($ref)",
        f"JSON Schema item 'Web': $ref '{url}' does not resolve (nothing is fetched from elsewhere)",
    ]


def test_a_schema_whose_refs_expand_past_reason_is_refused_and_a_recursive_one_is_not():
    """`anyOf` of two refs to the level below, 40 levels deep, would try 2**40 parts on one value;
    a schema that refers to itself (a tree) is bounded by the value it validates."""
    levels: dict = {"d0": {"type": "integer"}}
    for i in range(1, 40):
        levels[f"d{i}"] = {"anyOf": [{"$ref": f"#/$defs/d{i - 1}"}] * 2}
    with pytest.raises(InvalidSchema, match="expand it to more than 100000 parts"):
        compile_schema({"$defs": levels, "properties": {"title": {"$ref": "#/$defs/d39"}}})
    tree = {
        "$defs": {
            "node": {"type": "object", "properties": {"children": {"type": "array", "items": {"$ref": "#/$defs/node"}}}}
        }
    }
    chain: dict = {"d0": {"type": "integer"}}  # each definition refers to the one before: linear
    for i in range(1, 300):
        chain[f"d{i}"] = {"$ref": f"#/$defs/d{i - 1}"}
    compile_schema({"$defs": chain, "$ref": "#/$defs/d299"})
    for i in range(300, 1500):  # too long a chain to walk
        chain[f"d{i}"] = {"$ref": f"#/$defs/d{i - 1}"}
    with pytest.raises(InvalidSchema, match="expand it to more than"):
        compile_schema({"$defs": chain, "$ref": "#/$defs/d1499"})
    validator = compile_schema({**tree, "$ref": "#/$defs/node"})
    assert validation_errors(validator, {"children": [{"children": []}, {"children": 5}]})[0].json_path == (
        "metadata.children[1].children"
    )


def test_plan_coverage_and_checkers_output(kb: Path):
    plan = build_plan(load_kb_schema(str(kb)))
    item = next(b for b in plan.scopes[1].items if b.id == "sourced")
    assert item.kind == "schema" and item.runs and item.validator is not None
    assert plan.totals()["schema"] == 5  # the system's body item, the core event's two, the two JSON Schema items
    text = run_kblint("checkers", "--kb", str(kb)).stdout
    assert "    [schema] Findings are sourced → json_schema\n" in text
    data = run_kblint("checkers", "--kb", str(kb), "--format", "json").json
    items = {i["text"]: i for s in data["kbs"][0]["scopes"] for i in s["items"]}
    assert items["Findings are sourced"]["binding"] == "schema"
    assert items["Findings are sourced"]["json_schema"]["required"] == ["sources", "confidence"]
    assert items["Entry body is non-empty"]["json_schema"] is None


def test_kblint_schema_exports_the_json_schema_for_agents(kb: Path):
    intent = run_kblint("schema", str(kb)).json
    rubric = {i["text"]: i for i in intent["types"]["note"]["rubric"]}
    assert rubric["Findings are sourced"]["binding"] == "schema"
    exported = rubric["Findings are sourced"]["json_schema"]
    assert exported["properties"]["sources"]["items"] == {"type": "string", "format": "uri"}
    assert json.loads(json.dumps(exported)) == exported
    assert "Slugs are lower case" not in {i["text"] for i in intent["types"]["person"]["rubric"]}


def test_a_warm_run_reports_what_a_cold_one_does(kb: Path, tmp_path: Path):
    def run(cache: bool) -> list[dict]:
        args = ["--cache-dir", str(tmp_path / "cache")] if cache else ["--no-cache"]
        result = run_kblint("validate", str(kb), "--format", "json", *args)
        return sorted(issues_of(result.json, "rubric_violation"), key=lambda i: (i["path"], i["line"], i["message"]))

    cold = run(cache=True)
    good = kb / "notes/good.md"
    good.write_text(good.read_text(encoding="utf-8") + "More.\n", encoding="utf-8")  # bad.md comes from the cache
    assert run(cache=True) == run(cache=False) == cold


def test_explain_json_schema():
    page = run_kblint("explain", JSON_SCHEMA).stdout
    assert page.startswith("json_schema — rubric items that validate the frontmatter")
    assert "metadata.sources[2]: 'x' is not a 'uri'" in page
    assert run_kblint("validate", "fixtures/example", "--select", JSON_SCHEMA, "--no-cache").code == 0


def test_jsonschema_is_imported_for_a_kb_that_uses_it(kb: Path):
    """(and only then: tests/test_startup.py lists it among the libraries the example KB does not import)"""
    assert "jsonschema" in loaded_modules("validate", str(kb), "--no-cache")


def test_unevaluated_properties_with_patterns_is_refused(tmp_path):
    from kblint.model.json_schema import InvalidSchema, compile_schema

    schema = {"patternProperties": {"^x-": {"type": "string"}}, "unevaluatedProperties": False}
    with pytest.raises(InvalidSchema, match="unevaluatedProperties cannot be used with patterns"):
        compile_schema(schema)
    compile_schema({"properties": {"a": {"type": "string"}}, "unevaluatedProperties": False})  # no pattern: fine
