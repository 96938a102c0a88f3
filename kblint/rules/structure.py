"""Structure rules that need only the entry: missing_title, empty_body, missing_type.

The graph-wide structure rules (duplicate_id, broken_link, unresolved_external, orphan_entry)
live in `kblint.graph`; parse_error is raised where files are read (`kblint.engine`).
"""

from __future__ import annotations

from ..entry import Entry
from ..issue import Issue
from ..kbschema import BODYLESS_TYPES
from .common import entry_issue


def missing_title(entry: Entry) -> Issue | None:
    if entry.title is None or not entry.title.strip():
        line = entry.key_line("title") if "title" in entry.raw.frontmatter else 1
        what = "an empty title" if "title" in entry.raw.frontmatter else "no title"
        return entry_issue(entry, "missing_title", f"Entry '{entry.id}' has {what}", line=line, field="title")
    return None


def empty_body(entry: Entry) -> Issue | None:
    if entry.type in BODYLESS_TYPES or entry.body.strip():
        return None
    return entry_issue(entry, "empty_body", f"Entry '{entry.id}' has an empty body")


def missing_type(entry: Entry, defaulted: bool) -> Issue | None:
    if not defaulted:
        return None
    return entry_issue(entry, "missing_type",
                       f"Entry '{entry.id}' has no type and no type's subdirectory matches its folder; "
                       "checked as 'note'", field="type")


def check(entry: Entry, defaulted: bool) -> list[Issue]:
    found = (missing_title(entry), empty_body(entry), missing_type(entry, defaulted))
    return [issue for issue in found if issue is not None]
