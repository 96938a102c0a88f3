"""How quickly `kblint server` answers an edit: the time from a `textDocument/didChange` to the
`textDocument/publishDiagnostics` of that document, and the server's memory once it holds the
workspace (README "Language server", bench/README.md).

    .venv/bin/python bench/lsp_latency.py WORKSPACE [--entries 50] [--edits 10] [--json]
    .venv/bin/python bench/lsp_latency.py --generate 100000        # generate.py --seed 1, in a temporary directory

It starts `python -m kblint server` with a pause of 0 after a change (so that the figure is the
server's work, not the pause), speaks JSON-RPC to it over pipes with a client of a few lines (every
message is read as it arrives, on a thread of its own, and stamped), waits until it has indexed the
workspace, then opens ENTRIES ordinary entries (a seeded sample of the entry files with none of
generate.py's planted defects, when the workspace has its manifest) and sends each EDITS changes as
an editor sends them (incremental): a word typed and taken out again, a link added and taken out,
the id changed and changed back (EDITS cycles through these six). Each kind gets its own figures;
the target is on ordinary typing. The server's resident memory is read from /proc once the
workspace is indexed (VmRSS) and at the end (VmRSS, and VmHWM: its peak, indexing included).

The server reads no configuration file of the workspace: it gets one of its own that turns the
result cache off, or (`--cache-dir DIR`) puts it in DIR: a second run with the same DIR indexes the
workspace from the cache, as a server restarted on an unchanged workspace does.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from run import generate_corpus  # noqa: E402 - bench/ is not a package

TARGET_P95_MS = 50.0
TARGET_RSS_MB = 500.0


class Client:
    """A JSON-RPC client over a server's standard input and output."""

    def __init__(self, command: list[str], cwd: str, env: dict[str, str]):
        self.proc = subprocess.Popen(command, cwd=cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.inbox: queue.Queue[tuple[float, dict[str, Any]]] = queue.Queue()
        self.next_id = 0
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        out = self.proc.stdout
        assert out is not None
        while True:
            length = 0
            while (line := out.readline()) not in (b"\r\n", b""):
                name, _, value = line.decode("ascii").partition(":")
                if name.lower() == "content-length":
                    length = int(value)
            if not line:
                return
            message = json.loads(out.read(length))
            self.inbox.put((time.perf_counter(), message))

    def send(self, message: dict[str, Any]) -> float:
        """Send MESSAGE; the time it was sent."""
        body = json.dumps({"jsonrpc": "2.0", **message}).encode("utf-8")
        stdin = self.proc.stdin
        assert stdin is not None
        sent = time.perf_counter()
        stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        stdin.flush()
        return sent

    def request(self, method: str, params: Any) -> Any:
        self.next_id += 1
        self.send({"id": self.next_id, "method": method, "params": params})
        return self.wait(lambda m: m.get("id") == self.next_id and "method" not in m)[1].get("result")

    def notify(self, method: str, params: Any) -> float:
        return self.send({"method": method, "params": params})

    def wait(self, wanted: Any, timeout: float = 3600) -> tuple[float, dict[str, Any]]:
        """The first message WANTED accepts (arrival time, message); requests from the server
        (registrations) are answered on the way."""
        deadline = time.monotonic() + timeout
        while True:
            arrived, message = self.inbox.get(timeout=max(deadline - time.monotonic(), 0.001))
            if "method" in message and "id" in message:
                self.send({"id": message["id"], "result": None})
            if wanted(message):
                return arrived, message

    def published(self, uri: str, version: int | None = None) -> tuple[float, dict[str, Any]]:
        def wanted(m: dict[str, Any]) -> bool:
            if m.get("method") != "textDocument/publishDiagnostics" or m["params"]["uri"] != uri:
                return False
            return version is None or m["params"].get("version") == version

        return self.wait(wanted)


def memory_mb(pid: int) -> dict[str, float]:
    """The process's resident memory (VmRSS) and its peak so far (VmHWM), in MB."""
    found = {}
    with open(f"/proc/{pid}/status", encoding="ascii") as fh:
        for line in fh:
            name, _, value = line.partition(":")
            if name in ("VmRSS", "VmHWM"):
                found[name] = round(int(value.split()[0]) / 1024, 1)
    return found


def ordinary_entries(workspace: Path, count: int, seed: int) -> list[Path]:
    """COUNT entry files of the workspace with none of generate.py's planted defects, chosen with SEED."""
    manifest = workspace / "manifest.json"
    planted = set()
    if manifest.is_file():
        planted = {str(workspace / d["path"]) for d in json.loads(manifest.read_text())["defects"] if "path" in d}
    files = sorted(
        str(p)
        for p in workspace.rglob("*.md")
        if p.name.lower() != "readme.md" and not any(part.startswith(".") for part in p.parts)
    )
    files = [f for f in files if f not in planted]
    return [Path(f) for f in random.Random(seed).sample(files, min(count, len(files)))]


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(share * (len(ordered) - 1))))]


def measure(workspace: Path, entries: int, edits: int, seed: int, cache_dir: str | None) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        config = Path(tmp) / "kblint.toml"
        setting = f"cache_dir = {json.dumps(os.path.abspath(cache_dir))}\n" if cache_dir else "no_cache = true\n"
        config.write_text(setting, encoding="utf-8")
        env = {**os.environ, "KBLINT_LSP_DEBOUNCE_MS": "0"}
        env.pop("KBLINT_LLM", None)
        command = [sys.executable, "-m", "kblint", "server", "--config", str(config)]
        client = Client(command, str(HERE.parent), env)
        try:
            return _session(client, workspace, entries, edits, seed)
        finally:
            client.proc.kill()
            client.proc.wait()


def _session(client: Client, workspace: Path, entries: int, edits: int, seed: int) -> dict[str, Any]:
    folder = {"uri": workspace.as_uri(), "name": workspace.name}
    client.request("initialize", {"processId": os.getpid(), "capabilities": {}, "workspaceFolders": [folder]})
    started = client.notify("initialized", {})
    indexed_at, log = client.wait(
        lambda m: m.get("method") == "window/logMessage" and "indexed" in m["params"]["message"]
    )
    after_index = memory_mb(client.proc.pid)
    opens: list[float] = []
    changes: dict[str, list[float]] = {kind: [] for kind in EDITS}
    chosen = ordinary_entries(workspace, entries, seed)
    for n, path in enumerate(chosen):
        uri, text = path.as_uri(), path.read_text(encoding="utf-8")
        item = {"uri": uri, "languageId": "markdown", "version": 1, "text": text}
        sent = client.notify("textDocument/didOpen", {"textDocument": item})
        opens.append(client.published(uri, 1)[0] - sent)
        other = chosen[(n + 1) % len(chosen)].stem  # a link to another entry (its file stem, an id in generated KBs)
        for version, (kind, change) in enumerate(edit_cycle(text, other, edits), start=2):
            params = {"textDocument": {"uri": uri, "version": version}, "contentChanges": [change]}
            sent = client.notify("textDocument/didChange", params)
            changes[kind].append(client.published(uri, version)[0] - sent)
        client.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
    at_end = memory_mb(client.proc.pid)
    client.request("shutdown", None)
    client.notify("exit", None)
    return {
        "workspace": str(workspace),
        "index": log["params"]["message"],
        "index_seconds": round(indexed_at - started, 2),
        "entries_opened": len(opens),
        "changes": {kind: len(times) for kind, times in changes.items()},
        "change_ms": {kind: _ms(times) for kind, times in changes.items() if times},
        "open_ms": _ms(opens),
        "rss_mb_after_index": after_index.get("VmRSS"),
        "rss_mb_at_end": at_end.get("VmRSS"),
        "peak_rss_mb": at_end.get("VmHWM"),
    }


# What each change of an entry does, in turn: a word typed at the end of its last line and taken
# out again (ordinary typing), a link to another entry added there and taken out, and its id
# changed and changed back (every entry that links to it is resolved again).
EDITS = ("word", "link", "id")


def edit_cycle(text: str, other: str, count: int) -> list[tuple[str, dict[str, Any]]]:
    """COUNT changes of TEXT, as an editor sends them (incremental), with what kind each is."""
    lines = text.rstrip("\n").split("\n")
    line, end = len(lines) - 1, len(lines[-1])
    id_line = next((n for n, t in enumerate(lines) if t.startswith("id:")), None)
    cycle: list[tuple[str, dict[str, Any]]] = []
    for kind, added in (("word", " harbor"), ("link", f" [[{other}]]")):
        cycle.append((kind, {"range": _range(line, end, line, end), "text": added}))
        cycle.append((kind, {"range": _range(line, end, line, end + len(added)), "text": ""}))
    if id_line is not None:
        at = len(lines[id_line].rstrip())
        cycle.append(("id", {"range": _range(id_line, at, id_line, at), "text": "-draft"}))
        cycle.append(("id", {"range": _range(id_line, at, id_line, at + len("-draft")), "text": ""}))
    return [cycle[n % len(cycle)] for n in range(count)]


def _ms(times: list[float]) -> dict[str, float]:
    return {k: round(v * 1000, 2) for k, v in _stats(times).items()}


def _range(line: int, start: int, end_line: int, end: int) -> dict[str, Any]:
    return {"start": {"line": line, "character": start}, "end": {"line": end_line, "character": end}}


def _stats(values: list[float]) -> dict[str, float]:
    return {
        "p50": statistics.median(values),
        "p95": percentile(values, 0.95),
        "max": max(values),
        "mean": statistics.fmean(values),
    }


def render(report: dict[str, Any]) -> str:
    opened = report["open_ms"]
    held = report["rss_mb_at_end"] or 0
    lines = [
        f"workspace        {report['workspace']}",
        f"indexing         {report['index_seconds']} s ({report['index']})",
        f"didChange → publishDiagnostics, {report['entries_opened']} entries opened and edited:",
    ]
    for kind, ms in report["change_ms"].items():
        verdict = f"   (target p95 <= {TARGET_P95_MS:g} ms: {'met' if ms['p95'] <= TARGET_P95_MS else 'MISSED'})"
        lines.append(
            f"  {kind:<5} {report['changes'][kind]:>4} changes: p50 {ms['p50']} ms   p95 {ms['p95']} ms   "
            f"max {ms['max']} ms" + (verdict if kind == "word" else "")
        )
    lines += [
        f"didOpen → publishDiagnostics: p50 {opened['p50']} ms   p95 {opened['p95']} ms   max {opened['max']} ms",
        f"server memory    {report['rss_mb_after_index']} MB after indexing, {held} MB at the end, peak "
        f"{report['peak_rss_mb']} MB   (target < {TARGET_RSS_MB:g} MB held: {'met' if held < TARGET_RSS_MB else 'MISSED'})",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="kblint server: didChange → publishDiagnostics latency and memory.")
    ap.add_argument("workspace", nargs="?", help="a directory of KBs (or one KB)")
    ap.add_argument("--generate", type=int, metavar="N", help="a workspace of N entries from generate.py (seed 1)")
    ap.add_argument("--entries", type=int, default=50, help="entries opened and edited (default 50)")
    ap.add_argument("--edits", type=int, default=12, help="changes sent to each entry (default 12: each kind 4 times)")
    ap.add_argument("--seed", type=int, default=1, help="which entries are chosen (default 1)")
    ap.add_argument(
        "--cache-dir", metavar="DIR", help="the server's result cache (default: none); a second run indexes from it"
    )
    ap.add_argument("--json", action="store_true", help="the figures as JSON")
    args = ap.parse_args(argv)
    if (args.workspace is None) == (args.generate is None):
        ap.error("give a WORKSPACE directory or --generate N (not both)")
    with tempfile.TemporaryDirectory() as tmp:
        workspace = Path(args.workspace).resolve() if args.workspace else Path(tmp) / "ws"
        if args.generate is not None:
            generate_corpus(args.generate, str(workspace), sys.executable)
        report = measure(workspace, args.entries, args.edits, args.seed, args.cache_dir)
    print(json.dumps(report, indent=2) if args.json else render(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
