"""One fix per fixable rule (kblint.rules.fixable): given an issue and the file it is on, the file's
new bytes, or None when there is no safe fix.

Every fix edits only the bytes of the value concerned (or inserts one line), then parses the result
again and keeps it only if the frontmatter changed in exactly the value meant and nothing else (and
for links, the entry's links are the same but for the fixed targets): comments, quoting, key order
and the rest of the file stay byte for byte what they were.
"""

from __future__ import annotations

import datetime as _dt
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..model.entry import Entry, ParseFailure, RawEntry, as_text, build_entry, parse
from ..model.issue import Issue
from ..model.kbschema import FieldSchema, KBSchema
from ..model.link import Link
from ..model.markdown import container_markers, opens_block
from ..model.suppression import suppressions
from ..paths import printable
from ..rules.fields import check_field, is_real_date
from ..yamlread import Limits
from . import scalars
from .source import Edit, Source, apply_edits


@dataclass(slots=True)
class Target:
    """A file being fixed: its bytes by line, and the entry they make."""

    source: Source
    raw: RawEntry
    entry: Entry
    schema: KBSchema
    limits: Limits
    path: str
    relpath: str
    table_rows: frozenset[int] | None = None  # the body's lines that are rows of a table, once asked

    @classmethod
    def read(cls, data: bytes, schema: KBSchema, path: str, relpath: str, limits: Limits) -> Target | None:
        """None when the bytes are not an entry, or not ones kblint edits (a lone carriage return)."""
        source = Source.of(data)
        raw = parse(data, limits)
        if source is None or isinstance(raw, ParseFailure):
            return None
        entry, _ = build_entry(raw, schema, path, relpath)
        return cls(source, raw, entry, schema, limits, path, relpath)

    def value_lines(self, key: str) -> range:
        """The lines of the top-level KEY's value: its own line up to the next key or the closing fence."""
        first = self.raw.key_lines[key]
        fence = self.raw.body_line - 1
        later = [line for line in self.raw.key_lines.values() if first < line < fence]
        return range(first, min(later, default=fence))

    def reparse(self, edits: list[Edit]) -> tuple[bytes, RawEntry] | None:
        data = apply_edits(self.source.data, edits) if edits else None
        if data is None:
            return None
        raw = parse(data, self.limits)
        return None if isinstance(raw, ParseFailure) else (data, raw)


# ---------------------------------------------------------------------------------------------
# What changed between two frontmatters


def _same_leaf(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return type(a) is type(b) and a == b


def leaf_changes(old: Any, new: Any) -> list[tuple[Any, Any]] | None:
    """The (old, new) scalar values that differ between two loaded YAML values of the same shape
    (same keys in the same order, same list lengths); None when the shapes differ."""
    changes: list[tuple[Any, Any]] = []
    stack = [(old, new)]
    while stack:
        a, b = stack.pop()
        if isinstance(a, dict) or isinstance(b, dict):
            if not (isinstance(a, dict) and isinstance(b, dict)) or list(a) != list(b):
                return None
            stack.extend((a[k], b[k]) for k in a)
        elif isinstance(a, list) or isinstance(b, list):
            if not (isinstance(a, list) and isinstance(b, list)) or len(a) != len(b):
                return None
            stack.extend(zip(a, b, strict=True))
        elif not _same_leaf(a, b):
            changes.append((a, b))
    return changes


def _value_edits(t: Target, key: str, wanted: dict[str, str], quotes: tuple[str, ...]) -> list[Edit] | None:
    """Edits writing each value of WANTED (written → new) where the top-level KEY's value has it,
    each as often as it is written there; None when that cannot be told for sure."""
    edits: list[Edit] = []
    for written, new in wanted.items():
        found = [
            (line, s)
            for line in t.value_lines(key)
            for s in scalars.find(t.source.text(line), written)
            if s.quote in quotes
        ]
        if not found or not all(scalars.can_write(new, s.quote) for _, s in found):
            return None
        edits.extend(t.source.replace(line, s.start, s.end, new) for line, s in found)
    return edits


def _frontmatter_fix(t: Target, edits: list[Edit], count: int, fits: Callable[[Any, Any], bool]) -> bytes | None:
    """The bytes after EDITS, when the frontmatter then differs in exactly COUNT values, each an
    (old, new) pair that FITS, and the body is unchanged."""
    done = t.reparse(edits)
    if done is None:
        return None
    data, raw = done
    changes = leaf_changes(t.raw.frontmatter, raw.frontmatter)
    if changes is None or len(changes) != count or not all(fits(a, b) for a, b in changes):
        return None
    return data if raw.body == t.raw.body else None


# ---------------------------------------------------------------------------------------------
# invalid_field: a select value in another case, or with spaces around it


def _select_spec(issue: Issue, t: Target) -> tuple[FieldSchema, Any] | None:
    """The select field ISSUE is about, and its value, when the issue is that field's misfit."""
    name = issue.field
    ts = t.schema.types.get(t.entry.type)
    spec = ts.fields.get(name) if ts is not None and name else None
    if name is None or spec is None or spec.type not in ("select", "multi-select") or not spec.values:
        return None
    if name not in t.raw.key_lines or name not in t.raw.frontmatter:
        return None  # only in a nested `metadata:` mapping: not edited
    value = t.raw.frontmatter[name]
    misfit = check_field(spec, value)
    if misfit is None or printable(misfit.message) != issue.message:
        return None  # another invalid_field of the field (a validation rule's)
    return spec, value


def fix_select(issue: Issue, t: Target) -> bytes | None:
    found = _select_spec(issue, t)
    if found is None:
        return None
    spec, value = found
    members = value if isinstance(value, list) else [value]
    allowed = [v for v in spec.values or () if isinstance(v, str)]
    wanted: dict[str, str] = {}
    for member in members:
        if member in (spec.values or ()):
            continue
        near = [a for a in allowed if isinstance(member, str) and a.casefold() == member.strip().casefold()]
        if len(near) != 1:
            return None  # a value no fix makes allowed: the issue would stay
        wanted[member] = near[0]
    edits = _value_edits(t, issue.field or "", wanted, ("", "'", '"'))
    if not edits or len(edits) != sum(1 for m in members if isinstance(m, str) and m in wanted):
        return None
    return _frontmatter_fix(t, edits, len(edits), lambda a, b: wanted.get(a) == b)


# ---------------------------------------------------------------------------------------------
# invalid_date: 2024-3-7 → 2024-03-07

_LOOSE_DATE_RE = re.compile(r"(\d{4})-(\d{1,2})-(\d{1,2})")


def fix_date(issue: Issue, t: Target) -> bytes | None:
    name = issue.field
    if name is None or name not in t.raw.key_lines or not isinstance(t.raw.frontmatter.get(name), str):
        return None
    value = t.raw.frontmatter[name]
    m = _LOOSE_DATE_RE.fullmatch(value)
    if m is None:
        return None
    try:
        iso = _dt.date(int(m.group(1)), int(m.group(2)), int(m.group(3))).isoformat()
    except ValueError:
        return None  # not a real date: nothing says which one was meant
    if iso == value:
        return None
    edits = _value_edits(t, name, {value: iso}, ("",))  # a quoted date is text someone wrote so
    if edits is None or len(edits) != 1:
        return None
    return _frontmatter_fix(t, edits, 1, lambda a, b: a == value and is_real_date(b) and as_text(b) == iso)


# ---------------------------------------------------------------------------------------------
# missing_type: the folder is the subdirectory of exactly one type


def _insert_before(t: Target) -> int:
    """The line the `type:` line goes before: after a one-line `title:` (as types are usually
    written), else at the top of the frontmatter."""
    lines = t.raw.key_lines
    fence = t.raw.body_line - 1
    title = lines.get("title")
    if title is not None and (title + 1 == fence or title + 1 in lines.values()):
        return title + 1
    return 2


def fix_type(issue: Issue, t: Target) -> bytes | None:
    if "type" in t.raw.frontmatter or t.entry.type_source != "default":
        return None
    owners = t.schema.types_holding(t.relpath)
    if len(owners) != 1 or not scalars.can_write(owners[0], ""):
        return None
    name = owners[0]
    done = t.reparse([t.source.insert_line(_insert_before(t), f"type: {name}")])
    if done is None:
        return None
    data, raw = done
    new = dict(raw.frontmatter)
    if new.pop("type", None) != name or leaf_changes(t.raw.frontmatter, new) != [] or raw.body != t.raw.body:
        return None
    return data


# ---------------------------------------------------------------------------------------------
# noncanonical_link: the link's target becomes the entry's id

_WIKILINK_RE = re.compile(r"\[\[([^\[\]]*)\]\]")
_KB_PREFIX_RE = re.compile(r"([a-z0-9_-]+):(.+)", re.S)
_WIKI_RESERVED = frozenset("[]|#^\n")


def _wiki_writable(ident: str, kb: str | None) -> bool:
    """Whether IDENT reads back as the same target in a wikilink (not a path, not a KB prefix)."""
    return (
        ident == ident.strip()
        and not any(c in _WIKI_RESERVED for c in ident)
        and "/" not in ident
        and not ident.endswith(".md")
        and (kb is not None or _KB_PREFIX_RE.fullmatch(ident) is None)
    )


def _wikilink_edit(t: Target, link: Link, ident: str, alias: bool) -> Edit | None:
    """The edit of the target of a body wikilink (or embed), located as the parser reads it. A
    wikilink by ALIAS with no label, heading or block keeps the alias as its label, so that what
    a reader sees stays the same: `[[Seacrest Holdings]]` → `[[seacrest-holdings|Seacrest Holdings]]`."""
    text = t.source.text(link.line)
    at = link.column - 1 + (1 if link.relation == "transclusion" else 0)
    m = _WIKILINK_RE.match(text, at)
    if m is None or not _wiki_writable(ident, link.kb):
        return None
    inner = m.group(1)
    start = len(inner) - len(inner.lstrip())
    prefixed = _KB_PREFIX_RE.fullmatch(inner.strip())
    if (prefixed.group(1) if prefixed else None) != link.kb:
        return None
    if prefixed is not None:
        start += len(prefixed.group(1)) + 1
        start += len(inner[start:]) - len(inner[start:].lstrip())
    cut = min((i for i in (inner.find(c, start) for c in "|#^") if i >= 0), default=len(inner))
    if inner.startswith("\\|", cut - 1):  # `[[target\|label]]`, as a table cell writes it
        cut -= 1
    end = start + len(inner[start:cut].rstrip())
    if inner[start:end] != link.target:
        return None
    plain = cut == len(inner) and link.relation == "wikilink"
    bar = "\\|" if _in_table(t, link.line) else "|"  # a bare `|` would end the table's cell
    written = f"{ident}{bar}{link.target}" if alias and plain else ident
    return t.source.replace(link.line, m.start(1) + start, m.start(1) + end, written)


_TABLE_DELIMITER_RE = re.compile(r"\|?\s*:?-+:?\s*(?:\|\s*:?-+:?\s*)*\|?\s*")


def _cell_text(text: str) -> str:
    """TEXT without the markers and indentation of the quotes and list items it is in."""
    return text[len(container_markers(text)) :]


def _is_delimiter_row(text: str) -> bool:
    """`| --- | :-: |`: the row under a table's header (a line of dashes alone is no table's)."""
    return "|" in text and _TABLE_DELIMITER_RE.fullmatch(_cell_text(text)) is not None


def _in_table(t: Target, line: int) -> bool:
    """Whether LINE of the body is a row of a table (`_table_rows`)."""
    if t.table_rows is None:
        t.table_rows = _table_rows([t.source.text(n) for n in range(t.raw.body_line, len(t.source.starts) + 1)])
    return line - t.raw.body_line in t.table_rows


def _table_rows(lines: list[str]) -> frozenset[int]:
    """The indexes of LINES that are rows of a table: a header row, the delimiter row under it, and
    the rows below up to a blank line or another block (a heading, a fence, a break, a list item,
    a quote of another depth)."""
    rows: set[int] = set()
    depth: int | None = None  # the quote depth of the table being read
    for n, line in enumerate(lines):
        text = _cell_text(line)
        if depth is not None and (not text.strip() or opens_block(text) or _quotes(line) != depth):
            depth = None
        if depth is not None:
            rows.add(n)
        elif n and _is_delimiter_row(line) and lines[n - 1].strip() and _quotes(lines[n - 1]) == _quotes(line):
            rows.update((n - 1, n))
            depth = _quotes(line)
    return frozenset(rows)


def _quotes(line: str) -> int:
    return container_markers(line).count(">")


def _link_lines(t: Target, link: Link, fm_links: list[Link]) -> range:
    """The lines a frontmatter link is written on: its item, up to the next item or key."""
    fence = t.raw.body_line - 1
    later = [other.line for other in fm_links if other.line > link.line]
    later.extend(line for line in t.raw.key_lines.values() if link.line < line < fence)
    return range(link.line, min(later, default=fence))


def _frontmatter_link_edits(t: Target, matched: list[Link], ident: str) -> list[Edit] | None:
    fm_links = [link for link in t.entry.links if link.field is not None]
    found: set[tuple[int, scalars.Scalar]] = set()
    for link in matched:
        prefixes = ("",) if link.kb is None else ("", f"{link.kb}:")
        for line in _link_lines(t, link, fm_links):
            text = t.source.text(line)
            found.update((line, s) for prefix in prefixes for s in scalars.find(text, link.target, prefix))
    if len(found) != len(matched) or not all(scalars.can_write(ident, s.quote) for _, s in found):
        return None
    ordered = sorted(found, key=lambda f: (f[0], f[1].start))
    return [t.source.replace(line, s.start, s.end, ident) for line, s in ordered]


def _links_fit(t: Target, raw: RawEntry, matched: list[Link], ident: str) -> bool:
    """Whether the entry RAW makes has the links of T, but IDENT for the targets of MATCHED."""
    entry, _ = build_entry(raw, t.schema, t.path, t.relpath)
    if len(entry.links) != len(t.entry.links):
        return False
    for old, new in zip(t.entry.links, entry.links, strict=True):
        expected = old._replace(target=ident) if old in matched else old
        if new._replace(column=0) != expected._replace(column=0):
            return False
    return True


def fix_link(issue: Issue, t: Target) -> bytes | None:
    parts = issue.discriminator.split("\n", 2)
    if len(parts) != 3:  # noqa: PLR2004 - kind, id, then what the link named
        return None
    kind, ident, head = parts
    target_kb, _, named = head.partition(":")
    own = t.schema.name
    hidden = [s for s in suppressions(t.raw)[0] if s.name in (issue.rule, issue.checker, issue.item_id)]
    matched = [
        link
        for link in t.entry.links
        if link.origin is None
        and link.path is None
        and (link.kb or own) == target_kb
        and link.target == named
        and not any(s.covers(link.line) for s in hidden)  # a link the entry says to leave as it is
    ]
    in_body = [link for link in matched if link.field is None]
    in_frontmatter = [link for link in matched if link.field is not None]
    alias = kind == "alias"
    edits = [_wikilink_edit(t, link, ident, alias) for link in in_body if link.relation in ("wikilink", "transclusion")]
    fm_edits = _frontmatter_link_edits(t, in_frontmatter, ident) if in_frontmatter else []
    if not matched or fm_edits is None or None in edits or len(edits) != len(in_body):
        return None
    done = t.reparse([e for e in edits if e is not None] + fm_edits)
    if done is None:
        return None
    data, raw = done
    changes = leaf_changes(t.raw.frontmatter, raw.frontmatter)
    if changes is None or len(changes) != len(fm_edits):
        return None
    for a, b in changes:
        if not (isinstance(a, str) and a.endswith(named) and b == a[: len(a) - len(named)] + ident):
            return None
    return data if _links_fit(t, raw, matched, ident) else None


FIXERS: dict[str, Callable[[Issue, Target], bytes | None]] = {
    "invalid_field": fix_select,
    "invalid_date": fix_date,
    "missing_type": fix_type,
    "noncanonical_link": fix_link,
}
