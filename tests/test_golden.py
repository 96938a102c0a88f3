"""Golden reports: the example KBs in fixtures/ give exactly the reports stored beside them.

Regenerate after an intended change with `KBLINT_UPDATE_GOLDEN=1 python -m pytest tests/test_golden.py`
and review the diff.
"""

from __future__ import annotations

import json
import os

import pytest
from conftest import FIXTURES, ROOT, run_kblint

GOLDEN = [
    ("example", "json"),
    ("example", "text"),
]


def _normalise(text: str, fmt: str) -> str:
    if fmt == "json":
        report = json.loads(text)
        report["kblint_version"] = "<version>"
        return json.dumps(report, indent=2, ensure_ascii=False) + "\n"
    return text


@pytest.mark.parametrize("name, fmt", GOLDEN)
def test_golden_report(name: str, fmt: str):
    result = run_kblint("validate", f"fixtures/{name}", "--format", fmt, cwd=ROOT, env={"NO_COLOR": "1"})
    assert result.stderr == ""
    actual = _normalise(result.stdout, fmt)
    golden = FIXTURES / f"{name}.expected.{'json' if fmt == 'json' else 'txt'}"
    if os.environ.get("KBLINT_UPDATE_GOLDEN"):
        golden.write_text(actual, encoding="utf-8")
    assert golden.exists(), f"missing golden report {golden}; run with KBLINT_UPDATE_GOLDEN=1"
    assert actual == golden.read_text(encoding="utf-8")
