"""Structure rules that need only the entry: duplicate_key, missing_title, empty_body, missing_type.

The graph-wide structure rules (duplicate_id, broken_link, unresolved_external, orphan_entry)
live in `kblint.rules.links`; parse_error is made where files are read (`kblint.engine.pass_entries`).
"""

from __future__ import annotations

from collections import Counter

from ..model.entry import Entry
from ..model.issue import Issue
from ..model.kbschema import BODYLESS_TYPES, KBSchema
from ..yamlread.lines import yaml_kind
from . import RULES


def duplicate_keys(entry: Entry) -> list[Issue]:
    rule = RULES["duplicate_key"]
    issues = []
    repeats: Counter[str] = Counter()
    for r in entry.raw.repeated_keys:
        # the fingerprint holds the key and how many of its repeats come before, not the line:
        # stable when lines move above it
        repeats[r.key] += 1
        issues.append(
            rule.issue(
                entry.site,
                r.message[0].upper() + r.message[1:],
                line=r.line,
                column=r.column,
                field=r.key if r.top else None,
                discriminator=f"{r.key}#{repeats[r.key]}",
            )
        )
    return issues


def missing_title(entry: Entry) -> Issue | None:
    if entry.title is not None and entry.title.strip():
        return None
    present = "title" in entry.raw.frontmatter
    given = entry.raw.frontmatter.get("title")
    what = "no title" if not present else _not_a_text(given, "title") or "an empty title"
    return RULES["missing_title"].issue(
        entry.site, f"Entry '{entry.id}' has {what}", line=entry.key_line("title") if present else 1, field="title"
    )


def _not_a_text(value: object, key: str) -> str | None:
    """`a title that is a list, not a text`, for a list or a mapping where a text belongs."""
    return f"a {key} that is {yaml_kind(value)}, not a text" if isinstance(value, (list, dict)) else None


def empty_body(entry: Entry) -> Issue | None:
    if entry.type in BODYLESS_TYPES or entry.body.strip():
        return None
    return RULES["empty_body"].issue(entry.site, f"Entry '{entry.id}' has an empty body")


def missing_type(entry: Entry, schema: KBSchema, defaulted: bool) -> Issue | None:
    if not defaulted:
        return None
    wrong = _not_a_text(entry.raw.frontmatter.get("type"), "type")
    if wrong is not None:
        message = f"Entry '{entry.id}' has {wrong}; checked as 'note'"
        return RULES["missing_type"].issue(entry.site, message, line=entry.key_line("type"), field="type")
    top = entry.relpath.split("/", 1)[0] if "/" in entry.relpath else ""
    holding = schema.types_holding(entry.relpath)
    if len(holding) == 1:
        sub = schema.types[holding[0]].subdirectory
        where = (
            f"it is under {sub}/, the subdirectory of type '{holding[0]}', "
            "but a type is inferred from the top folder alone"
        )
    else:
        where = f"its top folder '{top}' is no type's subdirectory" if top else "it is at the KB's top"
    message = f"Entry '{entry.id}' has no type and {where}; checked as 'note'"
    return RULES["missing_type"].issue(entry.site, message, field="type")


def check(entry: Entry, schema: KBSchema, defaulted: bool) -> list[Issue]:
    found = (missing_title(entry), empty_body(entry), missing_type(entry, schema, defaulted))
    return duplicate_keys(entry) + [issue for issue in found if issue is not None]
