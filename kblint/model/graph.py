"""The link graph of a workspace: each KB's entries indexed by the names links use, where each link
resolves, and who links to whom (SPEC §3). Built over EntryFacts by the graph pass."""

from __future__ import annotations

import bisect
import difflib
import os
import posixpath
from dataclasses import dataclass, field

from ..infra.files import is_regular_file_within
from ..paths import link_relpath
from .facts import EntryFacts
from .link import LinkKey

# "Did you mean": the ids on each side of a broken link's target, in each of two orders, that are
# compared with it
_NEIGHBOURS = 8
FILE = "file"  # what a link to an existing file that is no entry resolves to


def _fold(name: str) -> str:
    """NAME case-folded; the same string object when folding changes nothing."""
    folded = name.casefold()
    return name if folded == name else folded


def _backwards(name: str) -> str:
    return name.casefold()[::-1]


class KBIndex:
    """Lookup of a KB's entries by id, then file stem or alias (exact first, then case-insensitive),
    and by path. An id always wins over another entry's stem or alias."""

    def __init__(self, name: str, root: str, probes: dict[tuple[str, str], bool]):
        self.name = name
        self.root = root
        # every non-entry file a link was looked up as, and whether it exists: a run's outcome
        # depends on them as it does on the entries
        self.probes = probes  # (KB root, KB-relative path) → whether it is a file
        self._real_root: str | None = None
        self.by_id: dict[str, EntryFacts] = {}
        self.by_name: dict[str, EntryFacts] = {}  # file stems and aliases
        self.by_id_folded: dict[str, EntryFacts] = {}
        self.by_name_folded: dict[str, EntryFacts] = {}
        self.by_path: dict[str, EntryFacts] = {}
        self._bearer: dict[str, EntryFacts] = {}  # a case-folded name → the first entry that bears it
        self.shared: set[str] = set()  # case-folded names (ids, stems, aliases) that several entries bear
        self.ids: list[str] = []
        self._suggested: dict[str, str | None] = {}
        self._sorted: tuple[list[str], list[str]] | None = None  # the ids in two orders, for suggest()

    def add(self, facts: EntryFacts) -> None:
        self.by_path[facts.relpath] = facts
        own = folded_own = None
        if facts.parsed:
            own = facts.id
            folded_own = _fold(own)
            self.by_id.setdefault(own, facts)
            self.by_id_folded.setdefault(folded_own, facts)
            self.ids.append(own)
        # A name equal to the entry's own id is answered by the id, which wins anyway.
        for name in (facts.stem, *facts.aliases) if facts.parsed else (facts.stem,):
            if name != own:
                self.by_name.setdefault(name, facts)
            folded = _fold(name)
            if folded != folded_own:
                self.by_name_folded.setdefault(folded, facts)
            self._bear(folded, facts)
        if folded_own is not None:
            self._bear(folded_own, facts)

    def _bear(self, folded: str, facts: EntryFacts) -> None:
        if self._bearer.setdefault(folded, facts) is not facts:
            self.shared.add(folded)

    def lookup(self, target: str) -> EntryFacts | None:
        """By id, then file stem or alias; exactly, then case-insensitively."""
        found = self.by_id.get(target) or self.by_name.get(target)
        if found is None:
            folded = target.casefold()
            found = self.by_id_folded.get(folded) or self.by_name_folded.get(folded)
        return found

    def resolve(self, key: LinkKey) -> EntryFacts | str | None:
        """The entry a link names, FILE for an existing non-entry file, or None."""
        if key.path is not None:
            found = self.by_path.get(key.path)
            if found is not None:
                return found
            if key.relation == "mdlink":
                return None
        found = self.lookup(key.target)
        if found is not None:
            return found
        if "." in posixpath.basename(key.target) and self._file_exists(key.target):
            return FILE
        return None

    def _file_exists(self, target: str) -> bool:
        """Whether TARGET (KB-relative; a leading `/` is the KB's root) is a file inside the KB (one
        that leaves it is answered without looking: is_regular_file_within never steps outside)."""
        rel = link_relpath(target)
        key = (self.root, rel)
        exists = self.probes.get(key)
        if exists is None:
            if self._real_root is None:
                self._real_root = os.path.realpath(self.root)
            exists = self.probes[key] = is_regular_file_within(self._real_root, rel)
        return exists

    def suggest(self, target: str) -> str | None:
        """A close id for a broken link's target, computed once per target."""
        if target not in self._suggested:
            size = len(target)
            pool = [i for i in self._neighbours(target) if abs(len(i) - size) <= max(2, size // 4)]
            found = difflib.get_close_matches(target, pool, n=1, cutoff=0.8)
            self._suggested[target] = found[0] if found else None
        return self._suggested[target]

    def _neighbours(self, target: str) -> set[str]:
        """The ids next to TARGET in alphabetical order, and in the order of their spelling read
        backwards. A near miss keeps its beginning or its end intact, so its id sorts close to it
        one way or the other; difflib, far too slow to compare with every id of a large KB, then
        compares only these."""
        if self._sorted is None:
            unique = list(dict.fromkeys(self.ids))
            self._sorted = (sorted(unique, key=str.casefold), sorted(unique, key=_backwards))
        found: set[str] = set()
        for ordered, order in zip(self._sorted, (str.casefold, _backwards), strict=True):
            at = bisect.bisect_left(ordered, order(target), key=order)
            found.update(ordered[max(0, at - _NEIGHBOURS) : at + _NEIGHBOURS])
        return found


@dataclass(slots=True)
class LinkGraph:
    """Every KB's index, and for each entry the entries that link to it."""

    indexes: dict[str, KBIndex]
    entries: list[EntryFacts] = field(default_factory=list)
    inlinks: dict[str, list[str]] = field(default_factory=dict)  # entry path → paths of distinct linkers
    linking: set[str] = field(default_factory=set)  # entries that link out: to another entry, or to nothing
    probes: dict[tuple[str, str], bool] = field(default_factory=dict)  # see KBIndex.probes
    _by_abs_path: dict[str, EntryFacts] | None = None

    @classmethod
    def of(cls, kbs: list[tuple[str, str, list[EntryFacts]]]) -> LinkGraph:
        """The graph of KBS: (name, root, facts) of each."""
        graph = cls(indexes={})
        for name, root, facts in kbs:
            index = graph.indexes.setdefault(name, KBIndex(name, root, graph.probes))
            for f in facts:
                index.add(f)
            graph.entries.extend(facts)
        return graph

    def resolve(self, facts: EntryFacts, key: LinkKey) -> EntryFacts | str | None:
        """What a link of FACTS resolves to: an entry, FILE, or None (also for a KB not in the run)."""
        return self.resolve_from(facts.kb_name, key)

    def resolve_from(self, kb_name: str, key: LinkKey) -> EntryFacts | str | None:
        """What a link of an entry of the KB named KB_NAME resolves to (see `resolve`)."""
        index = self.indexes.get(key.kb or kb_name)
        if index is None:
            return None
        if key.relation == "mdlink" and key.path is not None and key.path.startswith("../"):
            # a markdown link may leave its KB's folder: it names a file, wherever it is
            return self.entry_at(os.path.join(index.root, key.path))
        return index.resolve(key)

    def entry_at(self, path: str) -> EntryFacts | None:
        """The facts of the file at an absolute PATH, in any KB of the run."""
        if self._by_abs_path is None:  # built when first asked: most runs never need it
            self._by_abs_path = {os.path.normpath(f.path): f for f in self.entries}
        return self._by_abs_path.get(os.path.normpath(path))

    def type_of_target(self, facts: EntryFacts, key: LinkKey) -> str | None:
        """The type of the entry a link of FACTS resolves to (None for files and unresolved links)."""
        found = self.resolve(facts, key)
        return found.type if isinstance(found, EntryFacts) else None
