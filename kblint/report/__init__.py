"""Report formatters: one module per format. Each exposes `render(report) -> str`."""

from __future__ import annotations

import os
from functools import lru_cache

FORMATS = ("text", "json", "sarif", "github", "junit")


@lru_cache(maxsize=65536)
def display_path(path: str) -> str:
    """A path relative to the current directory, with `/` separators (SPEC §9)."""
    cwd = os.getcwd()
    if path.startswith(cwd) and path[len(cwd):len(cwd) + 1] == os.sep:
        rel = path[len(cwd) + 1:]  # what relpath gives, without its normalising of both paths
    else:
        try:
            rel = os.path.relpath(path)
        except ValueError:  # another drive on Windows
            rel = path
    return rel.replace(os.sep, "/")


def render(report, fmt: str, *, color: bool = False, statistics: bool = False) -> str:
    if fmt == "json":
        from . import json as json_report

        return json_report.render(report)
    if fmt == "sarif":
        from . import sarif

        return sarif.render(report)
    if fmt == "github":
        from . import github

        return github.render(report)
    if fmt == "junit":
        from . import junit

        return junit.render(report)
    from . import text as text_report

    return text_report.render(report, color=color, statistics=statistics)
