"""Pass-1 issues kept on disk until the report needs them.

During the graph pass the main process holds every entry's facts and links; on a 100,000-entry KB
the pass-1 issues would take more memory than all of those. They arrive as JSON text (from the
workers or the result cache), wait in an anonymous temporary file, and are read back once the graph
is no longer needed.
"""

from __future__ import annotations

import json
import tempfile
from typing import Iterator


class IssueSpill:
    def __init__(self):
        self._file = None
        self._lines = 0

    def put(self, issues_json: str) -> int:
        """Keep one file's issues (a JSON list of issue records); returns their number, or -1 for none."""
        if issues_json == "[]":
            return -1
        if self._file is None:
            self._file = tempfile.TemporaryFile("w+", encoding="utf-8")
        self._file.write(issues_json)
        self._file.write("\n")
        self._lines += 1
        return self._lines - 1

    def take(self, wanted: list[int]) -> Iterator:
        """The issues of the files numbered WANTED, in the order they were put; then closes."""
        from .resultcache import issues_from_record

        if self._file is None:
            return
        try:
            wanted_set = set(wanted)
            shared: dict = {}
            self._file.seek(0)
            for number, line in enumerate(self._file):
                if number in wanted_set:
                    yield from issues_from_record(json.loads(line), shared)
        finally:
            self.close()

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
