"""A reader for the plain YAML that frontmatter is nearly always written in.

Block mappings and sequences indented with spaces, one-line flow lists and mappings, plain, single-
and double-quoted scalars without escapes or line breaks. `load` gives exactly what PyYAML's safe
loader gives, or None when the text uses anything else (comments, anchors, tags, block scalars,
multi-line scalars, escapes, tabs, an impossible date...), and the caller then hands it to PyYAML.
Every entry's frontmatter is read in pass 1, and PyYAML's libyaml loader builds an event and a
node object for every scalar (the figures are in bench/README.md). A property test holds the two
to the same result.
"""

from __future__ import annotations

import re
from typing import Any

import yaml

_CONSTRUCTOR = yaml.constructor.SafeConstructor()
_IMPLICIT = yaml.resolver.Resolver.yaml_implicit_resolvers
_CONSTRUCT = {
    tag: yaml.constructor.SafeConstructor.yaml_constructors[tag]
    for tag in (
        "tag:yaml.org,2002:bool",
        "tag:yaml.org,2002:int",
        "tag:yaml.org,2002:float",
        "tag:yaml.org,2002:timestamp",
    )
}
_NULL = "tag:yaml.org,2002:null"

# Characters that make the text anything but plain wherever they stand: comments, escapes, tabs,
# and the characters YAML reads as line breaks or refuses.
_NOT_PLAIN = re.compile("[#\\\\\t\r\x85\u2028\u2029\ufeff]|[^\n\x20-\x7e\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
# What a plain scalar cannot start with: YAML reads an anchor, alias, tag, block scalar, directive
# or reserved character there (inside a scalar, as in "R&D" or "a > b", they are text), and the
# flow and mapping indicators. `-` is let through before a digit or a dot, a negative number.
_INDICATORS = "-?:,[]{}&*!|>%@`"
_FLOW_INDICATOR = re.compile(r"[,?\[\]{}]")
_KEY = re.compile(r"([A-Za-z_][A-Za-z0-9_-]*)[ ]*:(?: +|$)")
_FLOW_KEY = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_-]*)\s*: +(.*)$", re.S)

# The words `_KEY` accepts that PyYAML reads as something else than text: YAML 1.1's booleans and
# null (its other implicit types start with a digit, a sign, a dot or `~`, which no key here does).
NOT_TEXT_KEYS = frozenset(
    form for word in ("yes", "no", "true", "false", "on", "off", "null") for form in (word, word.title(), word.upper())
)

# Deeper documents are left to PyYAML, whose reader enforces kblint's nesting limit.
MAX_DEPTH = 32

Lines = list[tuple[int, str, int]]  # (indentation, the rest of the line, line number) of each non-blank line


class _Unsure(Exception):
    """The text is not plain in the sense of this module."""


def plain_characters(text: str) -> bool:
    """Whether TEXT has none of the characters that make it anything but plain."""
    return _NOT_PLAIN.search(text) is None


def load(text: str, key_lines: dict[str, int] | None = None, first_line: int = 1) -> Any:
    """The data PyYAML's safe loader reads from TEXT, or None when TEXT is not plain. KEY_LINES,
    when given, gets the line of each key of a top-level mapping (TEXT's first line is FIRST_LINE)."""
    if not plain_characters(text):
        return None
    lines = [
        (len(line) - len(body), body.rstrip(" "), n)
        for n, line in enumerate(text.split("\n"), first_line)
        if (body := line.lstrip(" "))
    ]
    if not lines:
        return None  # an empty document: PyYAML gives None
    value: list[Any] | dict[Any, Any]
    try:
        if _is_item(lines[0][1]):
            value, end = _sequence(lines, 0, lines[0][0], 0)
        else:
            value, end = _mapping(lines, 0, lines[0][0], lines[0][1], 0, key_lines)
    except (_Unsure, ValueError, OverflowError):
        return None
    return value if end == len(lines) else None


def _block(lines: Lines, i: int, indent: int, depth: int) -> tuple[Any, int]:
    """The block collection starting at line I, whose lines are indented by INDENT."""
    if depth > MAX_DEPTH:
        raise _Unsure
    body = lines[i][1]
    if _is_item(body):
        return _sequence(lines, i, indent, depth)
    return _mapping(lines, i, indent, body, depth)


def _is_item(body: str) -> bool:
    return body == "-" or body.startswith("- ")


def _sequence(lines: Lines, i: int, indent: int, depth: int) -> tuple[list[Any], int]:
    items = []
    n = len(lines)
    while i < n and lines[i][0] == indent and _is_item(lines[i][1]):
        body = lines[i][1]
        rest = body[1:].lstrip(" ")
        value: Any
        if not rest:
            value, i = _nested(lines, i + 1, indent, False, depth)
        elif ":" in rest and _KEY.match(rest):
            # `- key: value`: a mapping whose keys stand where `key` stands
            value, i = _mapping(lines, i, indent + len(body) - len(rest), rest, depth + 1)
        else:
            value = _value(rest)
            i += 1
        items.append(value)
    if i < n and lines[i][0] > indent:
        raise _Unsure
    return items, i


def _mapping(
    lines: Lines, i: int, indent: int, body: str, depth: int, key_lines: dict[str, int] | None = None
) -> tuple[dict[Any, Any], int]:
    data: dict[Any, Any] = {}
    n = len(lines)
    while True:
        m = _KEY.match(body)
        if m is None:
            raise _Unsure
        key = _key(m.group(1))
        if key in data:
            raise _Unsure  # a key given twice: PyYAML's reader says where
        if key_lines is not None:
            key_lines.setdefault(key, lines[i][2])
        rest = body[m.end() :]
        if rest:
            data[key] = _value(rest)
            i += 1
            if i < n and lines[i][0] > indent:
                raise _Unsure  # a scalar continued on the next line
        else:
            data[key], i = _nested(lines, i + 1, indent, True, depth)
        if i >= n or lines[i][0] != indent:
            break
        body = lines[i][1]
    if i < n and lines[i][0] > indent:
        raise _Unsure
    return data, i


def _nested(lines: Lines, i: int, indent: int, allow_same: bool, depth: int) -> tuple[Any, int]:
    """The value of an empty `key:` or `-` ending the line before I: a block indented more, a
    sequence at the key's own indentation (ALLOW_SAME), or null."""
    if i < len(lines):
        next_indent, body, _ = lines[i]
        if next_indent > indent:
            return _block(lines, i, next_indent, depth + 1)
        if allow_same and next_indent == indent and _is_item(body):
            return _sequence(lines, i, indent, depth + 1)
    return None, i


def _value(text: str) -> Any:
    """The value written after `key: ` or `- `: a flow list, a flow mapping or a scalar."""
    first = text[0]
    if first == "[":
        return [_scalar(part, flow=True) for part in _flow_items(text, "]")]
    if first == "{":
        pairs = _flow_pairs(text)
        found = dict(pairs)
        if len(found) < len(pairs):
            raise _Unsure  # a key given twice: PyYAML's reader says where
        return found
    return _scalar(text, flow=False)


def _scalar(text: str, flow: bool) -> Any:
    first = text[0]
    if first in "\"'":
        if len(text) < 2 or text[-1] != first or first in text[1:-1]:  # noqa: PLR2004 - two quotes
            raise _Unsure
        return text[1:-1]
    if first in _INDICATORS and not (first == "-" and len(text) > 1 and (text[1].isdigit() or text[1] == ".")):
        raise _Unsure
    if ": " in text or text.endswith(":") or (flow and _FLOW_INDICATOR.search(text)):
        raise _Unsure
    return _plain(text)


def _key(key: str) -> str:
    """KEY, known to be read as a string (`true:`, `null:`, `on:` are keys of other types)."""
    if key in NOT_TEXT_KEYS:
        raise _Unsure
    return key


def _plain(text: str) -> Any:
    """A plain scalar as PyYAML resolves and constructs it."""
    for tag, regexp in _IMPLICIT.get(text[:1], ()):
        if regexp.match(text):
            if tag == _NULL:
                return None
            construct = _CONSTRUCT.get(tag)
            if construct is None:
                raise _Unsure  # `<<` and `=` are merge and value keys
            return construct(_CONSTRUCTOR, yaml.ScalarNode(tag, text))  # an impossible date raises ValueError
    return text


def _flow_items(text: str, close: str) -> list[str]:
    if text[-1] != close:
        raise _Unsure
    inner = text[1:-1].strip(" ")
    if not inner:
        return []
    parts = [part.strip(" ") for part in inner.split(",")]
    if not all(parts):
        raise _Unsure  # `[a, , b]`, a trailing comma
    return parts


def _flow_pairs(text: str) -> list[tuple[str, Any]]:
    pairs = []
    for part in _flow_items(text, "}"):
        m = _FLOW_KEY.match(part)
        if m is None:
            raise _Unsure
        pairs.append((_key(m.group(1)), _scalar(m.group(2), flow=True)))
    return pairs
