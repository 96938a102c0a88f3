"""The JSON report (SPEC §9, schema_version 1): one issue per line, streamed."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from typing import IO, Any

from .. import __version__
from ..model.issue import Issue, KBReport, Report
from ..paths import display_path
from . import issue_url

SCHEMA_VERSION = 1

_OPTIONAL = ("checker", "policy", "item_id", "confidence", "evaluator", "cached", "evidence")
_LINES_PER_WRITE = 1000
_KIND = ("tier", "rule", "severity", "field")  # written before the message
_ITEM = ("rubric_item", "checker", "policy", "item_id")  # after it


def issue_dict(issue: Issue, report: Report) -> dict[str, Any]:
    out: dict[str, Any] = {
        "kb_name": issue.kb_name,
        "entry_id": issue.entry_id,
        "path": display_path(issue.path),
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
        if key == "item_id" and issue.related is not None:
            out["related_path"] = display_path(issue.related.path)
            out["related_id"] = issue.related.id
    if issue.related is not None and issue.related.similarity is not None:
        out["similarity"] = issue.related.similarity
    out["url"] = issue_url(issue.rule, issue.checker)
    out["fingerprint"] = report.fingerprint(issue)
    return out


# One encoder for the whole report (json.dumps makes one per call); it writes a string directly.
_line = json.JSONEncoder(ensure_ascii=False).encode


class IssueLines:
    """Each issue as json.dumps(issue_dict(issue)) writes it. A report's issues repeat their KB
    names, rules, fields, rubric items and paths: each distinct text, and each run of fields that
    many issues share (a rule with its tier, severity and field; a rubric item with its checker,
    policy and id), is encoded once."""

    def __init__(self, report: Report):
        self.report = report
        self.cwd = os.getcwd()  # asked once, not for each file
        self.encoded: dict[str | None, str] = {None: "null"}
        # the last path shown, and its text: a report lists a file's issues together
        self.last_path: tuple[str, str] = ("", _line(display_path("", self.cwd)))
        self.kinds: dict[tuple[str | None, ...], str] = {}  # tier, rule, severity, field
        self.items: dict[tuple[str | None, ...], str] = {}  # rubric_item, checker, policy, item_id
        self.urls: dict[tuple[str, str | None], str] = {}  # (rule, checker) → its documentation, encoded

    def _path(self, path: str) -> str:
        if path != self.last_path[0]:
            self.last_path = (path, _line(display_path(path, self.cwd)))
        return self.last_path[1]

    def _text(self, value: str | None) -> str:
        found = self.encoded.get(value)
        if found is None:
            found = self.encoded[value] = _line(value)
        return found

    def _run(
        self,
        cache: dict[tuple[str | None, ...], str],
        names: tuple[str, ...],
        values: tuple[str | None, ...],
        always: int,
    ) -> str:
        """`"NAME": VALUE, …` for NAMES and their VALUES, encoded once for each run of values: the
        first ALWAYS names are written even when null, the others only when they are set."""
        found = cache.get(values)
        if found is None:
            text = self._text
            found = cache[values] = ", ".join(
                f'"{name}": {text(value)}'
                for n, (name, value) in enumerate(zip(names, values, strict=True))
                if n < always or value is not None
            )
        return found

    def _url(self, rule: str, checker: str | None) -> str:
        found = self.urls.get((rule, checker))
        if found is None:
            found = self.urls[rule, checker] = _line(issue_url(rule, checker))
        return found

    def __call__(self, issue: Issue) -> str:
        text = self._text
        parts = [
            f'{{"kb_name": {text(issue.kb_name)}, "entry_id": {text(issue.entry_id)}, '
            f'"path": {self._path(issue.path)}, "line": {issue.line}, "column": {issue.column}, '
            f"{self._run(self.kinds, _KIND, (issue.tier, issue.rule, issue.severity, issue.field), 4)}, "
            f'"message": {_line(issue.message)}, '
            f"{self._run(self.items, _ITEM, (issue.rubric_item, issue.checker, issue.policy, issue.item_id), 1)}"
        ]
        related = issue.related
        if related is not None:
            parts.append(f', "related_path": {_line(display_path(related.path))}, "related_id": {text(related.id)}')
        for key in ("confidence", "evaluator", "cached", "evidence"):
            value = getattr(issue, key)
            if value is not None:
                parts.append(f", {_line(key)}: {_line(value)}")
        if related is not None and related.similarity is not None:
            parts.append(f', "similarity": {_line(related.similarity)}')
        parts.append(f', "url": {self._url(issue.rule, issue.checker)}')
        parts.append(f', "fingerprint": "{self.report.fingerprint(issue)}"}}')
        return "".join(parts)


def _kb_dicts(report: Report) -> list[dict[str, Any]]:
    return [
        {
            "name": kb.name,
            "path": display_path(kb.root),
            "files": kb.files,
            "entries": kb.entries,
            "counts": dict(kb.counts),
            "score": kb.score,
            "coverage": kb.coverage.as_dict(),
            **({"score_incomplete": kb.incomplete} if kb.incomplete else {}),
            **({"levels": {k: v.as_dict() for k, v in kb.levels.items()}, "grades": _grades(kb)} if kb.levels else {}),
        }
        for kb in report.kbs
    ]


def _grades(kb: KBReport) -> list[dict[str, Any]]:
    return [{**g.as_dict(), "path": display_path(g.path)} for g in kb.grades]


def _summary(report: Report) -> dict[str, Any]:
    summary: dict[str, Any] = {
        "files": report.files,
        "entries": report.entries,
        "counts": report.counts,
        "fail_on": report.fail_on,
        "exit_code": report.exit_code,
        "hidden": dict(sorted(report.hidden.items())),
    }
    if report.baselined is not None:
        summary["baseline"] = {"baselined": report.baselined, "stale": report.baseline_stale}
    if report.problems:
        summary["errors"] = report.problems
    return summary


def _write_list(out: IO[str], key: str, lines: Iterable[str], count: int) -> None:
    """`"KEY": [` and each of COUNT LINES on a line of its own, then `]`."""
    out.write(f"  {_line(key)}: [")
    if not count:
        out.write("]")
        return
    batch: list[str] = []
    first = True
    for text in lines:
        batch.append(text)
        if len(batch) == _LINES_PER_WRITE:
            out.write(("\n    " if first else ",\n    ") + ",\n    ".join(batch))
            first, batch = False, []
    if batch:
        out.write(("\n    " if first else ",\n    ") + ",\n    ".join(batch))
    out.write("\n  ]")


def write(report: Report, out: IO[str]) -> None:
    """Write the report to OUT as it goes: a large report is never held as one string."""
    out.write(f'{{\n  "schema_version": {SCHEMA_VERSION},\n  "kblint_version": {_line(__version__)},\n')
    kbs = _kb_dicts(report)
    _write_list(out, "kbs", (_line(kb) for kb in kbs), len(kbs))
    out.write(",\n")
    lines = IssueLines(report)
    _write_list(out, "issues", map(lines, report.issues), len(report.issues))
    out.write(f',\n  "judgment": {_line(report.judgment.as_dict())},\n')
    out.write(f'  "duplicates": {_line(report.duplicates.as_dict())},\n')
    curation = [_curation(issue) for issue in report.curation]
    _write_list(out, "curation", (_line(c) for c in curation), len(curation))
    out.write(",\n")
    out.write(f'  "summary": {_line(_summary(report))}\n}}\n')


def _curation(issue: Issue) -> dict[str, Any]:
    """A pair of conflicting entries, for the curation queue."""
    return {
        "type": "conflict",
        "kb_name": issue.kb_name,
        "path": display_path(issue.path),
        "entry_id": issue.entry_id,
        "related_path": display_path(issue.related.path) if issue.related else None,
        "related_id": issue.related.id if issue.related else None,
        "message": issue.message,
        "confidence": issue.confidence,
    }


def render(report: Report) -> str:
    import io

    buffer = io.StringIO()
    write(report, buffer)
    return buffer.getvalue()


def dry_run_json(report: Report) -> str:
    """`--dry-run --format json`: what the judge would be sent, entry by entry; nothing was sent."""
    rows = report.dry_run or []
    data = {
        "schema_version": SCHEMA_VERSION,
        "kblint_version": __version__,
        "dry_run": {
            "evaluator": report.judgment.evaluator,
            "requests": sum(1 for r in rows if r.items),
            "estimated_prompt_tokens": sum(r.estimated_prompt_tokens for r in rows),
            "entries": [
                {
                    "path": display_path(r.path),
                    "entry_id": r.entry_id,
                    "items": r.items,
                    "cached_items": r.cached_items,
                    "estimated_prompt_tokens": r.estimated_prompt_tokens,
                    "body_truncated": r.body_truncated,
                }
                for r in rows
            ],
        },
    }
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"
