"""`kblint migrate`: propose bindings for plain-string rubric items (SPEC §10).

A string item that is not policy-shaped is a judgment item: without an LLM it is never
evaluated. Many of them restate something kblint can check deterministically ("Writing has a
date" when `date` is required, "Entry has at least one tag", "has a Sources section"). `propose`
reads `kb.yaml`, matches each such string against a small, conservative grammar using the KB's
own schema, and returns the proposals with the whole file before and after. `write` applies them.

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

import contextlib
import difflib
import enum
import json
import os
import re
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from . import yamlread
from .checkers.registry import registry
from .infra.files import FileProblem, read_regular_file
from .model.kbschema import KBSchema, RubricItem, TypeSchema, schema_from_text
from .model.plan import Binding, bind, build_plan
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
# Matching an item's text.

_NUMBERS = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
}
_DETERMINERS = {"each", "every", "any", "all", "a", "an", "the", "this", "its", "their"}
_GENERIC = {"entry", "entries"}
_ARTICLES = r"(?:an?|the|its|their)\s+"
_FIELD_NAME_WORDS = 3  # "the review status field" names a field; a longer phrase does not
_HAVE = r"(?:has|have|includes?|contains?|records?|specif(?:y|ies)|lists?|provides?)"
_PARTICIPLES = (
    r"(?:described|documented|recorded|specified|set|given|filled(?:\s+(?:in|out))?|present|provided|"
    r"populated|included|listed|noted|stated)"
)
_MODAL = re.compile(r"^(?:must|should|shall)\s+(?:always\s+)?", re.I)
_STUB = re.compile(r"^unless\s+(?:it\s+is\s+|the\s+entry\s+is\s+)?an?\s+stub$", re.I)
_PREFERENCE = re.compile(r"^(?:[\w][\w\s-]*\s+preferred|preferably\s+[\w][\w\s-]*)$", re.I)
_COUNT = r"(?P<n>\d+|an?|one|two|three|four|five|six|seven|eight|nine|ten)"
_ATLEAST = r"(?:at\s+least|a\s+minimum\s+of)"

_TAGS = [
    re.compile(rf"^{_HAVE}\s+{_ATLEAST}\s+{_COUNT}\s+tags?$", re.I),
    re.compile(rf"^{_HAVE}\s+{_COUNT}\s+or\s+more\s+tags$", re.I),
    re.compile(rf"^{_HAVE}\s+(?P<n>an?)\s+tag$", re.I),
    re.compile(rf"^{_HAVE}\s+tags$", re.I),
    re.compile(r"^(?:is|are|be)\s+tagged$", re.I),
]
_ENTRIES = r"(?:(?:other|related|another|further)\s+)?(?:kb\s+)?entr(?:y|ies)"
_OUTLINKS = [
    re.compile(rf"^links?\s+to\s+{_ATLEAST}\s+{_COUNT}\s+{_ENTRIES}$", re.I),
    re.compile(rf"^links?\s+to\s+{_COUNT}\s+or\s+more\s+{_ENTRIES}$", re.I),
    re.compile(rf"^links?\s+to\s+(?P<n>another|an?)\s+{_ENTRIES}$", re.I),
    re.compile(r"^links?\s+to\s+(?:other|related)\s+entries$", re.I),
    re.compile(rf"^{_HAVE}\s+{_ATLEAST}\s+{_COUNT}\s+(?:outgoing\s+)?(?:links|outlinks|link|outlink)$", re.I),
    re.compile(rf"^{_HAVE}\s+{_COUNT}\s+or\s+more\s+(?:outgoing\s+)?(?:links|outlinks)$", re.I),
    re.compile(rf"^{_HAVE}\s+(?:outgoing\s+links|outlinks)$", re.I),
]
_INLINKS = [
    re.compile(rf"^(?:is|are|be)\s+linked\s+(?:to\s+)?from\s+{_ATLEAST}\s+{_COUNT}\s+{_ENTRIES}$", re.I),
    re.compile(rf"^(?:is|are|be)\s+linked\s+(?:to\s+)?from\s+(?P<n>another|an?)\s+{_ENTRIES}$", re.I),
    re.compile(rf"^{_HAVE}\s+{_ATLEAST}\s+{_COUNT}\s+(?:incoming\s+links?|inlinks?|backlinks?)$", re.I),
    re.compile(rf"^{_HAVE}\s+(?:incoming\s+links|inlinks|backlinks)$", re.I),
]
_HEADING = r"(?P<h>'[^']+'|\"[^\"]+\"|##\s*[^#\s][^#]*?|[A-Z0-9][\w&'-]*(?:\s+[A-Z0-9&][\w&'-]*)*)"
_SECTIONS = [
    re.compile(rf"^(?i:{_HAVE}\s+(?:an?\s+|the\s+)?){_HEADING}(?i:\s+section)$"),
    re.compile(rf"^(?i:{_HAVE}\s+an?\s+section\s+(?:called|named|titled|headed)\s+){_HEADING}$"),
]
_CITES = re.compile(r"^cites?\s+(?:at\s+least\s+one|one|an?|its|their)?\s*sources?$", re.I)
_ACTIVE_FIELDS = re.compile(rf"^{_HAVE}\s+(?P<list>.+?)(?:\s+fields?)?(?:\s+{_PARTICIPLES})?$", re.I)
_PASSIVE_FIELDS = re.compile(rf"^(?P<list>.+?)(?:\s+fields?)?\s+(?:is|are|be)\s+(?:always\s+)?{_PARTICIPLES}$", re.I)
# Words that make an item a judgment whatever the rest says.
_SUBJECTIVE = re.compile(
    r"\b(?:accurate(?:ly)?|specific|clear(?:ly)?|meaningful|explain\w*|significan\w*|relevant|appropriate\w*|"
    r"good|quality|well|thorough\w*|consistent\w*|primary|where|when|if|unless|why|how)\b",
    re.I,
)


@dataclass(slots=True)
class _Subject:
    kind: str  # "generic" | "type" | "none"
    type_name: str | None
    body: bool  # "Entry body has ..." / "Body has ...": only sections can follow
    rest: str


def _type_forms(schema: KBSchema) -> dict[str, str | None]:
    """Spellings of each type name as an item's subject: writing, writings, people, note type..."""
    forms: dict[str, str | None] = {}
    for name in schema.types:
        base = name.lower()
        spaced = re.sub(r"[_-]+", " ", base)
        spellings = {base, spaced}
        for s in (base, spaced):
            spellings.add(s + "s")
            if s.endswith(("s", "x", "ch", "sh")):
                spellings.add(s + "es")
            if s.endswith("y") and len(s) > 1 and s[-2] not in "aeiou":
                spellings.add(s[:-1] + "ies")
        if base == "person":
            spellings.add("people")
        for s in spellings:
            forms[s] = name if forms.get(s, name) == name else None  # ambiguous spelling: no type
    return forms


def _subjects(text: str, schema: KBSchema) -> list[_Subject]:
    """The ways TEXT splits into a subject and a predicate (most specific first)."""
    tokens = text.split(" ")
    out: list[_Subject] = []
    forms = _type_forms(schema)
    i = 1 if tokens and tokens[0].lower() in _DETERMINERS else 0
    found: tuple[str, str | None, int] | None = None
    if i < len(tokens) and tokens[i].lower() in _GENERIC:
        found = ("generic", None, i + 1)
    else:
        for n in (3, 2, 1):
            phrase = " ".join(tokens[i : i + n]).lower()
            if len(tokens) > i + n and phrase in forms and forms[phrase] is not None:
                j = i + n
                if j < len(tokens) and tokens[j].lower() in _GENERIC | {"type"}:
                    j += 1
                found = ("type", forms[phrase], j)
                break
    body = False
    if found is None and i < len(tokens) and tokens[i].lower() == "body":
        found, body = ("generic", None, i + 1), True
    elif found is not None and found[2] < len(tokens) and tokens[found[2]].lower() == "body":
        found, body = (found[0], found[1], found[2] + 1), True
    if found is not None and found[2] < len(tokens):
        out.append(_Subject(found[0], found[1], body, " ".join(tokens[found[2] :])))
    out.append(_Subject("none", None, False, text))
    return out


def _count(word: str) -> int | None:
    word = word.lower()
    if word.isdigit():
        return int(word)
    if word == "another":
        return 1
    return _NUMBERS.get(word)


def _strip_parenthetical(text: str) -> tuple[str, str | None, str | None]:
    """TEXT without a trailing "(...)", and which kind it was: "stub", "preference", or None."""
    m = re.match(r"^(.*?)\s*\(([^()]*)\)$", text)
    if not m:
        return text, None, None
    inner = m.group(2).strip()
    if _STUB.match(inner):
        return m.group(1), "stub", inner
    if _PREFERENCE.match(inner):
        return m.group(1), "preference", inner
    return text, "other", inner


def _normalize(text: str) -> str:
    text = " ".join(text.split())
    return text.rstrip(".").rstrip()


@dataclass(slots=True)
class _Match:
    replacement: dict
    reason: str


def _field_names(ts: TypeSchema) -> dict[str, str]:
    names = list(ts.fields) + list(ts.required) + list(ts.optional)
    return {str(n).lower(): str(n) for n in names}


def _resolve_field(part: str, targets: list[TypeSchema]) -> str | None:
    """The field a list member names, declared by every target type; None when it is not one."""
    part = part.strip()
    part = re.sub(rf"^{_ARTICLES}", "", part, flags=re.I)
    part = re.sub(r"\s+(?:field|value|classification)$", "", part, flags=re.I).strip()
    if not part or len(part.split()) > _FIELD_NAME_WORDS:
        return None
    keys = {part.lower(), re.sub(r"[\s-]+", "_", part.lower()), re.sub(r"[\s_]+", "-", part.lower())}
    actual: str | None = None
    for ts in targets:
        names = _field_names(ts)
        hits = {names[k] for k in keys if k in names}
        if len(hits) != 1:
            return None
        hit = hits.pop()
        if actual is not None and hit != actual:
            return None
        actual = hit
    return actual


def _split_list(text: str) -> tuple[list[str], str] | None:
    text = re.sub(r"^(?:both|either)\s+", "", text.strip(), flags=re.I)
    has_and = re.search(r"\band\b|&", text, re.I) is not None
    has_or = re.search(r"\bor\b", text, re.I) is not None
    if has_and and has_or:
        return None
    parts = [p for p in re.split(r"\s*,\s*(?:(?:and|or)\s+)?|\s+(?:and|or)\s+|\s*&\s*", text, flags=re.I)]
    if any(not p.strip() for p in parts):
        return None
    return parts, "or" if has_or else "and"


def _fields_match(list_text: str, targets: list[TypeSchema], type_label: str) -> _Match | None:
    split = _split_list(list_text)
    if split is None:
        return None
    parts, conj = split
    names: list[str] = []
    for part in parts:
        bare = re.sub(rf"^{_ARTICLES}", "", part.strip(), flags=re.I)
        bare = re.sub(r"\s+(?:field|value)$", "", bare, flags=re.I)
        if bare.lower() == "title":
            continue  # checked by missing_title: never a reason on its own, never needs a checker
        name = _resolve_field(part, targets)
        if name is None:
            return None
        if name not in names:
            names.append(name)
    if not names:
        return None
    required = [n for n in names if all(n in ts.required_fields() for ts in targets)]
    optional = [n for n in names if n not in required]

    def quoted(ns: list[str]) -> str:
        return ", ".join(f"'{n}'" for n in ns)

    if conj == "or" and len(names) > 1:
        if required:
            name = required[0]
            return _Match(
                {"covered_by": "schema", "field": name},
                f"{quoted([name])} is required for {type_label}, so one of {quoted(names)} is always "
                "there: the schema already checks it",
            )
        return _Match(
            {"checker": "has_any_field", "params": {"fields": names}},
            f"{quoted(names)} are declared, optional fields of {type_label}",
        )
    if not optional:
        spec = {"field": names[0]} if len(names) == 1 else {"fields": names}
        return _Match(
            {"covered_by": "schema", **spec},
            f"{quoted(names)} {'is' if len(names) == 1 else 'are'} required for {type_label}: the "
            "schema already checks it",
        )
    if len(optional) == 1:
        extra = f"; {quoted(required)} required, checked by the schema" if required else ""
        return _Match(
            {"checker": "has_field", "params": {"field": optional[0]}},
            f"{quoted(optional)} is a declared, optional field of {type_label}{extra}",
        )
    return None  # "has A and B" with two optional fields: no single checker says it


class _Next(enum.Enum):
    """A predicate matcher's answer when none of its patterns matches: the next matcher is tried."""

    TRY = 0


_Outcome = _Match | None | _Next  # None: the predicate matched but says nothing a checker can check


def _at_least(pattern: re.Pattern[str], m: re.Match[str]) -> int | None:
    """The count an "at least N" pattern matched; 1 when it names none."""
    return _count(m.group("n")) if "n" in pattern.groupindex and m.group("n") else 1


def _match_tags(rest: str, paren: str | None, note: str) -> _Outcome:
    for pattern in _TAGS:
        m = pattern.match(rest)
        if m:
            n = _at_least(pattern, m)
            if n is None or n < 1:
                return None
            if n == 1:
                return _Match({"checker": "has_tags"}, "at least one tag is what has_tags checks" + note)
            return _Match(
                {"policy": f"tags count >= {n}"}, f"at least {n} tags is the policy 'tags count >= {n}'" + note
            )
    return _Next.TRY


def _match_outlinks(rest: str, paren: str | None, note: str) -> _Outcome:
    for pattern in _OUTLINKS:
        m = pattern.match(rest)
        if m:
            n = _at_least(pattern, m)
            if n is None or n < 1 or paren == "other":
                return None
            if n == 1:
                return _Match(
                    {"checker": "has_outlinks"},
                    "at least one outgoing link is what has_outlinks checks (stubs are exempt)" + note,
                )
            if paren == "stub":
                return _Match(
                    {"checker": "has_outlinks", "params": {"min": n}},
                    f"at least {n} outgoing links, stubs exempt, is has_outlinks with min {n}",
                )
            return _Match(
                {"policy": f"outlinks count >= {n}"},
                f"at least {n} outgoing links is the policy 'outlinks count >= {n}'" + note,
            )
    return _Next.TRY


def _match_inlinks(rest: str, paren: str | None, note: str) -> _Outcome:
    for pattern in _INLINKS:
        m = pattern.match(rest)
        if m:
            n = _at_least(pattern, m)
            if n is None or n < 1:
                return None
            if n == 1:
                return _Match(
                    {"checker": "has_inlinks"}, "at least one incoming link is what has_inlinks checks" + note
                )
            return _Match(
                {"policy": f"inlinks count >= {n}"},
                f"at least {n} incoming links is the policy 'inlinks count >= {n}'" + note,
            )
    return _Next.TRY


def _match_cites(rest: str, paren: str | None, note: str) -> _Outcome:
    if not _CITES.match(rest):
        return _Next.TRY
    return _Match(
        {"checker": "cites_source"},
        "citing a source is what cites_source checks (a sources/source/source_url/url/"
        "references field, a Sources/References/Source/Bibliography section with content, "
        "or a 'Source:' line)" + note,
    )


def _match_section(rest: str, paren: str | None, note: str) -> _Outcome:
    for pattern in _SECTIONS:
        m = pattern.match(rest)
        if m:
            heading = m.group("h").strip()
            if heading[:1] in "'\"":
                heading = heading[1:-1].strip()
            if heading.startswith("##"):
                heading = heading[2:].strip()
            if heading.startswith("#"):
                return None  # "### X" is not a level-2 section
            heading = heading.rstrip(":").strip()
            if not heading or heading.lower() in ("a", "an", "the", "body"):
                return None
            return _Match(
                {"checker": "body_has_section", "params": {"heading": heading}},
                f"a level-2 '## {heading}' heading is what body_has_section checks" + note,
            )
    return _Next.TRY


def _predicate_matchers(about_body: bool, plain: bool) -> list[Callable[[str, str | None, str], _Outcome]]:
    """The matchers that apply, in order: counts and citations are about the entry, sections about its body."""
    if not plain:  # "(other ...)" and "(stub ...)" qualify only the outgoing-link count
        return [] if about_body else [_match_outlinks]
    if about_body:
        return [_match_section]
    return [_match_tags, _match_outlinks, _match_inlinks, _match_cites, _match_section]


def _match_predicate(
    rest: str, subject: _Subject, paren: str | None, paren_text: str | None, targets: list[TypeSchema], type_label: str
) -> _Match | None:
    rest = _MODAL.sub("", rest)
    note = ""
    if paren == "preference":
        note = f"; the preference '({paren_text})' is advice, not a requirement, and is not checked"
    plain = paren in (None, "preference")
    for matcher in _predicate_matchers(subject.body, plain):
        outcome = matcher(rest, paren, note)
        if outcome is not _Next.TRY:
            return outcome
    if not plain or subject.body or _SUBJECTIVE.search(rest):
        return None
    m = _ACTIVE_FIELDS.match(rest) or _PASSIVE_FIELDS.match(rest)
    if m is not None:
        found = _fields_match(m.group("list"), targets, type_label)
        if found is not None:
            found.reason += note
        return found
    return None


def match_item(item: RubricItem, schema: KBSchema) -> tuple[dict, str] | None:
    """The binding a string item plainly states, as (replacement mapping, reason), or None."""
    if not isinstance(item.raw, str):
        return None
    text = _normalize(item.raw)
    if not text:
        return None
    core, paren, paren_text = _strip_parenthetical(text)
    if paren == "other":
        return None
    for subject in _subjects(core, schema):
        applies_to: list[str] | None = None
        if item.scope == "type":
            if item.type_name is None:
                continue  # a type's item names its type
            if subject.kind == "type" and subject.type_name != item.type_name:
                continue  # a type's item about another type: not plain
            target_names = [item.type_name]
            label = f"type '{item.type_name}'"
        elif subject.kind == "type":
            if subject.type_name is None:
                continue  # a type subject names its type
            target_names = [subject.type_name]
            applies_to = [subject.type_name]
            label = f"type '{subject.type_name}'"
        else:
            target_names = sorted(schema.types)
            label = "every type"
        targets = [schema.types[n] for n in target_names if n in schema.types]
        if len(targets) != len(target_names):
            continue
        found = _match_predicate(subject.rest, subject, paren, paren_text, targets, label)
        if found is None:
            continue
        replacement = {"text": item.raw, **found.replacement}
        reason = found.reason
        if applies_to:
            replacement["applies_to"] = applies_to
            reason += f"; the KB-level item names type '{applies_to[0]}', so it applies to that type only"
        return replacement, reason
    return None


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


def _node_counts(root: Node) -> dict[int, int]:
    """How many times each node is reached (an alias reaches its anchor's node again)."""
    counts: dict[int, int] = {}
    stack = [root]
    while stack:
        node = stack.pop()
        counts[id(node)] = counts.get(id(node), 0) + 1
        if counts[id(node)] > 1:
            continue
        if isinstance(node, MappingNode):
            for k, v in node.value:
                stack.extend((k, v))
        elif isinstance(node, SequenceNode):
            stack.extend(node.value)
    return counts


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


def _span(node: Node, text: str, counts: dict[int, int], seq: Node | None, item: RubricItem) -> _Span | None:
    if not isinstance(node, ScalarNode) or node.tag != yamlread.STR_TAG:
        return None
    if counts.get(id(node), 0) > 1 or counts.get(id(seq), 0) > 1:
        return None  # shared through an anchor: editing it would change other places
    if node.value != item.raw or node.start_mark.line + 1 != item.line:
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


def _read(path: str) -> tuple[str, int]:
    """The file's text exactly (line endings kept) and the length of a BOM prefix (0 or 1)."""
    if not os.path.lexists(path):
        raise MigrationError(f"{path}: not found (a KB directory holds a kb.yaml)", path)
    try:
        data = read_regular_file(path)
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
    counts = _node_counts(root) if root is not None else {}
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
            span = _span(nodes[i], body, counts, seq, item) if found and nodes is not None else None
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


def unified_diff(result: MigrationResult) -> str:
    """The change as a unified diff of kb.yaml ("" when nothing changes)."""
    if not result.changed:
        return ""
    a = result.original.splitlines(keepends=True)
    b = result.migrated.splitlines(keepends=True)
    out = []
    name = result.path if os.path.isabs(result.path) else os.path.normpath(result.path)
    before, after = (name, name) if os.path.isabs(name) else (f"a/{name}", f"b/{name}")
    for line in difflib.unified_diff(a, b, fromfile=before, tofile=after):
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
    directory = os.path.dirname(os.path.abspath(result.path))
    fd, tmp = tempfile.mkstemp(prefix=".kb.yaml.", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(result.migrated)
        with contextlib.suppress(OSError):
            os.chmod(tmp, os.stat(result.path).st_mode & 0o7777)
        os.replace(tmp, result.path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return True
