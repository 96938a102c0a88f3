"""Pass-1 issues kept on disk until the report needs them.

During the graph pass the main process holds every entry's facts and links; on a 100,000-entry
workspace the pass-1 issues would take more memory than all of those. The engine keeps the first
of them in memory and puts the rest here: an anonymous temporary file (private to this process,
gone when it ends), read back once the graph is no longer needed. Issues arrive a group of files
at a time, pickled together. Read back, each file's issues take the path string the run holds for
the file rather than a copy of it.
"""

from __future__ import annotations

import pickle
import tempfile
from collections.abc import Sequence
from typing import IO

from ..model.issue import Issue


class IssueSpill:
    """Groups of per-file issue lists, each file numbered by a slot."""

    def __init__(self) -> None:
        self._file: IO[bytes] | None = None
        self._paths: list[str] = []  # each slot's file

    def put(self, per_file: list[Sequence[Issue]], paths: list[str]) -> int:
        """Store the issues of len(PER_FILE) files, whose paths are PATHS; the slot of the first,
        the others following."""
        if self._file is None:
            self._file = tempfile.TemporaryFile()  # noqa: SIM115 - open from the first put() to take()
        data = pickle.dumps(per_file, protocol=pickle.HIGHEST_PROTOCOL)
        self._file.write(len(data).to_bytes(8, "little") + data)
        first = len(self._paths)
        self._paths.extend(paths)
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
                per_file: list[Sequence[Issue]] = pickle.loads(self._file.read(int.from_bytes(head, "little")))
                for offset, file_issues in enumerate(per_file):
                    if slot + offset in wanted:
                        path = self._paths[slot + offset]
                        for issue in file_issues:
                            if issue.path == path:
                                issue.path = path
                        issues.extend(file_issues)
                slot += len(per_file)
        finally:
            self.close()
        return issues

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
