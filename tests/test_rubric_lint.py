"""The rubric tier: kblint lints the rubric of kb.yaml itself (duplicate items, thresholds no entry can
reach or every entry meets, unordered levels, judgment items that restate the schema, policy typos,
fields and statuses no type declares)."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import issues_of, run_kblint, write_kb

from kblint.model.kbschema import TypeSchema, schema_from_text
from kblint.model.plan import Plan, build_plan
from kblint.rules import RULES
from kblint.rules.rubric import policy_typo, score_bounds

ENTRY = "---\ntitle: Harbor contract\ntags: [harbor, council]\n---\nSigned in May, see [[b]].\n"
OTHER = "---\ntitle: City council\ntags: [harbor, council]\n---\nIt signed [[a]].\n"


def plan_of(kb_yaml: str) -> Plan:
    return build_plan(schema_from_text(kb_yaml, "/kb/kb.yaml"))


def found(plan: Plan, rule: str) -> list[tuple[int, str]]:
    """(line, message) of each finding of RULE, broken items included."""
    out = [(i.line, i.message) for i in plan.findings if i.rule == rule]
    out += [(b.line, b.reason or "") for b in plan.broken() if b.broken_rule == rule]
    return sorted(out)


def rubric(*items: str, head: str = "name: k\n", tail: str = "") -> str:
    return head + "evaluation_rubric:\n" + "".join(f"  - {item}\n" for item in items) + tail


# ---------------------------------------------------------------------------------------------
# rubric_policy_typo


@pytest.mark.parametrize(
    ("text", "meant"),
    [
        ("tags cont >= 2", "tags count >= 2"),
        ("tag count >= 2", "tags count >= 2"),
        ("Tags >= 2", "tags count >= 2"),
        ("inlink required", "inlinks required"),
        ("body.wrods > 100", "body.words > 100"),
        ("Status draft -> review require tags count >= 1", "status draft -> review requires tags count >= 1"),
    ],
)
def test_a_misspelt_policy_is_reported_with_the_caret_and_the_policy_meant(text, meant):
    reason = policy_typo(text)
    assert reason is not None and f"did you mean {meant!r}?" in reason
    assert reason.endswith("^") and f"\n    {text}\n" in reason  # the parser's caret under the problem


def test_a_misspelt_policy_of_a_mapping_item_gets_the_policy_meant_too():
    [(line, reason)] = found(plan_of(rubric('{text: Long, policy: "body.word >= 10"}')), "config_error")
    assert line == 3 and reason.startswith("policy does not parse (did you mean 'body.words >= 10'?): ")


def test_the_caret_points_where_the_parser_stopped():
    reason = policy_typo("tags cont >= 2")
    assert reason is not None
    assert reason.endswith("expected 'count' or 'required', found 'cont'\n    tags cont >= 2\n         ^")


def test_a_policy_like_string_with_no_correction_that_parses_has_no_did_you_mean():
    reason = policy_typo("tags count >= many")
    assert reason is not None and "did you mean" not in reason and "expected a whole number, found 'many'" in reason


@pytest.mark.parametrize(
    "text",
    [
        "Explains cause -> effect clearly",
        "Entries with > 3 links are hubs",
        "Links -> related entries are bidirectional",
        "Status changes -> must be logged",
        "Tags > 3 are too many",
        "Inline links -> are checked",
        "Tags are relevant to the topic",
        "tags are required for reviews",
        "Findings distinguish what is documented from what is alleged",
        "Latency < 200 ms is reported",
        "Statuses go draft -> review -> confirmed",
        "Tags count >= 2",  # SPEC §6: policy shape is case-sensitive; capitalised, it is a judgment item
        "Metadata.reviewers count >= 2",
    ],
)
def test_prose_with_an_arrow_or_a_comparison_is_a_judgment_item(text):
    assert policy_typo(text) is None
    plan = plan_of(rubric(f'"{text}"'))
    kb = next(s for s in plan.scopes if s.scope == "kb")
    assert [b.kind for b in kb.items] == ["judgment"]


def test_a_policy_typo_is_broken_not_judged():
    plan = plan_of(rubric('"Entry explains the decision"', '"tags cont >= 2"', '"tags count >= 2"'))
    kb = {b.text: b for b in next(s for s in plan.scopes if s.scope == "kb").items}
    typo = kb["tags cont >= 2"]
    assert (typo.kind, typo.broken_rule, typo.line) == ("broken", "rubric_policy_typo", 4)
    assert kb["tags count >= 2"].kind == "policy"
    assert kb["Entry explains the decision"].kind == "judgment"
    assert plan.coverage().judgment == 1 and plan.coverage().broken == 1


# ---------------------------------------------------------------------------------------------
# rubric_duplicate_item


def test_near_identical_items_of_one_scope_are_reported_on_the_later_one():
    plan = plan_of(
        rubric(
            '"Entry explains why the contract matters"',
            '"Entry has at least two tags"',
            '"Entries explain why the contract matters."',
            '{text: "ENTRY HAS AT LEAST TWO TAGS!", checker: has_tags, params: {min: 2}}',
        )
    )
    assert found(plan, "rubric_duplicate_item") == [
        (5, "rubric item 'Entries explain why the contract matters.' says the same as "
         "'Entry explains why the contract matters' (kb.yaml line 3)"),
        (6, "rubric item 'ENTRY HAS AT LEAST TWO TAGS!' says the same as 'Entry has at least two tags' (kb.yaml line 4)"),
    ]  # fmt: skip
    assert RULES["rubric_duplicate_item"].severity == "warning"


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Entry explains why the contract matters", "Entry says where its facts come from"),
        ("Entry has at least two tags", "Entry has at least three tags"),
        ("Entry has a summary", "Entry has no summary"),
        ("tags count >= 2", "tags count >= 3"),
        ("tags count >= 2", "tags count <= 2"),
        ("inlinks count >= 2", "outlinks count >= 2"),
        ("Finding names the author", "Finding names the editor"),
        ("Written for experts", "Written by experts"),
        ("Links to the people involved", "Links from the people involved"),
        ("Connected", "Connected2"),
        ("Summary v1", "Summary v2"),
    ],
)
def test_items_that_differ_are_not_duplicates(a, b):
    assert found(plan_of(rubric(f'"{a}"', f'"{b}"')), "rubric_duplicate_item") == []


def test_items_bound_differently_are_not_duplicates_whatever_their_texts():
    kb_yaml = rubric(
        '{text: "Entry is well tagged", policy: "tags count >= 1"}',
        '{text: "Entry is well tagged.", policy: "tags count >= 2"}',
        '{text: "Entry is well tagged!", policy: "tags count >= 2"}',
    )
    assert [line for line, _ in found(plan_of(kb_yaml), "rubric_duplicate_item")] == [5]


def test_duplicates_are_looked_for_within_one_scope():
    kb_yaml = rubric(
        '{text: "Item names its author", applies_to: [finding]}',
        '{text: "Item names its author.", applies_to: [person]}',
        tail="types:\n  finding:\n    evaluation_rubric:\n      - Entry has a date\n"
        "  person:\n    evaluation_rubric:\n      - Entry has a date\n      - entry has a date!\n",
    )
    assert [line for line, _ in found(plan_of(kb_yaml), "rubric_duplicate_item")] == [12]


# ---------------------------------------------------------------------------------------------
# rubric_threshold_unreachable / rubric_threshold_trivial

GRADED = """\
  - text: "Entry explains why the contract matters"
    weight: 3
    levels:
      - {{id: missing, score: {low}}}
      - {{id: partial, score: 0.5}}
      - {{id: clear, score: {top}}}
"""


def graded(threshold: float, top: float = 1, low: float = 0, extra: str = "") -> str:
    return f"name: k\npass_threshold: {threshold}\nevaluation_rubric:\n" + GRADED.format(top=top, low=low) + extra


def test_the_best_and_worst_scores_of_a_type():
    plan = plan_of(graded(0.5, top=0.6, low=0.2))
    # three system checkers (1 or 0) and the graded item of weight 3 (0.6 at best, 0.2 at worst)
    assert score_bounds(plan.for_type("note")) == pytest.approx(((3 + 3 * 0.6) / 6, 3 * 0.2 / 6))


def test_a_json_schema_item_counts_in_the_bounds_as_in_the_score():
    schema_item = '  - text: "Status is known"\n    weight: 3\n    json_schema: {required: [status]}\n'
    plan = plan_of(graded(0.5, top=0.6, low=0.2, extra=schema_item))
    # a JSON Schema item passes (1) or fails (0), and its weight counts, as engine.scoring counts it
    assert score_bounds(plan.for_type("note")) == pytest.approx(((3 + 3 * 0.6 + 3) / 9, 3 * 0.2 / 9))


def test_a_threshold_above_the_best_score_is_unreachable():
    plan = plan_of(graded(0.9, top=0.6))
    [(line, message)] = found(plan, "rubric_threshold_unreachable")
    assert line == 2 and message.startswith("pass_threshold 0.9 is above the best score an entry of types ")
    assert "can get (0.80): no such entry can pass" in message
    assert found(plan_of(graded(0.8, top=0.6)), "rubric_threshold_unreachable") == []
    assert found(plan_of(graded(0.9)), "rubric_threshold_unreachable") == []


def test_an_unreachable_threshold_names_the_type_that_cannot_reach_it():
    items = GRADED.format(top=0.5, low=0).replace("\n ", "\n     ").replace("  - text", "      - text")
    kb_yaml = graded(0.9, extra="types:\n  finding:\n    evaluation_rubric:\n" + items)
    [(_, message)] = found(plan_of(kb_yaml), "rubric_threshold_unreachable")
    assert "an entry of type 'finding' can get (0.75)" in message


def test_a_threshold_of_zero_or_below_the_worst_score_is_trivial():
    [(line, message)] = found(plan_of(graded(0)), "rubric_threshold_trivial")
    assert line == 2 and "pass_threshold 0 is at or below the worst score an entry can get (0.00)" in message
    # the graded item's lowest level scores 0.5: no entry of any type scores below 0.15 (a document's
    # worst: 3 × 0.5 over the weight 8 of its three system checkers, its two own and the graded item)
    [(_, message)] = found(plan_of(graded(0.15, low=0.5)), "rubric_threshold_trivial")
    assert "pass_threshold 0.15 is at or below the worst score an entry can get (0.19)" in message
    assert found(plan_of(graded(0.2, low=0.5)), "rubric_threshold_trivial") == []
    assert found(plan_of(graded(0.5)), "rubric_threshold_trivial") == []
    assert found(plan_of("name: k\n"), "rubric_threshold_trivial") == []


@pytest.mark.skipif("pass_threshold" not in TypeSchema.__dataclass_fields__, reason="no type-level pass_threshold")
def test_a_type_level_threshold_is_checked_against_its_type():
    kb_yaml = graded(0.5, top=0.6, extra="types:\n  finding:\n    pass_threshold: 0.95\n")
    [(line, message)] = found(plan_of(kb_yaml), "rubric_threshold_unreachable")
    assert line == 12 and message.startswith("pass_threshold 0.95 of type 'finding' is above the best score")


# ---------------------------------------------------------------------------------------------
# rubric_levels_unordered, rubric_restates_schema


def test_levels_whose_scores_go_down_break_the_item():
    [(line, reason)] = found(plan_of(graded(0.5, top=0.4)), "rubric_levels_unordered")
    assert line == 4 and "levels go down: 'clear' (0.4) comes after 'partial' (0.5)" in reason
    assert found(plan_of(graded(0.5)), "rubric_levels_unordered") == []
    assert (RULES["rubric_levels_unordered"].tier, RULES["rubric_levels_unordered"].severity) == ("rubric", "error")


FINDING = """\
name: k
types:
  finding:
    required: [title, date]
    optional: [confidence]
    evaluation_rubric:
      - "Finding has a date"
      - "Finding weighs the evidence"
      - "Finding has a confidence"
      - {text: "Findings have a date", covered_by: schema, field: date}
"""


def test_a_judgment_item_that_only_restates_a_required_field():
    [(line, message)] = found(plan_of(FINDING), "rubric_restates_schema")
    assert line == 7 and message.startswith("judgment item 'Finding has a date' only restates the schema: 'date'")
    assert "`covered_by: schema, field: date`" in message
    assert RULES["rubric_restates_schema"].severity == "info"


def test_a_kb_item_that_restates_one_types_field_is_told_to_apply_to_that_type():
    kb_yaml = FINDING.replace("name: k\n", 'name: k\nevaluation_rubric:\n  - "Findings have a date field"\n')
    kb_yaml += "  memo:\n    required: [title]\n"
    messages = [m for _, m in found(plan_of(kb_yaml), "rubric_restates_schema")]
    assert any("`covered_by: schema, field: date, applies_to: [finding]`" in m for m in messages)
    bound = kb_yaml.replace(
        '"Findings have a date field"', "{text: Findings have a date field, covered_by: schema, field: date}"
    )
    [(_, reason)] = [(b.line, b.reason) for b in plan_of(bound).broken()]
    assert reason is not None and reason.endswith("restrict the item with `applies_to: [finding]`")


# ---------------------------------------------------------------------------------------------
# validate, checkers --kb, the cache

KB_YAML = rubric(
    '"Entry explains why the contract matters"', '"tags cont >= 2"', '"Entry explains why the contract matters."'
)


def test_validate_reports_the_rubric_tier_on_kb_yaml(tmp_path: Path):
    kb = write_kb(tmp_path / "kb", KB_YAML, {"notes/a.md": ENTRY, "notes/b.md": OTHER})
    report = run_kblint("validate", str(kb), "--format", "json", "--no-cache").json
    typo, duplicate = issues_of(report, "rubric_policy_typo"), issues_of(report, "rubric_duplicate_item")
    assert [(i["line"], i["tier"], i["severity"]) for i in typo] == [(4, "rubric", "error")]
    assert [(i["line"], i["tier"], i["severity"]) for i in duplicate] == [(5, "rubric", "warning")]
    assert all(i["path"].endswith("kb.yaml") for i in typo + duplicate)
    assert "did you mean 'tags count >= 2'?" in typo[0]["message"]
    selected = run_kblint("validate", str(kb), "--format", "json", "--no-cache", "--select", "rubric").json
    assert {i["rule"] for i in selected["issues"]} == {"rubric_policy_typo", "rubric_duplicate_item"}


def test_checkers_kb_lists_the_problems_of_kb_yaml_and_exits_1_on_an_error(tmp_path: Path):
    """What validate reports on kb.yaml beside the items: a threshold out of range, a misspelt key."""
    kb_yaml = "name: k\npass_threshold: 80\nevaluation_rubrc:\n  - x\nguidelines: 3\n"
    kb = write_kb(tmp_path / "kb", kb_yaml, {"notes/a.md": ENTRY})
    text = run_kblint("checkers", "--kb", str(kb))
    assert text.code == 1
    problems = text.stdout.split("  kb.yaml problems:\n", 1)[1].split("  totals:", 1)[0].splitlines()
    assert problems == [  # in the order of the file, whatever order they were found in
        "    kb.yaml:2: error config_error pass_threshold must be a number from 0 to 1, got 80 (a score of 0.8?)",
        "    kb.yaml:3: warning config_error unknown key 'evaluation_rubrc' (did you mean 'evaluation_rubric'?): left out",
        "    kb.yaml:5: error config_error guidelines must be a mapping",
    ]
    rows = run_kblint("checkers", "--kb", str(kb), "-f", "json").json["kbs"][0]["config_problems"]
    assert [(r["line"], r["severity"]) for r in rows] == [(2, "error"), (3, "warning"), (5, "error")]
    warned = write_kb(tmp_path / "warned", "name: k\nevaluation_rubrc:\n  - x\n", {"notes/a.md": ENTRY})
    assert run_kblint("checkers", "--kb", str(warned)).code == 0  # a warning alone
    unreachable = write_kb(tmp_path / "high", graded(0.95, top=0.6), {"notes/a.md": ENTRY})
    assert run_kblint("checkers", "--kb", str(unreachable)).code == 1  # rubric_threshold_unreachable, an error


def test_checkers_kb_lists_the_rubric_findings(tmp_path: Path):
    kb = write_kb(tmp_path / "kb", KB_YAML, {"notes/a.md": ENTRY})
    text = run_kblint("checkers", "--kb", str(kb))
    assert text.code == 1  # an item is broken
    findings = text.stdout.split("  rubric findings:\n", 1)[1].split("  totals:", 1)[0].splitlines()
    assert findings[0].startswith(
        "    kb.yaml:4: error rubric_policy_typo rubric item 'tags cont >= 2' is not enforced"
    )
    assert findings[1].startswith("    kb.yaml:5: warning rubric_duplicate_item rubric item ")
    assert len(findings) == 2
    data = run_kblint("checkers", "--kb", str(kb), "--format", "json").json
    rows = data["kbs"][0]["rubric_findings"]
    assert [(r["line"], r["rule"], r["severity"]) for r in rows] == [
        (4, "rubric_policy_typo", "error"),
        (5, "rubric_duplicate_item", "warning"),
    ]
    assert rows[0]["message"].endswith("^") and rows[0]["rubric_item"] == "tags cont >= 2"
    clean = run_kblint("checkers", "--kb", str(write_kb(tmp_path / "clean", "name: k\n", {"notes/a.md": ENTRY})))
    assert "rubric findings" not in clean.stdout
    assert run_kblint("checkers", "--kb", str(tmp_path / "clean"), "-f", "json").json["kbs"][0]["rubric_findings"] == []


def test_a_warm_run_reports_what_a_cold_run_does(tmp_path: Path):
    kb_yaml = graded(0.95, top=0.6) + '  - "tags cont >= 2"\n  - "Finding has a date"\n'
    kb = write_kb(tmp_path / "kb", kb_yaml, {"notes/a.md": ENTRY, "notes/b.md": OTHER})
    args = ("validate", str(kb), "--format", "json", "--cache-dir", str(tmp_path / "cache"))
    cold = run_kblint(*args).json["issues"]
    assert list((tmp_path / "cache").rglob("*.jsonl"))
    warm = run_kblint(*args).json["issues"]
    assert {i["rule"] for i in cold} >= {"rubric_threshold_unreachable", "rubric_policy_typo"}
    assert warm == cold
    (kb / "notes" / "b.md").write_text(OTHER + "More.\n", encoding="utf-8")  # the run is new, a.md's results are not
    partly = run_kblint(*args).json["issues"]
    assert [i for i in partly if i["tier"] == "rubric"] == [i for i in cold if i["tier"] == "rubric"]


# ---------------------------------------------------------------------------------------------
# rubric_unknown_name


def kb_yaml_with(
    finding_items: str = "", kb_items: str = "", memo: str = "    fields: {confidence: {type: text}}\n"
) -> str:
    """A KB with a type finding that lists its fields and workflow, a type memo, and the rubric
    items given (YAML flow items, one per line)."""
    items = "".join(f"      - {item}\n" for item in finding_items.splitlines())
    return (
        "name: k\ntypes:\n  finding:\n    required: [title, confidence]\n"
        "    fields: {confidence: {type: text}, reviewers: {type: list}}\n"
        "    workflow: {states: [draft, review, confirmed]}\n"
        + (f"    evaluation_rubric:\n{items}" if items else "")
        + f"  memo:\n{memo}"
        + (f"evaluation_rubric:\n{''.join(f'  - {i}' + chr(10) for i in kb_items.splitlines())}" if kb_items else "")
    )


def unknown(kb_yaml: str) -> list[tuple[int, str]]:
    return found(plan_of(kb_yaml), "rubric_unknown_name")


@pytest.mark.parametrize(
    ("item", "message"),
    [
        (
            '"metadata.confidnce required"',
            "rubric item 'metadata.confidnce required' names 'confidnce', which is not a field of type "
            "'finding' (did you mean 'confidence'?)",
        ),
        (
            '"status review->confimred requires tags count >= 1"',
            "rubric item 'status review->confimred requires tags count >= 1' names 'confimred', which is not a "
            "workflow status of type 'finding' (did you mean 'confirmed'?)",
        ),
        (
            "{text: Signed off, checker: has_field, params: {field: reviewer}}",
            "rubric item 'Signed off' (checker has_field) names 'reviewer', which is not a field of type 'finding' "
            "(did you mean 'reviewers'?)",
        ),
        (
            '{text: Graded, levels: [{id: "none", score: 0}, {id: some, score: 1, when: "metadata.xyz count >= 1"}]}',
            "rubric item 'Graded' (level 'some': 'metadata.xyz count >= 1') names 'xyz', which is not a "
            "field of type 'finding'",
        ),
    ],
)
def test_a_field_or_status_no_type_declares_is_named(item: str, message: str):
    assert unknown(kb_yaml_with(finding_items=item)) == [(8, message)]


def test_one_name_misspelt_in_two_levels_is_two_findings_with_their_own_fingerprints():
    levels = (
        '{text: Graded, levels: [{id: "none", score: 0}, {id: some, score: 0.5, when: "metadata.xyz count >= 1"}, '
        '{id: more, score: 1, when: "metadata.xyz count >= 2"}]}'
    )
    issues = [i for i in plan_of(kb_yaml_with(finding_items=levels)).findings if i.rule == "rubric_unknown_name"]
    assert len(issues) == 2 and len({i.discriminator for i in issues}) == 2


def test_a_kb_item_is_asked_of_every_type_it_applies_to():
    both = "{text: Sure, applies_to: [finding, memo], policy: 'metadata.reviewers required'}"
    assert unknown(kb_yaml_with(kb_items=both)) == []  # a field of one of the types is enough
    typo = "{text: Sure, applies_to: [finding, memo], policy: 'metadata.confidense required'}"
    assert unknown(kb_yaml_with(kb_items=typo)) == [
        (
            10,
            "rubric item 'Sure' (policy 'metadata.confidense required') names 'confidense', which is not a field "
            "of types 'finding', 'memo' (did you mean 'confidence'?)",
        )
    ]


@pytest.mark.parametrize(
    "item",
    [
        "'metadata.confidense required'",  # it applies to the built-in types too, which list no fields
        "{text: Sure, applies_to: [finding, memo], policy: 'metadata.title required'}",  # a key every type knows
        "{text: Moved, applies_to: [finding, memo], policy: 'status draft->published requires tags count >= 1'}",
        "{text: Gate, applies_to: [finding], policy: 'status *->confirmed requires tags count >= 1'}",
    ],
)
def test_a_name_is_not_reported_where_a_type_may_mean_it(item: str):
    """memo has no workflow: any status may be meant there."""
    assert unknown(kb_yaml_with(kb_items=item)) == []


def test_the_rule_reaches_the_report(tmp_path: Path):
    kb_dir = write_kb(tmp_path / "k", kb_yaml_with(finding_items="'metadata.confidnce required'"), {"a.md": ENTRY})
    report = run_kblint("validate", str(kb_dir), "--format", "json", "--no-cache").json
    assert [(i["line"], i["severity"]) for i in issues_of(report, "rubric_unknown_name")] == [(8, "warning")]
