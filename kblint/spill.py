"""Pass-1 issues kept on disk until the report needs them.

During the graph pass the main process holds every entry's facts and links; on a 100,000-entry KB
the pass-1 issues would take more memory than all of those. A run keeps up to engine._HELD_ISSUES
of them (50,000) in their results, a chunk of entries at a time while they fit; the others wait in
an anonymous temporary file (private to this process, gone when it ends) and are read back once the
graph is no longer needed.
Each entry gets a slot number. Issues arrive a chunk of entries at a time, pickled together: pickle
stores a string repeated across the chunk once, and reads back several times faster than JSON.
"""

from __future__ import annotations

import pickle
import tempfile
from itertools import starmap

from .issue import Issue


class IssueSpill:
    def __init__(self):
        self._file = None
        self._slots = 0

    def put_chunk(self, pickled: bytes, entries: int) -> int:
        """The issues of ENTRIES entries, pickled together as a list of their record lists (see
        pack_chunk); returns the slot of the first, the others following in order."""
        if self._file is None:
            self._file = tempfile.TemporaryFile()
        self._file.write(len(pickled).to_bytes(4, "little") + entries.to_bytes(4, "little") + pickled)
        first = self._slots
        self._slots += entries
        return first

    def take(self, wanted: list[int]) -> list[Issue]:
        """The issues of the entries in the WANTED slots, in the order they were put; then closes."""
        issues: list[Issue] = []
        if self._file is None:
            return issues
        extend = issues.extend
        try:
            wanted_set = set(wanted)
            handle = self._file
            handle.seek(0)
            slot = 0
            while True:
                head = handle.read(8)
                if len(head) < 8:
                    break
                size = int.from_bytes(head[:4], "little")
                slots = int.from_bytes(head[4:], "little")
                if not any(s in wanted_set for s in range(slot, slot + slots)):
                    handle.seek(size, 1)
                    slot += slots
                    continue
                for offset, rows in enumerate(unpack_chunk(handle.read(size))):
                    if rows and slot + offset in wanted_set:
                        extend(issues_from_rows(rows))
                slot += slots
        finally:
            self.close()
        return issues

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


def pack_chunk(rows_per_entry: list) -> bytes:
    return pickle.dumps(rows_per_entry, protocol=pickle.HIGHEST_PROTOCOL)


def unpack_chunk(pickled: bytes) -> list:
    return pickle.loads(pickled)


def issues_from_rows(rows) -> list[Issue]:
    return list(starmap(Issue, rows))
