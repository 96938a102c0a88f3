"""Entries at a git revision: statuses for status gates with `--base REF` (SPEC §6), and the files
changed since one for `--changed-since REF`."""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass

from .errors import UsageError
from .infra import git
from .model.entry import ParseFailure, as_tags, entry_id, parse
from .paths import printable
from .policy import NEW, UNCHANGED

CROSS_LINKS = "cross-kb-links.yaml"


def _git(args: list[str], cwd: str, option: str, given: bytes = b"") -> bytes:
    try:
        return git.run(args, cwd, given=given)
    except git.GitError as exc:
        raise UsageError(f"{option}: {exc}") from None


def _work_tree(ref: str, root: str, option: str) -> str:
    """The top of the git work tree holding ROOT, once REF is known to name a commit."""
    try:
        top = git.run(["rev-parse", "--show-toplevel"], root)
    except git.GitError as exc:
        why = str(exc) if str(exc).startswith("cannot run git") else f"{printable(root)} is not inside a git work tree"
        raise UsageError(f"{option} {printable(ref)}: {why}") from None
    if not git.run_ok(["rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"], root):
        raise UsageError(f"{option} {printable(ref)}: no such git revision{_why_no_revision(root)}")
    return top.decode("utf-8", "surrogateescape").strip()


def _why_no_revision(root: str) -> str:
    """What may explain a revision git does not know: a repository with no commit, or a shallow clone."""
    if not git.run_ok(["rev-parse", "--verify", "--quiet", "HEAD"], root):
        return " (the repository has no commit yet)"
    try:
        shallow = git.run(["rev-parse", "--is-shallow-repository"], root).strip() == b"true"
    except git.GitError:
        return ""
    return " (this clone is shallow: fetch the history, e.g. fetch-depth: 0 in actions/checkout)" if shallow else ""


def _status_of(data: bytes) -> str | None:
    raw = parse(data)
    if isinstance(raw, ParseFailure):
        return None
    value = raw.frontmatter.get("status")
    if value is None or isinstance(value, (list, dict)):
        return None
    return str(value)


def _changed_at(ref: str, root: str, toplevel: str) -> dict[str, str]:
    """Changed paths (absolute) → their path at REF (relative to TOPLEVEL), renames followed."""
    fields = _git(["diff", "--name-status", "-z", "--find-renames", ref, "--", "."], root, "--base")
    parts = fields.decode("utf-8", "surrogateescape").split("\0")
    changed: dict[str, str] = {}
    i = 0
    while i < len(parts) and parts[i]:
        step = 3 if parts[i].startswith(("R", "C")) else 2
        changed[os.path.normpath(os.path.join(toplevel, parts[i + step - 1]))] = parts[i + 1]
        i += step
    return changed


def statuses_at(ref: str, kb_root: str, files: list[str]) -> dict[str, str | None]:
    """For each entry file: its status at REF, NEW if it did not exist then, UNCHANGED if the
    file is the same as at REF."""
    toplevel = _work_tree(ref, kb_root, "--base")
    listed = _git(["ls-tree", "-r", "-z", "--name-only", ref, "--", "."], kb_root, "--base")
    at_base = {os.path.normpath(os.path.join(kb_root, p)) for p in git.paths_of(listed)}
    changed = _changed_at(ref, kb_root, toplevel)
    result: dict[str, str | None] = {}
    for raw_path in files:
        path = os.path.normpath(raw_path)
        if path in changed:
            try:
                shown = git.run(["show", f"{ref}:{changed[path]}"], toplevel)
            except git.GitError:
                result[path] = NEW
            else:
                result[path] = _status_of(shown)
        elif path in at_base:
            result[path] = UNCHANGED
        else:
            result[path] = NEW
    return result


@dataclass(slots=True)
class Changes:
    """What changed under a KB's folder since a revision (`changed_since`)."""

    changed: set[str]  # absolute paths of the files changed or added, untracked ones included
    deleted: set[str]  # absolute paths of the files deleted
    earlier: dict[str, bytes]  # each entry file (or cross-kb-links.yaml) changed or deleted: its text then


def changed_since(ref: str, root: str) -> Changes:
    """The files under ROOT changed since REF. Since REF means since where the checked-out branch
    left REF's history (their merge base), as a pull request's changes are counted: what REF's
    branch did since is no change of this one."""
    toplevel = _work_tree(ref, root, "--changed-since")
    with contextlib.suppress(git.GitError, UnicodeDecodeError):  # no history in common, or no HEAD: REF itself
        ref = git.run(["merge-base", ref, "HEAD"], root).decode("ascii").strip() or ref

    def paths(args: list[str], base: str) -> set[str]:
        return {os.path.normpath(os.path.join(base, p)) for p in git.paths_of(_git(args, root, "--changed-since"))}

    # a renamed file is its old path deleted and its new one added: links may name either
    changed = paths(["diff", "--name-only", "-z", "--no-renames", "--diff-filter=d", ref, "--", "."], toplevel)
    deleted = paths(["diff", "--name-only", "-z", "--no-renames", "--diff-filter=D", ref, "--", "."], toplevel)
    untracked = paths(["ls-files", "-z", "--others", "--exclude-standard", "--", "."], root)
    entries = sorted(p for p in changed | deleted if p.endswith(".md") or os.path.basename(p) == CROSS_LINKS)
    earlier = contents_at(ref, root, entries, toplevel) if entries else {}
    return Changes(changed | untracked, deleted, earlier)


def names_at(ref: str, root: str, paths: list[str], toplevel: str | None = None) -> dict[str, list[str]]:
    """The id and aliases each entry file of PATHS (absolute, under ROOT, in the work tree whose
    top is TOPLEVEL) had at REF: names a link may still give an entry deleted since (its file name
    needs no git). A file git cannot show has none."""
    texts = contents_at(ref, root, paths, toplevel)
    return {path: names_of(data, os.path.basename(path)) for path, data in texts.items()}


def contents_at(ref: str, root: str, paths: list[str], toplevel: str | None = None) -> dict[str, bytes]:
    """The text at REF of each file of PATHS (absolute, under ROOT, in the work tree whose top is
    TOPLEVEL) that git can show, read in one git call."""
    toplevel = toplevel or _work_tree(ref, root, "--changed-since")
    asked = [p for p in paths if "\n" not in p]  # one name a line, as git cat-file reads them
    if not asked:
        return {}
    request = "".join(f"{ref}:{os.path.relpath(p, toplevel)}\n" for p in asked)
    output = _git(["cat-file", "--batch"], root, "--changed-since", request.encode("utf-8", "surrogateescape"))
    texts: dict[str, bytes] = {}
    at = 0
    for path in asked:
        end = output.find(b"\n", at)
        if end < 0:
            break
        header, at = output[at:end], end + 1
        size = header.rsplit(b" ", 1)[-1]
        if header.endswith((b" missing", b" ambiguous")) or not size.isdigit():
            continue  # nothing follows the header
        texts[path], at = output[at : at + int(size)], at + int(size) + 1
    return texts


def names_of(data: bytes, name: str) -> list[str]:
    raw = parse(data)
    if isinstance(raw, ParseFailure):
        return []
    return [entry_id(raw.frontmatter, name), *as_tags(raw.frontmatter.get("aliases"))]
