"""The README's examples of output are the tool's output."""

from __future__ import annotations

import re

from conftest import ROOT, run_kblint

README = (ROOT / "README.md").read_text(encoding="utf-8")


def _block_after(sentence: str) -> list[str]:
    """The lines of the first code block after SENTENCE in the README."""
    start = README.index(sentence)
    match = re.compile(r"```\w*\n(.*?)```", re.S).search(README, start)
    assert match is not None, sentence
    return match.group(1).splitlines()


def test_the_plan_shown_is_the_plan_printed():
    """Each line the README shows of `kblint checkers --kb` is printed, in that order (`...` stands
    for lines left out)."""
    shown = [line for line in _block_after("prints the plan that `kblint validate` runs") if line.strip() != "..."]
    printed = run_kblint("checkers", "--kb", "fixtures/example").stdout.splitlines()
    at = 0
    for line in shown:
        assert line in printed[at:], line
        at = printed.index(line, at) + 1
