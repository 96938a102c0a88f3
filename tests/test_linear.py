"""Every scan of a frontmatter, body or link is linear in its size: an entry ten times larger
costs about ten times more, never a hundred (a quadratic scan turns a 10 MB entry into a hang).

Each shape is linted at two sizes in this process and the CPU times are compared (the best of
three each, so that the machine's other work does not count). By default the sizes are 40 KB
and 400 KB; KBLINT_LINEAR_FULL=1 (or HYPOTHESIS_PROFILE=thorough) uses 1 MB and 10 MB.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable

import pytest

from kblint.engine.pass_entries import KBContext, lint_source
from kblint.model.kbschema import default_schema
from kblint.model.plan import build_plan
from kblint.yamlread import Limits

FULL = os.environ.get("KBLINT_LINEAR_FULL") == "1" or os.environ.get("HYPOTHESIS_PROFILE") == "thorough"
SMALL = 1_000_000 if FULL else 40_000
GROWTH = 10  # the larger input is this many times the smaller
# Linear work grows about tenfold; quadratic work a hundredfold. The bound leaves room for noise.
MAX_RATIO = 30

FM = "---\ntitle: Title\ntype: note\n"

# name → the text of an entry of about N characters
SHAPES: dict[str, Callable[[int], str]] = {
    "many frontmatter keys": lambda n: FM + "".join(f"k{i}: v\n" for i in range(n // 8)) + "---\nbody\n",
    "one long frontmatter value": lambda n: FM + "desc: " + "x" * n + "\n---\nbody\n",
    "a long block list": lambda n: FM + "tags:\n" + "  - t\n" * (n // 6) + "---\nbody\n",
    "a long flow list": lambda n: FM + "tags: [" + "t, " * (n // 3) + "t]\n---\nbody\n",
    "a value glued to the closing fence": lambda n: FM + "a: b" + "x" * n + "---\n---\nbody\n",
    "an unclosed frontmatter": lambda n: "---\n" + "k: v " * (n // 5),
    "a long body": lambda n: FM + "---\n" + "word " * (n // 5),
    "many links": lambda n: FM + "---\n" + "[[x]] [a](b.md) ![[c.png]] " * (n // 27),
    "one long link target": lambda n: FM + "---\n[x](" + "a" * n + ")\n",
    "one long wikilink": lambda n: FM + "---\n[[" + "a" * n + "]]\n",
    "unclosed brackets": lambda n: FM + "---\n" + "[" * n + "\n",
    "unclosed wikilinks": lambda n: FM + "---\n" + "[[a|" * (n // 4) + "\n",
    "link openings": lambda n: FM + "---\n" + "](" * (n // 2) + "\n",
    "unclosed angle links": lambda n: FM + "---\n" + "[x](<" * (n // 5) + "\n",
    "unclosed link titles": lambda n: FM + "---\n" + '[x](a.md "' * (n // 10) + "\n",
    "unclosed code spans": lambda n: FM + "---\n" + "`` a ` [[x]] " * (n // 13) + "\n",
    "code fences": lambda n: FM + "---\n" + "```\nx\n" * (n // 6),
    "headings": lambda n: FM + "---\n" + "# h\n" * (n // 4),
    "suppressions": lambda n: FM + "---\n" + "<!-- kblint-disable x -->\n" * (n // 26),
    "unclosed suppressions": lambda n: FM + "---\n" + "<!-- kblint-disable x " * (n // 22) + "\n",
    "CRLF line ends": lambda n: FM.replace("\n", "\r\n") + "---\r\n" + "w [[x]]\r\n" * (n // 9),
}

_SCHEMA = default_schema("/kb")
_CTX = KBContext(schema=_SCHEMA, plan=build_plan(_SCHEMA), limits=Limits(max_file_bytes=20 * SMALL * GROWTH))


def _cpu_seconds(data: bytes) -> float:
    best = float("inf")
    for _ in range(3):
        start = time.thread_time()
        lint_source(_CTX, "/kb/a.md", "a.md", data)
        best = min(best, time.thread_time() - start)
    return best


@pytest.mark.parametrize("shape", list(SHAPES))
def test_work_grows_linearly(shape: str):
    make = SHAPES[shape]
    small, large = make(SMALL).encode(), make(SMALL * GROWTH).encode()
    assert len(large) > (GROWTH - 1) * len(small)
    # Tiny inputs measure fixed costs; the small size is large enough that the scan dominates.
    ratio = _cpu_seconds(large) / max(_cpu_seconds(small), 1e-4)
    assert ratio < MAX_RATIO, f"{shape}: {GROWTH}x the input took {ratio:.0f}x the time"
