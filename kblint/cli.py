"""The command-line interface: commands and wiring only; the work happens in the engine.

No `from __future__ import annotations` here: typer reads each command's annotations on every run,
and strings would have to be evaluated again each time (about 4 ms of start-up)."""

import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, List, NoReturn, Optional

import typer

from . import __version__

if TYPE_CHECKING:
    from .config import Settings
    from .model.issue import Report
    from .model.kbschema import PluginType

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


@app.command()
def validate(
    paths: Optional[List[str]] = typer.Argument(None, help="KB directories, directories of KBs, or .md files."),
    format: Optional[str] = typer.Option(
        None, "--format", "-f", help="Report format: text, json, sarif, github, junit."
    ),
    output: Optional[str] = typer.Option(None, "--output", "-o", help="Write the report to FILE."),
    report: Optional[List[str]] = typer.Option(
        None, "--report", help="Also write the report in FORMAT to FILE, from the same run (FORMAT:FILE, repeatable)."
    ),
    fail_on: Optional[str] = typer.Option(None, "--fail-on", help="error (default), warning, info or never."),
    select: Optional[List[str]] = typer.Option(
        None, "--select", help="Only these rules, tiers or checkers (comma-separated)."
    ),
    ignore: Optional[List[str]] = typer.Option(
        None, "--ignore", help="Hide these rules, tiers or checkers (comma-separated)."
    ),
    kb: Optional[str] = typer.Option(None, "--kb", help="A KB name (restrict the run) or a KB directory (context)."),
    type_: Optional[str] = typer.Option(None, "--type", help="Only report entries of this type."),
    strict_links: bool = typer.Option(False, "--strict-links", help="Links into absent KBs are broken links."),
    stdin: bool = typer.Option(False, "--stdin", help="Read one candidate entry from standard input."),
    stdin_path: Optional[str] = typer.Option(None, "--stdin-path", help="Where the stdin entry would live (REL.md)."),
    no_respect_gitignore: bool = typer.Option(False, "--no-respect-gitignore", help="Lint files git ignores too."),
    base: Optional[str] = typer.Option(
        None, "--base", help="Git revision: status gates apply to transitions since it."
    ),
    changed_since: Optional[str] = typer.Option(
        None, "--changed-since", help="Only entries changed since this git revision."
    ),
    baseline: Optional[str] = typer.Option(None, "--baseline", help="Report only issues not recorded in FILE."),
    write_baseline: Optional[str] = typer.Option(None, "--write-baseline", help="Record the current issues in FILE."),
    statistics: bool = typer.Option(False, "--statistics", help="Print counts per rule and checker, and the scores."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="Print only the issues."),
    no_judgment: bool = typer.Option(False, "--no-judgment", help="Do not run the judgment tier."),
    llm: Optional[str] = typer.Option(
        None, "--llm", help="PROVIDER:MODEL (openai, ollama, anthropic) for judgment items."
    ),
    llm_base_url: Optional[str] = typer.Option(None, "--llm-base-url", help="Base URL of an OpenAI-compatible server."),
    llm_concurrency: Optional[int] = typer.Option(
        None, "--llm-concurrency", min=1, help="LLM requests in flight (default 4)."
    ),
    llm_min_confidence: Optional[float] = typer.Option(
        None, "--llm-min-confidence", min=0.0, max=1.0, help="Confidence a fail needs to be a violation (default 0.7)."
    ),
    max_llm_calls: Optional[int] = typer.Option(None, "--max-llm-calls", min=0, help="At most N LLM requests."),
    llm_timeout: Optional[float] = typer.Option(
        None,
        "--llm-timeout",
        min=0.001,
        help="Seconds an LLM request may take (default 600 for a local server, 60 for a hosted one).",
    ),
    llm_max_output: Optional[int] = typer.Option(
        None, "--llm-max-output", min=1, help="The most tokens an LLM answer may have (default 4096)."
    ),
    llm_required: bool = typer.Option(False, "--llm-required", help="Exit 2 when the LLM cannot be reached."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Print what would be sent to the LLM; send nothing."),
    no_cache: bool = typer.Option(False, "--no-cache", help="Do not read or write the caches."),
    cache_dir: Optional[str] = typer.Option(None, "--cache-dir", help="Cache directory (default .kblint_cache/)."),
    jobs: Optional[int] = typer.Option(None, "--jobs", "-j", min=1, help="Parse in N processes (default: CPU count)."),
    shard: Optional[str] = typer.Option(None, "--shard", help="K/N: report shard K of N (for parallel CI jobs)."),
    config: Optional[str] = typer.Option(
        None, "--config", help="Read settings from FILE (kblint.toml or pyproject.toml)."
    ),
    verbose: bool = typer.Option(False, "--verbose", help="Show tracebacks of internal errors."),
) -> None:
    """Lint knowledge bases (default: the current directory)."""
    settings = _validate_settings(_validate_flags(locals()), config)
    # one byte past the limit tells that the entry is over it, without reading all of it
    stdin_data = sys.stdin.buffer.read(settings.limits.max_file_bytes + 1) if settings.stdin else None
    _warn_plugin_problems()

    from .engine.pass_judgment import JudgmentSetupError
    from .engine.run import run
    from .errors import UsageError

    try:
        report, warnings = run(settings, stdin_data=stdin_data)
    except (UsageError, JudgmentSetupError) as exc:
        _fail(str(exc))
    for warning in warnings:
        typer.echo(f"kblint: warning: {warning}", err=True)
    for message in report.unreadable:
        typer.echo(f"kblint: cannot lint this KB: {message}", err=True)
    if report.fatal:
        typer.echo(f"kblint: {report.fatal}", err=True)
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
    flags["paths"] = list(options["paths"] or [])
    flags["select"] = split_names(options["select"])
    flags["ignore"] = split_names(options["ignore"])
    flags["type"] = flags.pop("type_")
    flags["reports"] = list(flags.pop("report") or [])
    flags["respect_gitignore"] = False if flags.pop("no_respect_gitignore") else None
    return flags


def _validate_settings(flags: dict[str, Any], config: Optional[str]) -> "Settings":
    """The settings of a validate run: the configuration file under the flags, checked."""
    from .config import ConfigError, resolve
    from .model.issue import FAIL_ON_CHOICES
    from .report import FORMATS

    try:
        settings = resolve(flags, config)
    except ConfigError as exc:
        _fail(str(exc))
    if settings.fail_on not in FAIL_ON_CHOICES:
        _fail(f"--fail-on: expected one of {', '.join(FAIL_ON_CHOICES)}, got '{settings.fail_on}'")
    if settings.format is None:
        settings.format = "github" if os.environ.get("GITHUB_ACTIONS") == "true" else "text"
    if settings.format not in FORMATS:
        _fail(f"--format: expected one of {', '.join(FORMATS)}, got '{settings.format}'")
    for spec in settings.reports:
        fmt, _, file = spec.partition(":")
        if fmt not in FORMATS or not file:
            _fail(f"--report {spec}: expected FORMAT:FILE with FORMAT one of {', '.join(FORMATS)}")
    if settings.stdin and settings.paths:
        _fail("--stdin reads the entry from standard input: give no PATH with it")
    if settings.stdin_path and not settings.stdin:
        _fail("--stdin-path names where the --stdin entry would live: use it with --stdin")
    return settings


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
        if fmt == "json":
            from .report.json import dry_run_json

            sys.stdout.write(dry_run_json(report))
        else:
            sys.stdout.write("\n".join(dry_run_lines(report)) + "\n")
        return
    if fmt == "json" and not settings.output:
        from .report.json import write as write_json

        write_json(report, sys.stdout)  # streamed: a 100,000-entry report is never held as one string
        return
    color = fmt == "text" and sys.stdout.isatty() and not os.environ.get("NO_COLOR") and settings.output is None
    text = render(report, fmt, color=color, statistics=settings.statistics)
    if settings.quiet and fmt == "text":
        text = "".join(issue_line(issue, color) + "\n" for issue in report.issues)
    if not settings.output:
        sys.stdout.write(text)
        return
    _write_file(report, fmt, settings.output, "--output", text)
    if not settings.quiet:
        sys.stdout.write("\n".join(summary_lines(report)) + "\n")


def _write_file(report: "Report", fmt: str, path: str, option: str, text: Optional[str] = None) -> None:
    """Write REPORT in the format FMT to PATH (TEXT when it is already rendered)."""
    from .report import render

    try:
        with open(path, "w", encoding="utf-8", errors="backslashreplace") as fh:
            if text is None and fmt == "json":
                from .report.json import write as write_json

                write_json(report, fh)
            else:
                fh.write(render(report, fmt) if text is None else text)
    except OSError as exc:
        _fail(f"{option} {path}: {exc.strerror}")


@app.command()
def checkers(
    kb: Optional[str] = typer.Option(None, "--kb", help="A KB directory or name: show how its rubric is enforced."),
    format: str = typer.Option("text", "--format", "-f", help="text or json."),
    llm: Optional[str] = typer.Option(None, "--llm", help="PROVIDER:MODEL that would judge the judgment items."),
    config: Optional[str] = typer.Option(None, "--config", help="Read settings from FILE."),
    verbose: bool = typer.Option(False, "--verbose", help="Show tracebacks of internal errors."),
) -> None:
    """List the checkers; with --kb, the coverage table: how every rubric item is enforced."""
    if format not in ("text", "json"):
        _fail(f"--format: expected text or json, got '{format}'")
    from .checkers.registry import registry
    from .errors import UsageError
    from .model.plan import build_plan
    from .report import coverage
    from .workspace import load_kbs_for_plan

    reg = registry()
    _warn_plugin_problems()
    if kb is None:
        sys.stdout.write(coverage.render_json(reg, []) if format == "json" else coverage.render_checkers(reg))
        raise typer.Exit(0)
    try:
        schemas = load_kbs_for_plan(kb, _plugin_types())
    except UsageError as exc:
        _fail(str(exc))
    plans = [(build_plan(schema, reg), schema.root) for schema in schemas]
    evaluator = _evaluator(llm, config)
    text = coverage.render_json(reg, plans, evaluator) if format == "json" else coverage.render_text(plans, evaluator)
    sys.stdout.write(text)
    raise typer.Exit(1 if any(plan.broken() for plan, _ in plans) else 0)


@app.command()
def schema(
    path: str = typer.Argument(".", help="A KB directory (holding kb.yaml), or a KB name under the current directory."),
) -> None:
    """Print the KB's intent as JSON for agents: types, fields, guidelines, goals and rubrics."""
    import json

    from .errors import UsageError
    from .intent import intent
    from .model.plan import build_plan
    from .workspace import load_kbs_for_plan

    _warn_plugin_problems()
    try:
        schemas = load_kbs_for_plan(path, _plugin_types())
    except UsageError as exc:
        _fail(str(exc))
    (schema_,) = schemas  # a name shared by several KBs is refused by load_kbs_for_plan
    sys.stdout.write(json.dumps(intent(schema_, build_plan(schema_)), indent=2, ensure_ascii=False) + "\n")


@app.command()
def migrate(
    path: str = typer.Argument(".", help="A KB directory (or its kb.yaml)."),
    write: bool = typer.Option(False, "--write", help="Apply the proposals to kb.yaml in place."),
    verbose: bool = typer.Option(False, "--verbose", help="Show tracebacks of internal errors."),
) -> None:
    """Suggest bindings for string rubric items; --write edits kb.yaml in place, keeping everything else."""
    from .migrate import MigrationError, propose, summary, unified_diff
    from .migrate import write as write_kb

    try:
        result = propose(path)
        wrote = write_kb(result) if write else False
    except MigrationError as exc:
        _fail(str(exc))
    sys.stdout.write(unified_diff(result))
    for p in result.proposals:  # why each item was bound; stderr keeps stdout a clean diff
        typer.echo(f"{result.path}:{p.line}: {p.text!r}: {p.reason}", err=True)
    typer.echo(summary(result) + (f"; wrote {result.path}" if wrote else ""))
    raise typer.Exit(0)


@app.command()
def explain(
    name: Optional[str] = typer.Argument(None, help="A rule, a checker, a tier, or 'policy'; none: list them all."),
) -> None:
    """Print the documentation of a rule, a checker, a tier or the policy grammar; with no name, list them."""
    from .explain import UnknownName
    from .explain import explain as explain_name

    try:
        sys.stdout.write(explain_name(name))
    except UnknownName as exc:
        _fail(str(exc))


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
    cache_dir: Optional[str] = typer.Option(None, "--cache-dir", help="Cache directory (default .kblint_cache/)."),
    config: Optional[str] = typer.Option(None, "--config", help="Read settings from FILE."),
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
    cache_dir: Optional[str] = typer.Option(None, "--cache-dir", help="Cache directory (default .kblint_cache/)."),
    config: Optional[str] = typer.Option(None, "--config", help="Read settings from FILE."),
) -> None:
    """Empty the cache: judge verdicts and lint results."""
    from .infra.resultcache import clear as clear_results
    from .judge import cache_clear as clear

    directory = _cache_dir(cache_dir, config)
    verdicts = clear(directory)
    clear_results(directory)
    typer.echo(f"{directory}: removed {verdicts} cached verdicts and the cached lint results")


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
    except Exception as exc:  # noqa: BLE001 - the user sees one line, never a traceback
        if "--verbose" in sys.argv:
            import traceback

            traceback.print_exc()
        typer.echo(f"kblint: internal error: {type(exc).__name__}: {exc} (run with --verbose for details)", err=True)
        sys.exit(2)
