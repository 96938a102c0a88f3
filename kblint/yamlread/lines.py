"""YAML files with the line of every mapping key and list item (kb.yaml, cross-kb-links.yaml).

PyYAML's composer over libyaml gives nodes with marks at C speed; they become plain dicts and lists
that also remember where each key and item stood, so config errors point at the line to fix.
"""

from __future__ import annotations

from typing import Any

import yaml

from ..paths import display_path
from . import (
    DEFAULT_LIMITS,
    Limits,
    RepeatedKey,
    YamlError,
    _Loader,
    check_limits,
    limit_error,
    may_alias,
    nesting_bound,
    repeated_keys,
)

# libyaml's composer recurses in C for every level of nesting: far below this depth, the C stack
# holds; above it the text is read event by event first (check_limits).
_COMPOSER_SAFE_DEPTH = 5_000


class YamlFileError(Exception):
    """A YAML file kblint cannot use: its path, the line, and why."""

    def __init__(self, path: str, line: int, reason: str):
        super().__init__(f"{display_path(path) if path else path}:{line}: {reason}")
        self.path = path
        self.line = line
        self.reason = reason


def yaml_kind(value: Any) -> str:
    """What VALUE is, in YAML's words, for a message: "a list", "a mapping", "a string", ..."""
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, bool):
        return "true or false"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "null" if value is None else f"a {type(value).__name__}"  # a date or a timestamp


class LineDict(dict[Any, Any]):
    """A mapping that knows its own line and the line of each key (1-based)."""

    __slots__ = ("key_lines", "line")

    def __init__(self, line: int = 1):
        super().__init__()
        self.line = line
        self.key_lines: dict[Any, int] = {}

    def line_of(self, key: Any) -> int:
        return self.key_lines.get(key, self.line)


class LineList(list[Any]):
    """A list that knows its own line and the line of each item (1-based)."""

    __slots__ = ("item_lines", "line")

    def __init__(self, line: int = 1):
        super().__init__()
        self.line = line
        self.item_lines: list[int] = []

    def line_of(self, index: int) -> int:
        return self.item_lines[index] if 0 <= index < len(self.item_lines) else self.line


def line_of(container: object, key: Any, default: int) -> int:
    """The line of KEY in a LineDict or LineList; DEFAULT for any other container."""
    if isinstance(container, (LineDict, LineList)):
        return container.line_of(key)
    return default


_STR_TAG = "tag:yaml.org,2002:str"
_MERGE_TAG = "tag:yaml.org,2002:merge"


class _Converter:
    """Nodes → LineDict, LineList and scalars, with one loader to construct the scalars. A node
    that aliases make appear again is converted once; nesting beyond the limit is an error."""

    def __init__(self, loader: _Loader, limits: Limits):
        self.loader = loader
        self.limits = limits
        self.converted: dict[int, Any] = {}  # id of a collection node → its value
        self.depth = 0

    def value(self, node: yaml.Node) -> Any:
        if not isinstance(node, (yaml.MappingNode, yaml.SequenceNode)):
            return self.scalar(node)
        found = self.converted.get(id(node))
        if found is not None:
            return found
        self.depth += 1
        if self.depth > self.limits.max_depth:
            raise YamlError(
                f"nesting deeper than {self.limits.max_depth} levels (the limit)", self.loader.line(node.start_mark) + 1
            )
        found = self.converted[id(node)] = (
            self.mapping(node) if isinstance(node, yaml.MappingNode) else self.sequence(node)
        )
        self.depth -= 1
        return found

    def sequence(self, node: yaml.SequenceNode) -> LineList:
        out = LineList(self.loader.line(node.start_mark) + 1)
        for item in node.value:
            out.append(self.value(item))
            out.item_lines.append(self.loader.line(item.start_mark) + 1)
        return out

    def scalar(self, node: yaml.Node) -> Any:
        if node.tag == _STR_TAG:
            return node.value
        try:
            return self.loader.construct_object(node, deep=True)
        except (ValueError, OverflowError, yaml.YAMLError):
            return node.value

    def mapping(self, node: yaml.MappingNode) -> LineDict:
        out = LineDict(self.loader.line(node.start_mark) + 1)
        for key_node, value_node in node.value:
            if key_node.tag == _MERGE_TAG:
                self.merge(out, self.value(value_node))
                continue
            key = self.value(key_node)
            if isinstance(key, (dict, list)):
                key = str(key)
            out[key] = self.value(value_node)
            out.key_lines[key] = self.loader.line(key_node.start_mark) + 1
        return out

    @staticmethod
    def merge(out: LineDict, merged: Any) -> None:
        for source in merged if isinstance(merged, list) else [merged]:
            if isinstance(source, LineDict):
                for k, v in source.items():
                    if k not in out:
                        out[k] = v
                        out.key_lines[k] = source.line_of(k)


def load_text(text: str, path: str, limits: Limits = DEFAULT_LIMITS, repeated: list[RepeatedKey] | None = None) -> Any:
    """Parse YAML text into LineDict/LineList/scalars; raises YamlFileError with a line. REPEATED,
    when given, gets the keys given twice in a mapping (YAML keeps the last value)."""
    loader = _Loader(text)
    try:
        if (
            may_alias(text) or nesting_bound(text) > _COMPOSER_SAFE_DEPTH
        ):  # aliases to count, or deep enough to read first
            check_limits(text, limits)
        node = loader.get_single_node()
        if repeated is not None:
            repeated.extend(repeated_keys(node, loader))
        return None if node is None else _Converter(loader, limits).value(node)
    except YamlError as exc:
        raise YamlFileError(path, exc.line, f"invalid YAML: {exc.reason}") from None
    except yaml.YAMLError as exc:
        error = limit_error(exc, text, limits)
        raise YamlFileError(path, error.line, f"invalid YAML: {error.reason}") from None
    finally:
        loader.dispose()


def decode_yaml_bytes(data: bytes, path: str) -> str:
    """A YAML file's text (a UTF-8 BOM dropped); raises YamlFileError for invalid UTF-8."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise YamlFileError(path, line, f"invalid UTF-8 at byte offset {exc.start}") from None


def json_ready(value: Any) -> Any:
    """A YAML value as plain JSON data: mappings with text keys, lists, dates as ISO text."""
    import datetime as _dt

    if isinstance(value, dict):
        return {str(k): json_ready(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_ready(v) for v in value]
    if isinstance(value, (_dt.date, _dt.datetime)):
        return value.isoformat()
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return str(value)
