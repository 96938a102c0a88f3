"""YAML with line numbers for every mapping key and list item.

PyYAML's composer over the libyaml parser gives nodes with marks at C speed; we build plain
dicts and lists that also remember where each key and item stood, so config errors can point at
the line an author has to fix.
"""

from __future__ import annotations

import yaml

_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class YamlFileError(Exception):
    def __init__(self, path: str, line: int, reason: str):
        import os

        try:
            shown = os.path.relpath(path).replace(os.sep, "/") if path else path
        except ValueError:
            shown = path
        super().__init__(f"{shown}:{line}: {reason}")
        self.path = path
        self.line = line
        self.reason = reason


class LineDict(dict):
    """A mapping that knows its own line and the line of each key (1-based)."""

    __slots__ = ("line", "key_lines")

    def __init__(self, line: int = 1):
        super().__init__()
        self.line = line
        self.key_lines: dict = {}

    def line_of(self, key) -> int:
        return self.key_lines.get(key, self.line)


class LineList(list):
    """A list that knows its own line and the line of each item (1-based)."""

    __slots__ = ("line", "item_lines")

    def __init__(self, line: int = 1):
        super().__init__()
        self.line = line
        self.item_lines: list[int] = []

    def line_of(self, index: int) -> int:
        return self.item_lines[index] if 0 <= index < len(self.item_lines) else self.line


_STR_TAG = "tag:yaml.org,2002:str"


def _scalar(loader, node):
    if node.tag == _STR_TAG:  # most scalars: no constructor machinery needed
        return node.value
    try:
        return loader.construct_object(node, deep=True)
    except (ValueError, OverflowError, yaml.YAMLError):
        return node.value


def _convert(loader, node, depth: int = 0):
    if depth > 200:
        raise YamlFileError("", node.start_mark.line + 1, "nesting too deep")
    line = node.start_mark.line + 1
    if isinstance(node, yaml.MappingNode):
        out = LineDict(line)
        for key_node, value_node in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                merged = _convert(loader, value_node, depth + 1)
                for source in merged if isinstance(merged, list) else [merged]:
                    if isinstance(source, LineDict):
                        for k, v in source.items():
                            if k not in out:
                                out[k] = v
                                out.key_lines[k] = source.line_of(k)
                continue
            key = _convert(loader, key_node, depth + 1)
            if isinstance(key, (dict, list)):
                key = str(key)
            out[key] = _convert(loader, value_node, depth + 1)
            out.key_lines[key] = key_node.start_mark.line + 1
        return out
    if isinstance(node, yaml.SequenceNode):
        out = LineList(line)
        for item in node.value:
            out.append(_convert(loader, item, depth + 1))
            out.item_lines.append(item.start_mark.line + 1)
        return out
    return _scalar(loader, node)


def load_text(text: str, path: str):
    """Parse YAML text into LineDict/LineList/scalars; raises YamlFileError with a line."""
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        return _convert(loader, node)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else 1
        raise YamlFileError(path, line, f"invalid YAML: {exc.problem or exc.context}") from None
    except YamlFileError as exc:
        raise YamlFileError(path, exc.line, exc.reason) from None
    except yaml.YAMLError as exc:
        raise YamlFileError(path, 1, f"invalid YAML: {exc}") from None
    finally:
        loader.dispose()


def load_file(path: str):
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        raise YamlFileError(path, 1, f"cannot read: {exc.strerror}") from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise YamlFileError(path, line, f"invalid UTF-8 at byte offset {exc.start}") from None
    return load_text(text, path)


def json_ready(value):
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
