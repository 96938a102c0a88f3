"""Shared helpers: run kblint as a user does, in a subprocess, and read its JSON report."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"


@dataclass
class Result:
    code: int
    stdout: str
    stderr: str

    @property
    def json(self) -> dict:
        return json.loads(self.stdout)


def run_kblint(*args: str, cwd: Path | str = ROOT, input: bytes | None = None, env: dict | None = None) -> Result:
    full_env = {k: v for k, v in os.environ.items() if k not in ("GITHUB_ACTIONS", "NO_COLOR")}
    full_env.update(env or {})
    proc = subprocess.run([sys.executable, "-m", "kblint", *args], cwd=str(cwd), input=input,
                          capture_output=True, env=full_env, timeout=120)
    return Result(proc.returncode, proc.stdout.decode("utf-8"), proc.stderr.decode("utf-8"))


def write_kb(root: Path, kb_yaml: str, entries: dict[str, str | bytes]) -> Path:
    """Create a KB at ROOT from kb.yaml text and {relative path: content}."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "kb.yaml").write_text(kb_yaml, encoding="utf-8")
    for rel, content in entries.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
    return root


def issues_of(report: dict, rule: str) -> list[dict]:
    return [i for i in report["issues"] if i["rule"] == rule]


@pytest.fixture
def kblint():
    return run_kblint


def same_data(a, b) -> bool:
    """Equal values of the same types, dict keys in the same order; NaN equals NaN."""
    import math

    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if isinstance(a, dict) and isinstance(b, dict):
        return list(a) == list(b) and all(same_data(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same_data(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b
