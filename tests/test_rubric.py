"""Rubric binding (SPEC §4, §5): resolution, bindings, the plan, coverage, judgment counts, scores."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import issues_of, run_kblint, write_kb

from kblint.checkers.base import Checker
from kblint.checkers.registry import registry
from kblint.config import Settings
from kblint.engine.run import run
from kblint.model.kbschema import load_kb_schema
from kblint.model.plan import build_plan, is_policy_shaped

EVERY_FORM = """\
name: forms
evaluation_rubric:
  - "Entries explain why the subject matters"            # line 3: judgment
  - text: "Entry has at least two tags"                  # line 4: checker
    checker: has_tags
    params: {min: 2}
    severity: error
  - text: "Findings have a summary heading"              # line 8: checker, restricted
    checker: body_has_heading
    params: {heading: Summary}
    applies_to: [finding]
  - text: "Bad checker"                                  # line 12
    checker: has_tagz
  - text: "Missing param"                                # line 14
    checker: has_field
  - text: "Ill-typed param"                              # line 16
    checker: body_min_words
    params: {min: "many"}
  - text: "Bad regex"                                    # line 19
    checker: body_has_pattern
    params: {pattern: "(unclosed"}
  - text: "Typo key"                                     # line 22
    chekcer: has_tags
  - {text: "First with id", id: same, checker: status_present}     # line 24
  - {text: "Second with id", id: same, checker: priority_present}  # line 25
  - text: "Entry has at least one tag"                   # line 26: overrides the system item
    checker: has_tags
    params: {min: 1}
    severity: info
types:
  finding:
    required: [title, date]
    fields:
      date: {type: date}
    evaluation_rubric:
      - text: "Finding has a date"                       # line 36: schema
        covered_by: schema
        field: date
      - text: "Finding names a confidence"               # line 39: stale schema claim
        covered_by: schema
        field: confidence
      - "Finding weighs the evidence"                    # line 42: judgment
  person:
    evaluation_rubric:
      - "Person's role is explained"
"""


@pytest.fixture
def forms_kb(tmp_path: Path) -> Path:
    return write_kb(
        tmp_path / "forms",
        EVERY_FORM,
        {
            "findings/f1.md": "---\ntitle: F1\ntype: finding\ndate: 2025-01-01\ntags: [a]\n---\nSee [[p1]].\n",
            "findings/f2.md": "---\ntitle: F2\ntype: finding\ndate: 2025-01-02\ntags: [a, b]\n---\n## Summary\n[[f1]]\n",
            "people/p1.md": "---\ntitle: P1\ntype: person\nrole: x\ntags: [a, b]\n---\nSee [[f1]].\n",
        },
    )


def plan_of(kb: Path):
    return build_plan(load_kb_schema(str(kb)))


def test_policy_shaped_strings():
    assert is_policy_shaped("tags count >= 2")
    assert is_policy_shaped("metadata.url count > = 1")
    assert is_policy_shaped("status proposed->accepted requires metadata.reviewers count >= 2")
    assert is_policy_shaped("links.actor count>=1")
    assert is_policy_shaped("status draft->review->done requires tags count >= 1")  # starts so: a broken policy
    assert is_policy_shaped("status a->b-c requires tags")
    assert not is_policy_shaped("tags are required for reviews")
    assert not is_policy_shaped("Tags count >= 2")
    assert not is_policy_shaped("Tags are relevant to the topic")


def test_every_form_binds(forms_kb: Path):
    plan = plan_of(forms_kb)
    kb_scope = next(s for s in plan.scopes if s.scope == "kb")
    kinds = {b.text: (b.kind, b.reason) for b in kb_scope.items}
    assert kinds["Entries explain why the subject matters"] == ("judgment", None)
    assert kinds["Entry has at least two tags"][0] == "checker"
    assert (
        "unknown checker 'has_tagz'" in kinds["Bad checker"][1] and "did you mean 'has_tags'" in kinds["Bad checker"][1]
    )
    assert "needs param 'field'" in kinds["Missing param"][1]
    assert "param 'min' must be an integer" in kinds["Ill-typed param"][1]
    assert "not a valid regex" in kinds["Bad regex"][1]
    assert "unknown key 'chekcer'" in kinds["Typo key"][1] and "did you mean 'checker'" in kinds["Typo key"][1]
    assert kinds["First with id"] == ("checker", None)
    assert "duplicate item id 'same'" in kinds["Second with id"][1]
    finding = next(s for s in plan.scopes if s.scope == "type" and s.type_name == "finding")
    fk = {b.text: (b.kind, b.reason) for b in finding.items}
    assert fk["Finding has a date"] == ("schema", None)
    assert "not required for type 'finding'" in fk["Finding names a confidence"][1]
    assert fk["Finding weighs the evidence"] == ("judgment", None)


def test_resolution_order_merge_and_applies_to(forms_kb: Path):
    plan = plan_of(forms_kb)
    finding = [b.text for b in plan.for_type("finding")]
    # system items first, then the type's, then the KB's; same text merged in first position
    assert finding[:4] == [
        "Entry has a descriptive title",
        "Entry body is non-empty",
        "Entry has at least one tag",
        "Entry links to at least one related entry (unless a stub)",
    ]
    assert finding[4:7] == ["Finding has a date", "Finding names a confidence", "Finding weighs the evidence"]
    assert "Findings have a summary heading" in finding
    assert "Findings have a summary heading" not in [b.text for b in plan.for_type("person")]
    merged = next(b for b in plan.for_type("finding") if b.text == "Entry has at least one tag")
    assert (merged.scope, merged.severity) == ("kb", "info")  # the KB mapping wins over the system item
    # a type rubric in kb.yaml replaces the core one: person's core has_field(role) item is gone
    assert [b.text for b in plan.for_type("person") if b.scope == "type"] == ["Person's role is explained"]
    # core types keep their defaults
    assert [b.checker for b in plan.for_type("document") if b.scope == "type"] == ["has_any_field", "has_field"]
    # the overridden system item is counted once, in the scope that wins
    system = next(s for s in plan.scopes if s.scope == "system")
    assert "Entry has at least one tag" not in [b.text for b in system.items]


def test_coverage_and_validate_execute_the_same_plan(forms_kb: Path):
    cov = run_kblint("checkers", "--kb", str(forms_kb), "--format", "json")
    assert cov.code == 1  # broken items
    (kb,) = cov.json["kbs"]
    totals = {k: v for k, v in kb["totals"].items() if k != "judgment_evaluated"}
    result = run_kblint("validate", str(forms_kb), "--format", "json", "--fail-on", "never")
    report = result.json
    coverage = {k: v for k, v in report["kbs"][0]["coverage"].items() if k != "judgment_evaluated"}
    assert coverage == totals
    # schema: the system's body item, the finding's date, the core event type's two items
    assert totals == {"checker": 8, "schema": 4, "policy": 0, "judgment": 3, "broken": 7}
    # every broken item of the plan is a config_error at its kb.yaml line, and nothing else is
    broken_lines = sorted(i["line"] for s in kb["scopes"] for i in s["items"] if i["binding"] == "broken")
    config = issues_of(report, "config_error")
    assert sorted(i["line"] for i in config) == broken_lines == [12, 14, 16, 19, 22, 25, 39]
    assert all(i["path"].endswith("kb.yaml") and i["entry_id"] is None for i in config)
    # every checker item that fails on an entry is a violation carrying the item and checker
    violations = {
        (i["entry_id"], i["checker"], i["rubric_item"], i["severity"]) for i in issues_of(report, "rubric_violation")
    }
    assert violations == {
        ("f1", "has_tags", "Entry has at least two tags", "error"),
        ("f1", "body_has_heading", "Findings have a summary heading", "warning"),
        ("f1", "status_present", "First with id", "warning"),
        ("f2", "status_present", "First with id", "warning"),
        ("p1", "status_present", "First with id", "warning"),
    }
    # judgment items that apply: finding 2 (KB + type), person 2 → 2 + 2 + 2 = 6 checks
    assert report["judgment"]["not_evaluated"] == 6
    assert report["judgment"]["enabled"] is False and report["judgment"]["reason"] == "no LLM configured"


def test_checkers_text_table(forms_kb: Path):
    result = run_kblint("checkers", "--kb", str(forms_kb))
    assert result.code == 1
    out = result.stdout
    assert "[checker] Entry has at least two tags → has_tags(min=2)" in out
    assert "[schema] Finding has a date (date)" in out
    assert "[judgment] Finding weighs the evidence (not evaluated: no LLM configured)" in out
    assert "kb.yaml:12: [broken] Bad checker — unknown checker 'has_tagz'" in out
    assert "totals: 8 checker, 0 policy, 4 schema, 3 judgment (not evaluated: no LLM configured), 7 broken" in out


def test_checkers_lists_every_checker():
    result = run_kblint("checkers")
    assert result.code == 0
    names = [line.split()[0] for line in result.stdout.splitlines() if line.strip()]
    assert names == registry().names() and len(names) == 16
    data = run_kblint("checkers", "--format", "json").json
    has_field = next(c for c in data["checkers"] if c["name"] == "has_field")
    assert has_field["source"] == "core" and has_field["params"][0]["name"] == "field"
    assert has_field["description"].startswith("The metadata field")


def test_clean_kb_checkers_exit_0_and_kb_by_name(tmp_path: Path):
    write_kb(tmp_path / "k", "name: named-kb\nevaluation_rubric: ['Be clear']\n", {})
    result = run_kblint("checkers", "--kb", "named-kb", cwd=tmp_path)
    assert result.code == 0 and "[judgment] Be clear" in result.stdout
    assert run_kblint("checkers", "--kb", "nope", cwd=tmp_path).code == 2


def test_judgment_summary_in_text(forms_kb: Path):
    out = run_kblint("validate", str(forms_kb), "--fail-on", "never").stdout
    assert "judgment: 6 checks not evaluated on 3 entries (the rubric has 3 judgment items): no LLM configured" in out


def test_scores_and_pass_threshold(tmp_path: Path):
    kb = write_kb(
        tmp_path / "s",
        """\
name: scored
pass_threshold: 0.75
evaluation_rubric:
  - {text: "Has status", checker: status_present, weight: 2}
  - {text: "Has priority", checker: priority_present}
  - "A judgment item has no outcome"
""",
        {
            "a.md": "---\ntitle: A\ntype: note\ntags: [x]\nstatus: ok\npriority: 1\n---\n[[b]]\n",
            "b.md": "---\ntitle: B\ntype: note\ntags: [x]\nstatus: ok\n---\n[[a]]\n",
            "c.md": "---\ntitle: C\ntype: note\ntags: [x]\n---\n[[a]]\n",
        },
    )
    report = run_kblint("validate", str(kb), "--format", "json", "--fail-on", "never").json
    # three system checker items pass everywhere (weight 1 each); the judgment item has no outcome.
    # a: 6/6; b: 5/6 (priority fails); c: 3/6 (status, weight 2, and priority fail)
    assert report["kbs"][0]["score"] == pytest.approx((1 + 5 / 6 + 3 / 6) / 3, abs=1e-4)
    below = issues_of(report, "score_below_threshold")
    assert [(i["entry_id"], i["severity"]) for i in below] == [("c", "warning")]
    assert "scores 0.50" in below[0]["message"]
    stats = run_kblint("validate", str(kb), "--statistics", "--fail-on", "never").stdout
    assert "score scored: 0.78" in stats


def test_a_checker_that_raises_is_a_checker_error_and_the_run_goes_on(tmp_path: Path):
    def explode(entry, params, context):
        """Always raises."""
        raise RuntimeError("boom")

    reg = registry()
    reg.add(Checker("test.explode", explode, source="tests"))
    try:
        kb = write_kb(
            tmp_path / "x",
            "name: x\nevaluation_rubric:\n  - {text: Explodes, checker: test.explode}\n"
            "  - {text: Has status, checker: status_present}\n",
            {
                "a.md": "---\ntitle: A\ntype: note\ntags: [t]\n---\n[[a2]]\n",
                "a2.md": "---\ntitle: A2\ntype: note\ntags: [t]\nstatus: s\n---\n[[a]]\n",
            },
        )
        report, _ = run(Settings(paths=[str(kb)]))
    finally:
        reg.checkers.pop("test.explode")
    errors = [i for i in report.issues if i.rule == "checker_error"]
    assert len(errors) == 2 and all("RuntimeError: boom" in i.message and "(tests)" in i.message for i in errors)
    assert [i.entry_id for i in report.issues if i.rule == "rubric_violation"] == ["a"]
    assert report.exit_code == 1


def test_malformed_kb_yaml_values_are_config_errors(tmp_path: Path):
    kb = write_kb(
        tmp_path / "m",
        """\
name: [w]
types:
  t:
    fields:
      kind: {type: select, values: 3}
      size:
        type: number
        min: abc
""",
        {"a.md": "---\ntitle: A\ntype: t\ntags: [x]\nkind: 3\nsize: 2\n---\n[[a]]\n"},
    )
    report = run_kblint("validate", str(kb), "--format", "json").json
    errors = sorted((i["line"], i["message"].split(":")[0]) for i in issues_of(report, "config_error"))
    assert [line for line, _ in errors] == [1, 5, 8]
    assert report["kbs"][0]["name"] == "m"  # the directory name, as said in the message


def test_a_negative_count_is_a_param_no_item_could_fail_with(tmp_path: Path):
    kb_yaml = "name: k\nevaluation_rubric:\n  - {text: Tagged, checker: has_tags, params: {min: -3}}\n"
    report = run_kblint("validate", str(write_kb(tmp_path / "k", kb_yaml, {})), "--format", "json").json
    (error,) = [i["message"] for i in report["issues"] if i["rule"] == "config_error"]
    assert "checker 'has_tags': param 'min' must be 0 or more, got -3" in error
