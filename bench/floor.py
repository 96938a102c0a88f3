"""The performance floor of SPEC §13, run on its own: `python bench/floor.py CORPUS`.

Reads every `.md` file under CORPUS (hidden directories skipped), splits the YAML frontmatter
(a first line `---` up to the next `---` line) and parses it with PyYAML's CSafeLoader, in one
process. It is the baseline kblint is compared with, so it stays plain: no caching, no threads,
no shortcuts a linter could not also take. Prints one JSON line: files read, frontmatters
parsed, failures.
"""

from __future__ import annotations

import json
import os
import sys

import yaml


def split_frontmatter(text: str):
    """Return (frontmatter, body), or None when there is no opening or closing `---` line."""
    if text.startswith("\ufeff"):
        text = text[1:]
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].rstrip() != "---":
        return None
    for i in range(1, len(lines)):
        if lines[i].rstrip() == "---":
            return "".join(lines[1:i]), "".join(lines[i + 1 :])
    return None


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: floor.py CORPUS", file=sys.stderr)
        return 2
    files = parsed = failed = 0
    for root, dirs, names in os.walk(argv[0]):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        for name in names:
            if not name.endswith(".md"):
                continue
            files += 1
            with open(os.path.join(root, name), "rb") as f:
                data = f.read()
            try:
                split = split_frontmatter(data.decode("utf-8"))
                if split is None:
                    failed += 1
                    continue
                yaml.load(split[0], Loader=yaml.CSafeLoader)
                parsed += 1
            except Exception:  # noqa: BLE001 - bad UTF-8, bad YAML, an impossible date such as 2025-13-45
                failed += 1
    print(json.dumps({"files": files, "parsed": parsed, "failed": failed}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
