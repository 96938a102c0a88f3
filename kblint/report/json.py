"""The JSON report (SPEC §9, schema_version 1)."""

from __future__ import annotations

import json

from .. import __version__
from ..issue import Issue, Report
from . import display_path

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


def as_dict(report: Report) -> dict:
    counts = report.counts
    data = {
        "schema_version": 1,
        "kblint_version": __version__,
        "kbs": [
            {"name": kb.name, "path": display_path(kb.root), "files": kb.files, "entries": kb.entries,
             "counts": dict(kb.counts), "score": kb.score, "coverage": dict(kb.coverage)}
            for kb in report.kbs
        ],
        "issues": [issue_dict(i, report) for i in report.issues],
        "judgment": dict(report.judgment),
        "summary": {"files": report.files, "entries": report.entries, "counts": counts,
                    "fail_on": report.fail_on, "exit_code": report.exit_code},
    }
    if report.baselined is not None:
        data["summary"]["baseline"] = {"baselined": report.baselined, "stale": report.baseline_stale}
    return data


def render(report: Report) -> str:
    """One issue per line: readable, diff-friendly, and written by the C encoder (fast)."""
    data = as_dict(report)
    dump = lambda value: json.dumps(value, ensure_ascii=False)  # noqa: E731
    parts = []
    for key, value in data.items():
        if isinstance(value, list) and value:
            inner = ",\n".join("    " + dump(item) for item in value)
            parts.append(f'  {dump(key)}: [\n{inner}\n  ]')
        else:
            parts.append(f"  {dump(key)}: {dump(value)}")
    return "{\n" + ",\n".join(parts) + "\n}\n"
