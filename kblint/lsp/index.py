"""The link graph of the held workspace, kept as a fresh run would build it while entries change
one at a time.

The graph pass (kblint.engine.pass_graph) builds the graph of a run once. The language server
builds it the same way when it starts, then swaps one entry's facts at a time: the index slots of
the names the entry had and has are worked out again from every entry that bears those names
(the first one in the KB's file order wins, as in a run), and the entries whose links name them
are resolved again, so that every entry's inlinks stay what a run would count.
"""

from __future__ import annotations

import bisect
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from ..model.facts import EntryFacts
from ..model.graph import KBIndex, LinkGraph


def names_of(facts: EntryFacts) -> tuple[str, ...]:
    """The names links may use for an entry: its id (once parsed), its file stem and aliases."""
    return (facts.id, facts.stem, *facts.aliases) if facts.parsed else (facts.stem,)


def identity(facts: EntryFacts) -> tuple[object, ...]:
    """What the checks of other entries see of an entry: the names it answers to and its type."""
    return (facts.parsed, facts.id, facts.relpath, facts.aliases, facts.type)


@dataclass(slots=True)
class Change:
    """The entries a swap of one entry's facts may have changed the graph issues of."""

    relinked: set[str] = field(default_factory=set)  # their links name the entry: resolved again
    inlinks: set[str] = field(default_factory=set)  # they gained or lost a linker
    same_id: set[str] = field(default_factory=set)  # they share the entry's old or new id
    suggested: set[str] = field(default_factory=set)  # a broken link's "did you mean" may have changed

    def others(self, path: str) -> set[str]:
        return (self.relinked | self.inlinks | self.same_id | self.suggested) - {path}


class LiveGraph:
    """A LinkGraph with what it takes to change it one entry at a time: who bears each name, and
    who links to each name and path."""

    def __init__(self, graph: LinkGraph, facts: Iterable[EntryFacts]):
        self.graph = graph
        self.facts: dict[str, EntryFacts] = {}  # path → the entry's facts
        self.holders: dict[str, dict[str, list[EntryFacts]]] = {}  # KB → case-folded name → its bearers
        # target KB → case-folded target name, or absolute path of a path link → paths of the linkers
        self.linkers: dict[str, dict[str, list[str]]] = {}
        for f in facts:
            self._add(f)
        graph.entries = []
        graph._by_abs_path = self.facts  # links that leave their KB by path find the held entries

    # -- what an entry names and is named by

    def _link_keys(self, facts: EntryFacts) -> set[tuple[str, str]]:
        keys = set()
        for key in facts.links.link_keys():
            target_kb = key.kb or facts.kb_name
            keys.add((target_kb, key.target.casefold()))
            index = self.graph.indexes.get(target_kb)
            if key.path is not None and index is not None:
                keys.add((target_kb, os.path.normpath(os.path.join(index.root, key.path))))
        return keys

    def linkers_of(self, facts: EntryFacts) -> set[str]:
        """The entries whose links name FACTS' entry (by one of its names or by its path)."""
        found: set[str] = set()
        own = self.linkers.get(facts.kb_name, {})
        for name in names_of(facts):
            found.update(own.get(name.casefold(), ()))
        for by_key in self.linkers.values():
            found.update(by_key.get(facts.path, ()))
        return found

    def bearers(self, kb: str, name: str) -> list[EntryFacts]:
        """The entries of KB that answer to NAME (case-insensitively), in the KB's file order."""
        return sorted(self.holders.get(kb, {}).get(name.casefold(), ()), key=_path)

    def targets(self, facts: EntryFacts) -> set[str]:
        """The entries FACTS' links resolve to (not the entry itself), as the graph stands."""
        found = set()
        for key in facts.links.link_keys():
            resolved = self.graph.resolve(facts, key)
            if isinstance(resolved, EntryFacts) and resolved.path != facts.path:
                found.add(resolved.path)
        return found

    # -- changing one entry

    def replace(self, path: str, new: EntryFacts | None) -> Change:
        """Swap the facts held for PATH for NEW (None: the entry is gone)."""
        old = self.facts.get(path)
        change = Change()
        relink = {path}
        if old is None or new is None or identity(old) != identity(new):
            for f in (old, new):
                if f is not None:
                    # who links to it, and to whatever else bears its id: which of them the id names
                    # decides whether their links name their entry by its id (noncanonical_link)
                    for bearer in [f, *self.bearers(f.kb_name, f.id)] if f.parsed else [f]:
                        relink |= self.linkers_of(bearer)
        before = {p: self.targets(self.facts[p]) for p in relink if p in self.facts}
        for p, targets in before.items():
            for t in targets:
                self._unlink(t, p)
        if old is not None:
            self._remove(old)
        if new is not None:
            self._add(new)
        change.suggested = self._reslot(old, new)
        after = {p: self.targets(self.facts[p]) for p in relink if p in self.facts}
        for p, targets in after.items():
            for t in targets:
                self._link(t, p)
        change.relinked = relink - {path}
        for p in relink:
            change.inlinks |= before.get(p, set()) ^ after.get(p, set())
        for f in (old, new):
            if f is not None and f.parsed:
                change.same_id.update(b.path for b in self.bearers(f.kb_name, f.id) if b.parsed and b.id == f.id)
        return change

    def _link(self, target: str, linker: str) -> None:
        sources = self.graph.inlinks.setdefault(target, [])
        if linker not in sources:
            sources.append(linker)

    def _unlink(self, target: str, linker: str) -> None:
        sources = self.graph.inlinks.get(target)
        if sources and linker in sources:
            sources.remove(linker)
            if not sources:
                del self.graph.inlinks[target]

    def _add(self, facts: EntryFacts) -> None:
        self.facts[facts.path] = facts
        holders = self.holders.setdefault(facts.kb_name, {})
        for name in {n.casefold() for n in names_of(facts)}:
            holders.setdefault(name, []).append(facts)
        for kb, key in self._link_keys(facts):
            self.linkers.setdefault(kb, {}).setdefault(key, []).append(facts.path)

    def _remove(self, facts: EntryFacts) -> None:
        del self.facts[facts.path]
        holders = self.holders.get(facts.kb_name, {})
        for name in {n.casefold() for n in names_of(facts)}:
            bearers = holders.get(name, [])
            if facts in bearers:
                bearers.remove(facts)
            if not bearers:
                holders.pop(name, None)
        for kb, key in self._link_keys(facts):
            paths = self.linkers.get(kb, {}).get(key, [])
            if facts.path in paths:
                paths.remove(facts.path)
            if not paths:
                self.linkers.get(kb, {}).pop(key, None)

    def _reslot(self, old: EntryFacts | None, new: EntryFacts | None) -> set[str]:
        """The index slots of every name OLD had and NEW has, as KBIndex.add would fill them if
        the KB's entries were added again in their order. The entries with a link to a name
        whose suggestion (a broken link's "did you mean") may have changed."""
        suggested: set[str] = set()
        for facts in (old, new):
            if facts is None:
                continue
            index = self.graph.indexes[facts.kb_name]
            if facts is old and index.by_path.get(facts.relpath) is old:
                del index.by_path[facts.relpath]
            if facts is new:
                index.by_path[facts.relpath] = new
            for folded in {n.casefold() for n in names_of(facts)}:
                _fill(index, folded, set(names_of(facts)), self.bearers(facts.kb_name, folded))
        same = (
            old is not None
            and new is not None
            and (old.kb_name, old.parsed, old.id) == (new.kb_name, new.parsed, new.id)
        )
        if not same:
            for kb in {f.kb_name for f in (old, new) if f is not None}:
                gone = old if old is not None and old.kb_name == kb else None
                came = new if new is not None and new.kb_name == kb else None
                for target in _ids_changed(self.graph.indexes[kb], gone, came):
                    suggested.update(self.linkers.get(kb, {}).get(target.casefold(), ()))
        return suggested


def _path(facts: EntryFacts) -> str:
    return facts.path


def _fill(index: KBIndex, folded: str, exact: set[str], bearers: list[EntryFacts]) -> None:
    """The slots of the names that fold to FOLDED, from their BEARERS in file order."""
    if len({id(b) for b in bearers}) > 1:  # as KBIndex.add counts them: no fix names one of them
        index.shared.add(folded)
    else:
        index.shared.discard(folded)
    spellings = {n for n in exact if n.casefold() == folded}
    spellings.update(n for b in bearers for n in names_of(b) if n.casefold() == folded)
    for name in spellings:
        _set(index.by_id, name, _first(b for b in bearers if b.parsed and b.id == name))
        _set(index.by_name, name, _first(b for b in bearers if name in _other_names(b) and name != _own(b)))
    _set(index.by_id_folded, folded, _first(b for b in bearers if b.parsed and b.id.casefold() == folded))
    _set(
        index.by_name_folded,
        folded,
        _first(
            b
            for b in bearers
            if folded in {n.casefold() for n in _other_names(b)} and folded != (_own(b) or "").casefold()
        ),
    )


def _other_names(facts: EntryFacts) -> tuple[str, ...]:
    """The names of an entry besides its id: its stem, and its aliases once parsed."""
    return (facts.stem, *facts.aliases) if facts.parsed else (facts.stem,)


def _own(facts: EntryFacts) -> str | None:
    return facts.id if facts.parsed else None


def _first(found: Iterator[EntryFacts]) -> EntryFacts | None:
    return next(found, None)


def _set(slots: dict[str, EntryFacts], name: str, facts: EntryFacts | None) -> None:
    if facts is None:
        slots.pop(name, None)
    else:
        slots[name] = facts


def _ids_changed(index: KBIndex, old: EntryFacts | None, new: EntryFacts | None) -> set[str]:
    """An entry's id came or went: the ids a broken link's suggestion is chosen from change (kept
    in their two orders, which would take a sort of every id of the KB to make again). The targets
    suggested for before whose suggestion may now be another: those whose neighbours changed."""
    asked = {t: index._neighbours(t) for t in index._suggested}  # suggest() picks among them alone
    if old is not None and old.parsed and old.id in index.ids:
        index.ids.remove(old.id)
        if index._sorted is not None and old.id not in index.ids:
            for ordered, order in zip(index._sorted, _ORDERS, strict=True):
                at = bisect.bisect_left(ordered, order(old.id), key=order)
                while at < len(ordered) and ordered[at] != old.id and order(ordered[at]) == order(old.id):
                    at += 1
                if at < len(ordered) and ordered[at] == old.id:
                    del ordered[at]
    if new is not None and new.parsed:
        if index._sorted is not None and new.id not in index.ids:
            for ordered, order in zip(index._sorted, _ORDERS, strict=True):
                bisect.insort(ordered, new.id, key=order)
        index.ids.append(new.id)
    changed = {t for t, neighbours in asked.items() if index._neighbours(t) != neighbours}
    for target in changed:
        del index._suggested[target]
    return changed


def _backwards(name: str) -> str:
    return name.casefold()[::-1]


_ORDERS = (str.casefold, _backwards)  # the two orders of KBIndex's ids (kblint.model.graph)
