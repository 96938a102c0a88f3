"""The JSON report (SPEC §9, schema_version 1)."""

from __future__ import annotations

import json

from .. import __version__
from ..issue import Issue, Report
from . import display_path, json_line

_OPTIONAL = ("checker", "policy", "confidence", "evaluator", "cached")


def issue_dict(issue: Issue, report: Report) -> dict:
    path = display_path(issue.path)
    out = {
        "kb_name": issue.kb_name,
        "entry_id": issue.entry_id,
        "path": path,
        "line": issue.line,
        "column": issue.column,
        "tier": issue.tier,
        "rule": issue.rule,
        "severity": issue.severity,
        "field": issue.field,
        "message": issue.message,
        "rubric_item": issue.rubric_item,
    }
    for key in _OPTIONAL:
        value = getattr(issue, key)
        if value is not None:
            out[key] = value
    out["fingerprint"] = report.fingerprint(issue)
    return out


def _head(report: Report) -> dict:
    return {
        "schema_version": 1,
        "kblint_version": __version__,
        "kbs": [
            {"name": kb.name, "path": display_path(kb.root), "files": kb.files, "entries": kb.entries,
             "counts": dict(kb.counts), "score": kb.score, "coverage": dict(kb.coverage)}
            for kb in report.kbs
        ],
    }


def _tail(report: Report) -> dict:
    data = {
        "judgment": dict(report.judgment),
        "summary": {"files": report.files, "entries": report.entries, "counts": report.counts,
                    "fail_on": report.fail_on, "exit_code": report.exit_code},
    }
    if report.baselined is not None:
        data["summary"]["baseline"] = {"baselined": report.baselined, "stale": report.baseline_stale}
    if report.unreadable or report.fatal:
        data["summary"]["errors"] = list(report.unreadable) + ([report.fatal] if report.fatal else [])
    return data


_ENCODE = json_line


def _dump(value) -> str:
    return json_line(value)


def _write_items(out, key: str, items) -> None:
    out.write(f"  {_dump(key)}: [")
    batch: list[str] = []
    first = True
    for item in items:
        batch.append(_ENCODE(item))
        if len(batch) == 1000:
            out.write(("\n    " if first else ",\n    ") + ",\n    ".join(batch))
            batch, first = [], False
    if batch:
        out.write(("\n    " if first else ",\n    ") + ",\n    ".join(batch))
        first = False
    out.write("\n  ]" if not first else "]")


def write(report: Report, out) -> None:
    """Stream the report: one issue per line, each written by the C encoder, none held as text."""
    out.write("{\n")
    parts = [(k, v) for k, v in _head(report).items()]
    for key, value in parts:
        if key == "kbs":
            _write_items(out, key, value)
        else:
            out.write(f"  {_dump(key)}: {_dump(value)}")
        out.write(",\n")
    _write_items(out, "issues", (issue_dict(i, report) for i in report.issues))
    for key, value in _tail(report).items():
        out.write(f",\n  {_dump(key)}: {_dump(value)}")
    out.write("\n}\n")


def render(report: Report) -> str:
    import io

    buffer = io.StringIO()
    write(report, buffer)
    return buffer.getvalue()
