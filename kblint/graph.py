"""Pass 2: the link graph over compact EntryFacts — link resolution, inlinks, duplicate ids,
orphans (SPEC §3, §8). Bodies are never held here; only what pass 1 extracted."""

from __future__ import annotations

import bisect
import difflib
import os
import posixpath
from collections import defaultdict
from dataclasses import field

from .entry import Link
from .issue import Issue
from .plainclass import dataclass
from .rules import RULES

LINK_FIELDS = len(Link._fields)
# where a link's fields stand in its LINK_FIELDS values of EntryFacts.packed_links
TARGET_AT, RELATION_AT, KB_AT, PATH_AT, ORIGIN_AT = (Link._fields.index(n) for n in ("target", "relation", "kb",
                                                                                    "path", "origin"))
_make_link = Link._make


def pack_links(links) -> tuple:
    """Links as one flat tuple of their fields (EntryFacts.packed_links)."""
    return tuple([value for link in links for value in link])


# "Did you mean": the ids on each side of a broken link's target, in each of two orders, that are
# compared with it
_NEIGHBOURS = 8


@dataclass(slots=True)
class EntryFacts:
    """What the graph pass needs to know about one file; small enough to keep for 100k entries."""

    kb_name: str
    path: str
    relpath: str
    parsed: bool
    reported: bool
    id: str = ""
    id_line: int = 1
    type: str = ""
    status: str | None = None
    aliases: tuple[str, ...] = ()
    # The entry's links, flattened into one tuple of their fields: the graph pass holds the links of
    # every entry at once, and one tuple takes half the memory of a tuple per link.
    packed_links: tuple = ()
    # rubric outcomes so far, for the entry's score (SPEC §5.4)
    score_passed: float = 0.0
    score_total: float = 0.0
    judgment_items: int = 0  # judgment items that apply to the entry (not evaluated without an LLM)
    suppress: tuple[tuple[str, int], ...] = ()  # (name, line) of the entry's suppressions

    @property
    def links(self) -> list[Link]:
        packed = self.packed_links
        return [_make_link(packed[i:i + LINK_FIELDS]) for i in range(0, len(packed), LINK_FIELDS)]

    @property
    def score(self) -> float:
        return self.score_passed / self.score_total if self.score_total else 1.0

    @property
    def stem(self) -> str:
        base = posixpath.basename(self.relpath)
        return base[:-3] if base.endswith(".md") else base


class KBIndex:
    """Lookup of a KB's entries by id, then file stem or alias (exact first, then case-insensitive),
    and by path. An id always wins over another entry's stem or alias."""

    def __init__(self, name: str, root: str, probes: dict[str, bool] | None = None):
        self.name = name
        self.root = root
        # every non-entry file a link was looked up as, and whether it exists: a run's outcome
        # depends on them as it does on the entries
        self.probes = probes if probes is not None else {}
        self.by_id: dict[str, EntryFacts] = {}
        self.by_name: dict[str, EntryFacts] = {}  # file stems and aliases
        self.by_id_folded: dict[str, EntryFacts] = {}
        self.by_name_folded: dict[str, EntryFacts] = {}
        self.by_path: dict[str, EntryFacts] = {}
        self.ids: list[str] = []
        self._suggested: dict[str, str | None] = {}
        # the ids in two orders for "did you mean", sorted when first needed
        self._forward: list[str] | None = None
        self._backward: list[str] | None = None

    def add(self, facts: EntryFacts) -> None:
        self.by_path[facts.relpath] = facts
        own = folded_own = None
        if facts.parsed:
            own = facts.id
            folded_own = _fold(own)
            self.by_id.setdefault(own, facts)
            self.by_id_folded.setdefault(folded_own, facts)
            self.ids.append(own)
        # A name equal to the entry's own id is answered by the id, which wins anyway: the index
        # of a 100,000-entry KB whose files are named by their ids stays half the size.
        for name in (facts.stem, *facts.aliases) if facts.parsed else (facts.stem,):
            if name != own:
                self.by_name.setdefault(name, facts)
            folded = _fold(name)
            if folded != folded_own:
                self.by_name_folded.setdefault(folded, facts)

    def lookup(self, target: str) -> EntryFacts | None:
        """By id, then file stem or alias; exactly, then case-insensitively."""
        found = self.by_id.get(target) or self.by_name.get(target)
        if found is None:
            folded = target.casefold()
            found = self.by_id_folded.get(folded) or self.by_name_folded.get(folded)
        return found

    def resolve(self, link: Link) -> EntryFacts | str | None:
        """The entry a link names, "file" for an existing non-entry file, or None."""
        if link.path is not None:
            found = self.by_path.get(link.path)
            if found is not None:
                return found
            if link.relation == "mdlink":
                return None
        found = self.lookup(link.target)
        if found is not None:
            return found
        if "." in posixpath.basename(link.target):
            path = os.path.join(self.root, link.target)
            exists = self.probes.get(path)
            if exists is None:
                exists = self.probes[path] = os.path.isfile(path)
            if exists:
                return "file"
        return None

    def suggest(self, target: str) -> str | None:
        """A close id for a broken link's target, computed once per target."""
        if target in self._suggested:
            return self._suggested[target]
        size = len(target)
        pool = [i for i in self._neighbours(target) if abs(len(i) - size) <= max(2, size // 4)]
        found = difflib.get_close_matches(target, pool, n=1, cutoff=0.8)
        near = self._suggested[target] = found[0] if found else None
        return near

    def _neighbours(self, target: str) -> set[str]:
        """The ids next to TARGET in alphabetical order, and in the order of their spelling read
        backwards. A near miss keeps its beginning or its end intact, so its id sorts close to it
        one way or the other; difflib, far too slow to compare with every id of a large KB, then
        compares only these."""
        if self._forward is None:
            unique = list(dict.fromkeys(self.ids))
            self._forward = sorted(unique, key=str.casefold)
            self._backward = sorted(unique, key=_backwards)
        found: set[str] = set()
        for ordered, key in ((self._forward, str.casefold), (self._backward, _backwards)):
            at = bisect.bisect_left(ordered, key(target), key=key)
            found.update(ordered[max(0, at - _NEIGHBOURS):at + _NEIGHBOURS])
        return found


def _backwards(name: str) -> str:
    return name.casefold()[::-1]


def _fold(name: str) -> str:
    """NAME case-folded; the same string object when folding changes nothing."""
    folded = name.casefold()
    return name if folded == name else folded


def _issue(rule: str, message: str, facts: EntryFacts | None, *, kb_name: str, path: str, line: int = 1,
           column: int = 1, field: str | None = None, discriminator: str = "", entry_id: str | None = None) -> Issue:
    spec = RULES[rule]
    return Issue(rule=rule, severity=spec.severity, tier=spec.tier, message=message, kb_name=kb_name,
                 entry_id=entry_id if entry_id is not None else (facts.id if facts else None), path=path,
                 line=line, column=column, field=field, discriminator=discriminator,
                 entry_type=facts.type if facts else None)


@dataclass(slots=True)
class GraphKB:
    """One KB's facts and what the graph pass needs beside them."""

    name: str
    root: str
    facts: list[EntryFacts]
    cross_links_path: str | None = None
    unmatched_cross_sources: list[tuple[str, int]] = field(default_factory=list)  # (source, line)
    cross_reported: bool = True


@dataclass(slots=True)
class GraphResult:
    """What the graph pass found: its issues, each entry's inlinks, and the indexes to resolve links."""

    issues: list[Issue]
    inlinks: dict[str, list[str]]  # entry path → paths of the (distinct) entries linking to it
    indexes: dict[str, "KBIndex"] = field(default_factory=dict)
    kbs: list[GraphKB] = field(default_factory=list)
    probes: dict[str, bool] = field(default_factory=dict)  # non-entry files links named: do they exist
    _by_abs_path: dict[str, EntryFacts] | None = None

    def resolve(self, facts: EntryFacts, link: Link) -> EntryFacts | None:
        """The entry a link of FACTS resolves to, if any (files and external links: None)."""
        kb = link.kb or facts.kb_name
        index = self.indexes.get(kb)
        if index is None:
            return None
        found = self.resolve_in(index, link)
        return found if found.__class__ is EntryFacts else None

    def resolve_packed(self, facts: EntryFacts, fields: tuple) -> EntryFacts | None:
        """resolve() for a link given by its FIELDS (as in EntryFacts.packed_links): a link that
        names an entry's id, as most do, is looked up without making it."""
        if fields[PATH_AT] is None and fields[ORIGIN_AT] is None:
            index = self.indexes.get(fields[KB_AT] or facts.kb_name)
            if index is not None:
                found = index.by_id.get(fields[TARGET_AT])
                if found is not None:
                    return found
        return self.resolve(facts, _make_link(fields))

    def resolve_in(self, index: KBIndex, link: Link) -> EntryFacts | str | None:
        """The entry LINK names in INDEX's KB, "file" for an existing non-entry file, or None."""
        if link.relation == "mdlink" and link.path is not None and link.path.startswith("../"):
            # a markdown link may leave its KB's folder: it names a file, wherever it is
            return self.entry_at(os.path.join(index.root, link.path))
        return index.resolve(link)

    def entry_at(self, path: str) -> EntryFacts | None:
        """The facts of the file at an absolute PATH, in any KB of the run."""
        if self._by_abs_path is None:  # built when first asked: most runs never need it
            self._by_abs_path = {os.path.normpath(f.path): f for kb in self.kbs for f in kb.facts}
        return self._by_abs_path.get(os.path.normpath(path))


def link_key(link: Link, own_kb: str) -> tuple[str, str]:
    kb = link.kb or own_kb
    return kb, (link.path if link.path is not None else link.target)


def analyse(kbs: list[GraphKB], *, strict_links: bool = False,
            touched: set[tuple[str, str]] | None = None) -> GraphResult:
    """The graph issues of the reported entries. TOUCHED (with --changed-since): (KB, casefolded
    name) of the entries that changed or were deleted; a link from an unchanged entry that names one
    of them is reported too, as is a duplicate id shared with a changed entry."""
    indexes: dict[str, KBIndex] = {}
    probes: dict[str, bool] = {}
    for kb in kbs:
        index = indexes.setdefault(kb.name, KBIndex(kb.name, kb.root, probes))
        for facts in kb.facts:
            index.add(facts)
    result = GraphResult(issues=[], inlinks={}, indexes=indexes, kbs=kbs, probes=probes)
    issues = result.issues
    inlinks = result.inlinks
    has_outlinks: set[str] = set()

    for kb in kbs:
        own_index = indexes[kb.name]
        for facts in kb.facts:
            packed = facts.packed_links
            if not packed or not facts.parsed:
                continue
            seen: set[tuple[str, str]] = set()
            from_path = facts.path
            for start in range(0, len(packed), LINK_FIELDS):
                target = packed[start + TARGET_AT]
                target_kb = packed[start + KB_AT] or kb.name
                link_path = packed[start + PATH_AT]
                key = (target_kb, link_path if link_path is not None else target)
                if key in seen:
                    continue
                seen.add(key)
                index = own_index if target_kb == kb.name else indexes.get(target_kb)
                resolved = None
                if link_path is None and index is not None and packed[start + ORIGIN_AT] is None:
                    resolved = index.by_id.get(target)  # most links name an id: found at once
                if resolved is None:
                    link = _make_link(packed[start:start + LINK_FIELDS])
                    where = link_origin(link, facts)
                    report = facts.reported if link.origin is None else kb.cross_reported
                    if not report and touched and (key[0], link.target.casefold()) in touched:
                        report = True
                    if index is None:
                        if not _is_self(link, facts, kb.name):
                            has_outlinks.add(from_path)
                        if report:
                            rule = "broken_link" if strict_links else "unresolved_external"
                            issues.append(_issue(rule, f"Link to '{target_kb}:{link.target}': KB '{target_kb}' is "
                                                       "not in this run", facts, kb_name=kb.name, path=where,
                                                 line=link.line, column=link.column, field=link.field,
                                                 discriminator=f"{target_kb}:{key[1]}"))
                        continue
                    resolved = result.resolve_in(index, link)
                    if resolved is None:
                        has_outlinks.add(from_path)
                        if report:
                            hint = index.suggest(link.target)
                            where_kb = "" if target_kb == kb.name else f" in KB '{target_kb}'"
                            issues.append(_issue("broken_link",
                                                 f"Link target '{link.target}' not found{where_kb}"
                                                 + (f"; did you mean '{hint}'?" if hint else ""),
                                                 facts, kb_name=kb.name, path=where, line=link.line,
                                                 column=link.column, field=link.field,
                                                 discriminator=f"{target_kb}:{key[1]}"))
                        continue
                if resolved.__class__ is str or resolved is facts:
                    continue  # a file that is no entry, or the entry itself
                has_outlinks.add(from_path)
                sources = inlinks.get(resolved.path)
                if sources is None:
                    inlinks[resolved.path] = [from_path]
                elif sources[-1] is not from_path:  # one entry's links come together: counted once
                    sources.append(from_path)

        for source, line in kb.unmatched_cross_sources:
            if kb.cross_reported and kb.cross_links_path:
                issues.append(_issue("broken_link", f"cross-kb-links.yaml: source '{source}' is not an entry of "
                                                    f"KB '{kb.name}'", None, kb_name=kb.name,
                                     path=kb.cross_links_path, line=line, discriminator=f"source:{source}"))

    for kb in kbs:
        issues.extend(_duplicates(kb, involve=touched is not None))
        for facts in kb.facts:
            if facts.parsed and facts.reported and facts.path not in has_outlinks and not inlinks.get(facts.path):
                issues.append(_issue("orphan_entry", f"Entry '{facts.id}' has no links in or out", facts,
                                     kb_name=kb.name, path=facts.path))
    return result


def link_origin(link: Link, facts: EntryFacts) -> str:
    return link.origin if link.origin is not None else facts.path


def _is_self(link: Link, facts: EntryFacts, kb_name: str) -> bool:
    return (link.kb or kb_name) == facts.kb_name and link.target in (facts.id, facts.stem)


def _duplicates(kb: GraphKB, involve: bool = False) -> list[Issue]:
    groups: dict[str, list[EntryFacts]] = defaultdict(list)
    for facts in kb.facts:
        if facts.parsed:
            groups[facts.id].append(facts)
    issues = []
    for entry_id, members in groups.items():
        if len(members) < 2:
            continue
        involved = involve and any(m.reported for m in members)
        for facts in members:
            if not facts.reported and not involved:
                continue
            others = ", ".join(_display(o.path) for o in members if o is not facts)
            issues.append(_issue("duplicate_id", f"Duplicate id '{entry_id}' (also in {others})", facts,
                                 kb_name=kb.name, path=facts.path, line=facts.id_line, field="id",
                                 discriminator=entry_id))
    return issues


def _display(path: str) -> str:
    try:
        return os.path.relpath(path).replace(os.sep, "/")
    except ValueError:
        return path
