"""The judgment tier against a real OpenAI-compatible server, when one is given:

    KBLINT_REAL_LLM_URL=http://127.0.0.1:8765/v1 KBLINT_REAL_LLM_MODEL=smollm2-135m \\
        .venv/bin/python -m pytest -m real_llm tests/test_real_llm.py

(`../shared/tools/real-llm/serve.sh` starts one.) Skipped otherwise: the suite never needs a model.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import FIXTURES, run_kblint

URL = os.environ.get("KBLINT_REAL_LLM_URL")
MODEL = os.environ.get("KBLINT_REAL_LLM_MODEL", "smollm2-135m")

pytestmark = [pytest.mark.real_llm, pytest.mark.skipif(not URL, reason="KBLINT_REAL_LLM_URL is not set")]


def test_a_real_server_judges_and_the_cache_answers_the_second_run(tmp_path: Path):
    args = ["validate", str(FIXTURES / "example"), "--llm", f"openai:{MODEL}", "--llm-base-url", str(URL)]
    args += ["--cache-dir", str(tmp_path), "--max-llm-calls", "4", "--llm-concurrency", "1", "--format", "json"]
    first = run_kblint(*args).json["judgment"]
    assert first["calls"] >= 1 and first["structured_output"] in ("json_schema", "json_object", "plain")
    assert first["answers"]["valid"] >= 1  # with structured output, a small model's answers parse
    second = run_kblint(*args).json["judgment"]
    asked_again = second.get("answers", {"valid": 0, "invalid": 0})
    assert (
        second["cache_hits"] >= sum(first["verdicts"].values()) and asked_again["valid"] <= first["answers"]["invalid"]
    )
