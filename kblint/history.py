"""Entry statuses at a git revision, for status gates with `--base REF` (SPEC §6)."""

from __future__ import annotations

import os
import subprocess

from .entry import parse
from .policy import NEW, UNCHANGED
from .workspace import UsageError


def _git(args: list[str], cwd: str) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(["git", *args], cwd=cwd, capture_output=True, timeout=120)
    except (OSError, subprocess.SubprocessError) as exc:
        raise UsageError(f"--base: cannot run git: {exc}") from None


def _work_tree(ref: str, root: str, option: str) -> str:
    """The top of the git work tree holding ROOT, once REF is known to name a commit."""
    top = _git(["rev-parse", "--show-toplevel"], root)
    if top.returncode != 0:
        raise UsageError(f"{option} {ref}: {root} is not inside a git work tree")
    if _git(["rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"], root).returncode != 0:
        raise UsageError(f"{option} {ref}: no such git revision")
    return top.stdout.decode().strip()


def _status_of(data: bytes) -> str | None:
    raw = parse(data)
    if not hasattr(raw, "frontmatter"):
        return None
    value = raw.frontmatter.get("status")
    if value is None or isinstance(value, (list, dict)):
        return None
    return str(value)


def statuses_at(ref: str, kb_root: str, files: list[str]) -> dict[str, str | None]:
    """For each entry file: its status at REF, NEW if it did not exist then, UNCHANGED if the
    file is the same as at REF."""
    toplevel = _work_tree(ref, kb_root, "--base")
    listed = _git(["ls-tree", "-r", "-z", "--name-only", ref, "--", "."], kb_root)
    at_base = {os.path.normpath(os.path.join(kb_root, p)) for p in listed.stdout.decode("utf-8", "surrogateescape").split("\0") if p}
    diff = _git(["diff", "--name-status", "-z", "--find-renames", ref, "--", "."], kb_root)
    fields = diff.stdout.decode("utf-8", "surrogateescape").split("\0")
    changed: dict[str, str] = {}  # new path → path at REF (relative to toplevel)
    i = 0
    while i < len(fields) and fields[i]:
        code = fields[i]
        if code.startswith(("R", "C")):
            changed[os.path.normpath(os.path.join(toplevel, fields[i + 2]))] = fields[i + 1]
            i += 3
        else:
            changed[os.path.normpath(os.path.join(toplevel, fields[i + 1]))] = fields[i + 1]
            i += 2
    result: dict[str, str | None] = {}
    for path in files:
        path = os.path.normpath(path)
        if path in changed:
            old = changed[path]
            shown = _git(["show", f"{ref}:{old}"], toplevel)
            result[path] = _status_of(shown.stdout) if shown.returncode == 0 else NEW
        elif path in at_base:
            result[path] = UNCHANGED
        else:
            result[path] = NEW
    return result


def changed_since(ref: str, root: str) -> tuple[set[str], set[str]]:
    """(absolute paths of files under ROOT changed or added since REF — untracked ones included —,
    absolute paths of files deleted since REF)."""
    toplevel = _work_tree(ref, root, "--changed-since")

    def paths(args: list[str]) -> set[str]:
        out = _git(args, root).stdout.decode("utf-8", "surrogateescape")
        return {os.path.normpath(os.path.join(toplevel, p)) for p in out.split("\0") if p}

    changed = paths(["diff", "--name-only", "-z", "--diff-filter=d", ref, "--", "."])
    deleted = paths(["diff", "--name-only", "-z", "--diff-filter=D", ref, "--", "."])
    untracked = {os.path.normpath(os.path.join(root, p)) for p in
                 _git(["ls-files", "-z", "--others", "--exclude-standard", "--", "."], root).stdout
                 .decode("utf-8", "surrogateescape").split("\0") if p}
    return changed | untracked, deleted
