"""The markdown scanner (kblint.model.markdown) against a line-by-line reading of the same rules:
fenced blocks, code-free text and headings come out the same on any body."""

from __future__ import annotations

import bisect
import re

from hypothesis import given
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from kblint.model.markdown import code_blocks, fences, headings, strip_code

# The rules as a line-by-line reading states them.
FENCE_OPEN = re.compile(r"^ {0,3}(`{3,}(?=[^`]*$)|~{3,})")
HEADING = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
INLINE_CODE = re.compile(r"(`+)(?!`)(.+?)(?<!`)\1(?!`)", re.S)


def fenced_by_lines(lines: list[str]) -> list[bool]:
    marks = [False] * len(lines)
    fence = None
    for i, line in enumerate(lines):
        if fence is None:
            m = FENCE_OPEN.match(line)
            if m:
                fence = m.group(1)
                marks[i] = True
            continue
        marks[i] = True
        stripped = line.strip()
        if stripped and set(stripped) == {fence[0]} and len(stripped) >= len(fence):
            fence = None
    return marks


def indented_by_lines(lines: list[str], fenced: list[bool]) -> list[bool]:
    """Indented code outside lists: four columns in, after a blank line, a heading, a fence or
    code, never inside a paragraph."""
    marks = [False] * len(lines)
    before = "start"  # what the last line that was not blank was: start, text, code, other
    blanks: list[int] = []  # the blank lines since then
    for i, line in enumerate(lines):
        if fenced[i]:
            before, blanks = "other", []
        elif not line.strip():
            blanks.append(i)
        elif len(line.expandtabs(4)) - len(line.expandtabs(4).lstrip(" ")) >= 4 and (blanks or before != "text"):
            for b in blanks if before == "code" else ():  # blank lines between code lines are the block's
                marks[b] = True
            marks[i], before, blanks = True, "code", []
        else:
            before, blanks = ("other" if HEADING.match(line.expandtabs(4)) else "text"), []
    return marks


def strip_by_lines(body: str) -> str:
    lines = body.split("\n")
    fenced = fenced_by_lines(lines)
    code = [f or c for f, c in zip(fenced, indented_by_lines(lines, fenced), strict=True)]
    text = "\n".join(" " * len(line) if blanked else line for line, blanked in zip(lines, code, strict=True))
    return INLINE_CODE.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)


def headings_by_lines(body: str, first_line: int) -> list[tuple[int, str, int]]:
    lines = body.split("\n")
    found = []
    for i, (line, fenced) in enumerate(zip(lines, fenced_by_lines(lines), strict=False)):
        h = None if fenced else HEADING.match(line)
        if h:
            found.append((len(h.group(1)), (h.group(2) or "").strip(), first_line + i))
    return found


_pieces = st.sampled_from(
    [
        "```",
        "````",
        "```python",
        "~~~",
        "~~~~",
        "  ```",
        "    ```",
        "\t```",
        "``` x ```",
        "```a`b",
        "# H",
        "## Heading ##",
        "   ### deep",
        "    # code",
        "    [[in code]]",
        "\t[[tab code]]",
        "      `x` deeper",
        "#nospace",
        "####### seven",
        "text",
        "a `code` b",
        "``two ` ticks``",
        "`unclosed",
        "[[link]]",
        "",
        " ",
        "~~~ yaml",
        "``",
        "`",
        "x ``` y",
        "#",
    ]
)


@given(st.lists(_pieces, max_size=14), st.integers(min_value=1, max_value=9))
def test_the_scanner_reads_bodies_as_the_line_by_line_rules_do(pieces, first_line):
    body = "\n".join(pieces)
    assert strip_code(body) == strip_by_lines(body)
    assert [tuple(h) for h in headings(body, first_line)] == headings_by_lines(body, first_line)
    lines = body.split("\n")
    assert bool(fences(body)) == any(fenced_by_lines(lines))


@given(st.text(alphabet="`~ \t\n#ab", max_size=60))
def test_the_scanner_agrees_on_any_text_of_fence_characters(body):
    assert strip_code(body) == strip_by_lines(body)
    assert [tuple(h) for h in headings(body, 1)] == headings_by_lines(body, 1)


_blocks = st.sampled_from(
    [
        *("text", "Para", "", "  cont", "# H", "---", "***", "```", "~~~"),
        *("    code", "      deep", "        deeper", "\tcode"),
        *("- item", "-", "  - sub", "1. one", "2) two", "+ plus"),
        *("> q", ">", ">     qc", "> - qi", "  > iq", "   > sq", "> > dq", "- > lq"),
        *(">\tq", "> \tcode", ">\t\tcode", "====="),  # a tab after `>` is partly the marker's space
    ]
)


def _code_lines(body: str) -> set[int]:
    """The lines of BODY (0-based) with text that code_blocks puts in code."""
    starts = [0, *(i + 1 for i, char in enumerate(body) if char == "\n")]
    lines = body.split("\n")
    found = set()
    for start, end in code_blocks(body):
        first = bisect.bisect_right(starts, start) - 1
        last = bisect.bisect_right(starts, max(start, end - 1)) - 1
        found.update(n for n in range(first, last + 1) if lines[n].strip())
    return found


def _commonmark_code_lines(body: str) -> set[int]:
    """The lines of BODY with text in a code block (fenced or indented), as markdown-it-py reads it."""
    lines = body.split("\n")
    blocks = [t.map for t in MarkdownIt("commonmark").parse(body) if t.type in ("code_block", "fence") and t.map]
    return {n for first, end in blocks for n in range(first, end) if lines[n].strip()}


@given(st.lists(_blocks, min_size=1, max_size=8))
def test_code_blocks_are_the_lines_a_commonmark_parser_reads_as_code(pieces):
    """Lists, block quotes (with markers at most three columns past their margin), paragraphs,
    headings, breaks and fences, in any order."""
    body = "\n".join(pieces)
    assert _code_lines(body) == _commonmark_code_lines(body), body


def test_quotes_nested_past_any_stack_are_read_in_time():
    """A thousand `>` on a line, or a megabyte of them: read as text past 32 levels, never by a
    recursion as deep as the quotes."""
    body = "> " * 1000 + "    deep [[x]]\n" + ">" * 1_000_000 + "\n"
    assert code_blocks(body) == []
    assert "[[x]]" in strip_code(body)
    # markers read one at a time: a line of many, with a fence run that opens nothing, is no search
    # through their splits; nor is a line that leaves a quote sixty deep
    assert fences("> " * 60 + "x ```\n" + "-  " * 60 + "x ```\n") == []
    deep = "> " * 60 + "```\n" + "> " * 59 + "x\n```\n"
    assert [deep[start:end] for start, end in fences(deep)] == ["> " * 60 + "```", "```\n"]


def test_indented_code_in_and_after_lists_is_read_as_commonmark_reads_it():
    cases = {
        "- item\n    - nested [[b]]\n\n    continuation [[c]]\n": [],  # a list's text, not code
        "- item\n\n      code [[d]]\n": ["      code [[d]]"],  # four columns past the item's text
        "1. step\n\n    para [[e]]\n": [],
        "- item\n\nText\n\n    code [[f]]\n": ["    code [[f]]"],  # the list ended at Text
        "Text\n    lazy [[a]]\n": [],  # a paragraph goes on
        "- item\n# H\n    code": ["    code"],  # a heading ends the list and needs no blank line after it
        "- - -\n\n    code": ["    code"],  # a thematic break, not a list item
        "Para\n---\n    code": ["    code"],  # a setext underline ends the paragraph
        "- item\n```\nx\n```\n    code": ["```\nx\n```", "    code"],  # so does a fence, and the list
        "- a\n\n  - b\n\n      para": [],  # the text of b
        "- a\n\n  - b\n\n        code": ["        code"],
        "-\n      code [[g]]\n": ["      code [[g]]"],  # an empty item: its text (here code) begins below
        "- \n  text\n      lazy [[h]]\n": [],
        "> Quote\n>\n>     code [[i]]\n": ["    code [[i]]"],  # code in a block quote, past its marker
        ">     code\n> text\n": ["    code"],
        "> text\n>     lazy [[j]]\n    lazy too\n": [],  # the quote's paragraph goes on, lazily
        "> text\n\n    code [[k]]\n": ["    code [[k]]"],  # a blank line ended the quote
        "> > deep\n> >\n> >     code\n": ["    code"],
        ">\tquote [[l]]\n": [],  # the tab's first column is the marker's space: two columns in
        "> q\n    - lazy [[m]]\n": [],  # four columns in, no block starts: the paragraph goes on
        # a fence in a list item or a quote ends with its closing line, or with the item or quote
        "- ```sh\n  run [[x]]\n  ```\nLater [[y]].\n": ["- ```sh\n  run [[x]]\n  ```"],
        "> ```\n> code [[x]]\nOut [[y]].\n": ["> ```\n> code [[x]]"],
        "- ```\n  code\nOut [[y]]\n": ["- ```\n  code"],
        "```\n> ```\nstill code\n```\n": ["```\n> ```\nstill code\n```"],  # no closing line in a quote
        "> \t```\n> [[x]]\n> ```\n": ["> \t```\n> [[x]]\n> ```"],  # a tab after `> `: two columns in
    }
    for body, code in cases.items():
        assert [body[start:end] for start, end in code_blocks(body)] == code, body
        stripped = strip_code(body)
        assert all(not stripped[start:end].strip() for start, end in code_blocks(body)), body  # blanked
