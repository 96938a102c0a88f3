"""A file's bytes as the fixes edit them: by line, as the parser numbers lines, and by the exact
bytes of one value, so that everything else in the file stays as it was, byte for byte."""

from __future__ import annotations

import re
from dataclasses import dataclass

_BOM = "\ufeff"
LONE_CR = "its lines end with a lone carriage return (CR), which kblint does not edit"


_LONE_CR_RE = re.compile(rb"\r(?!\n)")


def lone_cr(data: bytes) -> bool:
    """Whether a line of DATA ends with a carriage return alone (the parser takes it for a line
    end, which Source does not: it would number the lines otherwise)."""
    return _LONE_CR_RE.search(data) is not None


def lone_cr_as_lf(data: bytes) -> bytes:
    """DATA with each lone carriage return made a line feed: lines the parser numbers alike, at the
    same offsets."""
    return _LONE_CR_RE.sub(b"\n", data)


@dataclass(frozen=True, slots=True)
class Edit:
    """Replace the bytes [start, end) of a file with REPLACEMENT (an insertion when start == end)."""

    start: int
    end: int
    replacement: bytes


def apply_edits(data: bytes, edits: list[Edit]) -> bytes | None:
    """DATA with EDITS made, or None when two of them overlap."""
    ordered = sorted(edits, key=lambda e: (e.start, e.end))
    for before, after in zip(ordered, ordered[1:], strict=False):
        if after.start < before.end or after.start == before.start:
            return None
    for edit in reversed(ordered):
        data = data[: edit.start] + edit.replacement + data[edit.end :]
    return data


class Source:
    """The lines of a file's bytes. Lines end with `\\n` or `\\r\\n`, as the parser counts them: a
    file with a lone `\\r` (which the parser takes for a line end too) is not edited at all."""

    def __init__(self, data: bytes):
        self.data = data
        self.starts = [0]
        at = data.find(b"\n")
        while at >= 0:
            self.starts.append(at + 1)
            at = data.find(b"\n", at + 1)

    @classmethod
    def of(cls, data: bytes) -> Source | None:
        if lone_cr(data):
            return None
        return cls(data)

    def _bounds(self, line: int) -> tuple[int, int]:
        """Byte offsets of the text of LINE (1-based), its line end left out."""
        start = self.starts[line - 1]
        end = self.starts[line] - 1 if line < len(self.starts) else len(self.data)
        if end > start and self.data[end - 1 : end] == b"\r" and line < len(self.starts):
            end -= 1
        return start, end

    def text(self, line: int) -> str:
        """The text of LINE without its line end (nor the byte order mark of the first line)."""
        start, end = self._bounds(line)
        text = self.data[start:end].decode("utf-8")
        return text[1:] if line == 1 and text.startswith(_BOM) else text

    def offset(self, line: int, column: int) -> int:
        """The byte offset of character COLUMN (0-based) of LINE's text."""
        start, _ = self._bounds(line)
        prefix = self.text(line)[:column]
        bom = len(_BOM.encode()) if line == 1 and self.data.startswith(_BOM.encode()) else 0
        return start + bom + len(prefix.encode("utf-8"))

    def replace(self, line: int, start: int, end: int, text: str) -> Edit:
        """Replace characters [START, END) of LINE's text with TEXT."""
        return Edit(self.offset(line, start), self.offset(line, end), text.encode("utf-8"))

    def insert_line(self, before: int, text: str) -> Edit:
        """Insert a line of TEXT before line BEFORE (not the first), ended as the line above it is."""
        at = self.starts[before - 1]
        newline = b"\r\n" if self.data[at - 2 : at] == b"\r\n" else b"\n"
        return Edit(at, at, text.encode("utf-8") + newline)
