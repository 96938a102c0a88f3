"""Shared helpers: run kblint as a user does — in this process by default, in a subprocess for the
few end-to-end tests that need a real process — and read its JSON report."""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"

# Property tests: a small profile in every run, a thorough one on request (HYPOTHESIS_PROFILE=thorough).
settings.register_profile("ci", max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile(
    "thorough",
    max_examples=10_000,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "ci")
settings.load_profile(PROFILE)


def pytest_sessionstart(session: pytest.Session) -> None:
    """The reports the tests expect are kblint's alone: a plugin installed where they run would add
    its checkers and types to every plan and report (the tests of plugins install their own)."""
    from importlib.metadata import entry_points

    installed = sorted({ep.dist.name if ep.dist else ep.value for ep in entry_points(group="kblint.plugins")})
    if installed:
        names = " ".join(installed)
        pytest.exit(f"kblint's tests expect no kblint plugin installed, and found {names}: pip uninstall {names}", 4)


def examples(in_ci: int) -> int:
    """How many examples a slow property test tries: IN_CI in the ci profile, the profile's own in
    any other (thorough)."""
    return in_ci if PROFILE == "ci" else settings.get_profile(PROFILE).max_examples


@dataclass
class Result:
    code: int
    stdout: str
    stderr: str

    @property
    def json(self) -> dict:
        return json.loads(self.stdout)


_DROPPED_ENV = ("GITHUB_ACTIONS", "GITHUB_WORKSPACE", "NO_COLOR", "FORCE_COLOR", "KBLINT_LLM")


class _Stdin:
    """Standard input with the bytes a test gives."""

    def __init__(self, data: bytes):
        self.buffer = io.BytesIO(data)

    def isatty(self) -> bool:
        return False

    def close(self) -> None:  # what a forked worker does with its standard input
        self.buffer.close()


@contextlib.contextmanager
def _environment(env: dict | None) -> Iterator[None]:
    saved = dict(os.environ)
    for key in _DROPPED_ENV:
        os.environ.pop(key, None)
    os.environ.update(env or {})
    extra_path = [p for p in (env or {}).get("PYTHONPATH", "").split(os.pathsep) if p]
    sys.path[:0] = extra_path
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)
        del sys.path[: len(extra_path)]


@contextlib.contextmanager
def _directory(cwd: Path | str) -> Iterator[None]:
    before = os.getcwd()
    os.chdir(cwd)
    try:
        yield
    finally:
        os.chdir(before)


def run_kblint(*args: str, cwd: Path | str = ROOT, input: bytes | None = None, env: dict | None = None) -> Result:
    """kblint ARGS in this process, as `kblint` would run them in CWD with ENV and standard INPUT."""
    from kblint.checkers.registry import reset_registry
    from kblint.cli import run_app

    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    err = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    code = 0
    with _environment(env), _directory(cwd):
        reset_registry()  # plugins are found on sys.path, which ENV may change
        argv, stdin, stdout, stderr = sys.argv, sys.stdin, sys.stdout, sys.stderr
        sys.argv, sys.stdin, sys.stdout, sys.stderr = ["kblint", *args], _Stdin(input or b""), out, err
        try:
            run_app()
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        finally:
            sys.argv, sys.stdin, sys.stdout, sys.stderr = argv, stdin, stdout, stderr
            reset_registry()
    return Result(code, _text(out), _text(err))


def _text(stream: io.TextIOWrapper) -> str:
    stream.flush()
    buffer = stream.buffer
    assert isinstance(buffer, io.BytesIO)
    return buffer.getvalue().decode("utf-8")


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
        return len(a) == len(b) and all(same_data(x, y) for x, y in zip(a, b, strict=False))
    return type(a) is type(b) and a == b


async def no_wait(seconds: float) -> None:
    """The judge's clock in tests: a back-off or a wait for an abandoned answer passes at once."""
    await asyncio.sleep(0)


@pytest.fixture
def quick_backoff(monkeypatch) -> None:
    """The judge's waits between tries pass at once (its clock, injected)."""
    import dataclasses

    from kblint.engine import pass_judgment

    made = pass_judgment.judge_config
    monkeypatch.setattr(pass_judgment, "judge_config", lambda s: dataclasses.replace(made(s), sleep=no_wait))
