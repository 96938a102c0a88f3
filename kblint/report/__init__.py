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
