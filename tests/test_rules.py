"""Structure and schema rules (SPEC §8): for every rule, a fixture KB that triggers it and one that
does not, under fixtures/rules/<rule>/{fail,pass}/ (plus a few named variants).

Each fixture is run as a user runs it (`python -m kblint validate <fixture> --format json`, from the
repository root) and the JSON report (SPEC §9) is checked: which issues of the rule, where (path,
line, column), how severe, on which field.
"""

from __future__ import annotations

import functools
from pathlib import Path

import pytest
from conftest import ROOT, Result, issues_of, run_kblint, write_kb

RULES_DIR = "fixtures/rules"

# The tiers whose rules the fixtures are built to isolate: checker/policy issues (rubric items) are
# another suite's business and are not counted against a fixture's focus.
FOCUS_TIERS = {"structure", "schema", "config"}

RULE_TIER = {
    "parse_error": "structure",
    "duplicate_id": "structure",
    "duplicate_key": "structure",
    "missing_title": "structure",
    "empty_body": "structure",
    "missing_type": "structure",
    "unknown_type": "schema",
    "subdirectory_mismatch": "schema",
    "missing_required": "schema",
    "invalid_field": "schema",
    "invalid_date": "schema",
    "unknown_field": "schema",
    "invalid_status": "schema",
    "broken_link": "structure",
    "unresolved_external": "structure",
    "orphan_entry": "structure",
}

# Default severities (SPEC §8 table).
RULES_SEVERITY = {
    "parse_error": "error",
    "duplicate_id": "error",
    "duplicate_key": "warning",
    "missing_title": "error",
    "empty_body": "warning",
    "missing_type": "info",
    "unknown_type": "warning",
    "subdirectory_mismatch": "warning",
    "missing_required": "error",
    "invalid_field": "warning",
    "invalid_date": "error",
    "unknown_field": "info",
    "invalid_status": "warning",
    "broken_link": "warning",
    "unresolved_external": "info",
    "orphan_entry": "info",
}

# rule -> the issues of that rule the fail KB must report, exactly:
# (path below the fail KB, line, column, severity, field)
EXPECTED: dict[str, list[tuple[str, int, int, str, str | None]]] = {
    "parse_error": [
        ("broken.md", 1, 1, "error", None),  # no closing fence
    ],
    "duplicate_id": [
        ("a/one.md", 2, 1, "error", "id"),
        ("b/two.md", 2, 1, "error", "id"),
        ("c/three.md", 5, 1, "error", "id"),  # the line of its `id:` key
        ("alpha.md", 1, 1, "error", "id"),  # id from the file name: no key to point at
        ("other/alpha-copy.md", 2, 1, "error", "id"),
        ("numbers/7.md", 1, 1, "error", "id"),
        ("number-id.md", 5, 1, "error", "id"),  # `id: 7`, a number taken as its text
    ],
    "duplicate_key": [  # at the later occurrence; a nested key names no field of the entry
        ("commented.md", 7, 1, "warning", "status"),  # read by PyYAML (a comment)
        ("flow.md", 6, 25, "warning", None),  # `{source: one, source: two}`
        ("nested.md", 8, 3, "warning", None),
        ("top-level.md", 5, 1, "warning", "title"),
    ],
    "missing_title": [
        ("no-title.md", 1, 1, "error", "title"),
        ("empty-title.md", 2, 1, "error", "title"),
        ("blank-title.md", 4, 1, "error", "title"),
        ("null-title.md", 2, 1, "error", "title"),
        ("article-untitled.md", 1, 1, "error", "title"),
    ],
    "empty_body": [  # concerns no key, link or heading: line 1 (SPEC §8, last paragraph)
        ("empty.md", 1, 1, "warning", None),
        ("whitespace.md", 1, 1, "warning", None),
        ("no-newline.md", 1, 1, "warning", None),
    ],
    "missing_type": [
        ("top.md", 1, 1, "info", "type"),
        ("notes/loose.md", 1, 1, "info", "type"),
        ("person/someone.md", 1, 1, "info", "type"),  # core types claim no folder
    ],
    "unknown_type": [
        ("widget.md", 4, 1, "warning", "type"),
        ("persn.md", 3, 1, "warning", "type"),
    ],
    "subdirectory_mismatch": [
        ("notes/misplaced.md", 4, 1, "warning", "type"),
        ("findings-old/stale.md", 3, 1, "warning", "type"),
        ("loose-finding.md", 3, 1, "warning", "type"),
        ("misc/bob.md", 3, 1, "warning", "type"),
    ],
    "missing_required": [
        ("missing-key.md", 1, 1, "error", "confidence"),  # `required:` list, key absent
        ("null-value.md", 5, 1, "error", "confidence"),  # key present, null
        ("blank-string.md", 6, 1, "error", "summary"),  # whitespace string
        ("empty-list.md", 7, 1, "error", "sources"),  # field with `required: true`, empty list
        ("event-no-date.md", 1, 1, "error", "date"),  # core event, not declared in kb.yaml
    ],
    "invalid_field": [
        ("select-values.md", 5, 1, "warning", "confidence"),
        ("select-options.md", 5, 1, "warning", "sector"),
        ("integer-below-min.md", 5, 1, "warning", "score"),
        ("number-above-max.md", 5, 1, "warning", "weight"),
        ("checkbox-not-boolean.md", 5, 1, "warning", "verified"),
        ("boolean-not-boolean.md", 5, 1, "warning", "published"),
        ("string-list.md", 5, 1, "warning", "headline"),
        ("text-mapping.md", 5, 1, "warning", "teaser"),
        ("rule-range.md", 5, 1, "warning", "priority"),
        ("rule-enum.md", 5, 1, "warning", "stage"),
        ("rule-pattern.md", 5, 1, "warning", "slug"),
        ("not-url.md", 5, 1, "warning", "homepage"),
        ("event-importance.md", 6, 1, "warning", "importance"),
    ],
    "invalid_date": [
        ("unquoted.md", 5, 1, "error", "date"),
        ("quoted-field.md", 6, 1, "error", "published"),
        ("quoted-text.md", 6, 1, "error", "published"),
        ("iso-rule.md", 6, 1, "error", "reviewed_on"),
        ("note-date.md", 5, 1, "error", "date"),
    ],
    "unknown_field": [
        ("near-field.md", 6, 1, "info", "reviewd_by"),
        ("near-optional.md", 6, 1, "info", "reviewr"),
        ("far.md", 6, 1, "info", "colour"),
    ],
    "invalid_status": [
        ("published.md", 5, 1, "warning", "status"),
        ("archived.md", 4, 1, "warning", "status"),
    ],
    "broken_link": [
        ("wikilink.md", 6, 26, "warning", None),  # twice in the body, reported once, at the first
        ("fm-links.md", 7, 1, "warning", "links"),  # the list item, not the `links:` key
        ("legacy.md", 7, 1, "warning", "links"),
        ("mdlink.md", 6, 27, "warning", None),
        ("objref.md", 6, 1, "warning", "employer"),
        ("references.md", 5, 1, "warning", "references"),
        ("transclusion.md", 8, 1, "warning", None),
    ],
    "unresolved_external": [
        ("wiki-external.md", 6, 26, "info", None),
        ("fm-external.md", 6, 1, "info", "links"),
    ],
    "orphan_entry": [
        ("lonely.md", 1, 1, "info", None),
        ("self-link.md", 1, 1, "info", None),  # a link to itself does not count
        ("code-only.md", 1, 1, "info", None),  # a wikilink in inline code is no link
    ],
}

# Rules (of the focus tiers) a fixture may report besides the rule under test, and why.
FAIL_EXTRAS = {
    "invalid_date": {"missing_required"},  # unquoted.md: the rest of the entry is still checked
}
PASS_EXTRAS = {
    "orphan_entry": {"broken_link", "unresolved_external"},  # broken and external links count as links
    # links by alias and in another case resolve, and say that the id is the canonical name
    "broken_link": {"noncanonical_link"},
    "unresolved_external": {"noncanonical_link"},
}


@functools.lru_cache(maxsize=None)
def lint(path: str, *args: str) -> Result:
    """Run `kblint validate PATH --format json ARGS` from the repository root (cached per run)."""
    result = run_kblint("validate", path, "--format", "json", *args, cwd=ROOT)
    assert result.code in (0, 1), f"kblint could not run on {path}: {result.stderr}"
    return result


def fixture(rule: str, variant: str) -> str:
    path = f"{RULES_DIR}/{rule}/{variant}"
    assert (ROOT / path).is_dir(), f"missing fixture {path}"
    return path


def md_files(path: str) -> int:
    return sum(1 for _ in (ROOT / path).rglob("*.md"))


def located(report: dict, rule: str) -> list[tuple]:
    return sorted((i["path"], i["line"], i["column"], i["severity"], i["field"]) for i in issues_of(report, rule))


def focus_rules(report: dict) -> set[str]:
    return {i["rule"] for i in report["issues"] if i["tier"] in FOCUS_TIERS}


def by_path(report: dict, rule: str) -> dict[str, dict]:
    found = issues_of(report, rule)
    out = {i["path"].rsplit("/", 1)[-1]: i for i in found}
    assert len(out) == len(found), f"several {rule} issues on one file name: {found}"
    return out


def _fail_params():
    for rule in EXPECTED:
        yield pytest.param(rule, id=rule)


# ---------------------------------------------------------------------------------------------
# Every rule: the fail KB reports exactly the expected issues, the pass KB none of them.


def test_every_rule_of_the_structure_and_schema_tiers_has_fixtures():
    assert set(EXPECTED) == set(RULE_TIER)
    for rule in RULE_TIER:
        for variant in ("fail", "pass"):
            fixture(rule, variant)


@pytest.mark.parametrize("rule", list(_fail_params()))
def test_fail_fixture_reports_the_rule(rule: str):
    path = fixture(rule, "fail")
    result = lint(path)
    report = result.json
    want = sorted((f"{path}/{rel}", line, col, sev, field) for rel, line, col, sev, field in EXPECTED[rule])
    assert located(report, rule) == want
    for issue in issues_of(report, rule):
        assert issue["tier"] == RULE_TIER[rule]
        assert issue["kb_name"] == report["kbs"][0]["name"]
        assert issue["message"]
        if rule == "parse_error":
            assert issue["entry_id"] is None
        elif rule != "duplicate_id":  # a duplicate's entry_id is the shared id, checked below
            assert issue["entry_id"] == Path(issue["path"]).stem


@pytest.mark.parametrize("rule", list(EXPECTED))
def test_fail_fixture_is_focused(rule: str):
    """Fixtures are otherwise clean, so each test above asserts one rule and nothing else hides it."""
    path = fixture(rule, "fail")
    result = lint(path)
    report = result.json
    assert issues_of(report, rule), f"{path} does not trigger {rule}"
    assert focus_rules(report) <= {rule} | FAIL_EXTRAS.get(rule, set())
    summary = report["summary"]
    assert summary["files"] == md_files(path)
    assert summary["entries"] == md_files(path) - (1 if rule == "parse_error" else 0)
    # exit 1 exactly when some issue is an error (--fail-on error is the default)
    has_error = any(i["severity"] == "error" for i in report["issues"])
    assert result.code == (1 if has_error else 0)
    if RULES_SEVERITY[rule] == "error":
        assert result.code == 1


@pytest.mark.parametrize("rule", list(EXPECTED))
def test_pass_fixture_reports_none_of_the_rule(rule: str):
    path = fixture(rule, "pass")
    report = lint(path).json
    assert issues_of(report, rule) == []
    assert focus_rules(report) <= PASS_EXTRAS.get(rule, set())
    # every file was read and parsed: the fixture is not vacuously clean
    assert report["summary"]["files"] == md_files(path) >= 2
    assert report["summary"]["entries"] == md_files(path)


# ---------------------------------------------------------------------------------------------
# Rule-specific behaviour.


def test_empty_body_variants_without_line():
    """empty_body's count, files, severity and the bodyless types (line is checked above)."""
    fail = lint(fixture("empty_body", "fail")).json
    assert sorted(by_path(fail, "empty_body")) == ["empty.md", "no-newline.md", "whitespace.md"]
    assert {i["severity"] for i in issues_of(fail, "empty_body")} == {"warning"}
    passing = lint(fixture("empty_body", "pass")).json
    assert issues_of(passing, "empty_body") == []  # collection and relationship may have no body


def test_enforce_makes_unknown_type_an_error():
    plain = lint(fixture("unknown_type", "fail"))
    enforced = lint(fixture("unknown_type", "enforce"))
    assert {i["severity"] for i in issues_of(plain.json, "unknown_type")} == {"warning"}
    assert plain.code == 0
    found = issues_of(enforced.json, "unknown_type")
    assert [(Path(i["path"]).name, i["line"], i["severity"]) for i in found] == [("widget.md", 4, "error")]
    assert enforced.code == 1


def test_enforce_raises_only_invalid_field_and_unknown_type():
    result = lint(fixture("invalid_field", "enforce"))
    report = result.json
    got = sorted(
        (Path(i["path"]).name, i["rule"], i["severity"], i["field"])
        for i in report["issues"]
        if i["tier"] in FOCUS_TIERS
    )
    assert got == sorted(
        [
            ("bad-select.md", "invalid_field", "error", "confidence"),
            ("rule-range.md", "invalid_field", "error", "priority"),  # validation.rules too
            ("lenient-select.md", "invalid_field", "warning", "flavour"),  # allow_other: stays a warning
            ("bad-date.md", "invalid_date", "error", "seen_on"),  # an error whatever enforce says
            ("bad-status.md", "invalid_status", "warning", "status"),
            ("extra-key.md", "unknown_field", "info", "colour"),
            ("no-confidence.md", "missing_required", "error", "confidence"),
        ]
    )
    assert result.code == 1
    # the same kind of misfit without enforce is a warning
    plain = lint(fixture("invalid_field", "fail")).json
    assert {i["severity"] for i in issues_of(plain, "invalid_field")} == {"warning"}


def test_unknown_field_suggests_near_misses():
    report = lint(fixture("unknown_field", "fail")).json
    found = by_path(report, "unknown_field")
    assert found["near-field.md"]["message"].endswith("did you mean 'reviewed_by'?")
    assert found["near-optional.md"]["message"].endswith("did you mean 'reviewer'?")  # an `optional:` key
    assert "colour" in found["far.md"]["message"]
    assert "did you mean" not in found["far.md"]["message"]


def test_unknown_type_suggests_near_misses():
    found = by_path(lint(fixture("unknown_type", "fail")).json, "unknown_type")
    assert "did you mean 'person'?" in found["persn.md"]["message"]
    assert "'widget'" in found["widget.md"]["message"]
    assert "did you mean" not in found["widget.md"]["message"]


def test_duplicate_id_names_the_other_paths():
    path = fixture("duplicate_id", "fail")
    report = lint(path).json
    groups: dict[str, set[str]] = {}
    for issue in issues_of(report, "duplicate_id"):
        groups.setdefault(issue["entry_id"], set()).add(issue["path"])
    assert groups == {
        "shared": {f"{path}/a/one.md", f"{path}/b/two.md", f"{path}/c/three.md"},
        "alpha": {f"{path}/alpha.md", f"{path}/other/alpha-copy.md"},
        "7": {f"{path}/numbers/7.md", f"{path}/number-id.md"},
    }
    for issue in issues_of(report, "duplicate_id"):
        others = groups[issue["entry_id"]] - {issue["path"]}
        for other in others:
            assert other in issue["message"], (issue["path"], issue["message"])
        assert issue["path"] not in issue["message"]
        assert f"'{issue['entry_id']}'" in issue["message"]


def test_many_entries_of_one_id_name_a_few_others_and_count_the_rest(tmp_path):
    """Each of N entries of one id names at most five others: N issues of bounded length, not N²
    paths (a pull request of thousands of copies must not print gigabytes)."""
    entries = {f"e{i:02}.md": "---\nid: same\ntitle: T\n---\nBody.\n" for i in range(40)}
    write_kb(tmp_path / "kb", "name: many\n", entries)
    report = run_kblint("validate", "kb", "--format", "json", "--no-cache", cwd=tmp_path).json
    found = {Path(i["path"]).name: i["message"] for i in issues_of(report, "duplicate_id")}
    assert len(found) == 40
    assert found["e00.md"] == (
        "Duplicate id 'same' (also in kb/e01.md, kb/e02.md, kb/e03.md, kb/e04.md, kb/e05.md and 34 more)"
    )
    assert found["e03.md"] == (
        "Duplicate id 'same' (also in kb/e00.md, kb/e01.md, kb/e02.md, kb/e04.md, kb/e05.md and 34 more)"
    )


def test_unquoted_impossible_date_is_reported_and_the_entry_still_checked():
    path = fixture("invalid_date", "fail")
    report = lint(path).json
    assert issues_of(report, "parse_error") == []
    mine = [i for i in report["issues"] if i["path"] == f"{path}/unquoted.md" and i["tier"] in FOCUS_TIERS]
    assert sorted((i["rule"], i["line"], i["field"]) for i in mine) == [
        ("invalid_date", 5, "date"),  # the line of `date: 2025-13-45`
        ("missing_required", 1, "summary"),  # the rest of the entry was checked
    ]
    date_issue = next(i for i in mine if i["rule"] == "invalid_date")
    assert "2025-13-45" in date_issue["message"]
    assert date_issue["entry_id"] == "unquoted"


def test_invalid_date_is_never_also_invalid_field():
    report = lint(fixture("invalid_date", "fail")).json
    assert issues_of(report, "invalid_field") == []
    found = by_path(report, "invalid_date")
    assert "2025-99-01" in found["iso-rule.md"]["message"]  # the `format: ISO8601` rule
    assert "next tuesday" in found["quoted-text.md"]["message"]


def test_both_field_vocabularies_are_accepted():
    kb_yaml = (ROOT / fixture("invalid_field", "fail") / "kb.yaml").read_text(encoding="utf-8")
    for spelling in (
        "values:",
        "options:",
        "type: string",
        "type: text",
        "type: integer",
        "type: number",
        "type: boolean",
        "type: checkbox",
    ):
        assert spelling in kb_yaml  # guard: the fixture really uses both spellings
    fail = lint(fixture("invalid_field", "fail")).json
    passing = lint(fixture("invalid_field", "pass")).json
    # no spelling is an unknown field type
    assert issues_of(fail, "config_error") == [] and issues_of(passing, "config_error") == []
    flagged = {i["field"] for i in issues_of(fail, "invalid_field")}
    pairs = {
        "values/options": {"confidence", "sector"},
        "string/text": {"headline", "teaser"},
        "integer/number": {"score", "weight"},
        "boolean/checkbox": {"published", "verified"},
    }
    for pair, fields in pairs.items():
        assert fields <= flagged, f"{pair}: {fields - flagged} not checked"
    assert issues_of(passing, "invalid_field") == []


def test_core_types_exist_without_declaration():
    for rule in ("unknown_type", "missing_required", "invalid_field"):
        for variant in ("fail", "pass"):
            kb_yaml = (ROOT / fixture(rule, variant) / "kb.yaml").read_text(encoding="utf-8")
            assert "event:" not in kb_yaml and "person:" not in kb_yaml  # guard: not declared
    # every core type is known
    assert issues_of(lint(fixture("unknown_type", "pass")).json, "unknown_type") == []
    # event requires a date
    found = by_path(lint(fixture("missing_required", "fail")).json, "missing_required")
    assert found["event-no-date.md"]["field"] == "date"
    assert found["event-no-date.md"]["severity"] == "error"
    # event importance is a number from 1 to 10
    found = by_path(lint(fixture("invalid_field", "fail")).json, "invalid_field")
    assert found["event-importance.md"]["field"] == "importance"
    assert "11" in found["event-importance.md"]["message"]
    passing = lint(fixture("invalid_field", "pass")).json
    events = [i for i in passing["issues"] if Path(i["path"]).name.startswith("event-") and i["tier"] in FOCUS_TIERS]
    assert events == []  # importance 1 and 10 are fine


def test_declared_core_type_replaces_core_required():
    path = fixture("missing_required", "core-override")
    report = lint(path).json
    assert "event:" in (ROOT / path / "kb.yaml").read_text(encoding="utf-8")
    # neither event has a date: the core `date` requirement is gone, the declared `venue` applies
    assert located(report, "missing_required") == [(f"{path}/no-venue.md", 1, 1, "error", "venue")]
    assert focus_rules(report) == {"missing_required"}


def test_title_under_required_yields_only_missing_title():
    path = fixture("missing_title", "fail")
    kb_yaml = (ROOT / path / "kb.yaml").read_text(encoding="utf-8")
    assert "required: [title, summary]" in kb_yaml and "title: {type: text, required: true}" in kb_yaml
    report = lint(path).json
    assert f"{path}/article-untitled.md" in {i["path"] for i in issues_of(report, "missing_title")}
    assert [i for i in issues_of(report, "missing_required") if i["field"] == "title"] == []
    assert issues_of(report, "missing_required") == []


def test_missing_type_entries_are_checked_as_notes():
    report = lint(fixture("missing_type", "fail")).json
    for issue in issues_of(report, "missing_type"):
        assert "'note'" in issue["message"]
    # checked as notes: no unknown_type, no other schema issue for an entry without a type
    assert issues_of(report, "unknown_type") == []


@pytest.mark.parametrize(("value", "kind"), [("[note]", "a list"), ("{a: 1}", "a mapping")])
def test_a_title_or_type_that_is_no_text_is_named_so(tmp_path, value: str, kind: str):
    kb = write_kb(tmp_path / "k", "name: k\n", {"c.md": f"---\ntitle: {value}\ntype: {value}\n---\nBody.\n"})
    report = lint(str(kb), "--select", "missing_title,missing_type").json
    assert [(i["line"], i["rule"], i["message"]) for i in report["issues"]] == [
        (2, "missing_title", f"Entry 'c' has a title that is {kind}, not a text"),
        (3, "missing_type", f"Entry 'c' has a type that is {kind}, not a text; checked as 'note'"),
    ]


def test_missing_type_under_a_nested_subdirectory_names_the_type_its_fix_writes(tmp_path):
    """A type is inferred from the top folder alone: an entry under a type's deeper subdirectory
    is told so, and --fix gives it that type."""
    kb = write_kb(tmp_path / "kb", "name: mt\ntypes:\n  memo:\n    subdirectory: research/notes\n", {})
    (kb / "research" / "notes").mkdir(parents=True)
    (kb / "research" / "notes" / "x.md").write_text("---\ntitle: X\n---\nBody.\n")
    report = run_kblint("validate", "kb", "--format", "json", "--no-cache", cwd=tmp_path).json
    assert [i["message"] for i in issues_of(report, "missing_type")] == [
        "Entry 'x' has no type and it is under research/notes/, the subdirectory of type 'memo', "
        "but a type is inferred from the top folder alone; checked as 'note'"
    ]
    run_kblint("validate", "kb", "--fix", "--no-cache", cwd=tmp_path)
    assert (kb / "research" / "notes" / "x.md").read_text() == "---\ntitle: X\ntype: memo\n---\nBody.\n"


def test_broken_link_messages_name_the_target():
    found = by_path(lint(fixture("broken_link", "fail")).json, "broken_link")
    targets = {
        "wikilink.md": "no-such-entry",
        "fm-links.md": "ghost",
        "legacy.md": "phantom",
        "mdlink.md": "missing",
        "objref.md": "nobody-inc",
        "references.md": "absent-report",
        "transclusion.md": "missing-diagram.svg",
    }
    assert set(found) == set(targets)
    for name, target in targets.items():
        assert f"'{target}'" in found[name]["message"], found[name]["message"]


def test_unresolved_external_names_the_kb_and_exits_zero():
    result = lint(fixture("unresolved_external", "fail"))
    found = by_path(result.json, "unresolved_external")
    assert "'otherkb'" in found["wiki-external.md"]["message"] and "target" in found["wiki-external.md"]["message"]
    assert "'otherkb'" in found["fm-external.md"]["message"]
    assert issues_of(result.json, "broken_link") == []
    assert result.code == 0  # info only


def test_strict_links_makes_external_links_broken():
    path = fixture("unresolved_external", "fail")
    plain = lint(path).json
    strict = lint(path, "--strict-links").json
    assert issues_of(strict, "unresolved_external") == []
    assert [row[:3] for row in located(strict, "broken_link")] == [
        row[:3] for row in located(plain, "unresolved_external")
    ]
    assert {i["severity"] for i in issues_of(strict, "broken_link")} == {"warning"}


def test_cross_kb_links_resolve_when_the_kb_is_loaded():
    report = lint(fixture("unresolved_external", "pass")).json
    assert sorted(kb["name"] for kb in report["kbs"]) == ["home", "otherkb"]
    assert issues_of(report, "broken_link") == []
    assert issues_of(report, "orphan_entry") == []


# ---------------------------------------------------------------------------------------------
# Regressions: behaviour that was once wrong.


def test_impossible_date_under_metadata_is_reported_once(tmp_path):
    write_kb(
        tmp_path / "kb",
        "name: nested\n",
        {
            "a.md": "---\ntitle: A\ntype: note\ntags: [x]\nmetadata:\n  date: 2025-13-45\n---\nSee [[b]].\n",
            "b.md": "---\ntitle: B\ntype: note\ntags: [x]\n---\nSee [[a]].\n",
        },
    )
    result = run_kblint("validate", "kb", "--format", "json", cwd=tmp_path)
    found = issues_of(result.json, "invalid_date")
    assert len(found) == 1, found
    assert found[0]["line"] == 6


def test_iso8601_rule_on_a_datetime_field_gives_invalid_date(tmp_path):
    write_kb(
        tmp_path / "kb",
        (
            "name: iso\n"
            "validation:\n  rules:\n    - {field: reviewed_on, format: ISO8601}\n"
            "types:\n  report:\n    fields:\n      reviewed_on: {type: datetime}\n"
        ),
        {
            "a.md": '---\ntitle: A\ntype: report\ntags: [x]\nreviewed_on: "2025-99-01"\n---\nSee [[b]].\n',
            "b.md": "---\ntitle: B\ntype: note\ntags: [x]\n---\nSee [[a]].\n",
        },
    )
    report = run_kblint("validate", "kb", "--format", "json", cwd=tmp_path).json
    assert [(i["line"], i["field"]) for i in issues_of(report, "invalid_date")] == [(5, "reviewed_on")]
    assert issues_of(report, "invalid_field") == []


def test_names_and_transitions_kb_yaml_cannot_read_are_config_errors_not_guesses(tmp_path):
    kb_yaml = """name: odd
types:
  note:
    required: [title, {summary: yes}]
    optional: {tags: yes}
    workflow:
      states: [draft, [review]]
      transitions:
        "draft to done": never
        "draft -> published": checked
"""
    write_kb(tmp_path / "kb", kb_yaml, {"a.md": "---\ntitle: A\ntype: note\nstatus: draft\n---\nText.\n"})
    result = run_kblint("validate", "kb", "--format", "json", cwd=tmp_path)
    errors = [(i["line"], i["message"]) for i in issues_of(result.json, "config_error")]
    assert errors == [
        (4, "type 'note': required must list names, got a mapping: left out"),
        (5, "type 'note': optional must list names, got a mapping: left out"),
        (7, "type 'note': workflow states must list names, got a list: left out"),
        (9, "type 'note': workflow transition 'draft to done' is not `from -> to`: left out"),
    ]
    assert not issues_of(result.json, "missing_required")  # no field named "{'summary': True}" is asked for


def test_a_subdirectory_outside_the_kb_is_a_config_warning(tmp_path):
    kb_yaml = "name: odd\ntypes:\n  note:\n    subdirectory: ../../etc\n  memo:\n    subdirectory: /etc\n"
    kb_yaml += "  person:\n    subdirectory: people/\n"
    write_kb(tmp_path / "kb", kb_yaml, {"people/a.md": "---\ntitle: A\ntype: person\n---\nText.\n"})
    result = run_kblint("validate", "kb", "--format", "json", cwd=tmp_path)
    assert [(i["line"], i["severity"], i["message"]) for i in issues_of(result.json, "config_error")] == [
        (4, "warning", "type 'note': subdirectory '../../etc' is no folder inside the KB: no entry is under it"),
        (6, "warning", "type 'memo': subdirectory '/etc' is no folder inside the KB: no entry is under it"),
    ]


def test_core_keys_in_a_shape_kblint_cannot_read_as_meant_are_invalid_fields(tmp_path):
    odd = "---\ntitle: No\ntype: note\nstatus: [draft]\ntags: {a: 1}\naliases: [x, [y]]\n---\nText.\n"
    fine = "---\ntitle: 'No'\ntype: note\nstatus: draft\ntags: [a, 7]\naliases: Other\n---\nText.\n"
    write_kb(tmp_path / "kb", "name: odd\ntypes:\n  note: {}\n", {"odd.md": odd, "fine.md": fine})
    result = run_kblint("validate", "kb", "--format", "json", cwd=tmp_path)
    assert [(i["path"], i["line"], i["field"], i["message"]) for i in issues_of(result.json, "invalid_field")] == [
        (
            "kb/odd.md",
            2,
            "title",
            "title is read as true or false, as YAML reads an unquoted yes, no, on or off: quote it",
        ),
        ("kb/odd.md", 4, "status", "status must be a text, got a list"),
        ("kb/odd.md", 5, "tags", "tags must be a list of names, got a mapping"),
        ("kb/odd.md", 6, "aliases", "aliases must be a list of names, got a list holding a list"),
    ]


def test_a_core_key_the_type_declares_is_checked_once_as_its_field(tmp_path):
    kb_yaml = "name: odd\ntypes:\n  note:\n    fields:\n      tags: {type: list}\n"
    write_kb(tmp_path / "kb", kb_yaml, {"a.md": "---\ntitle: A\ntype: note\ntags: {a: 1}\n---\nText.\n"})
    result = run_kblint("validate", "kb", "--format", "json", cwd=tmp_path)
    assert [i["message"] for i in issues_of(result.json, "invalid_field")] == [
        "Field 'tags' must be a list, got {'a': 1}"
    ]


def test_a_type_without_a_name_is_a_config_error(tmp_path):
    kb_yaml = "name: odd\ntypes:\n  ~:\n    required: [x]\n  '':\n    required: [y]\n  yes: {}\n  note: {}\n"
    write_kb(tmp_path / "kb", kb_yaml, {"a.md": "---\ntitle: A\ntype: note\n---\nText.\n"})
    result = run_kblint("validate", "kb", "--format", "json", cwd=tmp_path)
    assert [(i["line"], i["message"]) for i in issues_of(result.json, "config_error")] == [
        (3, "a type needs a name, got null: left out"),
        (5, "a type needs a name, got an empty one: left out"),
        (7, "a type needs a name, got true or false: left out"),
    ]


def test_a_kb_yaml_key_a_letter_away_from_one_kblint_reads_is_a_config_error(tmp_path):
    kb_yaml = (
        "name: typos\nvalidaton:\n  enforce: true\ntypes:\n  note:\n    requird: [title]\n    display: {icon: x}\n"
    )
    write_kb(tmp_path / "kb", kb_yaml, {"a.md": "---\ntitle: A\ntype: note\n---\nText.\n"})
    result = run_kblint("validate", "kb", "--format", "json", cwd=tmp_path)
    errors = [(i["line"], i["severity"], i["message"]) for i in issues_of(result.json, "config_error")]
    assert errors == [  # Pyrite's own keys (display) are left alone; a likely typo is a warning
        (2, "warning", "unknown key 'validaton' (did you mean 'validation'?): left out"),
        (6, "warning", "type 'note': unknown key 'requird' (did you mean 'required'?): left out"),
    ]


def test_a_repeated_key_keeps_its_fingerprint_when_lines_move_and_other_rules_point_at_the_value_read(tmp_path):
    kb_yaml = "name: fp\ntypes:\n  note:\n    workflow: {states: [draft, done]}\n"
    kb = write_kb(
        tmp_path / "kb", kb_yaml, {"a.md": "---\ntitle: A\ntype: note\nstatus: bogus\nstatus: wrong\n---\nA.\n"}
    )

    def found() -> dict[str, tuple[int, str]]:
        report = run_kblint("validate", "kb", "--format", "json", "--no-cache", cwd=tmp_path).json
        return {i["rule"]: (i["line"], i["fingerprint"]) for i in report["issues"] if i["field"] == "status"}

    before = found()
    assert before["duplicate_key"][0] == before["invalid_status"][0] == 5  # where 'wrong', the value read, is
    (kb / "a.md").write_text("---\ntitle: A\ntags: [moved]\ntype: note\nstatus: bogus\nstatus: wrong\n---\nA.\n")
    after = found()
    assert after["duplicate_key"] == (6, before["duplicate_key"][1])


def test_a_key_given_twice_in_kb_yaml_or_cross_kb_links_is_a_config_warning(tmp_path):
    """YAML keeps the last of two equal keys without a word: in kb.yaml a whole `types:` may go."""
    kb_yaml = (
        "name: twice\ntypes:\n  note: {required: [title]}\ntypes:\n  memo:\n    required: [a]\n    required: [b]\n"
    )
    kb = write_kb(tmp_path / "kb", kb_yaml, {"a.md": "---\ntitle: A\ntype: note\n---\nText.\n"})
    (kb / "cross-kb-links.yaml").write_text("- source: a\n  target: b\n  target: c\n  kb: other\n")
    result = run_kblint("validate", "kb", "--format", "json", "--no-cache", cwd=tmp_path)
    found = [(i["path"], i["line"], i["severity"], i["message"]) for i in issues_of(result.json, "config_error")]
    assert found == [
        (
            "kb/cross-kb-links.yaml",
            3,
            "warning",
            "key 'target' is given twice (first on line 2): only the last value is read",
        ),
        ("kb/kb.yaml", 4, "warning", "key 'types' is given twice (first on line 2): only the last value is read"),
        ("kb/kb.yaml", 7, "warning", "key 'required' is given twice (first on line 6): only the last value is read"),
    ]


def test_an_entry_with_no_kb_yaml_above_it_is_told_there_is_none(tmp_path):
    (tmp_path / "draft.md").write_text("---\ntitle: X\ntype: finding\n---\nBody.\n", encoding="utf-8")
    report = run_kblint("validate", "draft.md", "--format", "json", "--no-cache", cwd=tmp_path).json
    assert [i["message"] for i in issues_of(report, "unknown_type")] == [
        "Entry 'draft' has type 'finding', which is not declared (there is no kb.yaml above the file)"
    ]


def test_a_workflow_transition_item_without_from_and_to_is_a_config_error_at_its_line(tmp_path):
    kb_yaml = "name: odd\ntypes:\n  note:\n    workflow:\n      transitions:\n        - {from: a, to: b}\n        - {from: a}\n"
    write_kb(tmp_path / "kb", kb_yaml, {"a.md": "---\ntitle: A\ntype: note\n---\nText.\n"})
    report = run_kblint("validate", "kb", "--format", "json", cwd=tmp_path).json
    assert [(i["line"], i["message"]) for i in issues_of(report, "config_error")] == [
        (
            7,
            "type 'note': workflow transition {'from': 'a'} needs both `from` and `to` "
            "(or a mapping of `from -> to: why`): left out",
        )
    ]


def test_dates_inside_a_shown_value_read_as_dates(tmp_path):
    kb = write_kb(tmp_path / "k", "name: k\n", {"a.md": "---\ntitle: A\ntype: event\ndate: [2024-01-01]\n---\nB.\n"})
    (issue,) = issues_of(lint(str(kb)).json, "invalid_date")
    assert issue["message"] == "Field 'date' is not a real date (YYYY-MM-DD): ['2024-01-01']"


def test_nan_is_outside_every_range(tmp_path):
    kb = write_kb(
        tmp_path / "k",
        "name: k\n",
        {"a.md": "---\ntitle: A\ntype: event\ndate: 2024-01-01\nimportance: .nan\n---\nB.\n"},
    )
    (issue,) = issues_of(lint(str(kb)).json, "invalid_field")
    assert (issue["line"], issue["message"]) == (5, "Field 'importance' is nan, not a number within its range")


def test_an_integer_past_the_floats_is_compared_with_a_range(tmp_path):
    kb = write_kb(
        tmp_path / "k",
        "name: k\n",
        {"a.md": f"---\ntitle: A\ntype: event\ndate: 2024-01-01\nimportance: 1{'0' * 400}\n---\nB.\n"},
    )
    (issue,) = issues_of(lint(str(kb)).json, "invalid_field")
    assert issue["message"].startswith("Field 'importance' is 1000") and issue["message"].endswith(
        ", above the maximum 10"
    )
