"""The examples in a checker's docstring, run as tests.

A checker documents itself with examples that pass and fail, each an indented entry file after a
`Passes:` or `Fails:` line that may give the checker's params as a YAML flow mapping:

    Passes (heading: Sources):

        ---
        title: Example
        ---
        ## Sources

The entry is `example.md`. An example of several files starts each with a `==> NAME <==` line
(as `head` prints files); the checker's verdict is read on `example.md`.
"""

from __future__ import annotations

import json
import re
import textwrap
from dataclasses import dataclass
from pathlib import Path

import yaml
from conftest import issues_of, run_kblint, write_kb

_HEADER = re.compile(r"^(?P<verdict>Passes|Fails)(?: \((?P<params>.*)\))?:$")
_FILE = re.compile(r"^==> (?P<name>\S+) <==$")
SUBJECT = "example.md"


@dataclass
class Example:
    passes: bool
    params: dict
    files: dict[str, str]

    def __str__(self) -> str:
        return f"{'Passes' if self.passes else 'Fails'} {self.params or ''}: {self.files}"


def examples(doc: str) -> list[Example]:
    """The examples of a (cleaned) docstring, in order."""
    lines = doc.splitlines()
    found = []
    for i, line in enumerate(lines):
        header = _HEADER.match(line)
        if header is None:
            continue
        block = _indented_block(lines[i + 1 :])
        params = yaml.safe_load("{" + header["params"] + "}") if header["params"] else {}
        found.append(Example(header["verdict"] == "Passes", params, _files(block)))
    return found


def _indented_block(lines: list[str]) -> str:
    taken = []
    for line in lines:
        if line.strip() and not line.startswith("    "):
            break
        taken.append(line)
    return textwrap.dedent("\n".join(taken)).strip("\n") + "\n"


def _files(block: str) -> dict[str, str]:
    files: dict[str, list[str]] = {}
    current = SUBJECT
    for line in block.splitlines():
        named = _FILE.match(line)
        if named:
            current = named["name"]
            continue
        files.setdefault(current, []).append(line)
    return {name: "\n".join(body) + "\n" for name, body in files.items()}


def run_example(tmp_path: Path, checker: str, example: Example, env: dict | None = None) -> list[str]:
    """The messages CHECKER gives on the example's entry, in a KB that binds it with the example's params."""
    item = {"text": "the example", "checker": checker, "params": example.params}
    write_kb(tmp_path, f"name: examples\nevaluation_rubric:\n  - {json.dumps(item)}\n", example.files)
    result = run_kblint("validate", str(tmp_path), "--format", "json", "--no-cache", "-j1", env=env)
    assert result.code in (0, 1), result.stderr
    report = json.loads(result.stdout)
    assert not issues_of(report, "checker_error") and not issues_of(report, "config_error"), report["issues"]
    return [
        issue["message"]
        for issue in issues_of(report, "rubric_violation")
        if issue["rubric_item"] == "the example" and issue["path"].endswith("/" + SUBJECT)
    ]
