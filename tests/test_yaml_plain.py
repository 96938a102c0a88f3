"""The plain-YAML reader gives PyYAML's own result, or declines (None) and PyYAML reads the text."""

from __future__ import annotations

import datetime

import yaml
from conftest import same_data
from hypothesis import given
from hypothesis import strategies as st

from kblint.yamlread import plain as plainyaml

TYPICAL = """id: ashmore-expedition-of-1929
title: "Ashmore Expedition of 1929"
tags: [rivers, trade-route]
created_at: 2019-09-07
date: "1887-08-13"
budget: 800360
ratio: 0.25
reviewed: yes
empty:
links:
  - target: old-torthorpe-harbour
    relation: supports
    note: 'same period'
  - {to: report-of-jordale-1830, type: follows}
  - oskar-garmore
references:
- minutes-1915-37
- interview-1988-86
metadata:
  first_appeared: "Patterns of Conflict (1976)"
  nested:
    deeper: [a, b]
"""


def reference(text: str):
    """What PyYAML's C safe loader gives, or the error it raises."""
    try:
        return ("ok", yaml.load(text, Loader=yaml.CSafeLoader))
    except (yaml.YAMLError, ValueError) as exc:
        return ("error", type(exc).__name__)


def assert_read_as_pyyaml_reads(text: str) -> None:
    """Either the plain reader declines TEXT, or it gives what PyYAML gives."""
    data = plainyaml.load(text)
    if data is None:
        return
    expected = reference(text)
    assert expected[0] == "ok", (text, expected)
    assert same_data(data, expected[1]), (text, data, expected[1])


def test_typical_frontmatter_is_read_without_pyyaml_and_exactly():
    data = plainyaml.load(TYPICAL)
    assert data is not None
    assert same_data(data, reference(TYPICAL)[1])
    assert data["created_at"] == datetime.date(2019, 9, 7) and data["date"] == "1887-08-13"
    assert data["reviewed"] is True and data["empty"] is None and data["budget"] == 800360


def test_what_is_not_plain_is_declined():
    for text in [
        "a: &x 1\nb: *x",
        "a: 1 # note",
        "a: |\n  block",
        "a: !!str 1",
        "a: 2025-13-45",
        'a: "esc\\n"',
        "a: b\n  continued",
        "a: [b,\n  c]",
        "<<: {a: 1}",
        "a:\tb",
        "",
        "just text",
        "a: b: c",
        "- a\n b: c",
        "a: [x, [y]]",
        "a: 'it''s'",
        "a: R&D\nb: &x c",
        "a: [x, *y]",
        "a: >-\n  folded",
        "- !x y",
        "a: {b: '@x'}\nc: @d",
        "a: `b`",
        "a: %x",
    ]:
        assert plainyaml.load(text) is None, text


def test_anchor_alias_and_tag_characters_inside_a_scalar_are_text():
    text = "title: R&D of *Boyd* - a > b | c\nnote: Hi! 50% of u@x.org\ntags: [a&b, c*, d!]\n"
    data = plainyaml.load(text)
    assert (
        data
        == reference(text)[1]
        == {
            "title": "R&D of *Boyd* - a > b | c",
            "note": "Hi! 50% of u@x.org",
            "tags": ["a&b", "c*", "d!"],
        }
    )


_keys = st.sampled_from(["id", "title", "a-b", "_x", "Key", "true", "null", "y", "on", "x1"])
_values = st.sampled_from(
    [
        "",
        "word",
        "two words",
        "1",
        "-5",
        "0x1F",
        "0o17",
        "1_000",
        "1.5",
        "-.5",
        ".inf",
        "-.nan",
        "1e3",
        "1:30",
        "2024-02-29",
        "2024-13-45",
        "2001-12-14t21:59:43.10-05:00",
        "2001-12-14 21:59:43",
        "yes",
        "No",
        "~",
        "null",
        "'single'",
        "''",
        '"double"',
        '""',
        '"a, b"',
        "'a: b'",
        "a:b",
        "a: b",
        "http://x/y?z=1",
        "x?",
        "? x",
        "-",
        "- x",
        "[a, b]",
        "[]",
        "[ ]",
        "[a,]",
        "[a, [b]]",
        "[1, 'q', \"r\", yes]",
        "[a?]",
        "{a: b}",
        "{}",
        "{a: b, c: 1}",
        "{a}",
        "{a: b: c}",
        "é ü ☃",
        "end:",
        "- [a]",
        "%x",
        "@x",
        "`x`",
        "a #b",
        "-1x",
        "--x",
        "=",
        "<<",
        "...",
        "---",
        # anchors, aliases, tags, block scalars, directives and reserved characters: YAML's only at
        # the start of a scalar, text inside one
        "&x",
        "&x word",
        "*x",
        "!x",
        "!!str 1",
        "|",
        "|-",
        ">",
        ">-",
        "R&D",
        "a & b",
        "a*b",
        "*a*",
        "a *b",
        "Hi!",
        "50%",
        "a|b",
        "a > b",
        "draft->done",
        "u@x.org",
        "a`b`",
        "[&a]",
        "[a&b, c*]",
        "[!t x]",
        "{a: &b}",
        "{a: b&c}",
        "'&x'",
        '"*x"',
        "& x",
        "* x",
        "-&",
        "?&",
    ]
)
_indents = st.sampled_from(["", "  ", "    ", " "])
_line = st.one_of(
    st.tuples(_indents, _keys, st.sampled_from([": ", " : ", ":  ", ":"]), _values).map("".join),
    st.tuples(_indents, st.sampled_from(["- ", "-   ", "-"]), _values).map("".join),
    st.tuples(_indents, st.sampled_from(["- "]), _keys, st.just(": "), _values).map("".join),
    st.just(""),
)


@given(st.lists(_line, min_size=1, max_size=10))
def test_plain_reader_agrees_with_pyyaml(lines):
    assert_read_as_pyyaml_reads("\n".join(lines))


_plain_values = st.sampled_from(
    [
        "word",
        "two words",
        "1",
        "-5",
        "1.5",
        "2024-02-29",
        "yes",
        "~",
        "'single'",
        '"double"',
        "[a, b]",
        "{a: b}",
        "http://x/y?z=1",
        "é ü ☃",
        "[]",
        "0x1F",
        "1_000",
        ".inf",
        "No",
        "null",
        "1:30",
        "a:b",
        "2001-12-14 21:59:43",
        "[1, 'q', \"r\", yes]",
        "{a: b, c: 1}",
        "x?",
        "-.5",
        "0o17",
        "''",
    ]
)
_scalar_text = st.one_of(_plain_values, _plain_values, _values.filter(lambda v: v not in ("", "-", "- x")))


def _render(node, indent: int, step: int, compact: bool) -> list[str]:
    """Lines of a block NODE: ("map", [(key, child)]), ("seq", [child]) or a scalar's text."""
    kind, items = node
    pad = " " * indent
    out = []
    if kind == "map":
        for key, child in items:
            if isinstance(child, str):
                out.append(f"{pad}{key}: {child}".rstrip())
            else:
                out.append(f"{pad}{key}:")
                deeper = indent if (compact and child[0] == "seq") else indent + step
                out.extend(_render(child, deeper, step, compact))
    else:
        for child in items:
            if isinstance(child, str):
                out.append(f"{pad}- {child}")
            elif child[0] == "map" and child[1] and isinstance(child[1][0][1], str):
                first, *rest = _render(child, indent + 2, step, compact)
                out.append(f"{pad}- {first.strip()}")
                out.extend(rest)
            else:
                out.append(f"{pad}-")
                out.extend(_render(child, indent + step, step, compact))
    return out


_tree = st.recursive(
    _scalar_text,
    lambda children: st.one_of(
        st.lists(st.tuples(_keys, children), min_size=1, max_size=4).map(lambda kv: ("map", kv)),
        st.lists(children, min_size=1, max_size=4).map(lambda items: ("seq", items)),
    ),
    max_leaves=12,
)


@given(
    st.lists(st.tuples(st.one_of(_keys, st.sampled_from(["id", "links", "meta"])), _tree), min_size=1, max_size=6),
    st.sampled_from([2, 4]),
    st.booleans(),
)
def test_plain_reader_agrees_with_pyyaml_on_nested_documents(pairs, step, compact):
    assert_read_as_pyyaml_reads("\n".join(_render(("map", pairs), 0, step, compact)))


def test_values_read_again_are_not_shared_with_earlier_results():
    text = "tags: [a, b]\nstatus: draft\nwhen: 2024-01-02\n"
    first = plainyaml.load(text)
    first["tags"].append("c")
    again = plainyaml.load(text)
    assert again == {"tags": ["a", "b"], "status": "draft", "when": datetime.date(2024, 1, 2)}
    assert again["tags"] is not first["tags"]


def _key_read_by_pyyaml(key: str) -> object:
    return next(iter(yaml.load(f"{key}: 1", Loader=yaml.CSafeLoader)))


@given(st.from_regex(r"[A-Za-z_][A-Za-z0-9_-]{0,6}", fullmatch=True))
def test_a_key_is_declined_exactly_when_pyyaml_does_not_read_it_as_text(key):
    assert isinstance(_key_read_by_pyyaml(key), str) == (key not in plainyaml.NOT_TEXT_KEYS)


def test_every_boolean_and_null_key_is_declined():
    for key in sorted(plainyaml.NOT_TEXT_KEYS):
        assert not isinstance(_key_read_by_pyyaml(key), str), key
        assert plainyaml.load(f"{key}: 1") is None, key
    assert plainyaml.load("yesterday: 1\nnone: 2\nNo_: 3") == {"yesterday": 1, "none": 2, "No_": 3}
