"""Pass-1 issues kept on disk until the report needs them.

During the graph pass the main process holds every entry's facts and links; on a 100,000-entry KB
the pass-1 issues would take more memory than all of those. They wait in an anonymous temporary file
(private to this process, gone when it ends) and are read back once the graph is no longer needed.
Each entry gets a slot number. Issues arrive either as one entry's JSON (from the result cache) or
as a chunk of entries pickled together (fresh results: pickle shares the strings repeated across
a chunk, and reads back several times faster than JSON).
"""

from __future__ import annotations

import json
import pickle
import tempfile
from typing import Iterator

_JSON, _CHUNK = b"j", b"c"


class IssueSpill:
    def __init__(self):
        self._file = None
        self._slots = 0

    def _write(self, kind: bytes, data: bytes, slots: int) -> int:
        if self._file is None:
            self._file = tempfile.TemporaryFile()
        self._file.write(kind + len(data).to_bytes(4, "little") + slots.to_bytes(4, "little") + data)
        first = self._slots
        self._slots += slots
        return first

    def put_json(self, issues_json: str) -> int:
        """One entry's issues (a JSON list of issue records); returns its slot, or -1 for none."""
        if issues_json == "[]":
            return -1
        return self._write(_JSON, issues_json.encode("utf-8"), 1)

    def put_chunk(self, pickled: bytes, entries: int) -> int:
        """The issues of ENTRIES entries, pickled together as a list of their record lists (see
        pack_chunk); returns the slot of the first, the others following in order."""
        return self._write(_CHUNK, pickled, entries)

    def take(self, wanted: list[int]) -> Iterator:
        """The issues of the entries in the WANTED slots, in the order they were put; then closes."""
        from .resultcache import issues_from_record

        if self._file is None:
            return
        try:
            wanted_set = set(wanted)
            shared: dict = {}
            handle = self._file
            handle.seek(0)
            slot = 0
            while True:
                head = handle.read(9)
                if len(head) < 9:
                    break
                size = int.from_bytes(head[1:5], "little")
                slots = int.from_bytes(head[5:9], "little")
                if not any(s in wanted_set for s in range(slot, slot + slots)):
                    handle.seek(size, 1)
                    slot += slots
                    continue
                data = handle.read(size)
                if head[:1] == _JSON:
                    yield from issues_from_record(json.loads(data), shared)
                else:
                    for offset, rows in enumerate(pickle.loads(data)):
                        if slot + offset in wanted_set and rows:
                            yield from issues_from_rows(rows)
                slot += slots
        finally:
            self.close()

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


def pack_chunk(rows_per_entry: list) -> bytes:
    return pickle.dumps(rows_per_entry, protocol=pickle.HIGHEST_PROTOCOL)


def issues_from_rows(rows) -> list:
    from .issue import Issue

    return [Issue(*row) for row in rows]
