"""Start-up stays small: libraries are imported only when a command uses them (SPEC §13)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from conftest import ROOT

# Each is imported by some runs of kblint (so each check can fail), never by these ones.
HEAVY = (
    "typer",
    "rich",
    "httpx",
    "concurrent.futures",
    "kblint.engine.run",
    "jsonschema",
    "pygls",
    "lsprotocol",
    "mcp",
    "watchfiles",
)

PROBE = """
import atexit, json, sys
atexit.register(lambda: print(json.dumps(sorted(m for m in {heavy!r} if m in sys.modules)), file=sys.stderr))
sys.argv = ["kblint", *{args!r}]
from kblint.__main__ import main
main()
"""


def loaded_modules(*args: str) -> list[str]:
    proc = subprocess.run(
        [sys.executable, "-c", PROBE.format(args=list(args), heavy=HEAVY)],
        cwd=str(ROOT),
        capture_output=True,
        text=True,
        timeout=60,
    )
    return json.loads(proc.stderr.strip().splitlines()[-1])


def test_version_imports_no_library_and_not_the_engine():
    assert loaded_modules("--version") == []


def test_validate_imports_no_library_it_does_not_use(tmp_path: Path):
    kb = tmp_path / "example"
    shutil.copytree(ROOT / "fixtures" / "example", kb)
    kb_yaml = (kb / "kb.yaml").read_text()
    start = kb_yaml.index('      - text: "Sources are listed by their document slugs"')
    end = kb_yaml.index("    workflow:", start)
    (kb / "kb.yaml").write_text(kb_yaml[:start] + kb_yaml[end:])  # the example without its JSON Schema item
    assert loaded_modules("validate", str(kb), "--format", "json", "--no-cache") == ["kblint.engine.run", "typer"]
    assert loaded_modules("validate", str(kb), "--no-cache") == ["kblint.engine.run", "typer"]


def test_a_missing_dependency_is_one_line_and_exit_2():
    code = (
        "import sys; sys.modules['typer'] = None; sys.argv = ['kblint', 'validate']\n"
        "from kblint.__main__ import main; main()"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr and "'typer' is not installed" in proc.stderr
