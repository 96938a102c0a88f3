"""The command-line interface: commands and wiring only; the work happens in the engine.

No `from __future__ import annotations` here: typer reads each command's annotations on every run,
and strings would have to be evaluated again each time, at start-up."""

import contextlib
import math
import os
import stat
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, List, NoReturn, Optional

import typer
import typer.core

from . import __version__
from .errors import SERVER_EXTRA

if TYPE_CHECKING:
    from .config import Settings
    from .model.issue import Report
    from .model.kbschema import PluginType


class GroupedCommand(typer.core.TyperCommand):
    """Plain `--help` with the options in sections (each option's rich_help_panel), in the order
    they are declared: typer groups options only in its boxed rich help."""

    def format_options(self, ctx: Any, formatter: Any) -> None:
        sections: dict[str, list[tuple[str, str]]] = {}
        for param in self.get_params(ctx):
            record = param.get_help_record(ctx)
            if record is not None:
                default = "Arguments" if param.param_type_name == "argument" else "Options"
                sections.setdefault(getattr(param, "rich_help_panel", None) or default, []).append(record)
        for title, records in sections.items():
            with formatter.section(title):
                formatter.write_dl(records)


app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # plain usage errors and help: short, greppable, no boxes
    context_settings={"help_option_names": ["-h", "--help"]},
    help="A linter for markdown knowledge bases: structure, schema, checkers, policies and LLM-judged rubrics.",
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"kblint {__version__}")
        raise typer.Exit(0)


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", "-V", callback=_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """kblint checks every entry of a KB in five tiers and exits 0 (clean), 1 (issues) or 2 (could not run)."""


def _evaluator(llm: Optional[str], config: Optional[str]) -> Optional[str]:
    """`provider:model` of the LLM configured by --llm, the configuration file or KBLINT_LLM."""
    from .config import ConfigError, llm_spec, resolve
    from .engine.pass_judgment import JudgmentSetupError, judge_config

    try:
        settings = resolve({"llm": llm}, config)
        return judge_config(settings).evaluator if llm_spec(settings) else None
    except (ConfigError, JudgmentSetupError) as exc:
        _fail(str(exc))
    return None


def _warn_plugin_problems() -> None:
    from .checkers.registry import registry

    plugins = registry().plugins
    for problem in plugins.problems if plugins is not None else ():
        typer.echo(f"kblint: warning: {problem}", err=True)


def _plugin_types() -> tuple["PluginType", ...]:
    from .checkers.registry import registry

    plugins = registry().plugins
    return tuple(plugins.types) if plugins is not None else ()


def _fail(message: str) -> NoReturn:
    typer.echo(f"kblint: {message}", err=True)
    raise typer.Exit(2)


INPUT, FILTERS, OUTPUT, JUDGMENT, PERFORMANCE = "Input", "Filters", "Output", "Judgment", "Performance"


def _opt(default: Any, *names: str, panel: str, metavar: Optional[str] = None, **kwargs: Any) -> Any:
    """An option shown under PANEL in `--help`."""
    return typer.Option(default, *names, rich_help_panel=panel, metavar=metavar, **kwargs)


@app.command(cls=GroupedCommand)
def validate(
    paths: Optional[List[str]] = typer.Argument(
        None, metavar="[PATH]...", help="KB directories, directories of KBs, or .md files."
    ),
    kb: Optional[str] = _opt(
        None, "--kb", panel=INPUT, metavar="NAME|DIR", help="A KB name (restrict the run) or a KB directory (context)."
    ),
    stdin: bool = _opt(False, "--stdin", panel=INPUT, help="Read one candidate entry from standard input."),
    stdin_path: Optional[str] = _opt(
        None, "--stdin-path", panel=INPUT, metavar="REL.md", help="Where the stdin entry would live in the KB."
    ),
    no_respect_gitignore: bool = _opt(False, "--no-respect-gitignore", panel=INPUT, help="Lint files git ignores too."),
    changed_since: Optional[str] = _opt(
        None, "--changed-since", panel=INPUT, metavar="REV", help="Only entries changed since this git revision."
    ),
    base: Optional[str] = _opt(
        None, "--base", panel=INPUT, metavar="REV", help="Status gates apply to transitions since this git revision."
    ),
    config: Optional[str] = _opt(
        None, "--config", panel=INPUT, metavar="FILE", help="Read settings from FILE (kblint.toml or pyproject.toml)."
    ),
    select: Optional[List[str]] = _opt(
        None, "--select", panel=FILTERS, metavar="NAMES", help="Only these rules, tiers or checkers (comma-separated)."
    ),
    ignore: Optional[List[str]] = _opt(
        None, "--ignore", panel=FILTERS, metavar="NAMES", help="Hide these rules, tiers or checkers (comma-separated)."
    ),
    type_: Optional[str] = _opt(None, "--type", panel=FILTERS, metavar="TYPE", help="Only entries of this type."),
    min_severity: Optional[str] = _opt(
        None, "--min-severity", panel=FILTERS, metavar="SEVERITY", help="Hide issues below: info, warning, error."
    ),
    strict_links: bool = _opt(False, "--strict-links", panel=FILTERS, help="Links into absent KBs are broken links."),
    baseline: Optional[str] = _opt(
        None, "--baseline", panel=FILTERS, metavar="FILE", help="Report only issues not recorded in FILE."
    ),
    format: Optional[str] = _opt(
        None,
        "--format",
        "-f",
        panel=OUTPUT,
        metavar="FORMAT",
        help="text, json, sarif, github, junit, markdown or verdicts.",
    ),
    output: Optional[str] = _opt(
        None, "--output", "-o", panel=OUTPUT, metavar="FILE", help="Write the report to FILE."
    ),
    reports: Optional[List[str]] = _opt(
        None,
        "--report",
        panel=OUTPUT,
        metavar="FORMAT:FILE",
        help="Also write the report in FORMAT to FILE, from the same run (repeatable).",
    ),
    fail_on: Optional[str] = _opt(
        None, "--fail-on", panel=OUTPUT, metavar="SEVERITY", help="Exit 1 from: error (default), warning, info, never."
    ),
    statistics: bool = _opt(False, "--statistics", panel=OUTPUT, help="Counts per rule and checker, and the scores."),
    quiet: bool = _opt(False, "--quiet", "-q", panel=OUTPUT, help="Print only the issues (and no progress)."),
    color: Optional[str] = _opt(
        None,
        "--color",
        panel=OUTPUT,
        metavar="WHEN",
        help="auto (default: FORCE_COLOR, then NO_COLOR, then a terminal), always, never.",
    ),
    write_baseline: Optional[str] = _opt(
        None, "--write-baseline", panel=OUTPUT, metavar="FILE", help="Record the current issues in FILE."
    ),
    fix: bool = _opt(False, "--fix", panel=OUTPUT, help="Apply the safe fixes ([*] in the report), then report."),
    diff: bool = _opt(False, "--diff", panel=OUTPUT, help="Print the safe fixes as a diff; change no file."),
    show_settings: bool = _opt(
        False,
        "--show-settings",
        panel=OUTPUT,
        help="Print the resolved settings and where each came from; lint nothing.",
    ),
    watch: bool = _opt(
        False, "--watch", panel=OUTPUT, help="Lint again on every change and print what changed, until Ctrl-C."
    ),
    verbose: bool = _opt(False, "--verbose", panel=OUTPUT, help="Show tracebacks of internal errors."),
    no_judgment: bool = _opt(False, "--no-judgment", panel=JUDGMENT, help="Do not run the judgment tier."),
    llm: Optional[str] = _opt(
        None,
        "--llm",
        panel=JUDGMENT,
        metavar="PROVIDER:MODEL",
        help="Provider and model, e.g. openai:gpt-4o-mini.",
    ),
    llm_base_url: Optional[str] = _opt(
        None, "--llm-base-url", panel=JUDGMENT, metavar="URL", help="Base URL of the LLM server."
    ),
    llm_concurrency: Optional[int] = _opt(
        None, "--llm-concurrency", panel=JUDGMENT, metavar="N", min=1, help="LLM requests in flight (default 4)."
    ),
    llm_min_confidence: Optional[float] = _opt(
        None,
        "--llm-min-confidence",
        panel=JUDGMENT,
        metavar="0..1",
        min=0.0,
        max=1.0,
        help="Confidence a fail needs to be a violation (default 0.7).",
    ),
    max_llm_calls: Optional[int] = _opt(
        None, "--max-llm-calls", panel=JUDGMENT, metavar="N", min=0, help="At most N LLM requests."
    ),
    llm_timeout: Optional[float] = _opt(
        None,
        "--llm-timeout",
        panel=JUDGMENT,
        metavar="SECONDS",
        min=0.001,
        max=86_399.0,
        help="Seconds an LLM request may take (default 600 for a local server, 60 for a hosted one).",
    ),
    llm_max_output: Optional[int] = _opt(
        None, "--llm-max-output", panel=JUDGMENT, metavar="TOKENS", min=1, help="Longest LLM answer (default 4096)."
    ),
    llm_context: Optional[int] = _opt(
        None,
        "--llm-context",
        panel=JUDGMENT,
        metavar="TOKENS",
        min=1,
        help="Context length of the model (default: as the server says; Ollama 4096 when it does not).",
    ),
    llm_required: bool = _opt(False, "--llm-required", panel=JUDGMENT, help="Exit 2 when the LLM cannot be reached."),
    dry_run: bool = _opt(False, "--dry-run", panel=JUDGMENT, help="Print what would be sent to the LLM; send nothing."),
    jobs: Optional[int] = _opt(
        None, "--jobs", "-j", panel=PERFORMANCE, metavar="N", min=1, help="Parse in N processes (default: CPU count)."
    ),
    shard: Optional[str] = _opt(
        None, "--shard", panel=PERFORMANCE, metavar="K/N", help="Report shard K of N (for parallel CI jobs)."
    ),
    no_cache: bool = _opt(False, "--no-cache", panel=PERFORMANCE, help="Do not read or write the caches."),
    cache_dir: Optional[str] = _opt(
        None, "--cache-dir", panel=PERFORMANCE, metavar="DIR", help="Cache directory (default .kblint_cache/)."
    ),
) -> None:
    """Lint knowledge bases (default: the current directory)."""
    flags = _validate_flags(locals())
    settings = _validate_settings(flags, config)
    if show_settings:
        from .config import describe

        typer.echo(describe(settings))
        raise typer.Exit(0)
    if watch:
        _watch(flags, config, settings)
    # one byte past the limit tells that the entry is over it, without reading all of it
    stdin_data = sys.stdin.buffer.read(settings.limits.max_file_bytes + 1) if settings.stdin else None
    with contextlib.redirect_stdout(sys.stderr):  # what a plugin prints as it loads: stdout holds the report
        _warn_plugin_problems()
    left_out = _autofix(settings) if settings.fix or settings.diff else set()  # --diff ends there

    from .config import llm_spec
    from .engine.pass_judgment import JudgmentSetupError
    from .engine.run import run
    from .errors import UsageError
    from .progress import for_run

    progress = for_run(settings.quiet)
    try:
        with contextlib.redirect_stdout(sys.stderr):  # and what its checkers print, in every process
            report, warnings = run(settings, stdin_data=stdin_data, progress=progress)
    except (UsageError, JudgmentSetupError) as exc:
        _fail(str(exc))
    finally:
        progress.close()
    if settings.dry_run and llm_spec(settings) is None:
        warnings.append("--dry-run shows what an LLM would be sent, and no LLM is configured (--llm): a usual run")
    for warning in warnings:
        typer.echo(f"kblint: warning: {warning}", err=True)
    if "text" in (settings.format, *(spec.partition(":")[0] for spec in settings.reports)):
        from .fix.plan import mark_fixable

        mark_fixable(report, settings.limits, left_out)
    for message in report.unreadable:
        typer.echo(f"kblint: cannot lint this KB: {message}", err=True)  # and in the summary
    if report.fatal:
        typer.echo(f"kblint: {report.fatal}", err=True)
    if settings.write_baseline:  # every issue found, before --baseline hid the known ones
        written = len(report.issues) + (report.baselined or 0)
        typer.echo(f"kblint: wrote {written} issue{'' if written == 1 else 's'} to {settings.write_baseline}", err=True)
        if settings.shard or settings.changed_since:
            part = "--shard" if settings.shard else "--changed-since"
            typer.echo(f"kblint: warning: the baseline holds only what this {part} run linted", err=True)
    _emit(lambda: _write_report(report, settings))
    for spec in settings.reports:
        fmt, _, file = spec.partition(":")
        _write_file(report, fmt, file, "--report")
    raise typer.Exit(0 if report.dry_run is not None else report.exit_code)


def _validate_flags(options: dict[str, Any]) -> dict[str, Any]:
    """The settings the options of `validate` give; an option left unset is None, for the configuration file."""
    from .config import split_names

    flags = {name: (value or None) if isinstance(value, bool) else value for name, value in options.items()}
    del flags["config"]  # where the settings come from, not one of them
    del flags["show_settings"]
    del flags["watch"]  # how to run, not what
    flags["paths"] = list(options["paths"] or [])
    for name in ("select", "ignore"):
        for given in options[name] or []:
            if not split_names(given):  # an unset CI variable: not taken for no option
                _fail(f"--{name}: expected names of rules, tiers or checkers (comma-separated), got {given!r}")
    flags["select"] = split_names(options["select"])
    flags["ignore"] = split_names(options["ignore"])
    flags["type"] = flags.pop("type_")
    flags["reports"] = list(options["reports"] or [])
    flags["respect_gitignore"] = False if flags.pop("no_respect_gitignore") else None
    return flags


def _validate_settings(flags: dict[str, Any], config: Optional[str]) -> "Settings":
    """The settings of a validate run: the configuration file under the flags, checked."""
    from .config import COLOR_CHOICES, ConfigError, resolve
    from .model.issue import FAIL_ON_CHOICES, SEVERITIES
    from .report import FORMATS

    try:
        settings = resolve(flags, config)
    except ConfigError as exc:
        _fail(str(exc))
    for name in ("llm_timeout", "llm_min_confidence"):  # click's number ranges let NaN through
        value = getattr(settings, name)
        if isinstance(value, float) and math.isnan(value):
            _fail(f"{settings.given_as(name)}: expected a number, got nan")
    if settings.fail_on not in FAIL_ON_CHOICES:
        _fail(f"--fail-on: expected one of {', '.join(FAIL_ON_CHOICES)}, got '{settings.fail_on}'")
    if settings.min_severity not in SEVERITIES:
        _fail(f"--min-severity: expected one of {', '.join(SEVERITIES)}, got '{settings.min_severity}'")
    if settings.color not in COLOR_CHOICES:
        _fail(f"--color: expected one of {', '.join(COLOR_CHOICES)}, got '{settings.color}'")
    if settings.format is None:
        in_actions = os.environ.get("GITHUB_ACTIONS") == "true"
        settings.format = "github" if in_actions else "text"
        settings.sources["format"] = "default (GITHUB_ACTIONS=true)" if in_actions else "default"
    if settings.format not in FORMATS:
        _fail(f"--format: expected one of {', '.join(FORMATS)}, got '{settings.format}'")
    _check_written_files(settings, FORMATS)
    for name, expected in _NOT_EMPTY:
        value = getattr(settings, name)
        if isinstance(value, str) and not value.strip():  # an unset CI variable: not taken for no option
            _fail(f"{settings.given_as(name)}: expected {expected}, got ''")
    if settings.stdin and settings.paths:
        _fail("--stdin reads the entry from standard input: give no PATH with it")
    if settings.stdin_path and not settings.stdin:
        _fail("--stdin-path names where the --stdin entry would live: use it with --stdin")
    if (settings.fix or settings.diff) and settings.stdin:
        _fail(f"--{'fix' if settings.fix else 'diff'} edits files: it does not read an entry from --stdin")
    return settings


_NOT_EMPTY = (
    ("changed_since", "a git revision (a commit, branch or tag)"),
    ("shard", "K/N, such as 1/4"),
    ("baseline", "a baseline file"),
    ("write_baseline", "a file to write the baseline to"),
    ("output", "a file to write the report to"),
)


def _check_written_files(settings: "Settings", formats: tuple[str, ...]) -> None:
    """The files a run writes (--output, --report, --write-baseline): one report each, and never
    a file of a KB (an entry, whether it exists yet or not, kb.yaml, cross-kb-links.yaml)."""
    targets = [("--output", settings.output)] if settings.output else []
    for spec in settings.reports:
        fmt, _, file = spec.partition(":")
        if fmt not in formats or not file:
            _fail(f"--report {spec}: expected FORMAT:FILE with FORMAT one of {', '.join(formats)}")
        targets.append((f"--report {spec}", file))
    if settings.write_baseline:
        targets.append(("--write-baseline", settings.write_baseline))
    written: dict[str, str] = {}
    for option, file in targets:
        real = os.path.realpath(file)
        if real in written:
            _fail(f"{option}: {file} is already written by {written[real]} in this run: one file, one report")
        written[real] = option
        if _is_kb_file(real):
            _fail(f"{option}: {file} is a file of a KB: kblint writes no report or baseline over it")
        if _hard_linked(real):
            _fail(f"{option}: {file} has other names (hard links), which may be entries: kblint writes nothing over it")


def _hard_linked(path: str) -> bool:
    """Whether PATH is a regular file with more names than one: writing it would write them all."""
    try:
        st = os.stat(path)
    except OSError:
        return False
    return stat.S_ISREG(st.st_mode) and st.st_nlink > 1


def _is_kb_file(path: str) -> bool:
    """Whether PATH is (or would be) an entry of a KB, or a KB's kb.yaml or cross-kb-links.yaml."""
    from .workspace import nearest_kb_root

    root = nearest_kb_root(path)
    if root is None:
        return False
    return path.endswith(".md") or path in (os.path.join(root, "kb.yaml"), os.path.join(root, "cross-kb-links.yaml"))


def _watch(flags: dict[str, Any], config: Optional[str], settings: "Settings") -> NoReturn:
    """`validate --watch` (kblint.watch): each run reads the configuration again, so that editing
    it takes effect; Ctrl-C ends watching with exit 0."""
    from .watch import RunFailed, WatchError, follow, prepare, require_watchfiles

    try:
        require_watchfiles()
        prepare(settings)
    except WatchError as exc:
        _fail(str(exc))
    import signal

    signal.signal(signal.SIGINT, signal.default_int_handler)  # Ctrl-C stops watching, even if the shell ignored it
    signal.signal(signal.SIGTERM, signal.default_int_handler)  # and so does being told to end (kill, a supervisor)
    _warn_plugin_problems()

    def lint() -> tuple["Report", list[str]]:
        from .engine.pass_judgment import JudgmentSetupError
        from .engine.run import run
        from .errors import UsageError
        from .progress import for_run

        try:
            current = prepare(_validate_settings(flags, config))
        except typer.Exit:
            raise RunFailed("") from None  # _fail said why
        progress = for_run(current.quiet)
        try:
            with contextlib.redirect_stdout(sys.stderr):  # what plugins print: stdout holds the report
                return run(current, progress=progress)
        except (UsageError, JudgmentSetupError) as exc:
            raise RunFailed(str(exc)) from None
        finally:
            progress.close()

    try:
        code = follow(settings, lint, sys.stdout, sys.stderr, color=_use_color(settings))
    except WatchError as exc:
        _fail(str(exc))
    except BrokenPipeError:  # the reader went away (`| head`)
        _discard_stdout()
        code = 0
    raise typer.Exit(code)


def _emit(write: Callable[[], None]) -> None:
    """Run WRITE, which prints to standard output, and flush it: a reader that went away (`| head`)
    ends the run quietly, a full disk is one line on standard error and exit 2."""
    try:
        write()
        sys.stdout.flush()
    except BrokenPipeError:
        _discard_stdout()
    except OSError as exc:
        _discard_stdout()
        _fail(f"cannot write the report: {exc.strerror or exc}")


def _discard_stdout() -> None:
    """Send what is left of standard output nowhere, so that the exit's own flush cannot fail."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):  # no real file behind standard output
        pass


def _write_report(report: "Report", settings: "Settings") -> None:
    from .report import render
    from .report.text import dry_run_lines, issue_line, summary_lines

    fmt = settings.format or "text"
    if report.dry_run is not None:
        from .report.json import dry_run_json

        listing = dry_run_json(report) if fmt == "json" else "\n".join(dry_run_lines(report)) + "\n"
        if settings.output:
            _write_file(report, fmt, settings.output, "--output", listing)
        else:
            sys.stdout.write(listing)
        return
    if fmt == "json" and not settings.output:
        from .report.json import write as write_json

        write_json(report, sys.stdout)  # streamed: a 100,000-entry report is never held as one string
        return
    color = fmt == "text" and _use_color(settings)
    text = render(report, fmt, color=color, statistics=settings.statistics)
    if settings.quiet and fmt == "text":
        text = "".join(issue_line(issue, color) + "\n" for issue in report.issues)
    if not settings.output:
        sys.stdout.write(text)
        return
    _write_file(report, fmt, settings.output, "--output", text)
    if not settings.quiet:
        sys.stdout.write("\n".join(summary_lines(report, statistics=settings.statistics)) + "\n")


def _write_file(report: "Report", fmt: str, path: str, option: str, text: Optional[str] = None) -> None:
    """Write REPORT in the format FMT to PATH (TEXT when it is already rendered)."""
    from .infra.files import open_output
    from .report import render

    try:
        with open_output(path) as fh:
            if text is None and fmt == "json":
                from .report.json import write as write_json

                write_json(report, fh)
            else:
                fh.write(render(report, fmt) if text is None else text)
    except OSError as exc:
        _fail(f"{option} {path}: {exc.strerror}")


def _autofix(settings: "Settings") -> set[Any]:
    """--fix: write the fixes that clear their issues (kblint.fix) and say how many; what the fixes
    left out were for (the report does not mark them fixable). --diff: print them as a diff, write
    nothing, and exit 1 when there is something to fix (0 when not)."""
    from .engine.pass_judgment import JudgmentSetupError
    from .errors import UsageError
    from .fix.apply import find_fixes, unified_diff, write_fixed
    from .fix.plan import fix_key
    from .fix.source import LONE_CR
    from .paths import display_path
    from .report.words import plural

    try:
        with contextlib.redirect_stdout(sys.stderr):  # what plugins print: stdout holds the diff or the report
            found = find_fixes(settings)
    except (UsageError, JudgmentSetupError) as exc:
        _fail(str(exc))
    for path in sorted(found.refused):
        typer.echo(f"kblint: warning: {display_path(path)}: not fixed: {LONE_CR}", err=True)
    left_out = len(found.left_out)
    if left_out:
        why = "they would not clear their issues" if left_out > 1 else "it would not clear its issue"
        typer.echo(f"kblint: {plural(left_out, 'fix')} left out: {why}", err=True)
    if settings.diff:
        unused = [name for name, given in _REPORT_OPTIONS if getattr(settings, given)]
        if unused:
            typer.echo(f"kblint: warning: --diff prints the diff alone: {', '.join(unused)} not used", err=True)
        diffs = "".join(unified_diff(p) for p in found.plans)

        def write_diffs() -> None:
            sys.stdout.write(diffs)

        _emit(write_diffs)
        typer.echo(f"kblint: would fix {plural(found.count, 'issue')} in {plural(len(found.plans), 'file')}", err=True)
        raise typer.Exit(1 if found.plans else 0)
    written = [p for p in found.plans if _written(write_fixed(p))]
    fixed = sum(len(p.issues) for p in written)
    typer.echo(f"kblint: fixed {plural(fixed, 'issue')} in {plural(len(written), 'file')}", err=True)
    return {fix_key(issue) for issue in found.left_out}


_REPORT_OPTIONS = (("--output", "output"), ("--write-baseline", "write_baseline"), ("--report", "reports"))


def _written(problem: Optional[str]) -> bool:
    if problem is not None:
        typer.echo(f"kblint: warning: {problem}", err=True)
    return problem is None


def _use_color(settings: "Settings") -> bool:
    """--color always or never; auto: FORCE_COLOR, then NO_COLOR (https://no-color.org), then
    whether the report goes to a terminal."""
    if settings.color != "auto":
        return settings.color == "always"
    if os.environ.get("FORCE_COLOR"):
        return True
    if os.environ.get("NO_COLOR"):
        return False
    return settings.output is None and sys.stdout.isatty()


@app.command()
def checkers(
    kb: Optional[str] = typer.Option(
        None,
        "--kb",
        metavar="PATH|NAME",
        help="A KB directory, a directory of KBs, an entry, or a KB name: how each rubric item is enforced.",
    ),
    format: str = typer.Option("text", "--format", "-f", metavar="FORMAT", help="text or json."),
    llm: Optional[str] = typer.Option(
        None, "--llm", metavar="PROVIDER:MODEL", help="The LLM that would judge the judgment items."
    ),
    config: Optional[str] = typer.Option(None, "--config", metavar="FILE", help="Read settings from FILE."),
    verbose: bool = typer.Option(False, "--verbose", help="Show tracebacks of internal errors."),
) -> None:
    """List the checkers; with --kb, the coverage table: how every rubric item is enforced."""
    if format not in ("text", "json"):
        _fail(f"--format: expected text or json, got '{format}'")
    from .checkers.registry import registry
    from .errors import UsageError
    from .model.plan import build_plan
    from .paths import printable
    from .report import coverage
    from .workspace import load_kbs_for_plan

    reg = registry()
    _warn_plugin_problems()
    if kb is None:
        sys.stdout.write(coverage.render_json(reg, []) if format == "json" else coverage.render_checkers(reg))
        raise typer.Exit(0)
    try:
        schemas, problems = load_kbs_for_plan(kb, _plugin_types(), several=True)
    except UsageError as exc:
        _fail(str(exc))
    for problem in problems:
        typer.echo(f"kblint: cannot read this KB: {printable(problem)}", err=True)
    plans = [(build_plan(schema, reg), schema.root) for schema in schemas]
    evaluator = _evaluator(llm, config)
    text = coverage.render_json(reg, plans, evaluator) if format == "json" else coverage.render_text(plans, evaluator)
    sys.stdout.write(text)
    raise typer.Exit(2 if problems else 1 if any(plan.has_errors() for plan, _ in plans) else 0)


@app.command()
def schema(
    path: str = typer.Argument(
        ".",
        metavar="[PATH]",
        help="A KB directory (holding kb.yaml), an entry, or a KB name under the current directory.",
    ),
) -> None:
    """Print the KB's intent as JSON for agents: types, fields, guidelines, goals and rubrics."""
    import json

    from .errors import UsageError
    from .intent import intent
    from .model.plan import build_plan
    from .workspace import load_kbs_for_plan

    _warn_plugin_problems()
    try:
        schemas, _ = load_kbs_for_plan(path, _plugin_types())
    except UsageError as exc:
        _fail(str(exc))
    (schema_,) = schemas  # a name shared by several KBs, or a directory of several, is refused
    sys.stdout.write(json.dumps(intent(schema_, build_plan(schema_)), indent=2, ensure_ascii=False) + "\n")


@app.command()
def migrate(
    path: str = typer.Argument(".", metavar="[PATH]", help="A KB directory (or its kb.yaml)."),
    write: bool = typer.Option(False, "--write", help="Apply the proposals to kb.yaml in place."),
    verbose: bool = typer.Option(False, "--verbose", help="Show tracebacks of internal errors."),
) -> None:
    """Suggest bindings for string rubric items; --write edits kb.yaml in place, keeping everything else."""
    from .migrate import MigrationError, diffable, propose, summary, unified_diff
    from .migrate import write as write_kb

    try:
        result = propose(path)
        wrote = write_kb(result) if write else False
    except MigrationError as exc:
        _fail(str(exc))
    if diffable(result):
        sys.stdout.write(unified_diff(result))
    elif result.changed and not wrote:
        typer.echo(
            f"kblint: {result.path} ends lines with a lone CR, which no diff can show: --write makes the change",
            err=True,
        )
    for p in result.proposals:  # why each item was bound; stderr keeps stdout a clean diff
        typer.echo(f"{result.path}:{p.line}: {p.text!r}: {p.reason}", err=True)
    typer.echo(summary(result) + (f"; wrote {result.path}" if wrote else ""))
    raise typer.Exit(0)


@app.command()
def explain(
    name: Optional[str] = typer.Argument(
        None, metavar="[NAME]", help="A rule, a checker, a tier, or 'policy'; none: list them all."
    ),
) -> None:
    """Print the documentation of a rule, a checker, a tier or the policy grammar; with no name, list them."""
    from .explain import UnknownName
    from .explain import explain as explain_name

    try:
        sys.stdout.write(explain_name(name))
    except UnknownName as exc:
        _fail(str(exc))


@app.command("mcp")
def mcp_command(
    kb: Optional[str] = typer.Option(
        None,
        "--kb",
        metavar="DIR",
        help="A KB directory or a directory of KBs: the KB of the tools that name none, where KB names are found.",
    ),
    llm: Optional[str] = typer.Option(
        None, "--llm", metavar="PROVIDER:MODEL", help="Judge candidates' judgment items (default: not evaluated)."
    ),
    llm_base_url: Optional[str] = typer.Option(
        None, "--llm-base-url", metavar="URL", help="Base URL of the LLM server."
    ),
    config: Optional[str] = typer.Option(
        None, "--config", metavar="FILE", help="Read settings from FILE (default: the nearest one above each KB)."
    ),
    cache_dir: Optional[str] = typer.Option(
        None, "--cache-dir", metavar="DIR", help="Cache directory (default .kblint_cache/ beside the configuration)."
    ),
    no_cache: bool = typer.Option(False, "--no-cache", help="Do not read or write the caches."),
    verbose: bool = typer.Option(False, "--verbose", help="Log requests, and tracebacks of internal errors."),
) -> None:
    """Serve kb_schema, validate_entry, coverage and explain to an MCP client over standard input and output."""
    if kb is not None and not os.path.isdir(kb):
        _fail(f"--kb {kb}: not a directory (give a KB directory or a directory of KBs)")
    if llm is not None:
        _evaluator(llm, config)  # a malformed spec stops the server before a client waits on it
    try:
        from .mcp_server import ServerOptions, serve
    except ModuleNotFoundError as exc:
        if (exc.name or "").startswith("kblint"):
            raise
        _fail(f"kblint mcp needs the server extra: {SERVER_EXTRA}")
    _warn_plugin_problems()
    root = os.path.abspath(kb) if kb is not None else None
    _stop_on_interrupt()
    serve(ServerOptions(root, llm, llm_base_url, config, cache_dir, no_cache, verbose))


cache_app = typer.Typer(
    help="The cache of lint results and judge verdicts: `kblint cache info`, `kblint cache clear`.",
    no_args_is_help=True,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)
app.add_typer(cache_app, name="cache")


def _cache_dir(cache_dir: Optional[str], config: Optional[str]) -> str:
    from .config import ConfigError, resolve

    try:
        directory = resolve({"cache_dir": cache_dir}, config).cache_dir
    except ConfigError as exc:
        _fail(str(exc))
    assert directory is not None  # resolve() always sets the cache directory
    return directory


@cache_app.command("info")
def cache_info(
    cache_dir: Optional[str] = typer.Option(
        None, "--cache-dir", metavar="DIR", help="Cache directory (default .kblint_cache/)."
    ),
    config: Optional[str] = typer.Option(None, "--config", metavar="FILE", help="Read settings from FILE."),
) -> None:
    """Where the cache is and how much it holds."""
    from .infra.resultcache import info as results_info
    from .judge import cache_info as info

    directory = _cache_dir(cache_dir, config)
    data = info(directory)
    results = results_info(directory)
    typer.echo(
        f"{directory}: {data['entries']} cached verdicts ({data['bytes']} bytes), "
        f"lint results of {results['kbs']} KB{'s' if results['kbs'] != 1 else ''} and "
        f"{results['runs']} run{'s' if results['runs'] != 1 else ''} ({results['bytes']} bytes)"
    )


@cache_app.command("clear")
def cache_clear(
    cache_dir: Optional[str] = typer.Option(
        None, "--cache-dir", metavar="DIR", help="Cache directory (default .kblint_cache/)."
    ),
    config: Optional[str] = typer.Option(None, "--config", metavar="FILE", help="Read settings from FILE."),
) -> None:
    """Empty the cache: judge verdicts and lint results."""
    from .infra.resultcache import clear as clear_results
    from .infra.resultcache import is_kblint_cache
    from .judge import cache_clear as clear
    from .judge.cache import SUBDIR

    directory = _cache_dir(cache_dir, config)
    if os.path.lexists(directory) and not is_kblint_cache(directory):
        _fail(f"{directory} is no kblint cache (it has no .gitignore that kblint wrote): nothing removed")
    verdicts = clear(directory)
    left = ([SUBDIR] if os.path.lexists(os.path.join(directory, SUBDIR)) else []) + clear_results(directory)
    if left:
        _fail(f"{directory}: could not remove {', '.join(left)} (permissions?)")
    typer.echo(f"{directory}: removed {verdicts} cached verdicts and the cached lint results")


@app.command("server")
def server_command(
    config: Optional[str] = typer.Option(
        None, "--config", metavar="FILE", help="Read settings from FILE (default: the nearest one above the workspace)."
    ),
    debounce_ms: Optional[int] = typer.Option(
        None, "--debounce-ms", metavar="MS", help="Quiet after a change before the entry is linted again (default 150)."
    ),
    stdio: bool = typer.Option(False, "--stdio", help="Speak over standard input and output (the only transport)."),
    verbose: bool = typer.Option(False, "--verbose", help="Log the protocol to standard error."),
) -> None:
    """Serve the Language Server Protocol over standard input and output: diagnostics as you type, hover, completion."""
    from .config import ConfigError, resolve

    if debounce_ms is not None and debounce_ms < 0:
        _fail(f"--debounce-ms: expected 0 or more, got {debounce_ms}")
    if config is not None:
        try:
            resolve({}, config)
        except ConfigError as exc:
            _fail(str(exc))
    try:
        from .lsp.server import ServerOptions, serve
    except ModuleNotFoundError as exc:
        if (exc.name or "").startswith("kblint"):
            raise
        _fail(f"kblint server needs the server extra: {SERVER_EXTRA}")
    _warn_plugin_problems()
    if verbose:
        import logging

        logging.basicConfig(level=logging.DEBUG, stream=sys.stderr)
    delay = debounce_ms / 1000 if debounce_ms is not None else None
    _stop_on_interrupt()
    serve(ServerOptions(os.path.abspath(config) if config else None, delay))


def _stop_on_interrupt() -> None:
    """Ctrl-C ends a server at once. Its frameworks read standard input in a thread that an
    interrupt does not wake, and wait for that thread before they exit: Ctrl-C would hang."""
    import signal

    def stop(signum: int, frame: object) -> None:
        sys.stderr.write("kblint: interrupted\n")
        sys.stderr.flush()
        os._exit(2)  # as _interrupted exits, without waiting for the reading thread

    signal.signal(signal.SIGINT, stop)


_INTERRUPTED = 130  # the exit code typer gives a KeyboardInterrupt inside a command


def _interrupted() -> None:
    typer.echo("kblint: interrupted", err=True)
    sys.exit(2)


def _escape_unencodable_output() -> None:
    """Text that cannot be encoded (the undecodable bytes of an odd file name, kept as lone
    surrogates) is written as a backslash escape, which JSON also reads back as the same text."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="backslashreplace")


def run_app() -> None:
    _escape_unencodable_output()
    try:
        app()
    except SystemExit as exc:
        if exc.code == _INTERRUPTED:  # the framework's answer to Ctrl-C; kblint's own codes are 0, 1, 2
            _interrupted()
        raise
    except KeyboardInterrupt:  # before the framework took over
        _interrupted()
    # Any other BaseException (a plugin's code may raise one) is an internal error too.
    except BaseException as exc:  # noqa: BLE001 - the user sees one line, never a traceback
        if "--verbose" in sys.argv:
            import traceback

            traceback.print_exc()
        from .checkers.base import describe

        typer.echo(f"kblint: internal error: {describe(exc)} (run with --verbose for details)", err=True)
        sys.exit(2)
