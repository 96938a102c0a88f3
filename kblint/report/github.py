"""The GitHub Actions report (SPEC §9): one workflow command per error or warning, then a summary line.

Info issues are not annotated (GitHub shows few annotations per step); the closing line counts them.
GitHub shows at most STEP_LIMIT error and STEP_LIMIT warning annotations of a step (and JOB_LIMIT of a
job): every issue is still annotated, so the log has them all, and a line before the summary says
when some are not shown.
"""

from __future__ import annotations

import os
import re

from ..model.issue import Issue, Report
from ..paths import CONTROLS, UNDECODABLE, is_within, plain_display_path, printable, quote_name
from .words import plural

COMMANDS = {"error": "error", "warning": "warning"}
STEP_LIMIT = 10  # annotations of one kind GitHub shows per step
JOB_LIMIT = 50  # annotations GitHub shows per job, all steps together


def escape_data(text: str) -> str:
    """The message of a workflow command: `%`, `\\r` and `\\n` escaped."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """A property value of a workflow command: `%`, `\\r`, `\\n`, `:` and `,` escaped."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def shown_data(text: str) -> str:
    """Input text as the message of a workflow command: its control characters written as escapes
    (`\\x1b`, `\\n`: the log is shown as a terminal shows it), then escaped as a message is."""
    return escape_data(printable(text))


# A file property carries a tab as it is and line ends in escapes of their own; any other control
# character (a terminal showing the log would obey it) or byte that is not UTF-8 makes the path one
# to show as git does.
_UNWRITABLE = re.compile(f"[{CONTROLS}{UNDECODABLE}]")
_CARRIED = str.maketrans("", "", "\t\n\r")


def checkout() -> str | None:
    """The repository GitHub checked out (`GITHUB_WORKSPACE`): it looks an annotation's file up
    from there, whichever directory the step runs in."""
    workspace = os.environ.get("GITHUB_WORKSPACE")
    return os.path.abspath(workspace) if workspace else None


def file_property(path: str, root: str | None = None) -> str:
    """The file an annotation is on: its path as GitHub knows it (relative to ROOT, the checkout,
    when it is there; else as reports show paths), or as git shows it (quoted, with C escapes)
    when the path cannot be written as it is."""
    shown = plain_display_path(path, root if root is not None and is_within(path, root) else None)
    return escape_property(quote_name(shown) if _UNWRITABLE.search(shown.translate(_CARRIED)) else shown)


def title(issue: Issue) -> str:
    return f"{issue.rule}/{issue.checker}" if issue.checker else issue.rule


def annotation(issue: Issue, root: str | None = None) -> str | None:
    """The workflow command of an issue, or None for an info issue (ROOT: the checkout)."""
    command = COMMANDS.get(issue.severity)
    if command is None:
        return None
    props = (
        f"file={file_property(issue.path, root)},line={max(issue.line, 1)},"
        f"col={max(issue.column, 1)},title={escape_property(printable(title(issue)))}"
    )
    message = issue.message  # its control characters were escaped when the issue was made (kblint.rules)
    if issue.rubric_item:
        message += f" [{printable(issue.rubric_item)}]"  # the item as kb.yaml writes it: escaped here
    return f"::{command} {props}::{escape_data(message)}"


def summary_line(report: Report) -> str:
    counts = report.counts
    line = f"kblint: {plural(counts['error'], 'error')}, {plural(counts['warning'], 'warning')}, {counts['info']} info"
    if counts["info"]:
        line += " (info issues are not annotated)"
    return line


def annotation_counts(report: Report) -> dict[str, int]:
    """How many error and warning annotations `render` writes: one per issue, one per problem."""
    counts = report.counts
    return {"error": counts["error"] + len(report.problems), "warning": counts["warning"]}


def over_limit(counts: dict[str, int]) -> bool:
    """Whether GitHub leaves some of these annotations of a step unshown."""
    return any(n > STEP_LIMIT for n in counts.values())


def limit_line(counts: dict[str, int]) -> str:
    shown = ", ".join(plural(n, kind) for kind, n in counts.items() if n > STEP_LIMIT)
    return (
        f"kblint: {shown} annotated; GitHub shows the first {STEP_LIMIT} errors and {STEP_LIMIT} warnings "
        "of a step: this log has them all"
    )


def render(report: Report) -> str:
    root = checkout()
    lines = [a for a in (annotation(i, root) for i in report.issues) if a is not None]
    for message in report.unreadable:
        lines.append(f"::error title=kblint::{shown_data('could not lint: ' + message)}")
    if report.fatal:
        lines.append(f"::error title=kblint::{shown_data(report.fatal)}")
    counts = annotation_counts(report)
    if over_limit(counts):
        lines.append(limit_line(counts))
    lines.append(summary_line(report))
    return "\n".join(lines) + "\n"
