"""Schema rules: unknown_type, subdirectory_mismatch, missing_required, invalid_field,
invalid_date, unknown_field, invalid_status (SPEC §4, §8)."""

from __future__ import annotations

import difflib
from typing import Any

from ..model.entry import LINK_VALUES, Entry, is_empty, target_text
from ..model.issue import Issue
from ..model.kbschema import FieldSchema, KBSchema, TypeSchema
from ..yamlread.lines import yaml_kind
from . import RULES
from .fields import Misfit, check_field, check_rule, show

# The `date` key is a date wherever it appears, unless the type declares it otherwise (SPEC §8).
_DATE_KEY = FieldSchema(name="date", type="date", declared_type="date", line=0)


def unknown_type(entry: Entry, schema: KBSchema) -> Issue | None:
    if entry.type in schema.types:
        return None
    known = sorted(schema.types)
    near = difflib.get_close_matches(entry.type, known, n=1, cutoff=0.75)
    hint = f"; did you mean '{near[0]}'?" if near else ""
    where = "in kb.yaml" if schema.kb_yaml is not None else "(there is no kb.yaml above the file)"
    return RULES["unknown_type"].issue(
        entry.site,
        f"Entry '{entry.id}' has type '{entry.type}', which is not declared {where}{hint}",
        line=entry.key_line("type") if "type" in entry.raw.frontmatter else 1,
        field="type",
        severity="error" if schema.enforce else None,
    )


def subdirectory_mismatch(entry: Entry, ts: TypeSchema) -> Issue | None:
    sub = ts.subdirectory
    if not sub or entry.relpath.startswith(sub + "/"):
        return None
    return RULES["subdirectory_mismatch"].issue(
        entry.site,
        f"Entry '{entry.id}' of type '{ts.name}' is not under {sub}/",
        line=entry.key_line("type") if "type" in entry.raw.frontmatter else 1,
        field="type",
    )


def missing_required(entry: Entry, ts: TypeSchema) -> list[Issue]:
    issues = []
    for name in ts.required_fields():
        if is_empty(entry.metadata.get(name)):
            present = name in entry.metadata
            issues.append(
                RULES["missing_required"].issue(
                    entry.site,
                    f"Entry '{entry.id}' {'has an empty' if present else 'is missing'} required field '{name}'",
                    line=entry.field_line(name),
                    field=name,
                )
            )
    return issues


def _misfit_issue(entry: Entry, name: str, misfit: Misfit, enforce: bool) -> Issue:
    if misfit.rule == "invalid_date":
        severity = None
    elif misfit.lenient:
        severity = "warning"
    else:
        severity = "error" if enforce else None
    return RULES[misfit.rule].issue(
        entry.site, misfit.message, line=entry.field_line(name), field=name, severity=severity
    )


def loader_dates(entry: Entry) -> tuple[list[Issue], set[str]]:
    """invalid_date for values the YAML loader could not construct (`date: 2025-13-45`)."""
    issues = []
    fields = set()
    for line, text in entry.raw.bad_dates:
        name = entry.raw.key_on_line(line)
        if name is not None:
            fields.add(name)
        subject = f"Field '{name}'" if name else "Value"
        issues.append(
            RULES["invalid_date"].issue(
                entry.site,
                f"{subject} is not a real date (YYYY-MM-DD): {show(text)}",
                line=line,
                field=name,
                discriminator=text,
            )
        )
    return issues, fields


def field_values(entry: Entry, ts: TypeSchema | None, schema: KBSchema, skip: set[str]) -> list[Issue]:
    """Field types and `validation.rules`; a value that is not a real date is only invalid_date."""
    specs = dict(ts.fields) if ts is not None else {}
    if "date" not in specs:
        specs["date"] = _DATE_KEY
    metadata = entry.metadata
    misfits: dict[str, list[Misfit]] = {}
    for name, spec in specs.items():
        value = metadata.get(name)
        if name in skip or is_empty(value):
            continue
        misfit = check_field(spec, value)
        if misfit is not None:
            misfits.setdefault(name, []).append(misfit)
    for rule in schema.rules:
        value = metadata.get(rule.field)
        if rule.field in skip or is_empty(value):
            continue
        for misfit in check_rule(rule, value):
            misfits.setdefault(rule.field, []).append(misfit)
    issues = []
    for name, found in misfits.items():
        dates = [m for m in found if m.rule == "invalid_date"]
        seen: set[str] = set()
        for misfit in dates[:1] or found:
            if misfit.message not in seen:
                seen.add(misfit.message)
                issues.append(_misfit_issue(entry, name, misfit, schema.enforce))
    return issues


def unknown_fields(entry: Entry, ts: TypeSchema) -> list[Issue]:
    if not ts.knows_keys:
        return []
    issues = []
    for raw_key in entry.raw.frontmatter:
        key = str(raw_key)
        if ts.knows(key):
            continue
        near = difflib.get_close_matches(key, sorted(ts.known_keys()), n=1, cutoff=0.75)
        hint = f"; did you mean '{near[0]}'?" if near else ""
        issues.append(
            RULES["unknown_field"].issue(
                entry.site,
                f"Field '{key}' is not a field of type '{ts.name}'{hint}",
                line=entry.key_line(key),
                field=key,
            )
        )
    return issues


def link_items(entry: Entry) -> list[Issue]:
    """`links:` and `references:` items that are no link at all, which the link graph passes by:
    say so, each at its line."""
    issues = []
    for key in ("links", "references"):
        value = entry.raw.frontmatter.get(key)
        if is_empty(value):  # null, '', [] or {}: no links, as frontmatter_links reads them
            continue
        key_line = entry.key_line(key)
        if not isinstance(value, LINK_VALUES[key]):
            issues.append(_link_issue(entry, key, f"{key} must be a list of links, got {yaml_kind(value)}", key_line))
            continue
        items = value if isinstance(value, list) else [value]
        lines = None  # found only for an entry that has such an item
        for n, item in enumerate(items):
            why = _no_link(item, key)
            if why is None:
                continue
            if lines is None:
                lines = entry.raw.list_item_lines(key_line, len(items)) if isinstance(value, list) else []
            where = f"{key} item {n + 1}" if isinstance(value, list) else key
            issues.append(_link_issue(entry, key, f"{where} {why}", lines[n] if n < len(lines) else key_line, n))
    return issues


def _no_link(item: Any, key: str) -> str | None:
    """Why ITEM of KEY is no link, or None when it is one."""
    if isinstance(item, dict) and key == "links":
        target = item.get("target", item.get("to"))
        if target in (None, ""):
            if "target" in item or "to" in item:
                return "has an empty 'target'"
            return f"has no 'target' (it has: {', '.join(str(k) for k in item) or 'nothing'})"
        if target_text(target) is not None:
            return None
        return "has an empty 'target'" if isinstance(target, str) else f"has a target that is {yaml_kind(target)}"
    if target_text(item) is not None:
        return None
    return f"is not a link: {'an empty string' if isinstance(item, str) else yaml_kind(item)}"


def _link_issue(entry: Entry, key: str, message: str, line: int, n: int = 0) -> Issue:
    return RULES["invalid_field"].issue(entry.site, message, line=line, field=key, discriminator=f"{key}:{n}")


def core_shapes(entry: Entry, ts: TypeSchema | None) -> list[Issue]:
    """The keys every entry may have, written in a shape kblint cannot read as meant: `tags` or
    `aliases` that are no list of names, a `status` that is a list or a mapping, a `title` that
    YAML reads as true or false (`title: No`). A key TS declares as a field is checked as its field."""
    fm = {k: v for k, v in entry.raw.frontmatter.items() if ts is None or k not in ts.fields}
    found = []
    for key in ("tags", "aliases"):
        wrong = _not_names(fm.get(key))
        if wrong is not None:
            found.append((key, f"{key} must be a list of names, got {wrong}"))
    if isinstance(fm.get("status"), (list, dict)):
        found.append(("status", f"status must be a text, got {yaml_kind(fm['status'])}"))
    if isinstance(fm.get("title"), bool):
        found.append(
            ("title", "title is read as true or false, as YAML reads an unquoted yes, no, on or off: quote it")
        )
    return [
        RULES["invalid_field"].issue(entry.site, message, line=entry.key_line(key), field=key) for key, message in found
    ]


def _not_names(value: object) -> str | None:
    if isinstance(value, dict):
        return yaml_kind(value)
    inner = next((v for v in value if isinstance(v, (list, dict))), None) if isinstance(value, list) else None
    return None if inner is None else f"a list holding {yaml_kind(inner)}"


def invalid_status(entry: Entry, ts: TypeSchema) -> Issue | None:
    wf = ts.workflow
    if wf is None or not wf.states or entry.status is None or entry.status in wf.states:
        return None
    return RULES["invalid_status"].issue(
        entry.site,
        f"Status {show(entry.status)} is not one of the workflow states of '{ts.name}': {', '.join(wf.states)}",
        line=entry.key_line("status"),
        field="status",
    )


def check(entry: Entry, schema: KBSchema, *, located: bool = True) -> list[Issue]:
    """All schema rules for ENTRY. located=False: the entry's path is not where it will live."""
    issues, reported_dates = loader_dates(entry)
    issues.extend(link_items(entry))
    ts = schema.types.get(entry.type)
    issues.extend(core_shapes(entry, ts))
    if ts is None:
        unknown = unknown_type(entry, schema)
        if unknown is not None:
            issues.append(unknown)
        issues.extend(field_values(entry, None, schema, reported_dates))
        return issues
    if located:
        issue = subdirectory_mismatch(entry, ts)
        if issue:
            issues.append(issue)
    issues.extend(missing_required(entry, ts))
    issues.extend(field_values(entry, ts, schema, reported_dates))
    issues.extend(unknown_fields(entry, ts))
    issue = invalid_status(entry, ts)
    if issue:
        issues.append(issue)
    return issues
