"""`kblint validate --watch`: lint once and print the report, then lint again whenever a file the
run reads changes and print only how the issues changed, until Ctrl-C.

Issues are compared by fingerprint (the one baselines use: no line number in it), so an issue that
only moved within its file is not shown again. The loop takes its file changes from an iterator:
watchfiles' watcher here, a list of batches in the tests.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TextIO

from .errors import SERVER_EXTRA
from .infra import collector
from .infra.git import gitignores, work_tree
from .paths import display_path, is_within, printable
from .report.words import plural

if TYPE_CHECKING:
    from .config import Settings
    from .model.issue import Issue, Report

NEEDS_EXTRA = f"--watch needs the server extra: {SERVER_EXTRA}"

# what a run reads besides the entries: a change to one of them is a reason to lint again
CONFIG_NAMES = frozenset({"kb.yaml", "cross-kb-links.yaml", "kblint.toml", "pyproject.toml", ".gitignore"})

Batch = set[tuple[Any, str]]  # (watchfiles.Change, absolute path)
Lint = Callable[[], "tuple[Report, list[str]]"]
# (paths, filter, started) → batches; STARTED is called once an edit from then on is seen
Changes = Callable[[list[str], "Relevant", Callable[[], None]], Iterable[Batch]]


class WatchError(Exception):
    """Watch mode cannot start or go on (exit 2): the message says why."""


class RunFailed(Exception):
    """One run could not lint (a broken configuration, a KB that went away): watching goes on.
    An empty message: it was already said."""


def require_watchfiles() -> None:
    try:
        import watchfiles  # noqa: F401
    except ImportError:
        raise WatchError(NEEDS_EXTRA) from None


def prepare(settings: Settings) -> Settings:
    """SETTINGS for a watch run: options that make no sense there are refused; the configuration
    file's format and output, which are for single runs, give way to the text report."""
    given = [name for name, source in settings.sources.items() if source == "command line"]
    if "format" in given and settings.format != "text":
        raise WatchError(f"--watch prints a text report and its changes: drop --format {settings.format}")
    refused = {
        "output": "--watch prints to the terminal: drop --output",
        "reports": "--watch prints to the terminal: drop --report",
        "stdin": "--watch lints files as they change; --stdin reads one entry once: use one of them",
        "write_baseline": "--write-baseline records the issues of one run: run it without --watch",
        "dry_run": "--dry-run shows once what the judge would be sent: run it without --watch",
        "fix": "--fix writes the fixes once: run it without --watch",
        "diff": "--diff shows the fixes once: run it without --watch",
    }
    for name, message in refused.items():
        if name in given:
            raise WatchError(message)
    settings.format, settings.output, settings.reports = "text", None, []
    return settings


def watched_paths(settings: Settings, report: Report) -> list[str]:
    """What to watch: the directories the run was given (a file's directory), the KBs' roots and
    the configuration file; a directory inside another is left to that one."""
    given = [os.path.abspath(p) for p in settings.paths or ["."]]
    if settings.kb and os.path.isdir(settings.kb):
        given.append(os.path.abspath(settings.kb))
    dirs = {p if os.path.isdir(p) else os.path.dirname(p) for p in given}
    dirs.update(kb.root for kb in report.kbs)
    outer = sorted(d for d in dirs if not any(o != d and is_within(d, o) for o in dirs))
    files = [settings.config_file] if settings.config_file else []
    for kb in report.kbs:  # git reads the .gitignore files above a KB for its files too
        top = work_tree(kb.root)
        files.extend(gitignores(top, kb.root) if top is not None else [])
    for file in dict.fromkeys(os.path.abspath(f) for f in files):
        if os.path.exists(file) and not any(is_within(file, d) for d in outer):
            outer.append(file)
    return outer


@dataclass
class Relevant:
    """Which changes call for another run (watchfiles' filter): entries, the files that configure a
    run, a directory moved in, and one that held linted files going away; never a file under a
    hidden directory or in the cache."""

    roots: list[str]
    cache_dir: str | None
    dirs: set[str] = field(default_factory=set)  # directories of the last run's files

    def learn(self, report: Report) -> None:
        self.dirs = {os.path.dirname(p) for kb in report.kbs for p in kb.paths} | {kb.root for kb in report.kbs}

    def __call__(self, change: Any, path: str) -> bool:
        if self.cache_dir and is_within(path, self.cache_dir):
            return False
        root = next((r for r in self.roots if r != path and is_within(path, r)), None)
        parts = os.path.relpath(path, root).split(os.sep) if root else [os.path.basename(path)]
        name = parts[-1]
        if any(part.startswith(".") for part in parts[:-1]):
            return False
        if name in CONFIG_NAMES or (name.endswith(".md") and not name.startswith(".")):
            return True
        if name.startswith("."):
            return False
        if int(change) == 1:  # added (watchfiles.Change.added): a directory moved in may hold entries
            return os.path.isdir(path)
        return any(is_within(d, path) for d in self.dirs)


def file_changes(paths: list[str], relevant: Relevant, started: Callable[[], None]) -> Iterator[Batch]:
    """Batches of relevant changes to PATHS, as watchfiles groups them (until Ctrl-C)."""
    import watchfiles

    yield from watchfiles.watch(*paths, watch_filter=relevant, stop_event=_Started(started), raise_interrupt=True)


class _Started:
    """The watcher asks its stop event whether to stop at every step of its wait, once it watches:
    the first question tells that an edit from now on is seen (and the answer is always no)."""

    def __init__(self, started: Callable[[], None]) -> None:
        self.started: Callable[[], None] | None = started

    def is_set(self) -> bool:
        if self.started is not None:
            started, self.started = self.started, None
            started()
        return False


@dataclass
class Diff:
    new: list[Issue]
    fixed: list[Issue]
    problems_new: list[str]
    problems_gone: list[str]

    def __bool__(self) -> bool:
        return bool(self.new or self.fixed or self.problems_new or self.problems_gone)


def by_fingerprint(report: Report) -> dict[str, list[Issue]]:
    groups: dict[str, list[Issue]] = {}
    for issue in report.issues:
        groups.setdefault(report.fingerprint(issue), []).append(issue)
    return groups


def carry_unreadable(before: Report, after: Report) -> Report:
    """AFTER, with the issues BEFORE had in the KBs whose kb.yaml AFTER could not read: a broken
    kb.yaml hides its KB's issues, it does not fix them (nor does mending it make them new)."""
    linted = {kb.root for kb in after.kbs}
    unreadable = [kb for kb in before.kbs if kb.root not in linted and _named_in(kb.root, after.unreadable)]
    if not unreadable:
        return after
    names = {kb.name for kb in unreadable}
    for issue in before.issues:
        if issue.kb_name in names:
            before.fingerprint(issue)  # computed while its KB's root is known
    after.issues = [*after.issues, *(i for i in before.issues if i.kb_name in names)]
    after.kbs = [*after.kbs, *unreadable]  # so that the next run, still unreadable, carries them again
    return after


def _named_in(root: str, messages: list[str]) -> bool:
    kb_yaml = display_path(os.path.join(root, "kb.yaml"))
    return any(message.startswith(kb_yaml) for message in messages)


def diff(before: Report, after: Report) -> Diff:
    """What AFTER found that BEFORE did not, and the reverse. Issues of one fingerprint are paired
    where they say the same at the same place first, so only the surplus counts as new or fixed."""
    from .model.issue import sort_key

    old, now = by_fingerprint(before), by_fingerprint(after)
    new: list[Issue] = []
    fixed: list[Issue] = []
    for key in old.keys() | now.keys():
        a, b = _unpaired(old.get(key, []), now.get(key, []))
        fixed.extend(a)
        new.extend(b)
    gone = [p for p in before.problems if p not in after.problems]
    came = [p for p in after.problems if p not in before.problems]
    return Diff(sorted(new, key=sort_key), sorted(fixed, key=sort_key), came, gone)


def _unpaired(old: list[Issue], now: list[Issue]) -> tuple[list[Issue], list[Issue]]:
    """The issues of OLD and of NOW (one fingerprint) left over once they are paired."""
    if len(old) == len(now):
        return [], []
    if len(old) > len(now):
        return _surplus(old, now), []
    return [], _surplus(now, old)


def _surplus(more: list[Issue], fewer: list[Issue]) -> list[Issue]:
    """len(MORE) - len(FEWER) of MORE: those at a place FEWER has no issue at first."""
    spots = {(i.path, i.line, i.column, i.message) for i in fewer}
    unmatched = [i for i in more if (i.path, i.line, i.column, i.message) not in spots]
    taken = {id(i) for i in unmatched}
    return (unmatched + [i for i in more if id(i) not in taken])[: len(more) - len(fewer)]


_GREEN, _RED, _RESET = "\x1b[32m", "\x1b[31m", "\x1b[0m"


def diff_lines(change: Diff, color: bool) -> list[str]:
    from .report.text import issue_line

    plus, minus = (f"{_GREEN}+{_RESET}", f"{_RED}-{_RESET}") if color else ("+", "-")
    lines = [f"{plus} not linted: {printable(p)}" for p in change.problems_new]
    lines += [f"{minus} not linted: {printable(p)}" for p in change.problems_gone]
    lines += [f"{plus} {issue_line(i, color)}" for i in change.new]
    lines += [f"{minus} {issue_line(i, color)}" for i in change.fixed]
    return lines


def summary_line(report: Report, change: Diff, seconds: float, configured: bool = False) -> str:
    """`3 issues (1 error, 2 warnings, 0 info): 1 new, 2 fixed (0.08 s)`, or `no change in issues: …`.
    CONFIGURED: the configuration file changed, so issues it now hides are gone, not fixed."""
    from .report.text import counts_text

    now = f"{plural(len(report.issues), 'issue')} ({counts_text(report.counts)})" if report.issues else "no issues"
    fixable = sum(1 for issue in report.issues if issue.fixable)
    if fixable:
        now += f", {fixable} fixable with --fix"
    if report.problems:
        now += f", {plural(len(report.problems), 'KB')} not linted"
    if not change:
        return f"no change in issues: {now} ({seconds:.2f} s)"
    if configured:
        return f"{now}: {len(change.new)} new, {len(change.fixed)} gone, the configuration changed ({seconds:.2f} s)"
    return f"{now}: {len(change.new)} new, {len(change.fixed)} fixed ({seconds:.2f} s)"


NAMED = 3  # paths a line names before it counts the rest


def _some(names: list[str]) -> str:
    return ", ".join(names[:NAMED]) + (f" and {len(names) - NAMED} more" if len(names) > NAMED else "")


def changed_line(batch: Batch, at: str) -> str:
    return f"{at} changed: {_some(sorted({display_path(path) for _, path in batch}))}"


def follow(
    settings: Settings,
    lint: Lint,
    out: TextIO,
    err: TextIO,
    *,
    color: bool = False,
    changes: Changes = file_changes,
    clock: Callable[[], float] = time.monotonic,
) -> int:
    """LINT and print the report (text, as `validate` does), then lint again on every batch of
    CHANGES to the watched paths and print what changed. The exit code: 0 once Ctrl-C stops it
    (or the changes end), 2 when the first run cannot lint."""
    loop = _Loop(settings, lint, out, err, color, clock)
    try:
        return loop.run(changes)
    except KeyboardInterrupt:
        return 0


@dataclass
class _Loop:
    settings: Settings
    lint: Lint
    out: TextIO
    err: TextIO
    color: bool
    clock: Callable[[], float]
    warned: set[str] = field(default_factory=set)

    def run(self, changes: Changes) -> int:
        try:
            report, warnings = self._lint()
        except RunFailed as exc:
            self._say(str(exc))
            return 2
        self._warn(warnings)
        for message in report.unreadable:
            self._say(f"cannot lint this KB: {message}")
        if report.fatal:
            self._say(report.fatal)
        self._write(self._full(report))
        paths = watched_paths(self.settings, report)
        cache = self.settings.cache_dir
        relevant = Relevant(paths, os.path.abspath(cache) if cache else None)
        relevant.learn(report)
        shown = _some([display_path(p) for p in paths])
        for batch in _batches(
            changes(paths, relevant, lambda: self._say(f"watching {shown} for changes (Ctrl-C stops)"))
        ):
            report = self._again(batch, report)
            relevant.learn(report)
        return 0

    def _again(self, batch: Batch, before: Report) -> Report:
        """Lint again after BATCH and print how the issues changed since BEFORE; the report the
        next run is compared with."""
        start = self.clock()
        try:
            after, warnings = self._lint()
        except RunFailed as exc:
            self._say(str(exc))
            return before  # the next run is compared with the last one that linted
        self._warn(warnings)
        after = carry_unreadable(before, after)
        change = diff(before, after)
        quiet = self.settings.quiet
        lines = [] if quiet else ["", changed_line(batch, time.strftime("%H:%M:%S"))]
        lines += diff_lines(change, self.color)
        if not quiet:
            lines.append(summary_line(after, change, self.clock() - start, self._configures(batch)))
        if lines:
            self._write("\n".join(lines) + "\n")
        collector.between_runs()  # start-up turned the collector off, for one run: here the runs go on
        return after

    def _configures(self, batch: Batch) -> bool:
        """Whether BATCH touches the configuration file, or a kblint.toml that may become it (a
        pyproject.toml is a project's own file first)."""
        config = os.path.abspath(self.settings.config_file) if self.settings.config_file else None
        return any(path == config or os.path.basename(path) == "kblint.toml" for _, path in batch)

    def _lint(self) -> tuple[Report, list[str]]:
        """A run, its issues that --fix would clear marked as the text report marks them (`[*]`)."""
        from .fix.plan import mark_fixable

        report, warnings = self.lint()
        mark_fixable(report, self.settings.limits)
        return report, warnings

    def _full(self, report: Report) -> str:
        from .report.text import issue_line, render

        if self.settings.quiet:
            return "".join(issue_line(issue, self.color) + "\n" for issue in report.issues)
        return render(report, color=self.color, statistics=self.settings.statistics)

    def _warn(self, warnings: list[str]) -> None:
        for warning in warnings:
            if warning not in self.warned:
                self._say(f"warning: {warning}")
        self.warned = set(warnings)

    def _write(self, text: str) -> None:
        self.out.write(text)
        self.out.flush()  # a reader of a pipe sees each run as it ends

    def _say(self, message: str) -> None:
        if message:
            self.err.write(f"kblint: {message}\n")
            self.err.flush()


def _batches(changes: Iterable[Batch]) -> Iterator[Batch]:
    """CHANGES, with a watcher that cannot go on (too many directories for the system's limit)
    told as a WatchError."""
    it = iter(changes)
    while True:
        try:
            batch = next(it)
        except StopIteration:
            return
        except OSError as exc:
            raise WatchError(f"cannot watch the files: {exc.strerror or exc}") from None
        if batch:
            yield batch
