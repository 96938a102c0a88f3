"""Text from a KB's kb.yaml reaches a terminal escaped (its control and bidi characters written as
`\\x1b`, `\\n`, `\\u202e`), once, in every output a terminal shows: the plan (`kblint checkers
--kb`), the text report and its --statistics, the dry run, and the GitHub workflow commands (which
escape `%`, CR and LF of their own). The structured formats carry it exactly and stay valid."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from conftest import run_kblint, write_kb

from kblint.model.issue import DryRunRow, Report
from kblint.paths import CONTROLS
from kblint.report.text import dry_run_lines

HOSTILE = "t\x1b[2J\x1b]0;pwn\x07 \r\nX"  # clears the screen, sets the window's title, splits the line
SHOWN = "t\\x1b[2J\\x1b]0;pwn\\x07 \\r\\nX"

KB_YAML = r"""name: k
evaluation_rubric:
  - {text: "t\x1b[2J\x1b]0;pwn\x07 \r\nX", checker: has_tags, params: {min: 5}}
  - {text: "f\x1b[35m", checker: has_field, params: {field: "v\x1b[36m\r\n"}}
  - {text: "c\x1b[33m", checker: "nochk\x1b[34m"}
  - {text: "p\u202e", policy: "body.section \"S\x1b[32m\" required"}
  - text: "Links\x1b[31m"
    id: "L\x1b[31m"
    levels:
      - {id: "iso\x1b[31m", score: 0}
      - {id: "lin\x1b[32m\n", score: 1, when: "outlinks count >= 1"}
  - text: "Jud\x1b[31m"
    id: "J\x1b[32m"
    pass_level: "ok\x1b[33m"
    levels:
      - {id: "bad\x1b[31m", score: 0}
      - {id: "ok\x1b[33m", score: 1}
types:
  "ty\x1b[31m":
    subdirectory: notes
    required: [title]
    evaluation_rubric:
      - {text: "tt\x1b[31m", checker: has_tags, params: {min: 3}}
"""
ENTRY = "---\ntitle: A\ntype: note\n---\nBody.\n"
TYPED = '---\ntitle: B\ntype: "ty\\x1b[31m"\n---\nBody.\n'

_RAW = re.compile(f"[{CONTROLS}]")


def raw_controls(text: str) -> list[str]:
    """The control characters of TEXT but for its line ends."""
    return _RAW.findall(text.replace("\n", ""))


@pytest.fixture
def kb(tmp_path: Path) -> Path:
    return write_kb(tmp_path / "kb", KB_YAML, {"a.md": ENTRY, "notes/b.md": TYPED})


def test_the_plan_shows_kb_yaml_escaped(kb: Path):
    out = run_kblint("checkers", "--kb", str(kb))
    assert out.code == 1 and raw_controls(out.stdout) == []  # an item is broken
    lines = out.stdout.splitlines()
    assert f"    [checker] {SHOWN} → has_tags(min=5)" in lines  # on one line, escaped once
    assert "    [checker] f\\x1b[35m → has_field(field=v\\x1b[36m\\r\\n)" in lines
    assert '    [policy] p\\u202e → body.section "S\\x1b[32m" required' in lines
    assert "    [policy, graded: iso\\x1b[31m < lin\\x1b[32m\\n, needs lin\\x1b[32m\\n] Links\\x1b[31m" in lines
    judged = "    [judgment, graded: bad\\x1b[31m < ok\\x1b[33m, needs ok\\x1b[33m] Jud\\x1b[31m"
    assert any(line.startswith(judged + " (") for line in lines)
    assert any(line.endswith("[broken] c\\x1b[33m — unknown checker 'nochk\\x1b[34m'") for line in lines)
    assert lines[lines.index("  type ty\\x1b[31m:") + 1] == "    [checker] tt\\x1b[31m → has_tags(min=3)"


def test_the_caret_under_a_policy_points_at_its_escaped_character(tmp_path: Path):
    kb = write_kb(
        tmp_path / "kb", 'name: k\nevaluation_rubric:\n  - "metadata.u\\x1brl count > = 1"\n', {"a.md": ENTRY}
    )
    out = run_kblint("checkers", "--kb", str(kb))
    assert out.code == 1 and raw_controls(out.stdout) == []
    policy = "metadata.u\\x1brl count > = 1"
    caret = out.stdout.split(f"\n    {policy}\n", 1)[1].splitlines()[0]
    assert caret == "    " + " " * policy.index("= 1") + "^"  # under the '=', after the escape


def test_the_plan_in_json_carries_kb_yaml_exactly(kb: Path):
    data = run_kblint("checkers", "--kb", str(kb), "--format", "json").json
    items = [i for s in data["kbs"][0]["scopes"] for i in s["items"]]
    assert HOSTILE in [i["text"] for i in items]
    graded = next(i for i in items if i["text"] == "Links\x1b[31m")
    assert [level["id"] for level in graded["levels"]] == ["iso\x1b[31m", "lin\x1b[32m\n"]


def test_github_annotations_escape_the_rubric_item(kb: Path):
    out = run_kblint("validate", str(kb), "--format", "github", cwd=kb.parent)
    assert raw_controls(out.stdout) == []
    lines = out.stdout.splitlines()
    assert all(line.startswith(("::error ", "::warning ", "kblint: ")) for line in lines)  # none split
    assert any(line.endswith(f"Entry 'a' has no tags (needs 5) [{SHOWN}]") for line in lines)
    # escaped once: the escapes of the messages (made when the issue was) are not escaped again
    assert any(line.endswith("Entry 'a' has no 'v\\x1b[36m\\r\\n' [f\\x1b[35m]") for line in lines)


def test_statistics_show_levels_escaped_once(kb: Path):
    out = run_kblint("validate", str(kb), "--statistics", cwd=kb.parent)
    assert raw_controls(out.stdout) == []
    lines = out.stdout.splitlines()
    assert "  levels k 'Links\\x1b[31m': iso\\x1b[31m 2, lin\\x1b[32m\\n 0" in lines
    assert "    kb/a.md: Links\\x1b[31m: iso\\x1b[31m (0.00)" in lines


def test_the_text_report_shows_no_control_character(kb: Path):
    for args in ((), ("--statistics",), ("--quiet",), ("--color", "never")):
        out = run_kblint("validate", str(kb), *args, cwd=kb.parent)
        assert out.code == 1 and raw_controls(out.stdout) == [], args
        assert raw_controls(out.stderr) == [], args
    summary = run_kblint("validate", str(kb), cwd=kb.parent).stdout
    assert "k (kb): 2 files, 2 entries" in summary


def test_the_dry_run_shows_item_ids_escaped():
    row = DryRunRow("/x/a.md", "a", ["J\x1b[32m", "K\u202e"], ["C\x07"], 10, False)
    lines = dry_run_lines(Report(kbs=[], issues=[], dry_run=[row]))
    assert raw_controls("\n".join(lines)) == []
    assert "2 items (J\\x1b[32m, K\\u202e), 1 cached, ~10 prompt tokens" in lines[1]


def test_structured_formats_stay_valid_and_exact(kb: Path, tmp_path: Path):
    report = run_kblint("validate", str(kb), "--format", "json", cwd=kb.parent).json
    assert HOSTILE in {i.get("rubric_item") for i in report["issues"]}
    for fmt in ("sarif", "junit", "verdicts"):
        out = tmp_path / f"report.{fmt}"
        assert run_kblint("validate", str(kb), "--format", fmt, "-o", str(out), cwd=kb.parent).code == 1
        text = out.read_text(encoding="utf-8")
        if fmt == "sarif":
            json.loads(text)
        elif fmt == "junit":
            ET.fromstring(text.encode("utf-8"))
        else:
            assert all(json.loads(line) for line in text.splitlines())
