"""Pass-1 issues kept on disk until the report needs them.

During the graph pass the main process holds every entry's facts and links; on a 100,000-entry
workspace the pass-1 issues would take more memory than all of those. The engine keeps the first
of them in memory and puts the rest here: an anonymous temporary file (private to this process,
gone when it ends), read back once the graph is no longer needed. Issues arrive a group of files
at a time, pickled together.
"""

from __future__ import annotations

import pickle
import tempfile
from typing import IO

from ..model.issue import Issue


class IssueSpill:
    """Groups of per-file issue lists, each file numbered by a slot."""

    def __init__(self) -> None:
        self._file: IO[bytes] | None = None
        self._slots = 0

    def put(self, per_file: list[list[Issue]]) -> int:
        """Store the issues of len(PER_FILE) files; the slot of the first, the others following."""
        if self._file is None:
            self._file = tempfile.TemporaryFile()  # noqa: SIM115 - open from the first put() to take()
        data = pickle.dumps(per_file, protocol=pickle.HIGHEST_PROTOCOL)
        self._file.write(len(data).to_bytes(8, "little") + data)
        first = self._slots
        self._slots += len(per_file)
        return first

    def take(self, wanted: set[int]) -> list[Issue]:
        """The issues of the files in the WANTED slots, in the order they were put; then closes."""
        issues: list[Issue] = []
        if self._file is None:
            return issues
        try:
            self._file.seek(0)
            slot = 0
            while head := self._file.read(8):
                per_file: list[list[Issue]] = pickle.loads(self._file.read(int.from_bytes(head, "little")))
                for offset, file_issues in enumerate(per_file):
                    if slot + offset in wanted:
                        issues.extend(file_issues)
                slot += len(per_file)
        finally:
            self.close()
        return issues

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
