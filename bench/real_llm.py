"""kblint's judgment tier against a real OpenAI-compatible server (llama.cpp's, vLLM, LM Studio, ...).

    .venv/bin/python bench/real_llm.py --base-url http://127.0.0.1:8765/v1 --model smollm2-135m
    .venv/bin/python bench/real_llm.py ... --kb ../shared/corpus/boyd --max-calls 20 --plain

Runs `kblint validate KB --llm openai:MODEL` twice with a fresh cache and a call budget, and prints
what the first run asked and got (requests, valid and invalid answers, verdicts by kind, seconds
per request) and what the second asked (nothing, when the cache works). `--plain` asks without the
JSON Schema (`output = "plain"` in the configuration's [llm] table), so that the same model can
be compared with and without structured output. `../shared/tools/real-llm/serve.sh` starts such a
server from PyPI alone.
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


def run_kblint(kb: str, args: argparse.Namespace, cache: str) -> tuple[dict, float]:
    command = [
        sys.executable,
        "-m",
        "kblint",
        "validate",
        kb,
        "--llm",
        f"openai:{args.model}",
        "--llm-base-url",
        args.base_url,
        "--llm-concurrency",
        str(args.concurrency),
        "--max-llm-calls",
        str(args.max_calls),
        "--llm-timeout",
        str(args.timeout),
        "--cache-dir",
        cache,
        "--format",
        "json",
        "--fail-on",
        "never",
    ]
    if args.plain:
        config = Path(cache) / "plain.toml"
        config.write_text('[llm]\noutput = "plain"\n', encoding="utf-8")
        command += ["--config", str(config)]
    started = time.monotonic()
    proc = subprocess.run(command, capture_output=True, text=True, check=False)
    elapsed = time.monotonic() - started
    if proc.returncode not in (0, 1):
        sys.exit(f"kblint exited {proc.returncode}: {proc.stderr.strip()}")
    return json.loads(proc.stdout), elapsed


def summary(report: dict, elapsed: float) -> dict:
    judgment = report["judgment"]
    answers = judgment.get("answers", {"valid": 0, "invalid": 0})
    total = answers["valid"] + answers["invalid"]
    return {
        "requests": judgment["calls"],
        "answers_valid": answers["valid"],
        "answers_invalid": answers["invalid"],
        "valid_rate": round(answers["valid"] / total, 3) if total else None,
        "verdicts": judgment.get("verdicts", {}),
        "judgment_errors": sum(1 for i in report["issues"] if i["rule"] == "judgment_error"),
        "timeouts": judgment.get("timeouts", 0),
        "structured_output": judgment.get("structured_output"),
        "seconds": round(elapsed, 1),
        "seconds_per_request": round(elapsed / judgment["calls"], 1) if judgment["calls"] else None,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base-url", default=os.environ.get("KBLINT_REAL_LLM_URL", "http://127.0.0.1:8765/v1"))
    parser.add_argument("--model", default=os.environ.get("KBLINT_REAL_LLM_MODEL", "smollm2-135m"))
    parser.add_argument("--kb", default=str(ROOT.parent / "shared" / "corpus" / "boyd"))
    parser.add_argument("--max-calls", type=int, default=20)
    parser.add_argument("--concurrency", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=600)
    parser.add_argument("--plain", action="store_true", help="ask without a JSON Schema, for comparison")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as cache:
        first = summary(*run_kblint(args.kb, args, cache))
        second = summary(*run_kblint(args.kb, args, cache))
    print(json.dumps({"first run": first, "second run (cache)": second}, indent=2))


if __name__ == "__main__":
    main()
