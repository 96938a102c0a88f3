"""How alike two entries are: their names, and a sketch of their bodies that finds near-identical
bodies among many entries without comparing every pair; and the exact measure of a pair.

The sketch is made in pass 1, from the body's fragments (the text between full stops, commas and
blank lines, ASCII letters in lower case; fragments shorter than a few words, such as headings, are left out): each
fragment is hashed once (CRC-32), the hashes fall into 16 bins by their low bits, and each bin
keeps its smallest hash (one-permutation MinHash). Two bodies agree on a bin with a probability
close to the Jaccard similarity of their fragment sets. The bins make 8 bands of 2: bodies that
agree on a band, and on enough bins, are a candidate pair, measured exactly (`similarity` of
their 3-word shingles) from the files. A copy with a few words changed keeps most of its
fragments: its fragment similarity stays near 0.8, which makes it a candidate with a probability
above 0.999. Hashing fragments rather than every word keeps the sketch a small part of pass 1.

A sketch is 84 bytes: the title's key, the body's hash, the entry's date, the 16 bins.
"""

from __future__ import annotations

import re
import struct
from array import array
from collections.abc import Mapping
from typing import Any
from zlib import crc32

SHINGLE_WORDS = 3
BINS = 16
ROWS = 2  # bins per band
BANDS = BINS // ROWS
SKETCH_BYTES = 2000  # of a body, the sketch reads the first; a candidate pair is measured on the whole bodies
MIN_FRAGMENT = 24  # characters: shorter fragments (headings, list markers, "see also") are left out
_BIN_MASK = BINS - 1
_SPREAD = 0x9E3779B1  # an empty bin borrows the next filled bin's value, moved by this per step
_HEAD = struct.Struct("<QQI")  # title key, body hash, newest date (YYYYMMDD)
_BINS = struct.Struct(f"<{BINS}I")
_WORD = re.compile(r"\w+")
_DATE = re.compile(r"(\d{4})-(\d{2})-(\d{2})")
DATE_KEYS = ("created", "date", "updated")  # in the order entry_date reads them


def words(text: str) -> list[str]:
    """The words of TEXT, case folded."""
    return _WORD.findall(text.casefold())


def name_key(name: str) -> str:
    """A title or alias as compared: case folded, its words joined by one space ("Service
    Objects!" and "service  objects" are one name)."""
    return " ".join(words(name))


def name_hash(name: str) -> int:
    """A 64-bit hash of the name's key (0 for a name without words)."""
    key = name_key(name)
    if not key:
        return 0
    data = key.encode("utf-8", "surrogatepass")
    return crc32(data) << 32 | crc32(data[::-1])  # 64 bits: two titles of a KB share it only if equal


def shingles(body_words: list[str]) -> set[str]:
    """The body's 3-word shingles (its words, when fewer than three)."""
    if len(body_words) < SHINGLE_WORDS:
        return {" ".join(body_words)} if body_words else set()
    return set(map(" ".join, zip(body_words, body_words[1:], body_words[2:], strict=False)))


def similarity(a: set[str], b: set[str]) -> float:
    """The Jaccard similarity of two shingle sets."""
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


# ASCII letters in lower case and a line end read as a space, in one pass over the bytes
_FOLD = bytes.maketrans(b"ABCDEFGHIJKLMNOPQRSTUVWXYZ\n", b"abcdefghijklmnopqrstuvwxyz ")
_EMPTY_BIN = 1 << 32  # above every CRC-32


def _fragments(data: bytes) -> set[int]:
    # Bytes, encoded once: the fragments are hashed as they come. A blank line ends a fragment; a
    # single line end is only a wrapped line (an editor may rewrap).
    text = data[:SKETCH_BYTES].replace(b"\n\n", b". ").translate(_FOLD).replace(b", ", b". ")
    return {crc32(part) for part in text.split(b". ") if len(part) >= MIN_FRAGMENT}


def _bins(hashes: set[int]) -> list[int]:
    smallest = [_EMPTY_BIN] * BINS
    for h in hashes:
        smallest[h & _BIN_MASK] = min(smallest[h & _BIN_MASK], h)
    for b in [b for b, v in enumerate(smallest) if v == _EMPTY_BIN]:
        step = 1
        while smallest[(b + step) & _BIN_MASK] == _EMPTY_BIN:  # densified: no two bodies agree on a bin
            step += 1  # only because both left it empty
        smallest[b] = (smallest[(b + step) & _BIN_MASK] + step * _SPREAD) & 0xFFFFFFFF
    return smallest


def _has_words(data: bytes, n: int) -> bool:
    """Whether DATA has N words or more (separated by white space). A prefix has no more words than
    the whole: the first bytes, which nearly always hold them, are split first."""
    head = data[: 16 * n]
    if len(head.split(None, n)) >= n:
        return True
    return len(head) < len(data) and len(data.split(None, n)) >= n


def entry_date(frontmatter: Mapping[Any, Any]) -> int:
    """When the entry looks written, YYYYMMDD: its `created`, else its `date`, else its `updated`
    (0 when none is a date)."""
    for key in DATE_KEYS:
        value = frontmatter.get(key)
        m = _DATE.match(str(value)) if value else None
        if m:
            return int("".join(m.groups()))
    return 0


def sketch(title: str, body: str, dated: int, min_words: int) -> bytes:
    """The sketch of an entry. A body of fewer than MIN_WORDS words (separated by white space) is
    compared by title only: it has no hash and no bins."""
    data = body.encode()  # entries are strict UTF-8: no lone surrogate
    if not _has_words(data, min_words):
        return _HEAD.pack(name_hash(title), 0, dated)
    # CRC-32 and length: two bodies of a candidate pair that have both are the same (else by a
    # chance of one in four billion)
    head = _HEAD.pack(name_hash(title), crc32(data) << 32 | len(data) & 0xFFFFFFFF, dated)
    hashes = _fragments(data)
    return head + _BINS.pack(*_bins(hashes)) if hashes else head


_FULL = _HEAD.size + _BINS.size
_TITLE, _BODY = slice(0, 8), slice(8, 16)  # the title's and the body's hash in _HEAD
_NONE = bytes(8)  # a hash of 0: no title, or a body compared by title only


def body_keys(sketches: list[bytes]) -> list[int]:
    """The body's hash of each sketch, as a key (0 for a body compared by title only)."""
    return [int.from_bytes(data[_BODY], "little") if len(data) >= _HEAD.size else 0 for data in sketches]


def has_body(data: bytes) -> bool:
    """Whether a sketch's body is long enough to compare (else it is compared by title only)."""
    return len(data) >= _HEAD.size and data[_BODY] != _NONE


def same_title(a: bytes, b: bytes) -> bool:
    """Whether two sketches' entries have one title (not none)."""
    return a[_TITLE] == b[_TITLE] and a[_TITLE] != _NONE


def same_body(a: bytes, b: bytes) -> bool:
    """Whether two sketches are of one body (long enough to compare; a body of short lines only,
    a list, has no bins but its hash)."""
    return len(a) >= _HEAD.size <= len(b) and a[_BODY] == b[_BODY] and a[_BODY] != _NONE


def agreement(a: bytes, b: bytes) -> int:
    """How many bins two sketches agree on (an estimate of their likeness, out of BINS; 0 when a
    body is compared by title only)."""
    if len(a) != _FULL or len(b) != _FULL:
        return 0
    return BinTable([a, b]).agreement(0, 1)


def dated(data: bytes) -> int:
    """When a sketch's entry looks written (entry_date), YYYYMMDD (0: none)."""
    return int(_HEAD.unpack_from(data)[2]) if len(data) >= _HEAD.size else 0


def title_keys(sketches: list[bytes]) -> list[int]:
    """The title's hash of each sketch (0: none)."""
    return [int.from_bytes(data[_TITLE], "little") for data in sketches]


class BinTable:
    """The bins of many sketches in two flat arrays (a band of two bins is one 64-bit item): band
    keys and agreements without a call to read each sketch. A body compared by title only has bins
    of 0, so its band keys are 0: none."""

    def __init__(self, sketches: list[bytes]):
        none = bytes(_BINS.size)
        data = b"".join(d[_HEAD.size :] if len(d) == _FULL else none for d in sketches)
        self.bands = array("Q")  # ROWS == 2: a band is 8 bytes
        self.bands.frombytes(data)
        self.bins = array("I")
        self.bins.frombytes(data)

    def band_keys(self, b: int) -> list[int]:
        return self.bands[b::BANDS].tolist()

    def agreement(self, i: int, j: int) -> int:
        """How many bins the sketches I and J agree on."""
        return sum(map(int.__eq__, self.bins[i * BINS : (i + 1) * BINS], self.bins[j * BINS : (j + 1) * BINS]))
