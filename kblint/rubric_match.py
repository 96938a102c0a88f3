"""Which deterministic check a plain-string rubric item plainly states, using the KB's own schema
(`kblint migrate` proposes the binding, the rubric tier reports items that only restate the schema).

A small, conservative grammar: "Writing has a date" when `date` is required is the schema's,
"Entry has at least one tag" is has_tags, "has a Sources section" is body_has_section. Anything it
does not match exactly is left alone: subjective wording ("describes the specific relationship",
"explains significance"), conditions ("where relevant"), fields the type does not declare, mixed
and/or lists, mapping items, policy-shaped strings.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Callable
from dataclasses import dataclass

from .model.kbschema import KBSchema, RubricItem, TypeSchema

__all__ = ["match_item"]

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
