"""Parsing an entry (SPEC §3): every failure is a parse_error at the right line, never a crash."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import issues_of, run_kblint, same_data, write_kb
from hypothesis import given
from hypothesis import strategies as st

from kblint.engine.pass_entries import KBContext, lint_source
from kblint.model.entry import ParseFailure, RawEntry, decode, split_and_load
from kblint.model.kbschema import default_schema
from kblint.model.plan import build_plan
from kblint.yamlread import DEFAULT_LIMITS


def parse(data: bytes):
    text = decode(data)
    return split_and_load(text) if isinstance(text, str) else text


def lint(data: bytes, relpath: str = "note.md"):
    schema = default_schema("/kb")
    ctx = KBContext(schema=schema, plan=build_plan(schema), limits=DEFAULT_LIMITS)
    return lint_source(ctx, "/kb/" + relpath, relpath, data)


@pytest.mark.parametrize(
    "data, line, words",
    [
        (b"", 1, "empty file"),
        (b"   \n\n", 1, "empty file"),
        (b"title: x\n---\nbody\n", 1, "first line must be '---'"),
        (b"---\ntitle: x\nbody text\n", 1, "unterminated frontmatter"),
        (b"---\ntitle: x\nfoo: [a, b\nbar: 1\n---\nbody\n", 4, "expected ',' or ']' for the '[' on an earlier line"),
        (b"---\ntitle: x\nfoo: {a: 1\nbar: 1\n---\nbody\n", 4, "expected ',' or '}' for the '{' on an earlier line"),
        (b'---\ntitle: "x\ntype: note\n---\nbody\n', 4, "end of stream in the text quoted on an earlier line"),
        (b"---\ntitle: x\nfoo: [a, b}\n---\n", 3, "invalid YAML in frontmatter: did not find expected ',' or ']'\n"),
        (b"---\ntitle: x\n  bad: indent\n---\n", 3, "invalid YAML"),
        (b"---\n- a\n- b\n---\nbody\n", 2, "not a list"),
        (b"---\njust a sentence\n---\nbody\n", 2, "not a scalar"),
        (b"---\ntitle: x\nname: \xff\xfe\n---\nbody\n", 3, "invalid UTF-8 at byte offset 19"),
        (b"\xc3\x28", 1, "invalid UTF-8 at byte offset 0"),
    ],
)
def test_parse_errors_have_the_spec_line(data, line, words):
    result = parse(data)
    assert isinstance(result, ParseFailure)
    assert result.line == line
    assert words in result.message + "\n"


def test_closing_fence_glued_to_a_value_is_named():
    data = b"---\ntitle: Interview\nresearch_status: partial---\n\nThe body.\n"
    result = parse(data)
    assert isinstance(result, ParseFailure)
    assert result.line == 1
    assert "glued" in result.message and "research_status: partial---" in result.message
    assert "line 3" in result.message


def test_glued_fence_named_when_a_later_rule_closes_the_yaml():
    data = b"---\ntitle: Interview\nstatus: draft---\nSome body text: with a colon\nmore text\n---\n"
    result = parse(data)
    assert isinstance(result, ParseFailure)
    assert "glued" in result.message


def test_impossible_date_is_kept_as_text_and_reported_on_its_line():
    data = b"---\ntitle: A finding\ntype: event\ndate: 2025-13-45\ntags: [a]\n---\nBody.\n"
    raw = parse(data)
    assert isinstance(raw, RawEntry)
    assert raw.frontmatter["date"] == "2025-13-45"
    assert raw.bad_dates == [(4, "2025-13-45")]
    result = lint(data)
    rules = sorted(i.rule for i in result.issues)
    assert "invalid_date" in rules
    bad = [i for i in result.issues if i.rule == "invalid_date"]
    assert len(bad) == 1 and bad[0].line == 4 and bad[0].field == "date"
    assert result.facts.parsed


def test_rest_of_entry_checked_after_impossible_date():
    data = b"---\ndate: 2025-02-30\ntype: event\n---\n\n"
    result = lint(data)
    rules = {i.rule for i in result.issues}
    assert {"invalid_date", "missing_title", "empty_body"} <= rules


def test_bom_and_crlf_parse_fine():
    data = b"\xef\xbb\xbf---\r\ntitle: Windows note\r\ntags: [a, b]\r\n---\r\nBody line one.\r\nSecond [[x]].\r\n"
    raw = parse(data)
    assert isinstance(raw, RawEntry)
    assert raw.frontmatter == {"title": "Windows note", "tags": ["a", "b"]}
    assert raw.body == "Body line one.\nSecond [[x]].\n"
    assert raw.body_line == 5
    assert raw.key_line("tags") == 3


def test_old_mac_line_endings_parse_fine():
    raw = parse(b"---\rtitle: Old\r---\rBody\r")
    assert isinstance(raw, RawEntry)
    assert raw.frontmatter == {"title": "Old"}


def test_fences_allow_trailing_whitespace_and_empty_frontmatter_is_a_mapping():
    raw = parse(b"---  \n--- \t\nBody\n")
    assert isinstance(raw, RawEntry)
    assert raw.frontmatter == {}
    assert raw.body == "Body\n"


@pytest.mark.parametrize("char", ["\u2028", "\u2029", "\x85"])
def test_lines_after_a_character_libyaml_takes_for_a_line_break(char: str, tmp_path: Path):
    """A quoted value may hold U+2028, U+2029 or U+0085, which libyaml counts as line breaks and
    editors do not: what comes after keeps its line."""
    text = f'---\ntitle: "A{char}B"\ntype: event\ndate: 2024-13-01\nimportance: 99\ntags: [a, a]\n---\nBody.\n'
    raw = parse(text.encode())
    assert isinstance(raw, RawEntry)
    assert [raw.key_line(k) for k in ("type", "date", "importance")] == [3, 4, 5]
    assert raw.bad_dates == [(4, "2024-13-01")]
    repeated = parse(text.replace("tags: [a, a]", "tags: a\ntags: b").encode())
    assert isinstance(repeated, RawEntry) and [(k.line, k.column) for k in repeated.repeated_keys] == [(7, 1)]
    broken = parse(text.replace("tags: [a, a]", "tags: [a, b").encode())
    assert isinstance(broken, ParseFailure) and (broken.line, broken.column) == (7, 1)
    kb = write_kb(
        tmp_path / "k", f'name: k\nevaluation_rubric:\n  - "Judge{char}this"\n  - {{text: t, checker: nope}}\n', {}
    )
    (error,) = issues_of(run_kblint("validate", str(kb), "--format", "json").json, "config_error")
    assert error["line"] == 4


def test_an_undefined_alias_is_not_called_a_collection_that_contains_it():
    failure = parse(b"---\na: &a x\nb: [*a]\nc: [*b]\ntitle: A\n---\nBody.\n")
    assert isinstance(failure, ParseFailure) and (failure.line, failure.column) == (4, 5)
    assert failure.message.endswith("found undefined alias *b: no anchor &b comes before it")
    failure = parse(b"---\na: &a [1, *a]\ntitle: A\n---\nBody.\n")
    assert isinstance(failure, ParseFailure)
    assert failure.message.endswith("alias *a refers to a collection that contains it")


def test_top_level_key_lines():
    raw = parse(b"---\nid: a\ntitle: A\nlinks:\n  - target: b\nstatus: draft\n---\n")
    assert isinstance(raw, RawEntry)
    assert [raw.key_line(k) for k in ("id", "title", "links", "status")] == [2, 3, 4, 6]


_key_line = st.one_of(
    st.tuples(
        st.sampled_from(["a", "ab", "b", "title", "x-y"]),
        st.sampled_from([": 1", ": text", ":", ": [a, b]", ": 'q # not a comment'", ": |", ": &x v"]),
    ).map("".join),
    st.sampled_from(["  - item", "  nested: 1", "# comment", "", "  more text", '"a": quoted', "'b': quoted"]),
)


@given(st.lists(_key_line, max_size=8))
def test_key_lines_are_where_the_yaml_parser_finds_the_keys(lines):
    """Both readers (plain YAML, and PyYAML for the rest) give each top-level key the line of its
    last appearance (whose value is read), as PyYAML's own node marks say."""
    import yaml

    fm_text = "\n".join(lines) + "\n"
    raw = split_and_load("---\n" + fm_text + "---\n")
    try:
        node = yaml.compose(fm_text, Loader=yaml.SafeLoader)
    except yaml.YAMLError:
        assert isinstance(raw, ParseFailure)
        return
    if not isinstance(node, yaml.MappingNode):
        return
    assert isinstance(raw, RawEntry)
    expected: dict[str, int] = {}
    for key_node, _ in node.value:
        expected[key_node.value] = key_node.start_mark.line + 2
    assert {key: raw.key_line(key) for key in expected} == expected
    assert raw.key_line("never-a-key") == 1


@given(st.binary(max_size=400))
def test_parser_never_raises_on_bytes(data):
    result = lint(data)
    assert result.facts.parsed or [i.rule for i in result.issues] == ["parse_error"]


@given(st.text(max_size=300))
def test_parser_never_raises_on_text(text):
    lint(text.encode("utf-8", "surrogatepass"))


_yaml_ish = st.lists(
    st.sampled_from(
        [
            "title: x",
            "date: 2025-13-45",
            "tags: [a",
            "- item",
            "key: value---",
            "  nested: 1",
            "links:",
            "  - target: y",
            "---",
            "",
            "[[link]]",
            "`code`",
            "```",
            "# Heading",
            "status: !!python/object:os.system x",
            "a: &x 1",
            "b: *x",
            "c: *missing",
            "d: 2024-02-29",
            "e: 0x1F",
            "f: {a: [b, {c: d}]}",
            "? complex",
            "\t",
            "\ufeff",
            "\r",
        ]
    ),
    max_size=12,
)


@given(_yaml_ish)
def test_parser_never_raises_on_frontmatter_shaped_text(lines):
    lint(("\n".join(["---", *lines])).encode("utf-8"))
    lint(("\n".join(["---", *lines, "---", "body"])).encode("utf-8"))


def test_every_file_is_counted_and_no_traceback(tmp_path: Path):
    kb = write_kb(
        tmp_path / "kb",
        "name: broken\n",
        {
            "empty.md": b"",
            "nofence.md": b"just text\n",
            "unterminated.md": b"---\ntitle: x\n",
            "glued.md": b"---\ntitle: x\nresearch_status: partial---\n\nbody\n",
            "yaml.md": b"---\ntitle: [x\n---\n",
            "list.md": b"---\n- a\n---\n",
            "utf8.md": b"---\ntitle: \xff\n---\n",
            "good.md": b"---\ntitle: Good\ntags: [a]\n---\nBody with [[good]].\n",
        },
    )
    result = run_kblint("validate", str(kb), "--format", "json")
    assert "Traceback" not in result.stderr
    assert result.code == 1
    report = result.json
    assert report["summary"]["files"] == 8
    assert report["summary"]["entries"] == 1
    errors = issues_of(report, "parse_error")
    assert sorted(Path(i["path"]).name for i in errors) == sorted(
        ["empty.md", "nofence.md", "unterminated.md", "glued.md", "yaml.md", "list.md", "utf8.md"]
    )
    glued = next(i for i in errors if i["path"].endswith("glued.md"))
    assert "glued" in glued["message"] and glued["line"] == 1
    yaml_error = next(i for i in errors if i["path"].endswith("yaml.md"))
    assert yaml_error["line"] == 3


_fm_lines = st.lists(
    st.sampled_from(
        [
            "title: x",
            "title: 'quoted: yes'",
            "date: 2025-13-45",
            "d: 2024-02-29",
            "t: 2024-02-29 10:30:00",
            "n: ~",
            "n2: null",
            "b: yes",
            "b2: false",
            "i: 0x1F",
            "i2: 1_000",
            "i3: 0o17",
            "s: 1:30",
            "f: .5",
            "f2: -.inf",
            "f3: .nan",
            "tags: [a, b]",
            "tags:",
            "  - x",
            "  - 3",
            "links:",
            "  - target: y",
            "    relation: z",
            "  - {to: q, type: r}",
            "m: {a: [b, {c: d}]}",
            "1: one",
            "true: yes",
            "? [a, b]",
            ": v",
            "<<: {k: v}",
            "=: eq",
            "x: !!str 12",
            "y: !!binary aGVsbG8=",
            "z: !!set {a, b}",
            "o: !!omap [{a: 1}]",
            "a: &x 1",
            "c: *x",
            "dup: 1",
            "dup: 2",
            "e: ''",
            "e2:",
            'u: "\\u00e9t\\u00e9"',
        ]
    ),
    max_size=10,
)


@given(_fm_lines)
def test_frontmatter_loads_exactly_as_pyyaml_does(lines):
    """The fast resolver and constructor for plain frontmatter give PyYAML's own result, or its error."""
    import yaml

    from kblint.yamlread import _Loader, _timestamp_or_text

    text = "\n".join(lines)

    class Reference(_Loader):  # PyYAML's own resolver and constructor (libyaml's safe loader)
        pass

    Reference.add_constructor("tag:yaml.org,2002:timestamp", _timestamp_or_text)

    def standard():
        loader = Reference(text)
        loader.bad_dates = []
        try:
            return ("ok", loader.get_single_data(), loader.bad_dates)
        except yaml.YAMLError as exc:
            return ("error", str(exc), None)
        finally:
            loader.dispose()

    expected = standard()
    raw = split_and_load("---\n" + text + "\n---\n")
    if expected[0] == "error" or not isinstance(expected[1], (dict, type(None))):
        assert isinstance(raw, ParseFailure)
        return
    assert isinstance(raw, RawEntry)

    assert same_data(raw.frontmatter, expected[1] or {})
    assert raw.bad_dates == [(line + 2, value) for line, value in expected[2]]


@pytest.mark.parametrize("size", [0, 1, 65535, 65536, 65537, 200_000])
def test_files_are_read_whole_whatever_their_size(tmp_path, size):
    from kblint.infra.files import FileProblem, read_regular_file

    data = bytes(range(256)) * (size // 256) + bytes(range(size % 256))
    path = tmp_path / "entry.md"
    path.write_bytes(data)
    assert read_regular_file(str(path)) == data
    for unreadable in (tmp_path, tmp_path / "missing.md"):
        with pytest.raises(FileProblem):
            read_regular_file(str(unreadable))
