"""Report formats: one module per format, each with `render(report) -> str`."""

from __future__ import annotations

import importlib

from ..model.issue import Report

FORMATS = ("text", "json", "sarif", "github", "junit", "markdown", "verdicts")


def render(report: Report, fmt: str, *, color: bool = False, statistics: bool = False) -> str:
    """REPORT in the format FMT (one of FORMATS)."""
    if fmt == "text":
        from . import text

        return text.render(report, color=color, statistics=statistics)
    renderer = importlib.import_module(f"{__name__}.{fmt}")
    rendered: str = renderer.render(report)
    return rendered


def issue_url(rule: str, checker: str | None = None) -> str:
    """The documentation of an issue: for a rubric_violation of a built-in checker, the checker's;
    of a JSON Schema item, the page of those items; otherwise the rule's (a plugin's checkers are
    not in docs/rules.md)."""
    from ..checkers.registry import registry  # here: `kblint.report` is imported for FORMATS alone
    from ..model.json_schema import JSON_SCHEMA
    from ..rules import doc_url

    if rule == "rubric_violation" and checker == JSON_SCHEMA:
        return doc_url(JSON_SCHEMA)
    if rule == "rubric_violation" and checker is not None:
        found = registry().get(checker)
        if found is not None and found.source == "core":
            return doc_url(checker)
    return doc_url(rule)
