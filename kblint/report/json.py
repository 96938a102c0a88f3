"""The JSON report (SPEC §9, schema_version 1)."""

from __future__ import annotations

from .. import __version__
from ..issue import Issue, Report
from . import PathDisplay, display_path, json_line

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


class IssueLines:
    """issue_dict(issue) as JSON, as json_line writes it, several times faster. A large report has
    hundreds of thousands of issues whose values mostly repeat, and a file's issues come one after
    another: the texts of values, of a file's leading keys and of the key groups that repeat are kept."""

    def __init__(self, report: Report):
        self.report = report
        self.quoted: dict = {None: "null"}  # value → its JSON text
        self.rules: dict[tuple, str] = {}  # (tier, rule, severity, field) → their keys' text
        self.items: dict[tuple, str] = {}  # (rubric_item, checker, policy) → their keys' text
        self._file: tuple | None = None  # (kb_name, entry_id, path) of the last issue, and its keys' text
        self._file_text = ""
        self._path = PathDisplay()

    def _q(self, value) -> str:
        found = self.quoted.get(value)
        if found is None:
            found = json_line(value)
            if len(self.quoted) < _QUOTED_MAX:
                self.quoted[value] = found
        return found

    def __call__(self, issue: Issue) -> str:
        line = issue.line
        column = issue.column
        if (line.__class__ is not int or column.__class__ is not int or issue.confidence is not None
                or issue.evaluator is not None or issue.cached is not None):
            return json_line(issue_dict(issue, self.report))  # judgment issues: few, written plainly
        q = self._q
        file = (issue.kb_name, issue.entry_id, issue.path)
        if file != self._file:
            self._file = file
            self._file_text = (f'{{"kb_name": {q(issue.kb_name)}, "entry_id": {json_line(issue.entry_id)}, '
                               f'"path": {json_line(self._path(issue.path))}')
        key = (issue.tier, issue.rule, issue.severity, issue.field)
        rule = self.rules.get(key)
        if rule is None:
            rule = self.rules[key] = (f'"tier": {q(key[0])}, "rule": {q(key[1])}, "severity": {q(key[2])}, '
                                      f'"field": {q(key[3])}')
        key = (issue.rubric_item, issue.checker, issue.policy)
        item = self.items.get(key)
        if item is None:
            item = f'"rubric_item": {q(key[0])}'
            if key[1] is not None:
                item += f', "checker": {q(key[1])}'
            if key[2] is not None:
                item += f', "policy": {q(key[2])}'
            self.items[key] = item
        return (f'{self._file_text}, "line": {line}, "column": {column}, {rule}, "message": '
                f'{json_line(issue.message)}, {item}, "fingerprint": "{self.report.fingerprint(issue)}"}}')


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
    _write_list(out, "issues", report.issues, IssueLines(report))
    for key, value in _tail(report).items():
        out.write(f",\n  {json_line(key)}: {json_line(value)}")
    out.write("\n}\n")


def render(report: Report) -> str:
    import io

    buffer = io.StringIO()
    write(report, buffer)
    return buffer.getvalue()
