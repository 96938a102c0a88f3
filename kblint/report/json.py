"""The JSON report (SPEC §9, schema_version 1)."""

from __future__ import annotations

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


def issue_line(issue: Issue, report: Report, quoted: dict[str, str]) -> str:
    """issue_dict(issue) as JSON, as json_line writes it, a few times faster: the report of a large
    KB has hundreds of thousands of issues whose values mostly repeat (QUOTED: their JSON texts)."""

    def q(value) -> str:
        found = quoted.get(value)
        if found is None:
            found = json_line(value)
            if len(quoted) < _QUOTED_MAX:
                quoted[value] = found
        return found

    line = issue.line
    column = issue.column
    if line.__class__ is not int or column.__class__ is not int:
        return json_line(issue_dict(issue, report))
    get = quoted.get
    path = display_path(issue.path)
    text = (f'{{"kb_name": {get(issue.kb_name) or q(issue.kb_name)}, '
            f'"entry_id": {get(issue.entry_id) or q(issue.entry_id)}, '
            f'"path": {get(path) or q(path)}, "line": {line}, "column": {column}, '
            f'"tier": {get(issue.tier) or q(issue.tier)}, "rule": {get(issue.rule) or q(issue.rule)}, '
            f'"severity": {get(issue.severity) or q(issue.severity)}, "field": {get(issue.field) or q(issue.field)}, '
            f'"message": {json_line(issue.message)}, "rubric_item": {get(issue.rubric_item) or q(issue.rubric_item)}')
    for key in _OPTIONAL:
        value = getattr(issue, key)
        if value is not None:
            text += f', "{key}": {q(value) if value.__class__ is str else json_line(value)}'
    return f'{text}, "fingerprint": "{report.fingerprint(issue)}"}}'


_QUOTED_MAX = 200_000


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


def _write_list(out, key: str, items: list, line_of) -> None:
    """KEY: [ITEMS], one LINE_OF(item) per line; a long list is rendered in two processes
    (parallel.write_in_halves), a thousand lines at a time."""
    from ..parallel import write_in_halves

    def render(part: list, first: bool):
        for start in range(0, len(part), 1000):
            lines = [line_of(item) for item in part[start:start + 1000]]
            yield ("\n    " if first and start == 0 else ",\n    ") + ",\n    ".join(lines)

    out.write(f"  {json_line(key)}: [")
    write_in_halves(items, render, out.write)
    out.write("\n  ]" if items else "]")


def write(report: Report, out) -> None:
    """Stream the report: one issue per line, each written by the C encoder, none held as text."""
    out.write("{\n")
    for key, value in _head(report).items():
        if key == "kbs":
            _write_list(out, key, value, json_line)
        else:
            out.write(f"  {json_line(key)}: {json_line(value)}")
        out.write(",\n")
    quoted: dict = {None: "null"}
    _write_list(out, "issues", report.issues, lambda issue: issue_line(issue, report, quoted))
    for key, value in _tail(report).items():
        out.write(f",\n  {json_line(key)}: {json_line(value)}")
    out.write("\n}\n")


def render(report: Report) -> str:
    import io

    buffer = io.StringIO()
    write(report, buffer)
    return buffer.getvalue()
