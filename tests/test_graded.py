"""Graded rubric items (README "Graded rubrics"): levels chosen by `when:` policies or by the
judge, pass_level, scores from levels, required items, and type-level pass_threshold."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from conftest import issues_of, run_kblint, write_kb
from llm_server import FakeLLM

TAGS_KB = """\
name: graded
pass_threshold: 0.6
evaluation_rubric:
  - text: Tags
    id: tags
    levels:
      - {id: fail, score: 0}
      - {id: pass, score: 0.7, when: "tags count >= 2"}
      - {id: excellent, score: 1, label: Excellent, when: "tags count >= 5"}
"""


def entry(tags: int) -> str:
    listed = ", ".join(f"t{n}" for n in range(tags))
    return f"---\ntitle: Entry with {tags}\ntype: note\ntags: [{listed}]\n---\nBody.\n"


def lint(kb: Path, *args: str) -> dict:
    return run_kblint("validate", str(kb), "--format", "json", "--fail-on", "never", *args).json


def by_entry(report: dict, rule: str, item: str | None = None) -> dict[str, str]:
    return {i["entry_id"]: i["message"] for i in issues_of(report, rule) if item in (None, i.get("item_id"))}


@pytest.fixture
def tags_kb(tmp_path: Path) -> Path:
    return write_kb(tmp_path / "graded", TAGS_KB, {"one.md": entry(1), "three.md": entry(3), "six.md": entry(6)})


def test_the_highest_level_whose_condition_holds(tags_kb: Path):
    report = lint(tags_kb)
    assert by_entry(report, "rubric_violation", "tags") == {
        "one": "Entry 'one' reached 'fail' (0.00), needs 'pass' on 'Tags': tags count is 1, policy requires >= 2"
    }
    # scores: one 0.0, three 0.7, six 1.0 from this item, with the system items around them
    report = lint(tags_kb)
    assert by_entry(report, "score_below_threshold").keys() == {"one"}


def test_a_graded_violation_points_at_the_field_its_needed_level_measures(tags_kb: Path):
    [issue] = [i for i in issues_of(lint(tags_kb), "rubric_violation") if i.get("item_id") == "tags"]
    assert (issue["line"], issue["field"]) == (4, "tags")  # `tags:`, as the same policy ungraded points


def test_pass_level_raises_the_bar(tmp_path: Path):
    kb = write_kb(
        tmp_path / "graded",
        TAGS_KB.replace("    id: tags\n", "    id: tags\n    pass_level: excellent\n"),
        {"three.md": entry(3), "six.md": entry(6)},
    )
    assert by_entry(lint(kb), "rubric_violation", "tags") == {
        "three": "Entry 'three' reached 'pass' (0.70), needs 'Excellent' on 'Tags': tags count is 3, policy requires >= 5"
    }


def test_an_entry_score_is_the_weighted_mean_of_level_scores(tmp_path: Path):
    kb_yaml = TAGS_KB.replace("pass_threshold: 0.6\n", "pass_threshold: 0.75\n").replace(
        "    id: tags\n", "    id: tags\n    weight: 3\n"
    )
    kb = write_kb(tmp_path / "graded", kb_yaml, {"three.md": entry(3)})
    # system items: descriptive_title passes, has_tags passes, has_outlinks fails (weight 1 each);
    # tags reaches 0.7 with weight 3: (1 + 1 + 0 + 3 * 0.7) / 6 = 0.683
    assert by_entry(lint(kb), "score_below_threshold") == {
        "three": "Entry 'three' scores 0.68, below the pass_threshold 0.75 of the KB"
    }


def test_a_score_equal_to_the_threshold_passes_it(tmp_path: Path):
    kb_yaml = (
        TAGS_KB.replace("pass_threshold: 0.6\n", "pass_threshold: 0.8\n")
        .replace("    id: tags\n", "    id: tags\n    weight: 4\n")
        .replace("score: 0.7,", "score: 0.9,")
    )
    kb = write_kb(tmp_path / "graded", kb_yaml, {"three.md": entry(3), "one.md": entry(1)})
    # three: (1 + 1 + 0 + 4 × 0.9) / 7, which float arithmetic makes 0.7999999999999999
    assert by_entry(lint(kb), "score_below_threshold") == {
        "one": "Entry 'one' scores 0.29, below the pass_threshold 0.80 of the KB"
    }


def test_a_score_just_below_the_threshold_is_not_shown_equal_to_it():
    from kblint.engine.scoring import _shown

    assert (_shown(0.7951, 0.8), _shown(0.7999999, 0.8), _shown(0.683, 0.75)) == ("0.7951", "0.7999", "0.68")


@pytest.mark.parametrize(
    "levels, message",
    [
        ("[{id: a, score: 0}]", "levels must be a list of at least two levels, lowest first"),
        ("[{id: a, score: 0}, {id: a, score: 1, when: 'tags count >= 1'}]", "level id 'a' is used twice"),
        ("[{id: a, score: 0}, {id: b, score: 1.5, when: 'tags count >= 1'}]", "level 'b' needs a 'score' from 0 to 1"),
        ("[{id: a, score: 0}, {id: b, score: 1, when: 'tags count >= 1'}, {id: c, score: 1}]", "needs a 'when:'"),
        ("[{id: a, score: 0, when: 'tags count >= 1'}, {id: b, score: 1, when: 'tags count >= 2'}]", "is the lowest"),
        ("[{id: a, score: 0}, {id: b, score: 1, when: 'tags cont >= 1'}]", "policy does not parse"),
        ("[{id: a, score: 0}, {id: b, score: 1, colour: red}]", "unknown key 'colour'"),
        (
            "[{id: no, score: 0}, {id: b, score: 1, when: 'tags count >= 1'}]",
            "got False: YAML reads yes, no, on, off, true and false unquoted",
        ),
    ],
)
def test_levels_kblint_cannot_use_are_config_errors_at_the_item(tmp_path: Path, levels: str, message: str):
    kb = write_kb(tmp_path / "k", f"name: k\nevaluation_rubric:\n  - text: Tags\n    levels: {levels}\n", {})
    errors = issues_of(lint(kb), "config_error")
    assert [(e["line"], message in e["message"]) for e in errors] == [(3, True)], errors


def test_weight_or_required_on_an_item_that_is_not_scored_is_a_warning(tmp_path: Path):
    kb_yaml = "name: k\nevaluation_rubric:\n  - {text: Titled, covered_by: schema, field: title, weight: 10, required: true}\n"
    [warning] = issues_of(lint(write_kb(tmp_path / "k", kb_yaml, {})), "config_error")
    assert (warning["line"], warning["severity"]) == (3, "warning")
    assert warning["message"] == (
        "rubric item 'Titled': weight and required change nothing on a covered_by: schema item, which is not scored"
    )


def test_a_pass_level_written_as_a_number_is_told_to_be_quoted(tmp_path: Path):
    levels = "[{id: '0', score: 0}, {id: '1', score: 1, when: 'tags count >= 1'}]"
    kb = write_kb(
        tmp_path / "k", f"name: k\nevaluation_rubric:\n  - text: T\n    pass_level: 1\n    levels: {levels}\n", {}
    )
    [error] = issues_of(lint(kb), "config_error")
    assert error["message"].endswith(
        "pass_level 1 is none of the levels (0, 1): YAML reads it as a number; quote the name ('1')"
    )


def test_levels_that_go_down_are_reported_by_their_own_rule(tmp_path: Path):
    levels = "[{id: a, score: 0}, {id: b, score: 0.9, when: 'tags count >= 1'}, {id: c, score: 0.5, when: 'tags count >= 3'}]"
    kb = write_kb(tmp_path / "k", f"name: k\nevaluation_rubric:\n  - text: Tags\n    levels: {levels}\n", {})
    report = lint(kb)
    found = issues_of(report, "rubric_levels_unordered")
    assert [(i["line"], i["message"]) for i in found] == [
        (3, "rubric item 'Tags' is not enforced: levels go down: 'c' (0.5) comes after 'b' (0.9)")
    ]


def test_type_threshold_beats_the_kb_threshold(tmp_path: Path):
    kb_yaml = TAGS_KB + "types:\n  strict:\n    pass_threshold: 0.99\n"
    strict = entry(6).replace("type: note", "type: strict").replace("Body.", "Body. [[six]]")
    kb = write_kb(tmp_path / "graded", kb_yaml, {"six.md": entry(6) + "[[s]]\n", "s.md": strict})
    found = by_entry(lint(kb), "score_below_threshold")
    assert found == {}  # both reach 1.0 here
    strict_low = strict.replace("tags: [t0, t1, t2, t3, t4, t5]", "tags: [t0, t1, t2]")
    (kb / "s.md").write_text(strict_low)
    found = by_entry(lint(kb), "score_below_threshold")
    assert list(found) == ["s"] and "below the pass_threshold 0.99 of type 'strict'" in found["s"]


def test_a_required_item_without_an_outcome_makes_the_score_incomplete(tmp_path: Path):
    kb_yaml = TAGS_KB + "  - {text: Summary is precise, required: true}\n"
    kb = write_kb(tmp_path / "graded", kb_yaml, {"one.md": entry(1), "six.md": entry(6)})
    report = lint(kb)  # no LLM: the judgment item has no outcome
    (kb_report,) = report["kbs"]
    assert kb_report["score"] is None
    assert kb_report["score_incomplete"].startswith("2 of 2 entries have no outcome for a required item")
    assert issues_of(report, "score_below_threshold") == []  # an incomplete score is judged by no threshold
    text = run_kblint("validate", str(kb), "--statistics").stdout
    assert "score incomplete: 2 of 2 entries have no outcome for a required item" in text
    assert "  score graded: incomplete: 2 of 2 entries have no outcome for a required item" in text
    markdown = run_kblint("validate", str(kb), "--format", "markdown").stdout
    assert "Score of graded incomplete: 2 of 2 entries have no outcome for a required item" in markdown
    bad = write_kb(tmp_path / "bad", "name: bad\nevaluation_rubric:\n  - {text: X, required: yes please}\n", {})
    assert "required must be true or false" in issues_of(lint(bad), "config_error")[0]["message"]


def levels_of(report: dict) -> dict[str, str]:
    """Each entry's level on each graded item, as `item=level`."""
    (kb_report,) = report["kbs"]
    return {g["entry_id"]: ",".join(f"{c['item_id']}={c['level']}" for c in g["criteria"]) for g in kb_report["grades"]}


def three_levels(item: str, middle: tuple[str, str], top: tuple[str, str]) -> str:
    """kb.yaml of one graded item ITEM (its id ITEM in lower case): none (0), then MIDDLE (0.5) and
    TOP (1), each an (id, when:) pair."""
    levels = "".join(
        f'      - {{id: {level}, score: {score}, when: "{when}"}}\n'
        for (level, when), score in ((middle, 0.5), (top, 1))
    )
    return (
        f"name: k\nevaluation_rubric:\n  - text: {item}\n    id: {item.lower()}\n    levels:\n"
        f"      - {{id: none, score: 0}}\n{levels}"
    )


def test_levels_may_ask_of_the_entry_and_of_its_links(tmp_path: Path):
    """`tags` is measured in pass 1, `inlinks` after the graph pass: the item runs after it, on the
    entry read again."""
    kb_yaml = three_levels("People", ("tagged", "tags count >= 2"), ("linked", "inlinks count >= 1"))
    linking = entry(1).replace("Body.", "See [[three]].")
    kb = write_kb(tmp_path / "mixed", kb_yaml, {"one.md": linking, "three.md": entry(3), "six.md": entry(6)})
    report = lint(kb)
    assert issues_of(report, "internal_error") == [] and issues_of(report, "config_error") == []
    assert levels_of(report) == {"one": "people=none", "three": "people=linked", "six": "people=tagged"}
    assert by_entry(report, "rubric_violation", "people") == {
        "one": "Entry 'one' reached 'none' (0.00), needs 'tagged' on 'People': tags count is 1, policy requires >= 2",
    }
    # run after the graph pass on the entry read again: the issue still points at the line of tags
    assert {i["line"] for i in issues_of(report, "rubric_violation") if i.get("item_id") == "people"} == {4}


GATED_KB = """\
name: gated
types:
  note:
    workflow: {states: [draft, review, confirmed]}
    evaluation_rubric:
      - text: Sign-off
        id: signoff
        required: true
        levels:
          - {id: none, score: 0}
          - {id: signed, score: 1, when: "status review->confirmed requires tags count >= 2"}
      - {text: Two tags to confirm, id: plain, required: true, policy: "status review->confirmed requires tags count >= 2"}
"""


def test_a_gate_that_does_not_apply_gives_a_graded_item_no_outcome(tmp_path: Path):
    """As for a plain gate: the item neither passes nor fails a draft, and a required one is not
    missing there."""
    draft, confirmed = entry(1).replace("type: note", "type: note\nstatus: draft"), entry(1)
    confirmed = confirmed.replace("type: note", "type: note\nstatus: confirmed")
    kb = write_kb(tmp_path / "gated", GATED_KB, {"draft.md": draft, "confirmed.md": confirmed})
    report = lint(kb)
    assert levels_of(report) == {"confirmed": "signoff=none"}
    assert by_entry(report, "rubric_violation", "signoff").keys() == {"confirmed"}
    assert by_entry(report, "rubric_violation", "plain").keys() == {"confirmed"}
    (kb_report,) = report["kbs"]
    assert kb_report["score"] is not None and "score_incomplete" not in kb_report


def test_a_graded_item_whose_needed_level_is_a_gate_that_does_not_apply_has_no_outcome(tmp_path: Path):
    """A draft needs no sign-off: it neither passes nor fails the item, whatever the levels above."""
    kb_yaml = three_levels(
        "Signed", ("pass", "status * -> published requires tags count >= 2"), ("great", "tags count >= 5")
    )
    draft = entry(2).replace("type: note", "type: note\nstatus: draft")
    published = entry(1).replace("type: note", "type: note\nstatus: published")
    rich = entry(6).replace("type: note", "type: note\nstatus: draft")  # a level above the needed one holds
    entries = {"draft.md": draft, "published.md": published, "rich.md": rich}
    report = lint(write_kb(tmp_path / "k", kb_yaml, entries))
    assert levels_of(report) == {"published": "signed=none", "rich": "signed=great"}
    assert by_entry(report, "rubric_violation", "signed") == {
        "published": "Entry 'published' reached 'none' (0.00), needs 'pass' on 'Signed': "
        "status *->published: tags count is 1, policy requires >= 2"
    }


JUDGED_KB = """\
name: judged
evaluation_rubric:
  - text: "Summary LEVEL=adequate"
    id: summary
    levels:
      - {id: vague, score: 0, description: Says nothing checkable}
      - {id: adequate, score: 0.6, indicators: [names the main actor]}
      - {id: precise, score: 1, description: Dates and numbers}
    pass_level: precise
  - text: "Sources"
    id: sources
    levels: [{id: none, score: 0}, {id: some, score: 0.5}, {id: excellent, score: 1}]
"""


@pytest.fixture
def server():
    with FakeLLM() as fake:
        yield fake


def judge(kb: Path, server: FakeLLM, cache: Path) -> dict:
    args = ["--llm", "openai:m", "--llm-base-url", server.openai_url, "--cache-dir", str(cache)]
    return lint(kb, *args)


def test_the_judge_picks_one_level_from_a_schema_of_level_ids(tmp_path: Path, server: FakeLLM, quick_backoff):
    kb = write_kb(tmp_path / "judged", JUDGED_KB, {"a.md": entry(2) + "[[a]]\n"})
    report = judge(kb, server, tmp_path / "cache")
    body = server.requests[0]["body"]
    schema = body["response_format"]["json_schema"]["schema"]["properties"]["verdicts"]["properties"]
    assert schema["summary"]["properties"]["level"]["enum"] == ["vague", "adequate", "precise"]
    assert schema["sources"]["properties"]["level"]["enum"] == ["none", "some", "excellent"]
    sent = {it["id"]: it for it in server.requests[0]["block"]["items"]}
    assert sent["summary"]["levels"][1] == {"id": "adequate", "indicators": ["names the main actor"]}
    assert by_entry(report, "llm_rubric_violation") == {
        "a": "judged 'adequate' (0.60), needs 'precise': judged summary adequate"
    }
    again = judge(kb, server, tmp_path / "cache")  # from the cache, level and all
    assert by_entry(again, "llm_rubric_violation") == by_entry(report, "llm_rubric_violation")
    assert len(server.requests) == 1


def test_a_level_that_is_no_level_of_the_item_is_a_judgment_error(tmp_path: Path, server: FakeLLM, quick_backoff):
    kb = write_kb(tmp_path / "judged", JUDGED_KB, {"a.md": entry(2) + "[[a]]\n"})
    server.bad_level = "brilliant"
    report = judge(kb, server, tmp_path / "cache")
    errors = issues_of(report, "judgment_error")
    assert sorted(e["item_id"] for e in errors) == ["sources", "summary"]
    assert issues_of(report, "llm_rubric_violation") == []  # never a pass, never a silent score


def test_feedback_per_entry_and_per_kb(tags_kb: Path, tmp_path: Path):
    cache = tmp_path / "cache"
    cold = run_kblint("validate", str(tags_kb), "--format", "json", "--cache-dir", str(cache)).json
    (kb,) = cold["kbs"]
    assert kb["levels"] == {"tags": {"item": "Tags", "counts": {"fail": 1, "pass": 1, "excellent": 1}}}
    by_path = {g["path"].rsplit("/", 1)[1]: g["criteria"] for g in kb["grades"]}
    assert by_path["six.md"] == [
        {"item_id": "tags", "item": "Tags", "level": "excellent", "label": "Excellent", "score": 1.0}
    ]
    warm = run_kblint("validate", str(tags_kb), "--format", "json", "--cache-dir", str(cache)).json
    assert warm["kbs"] == cold["kbs"]
    text = run_kblint("validate", str(tags_kb), "--statistics", "--no-cache").stdout
    assert "  levels graded 'Tags': fail 1, pass 1, excellent 1" in text
    assert any(line.endswith("six.md: Tags: Excellent (1.00)") for line in text.splitlines())


def test_a_kb_without_graded_items_reports_no_levels(tmp_path: Path):
    kb = write_kb(tmp_path / "plain", "name: plain\n", {"a.md": entry(2)})
    (report,) = lint(kb)["kbs"]
    assert "levels" not in report and "grades" not in report


def test_checkers_and_schema_show_levels(tmp_path: Path):
    kb_yaml = JUDGED_KB + "  - {text: Has a source, weight: 2, required: true}\n"
    kb_yaml += "  - {text: Tagged, id: tagged, applies_to: [note], weight: 3, policy: 'tags count >= 1'}\n"
    kb = write_kb(tmp_path / "judged", kb_yaml, {})
    text = run_kblint("checkers", "--kb", str(kb)).stdout
    assert "[judgment, graded: vague < adequate < precise, needs precise] Summary LEVEL=adequate" in text
    assert "[judgment, graded: none < some < excellent, needs some] Sources (not evaluated" in text
    assert "[judgment, weight 2, required] Has a source (not evaluated" in text
    assert "[policy, applies to note, weight 3] Tagged → tags count >= 1" in text
    plan = run_kblint("checkers", "--kb", str(kb), "--format", "json").json
    items = {it["text"]: it for scope in plan["kbs"][0]["scopes"] for it in scope["items"]}
    assert items["Sources"]["levels"][2] == {"id": "excellent", "score": 1.0}
    assert items["Has a source"]["weight"] == 2 and items["Has a source"]["required"] is True
    assert (items["Tagged"]["id"], items["Tagged"]["applies_to"]) == ("tagged", ["note"])
    intent = run_kblint("schema", str(kb)).json
    (summary,) = [it for it in intent["types"]["note"]["rubric"] if it["id"] == "summary"]
    assert summary["levels"][1] == {"id": "adequate", "score": 0.6, "indicators": ["names the main actor"]}
    assert summary["pass_level"] == "precise"


def test_explain_levels():
    page = run_kblint("explain", "levels").stdout
    assert page.startswith("levels — graded rubric items") and "pass_level" in page and "required: true" in page
    assert "levels" in run_kblint("explain").stdout


def test_ids_made_from_texts_do_not_clash(tmp_path: Path):
    kb_yaml = (
        "name: ids\nevaluation_rubric:\n  - Entry has a summary.\n"
        "types:\n  note:\n    evaluation_rubric:\n      - Entry has a summary\n"
        "  other:\n    evaluation_rubric:\n      - {text: Something else, id: entry-has-a-summary}\n"
        "      - {text: Another thing, id: entry-has-a-summary}\n"
    )
    kb = write_kb(tmp_path / "ids", kb_yaml, {})
    errors = issues_of(lint(kb), "config_error")
    # only the id written twice is a duplicate; the ids kblint made from texts are numbered
    assert [(e["line"], e["message"]) for e in errors] == [
        (
            11,
            "rubric item 'Another thing' is not enforced: duplicate item id 'entry-has-a-summary' (also used at kb.yaml line 10)",
        )
    ]


@pytest.mark.parametrize("weight", ["-1", ".inf", ".nan", "heavy", "true", "1" + "0" * 400, "1.5e+308"])
def test_a_weight_that_is_no_finite_non_negative_number_is_a_config_error(tmp_path: Path, weight: str):
    kb_yaml = f'name: k\npass_threshold: 0.5\nevaluation_rubric:\n  - {{text: Tags, weight: {weight}, policy: "tags count >= 1"}}\n'
    report = lint(write_kb(tmp_path / "k", kb_yaml, {"one.md": entry(1)}))
    errors = issues_of(report, "config_error")
    assert [(e["line"], "weight must be a number from 0 to 1,000,000" in e["message"]) for e in errors] == [(4, True)]
    assert math.isfinite(report["kbs"][0]["score"])  # the item is not enforced: scores stay numbers


@pytest.mark.parametrize("weight", ["0", "2.5", "1000000"])
def test_a_finite_non_negative_weight_is_taken(tmp_path: Path, weight: str):
    kb_yaml = f'name: k\nevaluation_rubric:\n  - {{text: Tags, weight: {weight}, policy: "tags count >= 1"}}\n'
    assert issues_of(lint(write_kb(tmp_path / "k", kb_yaml, {"one.md": entry(1)})), "config_error") == []


def test_a_field_bound_that_is_nan_is_a_config_error(tmp_path: Path):
    kb_yaml = "name: k\ntypes:\n  note:\n    fields:\n      year: {type: number, min: .nan}\n"
    errors = issues_of(lint(write_kb(tmp_path / "k", kb_yaml, {"one.md": entry(1)})), "config_error")
    assert ["min must be a number, got nan" in e["message"] for e in errors] == [True], errors


@pytest.mark.parametrize(
    ("kb_yaml", "line", "message"),
    [
        (
            "types:\n  note:\n    fields:\n      year: {type: number, min: 9, max: 2}\n",
            4,
            "type 'note': field 'year': the minimum 9 is above the maximum 2: no value is within them",
        ),
        (
            "validation:\n  rules:\n    - {field: year, range: [5, 1]}\n",
            3,
            "validation rule for 'year': the minimum 5 is above the maximum 1: no value is within them",
        ),
        (
            "validation:\n  rules:\n    - {field: year, range: [a, 1]}\n",
            3,
            "validation rule for 'year': a range's bounds must be numbers, got 'a': the range is not checked",
        ),
        (
            "validation:\n  rules:\n    - {field: year, range: [1, 5], min: x}\n",
            3,
            "validation rule for 'year': a range's bounds must be numbers, got 'x': the range is not checked",
        ),
        (
            "validation:\n  rules:\n    - {field: year, range: [a]}\n",
            3,
            "validation rule for 'year': range must be [min, max]",
        ),
    ],
)
def test_bounds_no_value_can_meet_are_config_errors(tmp_path: Path, kb_yaml: str, line: int, message: str):
    report = lint(
        write_kb(tmp_path / "k", "name: k\n" + kb_yaml, {"one.md": entry(1).replace("---\n", "---\nyear: 3\n", 1)})
    )
    errors = issues_of(report, "config_error")
    assert [(e["line"], e["message"]) for e in errors] == [(line + 1, message)]
    if "not checked" in message:  # neither bound holds the entry to the range
        assert not [i for i in issues_of(report, "invalid_field") if i["field"] == "year"]


def test_bounds_in_order_are_taken(tmp_path: Path):
    kb_yaml = (
        "name: k\nvalidation:\n  rules:\n    - {field: year, min: 1, max: 5}\n    - {field: year, range: [1, 1]}\n"
    )
    assert issues_of(lint(write_kb(tmp_path / "k", kb_yaml, {"one.md": entry(1)})), "config_error") == []


def test_a_rubric_item_of_another_kind_is_named_in_yamls_words(tmp_path: Path):
    kb = write_kb(tmp_path / "k", "name: k\nevaluation_rubric:\n  - [a, b]\n  - 7\n", {"one.md": entry(1)})
    messages = [e["message"] for e in issues_of(lint(kb), "config_error")]
    assert [m.rsplit(", got ", 1)[1] for m in messages] == ["a list", "a number"]


@pytest.mark.parametrize(
    ("given", "why"),
    [("[1]", "got a list"), ("''", "got an empty one"), ("'  '", "got an empty one"), ("{a: 1}", "got a mapping")],
)
def test_an_item_id_that_is_no_text_is_a_config_error(tmp_path: Path, given: str, why: str):
    kb_yaml = f'name: k\nevaluation_rubric:\n  - {{text: Tags, id: {given}, policy: "tags count >= 1"}}\n  - {{text: T, id: 7, policy: "tags count >= 1"}}\n'
    errors = issues_of(lint(write_kb(tmp_path / "k", kb_yaml, {"one.md": entry(1)})), "config_error")
    assert [(e["line"], e["message"]) for e in errors] == [
        (3, f"rubric item 'Tags' is not enforced: id must be a non-empty text, {why}")
    ]


@pytest.mark.parametrize(("given", "kind"), [("[a]", "a list"), ("{a: 1}", "a mapping")])
def test_a_validation_pattern_that_is_no_text_is_a_config_error(tmp_path: Path, given: str, kind: str):
    kb_yaml = f"name: k\nvalidation:\n  rules:\n    - {{field: title, pattern: {given}}}\n    - {{field: title, pattern: 5}}\n"
    errors = issues_of(lint(write_kb(tmp_path / "k", kb_yaml, {"one.md": entry(1)})), "config_error")
    assert [(e["line"], e["message"]) for e in errors] == [
        (4, f"validation rule for 'title': pattern must be a regular expression, got {kind}")
    ]
