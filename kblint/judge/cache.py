"""The on-disk verdict cache (SPEC §7): one small JSON file per (entry content, item) verdict.

Layout: CACHE_DIR/judgment/ab/abcdef....json, where the name is the sha256 of (provider, model, base URL,
PROMPT_VERSION, the entry as canonical JSON, the guidelines as canonical JSON, the item's text). A file
holds the verdict, confidence, reason and evaluator; never an API key, never the entry's content.
Only verdicts are stored: errors are never cached. Writes are atomic (temp file + rename), so
concurrent runs may share a cache directory.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from pathlib import Path

from ..infra.files import FileProblem, read_regular_file, remove_tree
from ..infra.resultcache import CacheUnusable, ensure_dir
from .model import GRADED, PROMPT_VERSION, VERDICTS, JudgeConfig, Verdict

SUBDIR = "judgment"


def item_key(config: JudgeConfig, entry_canon: str, guidelines_canon: str, item_text: str) -> str:
    material = json.dumps(
        [
            "kblint-judgment",
            config.provider,
            config.model,
            config.base_url,
            PROMPT_VERSION,
            entry_canon,
            guidelines_canon,
            item_text,
        ],
        ensure_ascii=True,
        separators=(",", ":"),
    )
    return hashlib.sha256(material.encode("utf-8")).hexdigest()


_MAX_VERDICT_BYTES = 1 << 20  # a verdict is a few hundred bytes; a larger file is no verdict of ours


class VerdictCache:
    def __init__(self, cache_dir: str | os.PathLike):
        self.cache_dir = os.fspath(cache_dir)
        self.root = Path(cache_dir) / SUBDIR
        self.write_errors = 0
        self.made = False  # the cache directory is there, marked as kblint's (ensure_dir)

    def _path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str, item_id: str) -> Verdict | None:
        try:
            data = json.loads(read_regular_file(str(self._path(key)), _MAX_VERDICT_BYTES))
            verdict, conf, level = data["verdict"], data["confidence"], data.get("level")
            if verdict not in (*VERDICTS, GRADED) or isinstance(conf, bool) or not isinstance(conf, (int, float)):
                return None
            if (verdict == GRADED) != isinstance(level, str):
                return None
            return Verdict(
                item_id=item_id,
                verdict=verdict,
                confidence=float(conf),
                reason=str(data.get("reason", "")),
                cached=True,
                level=level,
                evidence=str(data.get("evidence") or ""),
            )
        except (FileProblem, ValueError, KeyError, TypeError):
            return None  # missing or unreadable: a miss (a new verdict overwrites it)

    def put(self, key: str, verdict: Verdict, evaluator: str) -> None:
        path = self._path(key)
        data = {
            "prompt_version": PROMPT_VERSION,
            "evaluator": evaluator,
            "verdict": verdict.verdict,
            "confidence": verdict.confidence,
            "reason": verdict.reason,
            **({"level": verdict.level} if verdict.level is not None else {}),
            **({"evidence": verdict.evidence} if verdict.evidence else {}),
        }
        try:
            if not self.made:
                ensure_dir(self.cache_dir, SUBDIR)
                self.made = True
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".json", dir=path.parent)
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as fh:
                    json.dump(data, fh, ensure_ascii=False, sort_keys=True)
                os.replace(tmp, path)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
                raise
        except (OSError, CacheUnusable):
            self.write_errors += 1  # the cache is best effort: a read-only disk does not fail the run


def cache_info(cache_dir: str | os.PathLike) -> dict:
    """{"path": CACHE_DIR/judgment, "entries": number of cached verdicts, "bytes": their size}."""
    root = Path(cache_dir) / SUBDIR
    entries = size = 0
    if root.is_dir():
        for p in root.glob("*/*.json"):
            try:
                size += p.stat().st_size
            except OSError:
                continue
            entries += 1
    return {"path": str(root), "entries": entries, "bytes": size}


def cache_clear(cache_dir: str | os.PathLike) -> int:
    """Delete every cached verdict (CACHE_DIR/judgment only; the rest of CACHE_DIR is left alone).
    Returns the number of verdicts removed."""
    root = Path(cache_dir) / SUBDIR
    if root.is_symlink() or not root.is_dir():  # a symlink is removed, what it leads to not counted
        remove_tree(str(root))
        return 0
    removed = cache_info(cache_dir)["entries"]
    remove_tree(str(root))
    return removed
