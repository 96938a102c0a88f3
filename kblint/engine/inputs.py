"""What a run lints: the workspace its settings name, the files an edit in progress replaces,
and its `--kb` and `--type`, checked."""

from __future__ import annotations

import difflib
import os
from collections.abc import Mapping

from ..config import Settings
from ..paths import display_path
from ..workspace import KB, Candidate, UsageError, WalkOptions, Workspace, build_workspace


def walk_options(settings: Settings) -> WalkOptions:
    """How a run finds its KBs and their files."""
    from ..checkers.registry import registry

    plugins = registry().plugins
    return WalkOptions(
        exclude=tuple(settings.exclude),
        respect_gitignore=settings.respect_gitignore,
        limits=settings.limits,
        plugin_types=tuple(plugins.types) if plugins else (),
    )


def workspace(settings: Settings, kb_dir: str | None, stdin_data: bytes | None) -> Workspace:
    """The KBs and files SETTINGS name (the KB --kb DIR names, with --stdin), no two KBs of one name."""
    options = walk_options(settings)
    paths = settings.paths
    if kb_dir is not None and not paths and stdin_data is None:
        paths = [kb_dir]  # `--kb DIR` alone lints that KB
    ws = build_workspace(paths, kb_dir=kb_dir, stdin_data=stdin_data, stdin_path=settings.stdin_path, options=options)
    seen: dict[str, KB] = {}
    for kb in ws.kbs:  # cross-KB links name KBs: two KBs of one name would make them ambiguous
        other = seen.setdefault(kb.name, kb)
        if other is not kb:
            raise UsageError(
                f"two KBs are named '{kb.name}': {display_path(other.root)} and "
                f"{display_path(kb.root)}; give one of them another `name:` in its kb.yaml"
            )
    return ws


def apply_overlay(ws: Workspace, overlay: Mapping[str, bytes]) -> None:
    """Each file of OVERLAY is linted from its bytes there, as a candidate where the file lives."""
    for kb in ws.kbs:
        for cand in kb.candidates:
            if cand.path in overlay:
                cand.data, cand.problem = overlay[cand.path], None
        replaced = [path for path in kb.files if path in overlay]
        if replaced:
            gone = set(replaced)
            kb.files = [path for path in kb.files if path not in gone]
            kb.candidates.extend(
                Candidate(path, kb.relpath(path), overlay[path], inside=True, gated=False) for path in replaced
            )


def kb_name(settings: Settings, kb_dir: str | None, ws: Workspace) -> str | None:
    """The KB a `--kb NAME` (or DIR) restricts the run to, checked."""
    if kb_dir is not None:
        return next((kb.name for kb in ws.kbs if kb.root == os.path.abspath(kb_dir)), None)
    if not settings.kb:
        return None
    names = sorted(kb.name for kb in ws.kbs)
    if settings.kb not in names:
        near = difflib.get_close_matches(settings.kb, names, n=1)
        hint = f"; did you mean '{near[0]}'?" if near else f" (KBs found: {', '.join(names) or 'none'})"
        raise UsageError(f"--kb {settings.kb}: no such KB in this run{hint}")
    return settings.kb


def check_type(settings: Settings, ws: Workspace) -> None:
    if settings.type is None:
        return
    known = {t for kb in ws.kbs for t in kb.schema.types}
    if settings.type not in known:
        near = difflib.get_close_matches(settings.type, sorted(known), n=1)
        hint = f"; did you mean '{near[0]}'?" if near else ""
        raise UsageError(f"--type {settings.type}: no KB in this run has that type{hint}")
