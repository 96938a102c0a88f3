"""How alike two entries are: their names normalised, and a sketch of a body's word shingles
that finds near-identical bodies among many entries without comparing every pair.

The sketch is one-permutation MinHash: each 3-word shingle is hashed once (CRC-32), the hashes
fall into 64 bins by their low bits, and each bin keeps its smallest hash. Two bodies agree on a
bin with a probability close to the Jaccard similarity of their shingle sets. The 64 bins make 16
bands of 4; bodies that agree on a whole band become a candidate pair (a Jaccard of 0.8 makes a
pair with a probability above 0.999, one of 0.3 with one of about 0.12), and a candidate is then
measured exactly. A sketch is 4 bytes of the title's hash and 4 bytes per band: 68 bytes an entry.
"""

from __future__ import annotations

import re
import struct
from zlib import crc32

SHINGLE_WORDS = 3
BINS = 64
ROWS = 4  # bins per band
BANDS = BINS // ROWS
_BIN_MASK = BINS - 1
_NAME_BYTES = 4
_WORD = re.compile(r"\w+")
_SPREAD = 0x9E3779B1  # an empty bin borrows the next filled bin's value, moved by this per step


def words(text: str) -> list[str]:
    """The words of TEXT, case folded."""
    return _WORD.findall(text.casefold())


def name_key(name: str) -> str:
    """A title or alias as compared: case folded, its words joined by one space ("Service
    Objects!" and "service  objects" are one name)."""
    return " ".join(words(name))


def name_hash(name: str) -> int:
    key = name_key(name)
    return crc32(key.encode("utf-8", "surrogatepass")) if key else 0


def shingles(body_words: list[str]) -> set[int]:
    """The hashes of the body's 3-word shingles (of its words, when fewer than three)."""
    if len(body_words) < SHINGLE_WORDS:
        grams = [" ".join(body_words)] if body_words else []
    else:
        grams = list(map(" ".join, zip(*(body_words[i:] for i in range(SHINGLE_WORDS)), strict=False)))
    return set(map(crc32, (g.encode("utf-8", "surrogatepass") for g in grams)))


def similarity(a: set[int], b: set[int]) -> float:
    """The Jaccard similarity of two shingle sets."""
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


def _bins(hashes: set[int]) -> list[int]:
    ordered = sorted(hashes, reverse=True)
    smallest = dict(zip([h & _BIN_MASK for h in ordered], ordered, strict=True))  # the last one in a bin wins
    values = [0] * BINS
    for b in range(BINS):
        found = smallest.get(b)
        step = 0
        while found is None:  # densified: no two bodies agree on a bin only because both left it empty
            step += 1
            found = smallest.get((b + step) & _BIN_MASK)
            if found is not None:
                found = (found + step * _SPREAD) & 0xFFFFFFFF
        values[b] = found
    return values


def sketch(title: str, body_words: list[str] | None) -> bytes:
    """The sketch of an entry: its title's hash, then its bands (none for BODY_WORDS None, a body
    compared by its title only)."""
    head = struct.pack("<I", name_hash(title))
    if body_words is None:
        return head
    hashes = shingles(body_words)
    if not hashes:
        return head
    packed = struct.pack(f"<{BINS}I", *_bins(hashes))
    step = 4 * ROWS
    return head + struct.pack(f"<{BANDS}I", *(crc32(packed[i : i + step]) for i in range(0, len(packed), step)))


def title_hash_of(data: bytes) -> int:
    return struct.unpack_from("<I", data)[0] if len(data) >= _NAME_BYTES else 0


def bands_of(data: bytes) -> tuple[int, ...]:
    """The band hashes of a sketch (none when its body is compared by title only)."""
    if len(data) <= _NAME_BYTES:
        return ()
    return struct.unpack_from(f"<{BANDS}I", data, _NAME_BYTES)
