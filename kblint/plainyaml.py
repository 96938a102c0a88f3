"""A reader for the plain YAML that frontmatter is nearly always written in.

Block mappings and sequences indented with spaces, one-line flow lists and mappings, plain, single-
and double-quoted scalars without escapes or line breaks: about three times faster than PyYAML's
libyaml loader, which has to build an event and a node object for every scalar. `load` gives exactly
what PyYAML's safe loader gives, or None when the text uses anything else (comments, anchors, tags,
block scalars, multi-line scalars, escapes, tabs, an impossible date...), and the caller then hands
it to PyYAML. A property test holds the two to the same result.
"""

from __future__ import annotations

import re

import yaml

_CONSTRUCTOR = yaml.constructor.SafeConstructor()
_IMPLICIT = yaml.resolver.Resolver.yaml_implicit_resolvers
_CONSTRUCT = {tag: yaml.constructor.SafeConstructor.yaml_constructors[tag] for tag in (
    "tag:yaml.org,2002:bool", "tag:yaml.org,2002:int", "tag:yaml.org,2002:float", "tag:yaml.org,2002:timestamp")}
_NULL = "tag:yaml.org,2002:null"

# Characters that make the text anything but plain: comments, anchors, aliases, tags, directives,
# block scalar indicators, escapes, tabs, and the characters YAML reads as line breaks or refuses,
# that is, the regex class
#   [#&*!%|>@`\\\t\r\x85\u2028\u2029\ufeff]|[^\n\x20-\x7e\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]
# tested in two parts ten times faster than that regex: the ASCII ones by deleting them from the
# encoded text (a UTF-8 encoding has no ASCII bytes but ASCII characters), and the few others by a
# regex that looks only at text that is not ASCII. A test holds the two to the class on every
# character.
_NOT_PLAIN_ASCII = bytes(range(0x00, 0x0A)) + bytes(range(0x0B, 0x20)) + b"\x7f#&*!%|>@`\\"
_NOT_PLAIN_WIDE = re.compile("[\x80-\x9f\u2028\u2029\ufeff\ud800-\udfff\ufffe\uffff]")


def plain_characters(text: str) -> bool:
    """Whether TEXT has none of the characters that make it anything but plain."""
    if text.isascii():
        raw = text.encode("ascii")
    elif _NOT_PLAIN_WIDE.search(text):
        return False
    else:
        raw = text.encode("utf-8")
    return len(raw.translate(None, _NOT_PLAIN_ASCII)) == len(raw)


_FLOW_INDICATOR = re.compile(r"[,?\[\]{}]")
_KEY = re.compile(r"([A-Za-z_][A-Za-z0-9_-]*)[ ]*:(?: +|$)")
_FLOW_KEY = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_-]*)\s*: +(.*)$", re.S)


class _Unsure(Exception):
    """The text is not plain in the sense of this module."""


def load(text: str):
    """The data PyYAML's safe loader reads from TEXT, or None when TEXT is not plain."""
    if not plain_characters(text):
        return None
    lines = [(len(line) - len(body), body.rstrip(" ")) for line in text.split("\n") if (body := line.lstrip(" "))]
    if not lines:
        return None  # an empty document: PyYAML gives None
    try:
        value, end = _block(lines, 0, lines[0][0])
        if end != len(lines):
            raise _Unsure
        return value
    except (_Unsure, ValueError, OverflowError, RecursionError):
        return None


def _block(lines: list[tuple[int, str]], i: int, indent: int):
    """The block collection starting at line I, whose lines are indented by INDENT."""
    body = lines[i][1]
    if body == "-" or body.startswith("- "):
        return _sequence(lines, i, indent)
    return _mapping(lines, i, indent, body)


def _sequence(lines, i, indent):
    items = []
    n = len(lines)
    while i < n and lines[i][0] == indent and (lines[i][1] == "-" or lines[i][1].startswith("- ")):
        body = lines[i][1]
        rest = body[1:].lstrip(" ")
        if not rest:
            value, i = _nested(lines, i + 1, indent, allow_same=False)
        elif ":" in rest and _KEY.match(rest):
            # `- key: value`: a mapping whose keys stand where `key` stands
            value, i = _mapping(lines, i, indent + len(body) - len(rest), rest)
        else:
            value = _scalar_or_flow(rest)
            i += 1
        items.append(value)
    if i < n and lines[i][0] > indent:
        raise _Unsure
    return items, i


_LINES: dict[str, tuple] = {}  # `key: value` lines read before: (key, value, value is a list)
_LINES_MAX = 20_000


def _mapping(lines, i, indent, first_body):
    data = {}
    body = first_body
    n = len(lines)
    while True:
        known = _LINES.get(body)
        if known is not None:  # `type: place`, `status: draft`, `tags: [a, b]` repeat from entry to entry
            key, value, is_list = known
            data[key] = list(value) if is_list else value
            i += 1
            if i < n and lines[i][0] > indent:
                raise _Unsure
        else:
            m = _KEY.match(body)
            if m is None:
                raise _Unsure
            key = _key(m.group(1))
            rest = body[m.end():]
            if rest:
                value = data[key] = _scalar_or_flow(rest)
                i += 1
                if i < n and lines[i][0] > indent:
                    raise _Unsure  # a scalar continued on the next line
                if value.__class__ is not dict and len(_LINES) < _LINES_MAX:
                    # a scalar (immutable) or a flow list of scalars, kept as a tuple and copied out
                    is_list = value.__class__ is list
                    _LINES[body] = (key, tuple(value) if is_list else value, is_list)
            else:
                data[key], i = _nested(lines, i + 1, indent, allow_same=True)
        if i >= n or lines[i][0] != indent:
            break
        body = lines[i][1]
    if i < n and lines[i][0] > indent:
        raise _Unsure
    return data, i


def _nested(lines, i, indent, allow_same):
    """The value of an empty `key:` or `-` ending the line before I: a block indented more, a
    sequence at the key's own indentation (ALLOW_SAME), or null."""
    if i < len(lines):
        next_indent, body = lines[i]
        if next_indent > indent:
            return _block(lines, i, next_indent)
        if allow_same and next_indent == indent and (body == "-" or body.startswith("- ")):
            return _sequence(lines, i, indent)
    return None, i


def _scalar_or_flow(text: str):
    first = text[0]
    if first == "[":
        return _flow_sequence(text)
    if first == "{":
        return _flow_mapping(text)
    return _scalar(text, flow=False)


def _scalar(text: str, flow: bool):
    first = text[0]
    if first == '"' or first == "'":
        if len(text) < 2 or text[-1] != first or first in text[1:-1]:
            raise _Unsure
        return text[1:-1]
    if first in "-?:,[]{}'\"" and not (first == "-" and len(text) > 1 and (text[1].isdigit() or text[1] == ".")):
        raise _Unsure
    if ": " in text or text.endswith(":") or (flow and _FLOW_INDICATOR.search(text)):
        raise _Unsure
    return _plain(text)


_STRING_KEYS: set[str] = set()  # keys known to be read as strings: frontmatter keys repeat


def _key(key: str) -> str:
    """KEY, known to be read as a string."""
    if key not in _STRING_KEYS:
        if not isinstance(_plain(key), str):
            raise _Unsure  # `true:`, `null:`, `on:` are keys of other types
        if len(_STRING_KEYS) < 10000:
            _STRING_KEYS.add(key)
    return key


_RESOLVED: dict[str, object] = {}  # plain scalars read before: values (statuses, tags, dates) repeat
_RESOLVED_MAX = 50_000


def _plain(text: str):
    """A plain scalar as PyYAML resolves and constructs it."""
    found = _RESOLVED.get(text, _RESOLVED)
    if found is not _RESOLVED:
        return found
    value = text
    for tag, regexp in _IMPLICIT.get(text[:1], ()):
        if regexp.match(text):
            if tag == _NULL:
                value = None
                break
            construct = _CONSTRUCT.get(tag)
            if construct is None:
                raise _Unsure  # `<<` and `=` are merge and value keys
            value = construct(_CONSTRUCTOR, yaml.ScalarNode(tag, text))  # an impossible date raises ValueError
            break
    if len(_RESOLVED) < _RESOLVED_MAX:
        _RESOLVED[text] = value  # every value it can be is immutable: sharing it is safe
    return value


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


def _flow_sequence(text: str) -> list:
    return [_scalar(part, flow=True) for part in _flow_items(text, "]")]


def _flow_mapping(text: str) -> dict:
    data = {}
    for part in _flow_items(text, "}"):
        m = _FLOW_KEY.match(part)
        if m is None:
            raise _Unsure
        data[_key(m.group(1))] = _scalar(m.group(2), flow=True)
    return data
