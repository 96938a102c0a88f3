"""The verdicts report: one JSON object per line for each entry linted (or candidate gated), in
the shape insertion pipelines read — pass or fail, every code that failed, and the pair to curate.

    {"candidate_id", "kb_name", "path", "verdict": "pass" | "fail", "rejection_codes": [...],
     "curation_queue_entry": null | {"type": "conflict", "related_id", "related_path", "reason"},
     "notes": [...]}

`fail` when an issue of the entry is at or above --fail-on; its codes are the distinct rubric item
ids, checkers and rules of those issues; the notes are the messages of all its issues.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from ..model.issue import Issue, Report, at_or_above
from ..paths import display_path, stem


def code(issue: Issue) -> str:
    """What failed, as a pipeline names it: the rubric item's id, else the checker, else the rule."""
    return issue.item_id or issue.checker or issue.rule


def _curation(issues: list[Issue]) -> dict[str, Any] | None:
    conflict = next((i for i in issues if i.rule == "conflicting_entries"), None)
    if conflict is None:
        return None
    return {
        "type": "conflict",
        "related_id": conflict.related.id if conflict.related else None,
        "related_path": display_path(conflict.related.path) if conflict.related else "",
        "reason": conflict.message,
    }


def record(kb_name: str, path: str, entry_id: str | None, issues: list[Issue], fail_on: str) -> dict[str, Any]:
    """The verdict of one entry on ISSUES, its issues."""
    failed = [i for i in issues if at_or_above(i.severity, fail_on)]
    return {
        "candidate_id": entry_id if entry_id is not None else stem(path),
        "kb_name": kb_name,
        "path": display_path(path),
        "verdict": "fail" if failed else "pass",
        "rejection_codes": list(dict.fromkeys(code(i) for i in failed)),
        "curation_queue_entry": _curation(issues),
        "notes": [f"{code(i)}: {i.message}" for i in issues],
    }


def records(report: Report) -> Iterator[dict[str, Any]]:
    """The verdict of each file the report covers, in the report's order of files."""
    by_path: dict[str, list[Issue]] = {}
    for issue in report.issues:
        by_path.setdefault(issue.path, []).append(issue)
    for kb in report.kbs:
        for path, entry_id in zip(kb.paths, kb.ids, strict=True):
            yield record(kb.name, path, entry_id, by_path.get(path, []), report.fail_on)


def render(report: Report) -> str:
    encode = json.JSONEncoder(ensure_ascii=False).encode
    return "".join(encode(r) + "\n" for r in records(report))
