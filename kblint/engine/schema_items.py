"""Running a JSON Schema item on one entry in pass 1: its frontmatter, as JSON data, validated
against the item's compiled schema (kblint/model/json_schema.py). The outcome is scored; each
error is a rubric_violation at the line of the field it is about."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..model.entry import Entry
from ..model.issue import Issue
from ..model.json_schema import JSON_SCHEMA, MAX_ERRORS, CannotValidate, SchemaError, validation_errors
from ..model.plan import Binding
from ..rules import RULES
from ..userpattern import PatternTooSlow
from ..yamlread.lines import json_ready
from . import scoring

if TYPE_CHECKING:
    from .checks import Subject


def run_json_schema(b: Binding, subject: Subject) -> list[Issue]:
    entry = subject.checked
    if not isinstance(entry, Entry):  # a JSON Schema item never waits for the graph
        raise TypeError("a JSON Schema item runs on the entry in pass 1")
    try:
        errors = validation_errors(b.validator, _instance(entry))
    except (PatternTooSlow, CannotValidate) as exc:
        return [_failed(b, subject, str(exc))]
    except Exception as exc:  # noqa: BLE001 - a schema the library cannot apply is reported, the run goes on
        return [_failed(b, subject, f"cannot validate: {type(exc).__name__}: {exc}")]
    scoring.record(subject.facts, b, not errors)
    issues = [_violation(b, subject, entry, error) for error in errors[:MAX_ERRORS]]
    if len(errors) > MAX_ERRORS:
        more = len(errors) - MAX_ERRORS
        errors_word = "errors" if more > 1 else "error"
        message = f"{more} more JSON Schema {errors_word} of '{b.text}' (the first {MAX_ERRORS} are shown)"
        issues.append(_issue(b, subject, message, 1, None, f"{b.id} more"))
    return issues


def _instance(entry: Entry) -> dict[str, Any]:
    """The frontmatter as JSON data, without the `kblint:` key of suppressions (no field of the entry)."""
    return {key: value for key, value in json_ready(entry.raw.frontmatter).items() if key != "kblint"}


def _failed(b: Binding, subject: Subject, why: str) -> Issue:
    message = f"JSON Schema item '{b.text}': {why}"
    return RULES["checker_error"].issue(subject.site, message, rubric_item=b.text, checker=JSON_SCHEMA)


def _violation(b: Binding, subject: Subject, entry: Entry, error: SchemaError) -> Issue:
    name = str(error.path[0]) if error.path else None
    message = f"{error.json_path}: {error.message}"
    discriminator = f"{b.id} {error.json_path} {error.keyword}"
    return _issue(b, subject, message, _line(subject, entry, error), name, discriminator)


def _issue(b: Binding, subject: Subject, message: str, line: int, name: str | None, discriminator: str) -> Issue:
    return RULES["rubric_violation"].issue(
        subject.site,
        message,
        line=line,
        field=name,
        severity=b.severity,
        discriminator=discriminator,
        tier="schema",
        rubric_item=b.text,
        checker=JSON_SCHEMA,
        item_id=b.id,
    )


def _line(subject: Subject, entry: Entry, error: SchemaError) -> int:
    """The line of the top-level field the error is about, or of the list item (`sources[2]`)
    when the field holds a block list; 1 for an error about the whole frontmatter."""
    if not error.path:
        return 1
    key = str(error.path[0])
    line = subject.field_line(key)
    index = error.path[1] if len(error.path) > 1 else None
    value = entry.raw.frontmatter.get(key)
    if isinstance(index, int) and isinstance(value, list) and line > 1:
        items = entry.raw.list_item_lines(line, len(value))
        if index < len(items):
            return items[index]
    return line
