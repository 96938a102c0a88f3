"""What the engine keeps between runs (kblint.infra.resultcache): which inputs the caches are keyed
on, a whole run's outcome when nothing changed, and pass-1 results of unchanged files.

A cache directory that cannot be used is never a failure: the run goes on without it and says so once.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from ..checkers.registry import registry
from ..config import Settings, llm_spec
from ..infra import resultcache
from ..infra.files import is_regular_file_within
from ..model.issue import (
    Coverage,
    DuplicateSummary,
    EntryGrades,
    JudgmentSummary,
    KBReport,
    LevelCounts,
    fingerprint_of,
)
from ..paths import display_path
from ..workspace import Workspace
from .outcome import Outcome


@dataclass(slots=True)
class Caches:
    """The caches of one run: where they are, each file's stamp and each KB's key."""

    cache_dir: str
    stamps: dict[str, resultcache.Stamp | None]
    kb_keys: dict[str, str]  # KB root → resultcache.kb_key
    warnings: list[str] = field(default_factory=list)
    usable: bool = True
    damage_said: bool = False

    def unusable(self, exc: resultcache.CacheUnusable) -> None:
        """Say once that the cache could not be used."""
        if self.usable:
            self.usable = False
            self.warnings.append(f"the cache cannot be used ({exc}); running without it")

    def damaged(self, path: str) -> None:
        """Say once that a cache file was damaged (it is ignored, and written again)."""
        if not self.damage_said:
            self.damage_said = True
            self.warnings.append(f"the cache file {display_path(path)} was damaged: ignored, and written again")


def caches_for(ws: Workspace, settings: Settings) -> Caches | None:
    """None when results are not cached: --no-cache, or --base (results then depend on git history)."""
    if settings.no_cache or not settings.cache_dir or settings.base is not None:
        return None
    plugins = registry().plugins
    loaded = [f"{p.package}={p.version}" for p in plugins.loaded] if plugins is not None else []
    return Caches(
        cache_dir=settings.cache_dir,
        stamps={path: resultcache.stamp(path) for kb in ws.kbs for path in kb.files},
        kb_keys={
            kb.root: resultcache.kb_key(kb.root, (kb.schema.kb_yaml, kb.cross_links_path), loaded, settings.config_file)
            for kb in ws.kbs
        },
    )


def run_key(ws: Workspace, settings: Settings, kb_name: str | None, caches: Caches) -> str | None:
    """The key of this run's outcome in the run cache, or None when its outcome depends on more
    than its files and settings (git history, standard input, an LLM)."""
    if (
        settings.changed_since
        or settings.llm_required
        or settings.dry_run
        or ws.unreadable
        or any(kb.candidates for kb in ws.kbs)
        or (llm_spec(settings) is not None and not settings.no_judgment)
    ):
        return None
    shape = {
        # messages name other files as the current directory shows them (`duplicate_id`, kb.yaml errors)
        "cwd": os.getcwd(),
        "kb": kb_name,
        "strict_links": settings.strict_links,
        "shard": settings.shard,
        "no_judgment": settings.no_judgment,
        "reported": [sorted(kb.reported) if kb.reported is not None else None for kb in ws.kbs],
    }
    return resultcache.run_key([caches.kb_keys[kb.root] for kb in ws.kbs], caches.stamps, shape)


def load_outcome(caches: Caches, key: str) -> Outcome | None:
    """The outcome of an earlier run with the same key, unless a file its links named changed."""
    try:
        stored = resultcache.load_run(caches.cache_dir, key)
    except resultcache.CacheDamaged as exc:
        caches.damaged(exc.path)
        return None
    if stored is None:
        return None
    data = stored.header
    try:
        probes = {(str(root), str(rel)): bool(exists) for (root, rel), exists in data["probes"]}
        real = {root: os.path.realpath(root) for root, _ in probes}
        if any(is_regular_file_within(real[root], rel) != exists for (root, rel), exists in probes.items()):
            return None  # a file a link names appeared or went away
        kbs = [_kb_report(k) for k in data["kbs"]]
        return Outcome(
            kbs=kbs,
            issues=stored.issues,
            hidden=dict(data["hidden"]),
            judgment=JudgmentSummary(**data["judgment"]),
            judgment_items=int(data["judgment_items"]),
            probes=probes,
            duplicates=DuplicateSummary(**data["duplicates"]),
        )
    except (KeyError, TypeError, ValueError):
        caches.damaged(resultcache.run_file(caches.cache_dir, key))
        return None


def _kb_report(data: dict[str, Any]) -> KBReport:
    return KBReport(
        name=data["name"],
        root=data["root"],
        files=data["files"],
        entries=data["entries"],
        paths=data["paths"],
        ids=data["ids"],
        score=data["score"],
        coverage=Coverage(**data["coverage"]),
        incomplete=data.get("incomplete"),
        grades=[EntryGrades.of(g) for g in data.get("grades", [])],
        levels={k: LevelCounts(**v) for k, v in data.get("levels", {}).items()},
    )


def save_outcome(caches: Caches, key: str, outcome: Outcome) -> None:
    roots = {kb.name: kb.root for kb in reversed(outcome.kbs)}
    for issue in outcome.issues:
        if issue.fingerprint is None:
            issue.fingerprint = fingerprint_of(issue, roots.get(issue.kb_name or ""))
    header = {
        "kbs": [
            {
                "name": k.name,
                "root": k.root,
                "files": k.files,
                "entries": k.entries,
                "paths": k.paths,
                "ids": k.ids,
                "score": k.score,
                "coverage": k.coverage.as_dict(),
                "incomplete": k.incomplete,
                "grades": [g.as_dict() for g in k.grades],
                "levels": {item: counts.as_dict() for item, counts in k.levels.items()},
            }
            for k in outcome.kbs
        ],
        "hidden": outcome.hidden,
        "judgment": outcome.judgment.as_dict(),
        "judgment_items": outcome.judgment_items,
        "probes": sorted(outcome.probes.items()),
        "duplicates": outcome.duplicates.as_dict(),
    }
    try:
        resultcache.save_run(caches.cache_dir, key, resultcache.StoredRun(header, outcome.issues))
    except resultcache.CacheUnusable as exc:
        caches.unusable(exc)
