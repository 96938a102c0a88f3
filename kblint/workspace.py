"""Finding KBs and their entry files (SPEC §2)."""

from __future__ import annotations

import os
import re
import subprocess
from dataclasses import field

from .kbschema import ConfigProblem, CrossKBLink, KBSchema, default_schema, load_cross_kb_links, load_kb_schema
from .plainclass import dataclass
from .yamlfile import YamlFileError


class UsageError(Exception):
    """kblint cannot do its job with what it was given (exit 2)."""


@dataclass(slots=True)
class Candidate:
    """An entry checked as if it were in a KB: a file outside it, or text read from stdin."""

    path: str  # what reports show (absolute path, or the KB-relative --stdin-path joined to the root)
    relpath: str  # KB-relative posix path used for type inference
    data: bytes
    inside: bool  # whether relpath is where the entry would really live in the KB


@dataclass(slots=True)
class KB:
    """A KB found in the run: its kb.yaml and the files to lint."""

    schema: KBSchema
    files: list[str] = field(default_factory=list)  # absolute paths of entry files
    reported: set[str] | None = None  # absolute paths whose issues are reported; None: all
    candidates: list[Candidate] = field(default_factory=list)
    cross_links_path: str | None = None
    cross_links: list[CrossKBLink] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.schema.name

    @property
    def root(self) -> str:
        return self.schema.root

    def relpath(self, path: str) -> str:
        prefix = self.root.rstrip(os.sep) + os.sep
        rel = path[len(prefix):] if path.startswith(prefix) else os.path.relpath(path, self.root)
        return rel.replace(os.sep, "/")


@dataclass(slots=True)
class Workspace:
    """The KBs of a run, and the kb.yaml files that could not be read."""

    kbs: list[KB]
    unreadable: list[YamlFileError] = field(default_factory=list)  # kb.yaml files that could not be read


# ---------------------------------------------------------------------------------------------
# Glob matching for `exclude` (gitignore-like: `*` within a segment, `**` across segments).


def glob_to_regex(pattern: str) -> re.Pattern:
    pattern = pattern.strip().lstrip("/")
    anchored = "/" in pattern.rstrip("/")
    dir_only = pattern.endswith("/")
    pattern = pattern.rstrip("/")
    out = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif c == "*":
            out.append("[^/]*")
            i += 1
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "[":
            j = pattern.find("]", i + 1)
            if j < 0:
                out.append(re.escape(c))
                i += 1
            else:
                out.append("[" + pattern[i + 1 : j].replace("!", "^", 1) + "]")
                i = j + 1
        else:
            out.append(re.escape(c))
            i += 1
    body = "".join(out)
    prefix = "" if anchored else "(?:.*/)?"
    # A pattern matches a path itself or anything below it (a directory pattern excludes its files).
    suffix = "/.*" if dir_only else "(?:/.*)?"
    return re.compile(f"^{prefix}{body}{suffix}$")


class Excluder:
    def __init__(self, patterns: list[str] | tuple[str, ...]):
        self.regexes = [glob_to_regex(p) for p in patterns if p and p.strip()]

    def __call__(self, relpath: str) -> bool:
        return any(r.match(relpath) for r in self.regexes)


# ---------------------------------------------------------------------------------------------
# git: files that git ignores are skipped inside a work tree.


def _git_toplevel(path: str) -> str | None:
    current = os.path.abspath(path)
    while True:
        if os.path.exists(os.path.join(current, ".git")):
            return current
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent


def _git_visible_files(root: str) -> set[str] | None:
    """Absolute paths of the files git does not ignore under ROOT, or None outside a work tree."""
    if _git_toplevel(root) is None:
        return None
    try:
        proc = subprocess.run(
            ["git", "-C", root, "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", "."],
            capture_output=True, timeout=60,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if proc.returncode != 0:
        return None
    root = os.path.abspath(root)
    return {os.path.join(root, p) for p in proc.stdout.decode("utf-8", "surrogateescape").split("\0") if p}


# ---------------------------------------------------------------------------------------------
# Walking a KB.


def is_readme(name: str) -> bool:
    return name.lower() == "readme.md"


def entry_files(root: str, exclude: Excluder, respect_gitignore: bool = True) -> list[str]:
    """Every entry file of the KB at ROOT, sorted (SPEC §2)."""
    visible = _git_visible_files(root) if respect_gitignore else None
    found: list[str] = []
    stack = [root]
    while stack:
        directory = stack.pop()
        try:
            items = list(os.scandir(directory))
        except OSError:
            continue
        for item in items:
            name = item.name
            if name.startswith("."):
                continue
            if item.is_dir(follow_symlinks=False):
                if name == "_templates" and directory == root:
                    continue
                if name == "_templates" or os.path.isfile(os.path.join(item.path, "kb.yaml")):
                    continue
                stack.append(item.path)
            elif name.endswith(".md") and not is_readme(name) and item.is_file():
                if visible is not None and item.path not in visible:
                    continue
                if exclude.regexes and exclude(os.path.relpath(item.path, root).replace(os.sep, "/")):
                    continue
                found.append(item.path)
    found.sort()
    return found


def find_kb_roots(directory: str) -> list[str]:
    """Directories holding kb.yaml at or below DIRECTORY (hidden directories skipped)."""
    roots = []
    for current, dirs, files in os.walk(directory):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and not os.path.islink(os.path.join(current, d)))
        if "kb.yaml" in files:
            roots.append(os.path.abspath(current))
    return roots


def nearest_kb_root(path: str) -> str | None:
    current = os.path.dirname(os.path.abspath(path))
    while True:
        if os.path.isfile(os.path.join(current, "kb.yaml")):
            return current
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent


def _is_within(path: str, root: str) -> bool:
    try:
        return os.path.commonpath([os.path.abspath(path), root]) == root
    except ValueError:
        return False


# ---------------------------------------------------------------------------------------------
# Building the workspace for a run.


class _Builder:
    def __init__(self, exclude: Excluder, respect_gitignore: bool):
        self.exclude = exclude
        self.respect_gitignore = respect_gitignore
        self.kbs: dict[str, KB] = {}
        self.unreadable: list[YamlFileError] = []
        self.bad_roots: set[str] = set()

    def kb(self, root: str | None, default_root: str | None = None) -> KB | None:
        key = root or ("default:" + (default_root or ""))
        if key in self.kbs:
            return self.kbs[key]
        if key in self.bad_roots:
            return None
        if root is None:
            schema = default_schema(default_root or os.getcwd())
        else:
            try:
                schema = load_kb_schema(root)
            except YamlFileError as exc:
                self.unreadable.append(exc)
                self.bad_roots.add(key)
                return None
        kb = KB(schema=schema, reported=set())
        if root is not None:
            kb.files = entry_files(root, self.exclude, self.respect_gitignore)
            kb.cross_links_path, kb.cross_links = load_cross_kb_links(root, schema.problems)
        self.kbs[key] = kb
        return kb


def build_workspace(
    paths: list[str],
    *,
    kb_dir: str | None = None,
    stdin_data: bytes | None = None,
    stdin_path: str | None = None,
    exclude: tuple[str, ...] = (),
    respect_gitignore: bool = True,
) -> Workspace:
    b = _Builder(Excluder(list(exclude)), respect_gitignore)
    context_root = os.path.abspath(kb_dir) if kb_dir else None
    if context_root is not None and not os.path.isfile(os.path.join(context_root, "kb.yaml")):
        raise UsageError(f"--kb {kb_dir}: no kb.yaml in that directory")

    if stdin_data is not None:
        if context_root is None:
            raise UsageError("--stdin needs --kb DIR (the KB the entry belongs to)")
        if not stdin_path:
            raise UsageError("--stdin needs --stdin-path REL.md (where the entry would live in the KB)")
        if os.path.isabs(stdin_path) or not stdin_path.endswith(".md"):
            raise UsageError(f"--stdin-path {stdin_path}: expected a relative path ending in .md, inside the KB")
        if not _is_within(os.path.join(context_root, stdin_path), context_root):
            raise UsageError(f"--stdin-path {stdin_path}: the path leaves the KB")
        kb = b.kb(context_root)
        if kb is not None:
            abs_path = os.path.normpath(os.path.join(context_root, stdin_path))
            if abs_path in kb.files:
                kb.files.remove(abs_path)  # the candidate replaces the existing entry for this run
            kb.candidates.append(Candidate(path=abs_path, relpath=kb.relpath(abs_path), data=stdin_data,
                                           inside=_is_within(abs_path, context_root)))
    else:
        for raw in paths or ["."]:
            path = os.path.abspath(raw)
            if not os.path.exists(path):
                raise UsageError(f"{raw}: no such file or directory")
            if os.path.isdir(path):
                if os.path.isfile(os.path.join(path, "kb.yaml")):
                    roots = [path] + [r for r in find_kb_roots(path) if r != path]
                else:
                    roots = find_kb_roots(path)
                if not roots:
                    above = nearest_kb_root(os.path.join(path, "x"))
                    hint = f" (the KB holding it is {os.path.relpath(above)}: lint that)" if above else ""
                    raise UsageError(f"no kb.yaml found under {raw}{hint}")
                for root in roots:
                    kb = b.kb(root)
                    if kb is not None:
                        kb.reported = None
                continue
            if not path.endswith(".md"):
                raise UsageError(f"{raw}: not a markdown entry (.md) or a directory")
            if context_root is not None and not _is_within(path, context_root):
                kb = b.kb(context_root)
                if kb is not None:
                    with open(path, "rb") as fh:
                        data = fh.read()
                    kb.candidates.append(Candidate(path=path, relpath=os.path.basename(path), data=data,
                                                   inside=False))
                continue
            root = context_root or nearest_kb_root(path)
            kb = b.kb(root, default_root=os.path.dirname(path))
            if kb is None:
                continue
            if root is None or path not in kb.files:
                # a file outside the walk (hidden, excluded, or no KB at all): checked as named
                kb.candidates.append(Candidate(path=path, relpath=kb.relpath(path) if root else os.path.basename(path),
                                               data=_read(path), inside=root is not None))
            elif kb.reported is not None:
                kb.reported.add(path)
    return Workspace(kbs=list(b.kbs.values()), unreadable=b.unreadable)


def _read(path: str) -> bytes:
    with open(path, "rb") as fh:
        return fh.read()


def load_kbs_for_plan(kb: str) -> list[KBSchema]:
    """The KB a command names: a directory holding kb.yaml, or a KB name found under the current
    directory (other KBs' kb.yaml files that cannot be read are skipped)."""
    if os.path.isdir(kb):
        if not os.path.isfile(os.path.join(kb, "kb.yaml")):
            raise UsageError(f"{kb}: no kb.yaml in that directory (give a KB directory or a KB name)")
        try:
            return [load_kb_schema(os.path.abspath(kb))]
        except YamlFileError as exc:
            raise UsageError(str(exc)) from None
    found = []
    names = []
    for root in find_kb_roots(os.getcwd()):
        try:
            schema = load_kb_schema(root)
        except YamlFileError:
            continue
        names.append(schema.name)
        if schema.name == kb:
            found.append(schema)
    if not found:
        import difflib

        near = difflib.get_close_matches(kb, names, n=1)
        hint = f"; did you mean '{near[0]}'?" if near else ""
        raise UsageError(f"{kb}: no such directory, and no KB of that name under the current directory{hint}")
    if len(found) > 1:
        paths = " and ".join(os.path.relpath(s.root) for s in found)
        raise UsageError(f"{kb}: several KBs have that name ({paths}); give the directory instead")
    return found
