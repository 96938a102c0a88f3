"""Every YAML document kblint reads goes through here: entry frontmatter, kb.yaml and
cross-kb-links.yaml.

Frontmatter is read by the plain-YAML reader (`plain`) when it can, else by PyYAML's libyaml
loader. Before PyYAML builds anything, the document's events are checked against the limits
(`Limits`): nesting deeper than `max_depth` would overflow the C stack of libyaml's composer, and
aliases that expand to more than `max_alias_nodes` nodes ("billion laughs") would make every later
walk of the data take forever. Either is a `YamlError` with its line, as invalid YAML is.
"""

from __future__ import annotations

import bisect
import re
import sys
from dataclasses import dataclass, field
from typing import Any

import yaml

from . import plain

_SafeLoader: type[yaml.CSafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_UNSEEN_BREAKS = ("\x85", "\u2028", "\u2029")  # line breaks to libyaml, not to editors nor to kblint


class Positions:
    """Positions in a YAML text with lines broken where editors break them: at `\n`, `\r\n` and
    `\r`. libyaml also breaks them at U+0085, U+2028 and U+2029 (a quoted value may hold one),
    which would put everything after one a line too far; its marks' character offsets are right."""

    def __init__(self, text: str):
        # the offset each line starts at, only when libyaml's lines are not the editors'
        self.starts: list[int] | None = None
        if any(c in text for c in _UNSEEN_BREAKS):
            self.starts = [0, *(m.end() for m in _LINE_END.finditer(text))]

    def of(self, mark: yaml.Mark) -> tuple[int, int]:
        """MARK's 0-based line and column."""
        if self.starts is None:
            return mark.line, mark.column
        line = bisect.bisect_right(self.starts, mark.index) - 1
        return line, mark.index - self.starts[line]


_LINE_END = re.compile(r"\r\n|\r|\n")


class _Loader(_SafeLoader):
    """libyaml's safe loader, with the positions of its marks as editors count lines (`Positions`)."""

    def __init__(self, text: str):
        super().__init__(text)
        self.positions = Positions(text)

    def position(self, mark: yaml.Mark) -> tuple[int, int]:
        """MARK's 0-based line and column."""
        return self.positions.of(mark)

    def line(self, mark: yaml.Mark) -> int:
        """MARK's 0-based line."""
        return self.positions.of(mark)[0]


@dataclass(frozen=True, slots=True)
class Limits:
    """What kblint accepts of one input before calling it a parse error (README: "Limits")."""

    max_file_bytes: int = 5 * 1024 * 1024  # an entry file
    max_depth: int = 100  # nesting of YAML collections
    max_alias_nodes: int = 100_000  # nodes that aliases add when expanded
    max_path_depth: int = 100  # directories between a KB's root and an entry file
    regex_timeout: float = 1.0  # seconds one match of a kb.yaml pattern may take
    plugin_timeout: float = 10.0  # seconds one call of a plugin's checker may take


DEFAULT_LIMITS = Limits()


class YamlError(Exception):
    """YAML that cannot be read, with the 1-based line and column of the problem in its text."""

    def __init__(self, reason: str, line: int = 1, column: int = 1):
        super().__init__(reason)
        self.reason = reason
        self.line = line
        self.column = column


# What libyaml was reading when it failed, for the constructs that a character opens and closes.
_OPENED = {
    "while parsing a flow sequence": "for the '[' on an earlier line",
    "while parsing a flow mapping": "for the '{' on an earlier line",
    "while scanning a quoted scalar": "in the text quoted on an earlier line",
}


def mark_error(exc: yaml.YAMLError, text: str) -> YamlError:
    """PyYAML's error about TEXT as one line with its position. When libyaml fails on a later line
    than the `[`, `{` or quote it was reading from, the reason says so: the cause is most often
    that one left open, and libyaml notices only further on (at the end of the text, often)."""
    if isinstance(exc, yaml.MarkedYAMLError):
        mark = exc.problem_mark or exc.context_mark
        reason = exc.problem or exc.context or "invalid YAML"
        if mark is None:
            return YamlError(reason)
        positions = Positions(text)
        line, column = positions.of(mark)
        opened, start = _OPENED.get(exc.context or ""), exc.context_mark
        if opened and start is not None and positions.of(start)[0] < line:
            reason = f"{reason} {opened}"
        return YamlError(reason, line + 1, column + 1)
    if isinstance(exc, yaml.reader.ReaderError):  # a character YAML does not allow
        at = exc.position if isinstance(exc.position, int) and 0 <= exc.position <= len(text) else 0
        code = exc.character if isinstance(exc.character, int) else ord(exc.character)
        line = text.count("\n", 0, at) + 1
        return YamlError(f"unacceptable character #x{code:04x}: {exc.reason}", line, at - text.rfind("\n", 0, at))
    return YamlError(str(exc).splitlines()[0] if str(exc) else "invalid YAML")


MERGE_TAG = "tag:yaml.org,2002:merge"
_OPENS = (yaml.SequenceStartEvent, yaml.MappingStartEvent)
_CLOSES = (yaml.SequenceEndEvent, yaml.MappingEndEvent)


def nesting_bound(text: str) -> int:
    """A depth TEXT cannot nest beyond: each level takes a line, a `- ` or `? ` on a line, or a bracket."""
    return (
        text.count("\n")
        + text.count("[")
        + text.count("{")
        + text.count("- ")
        + text.count("-\t")
        + text.count("? ")
        + text.count("?\t")
        + 1
    )


def may_alias(text: str) -> bool:
    """Whether TEXT can hold an alias: an alias names an anchor, and there is none without an `&`."""
    return "&" in text


def within_limits(text: str, limits: Limits = DEFAULT_LIMITS) -> bool:
    """Whether TEXT is within the limits without reading it: it has no alias and cannot nest too deep."""
    return not may_alias(text) and nesting_bound(text) <= limits.max_depth


def check_limits(text: str, limits: Limits = DEFAULT_LIMITS) -> None:
    """Raise YamlError when TEXT nests deeper than the limit or its aliases expand too far (or
    when it is not valid YAML). Reads libyaml's events, which come without recursion."""
    if within_limits(text, limits):
        return
    loader = _Loader(text)
    sizes: list[int] = [0]  # expanded node count of each open collection, the document at the bottom
    anchors: list[str | None] = [None]
    closed: dict[str, int] = {}  # anchor → expanded size of what it names
    added = 0
    try:
        while not isinstance(event := loader.get_event(), yaml.StreamEndEvent):
            if isinstance(event, _OPENS):
                if len(sizes) > limits.max_depth:
                    raise YamlError(f"nesting deeper than {limits.max_depth} levels (the limit)", *_at(event, loader))
                sizes.append(1)
                anchors.append(event.anchor)
            elif isinstance(event, _CLOSES):
                size = sizes.pop()
                anchor = anchors.pop()
                if anchor is not None:
                    closed[anchor] = size
                sizes[-1] += size
            elif isinstance(event, yaml.ScalarEvent):
                sizes[-1] += 1
                if event.anchor is not None:
                    closed[event.anchor] = 1
            elif isinstance(event, yaml.AliasEvent):
                if event.anchor not in closed:
                    raise YamlError(_alias_problem(event.anchor, anchors), *_at(event, loader))
                added += closed[event.anchor]
                if added > limits.max_alias_nodes:
                    raise YamlError(
                        f"aliases expand to more than {limits.max_alias_nodes} nodes (the limit)", *_at(event, loader)
                    )
                sizes[-1] += closed[event.anchor]
    except yaml.YAMLError as exc:
        raise limit_error(exc, text, limits) from None
    finally:
        loader.dispose()


# libyaml stops at its own nesting limit (1,000 levels in a flow collection, 999 in a block) with this
# problem; its scanner, which reads ahead in a flow collection, may get there before the parser
# hands over the event that passes kblint's limit.
_LIBYAML_TOO_DEEP = "exceeded maximum nesting depth"
_LIBYAML_DEPTH = 999  # the deepest nesting libyaml reads in both


def limit_error(exc: yaml.YAMLError, text: str, limits: Limits) -> YamlError:
    """EXC as a YamlError at its line in TEXT; libyaml's own nesting limit is said in kblint's words
    (as the limit, or as what the reader reads when LIMITS allow deeper)."""
    error = mark_error(exc, text)
    if error.reason != _LIBYAML_TOO_DEEP:
        return error
    if limits.max_depth <= _LIBYAML_DEPTH:
        return YamlError(f"nesting deeper than {limits.max_depth} levels (the limit)", error.line, error.column)
    return YamlError(
        f"nesting deeper than {_LIBYAML_DEPTH} levels (the YAML reader's own limit)", error.line, error.column
    )


def _alias_problem(anchor: str, open_anchors: list[str | None]) -> str:
    """Why an alias to ANCHOR, which names nothing complete, cannot be read."""
    if anchor in open_anchors:
        return f"alias *{anchor} refers to a collection that contains it"
    return f"found undefined alias *{anchor}: no anchor &{anchor} comes before it"


def _at(event: yaml.Event, loader: _Loader) -> tuple[int, int]:
    if event.start_mark is None:
        return 1, 1
    line, column = loader.position(event.start_mark)
    return line + 1, column + 1


class _EntryLoader(_Loader):
    """The safe loader, keeping impossible timestamps (`2025-13-45`) as text and noting them."""

    def __init__(self, text: str):
        super().__init__(text)
        self.bad_dates: list[tuple[int, str]] = []  # (0-based line, text)


def _timestamp_or_text(loader: _EntryLoader, node: yaml.ScalarNode) -> Any:
    try:
        return yaml.constructor.SafeConstructor.construct_yaml_timestamp(loader, node)
    except (ValueError, OverflowError):
        loader.bad_dates.append((loader.line(node.start_mark), node.value))
        return node.value


_EntryLoader.add_constructor("tag:yaml.org,2002:timestamp", _timestamp_or_text)


@dataclass(slots=True)
class Frontmatter:
    """What a frontmatter's YAML holds, where its top-level keys are, the values that look like
    dates but are none, and the keys given more than once in one of its mappings. Lines are
    counted from the first line of the YAML (load_frontmatter)."""

    data: Any
    key_lines: dict[str, int]  # the line of each top-level key (of its last occurrence, whose value is read)
    bad_dates: list[tuple[int, str]]  # (line, the value as written)
    repeated_keys: list[RepeatedKey] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class RepeatedKey:
    """A mapping key given again: YAML keeps the value of its last occurrence."""

    key: str
    line: int  # where it is given again
    column: int
    first_line: int  # where it was given first
    top: bool = True  # a key of the top-level mapping

    @property
    def message(self) -> str:
        return f"key '{self.key}' is given twice (first on line {self.first_line}): only the last value is read"


def _top_key_lines(node: yaml.Node | None, loader: _Loader, first_line: int) -> dict[str, int]:
    """The line of each top-level key: of its last occurrence, whose value is the one read."""
    lines: dict[str, int] = {}
    if isinstance(node, yaml.MappingNode):
        for key_node, _ in node.value:
            if isinstance(key_node, yaml.ScalarNode) and key_node.tag != MERGE_TAG:
                lines[key_node.value] = loader.line(key_node.start_mark) + first_line
    return lines


def repeated_keys(node: yaml.Node | None, loader: _Loader, first_line: int = 1) -> list[RepeatedKey]:
    """The keys given again in a mapping of NODE's tree, at any depth (a node that aliases show
    again is looked at once), compared as LOADER makes them (`yes` and `true` are one key, `1`
    and `"1"` two). Lines are counted from FIRST_LINE."""
    repeated: list[RepeatedKey] = []
    visited: set[int] = set()
    todo = [node] if node is not None else []
    while todo:
        current = todo.pop()
        if id(current) in visited or isinstance(current, yaml.ScalarNode):
            continue
        visited.add(id(current))
        if isinstance(current, yaml.SequenceNode):
            todo.extend(current.value)
            continue
        seen: dict[object, int] = {}
        for key_node, value_node in current.value:
            todo.append(value_node)
            if not isinstance(key_node, yaml.ScalarNode) or key_node.tag == MERGE_TAG:
                continue
            line, column = loader.position(key_node.start_mark)
            line += first_line
            known = _key_of(key_node, loader)
            if known in seen:
                repeated.append(RepeatedKey(key_node.value, line, column + 1, seen[known], top=current is node))
            else:
                seen[known] = line
    return sorted(repeated, key=lambda r: (r.line, r.column))


_NUMBER_TAGS = tuple(f"tag:yaml.org,2002:{name}" for name in ("bool", "int", "float", "null"))


def _key_of(node: yaml.ScalarNode, loader: yaml.BaseLoader) -> object:
    """A mapping key as LOADER's constructor makes it, for the kinds whose many spellings are one
    value (`yes` and `true`, `1` and `0x1`, `~` and `null`); text as it is; any other kind by its
    tag and text. The constructor is called as it is, outside the loader's bookkeeping of what it
    has built, which a failure would leave in disorder."""
    if node.tag in _NUMBER_TAGS:
        try:
            return loader.yaml_constructors[node.tag](loader, node)
        except (ValueError, OverflowError, yaml.YAMLError):
            pass  # a number past Python's digits: the loader says so when it builds the document
    return node.value if node.tag == STR_TAG else (node.tag, node.value)


def load_frontmatter(text: str, limits: Limits = DEFAULT_LIMITS, first_line: int = 1) -> Frontmatter:
    """The data of a frontmatter's YAML TEXT, whose first line is FIRST_LINE of its file; raises
    YamlError (with the line in TEXT)."""
    key_lines: dict[str, int] = {}
    data = plain.load(text, key_lines, first_line)
    if data is not None:
        return Frontmatter(data, key_lines, [])
    check_limits(text, limits)
    loader = _EntryLoader(text)
    try:
        node = loader.get_single_node()
        key_lines = _top_key_lines(node, loader, first_line)
        repeated = repeated_keys(node, loader, first_line)
        data = loader.construct_document(node) if node is not None else None
    except yaml.YAMLError as exc:
        raise limit_error(exc, text, limits) from None
    except RecursionError:
        raise YamlError("nesting too deep") from None
    except ValueError as exc:
        if "integer string conversion" in str(exc):  # Python's bound on the digits of a number
            raise YamlError(f"a number of more than {sys.get_int_max_str_digits()} digits") from None
        raise YamlError(f"{type(exc).__name__}: {exc}") from None
    except Exception as exc:  # noqa: BLE001 - whatever a constructor raises is a parse error, never a crash
        raise YamlError(f"{type(exc).__name__}: {exc}") from None
    finally:
        loader.dispose()
    return Frontmatter(data, key_lines, [(line + first_line, value) for line, value in loader.bad_dates], repeated)


# For editing YAML in place (`kblint migrate`): nodes with exact character offsets, and a plain load.
MappingNode = yaml.MappingNode
ScalarNode = yaml.ScalarNode
SequenceNode = yaml.SequenceNode
Node = yaml.Node
STR_TAG = "tag:yaml.org,2002:str"


def compose_with_offsets(text: str, limits: Limits = DEFAULT_LIMITS) -> yaml.Node | None:
    """TEXT's node tree, whose marks give character offsets into TEXT (libyaml counts characters
    of a text, not bytes); raises YamlError."""
    check_limits(text, limits)
    loader = _Loader(text)  # the reader validate uses: PyYAML's Python reader refuses some of what it reads
    try:
        return loader.get_single_node()
    except yaml.YAMLError as exc:
        raise mark_error(exc, text) from None
    finally:
        loader.dispose()


def safe_load(text: str) -> Any:
    """TEXT's data as the safe loader reads it; raises YamlError."""
    check_limits(text)
    try:
        return yaml.load(text, Loader=_Loader)  # the C safe loader
    except yaml.YAMLError as exc:
        raise mark_error(exc, text) from None
