"""`kblint migrate` (SPEC §10): proposals for string items, the diff, and a byte-preserving write."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from conftest import FIXTURES, run_kblint

from kblint.migrate import MigrationError, match_item, propose, summary, unified_diff, write
from kblint.model.kbschema import RubricItem, load_kb_schema
from kblint.model.plan import build_plan

FIXTURE = FIXTURES / "migrate"
CORPUS = Path("/work/shared/corpus")

# text → the mapping (without "text") each string item of the fixture becomes
EXPECTED = {
    "Finding cites a source": {"checker": "cites_source"},
    "Finding has a date and confidence": {"covered_by": "schema", "fields": ["date", "confidence"]},
    "Finding has at least one tag": {"checker": "has_tags"},
    "Finding is linked from at least one other entry": {"checker": "has_inlinks"},
    "Finding has confidence and sources": {"checker": "has_field", "params": {"field": "sources"}},
    "Finding links to at least two related entries (unless a stub)": {"checker": "has_outlinks", "params": {"min": 2}},
    "Writing has a date": {"covered_by": "schema", "field": "date"},
    "Publisher or url is documented": {"checker": "has_any_field", "params": {"fields": ["publisher", "url"]}},
    "Writing has title and date": {"covered_by": "schema", "field": "date"},
    "Includes a References section": {"checker": "body_has_section", "params": {"heading": "References"}},
    "Person has a role described": {"covered_by": "schema", "field": "role"},
    "Person has an employer": {"checker": "has_field", "params": {"field": "employer"}},
    "Entry cites at least one source (primary preferred)": {"checker": "cites_source"},
    "Entries have at least two tags": {"policy": "tags count >= 2"},
    "Every entry links to at least three other entries": {"policy": "outlinks count >= 3"},
    "Findings have a Sources section": {
        "checker": "body_has_section",
        "params": {"heading": "Sources"},
        "applies_to": ["finding"],
    },
    "Writing entries include date and writing_type classification": {
        "covered_by": "schema",
        "fields": ["date", "writing_type"],
        "applies_to": ["writing"],
    },
}
LEFT = {
    "People entries describe the specific relationship to the investigation",
    "Entry has a date",
    "Person has a role or nickname described",
    "Person describes the specific relationship",
    "Finding has sources and slug",
    "Finding has a Sources section (unless a stub)",
    "Finding has a clear Summary section",
    "Writing has a title",
    "Writing explains its significance",
}
KIND = {"checker": "checker", "covered_by": "schema", "policy": "policy"}


def _kind(replacement: dict) -> str:
    return next(KIND[k] for k in KIND if k in replacement)


@pytest.fixture
def kb(tmp_path: Path) -> Path:
    """A private copy of the fixture KB (the fixture itself is never written)."""
    dest = tmp_path / "kb"
    shutil.copytree(FIXTURE, dest)
    return dest


def _fixture_lines() -> list[str]:
    return (FIXTURE / "kb.yaml").read_text(encoding="utf-8").splitlines(keepends=True)


# ---------------------------------------------------------------------------------------------
# Proposals


def test_proposals_for_each_kind_of_item():
    before = (FIXTURE / "kb.yaml").read_bytes()
    result = propose(str(FIXTURE))
    got = {p.text: {k: v for k, v in p.replacement.items() if k != "text"} for p in result.proposals}
    assert got == EXPECTED
    assert all(p.replacement["text"] == p.text for p in result.proposals)
    assert set(result.left) == LEFT and len(result.left) == len(LEFT)
    assert summary(result) == f"bound {len(EXPECTED)}, left {len(LEFT)} as judgment"
    assert (FIXTURE / "kb.yaml").read_bytes() == before  # propose touches nothing


def test_proposals_carry_scope_line_and_reason():
    lines = _fixture_lines()
    result = propose(str(FIXTURE))
    for p in result.proposals:
        assert p.text in lines[p.line - 1], p
        assert p.reason
        assert p.scope == ("kb" if p.line > 66 else "type")
    by_text = {p.text: p for p in result.proposals}
    assert by_text["Finding cites a source"].type_name == "finding"
    assert by_text["Person has an employer"].type_name == "person"
    assert by_text["Entries have at least two tags"].type_name is None
    assert "required for type 'writing'" in by_text["Writing has a date"].reason
    assert "not checked" in by_text["Entry cites at least one source (primary preferred)"].reason


def test_mapping_and_policy_items_are_never_touched():
    result = propose(str(FIXTURE))
    untouched = {
        "Finding states how confident we are and why",
        "Finding has a Timeline section",
        "status review->confirmed requires metadata.sources count >= 1",
        "tags count >= 1",
        "Entry has at least one tag",
        "Findings name the people involved",
    }
    seen = {p.text for p in result.proposals} | set(result.left)
    assert not untouched & seen


# ---------------------------------------------------------------------------------------------
# The diff


def test_unified_diff_changes_only_bound_item_lines():
    result = propose(str(FIXTURE))
    diff = unified_diff(result)
    lines = diff.splitlines()
    assert lines[0].startswith("--- ") and lines[0].endswith("kb.yaml")
    assert lines[1].startswith("+++ ")
    removed = [line[1:] for line in lines[2:] if line.startswith("-")]
    added = [line[1:] for line in lines[2:] if line.startswith("+")]
    bound_lines = {_fixture_lines()[p.line - 1].rstrip("\n") for p in result.proposals}
    assert set(removed) == bound_lines
    assert len(added) == len(removed)
    for line in added:
        assert "{text: " in line
    assert (
        '  - {text: "Writing entries include date and writing_type classification", covered_by: schema, '
        "fields: [date, writing_type], applies_to: [writing]}   # → schema, applies_to [writing]" in added
    )
    assert (
        "      - {text: Writing has a date, covered_by: schema, field: date}   # plain, with a comment → "
        "covered_by schema field date" in added
    )
    assert "  - {text: 'Entries have at least two tags', policy: \"tags count >= 2\"}" in "\n".join(added)


# ---------------------------------------------------------------------------------------------
# Writing


def _scalar_span(line: str, text: str) -> tuple[int, int]:
    """Where the item's scalar stands on its original line (plain, single- or double-quoted)."""
    for form in (f'"{text}"', "'" + text.replace("'", "''") + "'", text):
        at = line.find(form)
        if at >= 0:
            return at, at + len(form)
    raise AssertionError(f"{text!r} not on {line!r}")


def test_write_keeps_every_other_line_byte_identical(kb: Path):
    original = (kb / "kb.yaml").read_bytes()
    result = propose(str(kb))
    assert write(result) is True
    old = original.decode("utf-8").splitlines(keepends=True)
    new = (kb / "kb.yaml").read_text(encoding="utf-8").splitlines(keepends=True)
    assert len(new) == len(old)
    bound: dict[int, list] = {}
    for p in result.proposals:
        bound.setdefault(p.line, []).append(p)
    assert len(bound) == len(EXPECTED) - 1  # two items share the flow-list line
    for number, (before, after) in enumerate(zip(old, new, strict=False), start=1):
        if number not in bound:
            assert after == before, f"line {number} changed"
            continue
        # a bound line: what stands before the first item and after the last one (a comment) is kept
        start, _ = _scalar_span(before, bound[number][0].text)
        _, end = _scalar_span(before, bound[number][-1].text)
        assert after.startswith(before[:start] + "{text: ")
        assert after.endswith(before[end:])


def test_second_run_proposes_nothing(kb: Path):
    assert write(propose(str(kb))) is True
    again = propose(str(kb))
    assert again.proposals == []
    assert again.migrated == again.original
    assert unified_diff(again) == ""
    assert set(again.left) == LEFT
    assert write(again) is False


def test_after_write_the_plan_binds_the_items(kb: Path):
    result = propose(str(kb))
    write(result)
    plan = build_plan(load_kb_schema(str(kb)))
    bindings = {}
    for scope in plan.scopes:
        for b in scope.items:
            if scope.scope in ("kb", "type"):
                bindings.setdefault(b.text, set()).add(b.kind)
    assert not plan.broken()
    for text, replacement in EXPECTED.items():
        assert bindings[text] == {_kind(replacement)}, text
    for text in LEFT:
        assert bindings[text] == {"judgment"}, text


def test_validate_runs_on_the_migrated_kb(kb: Path):
    write(propose(str(kb)))
    res = run_kblint("validate", str(kb), "--format", "json", "--fail-on", "never")
    assert res.code == 0, res.stderr
    report = res.json
    assert not [i for i in report["issues"] if i["rule"] == "config_error"]
    fired = {(i["rubric_item"], i.get("checker")) for i in report["issues"] if i["rule"] == "rubric_violation"}
    assert ("Finding cites a source", "cites_source") in fired  # offshore-payments cites nothing
    assert ("Findings have a Sources section", "body_has_section") in fired
    assert ("Entries have at least two tags", "policy") in fired
    assert ("Person has an employer", "has_field") in fired


def test_write_refuses_when_the_file_changed_meanwhile(kb: Path):
    result = propose(str(kb))
    path = kb / "kb.yaml"
    path.write_text(path.read_text(encoding="utf-8") + "# edited\n", encoding="utf-8")
    with pytest.raises(MigrationError, match="changed since"):
        write(result)


def test_write_refuses_a_kb_yaml_that_is_a_symbolic_link(tmp_path: Path):
    """Replacing the link with a file would part it from the file it leads to (a link out of the KB
    is not even read: see test_every_command_meets_a_bad_kb_yaml_with_one_line)."""
    (tmp_path / "kb" / "config").mkdir(parents=True)
    shared = tmp_path / "kb" / "config" / "kb.yaml"
    shared.write_text("name: h\nevaluation_rubric:\n  - Entries have at least two tags\n", encoding="utf-8")
    (tmp_path / "kb" / "kb.yaml").symlink_to("config/kb.yaml")
    result = run_kblint("migrate", str(tmp_path / "kb"), "--write")
    assert result.code == 2 and "a symbolic link: not rewritten" in result.stderr
    assert (tmp_path / "kb" / "kb.yaml").is_symlink() and "tags count" not in shared.read_text(encoding="utf-8")


def test_write_refuses_a_result_that_does_not_verify(kb: Path):
    result = propose(str(kb))
    before = (kb / "kb.yaml").read_bytes()
    result.migrated = result.migrated.replace("fields: [date, confidence]", "fields: [date, nosuch]")
    with pytest.raises(MigrationError, match="nothing written"):
        write(result)
    assert (kb / "kb.yaml").read_bytes() == before


# ---------------------------------------------------------------------------------------------
# Odd files


ODD = (
    "\ufeffname: odd\r\n"
    "types:\r\n"
    "  writing:\r\n"
    "    required: [title, date, writing_type]\r\n"
    "    optional: [url]\r\n"
    "    evaluation_rubric:\r\n"
    '      - "Writing has\r\n'
    '        a date"   # a scalar over two lines\r\n'
    "      - >-\r\n"
    "        Writing has a date\r\n"
    "        and writing_type\r\n"
    "\r\n"
    "      # a comment after a block scalar\r\n"
    '      - &anc "Writing has an url"\r\n'
    "      - Writing has a url, always\r\n"
    "  note:\r\n"
    "    optional: [url]\r\n"
    '    evaluation_rubric: [*anc, "Note has at least 2 tags"]\r\n'
    "evaluation_rubric:\r\n"
    "  - Entries have a Q&A section\r\n"
    '  - "Body has a \\"Notes\\" section"\r\n'
    "  - Entries link to 2 or more other entries\r\n"
)


def test_bom_crlf_multiline_and_anchors(tmp_path: Path):
    (tmp_path / "kb.yaml").write_bytes(ODD.encode("utf-8"))
    result = propose(str(tmp_path))
    got = {p.text: p.replacement for p in result.proposals}
    assert set(got) == {
        "Writing has a date",
        "Writing has a date and writing_type",
        "Note has at least 2 tags",
        "Entries have a Q&A section",
        'Body has a "Notes" section',
        "Entries link to 2 or more other entries",
    }
    # an anchored item (shared with another type through an alias) is never edited
    assert result.left.count("Writing has an url") == 2
    assert write(result)
    data = (tmp_path / "kb.yaml").read_bytes()
    assert data.startswith(b"\xef\xbb\xbfname: odd\r\n")
    assert b"\n" not in data.replace(b"\r\n", b"")  # every line still ends in CRLF
    text = data.decode("utf-8")
    assert (
        '      - {text: "Writing has a date", covered_by: schema, field: date}   # a scalar over two lines\r\n' in text
    )
    assert (
        '      - {text: "Writing has a date and writing_type", covered_by: schema, fields: [date, '
        "writing_type]}\r\n\r\n      # a comment after a block scalar\r\n" in text
    )
    assert '{text: Entries have a Q&A section, checker: body_has_section, params: {heading: "Q&A"}}' in text
    assert '[*anc, {text: "Note has at least 2 tags", policy: "tags count >= 2"}]' in text
    assert not build_plan(load_kb_schema(str(tmp_path))).broken()
    assert propose(str(tmp_path)).proposals == []


@pytest.mark.parametrize(
    "kb_yaml",
    [
        "name: h\ntypes:\n  finding: &f\n    evaluation_rubric:\n      - {item}\n  other: *f\n",
        "name: h\ntypes: &t\n  finding:\n    evaluation_rubric:\n      - {item}\nlegacy_types: *t\n",
    ],
)
def test_an_item_under_a_shared_mapping_is_left_and_the_others_bound(tmp_path: Path, kb_yaml: str):
    """The item's own node is reached once, but a mapping above it is shared through an alias."""
    item = "Entries have at least two tags"
    text = kb_yaml.format(item=item) + f"evaluation_rubric:\n  - {item}\n"
    (tmp_path / "kb.yaml").write_text(text, encoding="utf-8")
    result = propose(str(tmp_path))
    assert [p.line for p in result.proposals] == [text.count("\n")] and item in result.left
    assert write(result) and not build_plan(load_kb_schema(str(tmp_path))).broken()


def test_a_kb_yaml_with_lone_cr_line_ends_gets_no_diff_that_patch_would_misread(tmp_path: Path):
    (tmp_path / "kb.yaml").write_bytes(b"name: h\revaluation_rubric:\r  - Entries have at least two tags\r")
    shown = run_kblint("migrate", str(tmp_path))
    assert shown.code == 0 and shown.stdout == "bound 1, left 0 as judgment\n"
    assert "ends lines with a lone CR, which no diff can show: --write makes the change" in shown.stderr
    assert run_kblint("migrate", str(tmp_path), "--write").code == 0
    assert (tmp_path / "kb.yaml").read_bytes().count(b"\r") == 3 and b"tags count >= 2" in (
        tmp_path / "kb.yaml"
    ).read_bytes()


def test_only_string_items_it_can_bind_change(tmp_path: Path):
    (tmp_path / "kb.yaml").write_text(
        "types:\n  finding:\n    required: [title, date]\n    evaluation_rubric:\n"
        "      - Finding has at least one tag, always [sic]\n"
        "      - Finding: has a Sources section\n"
        "      - Finding has a References section #a comment\n",
        encoding="utf-8",
    )
    result = propose(str(tmp_path))
    assert [p.text for p in result.proposals] == ["Finding has a References section"]
    assert result.left == ["Finding has at least one tag, always [sic]"]
    write(result)
    text = (tmp_path / "kb.yaml").read_text(encoding="utf-8")
    assert (
        "      - {text: Finding has a References section, checker: body_has_section, "
        "params: {heading: References}} #a comment\n" in text
    )
    assert "      - Finding: has a Sources section\n" in text  # a (broken) mapping item: left alone
    assert propose(str(tmp_path)).proposals == []


def test_plain_scalar_with_a_comma_is_double_quoted(tmp_path: Path):
    (tmp_path / "kb.yaml").write_text(
        "types:\n  writing:\n    required: [title, date, author]\n    evaluation_rubric:\n"
        "      - Writing has author, date   # plain\n",
        encoding="utf-8",
    )
    result = propose(str(tmp_path))
    assert write(result)
    assert '      - {text: "Writing has author, date", covered_by: schema, fields: [author, date]}   # plain\n' in (
        tmp_path / "kb.yaml"
    ).read_text(encoding="utf-8")


def test_invalid_yaml_raises_with_file_and_line(tmp_path: Path):
    (tmp_path / "kb.yaml").write_text('name: x\nevaluation_rubric:\n  - "open\n  - b: [\n', encoding="utf-8")
    with pytest.raises(MigrationError) as info:
        propose(str(tmp_path))
    assert re.match(rf"{re.escape(str(tmp_path / 'kb.yaml'))}:\d+: invalid YAML", str(info.value))
    assert info.value.line is not None


def test_missing_kb_yaml_raises(tmp_path: Path):
    with pytest.raises(MigrationError, match="not found"):
        propose(str(tmp_path / "nowhere"))
    for name in ("one", "two"):
        (tmp_path / "kbs" / name).mkdir(parents=True)
        (tmp_path / "kbs" / name / "kb.yaml").write_text(f"name: {name}\n", encoding="utf-8")
    result = run_kblint("migrate", "kbs", cwd=tmp_path)
    assert result.code == 2 and result.stderr.strip().endswith("the KBs in it: kbs/one, kbs/two: migrate one of them")


def test_kb_yaml_path_is_accepted_too():
    assert len(propose(str(FIXTURE / "kb.yaml")).proposals) == len(EXPECTED)


def test_no_rubric_at_all(tmp_path: Path):
    (tmp_path / "kb.yaml").write_text("# nothing here\n", encoding="utf-8")
    result = propose(str(tmp_path))
    assert result.proposals == [] and result.left == [] and not write(result)


# ---------------------------------------------------------------------------------------------
# The grammar: conservative by construction

SCHEMA_YAML = """\
types:
  writing:
    required: [title, date, writing_type]
    optional: [url, publisher, first_appeared, origin]
  person:
    required: [title, role]
    optional: [movement_role, affiliations]
"""

STAY_JUDGMENT = [
    # from the real KBs
    "Writing entries explain significance and impact, not just contents",
    "People entries describe the specific relationship to Boyd",
    "Role field accurately describes the person's primary function",
    "Concept identifies origin and first appearance",
    "Evidence base is noted where it exists",
    "Key concepts are linked",
    "Entry cites a primary source (blog.gardeviance.org, Wardley Maps book, or named talk)",
    "Connections to other concepts are explicit via wikilinks",
    "Person has a role or position described",  # position is no field
    # near misses
    "Writing has a title",
    "Writing has a url where relevant",
    "Writing has a url (if any)",
    "Writing has one tag",
    "Writing cites at least two sources",
    "Writing has an introductory section",
    "Writing has a clear Summary section",
    "Writing has url and publisher",  # two optional fields: no single checker
    "Writing has url and/or publisher",
    "Person has a date",  # not a field of person
    "Writing links to the person who wrote it",
    "Person has movement_role and affiliations",
    "Writing has a good url",
]


@pytest.mark.parametrize("text", STAY_JUDGMENT)
def test_stays_judgment(tmp_path: Path, text: str):
    (tmp_path / "kb.yaml").write_text(SCHEMA_YAML, encoding="utf-8")
    schema = load_kb_schema(str(tmp_path))
    for scope, type_name in (("kb", None), ("type", "writing"), ("type", "person")):
        item = RubricItem(raw=text, text=text, line=1, scope=scope, type_name=type_name)
        assert match_item(item, schema) is None, (scope, type_name)


BINDS = [
    ("type", "writing", "Writing must have a date.", {"covered_by": "schema", "field": "date"}),
    ("type", "writing", "Each writing specifies its writing type", {"covered_by": "schema", "field": "writing_type"}),
    (
        "type",
        "writing",
        "Origin or first_appeared is documented",
        {"checker": "has_any_field", "params": {"fields": ["origin", "first_appeared"]}},
    ),
    ("type", "writing", "Either date or url is present", {"covered_by": "schema", "field": "date"}),
    ("type", "writing", "The url field is set", {"checker": "has_field", "params": {"field": "url"}}),
    (
        "type",
        "person",
        "Person has role and movement_role",
        {"checker": "has_field", "params": {"field": "movement_role"}},
    ),
    (
        "kb",
        None,
        "Person entries have a role described",
        {"covered_by": "schema", "field": "role", "applies_to": ["person"]},
    ),
    ("kb", None, "Entries have at least 3 tags", {"policy": "tags count >= 3"}),
    ("kb", None, "Entry has one or more tags", {"checker": "has_tags"}),
    ("kb", None, "Entry links to at least one related entry", {"checker": "has_outlinks"}),
    ("kb", None, "Entry links to another entry", {"checker": "has_outlinks"}),
    ("kb", None, "Entry is linked from at least two other entries", {"policy": "inlinks count >= 2"}),
    ("kb", None, "Entry should cite a source", {"checker": "cites_source"}),
    (
        "kb",
        None,
        "Entry includes a '## Key Findings' section",
        {"checker": "body_has_section", "params": {"heading": "Key Findings"}},
    ),
    (
        "kb",
        None,
        "Entry body has a section called Timeline",
        {"checker": "body_has_section", "params": {"heading": "Timeline"}},
    ),
    ("type", "person", "People have at least one tag", {"checker": "has_tags"}),
]


@pytest.mark.parametrize("scope,type_name,text,expected", BINDS)
def test_binds(tmp_path: Path, scope, type_name, text, expected):
    (tmp_path / "kb.yaml").write_text(SCHEMA_YAML, encoding="utf-8")
    item = RubricItem(raw=text, text=text, line=1, scope=scope, type_name=type_name)
    found = match_item(item, load_kb_schema(str(tmp_path)))
    assert found is not None
    replacement, reason = found
    assert replacement == {"text": text, **expected}
    assert reason


def test_a_type_item_about_another_type_stays_judgment(tmp_path: Path):
    (tmp_path / "kb.yaml").write_text(SCHEMA_YAML, encoding="utf-8")
    item = RubricItem(raw="Person has a role", text="Person has a role", line=1, scope="type", type_name="writing")
    assert match_item(item, load_kb_schema(str(tmp_path))) is None


# ---------------------------------------------------------------------------------------------
# The real KBs: read-only


@pytest.mark.skipif(not CORPUS.is_dir(), reason="no corpus")
def test_corpus_kbs_migrate_cleanly(tmp_path: Path):
    for kb_yaml in sorted(CORPUS.glob("*/kb.yaml")):
        before = kb_yaml.read_bytes()
        result = propose(str(kb_yaml.parent))
        assert kb_yaml.read_bytes() == before
        copy = tmp_path / kb_yaml.parent.name
        copy.mkdir()
        shutil.copy(kb_yaml, copy / "kb.yaml")
        write(result.__class__(str(copy / "kb.yaml"), result.proposals, result.left, result.original, result.migrated))
        assert propose(str(copy)).proposals == []
        assert not build_plan(load_kb_schema(str(copy))).broken()
        changed = [
            i
            for i, (a, b) in enumerate(zip(result.original.splitlines(), result.migrated.splitlines(), strict=False))
            if a != b
        ]
        assert len(changed) == len(result.proposals)


def test_a_line_separator_in_an_earlier_item_leaves_lines_and_diff_as_editors_see_them(tmp_path: Path):
    kb_yaml = 'name: k\nevaluation_rubric:\n  - "Judge\u2028this"\n  - Entry has at least two tags\n'
    (tmp_path / "kb.yaml").write_text(kb_yaml, encoding="utf-8")
    result = propose(str(tmp_path))
    assert [(p.text, p.line) for p in result.proposals] == [("Entry has at least two tags", 4)]
    diff = unified_diff(result)
    assert "No newline" not in diff
    assert (
        '-  - Entry has at least two tags\n+  - {text: Entry has at least two tags, policy: "tags count >= 2"}\n'
        in diff
    )


def test_migrate_reads_what_validate_reads(tmp_path: Path):
    """libyaml reads a tab after a plain item, which PyYAML's Python reader refuses; and its marks
    count characters, however many bytes they take."""
    kb_yaml = 'name: k\nnote: "x😀é"\nevaluation_rubric:\n  - Entry has at least two tags\t\n'
    (tmp_path / "kb.yaml").write_text(kb_yaml, encoding="utf-8")
    result = propose(str(tmp_path))
    assert [(p.text, p.line) for p in result.proposals] == [("Entry has at least two tags", 4)]
    assert write(result)
    text = (tmp_path / "kb.yaml").read_text(encoding="utf-8")
    assert text == kb_yaml.replace(
        "- Entry has at least two tags", '- {text: Entry has at least two tags, policy: "tags count >= 2"}'
    )
