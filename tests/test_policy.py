"""The policy tier (SPEC §6): parser, semantics, gates (with real git history), binding, messages."""

from __future__ import annotations

import contextlib
import subprocess
from pathlib import Path

import pytest
from conftest import issues_of, run_kblint, write_kb
from hypothesis import given
from hypothesis import strategies as st

from kblint.explain import policy_examples
from kblint.model.facts import EntryFacts
from kblint.policy import Count, Gate, PolicyError, Required, Section, Subject, Words, parse, tokenize

SPEC_EXAMPLES = [
    "metadata.source_url count >= 2",
    "metadata.reviewers count >= 2",
    "links.actor count >= 1",
    "outlinks count >= 3",
    "tags count >= 2",
    "body.section 'References' required",
    "status proposed->accepted requires metadata.reviewers count >= 2",
]


# --- parser -------------------------------------------------------------------------------------


def test_arrow_and_operators_tokenize_with_or_without_spaces():
    assert (
        parse("status proposed->accepted requires tags count>=2")
        == parse("status proposed -> accepted requires tags count >= 2")
        == Gate("proposed", "accepted", Count(Subject("tags"), ">=", 2))
    )
    assert [t.text for t in tokenize("links.actor count!=1")] == ["links.actor", "count", "!=", "1", ""]


def test_typed_expressions():
    assert parse("metadata.reviewers required") == Required(Subject("metadata", "reviewers"))
    assert parse('body.section "See also" required') == Section("See also")
    assert parse("body.words < 500") == Words("<", 500)
    assert parse("status * -> published requires inlinks count > 0") == Gate(
        "*", "published", Count(Subject("inlinks"), ">", 0)
    )


@pytest.mark.parametrize(
    "text, column, expected",
    [
        ("metadata.url count > = 1", 21, "unknown operator '='"),
        ("tags count >=", 13, "expected a whole number"),
        ("tags count >= two", 14, "expected a whole number"),
        ("tags many >= 2", 5, "expected 'count' or 'required'"),
        ("body.section References required", 13, "quoted section heading"),
        ("status draft accepted requires tags required", 13, "'->'"),
        ("status draft -> accepted tags required", 25, "'requires'"),
        ("metadata. count >= 1", 9, "expected a name after 'metadata.'"),
        ("tags count >= 2 extra", 16, "the end of the policy"),
        ("body.section 'open", 13, "unterminated"),
    ],
)
def test_errors_point_at_the_column(text, column, expected):
    with pytest.raises(PolicyError) as info:
        parse(text)
    err = info.value
    assert err.column == column and expected in err.expected
    rendered = err.render().splitlines()
    assert rendered[1].strip() == text
    assert rendered[2].index("^") - 4 == column


@given(st.text(max_size=60))
def test_parser_raises_only_its_own_error(text):
    with contextlib.suppress(PolicyError):
        parse(text)


_pieces = st.lists(
    st.sampled_from(
        [
            "status",
            "draft",
            "*",
            "->",
            "requires",
            "tags",
            "links",
            "outlinks",
            "inlinks",
            "links.actor",
            "metadata.url",
            "body.words",
            "body.section",
            "'X y'",
            '"Q"',
            "count",
            "required",
            ">=",
            ">",
            "<=",
            "<",
            "==",
            "!=",
            "0",
            "3",
            "12",
        ]
    ),
    max_size=9,
)


@given(_pieces, st.booleans())
def test_printing_and_parsing_again_gives_the_same_expression(pieces, spaced):
    text = " ".join(pieces) if spaced else "".join(pieces)
    try:
        policy = parse(text)
    except PolicyError:
        return
    assert parse(str(policy)) == policy


# --- semantics, end to end ----------------------------------------------------------------------

KB = """\
name: pol
types:
  paper:
    subdirectory: papers
    fields:
      source_url: {type: url}
      reviewers: {type: list}
    workflow:
      states: [proposed, accepted, rejected]
    evaluation_rubric:
      - "metadata.source_url count >= 2"
      - "metadata.reviewers count >= 2"
      - "links.actor count >= 1"
      - "outlinks count >= 3"
      - "tags count >= 2"
      - "body.section 'References' required"
      - "status proposed->accepted requires metadata.reviewers count >= 2"
      - {text: "Papers are cited", policy: "inlinks required", id: cited}
      - {text: "Papers are substantial", policy: "body.words >= 12"}
      - "Tags are relevant to the topic"
      - "tags are required for reviews"
  actor:
    subdirectory: actors
"""

GOOD_PAPER = """\
---
title: Good paper
type: paper
status: accepted
tags: [a, b]
source_url: [https://a.example/x, https://b.example/y]
reviewers: [ann, bob]
links:
  - {target: alice, relation: related}
---
One two three four five six seven eight nine ten eleven twelve [[bob]] [[alice]] [[external:x]].

## References

- A reference.
"""

BAD_PAPER = """\
---
title: Bad paper
type: paper
status: accepted
tags: [a]
source_url: [https://a.example/x, not-a-url, ""]
reviewers: [ann]
links:
  - {target: bob, relation: cites}
---
Too short [[good-paper]].

### References
"""


@pytest.fixture
def pol_kb(tmp_path: Path) -> Path:
    return write_kb(
        tmp_path / "pol",
        KB,
        {
            "papers/good-paper.md": GOOD_PAPER,
            "papers/bad-paper.md": BAD_PAPER,
            "actors/alice.md": "---\ntitle: Alice\ntype: actor\ntags: [x]\n---\n[[good-paper]]\n",
            "actors/bob.md": "---\ntitle: Bob\ntype: actor\ntags: [x]\n---\n[[good-paper]]\n",
        },
    )


def policy_issues(report: dict) -> dict[tuple[str, str], str]:
    return {
        (i["entry_id"], i["policy"]): i["message"]
        for i in issues_of(report, "rubric_violation")
        if i.get("checker") == "policy"
    }


def test_every_spec_example_works_end_to_end(pol_kb: Path):
    report = run_kblint("validate", str(pol_kb), "--format", "json", "--fail-on", "never").json
    found = policy_issues(report)
    assert found == {
        ("bad-paper", "metadata.source_url count >= 2"): "metadata.source_url count is 1, policy requires >= 2",
        ("bad-paper", "metadata.reviewers count >= 2"): "metadata.reviewers count is 1, policy requires >= 2",
        ("bad-paper", "outlinks count >= 3"): "outlinks count is 2, policy requires >= 3",
        ("bad-paper", "tags count >= 2"): "tags count is 1, policy requires >= 2",
        ("bad-paper", "body.section 'References' required"): "body.section 'References' is missing, policy requires it",
        (
            "bad-paper",
            "status proposed->accepted requires metadata.reviewers count >= 2",
        ): "status proposed->accepted: metadata.reviewers count is 1, policy requires >= 2",
        ("bad-paper", "inlinks required"): "inlinks count is 0, policy requires >= 1",
        ("bad-paper", "body.words >= 12"): "body.words is 5, policy requires >= 12",
    }
    # links.actor: bad-paper links to bob (type actor) → 1, passes; good-paper to alice → passes
    assert ("bad-paper", "links.actor count >= 1") not in found
    assert not any(entry == "good-paper" for entry, _ in found)
    expected_bad = {p for p in SPEC_EXAMPLES if p != "links.actor count >= 1"} | {
        "inlinks required",
        "body.words >= 12",
    }
    assert {p for e, p in found if e == "bad-paper"} == expected_bad
    assert found[("bad-paper", "tags count >= 2")] == "tags count is 1, policy requires >= 2"
    assert (
        found[("bad-paper", "metadata.source_url count >= 2")] == "metadata.source_url count is 1, policy requires >= 2"
    )  # only valid URLs count
    issue = next(i for i in issues_of(report, "rubric_violation") if i.get("policy") == "tags count >= 2")
    assert (issue["tier"], issue["field"], issue["line"]) == ("policy", "tags", 5)


def test_policy_items_show_in_coverage(pol_kb: Path):
    out = run_kblint("checkers", "--kb", str(pol_kb)).stdout
    for text in SPEC_EXAMPLES:
        assert f"[policy] {text}\n" in out
    assert "[policy] Papers are cited → inlinks required" in out
    assert "[judgment] Tags are relevant to the topic" in out
    assert "[judgment] tags are required for reviews" in out


def test_links_name_matches_relation_or_target_type(tmp_path: Path):
    kb = write_kb(
        tmp_path / "k",
        """\
name: k
evaluation_rubric: ["links.actor count >= 2"]
types:
  actor: {}
""",
        {
            "a.md": "---\ntitle: A\ntype: note\ntags: [t]\nlinks: [{target: x, relation: actor}, {target: p}]\n---\n[[p]]\n",
            "x.md": "---\ntitle: X\ntype: note\ntags: [t]\n---\n[[a]]\n",
            "p.md": "---\ntitle: P\ntype: actor\ntags: [t]\n---\n[[a]]\n",
        },
    )
    found = policy_issues(run_kblint("validate", str(kb), "--format", "json").json)
    # a: x by relation, p by type (linked twice, counted once) → 2; x and p: 1 each
    assert sorted(found) == [("p", "links.actor count >= 2"), ("x", "links.actor count >= 2")]


def _facts(kb: str, name: str, type_: str, links: list, aliases: tuple[str, ...] = ()) -> EntryFacts:
    from kblint.model.link import PackedLinks

    return EntryFacts(
        kb_name=kb,
        path=f"/{kb}/{name}.md",
        relpath=f"{name}.md",
        parsed=True,
        reported=True,
        id=name,
        type=type_,
        aliases=aliases,
        links=PackedLinks.of(links),
    )


def _links_of_a() -> list:
    """Entry a's links: to p twice (by case), to itself (by id, alias, path), by relation, across KBs."""
    from kblint.model.link import Link

    return [
        Link("p", "wikilink", None, 1),
        Link("P", "wikilink", None, 2),
        Link("a", "wikilink", None, 3),
        Link("Alias-A", "related", None, 4),
        Link("x", "actor", None, 5),
        Link("x", "wikilink", None, 6),
        Link("q.md", "mdlink", None, 7, path="q.md"),
        Link("a.md", "mdlink", None, 8, path="a.md"),
        Link("p", "wikilink", "other", 9),
        Link("r", "actor", "other", 10),
        Link("ghost", "actor", None, 11),
        Link("p", "cites", None, 12, origin="/k/cross-kb-links.yaml"),
        Link("r", "wikilink", "nowhere", 13),
    ]


def test_links_count_on_the_graph_is_the_count_of_distinct_targets_it_defines():
    """FactsMeasures.links_count reads the packed links; it must count what the definition on Link
    objects counts: distinct (KB, target) pairs, links to the entry itself (by id, stem, alias, any
    case, or path) left out, NAME matching the relation or the type of the entry linked to."""
    from kblint.engine.pass_graph import GraphKB, analyse
    from kblint.measures import FactsMeasures
    from kblint.model.link import Link, LinkKey, link_key, names_itself, own_names

    facts = _facts
    a = facts("k", "a", "note", _links_of_a(), aliases=("alias-a",))
    kbs = [
        GraphKB(
            "k", "/k", [a, facts("k", "p", "actor", []), facts("k", "x", "note", []), facts("k", "q", "actor", [])]
        ),
        GraphKB("other", "/other", [facts("other", "p", "note", []), facts("other", "r", "actor", [])]),
    ]
    graph, _ = analyse(kbs)

    def target_type(link: Link) -> str | None:
        found = graph.resolve(a, LinkKey(0, link.target, link.relation, link.kb, link.path, link.origin))
        return getattr(found, "type", None)

    def by_definition(name):
        own = own_names(a)
        return len(
            {
                link_key(link, a.kb_name)
                for link in a.links
                if not names_itself(link.kb or a.kb_name, link.path, link.target, a, own)
                and (name is None or link.relation == name or target_type(link) == name)
            }
        )

    for name in (None, "actor", "note", "wikilink", "cites", "mdlink", "nothing"):
        assert FactsMeasures(a, graph.inlinks, graph.type_of_target).links_count(name) == by_definition(name), name
    # by type: p and P (one entry, two targets as written), q.md; by relation: x, other:r, ghost
    assert FactsMeasures(a, graph.inlinks, graph.type_of_target).links_count("actor") == 6


def test_broken_policy_is_a_config_error_with_a_caret(tmp_path: Path):
    kb = write_kb(
        tmp_path / "k",
        'name: k\nevaluation_rubric:\n  - "metadata.url count > = 1"\n'
        "  - {text: Bad mapping, policy: 'tags count'}\n",
        {},
    )
    report = run_kblint("validate", str(kb), "--format", "json").json
    errors = issues_of(report, "config_error")
    assert [e["line"] for e in errors] == [3, 4]
    # an issue is one line: the caret's column is said in words; the plan shows the caret
    assert "unknown operator '='" in errors[0]["message"] and "\n" not in errors[0]["message"]
    assert errors[0]["message"].endswith("at column 22 of 'metadata.url count > = 1'")
    out = run_kblint("checkers", "--kb", str(kb))
    assert out.code == 1 and "[broken] metadata.url count > = 1" in out.stdout
    assert "\n    metadata.url count > = 1\n" + " " * 25 + "^" in out.stdout


def test_suppression_names_one_policy_item_by_id(pol_kb: Path):
    path = pol_kb / "papers" / "bad-paper.md"
    path.write_text(
        BAD_PAPER.replace("status: accepted\n", "status: accepted\nkblint: {disable: [cited]}\n"), encoding="utf-8"
    )
    report = run_kblint("validate", str(pol_kb), "--format", "json", "--fail-on", "never").json
    found = policy_issues(report)
    assert ("bad-paper", "inlinks required") not in found
    assert ("bad-paper", "tags count >= 2") in found
    assert issues_of(report, "unused_suppression") == []


def test_explain_policy_examples_all_parse_and_run(tmp_path: Path):
    examples = policy_examples()
    assert len(examples) >= 8 and set(SPEC_EXAMPLES) <= set(examples)
    rubric = "".join(f"  - {e!r}\n" for e in examples)
    kb = write_kb(
        tmp_path / "k",
        f"name: k\nevaluation_rubric:\n{rubric}",
        {
            "a.md": "---\ntitle: A\ntype: note\ntags: [t]\nstatus: accepted\n---\n[[b]]\n",
            "b.md": "---\ntitle: B\ntype: note\ntags: [t]\n---\n[[a]]\n",
        },
    )
    cov = run_kblint("checkers", "--kb", str(kb), "--format", "json").json
    bindings = [i["binding"] for s in cov["kbs"][0]["scopes"] if s["scope"] == "kb" for i in s["items"]]
    assert bindings == ["policy"] * len(examples)
    result = run_kblint("validate", str(kb), "--format", "json")
    assert result.code in (0, 1) and issues_of(result.json, "config_error") == []
    assert issues_of(result.json, "checker_error") == []


# --- gates --------------------------------------------------------------------------------------

GATE_KB = """\
name: g
evaluation_rubric:
  - "status proposed->accepted requires metadata.reviewers count >= 2"
  - "status * -> published requires tags count >= 2"
"""


def entry(status: str, reviewers: int = 0, tags: int = 1) -> str:
    revs = ", ".join(f"r{i}" for i in range(reviewers))
    tag_list = ", ".join(f"t{i}" for i in range(tags))
    return f"---\ntitle: E\ntype: note\nstatus: {status}\nreviewers: [{revs}]\ntags: [{tag_list}]\n---\n[[other]]\n"


def gate_hits(report: dict) -> set[tuple[str, str]]:
    return {
        (i["entry_id"], i["policy"].split(" requires")[0])
        for i in issues_of(report, "rubric_violation")
        if i.get("checker") == "policy"
    }


def test_gates_without_base_apply_to_the_current_status(tmp_path: Path):
    kb = write_kb(
        tmp_path / "g",
        GATE_KB,
        {
            "accepted.md": entry("accepted", reviewers=1),
            "proposed.md": entry("proposed", reviewers=0),
            "published.md": entry("published", tags=1),
            "other.md": entry("draft", reviewers=2, tags=2),
        },
    )
    hits = gate_hits(run_kblint("validate", str(kb), "--format", "json").json)
    assert hits == {("accepted", "status proposed->accepted"), ("published", "status * -> published")}


def git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args], cwd=repo, check=True, capture_output=True
    )


def test_gates_with_base_apply_only_to_real_transitions(tmp_path: Path):
    repo = tmp_path / "repo"
    kb = write_kb(
        repo / "g",
        GATE_KB,
        {
            "moved.md": entry("proposed", reviewers=1),
            "was-draft.md": entry("draft", reviewers=1),
            "already.md": entry("accepted", reviewers=1),
            "edited.md": entry("accepted", reviewers=1),
            "pub.md": entry("draft", tags=1),
            "other.md": entry("draft", reviewers=2, tags=2),
        },
    )
    git(repo, "init", "-q")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "base")
    (kb / "moved.md").write_text(entry("accepted", reviewers=1), encoding="utf-8")  # proposed → accepted
    (kb / "was-draft.md").write_text(entry("accepted", reviewers=1), encoding="utf-8")  # draft → accepted
    (kb / "edited.md").write_text(
        entry("accepted", reviewers=1).replace("[[other]]", "[[other]] more"), encoding="utf-8"
    )  # status unchanged
    (kb / "pub.md").write_text(entry("published", tags=1), encoding="utf-8")  # draft → published
    (kb / "new.md").write_text(entry("published", tags=1), encoding="utf-8")  # new → published
    (kb / "new-accepted.md").write_text(entry("accepted", reviewers=0), encoding="utf-8")  # new: from *
    report = run_kblint("validate", str(kb), "--format", "json", "--base", "HEAD").json
    assert gate_hits(report) == {
        ("moved", "status proposed->accepted"),
        ("pub", "status * -> published"),
        ("new", "status * -> published"),
    }
    # without --base every accepted entry meets the first gate
    hits = gate_hits(run_kblint("validate", str(kb), "--format", "json").json)
    assert {e for e, g in hits if g == "status proposed->accepted"} == {
        "moved",
        "was-draft",
        "already",
        "edited",
        "new-accepted",
    }
    bad = run_kblint("validate", str(kb), "--base", "no-such-ref")
    assert bad.code == 2 and "no such git revision" in bad.stderr
