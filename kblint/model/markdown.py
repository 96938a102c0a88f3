"""What kblint reads in a markdown body: code fences, code-free text, headings and links (SPEC §3).

One fence scanner (`fences`) serves code stripping, headings and the code-block checker. Every scan
here is linear in the size of the body, and looks at the lines that may matter (found by str.find
and by regexes that start with a literal, which the regex engine skips ahead to) rather than at
every line of a long body.
"""

from __future__ import annotations

import bisect
import io
import posixpath
import re
from collections.abc import Iterator
from typing import NamedTuple
from urllib.parse import unquote

from ..paths import link_relpath
from .link import Link

# A backtick fence's info string cannot contain backticks (CommonMark): "```x``` y" is inline code.
# the markers of the block quotes and list items a line is in, before a fence
_CONTAINER_RE = re.compile(r" {0,3}(?:>[ \t]?|(?:[-+*]|\d{1,9}[.)])[ \t]+)")  # one, read one at a time
_FENCE_OPEN_RE = re.compile(r" {0,3}(`{3,}(?=[^`]*$)|~{3,})")
_CONTAINER_PREFIX_RE = re.compile(r"[ \t>]*")
_HEADING_RE = re.compile(r" {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
# A code span, and the backticks that open it after the first one (split() returns both). It starts
# with the backtick itself, so that the regex engine skips ahead from one backtick to the next.
_INLINE_CODE_RE = re.compile(r"(`(`*)(?!`).+?(?<!`)`\2(?!`))", re.S)
_WIKILINK_RE = re.compile(r"\[\[([^\[\]]*)\]\](?!\()")
_MDLINK_RE = re.compile(r"\]\(\s*<?([^()\s<>]+)>?(?:\s+(?:\"[^\"\n()]*\"|'[^'\n()]*'))?\s*\)")
_KB_PREFIX_RE = re.compile(r"([a-z0-9_-]+):(.+)", re.S)
_SCHEME_RE = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:")
_BRACKETS_RE = re.compile(r"[\[\]\n]")

Span = tuple[int, int]  # [start, end) offsets in a body


def _fence_runs(body: str) -> list[int]:
    """Offsets of the runs of three or more backticks or tildes, in order (maybe fence lines)."""
    found = []
    for marks in ("```", "~~~"):
        at = body.find(marks)
        while at >= 0:
            found.append(at)
            at = body.find(marks, at + 3)
    return sorted(found)


def fences(body: str) -> list[Span]:
    """The fenced code blocks of BODY: from the start of an opening fence line to the end of its
    closing fence line, or of the list item or block quote it is in, or of the body."""
    if "```" not in body and "~~~" not in body:
        return []
    blocks: list[Span] = []
    fence: str | None = None  # the open fence
    opened = 0
    inside = (0, 0)  # the block quotes the open fence is in, and the text column of its list item
    done = 0  # lines before this offset are settled
    for at in _fence_runs(body):
        if at < done:
            continue
        start = body.rfind("\n", 0, at) + 1
        left = _container_left(body, max(done - 1, 0), start, *inside) if fence is not None else None
        if left is not None:  # its list item or quote ended before this line
            blocks.append((opened, left))
            fence = None
        end = body.find("\n", at)
        end = len(body) if end < 0 else end
        done = end + 1
        line = body[start:end]
        if fence is None:
            found = _fence_open(line.expandtabs(_CODE_INDENT))  # a tab after `> ` is columns of indentation
            if found is not None:
                prefix, fence, opened = found[0], found[1], start
                inside = (prefix.count(">"), 0 if ">" in prefix else len(prefix.expandtabs(_CODE_INDENT)))
            continue
        prefix = container_markers(line)
        stripped = line[len(prefix) :].strip()
        if prefix.count(">") == inside[0] and set(stripped) == {fence[0]} and len(stripped) >= len(fence):
            blocks.append((opened, end))
            fence = None
    if fence is not None:
        left = _container_left(body, max(done - 1, 0), len(body), *inside)
        blocks.append((opened, len(body) if left is None else left))
    return blocks


def _fence_open(line: str) -> tuple[str, str] | None:
    """(the markers of the quotes and list items before it, the fence) when LINE opens a fence.
    The markers are taken one at a time, never tried in other splits: a line of many cannot cost
    more than its length."""
    at = 0
    while (m := _CONTAINER_RE.match(line, at)) is not None and m.end() > at:
        at = m.end()
    fence = _FENCE_OPEN_RE.match(line, at)
    return (line[:at], fence.group(1)) if fence is not None else None


def _container_left(body: str, begin: int, end: int, quotes: int, column: int) -> int | None:
    """The first line end in BODY[BEGIN:END] after which a line leaves the fence's container: it has
    fewer than QUOTES `>` before its text, or, in a list item whose text is at COLUMN, it is less
    indented and not blank."""
    if not quotes and not column:
        return None
    at = body.find("\n", begin, end)
    while at >= 0:
        if (quotes and _quotes_at(body, at + 1, quotes) < quotes) or (not quotes and _dedented(body, at + 1, column)):
            return at
        at = body.find("\n", at + 1, end)
    return None


def _quotes_at(body: str, at: int, most: int) -> int:
    """How many block quote markers (up to MOST) begin the line at offset AT."""
    count = 0
    while count < most and (m := _QUOTE_MARKER_RE.match(body, at)) is not None:
        count, at = count + 1, m.end()
    return count


def _dedented(body: str, at: int, column: int) -> bool:
    """Whether the line at offset AT has text less indented than COLUMN."""
    text = body[at : at + column + 1]
    stripped = text.lstrip(" ")
    return bool(stripped) and stripped[0] not in "\n\r" and len(text) - len(stripped) < column


# A list item's marker: `-`, `+`, `*` or a number and `.` or `)`, then spaces or the line's end.
_LIST_ITEM_RE = re.compile(r"( *)([-+*]|\d{1,9}[.)])( +|$)")
_CODE_INDENT = 4  # columns that make a line code, from the margin of the block it is in


def code_blocks(body: str, fenced: list[Span] | None = None) -> list[Span]:
    """The code blocks of BODY, sorted: fenced ones (FENCED: fences(BODY), when known) and indented
    ones. A line indented four columns past its list item's text (past the margin outside lists)
    starts an indented block after a blank line, not inside a paragraph, as CommonMark reads it."""
    fenced = fences(body) if fenced is None else fenced
    if "    " not in body and "\t" not in body:  # no line is four columns in
        return fenced
    return sorted(fenced + _Indented(fenced).scan(body))


class _Indented:
    """The indented code blocks of a body, found line by line (outside its fenced blocks)."""

    def __init__(self, fenced: list[Span], depth: int = 0):
        self.fenced = fenced
        self.depth = depth  # of block quotes this scanner reads the inside of
        self.lists: list[int] = []  # the text column of each open list item, innermost last
        self.blank = True  # the line before was blank (or there was none)
        self.paragraph = False  # the line before was text a paragraph goes on with
        self.empty_item = False  # the line before opened a list item with no text
        self.code: tuple[int, int] | None = None  # the open block's start and its last line's end
        self.quote: _Indented | None = None  # the open block quote: its lines, markers taken off
        self.quote_margin = 0  # the text column of the list item the open quote is in
        self.found: list[Span] = []

    def scan(self, body: str) -> list[Span]:
        at = 0
        for line in body.split("\n"):
            end = at + len(line)
            self.line(line, at, end, bool(self.fenced) and in_spans(at, self.fenced))
            at = end + 1
        self.close()
        self._end_quote()
        return self.found

    def line(self, line: str, start: int, end: int, fenced: bool) -> None:
        text = line.expandtabs(_CODE_INDENT)
        indent = len(text) - len(text.lstrip(" "))
        if not fenced and self._quoted(line, text, start, end):
            return
        if fenced or not text.strip():
            if fenced:  # a fence ends a paragraph, a block quote, and the list items it is not inside
                self.close()
                self._end_quote()
                self._leave_lists(indent)
            elif self.empty_item:  # an item may begin with one blank line, not two: it was empty
                self.lists.pop()
            self.blank, self.paragraph, self.empty_item = not fenced, False, False
            return
        margin = self.lists[-1] if self.lists else 0
        if self.code is not None and indent >= margin + _CODE_INDENT:
            self.code = (self.code[0], end)
            return
        self.close()
        kind = _block_kind(text, self.paragraph and indent >= margin)  # an underline of a paragraph it is in
        if self.blank or kind != "text" or not self.paragraph:  # only a paragraph's text goes on lazily
            self._leave_lists(indent)
            margin = self.lists[-1] if self.lists else 0
        item = _LIST_ITEM_RE.match(text) if kind == "text" and indent < margin + _CODE_INDENT else None
        if item is not None and self.paragraph and indent >= margin and not _interrupts(item, text):
            item = None  # a new list that may not end the paragraph it is in: the paragraph goes on
        if item is not None:
            self._leave_lists(indent)
            spaces = len(item.group(3))
            self.lists.append(item.end(2) + (spaces if 0 < spaces <= _CODE_INDENT else 1))
        elif indent >= margin + _CODE_INDENT and not self.paragraph:
            self.code = (start, end)
        self.empty_item = item is not None and not text[item.end() :].strip()  # its text begins on the next line
        self.blank, self.paragraph = False, self.code is None and kind == "text" and not self.empty_item

    def _quoted(self, line: str, text: str, start: int, end: int) -> bool:
        """Whether LINE (TEXT, its tabs expanded) is a block quote's (`> ...`, or a line its
        paragraph goes on with lazily), read by the quote's own scanner with the marker taken off."""
        marker = _QUOTE_MARKER_RE.match(text) if self.depth < _MAX_QUOTE_DEPTH else None
        lead = len(marker.group(1)) if marker is not None else 0
        if marker is not None and self.quote is not None and lead < self.quote_margin:
            self._end_quote()  # a quote left of the list item the open one is in: a new one, out of it
        if marker is not None and self.quote is None:
            self._leave_lists(lead)  # a quote less indented than a list item's text ends the item
        margin = self.lists[-1] if self.lists else 0
        if marker is not None and lead >= margin + _CODE_INDENT:
            marker = None  # four columns past the margin: code, or a paragraph's text
        if marker is None:
            lazy = self.quote is not None and self.quote.paragraph and _goes_on(text, margin)
            if not lazy:
                self._end_quote()
            return lazy
        self.close()
        if self.quote is None:
            self.quote, self.quote_margin = _Indented([], self.depth + 1), margin
        # the text is read with its tabs expanded (a tab after `>` is partly the marker's space);
        # its lines' offsets are those of the body
        written = _QUOTE_MARKER_RE.match(line)
        self.quote.line(text[marker.end() :], start + (written.end() if written else 0), end, False)
        self.blank, self.paragraph, self.empty_item = False, self.quote.paragraph, False
        return True

    def _end_quote(self) -> None:
        if self.quote is not None:
            self.quote.close()
            self.quote._end_quote()
            self.found.extend(self.quote.found)
            self.quote = None
            self.paragraph = False  # the paragraph was the quote's

    def _leave_lists(self, indent: int) -> None:
        """Close the list items whose text is further in than INDENT."""
        while self.lists and indent < self.lists[-1]:
            self.lists.pop()

    def close(self) -> None:
        if self.code is not None:
            self.found.append(self.code)
            self.code = None


def _goes_on(text: str, margin: int) -> bool:
    """Whether TEXT, a line after a paragraph's, goes on with the paragraph lazily: no block
    starts there (four columns past MARGIN none can; nor a setext underline, as lazy text; a list
    item does, even one that could not interrupt the paragraph where it is)."""
    if not text.strip():
        return False
    if len(text) - len(text.lstrip(" ")) >= margin + _CODE_INDENT:
        return True
    return _block_kind(text, False) == "text" and not _LIST_ITEM_RE.match(text)


def _interrupts(item: re.Match[str], text: str) -> bool:
    """Whether the list item ITEM matched in TEXT may end a paragraph: one with text, and a
    numbered one only from 1."""
    marker = item.group(2)
    return bool(text[item.end() :].strip()) and (not marker[0].isdigit() or int(marker[:-1]) == 1)


_MAX_QUOTE_DEPTH = 32  # quotes nested deeper are read as text: no document nests so, and none may cost a stack
_QUOTE_MARKER_RE = re.compile(r"( *)> ?")
_THEMATIC_BREAK_RE = re.compile(r" {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$")
_SETEXT_RE = re.compile(r" {0,3}(?:=+|-+)[ \t]*$")


def container_markers(line: str) -> str:
    """The markers of the block quotes LINE is in, with the indentation around them (`> > `)."""
    return _CONTAINER_PREFIX_RE.match(line).group()  # type: ignore[union-attr]  # it matches any text


def opens_block(text: str) -> bool:
    """Whether TEXT, a line without its container markers, begins a block other than a paragraph's
    or a table's text: a heading, a thematic break, a fence, a list item."""
    return (
        _block_kind(text, False) in ("heading", "break")
        or _FENCE_OPEN_RE.match(text) is not None
        or _LIST_ITEM_RE.match(text) is not None
    )


def _block_kind(text: str, in_paragraph: bool) -> str:
    """What a line that is no code opens: a heading (ATX, or a setext underline after a
    paragraph), a thematic break, a block quote, or text (a paragraph's, or a list item's)."""
    if _HEADING_RE.match(text) or (in_paragraph and _SETEXT_RE.match(text)):
        return "heading"
    if _THEMATIC_BREAK_RE.match(text):
        return "break"
    return "quote" if text.lstrip(" ").startswith(">") else "text"


def editor_lines(text: str) -> list[str]:
    """TEXT's lines with their ends, broken where editors break them (`\n`, `\r\n`, `\r`):
    `str.splitlines` also breaks them at U+2028, U+0085 and other characters a value may hold."""
    return io.StringIO(text, newline="").readlines()


def in_spans(offset: int, spans: list[Span]) -> bool:
    """Whether OFFSET lies in one of SPANS (sorted, not overlapping)."""
    i = bisect.bisect_right(spans, offset, key=lambda span: span[0]) - 1
    return i >= 0 and offset < spans[i][1]


def strip_code(body: str, blocks: list[Span] | None = None) -> str:
    """BODY with code blocks and inline code replaced by spaces (newlines kept), so that positions
    in it are positions in the body. BLOCKS: code_blocks(BODY), when known."""
    blocks = code_blocks(body) if blocks is None else blocks
    if "`" not in body and not blocks:
        return body
    body = blank_spans(body, blocks)
    if "`" not in body:
        return body
    parts = _INLINE_CODE_RE.split(body)  # text, span, its opening backticks, text, span, ...
    pieces = [""] * (2 * len(parts) // 3 + 1)
    pieces[0::2] = parts[0::3]
    pieces[1::2] = [" " * len(span) if "\n" not in span else _blank(span) for span in parts[1::3]]
    return "".join(pieces)


def comments(text: str) -> list[Span]:
    """The HTML comments of TEXT (a body with its code blanked: `<!--` in code opens none), as
    CommonMark reads them. One that opens a line is an HTML block: it runs to the next `-->`, or to
    the end of the text. One inside a line is inline: it ends at the next `-->` of its paragraph
    (of its line, in a heading), and is text when none comes there. `<!-->` and `<!--->` are whole
    comments. A renderer shows nothing of them."""
    spans: list[Span] = []
    paragraphs = _Paragraphs(text)
    at = text.find("<!--")
    while at >= 0:
        if _opens_line(text, at):
            close = text.find("-->", at + 2)
            end = len(text) if close < 0 else close + 3
        else:
            limit = paragraphs.end_of(at)
            close = text.find("-->", at + 2, limit)
            if close < 0:  # text; so is every later one up to LIMIT, but one that opens a line
                at = next((a for a in _occurrences(text, "<!--", at + 4, limit) if _opens_line(text, a)), -1)
                at = text.find("<!--", limit) if at < 0 else at
                continue
            end = close + 3
        spans.append((at, end))
        at = text.find("<!--", end)
    return spans


# Where a paragraph ends: a blank line, or a line that opens a heading, a fence or an HTML block.
_PARAGRAPH_END = re.compile(r"\n(?:[ \t]*(?:\n|$)| {0,3}(?:#|```|~~~|<!--))")


class _Paragraphs:
    """Where the inline content holding an offset ends: its paragraph's end, or its line's end in
    a heading. Offsets are asked in increasing order: each line and paragraph is read once."""

    def __init__(self, text: str):
        self.text = text
        self.paragraph_end = -1
        self.line_end = -1
        self.heading = False

    def end_of(self, at: int) -> int:
        text = self.text
        if at > self.line_end:  # a line not asked of yet
            start = text.rfind("\n", 0, at) + 1
            end = text.find("\n", at)
            self.line_end = len(text) if end < 0 else end
            self.heading = text[start : start + 4].lstrip(" ").startswith("#")
        if at > self.paragraph_end:
            found = _PARAGRAPH_END.search(text, at)
            self.paragraph_end = len(text) if found is None else found.start()
        return self.line_end if self.heading else self.paragraph_end


def _occurrences(text: str, sub: str, at: int, end: int) -> Iterator[int]:
    """The offsets of SUB in TEXT from AT, before END."""
    at = text.find(sub, at, end)
    while at >= 0:
        yield at
        at = text.find(sub, at + len(sub), end)


def _opens_line(text: str, at: int) -> bool:
    """Whether AT starts its line, after at most three spaces (looking at the four characters
    before it only: a long line is not read again for each `<!--` on it)."""
    before = text[max(0, at - 4) : at].rstrip(" ")
    return before.endswith("\n") or (not before and at < 4)  # noqa: PLR2004 - four spaces make code


def blank_spans(text: str, spans: list[Span]) -> str:
    """TEXT with SPANS (sorted, not overlapping) blanked: same length and newlines."""
    if not spans:
        return text
    pieces = []
    last = 0
    for start, end in spans:
        pieces.append(text[last:start])
        pieces.append(_blank(text[start:end]))
        last = end
    pieces.append(text[last:])
    return "".join(pieces)


def _blank(text: str) -> str:
    """Same length and newlines, no content."""
    if "\n" not in text:
        return " " * len(text)
    return "\n".join(" " * len(part) for part in text.split("\n"))


def _heading_starts(body: str) -> list[int]:
    """The start of each line that may be a heading: a `#` after at most three spaces. Found from
    one `#` to the next (a search for one character is the fastest there is), each looked at once."""
    starts = []
    at = body.find("#")
    while at >= 0:
        start = at
        while start > 0 and at - start < 3 and body[start - 1] == " ":  # noqa: PLR2004 - three spaces
            start -= 1
        if start == 0 or body[start - 1] == "\n":
            starts.append(start)
            at = body.find("\n", at)  # the rest of a heading's line is its text
            if at < 0:
                break
        at = body.find("#", at + 1)
    return starts


class Heading(NamedTuple):
    """An ATX heading: `(level, text, line)` as checkers unpack it (SPEC §3)."""

    level: int
    text: str
    line: int  # line in the file


def headings(body: str, body_line: int, blocks: list[Span] | None = None) -> list[Heading]:
    """Each ATX heading outside code fences. BODY_LINE: the file line of the body's first line;
    BLOCKS: where no heading is, sorted (fences(BODY) when not given; an entry adds its comments)."""
    if "#" not in body:
        return []
    blocks = fences(body) if blocks is None else blocks
    found = []
    line, counted = body_line, 0
    for start in _heading_starts(body):
        if blocks and in_spans(start, blocks):
            continue
        end = body.find("\n", start)
        h = _HEADING_RE.match(body, start, len(body) if end < 0 else end)
        if h:
            line += body.count("\n", counted, start)
            counted = start
            found.append(Heading(len(h.group(1)), (h.group(2) or "").strip(), line))
    return found


# ---------------------------------------------------------------------------------------------
# Links in the body


def split_kb_prefix(target: str) -> tuple[str | None, str]:
    """`kb:target` → (kb, target) when the prefix is a KB name (lower-case letters, digits, `-`, `_`)."""
    if ":" not in target:
        return None, target
    m = _KB_PREFIX_RE.fullmatch(target)
    if m:
        return m.group(1), m.group(2).strip()
    return None, target


class _Positions:
    """Line and column of offsets in a text, counted from the last offset asked (offsets asked in
    increasing order cost one pass over the text in all)."""

    def __init__(self, text: str, first_line: int):
        self.text = text
        self.offset = 0
        self.line = first_line
        self.line_start = 0

    def at(self, offset: int) -> tuple[int, int]:
        text = self.text
        if offset >= self.offset:
            crossed = text.count("\n", self.offset, offset)
            if crossed:
                self.line += crossed
                self.line_start = text.rfind("\n", self.offset, offset) + 1
        else:
            crossed = text.count("\n", offset, self.offset)
            if crossed:
                self.line -= crossed
                self.line_start = text.rfind("\n", 0, offset) + 1
        self.offset = offset
        return self.line, offset - self.line_start + 1


class _OpeningBrackets:
    """The `[` that each `]` of a text closes, on the same line; lines are matched when first asked."""

    def __init__(self, text: str):
        self.text = text
        self.opening: dict[int, int] = {}
        self.done_until = 0

    def of(self, close: int) -> int | None:
        if close >= self.done_until:
            self._match_lines_through(close)
        return self.opening.get(close)

    def _match_lines_through(self, close: int) -> None:
        end = self.text.find("\n", close)
        end = len(self.text) if end < 0 else end
        stack: list[int] = []
        for m in _BRACKETS_RE.finditer(self.text, self.done_until, end):
            char = m.group()
            if char == "[":
                stack.append(m.start())
            elif char == "]" and stack:
                self.opening[m.start()] = stack.pop()
            elif char == "\n":
                stack.clear()
        self.done_until = end


def wikilinks(text: str, body_line: int) -> Iterator[Link]:
    """`[[target]]`, `[[target|label]]`, `[[target#heading]]`, `[[kb:target]]` and `![[embed]]`
    in TEXT, a body with its code removed."""
    positions = _Positions(text, body_line)
    for m in _WIKILINK_RE.finditer(text):
        inner = m.group(1)
        if "\n" in inner:
            continue
        embed = m.start() > 0 and text[m.start() - 1] == "!"
        kb, target = split_kb_prefix(inner.strip())
        target = _wikilink_target(target)
        if not target:
            continue
        line, column = positions.at(m.start() - 1 if embed else m.start())
        path = _path_link(target)
        if path is not None and target.endswith(".md"):
            target = target[:-3]
        yield Link(target, "transclusion" if embed else "wikilink", kb, line, column, path)


def markdown_links(text: str, body_line: int, entry_dir: str) -> Iterator[Link]:
    """Local markdown links `[text](path.md)` in TEXT (a body with its code removed); ENTRY_DIR is
    the KB-relative directory of the entry, against which relative paths resolve."""
    positions = _Positions(text, body_line)
    brackets = _OpeningBrackets(text)
    for m in _MDLINK_RE.finditer(text):
        href = m.group(1)
        if _SCHEME_RE.match(href) or href.startswith("#"):
            continue
        opening = brackets.of(m.start())
        if opening is None or (opening > 0 and text[opening - 1] == "!"):
            continue  # no link text, or an image
        # escaped bytes that are no UTF-8 are kept as a file name that is no UTF-8 holds them
        href = unquote(href.split("#", 1)[0], errors="surrogateescape")
        if not href.endswith(".md"):
            continue
        path = link_relpath(posixpath.join(entry_dir, href))  # a path from `/` is from the KB's root
        line, column = positions.at(opening)
        yield Link(path[:-3], "mdlink", None, line, column, path)


def _wikilink_target(raw: str) -> str:
    target, bar, _ = raw.partition("|")
    if bar and target.endswith("\\"):  # `[[target\|label]]`: the bar escaped, as in a table's cell
        target = target[:-1]
    for sep in ("#", "^"):
        idx = target.find(sep)
        if idx >= 0:
            target = target[:idx]
    return target.strip()


def _path_link(target: str) -> str | None:
    """A wikilink target naming a path (`dir/note`, `note.md`): its KB-relative .md path."""
    if target.endswith(".md"):
        return link_relpath(target)
    if "/" in target:
        return link_relpath(target) + ".md"
    return None
