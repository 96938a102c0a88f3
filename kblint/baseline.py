"""Baselines (SPEC §12): record the fingerprints of today's issues, then report only new ones."""

from __future__ import annotations

import json
from typing import Any

from .errors import UsageError
from .infra.files import FileProblem, open_output, read_regular_file


def write(path: str, rows: list[dict[str, Any]]) -> None:
    """A sorted JSON file, one issue per line, stable for version control."""
    rows = sorted(rows, key=lambda r: (r["path"], r["rule"], r["fingerprint"]))
    lines = ["{", '  "kblint_baseline": 1,', '  "issues": [']
    lines.extend(
        "    " + json.dumps(r, ensure_ascii=False, sort_keys=True) + ("," if i < len(rows) - 1 else "")
        for i, r in enumerate(rows)
    )
    lines.extend(["  ]", "}"])
    try:
        with open_output(path) as fh:
            fh.write("\n".join(lines) + "\n")
    except OSError as exc:
        raise UsageError(f"--write-baseline {path}: {exc.strerror}") from None


def load(path: str) -> set[str]:
    try:
        data = json.loads(read_regular_file(path))
    except FileProblem as exc:
        raise UsageError(f"--baseline {path}: {exc.reason}") from None
    except json.JSONDecodeError as exc:
        raise UsageError(f"--baseline {path}:{exc.lineno}: not a kblint baseline (invalid JSON: {exc.msg})") from None
    except ValueError:  # not UTF-8
        raise UsageError(f"--baseline {path}: not a kblint baseline (not UTF-8 JSON)") from None
    except RecursionError:
        raise UsageError(f"--baseline {path}: not a kblint baseline (JSON nested too deep)") from None
    if not isinstance(data, dict) or data.get("kblint_baseline") != 1 or not isinstance(data.get("issues"), list):
        raise UsageError(f"--baseline {path}: not a kblint baseline file (write one with --write-baseline)")
    rows = data["issues"]
    if not all(isinstance(row, dict) and isinstance(row.get("fingerprint"), str) for row in rows):
        raise UsageError(f"--baseline {path}: not a kblint baseline (an issue without a fingerprint text)")
    return {row["fingerprint"] for row in rows}
