"""`kblint server` end to end: a real LSP client (pytest-lsp) drives the server over standard input
and output — diagnostics of unsaved text, other entries' diagnostics when an entry's names change
or its file goes, kb.yaml re-planned from unsaved text, hover, completion, the judge command, the
pause before linting while typing, and the missing extra."""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import os
import re
import subprocess
import sys
from collections import Counter
from concurrent.futures import Future
from pathlib import Path

import pytest
import pytest_lsp
from conftest import run_kblint, write_kb
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException, JsonRpcInternalError, JsonRpcInvalidParams, JsonRpcInvalidRequest
from pygls.protocol.json_rpc import JsonRPCRequestMessage
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities
from test_lsp_workspace import ENTRIES, KB_YAML, person

from kblint.errors import SERVER_EXTRA
from kblint.lsp.server import ServerOptions, build_server
from kblint.lsp.transport import SKIPPED, BoundedInput

ENV = {k: v for k, v in os.environ.items() if k not in ("KBLINT_LLM", "OPENAI_API_KEY")}
SERVER = [sys.executable, "-m", "kblint", "server"]
EXTRA = {
    "people/dan.md": person("dan", "[[ada]]"),
    "people/eve.md": person("eve", "[[ada]]"),
    "people/fay.md": person("fay", "[[ada]]"),
}


def note(title: str, body: str) -> str:
    return f"---\ntitle: {title}\ntype: note\ntags: [a, b]\n---\n{body}\n"


CROSS_LINKS = "- source: alpha\n  target: thing\n  target_kb: elsewhere\n- source: nobody\n  target: alpha\n"
# a second workspace folder: a KB whose cross-kb-links.yaml declares links between its entries
WIKI = {
    "alpha.md": note("Alpha", "See [[beta]]."),
    "beta.md": note("Beta", "See [[alpha]]."),
    "lone.md": note("Lone", "Alone."),
    "cross-kb-links.yaml": CROSS_LINKS,
}
# a KB beside the workspace folders, which a test adds as a folder and removes again
MORE = {"x.md": note("X", "See [[nowhere]]."), "y.md": note("Y", "See [[x]].")}


async def start(client: LanguageClient, root: Path, options: dict, others: tuple[Path, ...] = ()) -> None:
    client.diagnostics = Published()

    @client.feature(lsp.CLIENT_REGISTER_CAPABILITY)
    def registered(params: lsp.RegistrationParams) -> None:
        client.registrations = params.registrations  # type: ignore[attr-defined]

    folders = [lsp.WorkspaceFolder(uri=f.as_uri(), name=f.name) for f in (root, *others)]
    await client.initialize_session(
        lsp.InitializeParams(
            capabilities=client_capabilities("visual-studio-code"),
            workspace_folders=folders,
            initialization_options=options,
        )
    )


@pytest_lsp.fixture(scope="module", config=ClientServerConfig(SERVER, server_env=ENV))
async def client(lsp_client: LanguageClient, tmp_path_factory: pytest.TempPathFactory):
    base = tmp_path_factory.mktemp("lsp")
    root = write_kb(base / "notes", KB_YAML, {**ENTRIES, **EXTRA})
    wiki = write_kb(base / "wiki", "name: wiki\n", WIKI)
    write_kb(base / "more", "name: more\n", MORE)
    lsp_client.root = root  # type: ignore[attr-defined]
    await start(lsp_client, root, {"debounceMs": 0}, (wiki,))
    yield
    await lsp_client.shutdown_session()


in_module_loop = pytest.mark.asyncio(loop_scope="module")  # the tests that share the module's server


def uri_of(client: LanguageClient, rel: str) -> str:
    return (client.root / rel).as_uri()  # type: ignore[attr-defined]


def beside(client: LanguageClient, rel: str) -> Path:
    """A file of the KBs beside the notes KB (`wiki/lone.md`)."""
    return client.root.parent / rel  # type: ignore[attr-defined]


class Published(dict):
    """The client's diagnostics by URI, counting how many times each was published."""

    def __init__(self) -> None:
        super().__init__()
        self.count: Counter[str] = Counter()

    def __setitem__(self, uri: str, diagnostics: object) -> None:
        self.count[uri] += 1
        super().__setitem__(uri, diagnostics)


def publications(client: LanguageClient, uri: str) -> int:
    return client.diagnostics.count[uri]  # type: ignore[attr-defined]


async def published(client: LanguageClient, uri: str, before: int) -> list[lsp.Diagnostic]:
    """The diagnostics published for URI once they have been published more than BEFORE times."""
    while publications(client, uri) <= before:
        # registered at once, before anything else runs: a notification read meanwhile would be missed
        waiting = client.protocol.wait_for_notification_async(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        await asyncio.wait_for(waiting, 20)
    return list(client.diagnostics[uri])


def open_text(client: LanguageClient, rel: str, text: str | None = None, version: int = 1) -> str:
    uri = uri_of(client, rel)
    text = (client.root / rel).read_text() if text is None else text  # type: ignore[attr-defined]
    client.text_document_did_open(lsp.DidOpenTextDocumentParams(lsp.TextDocumentItem(uri, "markdown", version, text)))
    return uri


def change(client: LanguageClient, uri: str, text: str, version: int) -> None:
    client.text_document_did_change(
        lsp.DidChangeTextDocumentParams(
            lsp.VersionedTextDocumentIdentifier(version=version, uri=uri),
            [lsp.TextDocumentContentChangeWholeDocument(text=text)],
        )
    )


def codes(diagnostics: list[lsp.Diagnostic]) -> list[tuple[object, int]]:
    return [(d.code, d.range.start.line) for d in diagnostics]


@in_module_loop
async def test_unsaved_text_is_linted_and_the_fix_clears_it(client: LanguageClient):
    uri = uri_of(client, "people/dan.md")
    before = publications(client, uri)
    open_text(client, "people/dan.md", person("dan", "[[ada]]", role="spy"))
    (found,) = await published(client, uri, before)
    assert found.code == "invalid_field" and found.source == "kblint"
    assert found.severity == lsp.DiagnosticSeverity.Warning
    assert (found.range.start, found.range.end) == (lsp.Position(3, 0), lsp.Position(3, 4))  # the key `role`
    assert found.code_description is not None and found.code_description.href.endswith("docs/rules.md#invalid_field")
    before = publications(client, uri)
    change(client, uri, person("dan", "[[ada]]"), 2)
    assert await published(client, uri, before) == []


@in_module_loop
async def test_a_changed_id_republishes_the_entries_that_link_to_it(client: LanguageClient):
    ada, bob = uri_of(client, "people/ada-lovelace.md"), uri_of(client, "people/bob.md")
    before = publications(client, bob)
    open_text(client, "people/ada-lovelace.md")
    change(client, ada, person("adaa", "[[bob]]"), 2)
    (broken,) = await published(client, bob, before)  # bob.md is not open: its link broke all the same
    assert broken.code == "broken_link" and "did you mean 'adaa'?" in broken.message
    assert (broken.range.start, broken.range.end) == (lsp.Position(6, 6), lsp.Position(6, 13))  # [[ada]]
    before = publications(client, bob)
    change(client, ada, ENTRIES["people/ada-lovelace.md"], 3)
    assert await published(client, bob, before) == []
    client.text_document_did_close(lsp.DidCloseTextDocumentParams(lsp.TextDocumentIdentifier(ada)))


@in_module_loop
async def test_a_deleted_target_breaks_its_linkers_until_it_is_back(client: LanguageClient):
    carol, bob = client.root / "people/carol.md", uri_of(client, "people/bob.md")  # type: ignore[attr-defined]
    moved = carol.with_name("caroline.md")
    before = publications(client, bob)
    carol.rename(moved)
    events = [lsp.FileEvent(carol.as_uri(), lsp.FileChangeType.Deleted)]
    client.workspace_did_change_watched_files(lsp.DidChangeWatchedFilesParams(events))
    assert codes(await published(client, bob, before)) == [("broken_link", 6)]
    before = publications(client, bob)
    events = [lsp.FileEvent(moved.as_uri(), lsp.FileChangeType.Created)]
    client.workspace_did_change_watched_files(lsp.DidChangeWatchedFilesParams(events))
    assert await published(client, bob, before) == []
    (registration,) = client.registrations  # type: ignore[attr-defined]
    assert registration.method == lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES
    assert [w["globPattern"] for w in registration.register_options["watchers"]] == [
        "**/*.md",
        "**/kb.yaml",
        "**/cross-kb-links.yaml",
    ]


@in_module_loop
async def test_unsaved_kb_yaml_replans_the_kb(client: LanguageClient):
    eve_opened = publications(client, uri_of(client, "people/eve.md"))
    eve = open_text(client, "people/eve.md")
    assert await published(client, eve, eve_opened) == []
    kb_yaml = open_text(client, "kb.yaml")
    assert await published(client, kb_yaml, 0) == []
    before, eve_before = publications(client, kb_yaml), publications(client, eve)
    change(
        client,
        kb_yaml,
        KB_YAML.replace("required: [role]", "required: [role, born]") + "  - {text: X, checker: nope}\n",
        2,
    )
    assert codes(await published(client, kb_yaml, before)) == [("config_error", 11)]
    assert codes(await published(client, eve, eve_before)) == [("missing_required", 0)]
    before, eve_before = publications(client, kb_yaml), publications(client, eve)
    client.text_document_did_close(lsp.DidCloseTextDocumentParams(lsp.TextDocumentIdentifier(kb_yaml)))
    assert await published(client, eve, eve_before) == []  # closed unsaved: the file's plan again
    assert await published(client, kb_yaml, before) == []


@in_module_loop
async def test_hover_shows_how_the_rubric_item_is_enforced(client: LanguageClient):
    uri = uri_of(client, "people/eve.md")
    before = publications(client, uri)
    change(client, uri, person("eve", "[[ada]]", tags="[a]"), 5)
    (violation,) = await published(client, uri, before)
    assert violation.code == "rubric_violation" and violation.range.start == lsp.Position(4, 0)
    hover = await client.text_document_hover_async(lsp.HoverParams(lsp.TextDocumentIdentifier(uri), lsp.Position(4, 2)))
    assert hover is not None and isinstance(hover.contents, lsp.MarkupContent)
    assert "[checker] Entry has at least two tags → has_tags(min=2)" in hover.contents.value
    nothing = await client.text_document_hover_async(
        lsp.HoverParams(lsp.TextDocumentIdentifier(uri), lsp.Position(1, 2))
    )
    assert nothing is None


@in_module_loop
async def test_completion_of_link_targets_and_frontmatter(client: LanguageClient):
    uri = uri_of(client, "people/eve.md")
    text = person("eve", "[[ca", extra="type: \n")
    change(client, uri, text, 6)
    lines = text.split("\n")
    at_link = lsp.Position(len(lines) - 2, len(lines[-2]) - 1)  # after `[[ca`, before the full stop

    async def labels(position: lsp.Position) -> list[str]:
        found = await client.text_document_completion_async(
            lsp.CompletionParams(lsp.TextDocumentIdentifier(uri), position)
        )
        return [item.label for item in (found.items if isinstance(found, lsp.CompletionList) else found or [])]

    assert await labels(at_link) == ["carol", "Caz"]
    assert "person" in await labels(lsp.Position(5, 6))  # after `type: `
    assert "links" in await labels(lsp.Position(5, 0))  # a key at the start of a frontmatter line


@in_module_loop
async def test_a_safe_fix_is_offered_as_a_quick_fix(client: LanguageClient):
    before = publications(client, uri_of(client, "people/fay.md"))
    uri = open_text(client, "people/fay.md", person("fay", "[[ada]]", role="Source"))
    (found,) = await published(client, uri, before)
    assert found.code == "invalid_field"
    context = lsp.CodeActionContext(diagnostics=[found])
    offered = await client.text_document_code_action_async(
        lsp.CodeActionParams(lsp.TextDocumentIdentifier(uri), found.range, context)
    )
    assert offered is not None
    (action,) = offered
    assert isinstance(action, lsp.CodeAction) and action.kind == lsp.CodeActionKind.QuickFix and action.is_preferred
    assert action.edit is not None and action.edit.changes is not None
    assert list(action.edit.changes[uri]) == [lsp.TextEdit(lsp.Range(lsp.Position(3, 6), lsp.Position(3, 7)), "s")]


@in_module_loop
async def test_the_judge_command_needs_an_llm(client: LanguageClient):
    uri = uri_of(client, "people/eve.md")
    said = await client.workspace_execute_command_async(lsp.ExecuteCommandParams("kblint.judgeEntry", [uri]))
    assert said.startswith("no LLM is configured")
    for wrong in ([], [42], [uri_of(client, "kb.yaml")]):  # no entry named: an error, not a result
        with pytest.raises(Exception, match="kblint.judgeEntry takes the URI of an entry"):
            await client.workspace_execute_command_async(lsp.ExecuteCommandParams("kblint.judgeEntry", wrong))


@in_module_loop
async def test_a_cross_kb_links_file_changed_on_disk_relinks_its_kb(client: LanguageClient):
    lone, cross = beside(client, "wiki/lone.md"), beside(client, "wiki/cross-kb-links.yaml")
    client.text_document_did_open(
        lsp.DidOpenTextDocumentParams(lsp.TextDocumentItem(lone.as_uri(), "markdown", 1, lone.read_text()))
    )
    assert codes(await published(client, lone.as_uri(), 0)) == [("orphan_entry", 0), ("rubric_violation", 0)]
    before = publications(client, lone.as_uri())
    cross.write_text(CROSS_LINKS + "- source: alpha\n  target: lone\n")  # lone gets a linker
    events = [lsp.FileEvent(cross.as_uri(), lsp.FileChangeType.Changed)]
    client.workspace_did_change_watched_files(lsp.DidChangeWatchedFilesParams(events))
    assert codes(await published(client, lone.as_uri(), before)) == [("rubric_violation", 0)]


@in_module_loop
async def test_an_open_cross_kb_links_file_shows_what_validate_reports(client: LanguageClient):
    cross = beside(client, "wiki/cross-kb-links.yaml")
    client.text_document_did_open(
        lsp.DidOpenTextDocumentParams(lsp.TextDocumentItem(cross.as_uri(), "yaml", 1, cross.read_text()))
    )
    shown = codes(await published(client, cross.as_uri(), publications(client, cross.as_uri())))
    report = run_kblint("validate", str(cross.parent), "--format", "json", "--no-cache", "--fail-on", "never").json
    reported = [(i["rule"], i["line"] - 1) for i in report["issues"] if i["path"].endswith("cross-kb-links.yaml")]
    assert shown == reported == [("unresolved_external", 1), ("broken_link", 3)]
    client.text_document_did_close(lsp.DidCloseTextDocumentParams(lsp.TextDocumentIdentifier(cross.as_uri())))


@in_module_loop
async def test_unsaved_cross_kb_links_text_relinks_its_kb_until_it_is_closed(client: LanguageClient):
    lone, cross = beside(client, "wiki/lone.md").as_uri(), beside(client, "wiki/cross-kb-links.yaml")
    before, cross_before = publications(client, lone), publications(client, cross.as_uri())
    unsaved = cross.read_text() + "- source: lone\n  target: nothing\n"  # lone links out, to no entry
    client.text_document_did_open(
        lsp.DidOpenTextDocumentParams(lsp.TextDocumentItem(cross.as_uri(), "yaml", 1, unsaved))
    )
    assert codes(await published(client, lone, before)) == []
    assert codes(await published(client, cross.as_uri(), cross_before)) == [
        ("unresolved_external", 1),
        ("broken_link", 3),
        ("broken_link", 8),
    ]
    before = publications(client, lone)
    client.text_document_did_close(lsp.DidCloseTextDocumentParams(lsp.TextDocumentIdentifier(cross.as_uri())))
    assert codes(await published(client, lone, before)) == [("rubric_violation", 0)]  # the file's links again


@in_module_loop
async def test_workspace_folders_added_are_linted_and_removed_ones_forgotten(client: LanguageClient):
    more = beside(client, "more")
    x, y = (more / "x.md").as_uri(), (more / "y.md").as_uri()
    text = (more / "x.md").read_text()
    client.text_document_did_open(lsp.DidOpenTextDocumentParams(lsp.TextDocumentItem(x, "markdown", 1, text)))
    folder = lsp.WorkspaceFolder(uri=more.as_uri(), name="more")
    added = lsp.WorkspaceFoldersChangeEvent(added=[folder], removed=[])
    client.workspace_did_change_workspace_folders(lsp.DidChangeWorkspaceFoldersParams(added))
    assert codes(await published(client, x, 0)) == [("broken_link", 5)]  # opened before its folder was added
    before = publications(client, x)
    change(client, x, text.replace("title: X", "id: xx\ntitle: X"), 2)  # y links to it by its file name now
    assert codes(await published(client, x, before)) == [("broken_link", 6)]
    assert codes(await published(client, y, 0)) == [("noncanonical_link", 5)]
    before, y_before = publications(client, x), publications(client, y)
    removed = lsp.WorkspaceFoldersChangeEvent(added=[], removed=[folder])
    client.workspace_did_change_workspace_folders(lsp.DidChangeWorkspaceFoldersParams(removed))
    assert await published(client, x, before) == []
    assert await published(client, y, y_before) == []
    before = publications(client, x)
    change(client, x, text + "[[gone]]\n", 3)
    hover = lsp.HoverParams(lsp.TextDocumentIdentifier(x), lsp.Position(5, 6))
    assert await client.text_document_hover_async(hover) is None  # answered after the change: nothing was linted
    assert publications(client, x) == before
    client.text_document_did_close(lsp.DidCloseTextDocumentParams(lsp.TextDocumentIdentifier(x)))


async def start_on_notes(client: LanguageClient, tmp_path: Path, debounce_ms: int) -> None:
    """A server of its own on a KB of ENTRIES, linting after DEBOUNCE_MS of quiet."""
    root = write_kb(tmp_path / "notes", KB_YAML, ENTRIES)
    client.root = root  # type: ignore[attr-defined]
    await start(client, root, {"debounceMs": debounce_ms})


@pytest_lsp.fixture(config=ClientServerConfig([*SERVER, "--stdio"], server_env=ENV))
async def typing_client(lsp_client: LanguageClient, tmp_path: Path):
    await start_on_notes(lsp_client, tmp_path, 300)
    yield
    await lsp_client.shutdown_session()


@pytest.mark.asyncio
async def test_changes_are_linted_after_a_pause_in_typing(typing_client: LanguageClient):
    client = typing_client
    uri = open_text(client, "people/bob.md")
    assert await published(client, uri, 0) == []
    before = publications(client, uri)
    for version, role in enumerate(["s", "sp", "spy"], start=2):
        change(client, uri, person("bob", "[[ada]] and [[carol]]", role=role), version)
    await published(client, uri, before)
    assert client.diagnostics[uri][0].message.startswith(
        "Field 'role' has value 'spy'"
    )  # only the last text was linted
    assert client.log_messages[0].message.startswith("kblint: indexed 4 entries of 1 KB(s)")


def test_without_the_server_extra_the_command_says_what_to_install(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setitem(sys.modules, "pygls", None)  # as if pygls were not installed
    for name in [m for m in sys.modules if m.startswith("pygls.")]:  # imported already: found first
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.delitem(sys.modules, "kblint.lsp.server", raising=False)
    result = run_kblint("server")
    assert result.code == 2
    assert result.stderr == f"kblint: kblint server needs the server extra: {SERVER_EXTRA}\n"


def send_as_is(client: LanguageClient, msg_id: str, method: str, params: object) -> Future:
    """A request with PARAMS sent as they are (the client's own send_request would first make them
    its method's type, which malformed params are not); the future of its answer."""
    answer: Future = Future()
    client.protocol._request_futures[msg_id] = answer
    client.protocol._send_data(JsonRPCRequestMessage(id=msg_id, method=method, params=params, jsonrpc="2.0"))
    return answer


def awaited(answer: Future) -> asyncio.Future:
    return asyncio.wait_for(asyncio.wrap_future(answer), 20)


@pytest_lsp.fixture(config=ClientServerConfig([*SERVER, "--stdio"], server_env=ENV))
async def plain_client(lsp_client: LanguageClient, tmp_path: Path):
    await start_on_notes(lsp_client, tmp_path, 0)
    yield  # the test shuts the server down itself


@pytest.mark.asyncio
async def test_every_request_is_answered(plain_client: LanguageClient):
    """A request whose params are not its method's, and one sent after `shutdown`, get an error:
    a client that waits for the answer is never left waiting."""
    client = plain_client
    uri = uri_of(client, "people/bob.md")
    with pytest.raises(JsonRpcInvalidParams):
        await awaited(send_as_is(client, "malformed", lsp.TEXT_DOCUMENT_HOVER, {"textDocument": 42}))
    # malformed messages written inside another request's params are data, not messages to answer
    inner = {"jsonrpc": "2.0", "id": "inner", "method": lsp.TEXT_DOCUMENT_HOVER, "params": {"textDocument": 42}}
    told = {"jsonrpc": "2.0", "method": lsp.TEXT_DOCUMENT_DID_OPEN, "params": {"textDocument": 42}}
    never: Future = Future()
    client.protocol._request_futures["inner"] = never  # an answer to "inner" would land here
    arguments = {"command": "kblint.none", "arguments": [inner, told]}
    outer = send_as_is(client, "outer", "workspace/executeCommand", arguments)
    with pytest.raises(JsonRpcException):
        await awaited(outer)
    position = lsp.HoverParams(lsp.TextDocumentIdentifier(uri), lsp.Position(0, 0))
    await asyncio.wait_for(client.text_document_hover_async(position), 20)  # the server goes on
    assert not never.done()  # answered in order: an answer to "inner" would have come before
    await client.shutdown_async(None)
    with pytest.raises(JsonRpcInvalidRequest, match="shutting down"):
        await asyncio.wait_for(client.text_document_hover_async(position), 20)
    client.exit(None)


@in_module_loop
async def test_a_change_to_a_document_not_opened_is_left_out(client: LanguageClient):
    """A client's mistake costs a line on standard error, not an error shown to the user."""
    shown = len(client.messages)
    ghost = uri_of(client, "people/ghost.md")
    client.text_document_did_change(
        lsp.DidChangeTextDocumentParams(
            lsp.VersionedTextDocumentIdentifier(version=2, uri=ghost),
            [lsp.TextDocumentContentChangeWholeDocument(text="---\ntitle: Ghost\n---\n")],
        )
    )
    position = lsp.HoverParams(lsp.TextDocumentIdentifier(uri_of(client, "people/bob.md")), lsp.Position(0, 0))
    await asyncio.wait_for(client.text_document_hover_async(position), 20)  # the server goes on
    assert [m.message for m in client.messages[shown:] if "Error" in m.message] == []


@pytest.mark.parametrize(
    ("sent", "said"),
    [
        (  # more bytes than any message needs: read and dropped, never held (nor an OverflowError)
            b"Content-Length: 99999999999999999999999999\r\n\r\n{}",
            "kblint server: a Content-Length of 26 digits: the rest of the input is dropped",
        ),
        (  # more digits than Python makes a number of
            b"Content-Length: " + b"9" * 5000 + b"\r\n\r\n{}",
            "kblint server: a Content-Length of 5000 digits: the rest of the input is dropped",
        ),
        (
            b"Content-Length: 5\r\n\r\n{{{{{",
            "kblint server: Unable to handle message: JSONDecodeError: "
            "Expecting property name enclosed in double quotes: line 1 column 2 (char 1)",
        ),
    ],
)
def test_bytes_that_are_no_message_cost_one_line_and_no_traceback(sent: bytes, said: str):
    done = subprocess.run([*SERVER], input=sent, capture_output=True, env=ENV, timeout=60)
    assert done.returncode == 0
    assert done.stderr.decode().splitlines() == [said]


def test_bounded_input_finds_the_next_header_after_a_message_without_a_length():
    """A header with no usable Content-Length leaves its body to be read as a header line: the
    next message's header, glued to it, is found again."""
    stream = io.BytesIO(b'Content-Type: x\r\n\r\n{"a": 1}Content-Length: 2\r\n\r\n{}')
    bounded = BoundedInput(stream)
    assert [bounded.readline(), bounded.readline(), bounded.readline()] == [
        b"Content-Type: x\r\n",
        b"\r\n",
        b"Content-Length: 2\r\n",
    ]


def test_bounded_input_drops_a_body_over_the_limit_and_reads_on():
    stream = io.BytesIO(b"x" * 25 + b"Content-Length: 2\r\n")
    bounded = BoundedInput(stream, limit=10)
    assert bounded.read(25) == SKIPPED  # dropped, in pieces
    assert bounded.readline() == b"Content-Le"  # a line no longer than the limit
    assert bounded.readline() == b"ngth: 2\r\n"


@pytest_lsp.fixture(scope="module", config=ClientServerConfig([*SERVER, "--stdio"], server_env=ENV))
async def own_client(lsp_client: LanguageClient, tmp_path_factory: pytest.TempPathFactory):
    """A server on a KB of its own, shared by tests that touch files of their own in it."""
    await start_on_notes(lsp_client, tmp_path_factory.mktemp("own"), 0)
    yield
    await lsp_client.shutdown_session()


@in_module_loop
async def test_a_file_not_open_is_read_only_when_the_engine_would_read_it(own_client: LanguageClient):
    """Hover, completion and quick fixes on a document the client has not opened: a FIFO (which
    an open() would wait on for ever, and the whole server with it), in the KB or outside it, and
    a URI with a NUL are answered with nothing, at once, and never with an error."""
    client = own_client
    root: Path = client.root  # type: ignore[attr-defined]
    inside, outside = root / "people/pipe.md", root.parent / "outside.md"
    for fifo in (inside, outside):
        os.mkfifo(fifo)
    at = lsp.Position(0, 0)
    nul = uri_of(client, "people") + "/a%00b.md"  # as_uri() would escape the `%`
    try:
        for uri in (inside.as_uri(), outside.as_uri(), nul):
            document = lsp.TextDocumentIdentifier(uri)
            hover = client.text_document_hover_async(lsp.HoverParams(document, at))
            completion = client.text_document_completion_async(lsp.CompletionParams(document, at))
            actions = client.text_document_code_action_async(
                lsp.CodeActionParams(document, lsp.Range(at, at), lsp.CodeActionContext(diagnostics=[]))
            )
            assert await asyncio.wait_for(asyncio.gather(hover, completion, actions), 20) == [None, None, None]
    finally:
        for fifo in (inside, outside):  # a server waiting on one is let go: a failure must not hang the run
            with contextlib.suppress(OSError):  # ENXIO: nobody opened it to read, as it should be
                os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
    assert [m.message for m in client.messages] == []


@in_module_loop
async def test_a_lone_surrogate_in_the_text_is_linted_where_it_stands(own_client: LanguageClient):
    """JSON lets a client send half a UTF-16 pair ("\\ud83d"): it is linted as U+FFFD, which a
    JavaScript editor saves in its place and which takes one UTF-16 unit too."""
    client = own_client
    uri = open_text(client, "people/gil.md", person("gil", "\ud83d [[nobody]]"))
    (broken,) = await published(client, uri, 0)
    assert broken.code == "broken_link"
    assert (broken.range.start, broken.range.end) == (lsp.Position(6, 8), lsp.Position(6, 18))
    before = publications(client, uri)
    change(client, uri, person("gil", "[[ada]]", role="\udc80spy"), 2)
    (invalid,) = await published(client, uri, before)
    assert invalid.code == "invalid_field" and "'\ufffdspy'" in invalid.message
    assert [m.message for m in client.messages] == []


@in_module_loop
async def test_a_file_open_by_two_uris_stays_open_until_both_are_closed(own_client: LanguageClient):
    """`m` and `%6D`, or `people/./bob.md`, spell one path: closing one URI leaves the other open."""
    client = own_client
    plain = uri_of(client, "people/bob.md")
    for other in (plain.replace("/bob.md", "/%62ob.md"), plain.replace("/people/", "/people/./")):
        before = publications(client, plain)
        open_text(client, "people/bob.md")
        assert await published(client, plain, before) == []
        client.text_document_did_open(
            lsp.DidOpenTextDocumentParams(lsp.TextDocumentItem(other, "markdown", 1, person("bob", "[[ada]]")))
        )
        before = publications(client, plain)
        client.text_document_did_close(lsp.DidCloseTextDocumentParams(lsp.TextDocumentIdentifier(other)))
        assert await published(client, plain, before) == []  # the text of the URI still open
        before = publications(client, plain)
        change(client, plain, person("bob", "[[ada]] and [[carol]]", role="spy"), 2)
        assert codes(await published(client, plain, before)) == [("invalid_field", 3)]
        before = publications(client, plain)
        client.text_document_did_close(lsp.DidCloseTextDocumentParams(lsp.TextDocumentIdentifier(plain)))
        assert await published(client, plain, before) == []  # closed by each URI: the file's issues
    assert [m.message for m in client.messages] == []


def framed(*messages: object) -> bytes:
    bodies = [m if isinstance(m, bytes) else json.dumps(m).encode() for m in messages]
    return b"".join(b"Content-Length: %d\r\n\r\n%s" % (len(body), body) for body in bodies)


def converse(cwd: Path, *messages: object) -> tuple[int, list[dict], str]:
    """Send MESSAGES to a server of its own and close its input: its exit code, what it sent, and
    its standard error."""
    done = subprocess.run([*SERVER], input=framed(*messages), capture_output=True, env=ENV, cwd=cwd, timeout=60)
    bodies = re.split(rb"Content-Length: \d+\r\n(?:[^\r\n]+\r\n)*\r\n", done.stdout)
    return done.returncode, [json.loads(b) for b in bodies if b], done.stderr.decode()


def request(msg_id: int, method: str, params: object = None) -> dict:
    return {"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params}


def notification(method: str, params: object = None) -> dict:
    return {"jsonrpc": "2.0", "method": method, "params": params}


INITIALIZE = {"processId": None, "rootUri": None, "capabilities": {}}


@pytest.mark.parametrize("shutdown", [True, False])
def test_the_lifecycle_is_lsps_and_no_answer_carries_a_traceback(tmp_path: Path, shutdown: bool):
    """Before `initialize` a request gets Server Not Initialized and a notification is dropped; a
    second `initialize` and a JSON-RPC batch (which LSP does not use) get Invalid Request; `exit`
    ends the server with 0 after `shutdown`, else 1. Nothing is shown to the user."""
    root = write_kb(tmp_path / "notes", KB_YAML, ENTRIES)
    hover = {"textDocument": {"uri": (root / "kb.yaml").as_uri()}, "position": {"line": 0, "character": 0}}
    opened = {"textDocument": {"uri": (root / "people/bob.md").as_uri(), "languageId": "markdown", "version": 1}}
    opened["textDocument"]["text"] = "---\n---\n"
    code, sent, stderr = converse(
        root,
        request(1, lsp.TEXT_DOCUMENT_HOVER, hover),
        notification(lsp.TEXT_DOCUMENT_DID_OPEN, opened),
        request(2, lsp.INITIALIZE, INITIALIZE),
        request(3, lsp.INITIALIZE, INITIALIZE),
        [request(4, lsp.TEXT_DOCUMENT_HOVER, hover)],
        *([request(5, lsp.SHUTDOWN)] if shutdown else []),
        notification(lsp.EXIT),
    )
    answers = {m.get("id", "-"): m for m in sent if "method" not in m}
    assert answers[1]["error"] == {
        "code": -32002,
        "message": "the server is not initialized yet: textDocument/hover is not handled",
    }
    assert "capabilities" in answers[2]["result"]
    assert answers[3]["error"]["code"] == -32600
    assert answers[None]["error"]["code"] == -32600 and 4 not in answers  # the batch: one error, id null
    assert [m["method"] for m in sent if "method" in m] == []  # no message shown, no diagnostics of bob.md
    assert "Traceback" not in json.dumps(sent) and "Traceback" not in stderr
    assert code == (0 if shutdown else 1)


def test_an_unexpected_error_is_answered_without_its_traceback():
    """pygls puts the traceback of a handler's unexpected error in the answer: it is left out (a
    handler that fails so is a bug, which standard error reports in one line)."""
    protocol = build_server(ServerOptions()).protocol
    sent: list = []
    protocol._send_data = sent.append  # type: ignore[method-assign]
    try:
        raise ValueError("embedded null byte")
    except ValueError:
        error = JsonRpcInternalError.of(sys.exc_info()).to_response_error()
    assert error.data is not None  # pygls's: with the traceback
    protocol._send_response(7, error=error)
    (answer,) = sent
    assert (answer.id, answer.error.code, answer.error.message, answer.error.data) == (
        7,
        -32603,
        "ValueError: embedded null byte",
        None,
    )
