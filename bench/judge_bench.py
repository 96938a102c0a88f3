"""Judgment throughput: kblint validate against a local LLM-protocol server with a fixed delay.

    python bench/judge_bench.py [--entries 200] [--delay 0.1] [--concurrency 4]

Prints the wall time of the judgment run and its ratio to the ideal, entries × delay / concurrency
(SPEC §13: at most 1.3), and the ratio of the judgment alone: the wall time less that of the same
run without an LLM (start-up, parsing, the report), which the judgment has no part in (target: at
most 1.2). The server is the test suite's protocol-speaking server on 127.0.0.1.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from llm_server import FakeLLM  # noqa: E402


def make_kb(root: Path, entries: int) -> None:
    root.mkdir(parents=True)
    (root / "kb.yaml").write_text(
        'name: bench\nevaluation_rubric:\n  - "Body explains why it matters"\n  - "Claims are sourced"\n',
        encoding="utf-8",
    )
    for i in range(entries):
        (root / f"e{i:05d}.md").write_text(
            f"---\ntitle: Entry {i}\ntype: note\ntags: [t]\n---\nBody of entry {i}. [[e{(i + 1) % entries:05d}]]\n",
            encoding="utf-8",
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=200)
    parser.add_argument("--delay", type=float, default=0.1)
    parser.add_argument("--concurrency", type=int, default=4)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, FakeLLM() as server:
        server.delay = args.delay
        kb = Path(tmp) / "kb"
        make_kb(kb, args.entries)
        cmd = [
            sys.executable,
            "-m",
            "kblint",
            "validate",
            str(kb),
            "--llm",
            "openai:bench",
            "--llm-base-url",
            server.openai_url,
            "--llm-concurrency",
            str(args.concurrency),
            "--no-cache",
            "--format",
            "json",
            "--fail-on",
            "never",
        ]
        start = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "OPENAI_API_KEY": "bench"})
        wall = time.perf_counter() - start
        if proc.returncode != 0:
            print(proc.stderr, file=sys.stderr)
            return 1
        calls = json.loads(proc.stdout)["judgment"]["calls"]
        start = time.perf_counter()
        subprocess.run([*cmd[:5], *cmd[9:]], capture_output=True, text=True, check=True)  # without the LLM
        base = time.perf_counter() - start
    ideal = args.entries * args.delay / args.concurrency
    print(
        f"entries {args.entries}, delay {args.delay}s, concurrency {args.concurrency}: {calls} calls, "
        f"max in flight {server.max_in_flight}"
    )
    print(f"wall {wall:.2f}s, ideal {ideal:.2f}s, ratio {wall / ideal:.2f} (target <= 1.3)")
    judging = wall - base
    print(f"without the LLM {base:.2f}s: judgment {judging:.2f}s, ratio {judging / ideal:.2f} (target <= 1.2)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
