"""One markdown file → Entry: frontmatter, body, headings, links, line numbers (SPEC §3).

Parsing never raises: every failure becomes a `ParseFailure` with the line SPEC §3 gives.
"""

from __future__ import annotations

import datetime as _dt
import posixpath
import re
from dataclasses import field
from functools import lru_cache
from typing import Iterator, NamedTuple
from urllib.parse import unquote

import yaml

from . import plainyaml
from .plainclass import dataclass

try:  # the libyaml loader is several times faster; fall back only where it is missing
    _BaseLoader = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - libyaml is present on supported installs
    _BaseLoader = yaml.SafeLoader


class _EntryLoader(_BaseLoader):
    """CSafeLoader that keeps impossible timestamps (`2025-13-45`) as text and notes their line."""

    _implicit = _BaseLoader.yaml_implicit_resolvers

    def resolve(self, kind, value, implicit):
        # The composer calls this for every node; SafeLoader's own version also walks path and
        # wildcard resolvers, which it never has.
        if kind is yaml.ScalarNode:
            if implicit[0]:
                for tag, regexp in self._implicit.get(value[:1], ()):
                    if regexp.match(value):
                        return tag
            return "tag:yaml.org,2002:str"
        return "tag:yaml.org,2002:seq" if kind is yaml.SequenceNode else "tag:yaml.org,2002:map"


if None in _BaseLoader.yaml_implicit_resolvers or _BaseLoader.yaml_path_resolvers:  # pragma: no cover
    del _EntryLoader.resolve  # resolvers this fast path does not know: keep PyYAML's


def _construct_timestamp(loader, node):
    try:
        return yaml.constructor.SafeConstructor.construct_yaml_timestamp(loader, node)
    except (ValueError, OverflowError):
        loader.bad_dates.append((node.start_mark.line, node.value))
        return node.value


_EntryLoader.add_constructor("tag:yaml.org,2002:timestamp", _construct_timestamp)

_STR_TAG = "tag:yaml.org,2002:str"
_SEQ_TAG = "tag:yaml.org,2002:seq"
_MAP_TAG = "tag:yaml.org,2002:map"
_SCALAR_CONSTRUCTORS = {tag: _EntryLoader.yaml_constructors[tag] for tag in (
    "tag:yaml.org,2002:null", "tag:yaml.org,2002:bool", "tag:yaml.org,2002:int", "tag:yaml.org,2002:float",
    "tag:yaml.org,2002:timestamp")}


class _NotPlain(Exception):
    """The document uses a YAML feature the plain-data constructor leaves to PyYAML's own."""


def _construct_plain(loader, node):
    """The value of a node tree of plain mappings, sequences and scalars, as SafeConstructor
    would build it, without its per-node bookkeeping (which costs about half of a frontmatter's
    load time). Anything else (merge keys, explicit tags, unhashable keys) raises _NotPlain."""
    cls = node.__class__
    if cls is yaml.ScalarNode:
        tag = node.tag
        if tag == _STR_TAG:
            return node.value
        constructor = _SCALAR_CONSTRUCTORS.get(tag)
        if constructor is None:
            raise _NotPlain
        return constructor(loader, node)
    if cls is yaml.MappingNode:
        if node.tag != _MAP_TAG:
            raise _NotPlain
        data = {}
        for key_node, value_node in node.value:
            if key_node.tag != _STR_TAG:
                if key_node.__class__ is not yaml.ScalarNode or key_node.tag not in _SCALAR_CONSTRUCTORS:
                    raise _NotPlain  # merge (`<<`) and value (`=`) keys, collections as keys
                data[_construct_plain(loader, key_node)] = _construct_plain(loader, value_node)
            else:
                data[key_node.value] = _construct_plain(loader, value_node)
        return data
    if cls is yaml.SequenceNode and node.tag == _SEQ_TAG:
        return [_construct_plain(loader, item) for item in node.value]
    raise _NotPlain


def _load_mapping(loader, fm_text: str):
    """The frontmatter's data: plain documents by the fast constructor, the rest by PyYAML's."""
    node = loader.get_single_node()
    if node is None:
        return None
    if "&" not in fm_text:  # no anchors, so no aliases: the node graph is a tree
        try:
            return _construct_plain(loader, node)
        except (_NotPlain, RecursionError):
            loader.bad_dates = []
    return loader.construct_document(node)


@dataclass(slots=True)
class ParseFailure:
    """Why a file could not be read as an entry, and where."""

    message: str
    line: int = 1
    column: int = 1


class Link(NamedTuple):
    """One link of an entry. A tuple: links cross from worker processes and into the result cache
    by the hundred thousand, and tuples are what pickle and JSON move fastest."""

    target: str
    relation: str
    kb: str | None  # None: the entry's own KB
    line: int
    column: int = 1
    # Set when the link names a path: KB-relative posix path of the file it names.
    path: str | None = None
    field: str | None = None  # frontmatter key the link came from
    origin: str | None = None  # file the link is written in when not the entry (cross-kb-links.yaml)


@dataclass(slots=True)
class RawEntry:
    """The result of splitting and loading a file; body analysis happens on demand."""

    frontmatter: dict
    body: str
    body_line: int  # 1-based line of the body's first line
    fm_text: str
    bad_dates: list[tuple[int, str]]  # (1-based line, text)
    _key_lines: dict[str, int] | None = None

    def key_line(self, key: str) -> int:
        if self._key_lines is None:
            self._key_lines = {}
        line = self._key_lines.get(key)
        if line is None:
            line = self._key_lines[key] = _find_key_line(self.fm_text, key)
        return line

    def key_on_line(self, line: int) -> str | None:
        """The mapping key written on a frontmatter line (at any depth), if any."""
        lines = self.fm_text.split("\n")
        index = line - 2
        if not 0 <= index < len(lines):
            return None
        m = _ANY_KEY_RE.match(lines[index])
        return (m.group(1) or m.group(2) or m.group(3)) if m else None


# The closing fence, found from the newline before it: a leading literal lets the regex engine skip
# ahead, where `^` with re.M would make it try every position of the frontmatter.
_FENCE_RE = re.compile(r"\n---[ \t]*$", re.M)
_GLUED_RE = re.compile(r"^[^#\n:]*:.*\S---[ \t]*$", re.M)


_ANY_KEY_RE = re.compile(r"""^[ \t]*(?:-[ \t]+)?(?:"([^"\n]+)"|'([^'\n]+)'|([^\s#'"\-?:,\[\]{}][^:\n]*?))[ \t]*:(?=[ \t]|$)""")


@lru_cache(maxsize=1024)
def _key_pattern(key: str) -> re.Pattern:
    """KEY written at the start of a line, after the newline that ends the line before (a leading
    literal lets the regex engine skip ahead; `^` with re.M would make it try every position)."""
    quoted = re.escape(key)
    return re.compile(rf"""\n(?:{quoted}|"{quoted}"|'{quoted}')[ \t]*:(?=[ \t]|$)""", re.M)


def _find_key_line(fm_text: str, key: str) -> int:
    """Line of the top-level KEY in the frontmatter (which starts on line 2), else 1."""
    if key not in fm_text:
        return 1
    pattern = _key_pattern(key)
    if (fm_text.startswith(key) or fm_text[:1] in "\"'") and pattern.match("\n" + fm_text.partition("\n")[0]):
        return 2
    m = pattern.search(fm_text)
    return fm_text.count("\n", 0, m.start()) + 3 if m else 1


def decode(data: bytes) -> str | ParseFailure:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        return ParseFailure(f"invalid UTF-8 at byte offset {exc.start}: {exc.reason}", line=line)
    if text.startswith("\ufeff"):
        text = text[1:]
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text


def _glued_fence_hint(fm_region: str) -> tuple[int, str] | None:
    m = _GLUED_RE.search(fm_region)
    if m is None:
        return None
    return fm_region.count("\n", 0, m.start()) + 2, m.group(0).strip()


def split_and_load(text: str) -> RawEntry | ParseFailure:
    """Split the frontmatter fence and load the YAML mapping (SPEC §3)."""
    if not text.strip():
        return ParseFailure("empty file: expected frontmatter starting with '---'")
    first_nl = text.find("\n")
    first = text if first_nl < 0 else text[:first_nl]
    if first.rstrip() != "---":
        return ParseFailure("no frontmatter: the first line must be '---'")
    start = first_nl + 1 if first_nl >= 0 else len(text)
    m = _FENCE_RE.search(text, first_nl) if first_nl >= 0 else None
    if m is None:
        hint = _glued_fence_hint(text[start:])
        msg = "unterminated frontmatter: no closing '---' line"
        if hint:
            msg += f"; line {hint[0]} ends with '---' glued to a value ({hint[1]!r}): put '---' on its own line"
        return ParseFailure(msg)
    fm_text = text[start : m.start() + 1]
    body_start = m.end() + 1
    body = text[body_start:] if body_start <= len(text) else ""
    body_line = text.count("\n", 0, m.end()) + 2

    data = plainyaml.load(fm_text)
    bad_dates: list[tuple[int, str]] = []
    if data is None:  # not plain YAML (or empty): PyYAML reads it
        loaded = _load_with_pyyaml(fm_text)
        if isinstance(loaded, ParseFailure):
            return loaded
        data, bad_dates = loaded
    if data is None:
        data = {}
    if not isinstance(data, dict):
        kind = "a list" if isinstance(data, list) else "a scalar value"
        return ParseFailure(f"frontmatter must be a mapping of keys to values, not {kind}", line=2)
    return RawEntry(frontmatter=data, body=body, body_line=body_line, fm_text=fm_text, bad_dates=bad_dates)


def _load_with_pyyaml(fm_text: str):
    """(data, impossible dates as (file line, text)), or the ParseFailure of invalid YAML."""
    loader = _EntryLoader(fm_text)
    loader.bad_dates = []
    try:
        data = _load_mapping(loader, fm_text)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 2 if mark is not None else 2
        column = mark.column + 1 if mark is not None else 1
        reason = exc.problem or exc.context or "invalid YAML"
        msg = f"invalid YAML in frontmatter: {reason}"
        hint = _glued_fence_hint(fm_text)
        if hint:
            msg += f"; line {hint[0]} ends with '---' glued to a value ({hint[1]!r}): put '---' on its own line"
        return ParseFailure(msg, line=line, column=column)
    except Exception as exc:  # noqa: BLE001 - any loader failure is a parse error, never a crash
        return ParseFailure(f"invalid YAML in frontmatter: {type(exc).__name__}: {exc}", line=2)
    finally:
        loader.dispose()
    return data, [(line + 2, value) for line, value in loader.bad_dates]


def parse(data: bytes) -> RawEntry | ParseFailure:
    """A file's bytes → its frontmatter and body, or why it cannot be read as an entry."""
    text = decode(data)
    return split_and_load(text) if isinstance(text, str) else text


# ---------------------------------------------------------------------------------------------
# Body analysis: code stripping, headings, wikilinks, markdown links.

# A backtick fence's info string cannot contain backticks (CommonMark): "```x``` y" is inline code.
_FENCE_OPEN_RE = re.compile(r"^ {0,3}(`{3,}(?=[^`]*$)|~{3,})")
_HEADING_RE = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_INLINE_CODE_RE = re.compile(r"(`+)(?!`)(.+?)(?<!`)\1(?!`)", re.S)
# Both patterns start with a literal, so the regex engine can skip ahead quickly.
_WIKILINK_RE = re.compile(r"\[\[([^\[\]]*)\]\](?!\()")
_MDLINK_RE = re.compile(r"\]\(\s*<?([^()\s<>]+)>?(?:\s+(?:\"[^\"]*\"|'[^']*'))?\s*\)")
_KB_PREFIX_RE = re.compile(r"^([a-z0-9_-]+):(.+)$", re.S)
_SCHEME_RE = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


def _blank(text: str) -> str:
    """Same length and newlines, no content: keeps line and column positions intact."""
    if "\n" not in text:
        return " " * len(text)
    return re.sub(r"[^\n]", " ", text)


_last_stripped: tuple[str, str] = ("", "")  # the body last stripped and its result


def strip_code(body: str) -> str:
    """Replace fenced code blocks and inline code with spaces, preserving positions."""
    global _last_stripped
    if "`" not in body and "~~~" not in body:
        return body
    if _last_stripped[0] is body:  # the links and the word count of one entry both ask
        return _last_stripped[1]
    stripped = _strip_code(body)
    _last_stripped = (body, stripped)
    return stripped


def _strip_code(body: str) -> str:
    if "```" not in body and "~~~" not in body:  # inline code only
        return _INLINE_CODE_RE.sub(lambda m: _blank(m.group(0)), body)
    lines = body.split("\n")
    fence: str | None = None
    for i, line in enumerate(lines):
        if fence is None:
            m = _FENCE_OPEN_RE.match(line)
            if m:
                fence = m.group(1)
                lines[i] = " " * len(line)
        else:
            stripped = line.strip()
            if stripped and stripped[0] == fence[0] and set(stripped) == {fence[0]} and len(stripped) >= len(fence):
                fence = None
            lines[i] = " " * len(line)
    out = "\n".join(lines)
    if "`" in out:
        out = _INLINE_CODE_RE.sub(lambda m: _blank(m.group(0)), out)
    return out


def headings(body: str, body_line: int) -> list[tuple[int, str, int]]:
    """(level, text, file line) of each ATX heading outside code fences."""
    if "#" not in body:
        return []
    result = []
    fence: str | None = None
    fenced = "```" in body or "~~~" in body
    for i, line in enumerate(body.split("\n")):
        if not line:
            continue
        first = line[0]
        if fence is None:
            if fenced and (first in "`~" or (first == " " and ("`" in line or "~" in line))):
                m = _FENCE_OPEN_RE.match(line)
                if m:
                    fence = m.group(1)
                    continue
            if first == "#" or (first == " " and "#" in line):
                h = _HEADING_RE.match(line)
                if h:
                    result.append((len(h.group(1)), (h.group(2) or "").strip(), body_line + i))
        elif first in "`~ ":
            stripped = line.strip()
            if stripped and set(stripped) == {fence[0]} and len(stripped) >= len(fence):
                fence = None
    return result


def split_kb_prefix(target: str) -> tuple[str | None, str]:
    if ":" not in target:
        return None, target
    m = _KB_PREFIX_RE.match(target)
    if m:
        return m.group(1), m.group(2).strip()
    return None, target


def _line_col(text: str, offset: int, first_line: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset)
    col = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return first_line + line, col


def _link_text_start(text: str, close: int) -> int | None:
    """Where the `[text]` that ends at CLOSE (the `]` of `](`) starts; None for an image or no text."""
    depth = 0
    i = close - 1
    line_start = text.rfind("\n", 0, close) + 1
    while i >= line_start:
        c = text[i]
        if c == "]":
            depth += 1
        elif c == "[":
            if depth == 0:
                return None if i > 0 and text[i - 1] == "!" else i
            depth -= 1
        i -= 1
    return None


def _wikilink_target(raw: str) -> str:
    target = raw.split("|", 1)[0]
    for sep in ("#", "^"):
        idx = target.find(sep)
        if idx >= 0:
            target = target[:idx]
    return target.strip()


def _path_link(target: str) -> str | None:
    """A wikilink target naming a path (`dir/note`, `note.md`): its KB-relative .md path."""
    if target.endswith(".md"):
        return posixpath.normpath(target.lstrip("/"))
    if "/" in target:
        return posixpath.normpath(target.lstrip("/")) + ".md"
    return None


def _matches_at(pattern: re.Pattern, literal: str, text: str) -> Iterator[re.Match]:
    """pattern.finditer(text), for a PATTERN whose every match starts with LITERAL: str.find goes
    from one place it can start to the next several times faster than the regex engine's scan."""
    find = text.find
    match = pattern.match
    at = find(literal)
    while at >= 0:
        m = match(text, at)
        if m is None:
            at = find(literal, at + 1)
        else:
            yield m
            at = find(literal, m.end())


def body_links(body: str, body_line: int, entry_dir: str) -> list[Link]:
    """Wikilinks and local markdown links in the body (code removed). entry_dir: KB-relative dir."""
    has_wiki = "[[" in body
    has_md = "](" in body
    if not has_wiki and not has_md:
        return []
    text = strip_code(body)
    links: list[Link] = []
    if has_wiki:
        for m in _matches_at(_WIKILINK_RE, "[[", text):
            inner = m.group(1)
            if "\n" in inner:
                continue
            embed = m.start() > 0 and text[m.start() - 1] == "!"
            start = m.start() - 1 if embed else m.start()
            kb, target = split_kb_prefix(inner.strip())
            target = _wikilink_target(target)
            if not target:
                continue
            line, col = _line_col(text, start, body_line)
            relation = "transclusion" if embed else "wikilink"
            path = _path_link(target)
            if path is not None and target.endswith(".md"):
                target = target[:-3]
            links.append(Link(target, relation, kb, line, col, path))
    if has_md:
        for m in _matches_at(_MDLINK_RE, "](", text):
            href = m.group(1)
            if _SCHEME_RE.match(href) or href.startswith("#"):
                continue
            opening = _link_text_start(text, m.start())
            if opening is None:
                continue
            href = unquote(href.split("#", 1)[0])
            if not href.endswith(".md"):
                continue
            if href.startswith("/"):
                path = posixpath.normpath(href.lstrip("/"))
            else:
                path = posixpath.normpath(posixpath.join(entry_dir, href))
            line, col = _line_col(text, opening, body_line)
            links.append(Link(path[:-3], "mdlink", None, line, col, path))
    return links


def _string_target(value) -> str | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (str, int, float)):
        text = str(value).strip()
        return text or None
    return None


def list_item_lines(fm_text: str, key_line: int, count: int) -> list[int]:
    """File lines of the items of a block list under the top-level key on KEY_LINE ([] when the
    list is written in flow style or the items cannot be told apart)."""
    lines = fm_text.split("\n")
    found: list[int] = []
    indent = None
    for index in range(key_line - 1, len(lines)):  # fm_text line i is file line i + 2
        text = lines[index]
        if not text.strip() or text.lstrip().startswith("#"):
            continue
        if text[0] not in " -":
            break  # the next top-level key
        stripped = text.lstrip(" ")
        if stripped.startswith("- ") or stripped == "-":
            level = len(text) - len(stripped)
            if indent is None:
                indent = level
            if level == indent:
                found.append(index + 2)
    return found if len(found) == count else []


def frontmatter_links(raw: RawEntry, object_ref_fields: tuple[str, ...] = ()) -> list[Link]:
    """`links:` (mapping, legacy `{to, type}`, `target`/`kb:target` strings), `references:`, object-refs."""
    fm = raw.frontmatter
    links: list[Link] = []
    items = fm.get("links")
    if isinstance(items, (list, dict, str)):
        line = raw.key_line("links")
        item_lines = list_item_lines(raw.fm_text, line, len(items)) if isinstance(items, list) else []
        if isinstance(items, (dict, str)):
            items = [items]
        for n, item in enumerate(items):
            line = item_lines[n] if n < len(item_lines) else raw.key_line("links")
            if isinstance(item, dict):
                target = _string_target(item.get("target", item.get("to")))
                if target is None:
                    continue
                relation = item.get("relation", item.get("type")) or "related"
                kb = item.get("kb")
                kb = str(kb).strip() if kb not in (None, "") else None
                if kb is None:
                    kb, target = split_kb_prefix(target)
                links.append(Link(target=target, relation=str(relation), kb=kb, line=line, field="links"))
            else:
                target = _string_target(item)
                if target is None:
                    continue
                kb, target = split_kb_prefix(target)
                links.append(Link(target=target, relation="related", kb=kb, line=line, field="links"))
    refs = fm.get("references")
    if isinstance(refs, (list, str)):
        key_line = raw.key_line("references")
        item_lines = list_item_lines(raw.fm_text, key_line, len(refs)) if isinstance(refs, list) else []
        for n, item in enumerate([refs] if isinstance(refs, str) else refs):
            line = item_lines[n] if n < len(item_lines) else key_line
            target = _string_target(item)
            if target is None:
                continue
            kb, target = split_kb_prefix(target)
            links.append(Link(target=target, relation="references", kb=kb, line=line, field="references"))
    for name in object_ref_fields:
        value = fm.get(name)
        if value is None and isinstance(fm.get("metadata"), dict):
            value = fm["metadata"].get(name)
        if value is None:
            continue
        line = raw.key_line(name)
        for item in value if isinstance(value, list) else [value]:
            target = _string_target(item)
            if target is None:
                continue
            kb, target = split_kb_prefix(target)
            links.append(Link(target=target, relation=name, kb=kb, line=line, field=name))
    return links


# ---------------------------------------------------------------------------------------------
# The entry model checkers and policies see (SPEC §3).


def _as_text(value) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (_dt.date, _dt.datetime)):
        return value.isoformat()
    return str(value)


def as_tags(value) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value] if value.strip() else []
    if isinstance(value, list):
        return [str(v) for v in value if v is not None and str(v).strip()]
    return [str(value)]


@dataclass(slots=True)
class Entry:
    """An entry as the checks see it: its frontmatter read into fields, its body and its links."""

    kb_name: str
    path: str  # absolute path (or the virtual path of a candidate read from stdin)
    relpath: str  # KB-relative posix path
    raw: RawEntry
    id: str
    type: str
    type_source: str  # "frontmatter" | "subdirectory" | "default"
    title: str | None
    tags: list[str]
    status: str | None
    metadata: dict
    body: str
    links: list[Link] = field(default_factory=list)
    aliases: list[str] = field(default_factory=list)
    _headings: list | None = None
    memo: dict = field(default_factory=dict)  # measures several checks share (outlink count, words)

    @property
    def stem(self) -> str:
        return posixpath.basename(self.relpath)[:-3] if self.relpath.endswith(".md") else posixpath.basename(self.relpath)

    @property
    def headings(self) -> list[tuple[int, str, int]]:
        if self._headings is None:
            self._headings = headings(self.body, self.raw.body_line)
        return self._headings

    def key_line(self, key: str) -> int:
        return self.raw.key_line(key)


def merged_metadata(frontmatter: dict) -> dict:
    nested = frontmatter.get("metadata")
    if isinstance(nested, dict):
        merged = dict(nested)
        merged.update(frontmatter)
        return merged
    return frontmatter


def entry_id(frontmatter: dict, relpath: str) -> str:
    value = frontmatter.get("id")
    text = _as_text(value) if not isinstance(value, (list, dict)) else None
    if text is not None and text.strip():
        return text.strip()
    return posixpath.basename(relpath)[:-3] if relpath.endswith(".md") else posixpath.basename(relpath)


def build_entry(raw: RawEntry, schema, path: str, relpath: str) -> tuple[Entry, bool]:
    """The entry model for RAW in the KB described by SCHEMA; the flag says the type was defaulted."""
    fm = raw.frontmatter
    declared = fm.get("type")
    type_name = _as_text(declared).strip() if declared is not None and not isinstance(declared, (list, dict)) else ""
    type_source = "frontmatter"
    if not type_name:
        segment = relpath.split("/", 1)[0] if "/" in relpath else ""
        type_name = (schema.type_for_subdirectory(segment) if segment else None) or ""
        type_source = "subdirectory" if type_name else "default"
        if not type_name:
            type_name = "note"
    title = fm.get("title")
    title = _as_text(title) if not isinstance(title, (list, dict)) else None
    status = fm.get("status")
    status = _as_text(status) if not isinstance(status, (list, dict)) else None
    entry = Entry(
        kb_name=schema.name,
        path=path,
        relpath=relpath,
        raw=raw,
        id=entry_id(fm, relpath),
        type=type_name,
        type_source=type_source,
        title=title,
        tags=as_tags(fm.get("tags")),
        status=status,
        metadata=merged_metadata(fm),
        body=raw.body,
        aliases=as_tags(fm.get("aliases")),
    )
    type_schema = schema.types.get(type_name)
    refs = type_schema.object_ref_fields() if type_schema is not None else ()
    entry.links = frontmatter_links(raw, refs) + body_links(raw.body, raw.body_line, posixpath.dirname(relpath))
    return entry, type_source == "default"


_DISABLE_RE = re.compile(r"<!--\s*kblint-disable\s+(.*?)\s*-->", re.S)


def suppressions(raw: RawEntry) -> tuple[tuple[str, int], ...]:
    """(name, line) of every suppression in the entry: `kblint: {disable: [...]}` in the
    frontmatter, or `<!-- kblint-disable name ... -->` anywhere in the body (SPEC §12)."""
    found: list[tuple[str, int]] = []
    conf = raw.frontmatter.get("kblint")
    if isinstance(conf, dict):
        names = conf.get("disable")
        if isinstance(names, str):
            names = [names]
        if isinstance(names, list):
            line = raw.key_line("kblint")
            found.extend((str(n).strip(), line) for n in names if n is not None and str(n).strip())
    if "kblint-disable" in raw.body:
        for m in _DISABLE_RE.finditer(raw.body):
            line = raw.body_line + raw.body.count("\n", 0, m.start())
            found.extend((n, line) for n in re.split(r"[\s,]+", m.group(1)) if n)
    return tuple(found)
