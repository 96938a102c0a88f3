"""Every scan of a frontmatter, body or link is linear in its size: an entry ten times larger
costs about ten times more, never a hundred (a quadratic scan turns a 10 MB entry into a hang).

Each shape of entry is linted at two sizes in this process and the CPU times are compared (the
best of three each, so that the machine's other work counts as little as it can). The sizes are
40 KB and 400 KB, or 1 MB and 10 MB with --full. Prints one line per shape and exits 1 when one
grows more than MAX_RATIO times.

    .venv/bin/python bench/linear.py [--full]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable

from kblint.engine.pass_entries import KBContext, lint_source
from kblint.model.kbschema import default_schema
from kblint.model.plan import build_plan
from kblint.yamlread import Limits

GROWTH = 10  # the larger input is this many times the smaller
# Linear work grows about tenfold; quadratic work a hundredfold. The bound leaves room for noise.
MAX_RATIO = 30

FM = "---\ntitle: Title\ntype: note\n"

# name → the text of an entry of about N characters
SHAPES: dict[str, Callable[[int], str]] = {
    "many frontmatter keys": lambda n: FM + "".join(f"k{i}: v\n" for i in range(n // 8)) + "---\nbody\n",
    "one long frontmatter value": lambda n: FM + "desc: " + "x" * n + "\n---\nbody\n",
    "a long block list": lambda n: FM + "tags:\n" + "  - t\n" * (n // 6) + "---\nbody\n",
    "keys after a line separator": lambda n: (
        FM + 'q: "a\u2028b"\n' + "".join(f"k{i}: 2024-13-01\n" for i in range(n // 16)) + "---\nbody\n"
    ),
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
    "HTML comments": lambda n: FM + "---\n" + "<!-- [[x]]\n## h\n--> w\n" * (n // 22),
    "unclosed HTML comments": lambda n: FM + "---\n" + "<!-- [[x]] " * (n // 11) + "\n",
    "inline HTML comments": lambda n: FM + "---\n" + "a <!-- [[x]] --> b\n" * (n // 19),
    "unclosed inline comments": lambda n: FM + "---\n" + "a <!-- [[x]]\n" * (n // 13) + "-->\n",
    "inline comments, paragraphs": lambda n: FM + "---\n" + "a <!-- b\n\n## h --> c\n" * (n // 21),
    "suppressions": lambda n: FM + "---\n" + "<!-- kblint-disable x -->\n" * (n // 26),
    "unclosed suppressions": lambda n: FM + "---\n" + "<!-- kblint-disable x " * (n // 22) + "\n",
    "CRLF line ends": lambda n: FM.replace("\n", "\r\n") + "---\r\n" + "w [[x]]\r\n" * (n // 9),
}


def cpu_seconds(ctx: KBContext, data: bytes) -> float:
    best = float("inf")
    for _ in range(3):
        start = time.thread_time()
        lint_source(ctx, "/kb/a.md", "a.md", data)
        best = min(best, time.thread_time() - start)
    return best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--full", action="store_true", help="1 MB and 10 MB rather than 40 KB and 400 KB")
    args = parser.parse_args(argv)
    small = 1_000_000 if args.full else 40_000
    schema = default_schema("/kb")
    ctx = KBContext(schema=schema, plan=build_plan(schema), limits=Limits(max_file_bytes=20 * small * GROWTH))
    failed = 0
    for shape, make in SHAPES.items():
        # Tiny inputs measure fixed costs; the small size is large enough that the scan dominates.
        ratio = cpu_seconds(ctx, make(small * GROWTH).encode()) / max(cpu_seconds(ctx, make(small).encode()), 1e-4)
        verdict = "ok" if ratio < MAX_RATIO else "NOT LINEAR"
        failed += verdict != "ok"
        print(f"{shape:36} {GROWTH}x the input: {ratio:5.1f}x the time  {verdict}")
    print(f"{len(SHAPES) - failed} of {len(SHAPES)} shapes linear (under {MAX_RATIO}x)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
