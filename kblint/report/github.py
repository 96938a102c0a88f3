"""The GitHub Actions report (SPEC §9): one workflow command per error or warning, then a summary line.

Info issues are not annotated (GitHub shows few annotations per step); the closing line counts them.
"""

from __future__ import annotations

from ..model.issue import Issue, Report
from ..paths import plain_display_path

COMMANDS = {"error": "error", "warning": "warning"}


def escape_data(text: str) -> str:
    """The message of a workflow command: `%`, `\\r` and `\\n` escaped."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """A property value of a workflow command: `%`, `\\r`, `\\n`, `:` and `,` escaped."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def title(issue: Issue) -> str:
    return f"{issue.rule}/{issue.checker}" if issue.checker else issue.rule


def annotation(issue: Issue) -> str | None:
    """The workflow command of an issue, or None for an info issue."""
    command = COMMANDS.get(issue.severity)
    if command is None:
        return None
    props = (
        f"file={escape_property(plain_display_path(issue.path))},line={max(issue.line, 1)},"
        f"col={max(issue.column, 1)},title={escape_property(title(issue))}"
    )
    message = issue.message
    if issue.rubric_item:
        message += f" [{issue.rubric_item}]"
    return f"::{command} {props}::{escape_data(message)}"


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def summary_line(report: Report) -> str:
    counts = report.counts
    line = (
        f"kblint: {_plural(counts['error'], 'error')}, {_plural(counts['warning'], 'warning')}, {counts['info']} info"
    )
    if counts["info"]:
        line += " (info issues are not annotated)"
    return line


def render(report: Report) -> str:
    lines = [a for a in (annotation(i) for i in report.issues) if a is not None]
    for message in report.unreadable:
        lines.append(f"::error title=kblint::{escape_data('could not lint: ' + message)}")
    if report.fatal:
        lines.append(f"::error title=kblint::{escape_data(report.fatal)}")
    lines.append(summary_line(report))
    return "\n".join(lines) + "\n"
