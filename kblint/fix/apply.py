"""`kblint validate --fix` and `--diff`: find the fixes, check them, then write them or show them.

A fix is kept only if it clears its issue: the files are linted again as fixed, in memory (with the
rest of the workspace as it is on disk), and a fix whose issue is still there is left out, its file
fixed again without it, until every fix left clears its issue. Files are then written atomically
(a temporary file beside them, renamed over them, with their permissions and owner), and only if they still
hold what was read.
"""

from __future__ import annotations

import difflib
import os
from collections import Counter
from dataclasses import dataclass, field, replace

from ..config import Settings
from ..engine.run import run
from ..infra.files import FileProblem, read_regular_file, replace_file
from ..model.issue import Issue, Report
from ..model.kbschema import KBSchema
from ..model.markdown import editor_lines
from ..paths import diff_name, display_path
from ..yamlread import Limits
from .plan import FilePlan, FixKey, fix_key, kb_schemas, plan


@dataclass(slots=True)
class Fixes:
    """The checked fixes of a run, the fixes left out, and the run's warnings."""

    plans: list[FilePlan]
    left_out: list[Issue] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    refused: set[str] = field(default_factory=set)  # files with issues to fix, not edited for their line ends

    @property
    def count(self) -> int:
        return sum(len(p.issues) for p in self.plans)


def _lint_settings(settings: Settings) -> Settings:
    """The settings of the runs that find and check fixes: what is reported, without the judge
    (no fix depends on it) and without writing anything (--diff not even the caches)."""
    return replace(
        settings,
        no_cache=settings.no_cache or settings.diff,
        no_judgment=True,
        llm_required=False,
        dry_run=False,
        write_baseline=None,
        format="text",
        output=None,
        reports=[],
        fix=False,
        diff=False,
    )


def not_cleared(plans: list[FilePlan], before: Report, after: Report) -> list[Issue]:
    """The fixes of PLANS whose issue AFTER (the run on the fixed files) still has."""
    counted_before = Counter(fix_key(i) for i in before.issues)
    counted_after = Counter(fix_key(i) for i in after.issues)
    unreadable = {i.path for i in after.issues if i.rule == "parse_error"}
    failed = []
    for found in plans:
        fixed = Counter(fix_key(i) for i in found.issues)
        for issue in found.issues:
            key = fix_key(issue)
            if found.path in unreadable or counted_after[key] > counted_before[key] - fixed[key]:
                failed.append(issue)
    return failed


# A fix can make another issue fixable (the type a missing_type fix writes makes that type's fields
# checkable): fixes are found again on the fixed files, up to this many rounds in all.
ROUNDS = 3


def find_fixes(settings: Settings) -> Fixes:
    """The fixes of what SETTINGS lint, each checked to clear its issue."""
    lint = _lint_settings(settings)
    report, warnings = run(lint)
    schemas = kb_schemas(report)
    done: dict[str, FilePlan] = {}
    left_out: list[Issue] = []
    refused: set[str] = set()
    for _ in range(ROUNDS):
        fixed = {path: p.fixed for path, p in done.items()}
        skip = {fix_key(i) for i in left_out}
        plans, report, failed = _checked_round(lint, report, schemas, settings.limits, fixed, skip, refused)
        left_out.extend(failed)
        if not plans:
            break
        for p in plans:
            earlier = done.get(p.path)
            done[p.path] = (
                p if earlier is None else replace(p, original=earlier.original, issues=earlier.issues + p.issues)
            )
    return Fixes(list(done.values()), left_out, warnings, refused)


def _checked_round(
    lint: Settings,
    report: Report,
    schemas: dict[str, KBSchema],
    limits: Limits,
    fixed: dict[str, bytes],
    skip: set[FixKey],
    refused: set[str],
) -> tuple[list[FilePlan], Report, list[Issue]]:
    """The fixes of REPORT's issues (but those of SKIP, left out before) made on the files as FIXED
    holds them (else as on disk), each checked to clear its issue; the report of the files with
    them, and the fixes left out. REFUSED gets the files kblint does not edit for their line ends."""
    plans = plan(report, schemas, limits, skip=skip, start=fixed, refused=refused)
    left_out: list[Issue] = []
    check = report
    while plans:
        check, _ = run(replace(lint, no_cache=True), overlay={**fixed, **{p.path: p.fixed for p in plans}})
        failed = not_cleared(plans, report, check)
        if not failed:
            break
        left_out.extend(failed)  # each round leaves one fix out at least: the loop ends
        plans = plan(report, schemas, limits, left_out, skip=skip, start=fixed)
    return plans, check, left_out


def write_fixed(found: FilePlan) -> str | None:
    """Write FOUND's fixed bytes over its file; why not, when it was not written."""
    name = display_path(found.path)
    try:
        if read_regular_file(found.path) != found.original:
            return f"{name}: not fixed: it changed while kblint was fixing it"
        before = os.stat(found.path)
    except (FileProblem, OSError) as exc:
        return f"{name}: not fixed: {getattr(exc, 'reason', None) or exc}"
    try:
        replace_file(found.path, found.fixed, before)
    except OSError as exc:
        return f"{name}: not fixed: {exc.strerror or exc}"
    after = os.stat(found.path)
    if (after.st_mtime_ns, after.st_size) == (before.st_mtime_ns, before.st_size):
        # the result cache knows a file by its mtime and size: within one tick of the clock, and
        # of the same size, the fixed file would pass for the file it replaced
        os.utime(found.path, ns=(after.st_atime_ns, before.st_mtime_ns + 1))
    return None


def _lines(data: bytes) -> list[str]:
    """The lines of DATA for a diff; a last line without a line end says so, as diff does."""
    lines = editor_lines(data.decode("utf-8", "surrogateescape"))
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n\\ No newline at end of file\n"
    return lines


def unified_diff(found: FilePlan) -> str:
    """What fixing FOUND changes, as a unified diff of its file."""
    name = diff_name(display_path(found.path))
    return "".join(difflib.unified_diff(_lines(found.original), _lines(found.fixed), name, name))
