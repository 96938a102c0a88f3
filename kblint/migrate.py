"""`kblint migrate`: propose bindings for plain-string rubric items (SPEC §10).

A string item that is not policy-shaped is a judgment item: without an LLM it is never
evaluated. Many of them restate something kblint can check deterministically ("Writing has a
date" when `date` is required, "Entry has at least one tag", "has a Sources section"). `propose`
reads `kb.yaml`, matches each such string against a small, conservative grammar using the KB's
own schema (kblint.rubric_match), and returns the proposals with the whole file before and after. `write` applies them.

Only the source span of each bound item changes (the scalar becomes a one-line flow mapping at
the same place, the author's quoting kept when it is valid there, any trailing comment kept);
every other byte of the file stays as it was. Before anything is returned or written the new
text is parsed again and planned: each new item must bind as proposed, no other item may change,
and no item may become broken.

Anything the grammar does not match exactly stays judgment: subjective wording ("describes the
specific relationship", "explains significance"), conditions ("where relevant"), fields the
type does not declare, mixed and/or lists, mapping items, policy-shaped strings.
"""

from __future__ import annotations

import difflib
import json
import os
import re
from dataclasses import dataclass
from typing import Any

from . import yamlread
from .checkers.registry import registry
from .infra.files import OUTSIDE, FileProblem, leads_outside, read_regular_file, replace_file
from .model.kbschema import KBSchema, RubricItem, schema_from_text
from .model.markdown import editor_lines
from .model.plan import Binding, bind, build_plan
from .paths import diff_name, display_path
from .rubric_match import match_item
from .workspace import find_kb_roots
from .yamlread import MappingNode, Node, ScalarNode, SequenceNode, YamlError
from .yamlread.lines import YamlFileError

__all__ = ["MigrationError", "MigrationResult", "Proposal", "propose", "summary", "unified_diff", "write"]


class MigrationError(Exception):
    """kb.yaml cannot be migrated: missing, not valid YAML, or the result would not verify.

    `str(exc)` is one line, `path:line: reason` when a line is known."""

    def __init__(self, message: str, path: str | None = None, line: int | None = None):
        super().__init__(message)
        self.path = path
        self.line = line


@dataclass(slots=True)
class Proposal:
    scope: str  # "kb" | "type"
    type_name: str | None
    line: int  # kb.yaml line of the item (1-based)
    text: str
    replacement: dict  # the mapping item that replaces the string, e.g. {"text": ..., "checker": ...}
    reason: str

    @property
    def binding(self) -> str:
        """The binding kind the replacement gets: "checker", "schema" or "policy"."""
        if "checker" in self.replacement:
            return "checker"
        if "policy" in self.replacement:
            return "policy"
        return "schema"


@dataclass(slots=True)
class MigrationResult:
    path: str  # the kb.yaml file
    proposals: list[Proposal]
    left: list[str]  # texts of the string items left as judgment
    original: str  # whole kb.yaml text before
    migrated: str  # whole kb.yaml text after the proposals

    @property
    def changed(self) -> bool:
        return self.migrated != self.original


# ---------------------------------------------------------------------------------------------
# Locating items in the file.


@dataclass(slots=True)
class _Span:
    start: int  # character offsets in the text (after any BOM)
    end: int
    source: str  # the scalar as written


def _compose(text: str, path: str) -> Node | None:
    try:
        return yamlread.compose_with_offsets(text)
    except YamlError as exc:
        raise MigrationError(f"{path}:{exc.line}: invalid YAML: {exc.reason}", path, exc.line) from None


def _children(node: Node) -> list[Node]:
    if isinstance(node, MappingNode):
        return [n for pair in node.value for n in pair]
    return list(node.value) if isinstance(node, SequenceNode) else []


def _shared_nodes(root: Node) -> set[int]:
    """The ids of the nodes reached more than once (an alias reaches its anchor's node again), and
    of every node below one: editing any of them would change the other places too."""
    seen: set[int] = set()
    again: list[Node] = []
    stack = [root]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            again.append(node)
            continue
        seen.add(id(node))
        stack.extend(_children(node))
    shared: set[int] = set()
    while again:
        node = again.pop()
        if id(node) not in shared:
            shared.add(id(node))
            again.extend(_children(node))
    return shared


def _get(mapping: Node | None, key: str) -> Node | None:
    """The value node of KEY written directly in MAPPING (the last one if repeated)."""
    if not isinstance(mapping, MappingNode):
        return None
    found = None
    for k, v in mapping.value:
        if isinstance(k, ScalarNode) and k.value == key and k.tag != yamlread.MERGE_TAG:
            found = v
    return found


def _rubric_nodes(root: Node, scope: str, type_name: str | None) -> Node | None:
    if scope == "kb":
        return _get(root, "evaluation_rubric")
    if type_name is None:
        return None  # a type's items name their type
    return _get(_get(_get(root, "types"), type_name), "evaluation_rubric")


def _span(
    node: Node, text: str, positions: yamlread.Positions, shared: set[int], seq: Node | None, item: RubricItem
) -> _Span | None:
    if not isinstance(node, ScalarNode) or node.tag != yamlread.STR_TAG:
        return None
    if id(node) in shared or id(seq) in shared:
        return None  # shared through an anchor: editing it would change other places
    if node.value != item.raw or positions.of(node.start_mark)[0] + 1 != item.line:
        return None
    start, end = node.start_mark.index, node.end_mark.index
    source = text[start:end]
    if source[:1] in ("&", "!", "*"):
        return None
    stripped = source.rstrip()
    return _Span(start, start + len(stripped), stripped)


# ---------------------------------------------------------------------------------------------
# Writing the new items.

_PLAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*(?: [A-Za-z0-9_.-]+)*")
_SPECIAL_CHARS = {"\u2028": "\\L", "\u2029": "\\P", "\x85": "\\N", "\ufeff": "\\ufeff"}


def _double_quoted(text: str) -> str:
    out = json.dumps(text, ensure_ascii=False)
    for ch, esc in _SPECIAL_CHARS.items():
        out = out.replace(ch, esc)
    return out


def _flow(value: object) -> str:
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_flow(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_flow(v) for v in value) + "]"
    if isinstance(value, bool) or value is None:
        raise TypeError(f"unexpected value {value!r}")
    if isinstance(value, int):
        return str(value)
    text = str(value)
    if _PLAIN.fullmatch(text):
        try:
            if yamlread.safe_load(f"[{text}]") == [text]:
                return text
        except YamlError:
            pass
    return _double_quoted(text)


def _text_scalar(span: _Span, text: str) -> str:
    """The item's text for a flow mapping: as the author wrote it when that stays valid there."""
    if "\n" not in span.source and "\r" not in span.source and span.source[:1] not in ("|", ">"):
        try:
            if yamlread.safe_load("{text: " + span.source + "}") == {"text": text}:
                return span.source
        except YamlError:
            pass
    return _double_quoted(text)


def _render(replacement: dict, span: _Span) -> str:
    parts = [f"text: {_text_scalar(span, replacement['text'])}"]
    parts += [f"{k}: {_flow(v)}" for k, v in replacement.items() if k != "text"]
    return "{" + ", ".join(parts) + "}"


# ---------------------------------------------------------------------------------------------
# Propose, verify, diff, write.


def _kb_yaml_path(kb_dir: str) -> str:
    if os.path.basename(kb_dir) == "kb.yaml" and not os.path.isdir(kb_dir):
        return kb_dir
    return os.path.join(kb_dir, "kb.yaml")


def _kbs_in(directory: str, most: int = 10) -> list[str]:
    """The KB directories right inside DIRECTORY (at most MOST of them, in the order of their names)."""
    found = find_kb_roots(directory, yamlread.Limits(max_path_depth=1))
    return [root for root in found if root != os.path.abspath(directory)][:most]


def _read(path: str) -> tuple[str, int]:
    """The file's text exactly (line endings kept) and the length of a BOM prefix (0 or 1)."""
    if not os.path.lexists(path):
        below = _kbs_in(os.path.dirname(path) or ".")
        hint = f"; the KBs in it: {', '.join(display_path(r) for r in below)}: migrate one of them" if below else ""
        raise MigrationError(f"{path}: not found (a KB directory holds a kb.yaml){hint}", path)
    if leads_outside(os.path.dirname(os.path.abspath(path)), path):  # as every kb.yaml is read
        raise MigrationError(f"{path}: {OUTSIDE}", path)
    try:
        data = read_regular_file(path, yamlread.DEFAULT_LIMITS.max_file_bytes)  # as every kb.yaml is read
    except FileProblem as exc:
        raise MigrationError(f"{path}: cannot read: {exc.reason}", path) from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise MigrationError(f"{path}:{line}: invalid UTF-8 at byte offset {exc.start}", path, line) from None
    return text, 1 if text.startswith("\ufeff") else 0


def _load_schema_text(text: str, path: str) -> KBSchema:
    """The KB schema kb.yaml TEXT at PATH describes."""
    try:
        plugins = registry().plugins
        return schema_from_text(text, path, plugins.types if plugins else ())
    except YamlFileError as exc:
        raise MigrationError(f"{path}:{exc.line}: {exc.reason}", path, exc.line) from None


def _items(schema: KBSchema) -> list[RubricItem]:
    items = [i for i in schema.rubric]
    for name, ts in schema.types.items():
        items.extend(i for i in ts.rubric if i.source == "kb.yaml" and i.scope == "type" and i.type_name == name)
    return [i for i in items if i.source == "kb.yaml"]


def _plan_index(schema: KBSchema) -> tuple[dict, set]:
    """(scope, type, line, text) → the binding in the plan; and the keys of broken items."""
    plan = build_plan(schema)
    index = {}
    broken = set()
    for scope in plan.scopes:
        for b in scope.items:
            key = (b.scope, b.type_name, b.line, b.text)
            index[key] = b
            if b.kind == "broken":
                broken.add((b.scope, b.type_name, b.text, b.reason))
    return index, broken


def _key(item: RubricItem | Proposal) -> tuple:
    return (item.scope, item.type_name, item.line, item.text)


def _verify(path: str, original: str, migrated: str, proposals: list[Proposal]) -> None:
    """Raise MigrationError unless MIGRATED parses, binds every proposal as proposed, changes no
    other value, and breaks no item."""
    if not proposals:
        if migrated != original:
            raise MigrationError(f"{path}: internal error: text changed without proposals", path)
        return
    old = _load_schema_text(original, path)
    try:
        new = _load_schema_text(migrated, path)
    except MigrationError as exc:
        raise MigrationError(f"{path}: the migrated kb.yaml would not parse ({exc}); nothing written", path) from None
    # every value but the replaced items is unchanged
    expected = _plain(old.raw)
    for p in proposals:
        if p.scope == "kb":
            seq, target = old.raw.get("evaluation_rubric"), expected.get("evaluation_rubric")
        else:
            key = next((k for k in old.raw.get("types", {}) if str(k) == p.type_name), None)
            seq = old.raw["types"][key].get("evaluation_rubric") if key is not None else None
            target = expected["types"][key].get("evaluation_rubric") if key is not None else None
        index = [i for i, raw in enumerate(seq) if raw == p.text and seq.line_of(i) == p.line] if seq else []
        if len(index) != 1:
            raise MigrationError(f"{path}:{p.line}: internal error: cannot find item {p.text!r}", path, p.line)
        target[index[0]] = p.replacement
    if _plain(new.raw) != expected:
        raise MigrationError(
            f"{path}: the migrated kb.yaml would change more than the bound items; nothing written", path
        )
    # each new item binds as proposed
    new_items = {(i.scope, i.type_name, i.text): i for i in _items(new) if isinstance(i.raw, dict)}
    reg = registry()
    for p in proposals:
        item = new_items.get((p.scope, p.type_name, p.text))
        b = bind(item, new, reg) if item is not None else None
        if b is None or b.kind != p.binding:
            why = f"binds as {b.kind}" + (f": {b.reason}" if b and b.reason else "") if b else "is missing"
            raise MigrationError(f"{path}:{p.line}: the migrated item {p.text!r} {why}; nothing written", path, p.line)
    # the plan breaks nothing that was not broken
    _, old_broken = _plan_index(old)
    new_index, new_broken = _plan_index(new)
    added = new_broken - old_broken
    if added:
        scope, type_name, text, reason = sorted(added, key=str)[0]
        raise MigrationError(f"{path}: the migrated item {text!r} would be broken: {reason}; nothing written", path)
    for p in proposals:
        hits = [
            b
            for (scope, type_name, _line, text), b in new_index.items()
            if (scope, type_name, text) == (p.scope, p.type_name, p.text) and b.mapping
        ]
        if hits and any(b.kind != p.binding for b in hits):
            raise MigrationError(
                f"{path}:{p.line}: the plan does not bind {p.text!r} as {p.binding}; nothing written", path, p.line
            )


def _plain(value: object) -> Any:
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def propose(kb_dir: str) -> MigrationResult:
    """Proposals for the string items of KB_DIR/kb.yaml (KB_DIR may also be the kb.yaml path).

    Raises MigrationError ("path:line: reason") when there is no kb.yaml, it is not valid YAML,
    or the migrated text would not verify."""
    path = _kb_yaml_path(kb_dir)
    original, bom = _read(path)
    body = original[bom:]
    schema = _load_schema_text(original, path)
    root = _compose(body, path)
    shared = _shared_nodes(root) if root is not None else set()
    positions = yamlread.Positions(body)
    plan, _ = _plan_index(schema)

    proposals: list[Proposal] = []
    left: list[str] = []
    edits: list[tuple[_Span, str]] = []
    groups: dict[tuple[str, str | None], list[RubricItem]] = {}
    for item in _items(schema):
        groups.setdefault((item.scope, item.type_name), []).append(item)
    for (scope, type_name), items in groups.items():
        seq = _rubric_nodes(root, scope, type_name) if root is not None else None
        nodes = seq.value if isinstance(seq, SequenceNode) and len(seq.value) == len(items) else None
        for i, item in enumerate(items):
            if not item.is_string:
                continue
            b: Binding | None = plan.get(_key(item))
            if b is None or b.kind != "judgment":
                continue  # a policy, broken, or overridden by a mapping of the same text
            found = match_item(item, schema)
            span = _span(nodes[i], body, positions, shared, seq, item) if found and nodes is not None else None
            if found is None or span is None:
                left.append(item.text)
                continue
            replacement, reason = found
            proposals.append(
                Proposal(
                    scope=scope,
                    type_name=type_name,
                    line=item.line,
                    text=item.text,
                    replacement=replacement,
                    reason=reason,
                )
            )
            edits.append((span, _render(replacement, span)))
    proposals.sort(key=lambda p: p.line)
    migrated = body
    for span, new in sorted(edits, key=lambda e: e[0].start, reverse=True):
        migrated = migrated[: span.start] + new + migrated[span.end :]
    migrated = original[:bom] + migrated
    _verify(path, original, migrated, proposals)
    return MigrationResult(path=path, proposals=proposals, left=left, original=original, migrated=migrated)


def diffable(result: MigrationResult) -> bool:
    """Whether a unified diff can show the change: not when a line of kb.yaml ends in a lone CR,
    which patch reads as no line end (--write still makes the change)."""
    return result.original.count("\r") == result.original.count("\r\n")


def unified_diff(result: MigrationResult) -> str:
    """The change as a unified diff of kb.yaml ("" when nothing changes)."""
    if not result.changed:
        return ""
    a, b = editor_lines(result.original), editor_lines(result.migrated)
    out = []
    name = result.path if os.path.isabs(result.path) else os.path.normpath(result.path)
    before, after = (name, name) if os.path.isabs(name) else (f"a/{name}", f"b/{name}")
    for line in difflib.unified_diff(a, b, fromfile=diff_name(before), tofile=diff_name(after)):
        out.append(line)
        if not line.endswith(("\n", "\r")):
            out.append("\n\\ No newline at end of file\n")
    return "".join(out)


def summary(result: MigrationResult) -> str:
    """One line: "bound N, left M as judgment"."""
    return f"bound {len(result.proposals)}, left {len(result.left)} as judgment"


def write(result: MigrationResult) -> bool:
    """Write the migrated kb.yaml if it differs; return whether it wrote.

    Re-verifies first, and refuses (MigrationError) when the file changed since `propose`."""
    if not result.changed:
        return False
    current, _ = _read(result.path)
    if current != result.original:
        raise MigrationError(
            f"{result.path}: kb.yaml changed since the migration was proposed; run it again", result.path
        )
    _verify(result.path, result.original, result.migrated, result.proposals)
    if os.path.islink(result.path):  # a kb.yaml shared with another KB: replacing the link would part them
        raise MigrationError(
            f"{result.path}: a symbolic link: not rewritten (migrate the kb.yaml it leads to)", result.path
        )
    try:
        replace_file(result.path, result.migrated.encode("utf-8"), os.stat(result.path))
    except OSError as exc:
        raise MigrationError(f"{result.path}: not written: {exc.strerror or exc}", result.path) from None
    return True
