"""One markdown file → Entry: frontmatter, body, headings, links, line numbers (SPEC §3).

Parsing never raises: every failure becomes a `ParseFailure` with the line SPEC §3 gives.
"""

from __future__ import annotations

import datetime as _dt
import posixpath
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from ..paths import stem
from ..rules import Site
from ..yamlread import DEFAULT_LIMITS, Limits, RepeatedKey, YamlError, load_frontmatter
from .link import Link, outlink_count
from .markdown import (
    Heading,
    Span,
    blank_spans,
    code_blocks,
    comments,
    fences,
    headings,
    markdown_links,
    split_kb_prefix,
    strip_code,
    wikilinks,
)

if TYPE_CHECKING:
    from .kbschema import KBSchema

T = TypeVar("T")


@dataclass(slots=True)
class ParseFailure:
    """Why a file could not be read as an entry, and where."""

    message: str
    line: int = 1
    column: int = 1


# A mapping key written on a line, at any depth (for the line of an impossible date).
_ANY_KEY_RE = re.compile(
    r"""^[ \t]*(?:-[ \t]+)?(?:"([^"\n]+)"|'([^'\n]+)'|([^\s#'"\-?:,\[\]{}][^:\n]*?))[ \t]*:(?=[ \t]|$)"""
)


@dataclass
class RawEntry:
    """A file split into its frontmatter (loaded) and its body."""

    frontmatter: dict[Any, Any]
    body: str
    body_line: int  # 1-based line of the body's first line
    fm_text: str  # the frontmatter's YAML text; its first line is line 2 of the file
    key_lines: dict[str, int]  # file line of each top-level key
    bad_dates: list[tuple[int, str]]  # (file line, text) of values that look like dates but are none
    repeated_keys: list[RepeatedKey] = field(default_factory=list)  # keys given twice (file lines)
    _fm_lines: list[str] | None = field(default=None, repr=False)

    @property
    def fm_lines(self) -> list[str]:
        if self._fm_lines is None:
            self._fm_lines = self.fm_text.split("\n")
        return self._fm_lines

    def key_line(self, key: str) -> int:
        """The file line of the top-level KEY, else 1."""
        return self.key_lines.get(key, 1)

    def key_on_line(self, line: int) -> str | None:
        """The mapping key written on a file line of the frontmatter (at any depth), if any."""
        index = line - 2
        if not 0 <= index < len(self.fm_lines):
            return None
        m = _ANY_KEY_RE.match(self.fm_lines[index])
        return (m.group(1) or m.group(2) or m.group(3)) if m else None

    def list_item_lines(self, key_line: int, count: int) -> list[int]:
        """File lines of the COUNT items of a block list under the top-level key on KEY_LINE ([]
        when the list is written in flow style or its items cannot be told apart)."""
        lines = self.fm_lines
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


# The closing fence: a line `---` (found from the newline that ends the line before it).
_FENCE_RE = re.compile(r"\n---[ \t]*(?=\n|$)")
_GLUED_RE = re.compile(r"^[^#\n:]*:.*\S---[ \t]*$", re.M)


def decode(data: bytes) -> str | ParseFailure:
    """UTF-8 text with a BOM dropped and line endings made `\\n` (SPEC §3)."""
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


def _glued_fence_hint(fm_region: str) -> str:
    """The advice for a frontmatter line that ends with `---` glued to a value, if there is one."""
    m = _GLUED_RE.search(fm_region)
    if m is None:
        return ""
    line = fm_region.count("\n", 0, m.start()) + 2
    return f"; line {line} ends with '---' glued to a value ({m.group(0).strip()!r}): put '---' on its own line"


def split_and_load(text: str, limits: Limits = DEFAULT_LIMITS) -> RawEntry | ParseFailure:
    """Split the frontmatter fences and load the YAML mapping (SPEC §3)."""
    if not text or text.isspace():
        return ParseFailure("empty file: expected frontmatter starting with '---'")
    first_end = text.find("\n")
    if text[: first_end if first_end >= 0 else len(text)].rstrip() != "---":
        return ParseFailure("no frontmatter: the first line must be '---'")
    closing = _FENCE_RE.search(text, first_end) if first_end >= 0 else None
    if closing is None:
        rest = text[first_end + 1 :] if first_end >= 0 else ""
        return ParseFailure("unterminated frontmatter: no closing '---' line" + _glued_fence_hint(rest))
    fm_text = text[first_end + 1 : closing.start() + 1]
    body = text[closing.end() + 1 :]
    body_line = text.count("\n", 0, closing.start()) + 3
    try:
        loaded = load_frontmatter(fm_text, limits, first_line=2)
    except YamlError as exc:
        message = f"invalid YAML in frontmatter: {exc.reason}" + _glued_fence_hint(fm_text)
        return ParseFailure(message, line=exc.line + 1, column=exc.column)
    data = {} if loaded.data is None else loaded.data
    if not isinstance(data, dict):
        kind = "a list" if isinstance(data, list) else "a scalar value"
        return ParseFailure(f"frontmatter must be a mapping of keys to values, not {kind}", line=2)
    return RawEntry(
        frontmatter=data,
        body=body,
        body_line=body_line,
        fm_text=fm_text,
        key_lines=loaded.key_lines,
        bad_dates=loaded.bad_dates,
        repeated_keys=loaded.repeated_keys,
    )


def parse(data: bytes, limits: Limits = DEFAULT_LIMITS) -> RawEntry | ParseFailure:
    """A file's bytes → its frontmatter and body, or why it cannot be read as an entry."""
    text = decode(data)
    return split_and_load(text, limits) if isinstance(text, str) else text


# ---------------------------------------------------------------------------------------------
# The entry model checkers and policies see (SPEC §3).


def as_text(value: Any) -> str | None:
    """A scalar frontmatter value as text (booleans as YAML writes them, dates in ISO form)."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (_dt.date, _dt.datetime)):
        return value.isoformat()
    return str(value)


def _scalar_text(value: Any) -> str | None:
    return as_text(value) if not isinstance(value, (list, dict)) else None


def is_empty(value: Any) -> bool:
    """Missing, null, empty or whitespace string, empty list or mapping."""
    if value is None:
        return True
    if isinstance(value, str):
        return not value.strip()
    if isinstance(value, (list, dict, tuple, set)):
        return len(value) == 0
    return False


def as_tags(value: Any) -> list[str]:
    """Tags as a list of text: a single string is one tag; empty ones are dropped, and one given
    twice counts once (`tags: [harbor, harbor]` is one tag)."""
    if value is None:
        return []
    if isinstance(value, str):
        return [value] if value.strip() else []
    if isinstance(value, list):
        return list(dict.fromkeys(str(v) for v in value if v is not None and str(v).strip()))
    return [str(value)]


@dataclass
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
    metadata: dict[Any, Any]
    body: str
    links: list[Link] = field(default_factory=list)
    aliases: list[str] = field(default_factory=list)
    # What several checks read, made when first asked (properties below).
    _measured: dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def stem(self) -> str:
        return stem(self.relpath)

    @property
    def site(self) -> Site:
        return Site(self.kb_name, self.path, self.id, self.type)

    def _memo(self, name: str, make: Callable[[], T]) -> T:
        found: T | None = self._measured.get(name)
        if found is None:
            found = self._measured[name] = make()
        return found

    @property
    def fences(self) -> list[Span]:
        """The fenced code blocks of the body."""
        return self._memo("fences", lambda: fences(self.body))

    @property
    def comments(self) -> list[Span]:
        """The HTML comments of the body (outside code)."""
        return self._memo("comments", lambda: comments(self._code_free) if "<!--" in self.body else [])

    @property
    def uncommented(self) -> str:
        """The body with its HTML comments blanked (positions kept): what a reader sees, code too."""
        return self._memo("uncommented", lambda: blank_spans(self.body, self.comments))

    @property
    def headings(self) -> list[Heading]:
        """The ATX headings outside code fences and comments (`## Sources <!-- todo -->` is `Sources`)."""
        return self._memo("headings", lambda: headings(self.uncommented, self.raw.body_line, self.fences))

    @property
    def code_blocks(self) -> list[Span]:
        """The code blocks of the body: fenced, and indented (CommonMark's)."""
        return self._memo("code_blocks", lambda: code_blocks(self.body, self.fences))

    @property
    def _code_free(self) -> str:
        return self._memo("code_free", lambda: strip_code(self.body, self.code_blocks))

    @property
    def prose(self) -> str:
        """The body as a reader sees its text: code blocks, inline code and HTML comments blanked
        (positions kept)."""
        return self._memo("prose", lambda: blank_spans(self._code_free, self.comments))

    @property
    def word_count(self) -> int:
        """Words of the body, whitespace-separated, code and comments not counted."""
        return self._memo("words", lambda: len(self.prose.split()))

    def words_up_to(self, n: int) -> int:
        """min(word_count, N), counting no further than N words: a threshold needs no more."""
        text = self.prose
        if n <= 0 or n > len(text) or "words" in self._measured:  # (no text has more words than characters)
            return min(self.word_count, max(n, 0))
        return len(text.split(None, n - 1))

    @property
    def outlink_count(self) -> int:
        """Distinct link targets, not counting links to the entry itself (SPEC §3)."""
        return self._memo("outlinks", lambda: outlink_count(self, self.links))

    def key_line(self, key: str) -> int:
        return self.raw.key_line(key)

    def field_line(self, name: str) -> int:
        """The line of a frontmatter field; a key only inside a nested `metadata:` points at that mapping."""
        fm = self.raw.frontmatter
        if name in fm:
            return self.key_line(name)
        nested = fm.get("metadata")
        if isinstance(nested, dict) and name in nested:
            return self.key_line("metadata")
        return 1


def merged_metadata(frontmatter: dict[Any, Any]) -> dict[Any, Any]:
    """Every frontmatter key, with the keys of a nested `metadata:` mapping merged in (top level wins)."""
    nested = frontmatter.get("metadata")
    if isinstance(nested, dict):
        merged = dict(nested)
        merged.update(frontmatter)
        return merged
    return frontmatter


def entry_id(frontmatter: dict[Any, Any], relpath: str) -> str:
    """The frontmatter `id` (a number taken as its text), else the file stem."""
    text = _scalar_text(frontmatter.get("id"))
    if text is not None and text.strip():
        return text.strip()
    return stem(relpath)


def build_entry(raw: RawEntry, schema: KBSchema, path: str, relpath: str) -> tuple[Entry, bool]:
    """The entry model for RAW in the KB described by SCHEMA; the flag says the type was defaulted."""
    fm = raw.frontmatter
    type_name = (_scalar_text(fm.get("type")) or "").strip()
    type_source = "frontmatter"
    if not type_name:
        segment = relpath.split("/", 1)[0] if "/" in relpath else ""
        type_name = (schema.type_for_subdirectory(segment) if segment else None) or ""
        type_source = "subdirectory" if type_name else "default"
        type_name = type_name or "note"
    entry = Entry(
        kb_name=schema.name,
        path=path,
        relpath=relpath,
        raw=raw,
        id=entry_id(fm, relpath),
        type=type_name,
        type_source=type_source,
        title=_scalar_text(fm.get("title")),
        tags=as_tags(fm.get("tags")),
        status=_scalar_text(fm.get("status")),
        metadata=merged_metadata(fm),
        body=raw.body,
        aliases=as_tags(fm.get("aliases")),
    )
    type_schema = schema.types.get(type_name)
    refs = type_schema.object_ref_fields() if type_schema is not None else ()
    entry.links = frontmatter_links(raw, refs) + body_links(entry)
    return entry, type_source == "default"


def body_links(entry: Entry) -> list[Link]:
    """Wikilinks and local markdown links of the body, code and comments removed first."""
    body = entry.body
    has_wiki = "[[" in body
    has_md = "](" in body
    if not has_wiki and not has_md:
        return []
    text = entry.prose
    body_line = entry.raw.body_line
    links = list(wikilinks(text, body_line)) if has_wiki else []
    if has_md:
        links.extend(markdown_links(text, body_line, posixpath.dirname(entry.relpath)))
    return links


def target_text(value: Any) -> str | None:
    """A link target written as VALUE (a name, or a number or date YAML read), or None when it is none."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (str, int, float, _dt.date)):
        text = (as_text(value) or "").strip()  # a date names its entry as `2024-01-02`
        return text or None
    return None


def _item_lines(raw: RawEntry, key: str, items: object) -> tuple[int, list[int]]:
    """The line of KEY and, when ITEMS is a block list under it, the line of each item."""
    key_line = raw.key_line(key)
    return key_line, raw.list_item_lines(key_line, len(items)) if isinstance(items, list) else []


def _links_item(item: Any, line: int) -> Link | None:
    """One item of `links:`: a mapping `{target, relation, kb}`, legacy `{to, type}`, or a string."""
    if not isinstance(item, dict):
        target = target_text(item)
        if target is None:
            return None
        kb, target = split_kb_prefix(target)
        return Link(target=target, relation="related", kb=kb, line=line, field="links")
    target = target_text(item.get("target", item.get("to")))
    if target is None:
        return None
    relation = item.get("relation", item.get("type")) or "related"
    kb_value = item.get("kb")
    kb = str(kb_value).strip() if kb_value not in (None, "") else None
    if kb is None:
        kb, target = split_kb_prefix(target)
    return Link(target=target, relation=str(relation), kb=kb, line=line, field="links")


# The `links:` and `references:` values read for links: a list of items, or one item.
LINK_VALUES: dict[str, tuple[type, ...]] = {"links": (list, dict, str), "references": (list, str)}


def frontmatter_links(raw: RawEntry, object_ref_fields: tuple[str, ...] = ()) -> list[Link]:
    """`links:` items, `references:` items and object-ref fields (SPEC §3)."""
    fm = raw.frontmatter
    links: list[Link] = []
    items = fm.get("links")
    if isinstance(items, LINK_VALUES["links"]):
        key_line, item_lines = _item_lines(raw, "links", items)
        for n, item in enumerate(items if isinstance(items, list) else [items]):
            link = _links_item(item, item_lines[n] if n < len(item_lines) else key_line)
            if link is not None:
                links.append(link)
    refs = fm.get("references")
    if isinstance(refs, LINK_VALUES["references"]):
        key_line, item_lines = _item_lines(raw, "references", refs)
        for n, item in enumerate(refs if isinstance(refs, list) else [refs]):
            target = target_text(item)
            if target is not None:
                kb, target = split_kb_prefix(target)
                line = item_lines[n] if n < len(item_lines) else key_line
                links.append(Link(target=target, relation="references", kb=kb, line=line, field="references"))
    for name in object_ref_fields:
        links.extend(_object_ref_links(raw, name))
    return links


def _object_ref_links(raw: RawEntry, name: str) -> list[Link]:
    fm = raw.frontmatter
    value = fm.get(name)
    if value is None and isinstance(fm.get("metadata"), dict):
        value = fm["metadata"].get(name)
    if value is None:
        return []
    line = raw.key_line(name)
    links = []
    for item in value if isinstance(value, list) else [value]:
        target = target_text(item)
        if target is not None:
            kb, target = split_kb_prefix(target)
            links.append(Link(target=target, relation=name, kb=kb, line=line, field=name))
    return links
