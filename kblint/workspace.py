"""Finding KBs and their entry files (SPEC §2).

Every `*.md` file below a KB is an entry file, whatever it is: one that cannot be read (a FIFO, a
dangling symlink, a directory kblint may not open) is still counted and becomes a parse_error. Inside
a git work tree the files git ignores are skipped, asking git once per repository.
"""

from __future__ import annotations

import difflib
import errno
import os
import re
import stat
from collections.abc import Iterable
from dataclasses import dataclass, field

from .errors import UsageError
from .infra import git
from .infra.files import OUTSIDE, FileProblem, leads_outside, over_the_limit, read_regular_file
from .model.kbschema import CrossKBLink, KBSchema, PluginType, default_schema, load_cross_kb_links, load_kb_schema
from .paths import display_path, is_within, relative_to
from .yamlread import DEFAULT_LIMITS, Limits
from .yamlread.lines import YamlFileError

__all__ = ["KB", "Candidate", "UsageError", "Workspace", "build_workspace", "find_kb_roots", "load_kbs_for_plan"]


@dataclass(slots=True)
class Candidate:
    """An entry checked as if it were in a KB: a file outside it, or text read from stdin."""

    path: str  # what reports show (absolute path, or the KB-relative --stdin-path joined to the root)
    relpath: str  # KB-relative posix path used for type inference
    data: bytes | None  # None when it could not be read (see problem)
    inside: bool  # whether relpath is where the entry would really live in the KB
    problem: str | None = None  # why it could not be read
    gated: bool = True  # an entry to be added: compared with the KB's entries as a newcomer (not an edit in place)


@dataclass(slots=True)
class KB:
    """A KB found in the run: its kb.yaml and the files to lint."""

    schema: KBSchema
    files: list[str] = field(default_factory=list)  # absolute paths of entry files
    problems: dict[str, str] = field(default_factory=dict)  # path of a file that will not be read → why
    reported: set[str] | None = None  # absolute paths whose issues are reported; None: all
    candidates: list[Candidate] = field(default_factory=list)
    cross_links_path: str | None = None
    cross_links: list[CrossKBLink] = field(default_factory=list)
    bad_gitignore: str | None = None  # a .gitignore git would block or fail on

    @property
    def name(self) -> str:
        return self.schema.name

    @property
    def root(self) -> str:
        return self.schema.root

    def relpath(self, path: str) -> str:
        return relative_to(path, self.root)


@dataclass(slots=True)
class Workspace:
    """The KBs of a run, the kb.yaml files that could not be read, and warnings for the user."""

    kbs: list[KB]
    unreadable: list[YamlFileError] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


# ---------------------------------------------------------------------------------------------
# Glob matching for `exclude` (gitignore-like: `*` within a segment, `**` across segments).


def _glob_part(pattern: str, i: int) -> tuple[str, int]:
    """The regex for the glob element at I, and where the next one starts."""
    c = pattern[i]
    if pattern.startswith("**/", i):
        return "(?:.*/)?", i + 3
    if pattern.startswith("**", i):
        return ".*", i + 2
    if c == "*":
        return "[^/]*", i + 1
    if c == "?":
        return "[^/]", i + 1
    if c == "[":
        j = pattern.find("]", i + 1)
        if j >= 0:
            return "[" + pattern[i + 1 : j].replace("!", "^", 1) + "]", j + 1
    return re.escape(c), i + 1


def glob_to_regex(pattern: str) -> re.Pattern[str]:
    pattern = pattern.strip().lstrip("/")
    anchored = "/" in pattern.rstrip("/")
    dir_only = pattern.endswith("/")
    pattern = pattern.rstrip("/")
    out = []
    i = 0
    while i < len(pattern):
        part, i = _glob_part(pattern, i)
        out.append(part)
    prefix = "" if anchored else "(?:.*/)?"
    # A pattern matches a path itself or anything below it (a directory pattern excludes its files).
    suffix = "/.*" if dir_only else "(?:/.*)?"
    return re.compile(f"^{prefix}{''.join(out)}{suffix}$")


class Excluder:
    """The `exclude` globs of the configuration, matched against KB-relative paths."""

    def __init__(self, patterns: Iterable[str]):
        self.regexes = [glob_to_regex(p) for p in patterns if p and p.strip()]

    def __call__(self, relpath: str) -> bool:
        return any(r.match(relpath) for r in self.regexes)


# ---------------------------------------------------------------------------------------------
# Walking a KB.


def is_readme(name: str) -> bool:
    return name.lower() == "readme.md"


def _is_regular(entry: os.DirEntry[str]) -> bool:
    try:
        return stat.S_ISREG(entry.stat().st_mode)
    except OSError:
        return False


@dataclass(slots=True)
class _Walk:
    """The entry files below a KB root, what cannot be read, and any .gitignore git would block on."""

    root: str
    exclude: Excluder
    limits: Limits
    files: list[str] = field(default_factory=list)
    problems: dict[str, str] = field(default_factory=dict)
    bad_gitignore: str | None = None

    def run(self) -> None:
        stack = [(self.root, 0)]
        while stack:
            directory, depth = stack.pop()
            try:
                with os.scandir(directory) as it:
                    items = list(it)
            except OSError as exc:
                self._unreadable(directory, f"cannot read the directory: {exc.strerror or exc}")
                continue
            for item in items:
                if item.name.startswith("."):
                    if item.name == ".gitignore" and not _is_regular(item):
                        self.bad_gitignore = item.path
                    continue
                if item.is_dir(follow_symlinks=False):
                    if self._descends(item):
                        if depth + 1 > self.limits.max_path_depth:
                            message = f"more than {self.limits.max_path_depth} directories deep (the limit): not read"
                            self._unreadable(item.path, message)
                        else:
                            stack.append((item.path, depth + 1))
                elif item.name.endswith(".md") and not is_readme(item.name) and not self._excluded(item.path):
                    self.files.append(item.path)
                    if item.is_symlink() and leads_outside(self.root, item.path):
                        self.problems[item.path] = OUTSIDE
        self.files.sort()

    @staticmethod
    def _descends(item: os.DirEntry[str]) -> bool:
        """Whether the walk goes into a directory: not _templates, and not another KB."""
        return item.name != "_templates" and not os.path.lexists(os.path.join(item.path, "kb.yaml"))

    def _excluded(self, path: str) -> bool:
        return bool(self.exclude.regexes) and self.exclude(relative_to(path, self.root))

    def _unreadable(self, path: str, reason: str) -> None:
        if not self._excluded(path):
            self.files.append(path)
            self.problems[path] = reason


def not_an_entry(
    root: str, relpath: str, exclude: Excluder, limits: Limits, respect_gitignore: bool = True
) -> str | None:
    """Why the file at RELPATH (KB-relative, normalized, ending in .md) of the KB at ROOT is not one
    a run lints as an entry, or None when it would be: what `_Walk` skips, and what git ignores."""
    parts = relpath.split("/")
    if any(part.startswith(".") for part in parts):
        return "hidden: its name, or a folder's on its path, begins with '.'"
    if "_templates" in parts[:-1]:
        return "a template: it lies in a _templates folder"
    if is_readme(parts[-1]):
        return "a README, which documents its folder"
    if exclude(relpath):
        return "the configuration's `exclude` leaves it out"
    if len(parts) - 1 > limits.max_path_depth:
        return f"more than {limits.max_path_depth} folders deep (max_path_depth), where kblint does not read"
    why = _not_walked_to(root, parts)
    if why is None and respect_gitignore and git.run_ok(["check-ignore", "-q", "--", relpath], root):
        why = "git ignores it (.gitignore; --no-respect-gitignore lints such files)"
    return why


def _not_walked_to(root: str, parts: list[str]) -> str | None:
    """Why the walk would not reach the file of PARTS below ROOT as it is on disk, or None."""
    for depth in range(1, len(parts)):
        folder = "/".join(parts[:depth])
        if os.path.islink(os.path.join(root, folder)):
            return f"{folder} is a symbolic link, which kblint does not follow"
        if os.path.lexists(os.path.join(root, folder, "kb.yaml")):
            return f"{folder} is another KB (it holds a kb.yaml)"
    try:
        mode = os.lstat(os.path.join(root, *parts)).st_mode
    except OSError as exc:
        if exc.errno in (errno.ENAMETOOLONG, errno.ENOTDIR):
            return f"no file can have this path ({exc.strerror})"
        return None
    return "a directory is there" if stat.S_ISDIR(mode) else None


def find_kb_roots(
    directory: str, limits: Limits = DEFAULT_LIMITS, skipped: list[tuple[str, str]] | None = None
) -> list[str]:
    """Directories holding kb.yaml at or below DIRECTORY (hidden and symlinked directories skipped);
    SKIPPED, when given, is told of each directory not looked into, and why."""
    roots = []
    stack = [(os.path.abspath(directory), 0)]
    while stack:
        current, depth = stack.pop()
        try:
            is_root, below = _kb_yaml_and_directories(current)
        except OSError as exc:
            if skipped is not None:
                skipped.append((current, f"could not be read ({exc.strerror or exc})"))
            continue
        if is_root:
            roots.append(current)
        if depth < limits.max_path_depth:
            below.sort(reverse=True)  # taken from the end of the stack: in the order of their names
            stack.extend((path, depth + 1) for _, path in below)
        elif skipped is not None:
            skipped.extend(
                (path, f"is more than {limits.max_path_depth} levels deep (max_path_depth)") for _, path in below
            )
    return roots


def _unsearched(skipped: list[tuple[str, str]], roots: list[str]) -> list[str]:
    """Warnings for the directories not searched for KBs that lie in no KB found (a KB's own walk
    reports its directories); the first of each reason, and how many more."""
    outside = [(path, why) for path, why in skipped if not any(is_within(path, root) for root in roots)]
    warnings = []
    for why in dict.fromkeys(why for _, why in outside):
        paths = [path for path, reason in outside if reason == why]
        more = f" (and {len(paths) - 1} more)" if len(paths) > 1 else ""
        warnings.append(f"{display_path(paths[0])}{more} {why}: not searched for KBs")
    return warnings


def _kb_yaml_and_directories(directory: str) -> tuple[bool, list[tuple[str, str]]]:
    """Whether DIRECTORY holds a kb.yaml, and the (name, path) of its directories that are not
    hidden or symlinks (of a KB's thousands of files, only the few directories are kept)."""
    has_kb_yaml = False
    below = []
    with os.scandir(directory) as it:
        for e in it:
            if e.name == "kb.yaml":  # whatever it is: one that cannot be read is reported as such
                has_kb_yaml = True
            elif e.is_dir(follow_symlinks=False) and not e.name.startswith("."):
                below.append((e.name, e.path))
    return has_kb_yaml, below


def nearest_kb_root(path: str) -> str | None:
    current = os.path.dirname(os.path.abspath(path))
    while True:
        if os.path.lexists(os.path.join(current, "kb.yaml")):
            return current
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent


# ---------------------------------------------------------------------------------------------
# Building the workspace for a run.


@dataclass(frozen=True, slots=True)
class WalkOptions:
    """How a run finds entry files."""

    exclude: tuple[str, ...] = ()
    respect_gitignore: bool = True
    limits: Limits = DEFAULT_LIMITS
    plugin_types: tuple[PluginType, ...] = ()


class _Builder:
    def __init__(self, options: WalkOptions):
        self.options = options
        self.exclude = Excluder(options.exclude)
        self.kbs: dict[str, KB] = {}
        self.unreadable: list[YamlFileError] = []
        self.bad_roots: set[str] = set()
        self.warnings: list[str] = []

    def kb(self, root: str | None, default_root: str | None = None) -> KB | None:
        key = root or ("default:" + (default_root or ""))
        if key in self.kbs:
            return self.kbs[key]
        if key in self.bad_roots:
            return None
        if root is None:
            schema = default_schema(default_root or os.getcwd(), self.options.plugin_types)
        else:
            try:
                schema = load_kb_schema(root, self.options.plugin_types)
            except YamlFileError as exc:
                self.unreadable.append(exc)
                self.bad_roots.add(key)
                return None
        kb = KB(schema=schema, reported=set())
        if root is not None:
            walk = _Walk(root, self.exclude, self.options.limits)
            walk.run()
            kb.files, kb.problems, kb.bad_gitignore = walk.files, walk.problems, walk.bad_gitignore
            kb.cross_links_path, kb.cross_links = load_cross_kb_links(root, schema.problems)
        self.kbs[key] = kb
        return kb

    def stdin_candidate(self, context_root: str | None, stdin_path: str | None, data: bytes) -> None:
        if context_root is None:
            raise UsageError("--stdin needs --kb DIR (the KB the entry belongs to)")
        if not stdin_path:
            raise UsageError("--stdin needs --stdin-path REL.md (where the entry would live in the KB)")
        if os.path.isabs(stdin_path) or not stdin_path.endswith(".md"):
            raise UsageError(f"--stdin-path {stdin_path}: expected a relative path ending in .md, inside the KB")
        abs_path = os.path.normpath(os.path.join(context_root, stdin_path))
        if not is_within(abs_path, context_root):
            raise UsageError(f"--stdin-path {stdin_path}: the path leaves the KB")
        relpath = relative_to(abs_path, context_root)
        why = not_an_entry(context_root, relpath, self.exclude, self.options.limits, self.options.respect_gitignore)
        if why is not None:
            raise UsageError(f"--stdin-path {stdin_path}: not an entry: {why}")
        kb = self.kb(context_root)
        if kb is not None:
            replaced = abs_path in kb.files
            if replaced:
                kb.files.remove(abs_path)  # the candidate replaces the existing entry for this run
            if len(data) > self.options.limits.max_file_bytes:
                problem = over_the_limit(self.options.limits.max_file_bytes)
                kb.candidates.append(Candidate(abs_path, kb.relpath(abs_path), None, True, problem=problem))
            else:
                kb.candidates.append(Candidate(abs_path, kb.relpath(abs_path), data, inside=True, gated=not replaced))

    def directory(self, raw: str, path: str) -> None:
        skipped: list[tuple[str, str]] = []
        found = find_kb_roots(path, self.options.limits, skipped)
        roots = [path] + [r for r in found if r != path] if os.path.lexists(os.path.join(path, "kb.yaml")) else found
        self.warnings.extend(_unsearched(skipped, roots))
        above = nearest_kb_root(os.path.join(path, "x")) if not roots else None
        if above is not None:  # a folder of a KB: its entries, as if each were named
            kb = self.kb(above)
            inside = [p for p in kb.files if is_within(p, path)] if kb is not None else []
            if kb is not None and kb.reported is not None:
                kb.reported.update(inside)
            if kb is not None and not inside:
                self.warnings.append(
                    f"{raw} holds no entry of the KB at {display_path(above)} (hidden, excluded or empty)"
                )
            return
        if not roots:
            raise UsageError(f"no kb.yaml found under {raw}")
        for root in roots:
            kb = self.kb(root)
            if kb is not None:
                kb.reported = None

    def file(self, raw: str, path: str, context_root: str | None) -> None:
        if not path.endswith(".md"):
            raise UsageError(f"{raw}: not a markdown entry (.md) or a directory")
        if context_root is not None and not is_within(path, context_root):
            kb = self.kb(context_root)
            if kb is not None:
                kb.candidates.append(self._read_candidate(path, os.path.basename(path), inside=False))
            return
        root = context_root or nearest_kb_root(path)
        kb = self.kb(root, default_root=os.path.dirname(path))
        if kb is None:
            return
        if root is None or path not in kb.files:
            # a file outside the walk (hidden, excluded, or no KB at all): checked as named
            relpath = kb.relpath(path) if root else os.path.basename(path)
            if root is not None and leads_outside(root, path):
                kb.candidates.append(Candidate(path, relpath, None, True, problem=OUTSIDE))
            else:
                kb.candidates.append(self._read_candidate(path, relpath, inside=root is not None))
        elif kb.reported is not None:
            kb.reported.add(path)

    def _read_candidate(self, path: str, relpath: str, inside: bool) -> Candidate:
        """A file named on the command line that the walk did not give, read as an entry file is."""
        try:
            return Candidate(path, relpath, read_regular_file(path, self.options.limits.max_file_bytes), inside)
        except FileProblem as exc:
            return Candidate(path, relpath, None, inside, problem=exc.reason)


def build_workspace(
    paths: list[str],
    *,
    kb_dir: str | None = None,
    stdin_data: bytes | None = None,
    stdin_path: str | None = None,
    options: WalkOptions | None = None,
) -> Workspace:
    """The KBs of a run: those PATHS name or hold, or the --kb DIR of candidates and --stdin."""
    options = options or WalkOptions()
    b = _Builder(options)
    context_root = os.path.abspath(kb_dir) if kb_dir else None
    if context_root is not None and not os.path.lexists(os.path.join(context_root, "kb.yaml")):
        raise UsageError(f"--kb {kb_dir}: no kb.yaml in that directory")
    if stdin_data is not None:
        b.stdin_candidate(context_root, stdin_path, stdin_data)
    else:
        for raw in paths or ["."]:
            path = os.path.abspath(raw)
            if not os.path.lexists(path):
                raise UsageError(f"{raw}: no such file or directory")
            if os.path.isdir(path):
                b.directory(raw, path)
            else:
                b.file(raw, path, context_root)
    ws = Workspace(kbs=list(b.kbs.values()), unreadable=b.unreadable, warnings=b.warnings)
    if options.respect_gitignore:
        ws.warnings.extend(_skip_ignored(ws.kbs))
    return ws


def _skip_ignored(kbs: list[KB]) -> list[str]:
    """Drop the files git ignores from the KBs' files (one git query per repository); warnings
    for the KBs whose repository git could not be asked about."""
    warnings = []
    walked = [kb for kb in kbs if kb.schema.kb_yaml is not None]
    for top, members in git.by_work_tree([kb.root for kb in walked]).items():
        group = [kb for kb in walked if kb.root in members]
        bad = next((kb.bad_gitignore for kb in group if kb.bad_gitignore), None) or git.bad_gitignore_above(
            top, members
        )
        if bad is not None:
            warnings.append(f"{display_path(bad)} is not a regular file: files git ignores are linted too")
            continue
        ignored = git.ignored(top, members)
        if ignored is None:
            warnings.append(f"git could not list the files it ignores in {display_path(top)}: they are linted too")
            continue
        for kb in group:
            kb.files = [p for p in kb.files if not ignored.covers(p)]
    return warnings


def load_kbs_for_plan(
    kb: str, plugin_types: tuple[PluginType, ...] = (), *, several: bool = False
) -> tuple[list[KBSchema], list[str]]:
    """The KBs a command names, as `validate` takes them: a KB directory, a directory of KBs
    (SEVERAL: else refused), an entry file (its KB), or a KB name found under the current
    directory. Also the kb.yaml files of a directory of KBs that could not be read."""
    if os.path.isfile(kb) and kb.endswith(".md"):
        root = nearest_kb_root(kb)
        if root is None:
            raise UsageError(f"{kb}: not inside a KB (no kb.yaml in its directory or above)")
        kb = root
    if os.path.isdir(kb):
        if os.path.lexists(os.path.join(kb, "kb.yaml")):
            return [_load_for_plan(os.path.abspath(kb), plugin_types)], []
        return _load_directory_of_kbs(kb, plugin_types, several)
    found = []
    names = []
    for root in find_kb_roots(os.getcwd()):
        try:
            schema = load_kb_schema(root, plugin_types)
        except YamlFileError:
            continue
        names.append(schema.name)
        if schema.name == kb:
            found.append(schema)
    if not found:
        near = difflib.get_close_matches(kb, names, n=1)
        hint = f"; did you mean '{near[0]}'?" if near else ""
        raise UsageError(f"{kb}: no such directory, and no KB of that name under the current directory{hint}")
    if len(found) > 1:
        paths = " and ".join(display_path(s.root) for s in found)
        raise UsageError(f"{kb}: several KBs have that name ({paths}); give the directory instead")
    return found, []


def _load_for_plan(root: str, plugin_types: tuple[PluginType, ...]) -> KBSchema:
    try:
        return load_kb_schema(root, plugin_types)
    except YamlFileError as exc:
        raise UsageError(str(exc)) from None


def _load_directory_of_kbs(
    directory: str, plugin_types: tuple[PluginType, ...], several: bool
) -> tuple[list[KBSchema], list[str]]:
    roots = find_kb_roots(directory)
    if not roots:
        raise UsageError(f"{directory}: no kb.yaml in that directory or below (give a KB directory or a KB name)")
    if len(roots) > 1 and not several:
        names = ", ".join(display_path(r) for r in roots)
        raise UsageError(f"{directory}: holds several KBs ({names}); give one of them")
    schemas, problems = [], []
    for root in roots:
        try:
            schemas.append(load_kb_schema(root, plugin_types))
        except YamlFileError as exc:
            problems.append(str(exc))
    return schemas, problems
