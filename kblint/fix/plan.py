"""Which issues of a report have a fix, and each file's bytes with its fixes made.

Only entry files of a KB with a kb.yaml are edited, reached from the KB's directory through no
symlink, readable, within the size limit and parsed without error; the fixes of one file are made
one after the other, each on the bytes the one before left (a line added by a missing type's fix
comes last: the others find their values by key and target, not by line).
"""

from __future__ import annotations

import os
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass

from ..infra.files import FileProblem, is_regular_file_within, read_regular_file
from ..model.issue import Issue, Report
from ..model.kbschema import KBSchema, load_kb_schema
from ..paths import is_within, relative_to
from ..rules.fixable import FIXABLE
from ..yamlread import Limits
from ..yamlread.lines import YamlFileError
from .fixers import FIXERS, Target
from .source import lone_cr, lone_cr_as_lf


@dataclass(slots=True)
class FilePlan:
    """One file's fixes: its bytes as read, as fixed, and the issues the fixes are for."""

    path: str
    original: bytes
    fixed: bytes
    issues: list[Issue]


def kb_schemas(report: Report) -> dict[str, KBSchema]:
    """The schema of each reported KB that has a kb.yaml kblint can read, by KB name."""
    from ..checkers.registry import registry

    plugins = registry().plugins
    types = tuple(plugins.types) if plugins is not None else ()
    found = {}
    for kb in report.kbs:
        if kb.name in found or not os.path.isfile(os.path.join(kb.root, "kb.yaml")):
            continue
        try:
            found[kb.name] = load_kb_schema(kb.root, types)
        except YamlFileError:
            continue
    return found


def editable(path: str, root: str) -> bool:
    """Whether PATH is an entry file inside the KB directory ROOT that kblint may write: a regular
    file reached through no symlink (a link could lead out of the KB, or to a file linted twice)."""
    if not path.endswith(".md") or not is_within(path, root):
        return False
    real_root = os.path.realpath(root)
    relpath = relative_to(path, root)
    return os.path.realpath(path) == os.path.join(real_root, *relpath.split("/")) and is_regular_file_within(
        real_root, relpath
    )


def plan_file(
    path: str,
    schema: KBSchema,
    issues: list[Issue],
    limits: Limits,
    start: bytes | None = None,
    refused: set[str] | None = None,
) -> FilePlan | None:
    """The fixes of ISSUES (all on PATH), made one after the other on the file's bytes (START: on
    these, the file as earlier fixes left it); None when none can be made. REFUSED gets PATH when
    a fix would be made but for its line ends, which kblint does not edit (source.LONE_CR)."""
    try:
        data = read_regular_file(path, limits.max_file_bytes) if start is None else start
    except FileProblem:
        return None
    where = (schema, path, relative_to(path, schema.root), limits)
    if lone_cr(data):
        if refused is not None and _made(lone_cr_as_lf(data), issues, *where)[1]:
            refused.add(path)
        return None
    current, done = _made(data, issues, *where)
    return FilePlan(path, data, current, done) if done else None


def _made(
    data: bytes, issues: list[Issue], schema: KBSchema, path: str, relpath: str, limits: Limits
) -> tuple[bytes, list[Issue]]:
    """DATA with the fixes of ISSUES made one after the other, and the issues they fix."""
    current = data
    done = []
    for issue in sorted(issues, key=lambda i: i.rule == "missing_type"):
        target = Target.read(current, schema, path, relpath, limits)
        if target is None:
            break
        fixed = FIXERS[issue.rule](issue, target)
        if fixed is not None and fixed != current:
            current = fixed
            done.append(issue)
    return current, done


def plan(
    report: Report,
    schemas: dict[str, KBSchema],
    limits: Limits,
    left_out: Iterable[Issue] = (),
    skip: Collection[FixKey] = (),
    start: Mapping[str, bytes] | None = None,
    refused: set[str] | None = None,
) -> list[FilePlan]:
    """The fixes of REPORT's issues, file by file (but those LEFT_OUT, and those whose fix_key is
    in SKIP), made on the bytes START holds for a file, else on the file as it is. REFUSED gets
    the files with such issues that kblint does not edit for their line ends."""
    skipped = {id(issue) for issue in left_out}
    broken = {issue.path for issue in report.issues if issue.rule == "parse_error"}
    by_path: dict[str, list[Issue]] = {}
    for issue in report.issues:
        wanted = issue.rule in FIXABLE and id(issue) not in skipped and issue.path not in broken
        if wanted and fix_key(issue) not in skip:
            by_path.setdefault(issue.path, []).append(issue)
    plans = []
    for path, issues in by_path.items():
        schema = schemas.get(issues[0].kb_name or "")
        if schema is None or not editable(path, schema.root):
            continue
        found = plan_file(path, schema, issues, limits, start.get(path) if start else None, refused)
        if found is not None:
            plans.append(found)
    return plans


FixKey = tuple[str, str, str | None, str]  # file, rule, field, discriminator


def fix_key(issue: Issue) -> FixKey:
    """What tells an issue apart wherever its line went: file, rule, field and discriminator."""
    return issue.path, issue.rule, issue.field, issue.discriminator


def mark_fixable(report: Report, limits: Limits, left_out: Collection[FixKey] = ()) -> None:
    """Mark the issues of REPORT that have a fix (for the text report's `[*]`), but for those
    whose fix `--fix` just LEFT_OUT (by fix_key): it would not clear them."""
    if not any(issue.rule in FIXABLE for issue in report.issues):
        return
    for found in plan(report, kb_schemas(report), limits):
        for issue in found.issues:
            issue.fixable = fix_key(issue) not in left_out
