"""`kblint mcp`, driven by the MCP SDK's own client over stdio: one server process for most of
the tests (started on a directory of two KBs), and one with an LLM."""

from __future__ import annotations

import contextlib
import io
import json
import shutil
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from anyio.streams.buffered import BufferedByteReceiveStream
from conftest import FIXTURES, ROOT, run_kblint, write_kb
from mcp import ClientSession, StdioServerParameters, stdio_client

from kblint.errors import SERVER_EXTRA

pytestmark = pytest.mark.anyio

NOTES_YAML = "name: notes\ntypes:\n  note:\n    subdirectory: notes\n    required: [title]\n"

GOOD = """\
---
title: "Harbor inspections stopped after the award"
type: finding
date: 2025-03-02
confidence: high
tags: [inspections, contract]
sources: [inspection-log-2024]
---

Inspection logs show no harbor inspections after the award; [[mara-quist]] signed the
last one, for [[northgate-port-authority]], and [[northgate-dredging]] did the dredging.

## Sources

- inspection-log-2024
"""

BAD = (FIXTURES / "example" / "findings" / "harbor-fees-doubled.md").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def kbs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory of two KBs: the example, and `notes`, whose configuration limits entries to 1,000 bytes."""
    top = tmp_path_factory.mktemp("kbs")
    shutil.copytree(FIXTURES / "example", top / "example")
    notes = write_kb(top / "notes", NOTES_YAML, {"notes/first.md": "---\ntitle: First\n---\n\nA note.\n"})
    (notes / "kblint.toml").write_text("[limits]\nmax_file_bytes = 1000\n", encoding="utf-8")
    return top


class Server:
    """A session with a `kblint mcp` process, and what the process wrote besides the protocol."""

    def __init__(self, session: ClientSession, stderr: io.TextIOBase, stray: list[Exception]):
        self.session = session
        self.stderr = stderr
        self.stray = stray

    async def call(self, tool: str, **arguments: Any) -> Any:
        """The tool's result; a tool error fails the test."""
        result = await self.session.call_tool(tool, arguments)
        assert not result.is_error, result.content
        if result.structured_content is not None and list(result.structured_content) != ["result"]:
            return result.structured_content
        (content,) = result.content
        return content.text

    async def error(self, tool: str, **arguments: Any) -> str:
        """The message of the tool error the call must end in."""
        result = await self.session.call_tool(tool, arguments)
        assert result.is_error, result.structured_content
        (content,) = result.content
        return content.text


@contextlib.asynccontextmanager
async def _serve(tmp: Path, *args: str) -> AsyncIterator[Server]:
    stray: list[Exception] = []

    async def on_message(message: Any) -> None:
        if isinstance(message, Exception):  # a line on stdout that is not a protocol message
            stray.append(message)

    params = StdioServerParameters(
        command=sys.executable, args=["-m", "kblint", "mcp", "--cache-dir", str(tmp / "cache"), *args], cwd=str(ROOT)
    )
    with open(tmp / "stderr.txt", "w+", encoding="utf-8") as errlog:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write, message_handler=on_message) as session,
        ):
            await session.initialize()
            yield Server(session, errlog, stray)


@pytest.fixture(scope="module")
async def server(kbs: Path, tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Server]:
    async with _serve(tmp_path_factory.mktemp("server"), "--kb", str(kbs)) as s:
        yield s
        # nothing but the protocol on stdout, and no traceback on stderr, whatever the calls were
        assert s.stray == []
        s.stderr.seek(0)
        assert "Traceback" not in s.stderr.read()


def served(stdout: str, kbs: Path) -> Any:
    """The JSON kblint printed when run in `/`, with its paths of KBS made absolute, as the server gives
    every path (a path relative to `/` is the absolute one without its first `/`)."""
    return json.loads(stdout.replace(str(kbs).lstrip("/"), str(kbs)))


async def test_the_four_tools_and_their_input_schemas(server: Server):
    tools = {tool.name: tool for tool in (await server.session.list_tools()).tools}
    assert sorted(tools) == ["coverage", "explain", "kb_schema", "validate_entry"]
    validate = tools["validate_entry"].input_schema
    assert validate["required"] == ["path", "text"]
    assert validate["properties"]["text"]["type"] == "string"
    assert validate["properties"]["fail_on"]["enum"] == ["error", "warning", "info", "never"]
    assert "required" not in tools["kb_schema"].input_schema  # the server's KB by default
    assert all(tool.description for tool in tools.values())


async def test_kb_schema_is_what_kblint_schema_prints(server: Server, kbs: Path):
    by_name = await server.call("kb_schema", kb="harbor-investigation")
    assert by_name == served(run_kblint("schema", str(kbs / "example"), cwd="/").stdout, kbs)
    by_directory = await server.call("kb_schema", kb=str(kbs / "notes"))
    assert by_directory["kb"]["name"] == "notes" and by_directory["types"]["note"]["required"] == ["title"]
    assert await server.call("kb_schema", kb="example") == by_name  # a directory under the server's --kb


async def test_validate_entry_fails_a_bad_candidate_as_validate_stdin_does(server: Server, kbs: Path):
    result = await server.call("validate_entry", kb="harbor-investigation", path="findings/new.md", text=BAD)
    assert (result["verdict"], result["exit_code"], result["fail_on"]) == ("fail", 1, "error")
    assert result["kb"] == "harbor-investigation" and result["path"] == "findings/new.md"
    cli = served(run_kblint(
        "validate", "--kb", str(kbs / "example"), "--stdin", "--stdin-path", "findings/new.md",
        "--format", "json", "--no-cache", input=BAD.encode(), cwd="/",
    ).stdout, kbs)  # fmt: skip
    assert result["issues"] == cli["issues"]
    assert result["counts"] == cli["summary"]["counts"] == {"error": 1, "warning": 5, "info": 2}
    assert result["rejection_codes"] == ["missing_required"] and result["curation_queue_entry"] is None
    (alike,) = result["alike"]  # the candidate is a copy of an existing finding
    assert alike["rule"] == "possible_duplicate" and "the same title" in alike["message"]
    assert alike["related_path"].endswith("findings/harbor-fees-doubled.md")
    missing = next(i for i in result["issues"] if i["rule"] == "missing_required")
    assert missing["severity"] == "error" and missing["line"] == 1 and missing["field"] == "date"
    assert missing["url"].endswith("docs/rules.md#missing_required")
    judgment = result["judgment"]  # no --llm: the judgment items are counted, not judged
    assert judgment["enabled"] is False and judgment["calls"] == 0 and judgment["not_evaluated"] == 3
    assert judgment["reason"] == "no LLM: the MCP server was started without --llm"


async def test_validate_entry_passes_a_good_candidate_and_fail_on_moves_the_bar(server: Server):
    result = await server.call("validate_entry", kb="harbor-investigation", path="findings/stopped.md", text=GOOD)
    assert (result["verdict"], result["exit_code"], result["issues"]) == ("pass", 0, [])
    assert result["score"] == 1.0
    warned = BAD.replace("confidence: medium", "confidence: medium\ndate: 2025-01-05")  # warnings, no error
    result = await server.call("validate_entry", kb="harbor-investigation", path="findings/fees.md", text=warned)
    assert result["verdict"] == "pass" and result["counts"]["error"] == 0 and result["counts"]["warning"] > 0
    result = await server.call(
        "validate_entry", kb="harbor-investigation", path="findings/fees.md", text=warned, fail_on="warning"
    )
    assert (result["verdict"], result["exit_code"], result["fail_on"]) == ("fail", 1, "warning")


async def test_a_malformed_candidate_is_a_result_with_a_parse_error(server: Server):
    text = "---\ntitle: [unclosed\n---\n\nBody.\n"
    result = await server.call("validate_entry", kb="notes", path="notes/broken.md", text=text)
    assert result["verdict"] == "fail"
    assert [i["rule"] for i in result["issues"]] == ["parse_error"]
    assert result["issues"][0]["line"] == 3 and "frontmatter" in result["issues"][0]["message"]


async def test_bad_arguments_are_tool_errors_with_a_clear_message(server: Server, kbs: Path):
    bad = {"kb": "notes", "path": "notes/new.md", "text": "---\ntitle: New\n---\n\nText.\n"}
    assert "Input should be a valid string" in await server.error("validate_entry", **{**bad, "text": 5})
    assert "Field required" in await server.error("validate_entry", kb="notes", text=bad["text"])
    assert "outside the KB" in await server.error("validate_entry", **{**bad, "path": "../example/x.md"})
    assert "outside the KB" in await server.error("validate_entry", **{**bad, "path": str(kbs / "elsewhere.md")})
    assert "must end in .md" in await server.error("validate_entry", **{**bad, "path": "notes/new.txt"})
    too_large = await server.error("validate_entry", **{**bad, "text": bad["text"] + "x" * 1000})
    assert "over the limit of 1000 bytes" in too_large  # the limit of the KB's own kblint.toml
    assert "fail_on" in await server.error("validate_entry", **{**bad, "fail_on": "fatal"})
    assert "no such directory" in await server.error("validate_entry", **{**bad, "kb": str(kbs / "absent")})
    assert "did you mean 'notes'?" in await server.error("coverage", kb="notse")
    several = await server.error("kb_schema")  # the server's --kb holds two KBs
    assert "holds several KBs (harbor-investigation, notes)" in several


async def test_an_unreadable_kb_yaml_is_a_tool_error(server: Server, kbs: Path):
    broken = write_kb(kbs / "broken-kb", "name: [broken\n", {})
    try:
        for tool, arguments in (
            ("kb_schema", {}),
            ("coverage", {}),
            ("validate_entry", {"path": "a.md", "text": "x"}),
        ):
            message = await server.error(tool, kb=str(broken), **arguments)
            assert message.startswith(f"Error executing tool {tool}: cannot read this KB:") and "kb.yaml" in message
    finally:
        shutil.rmtree(broken)


async def test_a_kb_outside_the_servers_kb_is_refused(server: Server, kbs: Path):
    outside = write_kb(kbs.parent / "elsewhere-kb", "name: elsewhere\n", {})
    for kb in ("/", str(outside), "../elsewhere-kb"):
        assert "outside the KBs this server serves" in await server.error("kb_schema", kb=kb)


async def test_coverage_is_the_plan_kblint_checkers_prints(server: Server, kbs: Path):
    plan = await server.call("coverage", kb="harbor-investigation")
    cli = served(run_kblint("checkers", "--kb", str(kbs / "example"), "--format", "json", cwd="/").stdout, kbs)
    assert plan == cli["kbs"][0]
    assert plan["totals"]["judgment"] == 3 and plan["evaluator"] is None


async def test_explain_gives_the_page_and_an_unknown_name_is_a_tool_error(server: Server):
    assert await server.call("explain", name="broken_link") == run_kblint("explain", "broken_link").stdout
    assert "has_tags" in await server.call("explain")  # no name: the list of them all
    message = await server.error("explain", name="brokn_link")
    assert message.endswith("no rule, checker, tier or topic named 'brokn_link'; did you mean 'broken_link'?")


async def test_the_server_serves_on_after_errors(server: Server):
    await server.error("validate_entry", kb="notes", path="/etc/passwd.md", text="x")
    result = await server.call(
        "validate_entry", kb="notes", path="notes/later.md", text="---\ntitle: Later\n---\n\nOk.\n"
    )
    assert result["verdict"] == "pass"


async def test_paths_in_results_are_absolute(server: Server, kbs: Path):
    """Whatever the server's current directory (an MCP client may start it in `/`)."""
    example = kbs / "example"
    result = await server.call("validate_entry", kb="harbor-investigation", path="findings/new.md", text=BAD)
    assert {issue["path"] for issue in result["issues"]} == {str(example / "findings" / "new.md")}
    (alike,) = result["alike"]
    other = str(example / "findings" / "harbor-fees-doubled.md")
    assert alike["related_path"] == other and alike["message"].startswith(f"May duplicate {other}:")
    assert (await server.call("kb_schema", kb="harbor-investigation"))["kb"]["path"] == str(example)
    assert (await server.call("coverage", kb="harbor-investigation"))["path"] == str(example)


async def test_validate_entry_refuses_a_path_kblint_does_not_lint_as_an_entry(server: Server, kbs: Path):
    notes = kbs / "notes"
    outside = kbs.parent / "outside-notes"
    outside.mkdir(exist_ok=True)
    (notes / "escape").symlink_to(outside, target_is_directory=True)
    write_kb(notes / "inner", "name: inner\n", {})
    try:
        for path, why in (
            ("README.md", "a README, which documents its folder"),
            ("notes/readme.md", "a README, which documents its folder"),
            ("_templates/x.md", "a template: it lies in a _templates folder"),
            (".git/x.md", "hidden: its name, or a folder's on its path, begins with '.'"),
            ("notes/.hidden.md", "hidden: its name, or a folder's on its path, begins with '.'"),
            (".md", "hidden: its name, or a folder's on its path, begins with '.'"),
            ("escape/x.md", "escape is a symbolic link, which kblint does not follow"),
            ("inner/x.md", "inner is another KB (it holds a kb.yaml)"),
            ("notes/first.md/x.md", "no file can have this path (Not a directory)"),
            ("x" * 300 + ".md", "no file can have this path (File name too long)"),
        ):
            message = await server.error("validate_entry", kb="notes", path=path, text="---\ntitle: T\n---\n\nT.\n")
            assert message == f"Error executing tool validate_entry: path {path}: not an entry: {why}"
    finally:
        (notes / "escape").unlink()
        shutil.rmtree(notes / "inner")


async def test_a_kb_name_several_kbs_have_is_a_tool_error(server: Server, kbs: Path):
    twins = [write_kb(kbs / directory, "name: twin\n", {}) for directory in ("twin-a", "twin-b")]
    try:
        message = await server.error("kb_schema", kb="twin")
        assert message.endswith(
            f"kb twin: several KBs have that name ({twins[0]} and {twins[1]}); pass `kb` with the directory of one"
        )
        message = await server.error("kb_schema")  # the server's --kb holds them: named by their folders
        assert "holds several KBs (" in message and f"{twins[0]}, {twins[1]}" in message
        assert message.endswith("pass `kb` with the directory of one")
    finally:
        for twin in twins:
            shutil.rmtree(twin)


async def test_validate_entry_warns_of_what_is_wrong_in_kb_yaml(server: Server, kbs: Path):
    rubric = "evaluation_rubric:\n  - text: Notes are tagged\n    checker: has_tagz\n"
    kb = write_kb(kbs / "broken-rubric", NOTES_YAML.replace("notes", "broken-rubric", 1) + rubric, {})
    try:
        text = "---\ntitle: T\ntags: [a, b]\n---\n\nT.\n"
        result = await server.call("validate_entry", kb=str(kb), path="notes/new.md", text=text)
        assert result["verdict"] == "pass"  # the entry's own issues decide it
        (warning,) = result["warnings"]
        assert warning.startswith(
            f"{kb / 'kb.yaml'}:7:1: error config_error rubric item 'Notes are tagged' is not enforced"
        )
        assert "unknown checker 'has_tagz'" in warning and warning.endswith(
            "(the KB's own, not counted in this entry's verdict)"
        )
    finally:
        shutil.rmtree(kb)


async def test_explain_with_an_empty_name_lists_them_all(server: Server):
    assert await server.call("explain", name="") == await server.call("explain")


class RawClient:
    """A client that writes the protocol's lines itself: JSON lets a string hold a lone UTF-16 surrogate
    (`"\\ud800"`), which the SDK's client cannot send."""

    def __init__(self, process: anyio.abc.Process):
        assert process.stdin is not None and process.stdout is not None
        self.stdin = process.stdin
        self.lines = BufferedByteReceiveStream(process.stdout)

    async def send(self, line: str) -> None:
        await self.stdin.send(line.encode() + b"\n")

    async def ask(self, request_id: int, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """The answer to a call of TOOL, written by json.dumps (which escapes a lone surrogate)."""
        params = {"name": tool, "arguments": arguments}
        await self.send(json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}))
        with anyio.fail_after(60):  # an unanswered request would wait for ever
            answer: dict[str, Any] = json.loads(await self.lines.receive_until(b"\n", 1 << 24))
        assert answer["id"] == request_id
        return answer


@contextlib.asynccontextmanager
async def _serve_raw(tmp: Path, *args: str) -> AsyncIterator[RawClient]:
    command = [sys.executable, "-m", "kblint", "mcp", "--cache-dir", str(tmp / "cache"), *args]
    with open(tmp / "stderr.txt", "wb") as errlog:
        async with await anyio.open_process(command, cwd=ROOT, stderr=errlog) as process:
            client = RawClient(process)
            hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}
            await client.send(json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": hello}))
            await client.lines.receive_until(b"\n", 1 << 20)
            await client.send(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            yield client
            await process.stdin.aclose()
    assert "Traceback" not in (tmp / "stderr.txt").read_text(encoding="utf-8")


async def test_a_lone_surrogate_in_an_argument_is_a_tool_error_naming_it(tmp_path: Path):
    async with _serve_raw(tmp_path, "--kb", str(FIXTURES / "example")) as client:
        for tool, arguments, where in (
            (
                "validate_entry",
                {"path": "findings/new.md", "text": "---\ntitle: \ud800\n"},
                "text: not valid Unicode at character 11",
            ),
            ("validate_entry", {"path": "findings/\udc00.md", "text": "x"}, "path: not valid Unicode at character 9"),
            ("kb_schema", {"kb": "harbor\ud83d"}, "kb: not valid Unicode at character 6"),
            ("explain", {"name": "\udfff"}, "name: not valid Unicode at character 0"),
        ):
            answer = await client.ask(1, tool, arguments)
            assert answer["result"]["isError"] is True
            assert answer["result"]["content"][0]["text"] == f"Error executing tool {tool}: {where} (a lone surrogate)"
        answer = await client.ask(2, "explain\ud800", {})  # what the server writes back is text it can encode
        assert answer["result"]["content"][0]["text"] == "Unknown tool: explain\ufffd"
        await client.send("this line is no JSON")  # dropped, as the SDK drops it: the server goes on
        answer = await client.ask(3, "explain", {"name": "broken_link"})
        assert answer["result"]["content"][0]["text"].startswith("broken_link — rule")


def test_a_server_without_a_kb_asks_for_one():
    """The tools without the protocol, in this process (the protocol's side of a tool error is tested above)."""
    from mcp.server.mcpserver.exceptions import ToolError

    from kblint.mcp_server import KBTools, ServerOptions

    tools = KBTools(ServerOptions())
    with pytest.raises(
        ToolError, match=r"^no KB given: pass `kb` \(a KB directory or name\), or start the server with --kb DIR$"
    ):
        tools.coverage(None)
    assert tools.coverage(str(FIXTURES / "example"))["name"] == "harbor-investigation"


def test_without_the_server_extra_it_says_what_to_install():
    code = (
        "import sys; sys.modules['mcp'] = None; sys.argv = ['kblint', 'mcp']\nfrom kblint.__main__ import main; main()"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr == f"kblint: kblint mcp needs the server extra: {SERVER_EXTRA}\n"


def test_help_names_the_values_of_its_options():
    help_text = run_kblint("mcp", "--help").stdout
    for option in ("--kb DIR", "--llm PROVIDER:MODEL", "--config FILE", "--cache-dir DIR"):
        assert option in help_text
    missing = run_kblint("mcp", "--kb", "/nonexistent/kbs")
    assert (missing.code, missing.stderr) == (
        2,
        "kblint: --kb /nonexistent/kbs: not a directory (give a KB directory or a directory of KBs)\n",
    )
    bad_llm = run_kblint("mcp", "--llm", "gpt-4o")
    assert bad_llm.code == 2 and bad_llm.stderr.startswith("kblint: --llm: invalid LLM spec 'gpt-4o'")


async def test_started_with_llm_it_judges_the_judgment_items(tmp_path: Path):
    from llm_server import FakeLLM

    kb = shutil.copytree(FIXTURES / "example", tmp_path / "example")
    (kb / "kblint.toml").write_text("[llm]\ntimeout = 30\n", encoding="utf-8")  # the KB's configuration is read
    with FakeLLM() as fake:
        llm = ("--llm", "openai:test-model", "--llm-base-url", fake.openai_url)
        async with _serve(tmp_path, "--kb", str(kb), *llm) as server:
            result = await server.call("validate_entry", path="findings/stopped.md", text=GOOD)
            plan = await server.call("coverage")
        assert len(fake.requests) == 1
    judgment = result["judgment"]
    assert (judgment["enabled"], judgment["evaluator"], judgment["calls"]) == (True, "openai:test-model", 1)
    assert result["verdict"] == "pass"  # the fake LLM passes the items that do not ask it to fail them
    assert plan["evaluator"] == "openai:test-model" and plan["totals"]["judgment_evaluated"] is True


def test_a_file_names_no_kb_above_the_folder_the_server_serves(tmp_path: Path):
    from mcp.server.mcpserver.exceptions import ToolError

    from kblint.mcp_server import KBTools, ServerOptions

    kb = shutil.copytree(FIXTURES / "example", tmp_path / "example")
    tools = KBTools(ServerOptions(root=str(kb / "findings")))  # a folder inside a KB: it holds no KB
    for call in (tools.kb_schema, tools.coverage):
        with pytest.raises(ToolError, match=r"^kb harbor-fees-doubled\.md: its KB \(.*example\) is not inside what"):
            call("harbor-fees-doubled.md")


def test_a_result_lists_the_first_thousand_issues_and_counts_them_all(tmp_path: Path):
    from kblint.mcp_server import MAX_ISSUES, KBTools, ServerOptions

    kb = write_kb(tmp_path / "notes", NOTES_YAML, {})
    repeated = "".join(f"k: {n}\n" for n in range(MAX_ISSUES + 500))
    result = KBTools(ServerOptions(root=str(kb))).validate_entry(
        None, "notes/n.md", f"---\ntitle: N\n{repeated}---\nB.\n", "error"
    )
    assert len(result["issues"]) == MAX_ISSUES
    assert result["issues_left_out"] == sum(result["counts"].values()) - MAX_ISSUES >= 499  # 1,499 repeats
