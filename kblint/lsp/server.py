"""`kblint server`: the Language Server Protocol over standard input and output, with pygls (the
standard Python language-server framework) and lsprotocol's types.

The workspace is indexed once, when the client says it is initialized (and again when it adds or
removes workspace folders); then every open, change (after a short pause in typing) or close of an
entry, a kb.yaml or a cross-kb-links.yaml lints it again from the text the editor holds, and
diagnostics are published for it and for the other entries whose graph issues that changed.
Judgment items show the verdicts the verdict cache holds; the LLM is asked only by the command
`kblint.judgeEntry`, never on typing.
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
import sys
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote

from lsprotocol import types as lsp
from pygls.exceptions import (
    JsonRpcException,
    JsonRpcInvalidParams,
    JsonRpcInvalidRequest,
    JsonRpcServerNotInitialized,
)
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.language_server import lsp_method
from pygls.uris import from_fs_path, to_fs_path

from .. import __version__
from ..config import ConfigError, Settings, resolve
from ..infra import collector
from ..model.issue import Issue
from ..report import issue_url
from . import actions, editing
from .ranges import Span, issue_span, lines_of
from .transport import SKIPPED_METHOD, BoundedInput, one_line_logs
from .workspace import HeldKB, HeldWorkspace, workspace_roots

DEBOUNCE = 0.15  # seconds of quiet after a change before the entry is linted again
DEBOUNCE_ENV = "KBLINT_LSP_DEBOUNCE_MS"
KB_YAML_DEBOUNCE = 1.0  # at least, for a kb.yaml or cross-kb-links.yaml: its whole KB is linted again
JUDGE_COMMAND = "kblint.judgeEntry"
WATCHED = ("**/*.md", "**/kb.yaml", "**/cross-kb-links.yaml")  # the files the client is asked to watch
SEVERITY = {
    "error": lsp.DiagnosticSeverity.Error,
    "warning": lsp.DiagnosticSeverity.Warning,
    "info": lsp.DiagnosticSeverity.Information,
}
_KINDS = {
    "target": lsp.CompletionItemKind.Reference,
    "kb": lsp.CompletionItemKind.Module,
    "type": lsp.CompletionItemKind.Class,
    "field": lsp.CompletionItemKind.Field,
    "value": lsp.CompletionItemKind.EnumMember,
}


@dataclass(slots=True)
class Shown:
    """An issue as it was published: for hover and code actions on it."""

    issue: Issue
    span: Span
    diagnostic: lsp.Diagnostic


@dataclass(slots=True)
class ServerOptions:
    config: str | None = None  # a configuration file; None: the nearest one above the workspace
    debounce: float | None = None  # seconds; None: DEBOUNCE (or the client's initializationOptions)


@dataclass(slots=True)
class State:
    """What the server holds besides the workspace: the files it published diagnostics for."""

    folders: list[str] = field(default_factory=list)
    # path → the URIs the client opened it by (one, unless it spelled the path two ways): the
    # last one gets its diagnostics
    uris: dict[str, list[str]] = field(default_factory=dict)
    shown: dict[str, list[Shown]] = field(default_factory=dict)  # path → its published issues
    timers: dict[str, asyncio.TimerHandle] = field(default_factory=dict)  # path → its pending lint


logger = logging.getLogger(__name__)


class _Protocol(LanguageServerProtocol):
    """pygls's protocol, but a request (a JSON-RPC 2.0 message with a method and an integer or text
    id) is always answered: one whose params do not read as its method's gets Invalid Params, one
    that comes before `initialize` gets Server Not Initialized, a second `initialize` and one that
    comes after `shutdown` get Invalid Request, rather than silence (its client would wait for
    ever). No answer carries a traceback: standard error has it, in one line."""

    exit_code: int | None = None  # once `exit` came: 1 when no `shutdown` came before it (LSP)

    def __init__(self, server: Any, converter: Any):
        super().__init__(server, converter)
        # pygls's key of an open document (its URI unescaped) → how many times it was opened
        self.opened: Counter[str] = Counter()

    def structure_message(self, data: dict[str, Any]) -> Any:
        try:
            return super().structure_message(data)
        except JsonRpcException:
            # json.loads reads nested mappings first: left as they are, and answered in handle_message,
            # which sees only whole messages
            return data

    def handle_message(self, message: Any) -> None:
        if isinstance(message, dict):  # a whole message that did not read as one (structure_message)
            self._answer_unread(message)
            return
        if not hasattr(message, "jsonrpc"):  # a batch (LSP sends none), or JSON that is no object
            logger.warning("a message that is no JSON object (a batch?): answered Invalid Request")
            error = JsonRpcInvalidRequest("a message is one JSON object: LSP sends no batches")
            # id null, as JSON-RPC answers what it cannot read an id from (the converter would drop it)
            self._send_data({"jsonrpc": "2.0", "id": None, "error": {"code": error.code, "message": error.message}})
            return
        method = getattr(message, "method", None)
        msg_id = getattr(message, "id", None)
        if method == SKIPPED_METHOD:
            return  # a message over the size limit, dropped (BoundedInput said so)
        refusal = self._refusal(method) if isinstance(method, str) else None
        if refusal is not None:
            if msg_id is not None:
                self._refuse(msg_id, refusal)
            else:
                logger.warning("%s", refusal.message)  # a notification: LSP says drop it
            return
        if method == lsp.EXIT:
            self.exit_code = 0 if self._shutdown else 1  # pygls's SystemExit ends in its own loop
        super().handle_message(message)

    def _refusal(self, method: str) -> JsonRpcException | None:
        """Why a request or notification of METHOD is not handled now; None: it is."""
        if method == lsp.EXIT:
            return None
        if self._shutdown:
            return JsonRpcInvalidRequest(f"the server is shutting down: {method} is not handled")
        initialized = self._workspace is not None  # pygls makes it as it handles `initialize`
        if not initialized and method != lsp.INITIALIZE:
            return JsonRpcServerNotInitialized(f"the server is not initialized yet: {method} is not handled")
        if initialized and method == lsp.INITIALIZE:
            return JsonRpcInvalidRequest("the server is initialized already: initialize is sent once")
        return None

    @lsp_method(lsp.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(self, params: lsp.DidChangeTextDocumentParams) -> Iterator[Any]:
        """pygls's, for a document the client opened; a change to another is left out (pygls
        would fail on it and show the user a KeyError)."""
        uri = params.text_document.uri
        if unquote(uri) not in self.workspace.text_documents:
            logger.warning("a change to %s, which the client has not opened: left out", uri)
            return
        yield from super().lsp_text_document__did_change(params)

    @lsp_method(lsp.TEXT_DOCUMENT_DID_OPEN)
    def lsp_text_document__did_open(self, params: lsp.DidOpenTextDocumentParams) -> Iterator[Any]:
        self.opened[unquote(params.text_document.uri)] += 1
        yield from super().lsp_text_document__did_open(params)

    @lsp_method(lsp.TEXT_DOCUMENT_DID_CLOSE)
    def lsp_text_document__did_close(self, params: lsp.DidCloseTextDocumentParams) -> Iterator[Any]:
        """pygls's, but pygls holds one document for URIs that differ only in their escapes (`m`,
        `%6D`): it is dropped once the client closed it by each URI it opened it by."""
        key = unquote(params.text_document.uri)
        if self.opened[key] > 1:
            self.opened[key] -= 1
            yield from self._user_handler(lsp.TEXT_DOCUMENT_DID_CLOSE, params)
            return
        self.opened.pop(key, None)
        yield from super().lsp_text_document__did_close(params)

    def _user_handler(self, method: str, params: Any) -> Iterator[Any]:
        handler = self.fm.features.get(method)
        if handler is not None:
            yield handler, (params,), None

    def _answer_unread(self, data: dict[str, Any]) -> None:
        msg_id, method = data.get("id"), data.get("method")
        if data.get("jsonrpc") != "2.0" or isinstance(msg_id, bool) or not isinstance(msg_id, (int, str)):
            logger.warning("a message that is no JSON-RPC 2.0 request, left unanswered: %.200r", data)
        elif (refusal := self._refusal(method if isinstance(method, str) else "")) is not None:
            self._refuse(msg_id, refusal)
        elif isinstance(method, str):
            self._refuse(msg_id, JsonRpcInvalidParams(f"the params of {method} are not what it takes"))
        else:
            self._refuse(msg_id, JsonRpcInvalidRequest("a request names its method"))

    def _refuse(self, msg_id: int | str, error: JsonRpcException) -> None:
        self._send_response(msg_id, error=error.to_response_error())

    def _send_response(self, msg_id: Any, result: Any = None, error: lsp.ResponseError | None = None) -> None:
        if error is not None and isinstance(error.data, dict) and "traceback" in error.data:
            # pygls sends an unexpected error's traceback along, for the client to show its user
            error = lsp.ResponseError(code=error.code, message=error.message.strip().split("\n")[0])
        super()._send_response(msg_id, result, error)


class KBServer(LanguageServer):
    protocol: _Protocol

    def __init__(self, options: ServerOptions):
        super().__init__(
            "kblint", __version__, text_document_sync_kind=lsp.TextDocumentSyncKind.Incremental, protocol_cls=_Protocol
        )
        self.options = options
        self.delay = options.debounce if options.debounce is not None else _env_delay()
        self.state = State()
        self.held = HeldWorkspace(Settings(), [])

    # -- the workspace

    def load(self) -> None:
        """Index the workspace folders, and publish the diagnostics of the open files: those of
        the KBs indexed now, those it held before too (cleared when they are in none)."""
        started = time.perf_counter()
        folders = self.state.folders
        settings = self._settings(folders[0] if folders else os.getcwd())
        roots, warnings = workspace_roots(folders)
        held_open = self.held.texts
        texts = {**self._open_documents(), **held_open}
        self.held = HeldWorkspace(settings, roots, warnings)
        self.held.texts = texts
        self.held.load()
        collector.for_a_long_life()
        for warning in self.held.warnings:
            self.window_show_message(lsp.ShowMessageParams(lsp.MessageType.Warning, f"kblint: {warning}"))
        entries, kbs = len(self.held.live.facts), len(self.held.kbs)
        seconds = time.perf_counter() - started
        self.log(f"kblint: indexed {entries} entries of {kbs} KB(s) in {seconds:.1f} s")
        for path in list(self.held.texts):
            if self.tracks(path):
                self.publish(path)
            elif path in held_open:  # its KB is no longer held
                self.forget(path)
            else:
                self._drop(path)  # open, and in no KB
        for path in [p for p in self.state.shown if p not in self.held.texts]:
            self.publish(path)  # cleared when its KB is no longer held

    def _open_documents(self) -> dict[str, bytes]:
        """The documents the client has open that are not held, by path, with the URIs it opened
        them by: one of a KB indexed now was not held when it was opened."""
        found: dict[str, bytes] = {}
        for document in self.workspace.text_documents.values():
            path = self.path_of(document.uri)
            if path is not None and path not in self.held.texts:
                found[path] = utf8(document.source)
                uris = self.state.uris.setdefault(path, [])
                uris += [document.uri] if document.uri not in uris else []
        return found

    def folders_changed(self, added: list[str], removed: list[str]) -> None:
        """The client added and removed workspace folders: index the workspace again (files that
        did not change come from the result cache)."""
        kept = [f for f in self.state.folders if f not in removed]
        self.state.folders = kept + [f for f in dict.fromkeys(added) if f not in kept]
        self.load()

    def _settings(self, cwd: str) -> Settings:
        try:
            return resolve({}, self.options.config, cwd=cwd)
        except ConfigError as exc:
            self.window_show_message(lsp.ShowMessageParams(lsp.MessageType.Error, f"kblint: {exc}; using defaults"))
            settings = Settings()
            settings.cache_dir = os.path.join(cwd, ".kblint_cache")
            return settings

    def log(self, message: str) -> None:
        self.window_log_message(lsp.LogMessageParams(lsp.MessageType.Info, message))

    # -- documents

    def path_of(self, uri: str) -> str | None:
        path = to_fs_path(uri)
        if not path or "\0" in path:  # no file is named with a NUL (`%00`), and open() would raise
            return None
        return os.path.normpath(os.path.abspath(path))

    def tracks(self, path: str) -> bool:
        return self.held.is_entry(path) or self.held.config_of(path) is not None

    def edited(self, path: str, text: str, *, now: bool) -> None:
        """The editor holds TEXT for PATH: lint it at once (NOW), or after the pause in typing."""
        self.held.texts[path] = utf8(text)
        timer = self.state.timers.pop(path, None)
        if timer is not None:
            timer.cancel()
        if now or self.delay <= 0:
            self.lint(path)
            return
        delay = max(self.delay, KB_YAML_DEBOUNCE) if self.held.config_of(path) is not None else self.delay
        self.state.timers[path] = asyncio.get_running_loop().call_later(delay, self.lint, path)

    def lint(self, path: str) -> None:
        """Lint PATH again (an entry; a kb.yaml or cross-kb-links.yaml: its KB is planned or linked,
        and linted, again), and publish."""
        self.state.timers.pop(path, None)
        kb = self.held.config_of(path)
        if kb is None:
            others = self.held.refresh(path)
        else:
            data = self.held.texts.get(path)
            others = self.held.reload_config(kb, path, data.decode("utf-8", "replace") if data is not None else None)
            others |= self.shown_in(kb)
            collector.for_a_long_life()
        self.publish(path)
        for other in sorted(others - {path}):
            self.publish(other)

    def shown_in(self, kb: HeldKB) -> set[str]:
        """The files of KB that are open or show diagnostics: a new plan may change all of them."""
        return {p for p in [*self.held.texts, *self.state.shown] if self.held.kb_of(p) is kb}

    def forget(self, path: str) -> None:
        """PATH is in no KB held now (its folder was removed): its text and diagnostics go."""
        self._drop(path)
        self.clear(path)

    def _drop(self, path: str) -> None:
        timer = self.state.timers.pop(path, None)
        if timer is not None:
            timer.cancel()
        self.held.texts.pop(path, None)
        self.state.uris.pop(path, None)

    def closed(self, path: str) -> None:
        """The editor closed PATH: what is on disk counts again."""
        self._drop(path)
        kb = self.held.config_of(path)
        if kb is None:
            others = self.held.refresh(path)
        elif kb.is_unsaved(path):
            others = self.held.reload_config(kb, path, None) | self.shown_in(kb)
        else:
            others = set()
        self.clear(path)
        for other in sorted(others - {path}):
            self.publish(other)

    def publish(self, path: str) -> None:
        """Publish PATH's diagnostics, from the text the editor holds (else the file)."""
        lines = lines_of(self.text_of(path))
        codec = self.workspace.position_codec
        shown = []
        for issue in self.held.issues(path):
            span = issue_span(issue, lines)
            where = lsp.Range(lsp.Position(span.line, span.start), lsp.Position(span.line, span.end))
            diagnostic = lsp.Diagnostic(
                range=codec.range_to_client_units(lines, where),
                message=issue.message,
                severity=SEVERITY[issue.severity],
                code=issue.rule,
                code_description=lsp.CodeDescription(href=issue_url(issue.rule, issue.checker)),
                source="kblint",
                data={"tier": issue.tier, **({"item_id": issue.item_id} if issue.item_id else {})},
            )
            shown.append(Shown(issue, span, diagnostic))
        if shown:
            self.state.shown[path] = shown
        else:
            self.state.shown.pop(path, None)
        uris = self.state.uris.get(path)
        uri = uris[-1] if uris else None
        version = self.workspace.get_text_document(uri).version if uri is not None else None
        self.text_document_publish_diagnostics(
            lsp.PublishDiagnosticsParams(
                uri=uri or from_fs_path(path) or path, diagnostics=[s.diagnostic for s in shown], version=version
            )
        )

    def clear(self, path: str) -> None:
        self.state.shown.pop(path, None)
        uri = from_fs_path(path) or path
        self.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    def text_of(self, path: str) -> str:
        """The text of an entry, a kb.yaml or a cross-kb-links.yaml as the editor holds it, else as
        the engine would read it from disk ("" when it would not: see HeldWorkspace.read)."""
        return (self.held.read(path) or b"").decode("utf-8", "replace")

    def files_changed(self, changes: list[lsp.FileEvent]) -> None:
        """Files changed on disk (saved by another program, created, deleted, renamed)."""
        others: set[str] = set()
        for change in changes:
            path = self.path_of(change.uri)
            if path is None or path in self.held.texts:
                continue  # the editor's text wins over the file's
            if os.path.basename(path) == "kb.yaml":
                kb = self.held.is_kb_yaml(path)
                if change.type != lsp.FileChangeType.Changed or kb is None:
                    self.load()  # a KB came or went
                    return
                others |= self.held.reload_kb(kb, None) | self.shown_in(kb)
            elif (kb := self.held.is_cross_links(path)) is not None:
                others |= self.held.reload_cross_links(kb, None) | self.shown_in(kb)
            elif change.type == lsp.FileChangeType.Deleted:
                others |= self.held.remove(path)
                if path in self.state.shown:
                    self.clear(path)
            elif path.endswith(".md") and self.held.is_entry(path):
                others |= self.held.refresh(path) | ({path} if path in self.state.shown else set())
        for other in sorted(others):
            self.publish(other)


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def utf8(text: str) -> bytes:
    """The editor's TEXT as a file would hold it. A lone UTF-16 surrogate (JSON lets a client send
    "\\ud83d", and editors written in JavaScript do) is no character UTF-8 can hold: it becomes
    U+FFFD, as a JavaScript editor's TextEncoder writes it when the file is saved. It takes one
    UTF-16 unit and one code point as the surrogate did, so every position stays where it was."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return _LONE_SURROGATE.sub("\ufffd", text).encode("utf-8")


def _env_delay() -> float:
    value = os.environ.get(DEBOUNCE_ENV)
    try:
        return max(float(value), 0.0) / 1000 if value else DEBOUNCE
    except ValueError:
        return DEBOUNCE


# ---------------------------------------------------------------------------------------------
# Handlers


def build_server(options: ServerOptions) -> KBServer:
    server = KBServer(options)
    server.feature(lsp.INITIALIZE)(_initialize)
    server.feature(lsp.INITIALIZED)(_initialized)
    server.feature(lsp.TEXT_DOCUMENT_DID_OPEN)(_did_open)
    server.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)(_did_change)
    server.feature(lsp.TEXT_DOCUMENT_DID_CLOSE)(_did_close)
    server.feature(lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES)(_watched)
    server.feature(lsp.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)(_folders)
    server.feature(lsp.TEXT_DOCUMENT_HOVER)(_hover)
    server.feature(lsp.TEXT_DOCUMENT_COMPLETION, lsp.CompletionOptions(trigger_characters=["[", ":"]))(_complete)
    server.feature(
        lsp.TEXT_DOCUMENT_CODE_ACTION, lsp.CodeActionOptions(code_action_kinds=[lsp.CodeActionKind.QuickFix])
    )(_code_action)
    server.command(JUDGE_COMMAND)(_judge)
    return server


def _initialize(ls: KBServer, params: lsp.InitializeParams) -> None:
    options = params.initialization_options if isinstance(params.initialization_options, dict) else {}
    if isinstance(options.get("debounceMs"), (int, float)) and not isinstance(options["debounceMs"], bool):
        ls.delay = max(float(options["debounceMs"]), 0.0) / 1000
    if isinstance(options.get("config"), str) and ls.options.config is None:
        ls.options.config = options["config"]
    folders = [to_fs_path(f.uri) for f in params.workspace_folders or []]
    if not folders:
        folders = [to_fs_path(params.root_uri) if params.root_uri else params.root_path]
    ls.state.folders = _normalized(folders) or [os.getcwd()]


def _initialized(ls: KBServer, params: lsp.InitializedParams) -> None:
    ls.load()
    capabilities = ls.client_capabilities.workspace
    watching = capabilities.did_change_watched_files if capabilities is not None else None
    if watching is not None and watching.dynamic_registration:
        watchers = [lsp.FileSystemWatcher(glob_pattern=g) for g in WATCHED]
        registration = lsp.Registration(
            id="kblint-files",
            method=lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES,
            register_options=lsp.DidChangeWatchedFilesRegistrationOptions(watchers=watchers),
        )
        ls.client_register_capability(lsp.RegistrationParams(registrations=[registration]))


def _did_open(ls: KBServer, params: lsp.DidOpenTextDocumentParams) -> None:
    path = ls.path_of(params.text_document.uri)
    if path is None or not ls.tracks(path):
        return
    uris = ls.state.uris.setdefault(path, [])
    if params.text_document.uri not in uris:
        uris.append(params.text_document.uri)
    kb = ls.held.config_of(path)
    if kb is not None and not kb.is_unsaved(path) and params.text_document.text == ls.text_of(path):
        ls.held.texts[path] = utf8(params.text_document.text)
        ls.publish(path)  # the plan held is of this very text
        return
    ls.edited(path, params.text_document.text, now=True)


def _did_change(ls: KBServer, params: lsp.DidChangeTextDocumentParams) -> None:
    path = ls.path_of(params.text_document.uri)
    if path is not None and path in ls.held.texts:
        ls.edited(path, ls.workspace.get_text_document(params.text_document.uri).source, now=False)


def _did_close(ls: KBServer, params: lsp.DidCloseTextDocumentParams) -> None:
    uri = params.text_document.uri
    path = ls.path_of(uri)
    if path is None or path not in ls.held.texts:
        return
    uris = ls.state.uris.get(path, [])
    if uri in uris:
        uris.remove(uri)
    if not uris:
        ls.closed(path)
        return
    # still open by another spelling of its path: that document's text is the editor's
    ls.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri=uri, diagnostics=[]))
    ls.edited(path, ls.workspace.get_text_document(uris[-1]).source, now=True)


def _watched(ls: KBServer, params: lsp.DidChangeWatchedFilesParams) -> None:
    ls.files_changed(list(params.changes))


def _folders(ls: KBServer, params: lsp.DidChangeWorkspaceFoldersParams) -> None:
    added = [to_fs_path(f.uri) for f in params.event.added]
    removed = [to_fs_path(f.uri) for f in params.event.removed]
    ls.folders_changed(_normalized(added), _normalized(removed))


def _normalized(folders: list[str | None]) -> list[str]:
    return [os.path.normpath(os.path.abspath(f)) for f in folders if f]


def _read(ls: KBServer, uri: str, *, entry: bool) -> tuple[str, bytes] | None:
    """The path URI names and its bytes, when it is an entry (ENTRY) or a file whose issues were
    published, and can be read (HeldWorkspace.read); else None, and nothing was read."""
    path = ls.path_of(uri)
    if path is None or not (ls.held.is_entry(path) if entry else path in ls.state.shown):
        return None
    data = ls.held.read(path)
    return (path, data) if data is not None else None


def _shown_at(
    ls: KBServer, uri: str, position: lsp.Position, *, entry: bool
) -> tuple[str | None, list[Shown], list[str], int]:
    """The issues published for URI under POSITION, the file's lines, and the position's character
    (no path: nothing to show there, see _read)."""
    found = _read(ls, uri, entry=entry)
    if found is None:
        return None, [], [], 0
    path, data = found
    lines = lines_of(data.decode("utf-8", "replace"))
    at = ls.workspace.position_codec.position_from_client_units(lines, position).character
    hits = [
        s for s in ls.state.shown.get(path, []) if s.span.line == position.line and s.span.start <= at <= s.span.end
    ]
    return path, hits, lines, at


def _hover(ls: KBServer, params: lsp.HoverParams) -> lsp.Hover | None:
    _, hits, _, _ = _shown_at(ls, params.text_document.uri, params.position, entry=False)
    if not hits:
        return None
    text = "\n\n---\n\n".join(editing.explain_issue(ls.held, s.issue) for s in hits)
    return lsp.Hover(lsp.MarkupContent(lsp.MarkupKind.Markdown, text), range=hits[0].diagnostic.range)


def _complete(ls: KBServer, params: lsp.CompletionParams) -> lsp.CompletionList | None:
    path, _, lines, at = _shown_at(ls, params.text_document.uri, params.position, entry=True)
    if path is None:
        return None
    offers, more = editing.complete(ls.held, path, lines, params.position.line, at)
    if not offers:
        return None
    codec = ls.workspace.position_codec
    items = []
    for o in offers:
        where = lsp.Range(lsp.Position(params.position.line, o.start), lsp.Position(params.position.line, at))
        edit = lsp.TextEdit(codec.range_to_client_units(lines, where), o.insert)
        items.append(
            lsp.CompletionItem(o.label, kind=_KINDS[o.kind], detail=o.detail, sort_text=o.sort, text_edit=edit)
        )
    return lsp.CompletionList(is_incomplete=more, items=items)


def _code_action(ls: KBServer, params: lsp.CodeActionParams) -> list[lsp.CodeAction] | None:
    read = _read(ls, params.text_document.uri, entry=True)  # --fix edits entries alone
    kb = ls.held.kb_of(read[0]) if read is not None else None
    if read is None or kb is None:
        return None
    path, data = read
    lines = lines_of(data.decode("utf-8", "replace"))
    first, last = params.range.start.line, params.range.end.line
    found = []
    for shown in ls.state.shown.get(path, []):
        if first <= shown.span.line <= last:
            subject = actions.Subject(shown.issue, data, kb.ctx.schema, kb.kb.relpath(path), kb.ctx.limits)
            found += [_action(ls, params.text_document.uri, lines, shown, fix) for fix in actions.fixes_for(subject)]
    return found or None


def _action(ls: KBServer, uri: str, lines: list[str], shown: Shown, fix: actions.Fix) -> lsp.CodeAction:
    codec = ls.workspace.position_codec
    edits = [
        lsp.TextEdit(
            codec.range_to_client_units(
                lines, lsp.Range(lsp.Position(e.line, e.start), lsp.Position(e.end_line, e.end))
            ),
            e.text,
        )
        for e in fix.edits
    ]
    return lsp.CodeAction(
        fix.title,
        kind=lsp.CodeActionKind.QuickFix,
        diagnostics=[shown.diagnostic],
        is_preferred=fix.preferred or None,
        edit=lsp.WorkspaceEdit(changes={uri: edits}),
    )


async def _judge(ls: KBServer, *arguments: Any) -> str:
    """`kblint.judgeEntry URI`: ask the LLM about the entry as the editor holds it, then publish."""
    first = arguments[0] if arguments else None
    uri = first.get("uri") if isinstance(first, dict) else first
    path = ls.path_of(uri) if isinstance(uri, str) else None
    if path is None or not ls.held.is_entry(path):
        from pygls.exceptions import JsonRpcInvalidParams

        raise JsonRpcInvalidParams("kblint.judgeEntry takes the URI of an entry")  # an error, not a result
    message = await asyncio.get_running_loop().run_in_executor(None, ls.held.judge_now, path)
    ls.publish(path)
    ls.window_show_message(lsp.ShowMessageParams(lsp.MessageType.Info, f"kblint: {message}"))
    return message


def serve(options: ServerOptions) -> None:
    """Serve over standard input and output. The protocol gets its own copy of standard output;
    what anything else prints goes to standard error, where it cannot break a message."""
    protocol_out = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    one_line_logs()
    server = build_server(options)
    server.start_io(BoundedInput(sys.stdin.buffer), protocol_out)  # type: ignore[arg-type]
    if server.protocol.exit_code:
        sys.exit(server.protocol.exit_code)  # `exit` without `shutdown` before it
