"""`kblint mcp`: a Model Context Protocol server over standard input and output, for agents that
write entries. Its tools are the commands an agent would otherwise run, over the same engine:

    kb_schema       the KB's intent, as `kblint schema` prints it
    validate_entry  a candidate entry gated as `kblint validate --kb KB --stdin --stdin-path PATH`
    coverage        how each rubric item is enforced, as `kblint checkers --kb KB --format json`
    explain         the page of a rule, checker, tier or topic, as `kblint explain NAME`

A tool names its KB by directory or by name; one it does not name is the server's `--kb`. What a
caller gets wrong (a KB that is not there, a path outside the KB, text too large) is a tool error
with a message saying what to change; the server itself goes on serving.
"""

from __future__ import annotations

import contextvars
import difflib
import json
import os
import re
import sys
import threading
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from types import TracebackType
from typing import TYPE_CHECKING, Annotated, Any, Literal, Self, TypeVar

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from mcp_types import jsonrpc_message_adapter
from pydantic import Field, ValidationError

from . import __version__
from .config import ConfigError, Settings, resolve
from .errors import UsageError
from .paths import display_path, is_within, relative_to, show_absolute

if TYPE_CHECKING:
    from mcp.shared._stream_protocols import ReadStream

    from .model.kbschema import KBSchema

T = TypeVar("T")

INSTRUCTIONS = (
    "kblint lints markdown knowledge bases (KBs): entries with YAML frontmatter, governed by a kb.yaml. "
    "Before writing an entry, read the KB's intent with kb_schema; gate a draft with validate_entry "
    "(verdict 'pass' means no issue at or above fail_on) and fix what its issues say; coverage shows how "
    "every rubric item is enforced, explain documents a rule or checker named in an issue."
)

FailOn = Literal["error", "warning", "info", "never"]
KBArg = Annotated[
    str | None,
    Field(description="A KB directory (holding kb.yaml) or a KB's name; default: the KB the server was started on."),
]


_PAIR_RULES = ("possible_duplicate", "duplicate_entry", "conflicting_entries")


@dataclass(frozen=True)
class ServerOptions:
    """How `kblint mcp` was started."""

    root: str | None = None  # a KB directory or a directory of KBs: the KB of tools that name none
    llm: str | None = None  # provider:model judging the judgment items; None: they are not evaluated
    llm_base_url: str | None = None
    config: str | None = None  # a configuration file; None: the nearest one above each KB
    cache_dir: str | None = None
    no_cache: bool = False
    verbose: bool = False


# Issues a validate_entry result lists, in report order (`counts` has them all): a candidate can
# hold far more (a key given 100,000 times is as many duplicate_key issues), and an answer of
# hundreds of megabytes is of use to no agent.
MAX_ISSUES = 1_000


class KBTools:
    """What each tool does, apart from the protocol: each method returns the tool's result or
    raises ToolError with a message for the caller."""

    def __init__(self, options: ServerOptions):
        self.options = options
        self.lock = threading.Lock()  # one engine run at a time: the registry and pattern budget are shared

    # -- finding the KB a tool names ------------------------------------------------------------

    def kb_root(self, kb: str | None) -> str:
        """The directory of the KB that KB names: a directory, a kb.yaml, an entry, or a KB's name."""
        base = self.options.root or os.getcwd()
        if kb is None:
            if self.options.root is None:
                raise ToolError("no KB given: pass `kb` (a KB directory or name), or start the server with --kb DIR")
            return self._kb_in(self.options.root, self.options.root)
        if not kb.strip() or "\0" in kb:
            raise ToolError(f"kb {kb!r}: expected a KB directory or a KB's name")
        target = os.path.join(base, os.path.expanduser(kb))
        if self.options.root is not None and not _within(target, self.options.root):
            raise ToolError(f"kb {kb}: outside the KBs this server serves ({display_path(self.options.root)})")
        if os.path.isfile(target):
            from .workspace import nearest_kb_root

            root = nearest_kb_root(target)
            if root is None:
                raise ToolError(f"kb {kb}: a file, and not inside a KB (no kb.yaml in its directory or above)")
            if self.options.root is not None and not _within(root, self.options.root):
                served = display_path(self.options.root)
                raise ToolError(
                    f"kb {kb}: its KB ({display_path(root)}) is not inside what this server serves ({served})"
                )
            return root
        if os.path.isdir(target):
            return self._kb_in(target, kb)
        if os.path.isabs(kb) or "/" in kb or os.sep in kb:
            where = "" if os.path.isabs(kb) else f" under {display_path(base)}"
            raise ToolError(f"kb {kb}: no such directory{where}")
        return self._kb_named(kb, base)

    def _kb_in(self, directory: str, shown: str) -> str:
        from .workspace import find_kb_roots

        directory = os.path.abspath(directory)
        if os.path.isfile(os.path.join(directory, "kb.yaml")):
            return directory
        roots = find_kb_roots(directory)
        if not roots:
            raise ToolError(f"kb {shown}: no kb.yaml in that directory or below")
        if len(roots) > 1:
            names = _kb_names(roots)
            if len(set(names)) < len(names):  # a name is no way to pick one of these: their folders are
                listed = ", ".join(display_path(root) for root in roots)
                raise ToolError(f"kb {shown}: holds several KBs ({listed}); pass `kb` with the directory of one")
            raise ToolError(f"kb {shown}: holds several KBs ({', '.join(names)}); pass `kb` with one of their names")
        return roots[0]

    def _kb_named(self, name: str, base: str) -> str:
        from .workspace import find_kb_roots

        roots = find_kb_roots(base) if os.path.isdir(base) else []
        names = _kb_names(roots)
        named = [root for root, other in zip(roots, names, strict=True) if other == name]
        if len(named) == 1:
            return named[0]
        if named:
            paths = " and ".join(display_path(root) for root in named)
            raise ToolError(f"kb {name}: several KBs have that name ({paths}); pass `kb` with the directory of one")
        distinct = list(dict.fromkeys(names))
        near = difflib.get_close_matches(name, distinct, n=1)
        hint = f"; did you mean '{near[0]}'?" if near else f" (KBs there: {', '.join(distinct) or 'none'})"
        raise ToolError(f"kb {name}: no such directory, and no KB of that name under {display_path(base)}{hint}")

    def _schema(self, root: str) -> KBSchema:
        from .checkers.registry import registry
        from .workspace import load_kbs_for_plan

        plugins = registry().plugins
        try:
            (schema,), _ = load_kbs_for_plan(root, tuple(plugins.types) if plugins else ())
        except UsageError as exc:
            raise ToolError(f"cannot read this KB: {exc}") from None
        return schema

    # -- the tools ------------------------------------------------------------------------------

    def kb_schema(self, kb: str | None) -> dict[str, Any]:
        from .intent import intent
        from .model.plan import build_plan

        _unicode(kb=kb)
        with self.lock:
            schema = self._schema(self.kb_root(kb))
            return intent(schema, build_plan(schema))

    def coverage(self, kb: str | None) -> dict[str, Any]:
        from .checkers.registry import registry
        from .model.plan import build_plan
        from .report.coverage import render_json

        _unicode(kb=kb)
        with self.lock:
            schema = self._schema(self.kb_root(kb))
            reg = registry()
            evaluator = self._evaluator(schema.root)
            plan = json.loads(render_json(reg, [(build_plan(schema, reg), schema.root)], evaluator))
            return dict(plan["kbs"][0])

    def explain(self, name: str | None) -> str:
        from .explain import UnknownName
        from .explain import explain as explain_name

        _unicode(name=name)
        try:
            return explain_name(name or None)  # an empty name asks for the list, as no name does
        except UnknownName as exc:
            raise ToolError(str(exc)) from None

    def validate_entry(self, kb: str | None, path: str, text: str, fail_on: str) -> dict[str, Any]:
        from .workspace import Excluder, not_an_entry

        _unicode(path=path, text=text, kb=kb)
        with self.lock:
            root = self.kb_root(kb)
            relpath = _entry_path(path, root)
            settings = self._settings(root, relpath, fail_on)
            why = not_an_entry(root, relpath, Excluder(settings.exclude), settings.limits, settings.respect_gitignore)
            if why is not None:
                raise ToolError(f"path {path}: not an entry: {why}")
            data = _encoded(text, settings.limits.max_file_bytes)
            self._schema(root)  # an unreadable kb.yaml is the caller's to fix: a tool error, not a report
            return self._gate(settings, data, relpath)

    # -- validate_entry's run -------------------------------------------------------------------

    def _settings(self, root: str, relpath: str, fail_on: str) -> Settings:
        """The settings of `validate --kb ROOT --stdin --stdin-path RELPATH`, with the configuration
        found from the KB; the judgment tier runs only when the server was started with --llm."""
        o = self.options
        flags = {
            "kb": root,
            "stdin": True,
            "stdin_path": relpath,
            "fail_on": fail_on,
            "format": "json",
            "llm": o.llm,
            "llm_base_url": o.llm_base_url,
            "no_judgment": None if o.llm else True,
            "cache_dir": o.cache_dir,
            "no_cache": o.no_cache or None,
        }
        try:
            return resolve(flags, o.config, cwd=root)
        except ConfigError as exc:
            raise ToolError(str(exc)) from None

    def _gate(self, settings: Settings, data: bytes, relpath: str) -> dict[str, Any]:
        from .engine.pass_judgment import JudgmentSetupError
        from .engine.run import run
        from .report.json import issue_dict
        from .report.verdicts import records

        try:
            report, warnings = run(settings, stdin_data=data)
        except (UsageError, JudgmentSetupError) as exc:
            raise ToolError(str(exc)) from None
        if report.problems:
            raise ToolError("cannot lint this KB: " + "; ".join(report.problems))
        issues = [issue_dict(issue, report) for issue in report.issues[:MAX_ISSUES]]
        kb = report.kbs[0] if report.kbs else None
        result: dict[str, Any] = {
            "verdict": "fail" if report.exit_code else "pass",
            "exit_code": report.exit_code,
            "fail_on": report.fail_on,
            "kb": kb.name if kb else None,
            "path": relpath,
            "issues": issues,
            "issues_left_out": max(len(report.issues) - MAX_ISSUES, 0),
            "counts": report.counts,
            "score": kb.score if kb else None,
            "judgment": report.judgment.as_dict(),
            "warnings": warnings,
        }
        if not self.options.llm:  # not the --no-judgment of a command line: the server's own choice
            result["judgment"]["reason"] = "no LLM: the MCP server was started without --llm"
        gated = records(report)  # the candidate's verdict as insertion pipelines read it
        first = next(gated, None)
        if first is not None:
            result["rejection_codes"] = first["rejection_codes"]
            result["curation_queue_entry"] = first["curation_queue_entry"]
        result["alike"] = [issue_dict(issue, report) for issue in report.issues if issue.rule in _PAIR_RULES]
        return result

    def _evaluator(self, root: str) -> str | None:
        """`provider:model` of the server's --llm, which judges the judgment items; None without one."""
        if not self.options.llm:
            return None
        from .engine.pass_judgment import JudgmentSetupError, judge_config

        try:
            flags = {"llm": self.options.llm, "llm_base_url": self.options.llm_base_url}
            return judge_config(resolve(flags, self.options.config, cwd=root)).evaluator
        except (ConfigError, JudgmentSetupError) as exc:
            raise ToolError(str(exc)) from None


def _kb_names(roots: list[str]) -> list[str]:
    """The name of each KB directory of ROOTS (its directory's name when its kb.yaml cannot be read)."""
    from .model.kbschema import load_kb_schema
    from .yamlread.lines import YamlFileError

    names = []
    for root in roots:
        try:
            names.append(load_kb_schema(root).name)
        except YamlFileError:
            names.append(os.path.basename(root))
    return names


def _entry_path(path: str, root: str) -> str:
    """PATH as the KB-relative posix path of an entry of the KB at ROOT, checked."""
    if not path.strip() or "\0" in path:
        raise ToolError(f"path {path!r}: expected the entry's path in the KB, such as findings/new-finding.md")
    if not path.endswith(".md"):
        raise ToolError(f"path {path}: an entry is a markdown file: the path must end in .md")
    full = os.path.normpath(os.path.join(root, path))
    if not is_within(full, root) or full == root:
        raise ToolError(f"path {path}: outside the KB ({display_path(root)}); give a path inside it")
    return relative_to(full, root)


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _unicode(**arguments: str | None) -> None:
    """Refuse the first of ARGUMENTS holding a lone UTF-16 surrogate: JSON can carry one, and no entry
    or file name can hold it."""
    for name, value in arguments.items():
        lone = _LONE_SURROGATE.search(value) if isinstance(value, str) else None
        if lone is not None:
            raise ToolError(f"{name}: not valid Unicode at character {lone.start()} (a lone surrogate)")


def _encoded(text: str, limit: int) -> bytes:
    """TEXT (free of lone surrogates) as the UTF-8 bytes of an entry file, at most LIMIT of them."""
    data = text.encode("utf-8")
    if len(data) > limit:
        raise ToolError(f"text: {len(data)} bytes, over the limit of {limit} bytes for an entry (max_file_bytes)")
    return data


def _guarded(tools: KBTools, call: Callable[[], T]) -> T:
    """CALL's result; what it did not anticipate is a one-line tool error too (with its traceback on
    standard error under --verbose), never the end of the server."""
    try:
        return call()
    except ToolError:
        raise
    except Exception as exc:
        if tools.options.verbose:
            traceback.print_exc(file=sys.stderr)
        raise ToolError(f"internal error: {type(exc).__name__}: {exc}") from exc


def _read_again(item: SessionMessage | Exception) -> SessionMessage | Exception:
    """ITEM, or the message of the line the SDK's JSON parser refused when Python's reads it: JSON lets
    a string hold a lone UTF-16 surrogate ("\\ud800"), which the SDK's parser does not, and the request
    would go unanswered. Read here, it reaches its tool, which names the argument in a tool error."""
    if not isinstance(item, ValidationError):
        return item
    errors = item.errors()
    line = errors[0].get("input") if len(errors) == 1 and errors[0]["type"] == "json_invalid" else None
    if not isinstance(line, str):
        return item
    try:
        message = _answerable(json.loads(line))
        return SessionMessage(jsonrpc_message_adapter.validate_python(message, by_name=False))
    except (ValueError, RecursionError):  # not JSON, too deep, or no JSON-RPC message: the SDK's error stands
        return item


def _answerable(message: Any) -> Any:
    """MESSAGE, read from JSON, with each lone surrogate replaced by U+FFFD wherever the server may
    write it back (an id, a tool's name: its answer must be text it can encode); a tool call's string
    arguments keep theirs, for the tool to say which argument holds one."""
    answerable = _replaced(message)
    if not isinstance(message, dict) or message.get("method") != "tools/call":
        return answerable
    params = message.get("params")
    arguments = params.get("arguments") if isinstance(params, dict) else None
    if isinstance(arguments, dict):
        kept = {_replaced(k): v if isinstance(v, str) else _replaced(v) for k, v in arguments.items()}
        answerable["params"]["arguments"] = kept
    return answerable


def _replaced(value: Any) -> Any:
    """VALUE, read from JSON, with each lone surrogate of its strings replaced by U+FFFD."""
    if isinstance(value, str):
        return _LONE_SURROGATE.sub("\ufffd", value)
    if isinstance(value, list):
        return [_replaced(item) for item in value]
    if isinstance(value, dict):
        return {_replaced(key): _replaced(item) for key, item in value.items()}
    return value


class _ReadAgain:
    """The SDK's stdio read stream, each item passed through _read_again."""

    def __init__(self, inner: ReadStream[SessionMessage | Exception]):
        self.inner = inner

    @property
    def last_context(self) -> contextvars.Context | None:
        """The sender's context of the last item, which the SDK runs its handler in."""
        return getattr(self.inner, "last_context", None)

    async def receive(self) -> SessionMessage | Exception:
        return _read_again(await self.inner.receive())

    async def aclose(self) -> None:
        await self.inner.aclose()

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        return _read_again(await self.inner.__anext__())

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()


class _Server(MCPServer):
    """The SDK's server, reading standard input through _ReadAgain."""

    async def run_stdio_async(self) -> None:
        lowlevel = self._lowlevel_server
        async with stdio_server() as (read_stream, write_stream):
            await lowlevel.run(_ReadAgain(read_stream), write_stream, lowlevel.create_initialization_options())


def build_server(options: ServerOptions) -> MCPServer:
    """The server and its four tools."""
    tools = KBTools(options)
    server: MCPServer = _Server(
        "kblint", version=__version__, instructions=INSTRUCTIONS, log_level="INFO" if options.verbose else "WARNING"
    )

    @server.tool()
    def kb_schema(kb: KBArg = None) -> dict[str, Any]:
        """The KB's intent, as `kblint schema` prints it: each type's fields, required and optional keys,
        ai_instructions, guidelines, goals, and the rubric of each type with how each item is enforced."""
        return _guarded(tools, lambda: tools.kb_schema(kb))

    @server.tool()
    def validate_entry(
        path: Annotated[str, Field(description="Where the entry would live, relative to the KB: findings/new.md.")],
        text: Annotated[str, Field(description="The whole entry: YAML frontmatter between --- lines, then the body.")],
        kb: KBArg = None,
        fail_on: Annotated[FailOn, Field(description="The lowest severity that fails the entry.")] = "error",
    ) -> dict[str, Any]:
        """Gate a candidate entry against the KB without writing it, as `kblint validate --kb KB --stdin
        --stdin-path PATH`: the verdict (pass: no issue at or above fail_on), exit_code, the issues (rule,
        severity, line, message, url of the rule's documentation) and their counts, rejection_codes (what
        failed: item ids, checkers, rules), and `alike`: the existing entries it may duplicate or
        contradict (possible_duplicate; with --llm classified as duplicate_entry or conflicting_entries,
        a conflict also in curation_queue_entry). Judgment items are judged, and pairs classified, only when
        the server was started with --llm; else the items are counted as not evaluated and the pairs stay
        possible_duplicate."""
        return _guarded(tools, lambda: tools.validate_entry(kb, path, text, fail_on))

    @server.tool()
    def coverage(kb: KBArg = None) -> dict[str, Any]:
        """How every rubric item of the KB is enforced (schema, checker, policy, judgment, or broken with
        the reason), as `kblint checkers --kb KB --format json` gives it, with the totals."""
        return _guarded(tools, lambda: tools.coverage(kb))

    @server.tool()
    def explain(
        name: Annotated[
            str | None, Field(description="A rule, checker, tier or topic (policy, levels, json_schema).")
        ] = None,
    ) -> str:
        """The documentation of a rule or checker named in an issue (what triggers it, how to fix and
        suppress it, examples), or of a tier or topic; without a name, the list of them all."""
        return _guarded(tools, lambda: tools.explain(name))

    return server


def serve(options: ServerOptions) -> None:
    """Serve the tools over standard input and output until the client closes the connection."""
    from .infra import collector

    server = build_server(options)
    collector.for_a_long_life()  # the CLI turned the collector off, for one run
    show_absolute()  # the client knows nothing of the server's current directory
    server.run("stdio")


def _within(path: str, root: str) -> bool:
    """Whether PATH is ROOT or below it, once symbolic links are followed (--kb scopes the server)."""
    real, top = os.path.realpath(path), os.path.realpath(root)
    return real == top or real.startswith(top.rstrip(os.sep) + os.sep)
