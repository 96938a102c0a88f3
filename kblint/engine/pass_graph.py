"""Pass 2: the link graph over every entry's EntryFacts — link resolution, inlinks, duplicate ids,
orphans — and then the checker and policy items that need the graph (SPEC §3, §8).

Bodies are never held here; only what pass 1 extracted (and what plugin checkers of the graph get
by re-reading their entries).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace

from ..checkers.base import CheckContext
from ..measures import EntryMeasures, FactsMeasures, WholeMeasures
from ..model.entry import Entry
from ..model.facts import EntryFacts
from ..model.graph import FILE, KBIndex, LinkGraph
from ..model.issue import Issue
from ..model.link import LinkKey
from ..model.plan import Plan
from ..model.suppression import Suppression
from ..rules import links as link_rules
from .checks import Subject, run_bindings


@dataclass(slots=True)
class GraphKB:
    """One KB's facts and what the graph pass needs beside them."""

    name: str
    root: str
    facts: list[EntryFacts]
    cross_links_path: str | None = None
    unmatched_cross_sources: list[tuple[str, int]] = field(default_factory=list)  # (source, line)
    cross_reported: bool = True  # the KB's cross-kb-links.yaml is reported on


@dataclass(slots=True)
class _LinkWalk:
    """Following every link of the workspace once: inlinks, who links out, and the link issues."""

    graph: LinkGraph
    strict_links: bool
    touched: set[tuple[str, str]] | None
    issues: list[Issue] = field(default_factory=list)

    def entry(self, kb: GraphKB, facts: EntryFacts) -> None:
        """Each link target of the entry once, at the first link to it; where the entry suppresses
        the link rules on some lines, at the first link to it on no such line, and at each link on
        one (whose issue the suppression then hides, and so is used)."""
        seen: set[tuple[str, str]] = set()
        indexes = self.graph.indexes
        hidden = [s for s in facts.suppress if s.name in _LINK_RULES]
        keys = list(facts.links.link_keys()) if hidden else None
        for key in keys if keys is not None else facts.links.link_keys():
            target_kb = key.kb or kb.name
            named = key.path if key.path is not None else key.target
            if (target_kb, named) in seen:
                continue
            seen.add((target_kb, named))
            for shown in _shown_links(key, keys, facts, hidden) if keys is not None else (key,):
                self.link(kb, facts, shown, target_kb, named, indexes.get(target_kb))

    def linked(self, facts: EntryFacts, resolved: EntryFacts | str) -> None:
        """FACTS links to RESOLVED (an entry, or FILE)."""
        if resolved is FILE or resolved is facts:
            return  # a file that is no entry, or the entry itself
        self.graph.linking.add(facts.path)
        if isinstance(resolved, EntryFacts):
            sources = self.graph.inlinks.setdefault(resolved.path, [])
            if not sources or sources[-1] is not facts.path:  # one entry's links come together: counted once
                sources.append(facts.path)

    def link(
        self, kb: GraphKB, facts: EntryFacts, key: LinkKey, target_kb: str, named: str, index: KBIndex | None
    ) -> None:
        resolved = self.graph.resolve(facts, key) if index is not None else None
        if resolved is not None:
            self.linked(facts, resolved)
            if (
                isinstance(resolved, EntryFacts)
                and index is not None
                and _noncanonical(key, resolved, index)
                and self._reported(kb, facts, key, target_kb)
            ):
                link = facts.links.link(key.at)
                self.issues.append(link_rules.noncanonical_link(facts, link, kb.name, target_kb, named, resolved))
            return
        self.graph.linking.add(facts.path)
        if self._reported(kb, facts, key, target_kb):
            self.issues.append(self._issue(kb, facts, key, target_kb, named, index))

    def _reported(self, kb: GraphKB, facts: EntryFacts, key: LinkKey, target_kb: str) -> bool:
        report = facts.reported if key.origin is None else kb.cross_reported
        if report or not self.touched:
            return report
        named = (key.target, key.path) if key.path is not None else (key.target,)
        return any((target_kb, name.casefold()) in self.touched for name in named)

    def _issue(
        self, kb: GraphKB, facts: EntryFacts, key: LinkKey, target_kb: str, named: str, index: KBIndex | None
    ) -> Issue:
        link = facts.links.link(key.at)
        if index is None:
            return link_rules.unresolved_external(facts, link, kb.name, target_kb, named, self.strict_links)
        return link_rules.broken_link(facts, link, kb.name, target_kb, named, index.suggest(link.target))


_LINK_RULES = frozenset(("broken_link", "noncanonical_link", "unresolved_external"))


def _shown_links(first: LinkKey, keys: list[LinkKey], facts: EntryFacts, hidden: list[Suppression]) -> list[LinkKey]:
    """The links to FIRST's target that get an issue: the first on a line no HIDDEN suppression
    covers, and each on a line one covers."""
    same = [key for key in keys if (key.kb, key.path, key.target) == (first.kb, first.path, first.target)]
    covered = [any(s.covers(facts.links.link(key.at).line) for s in hidden) for key in same]
    free = next((key for key, c in zip(same, covered, strict=True) if not c), None)
    return [key for key, c in zip(same, covered, strict=True) if c or key is free]


def _noncanonical(key: LinkKey, resolved: EntryFacts, index: KBIndex) -> bool:
    """Whether a link that resolved names its entry by another name than its id (a link to a
    path names a file, which is a name of its own). A name that several entries bear (an id two
    entries share, an alias of two, ids that differ only in case) names none of them for sure: no
    one entry's id can be offered in its place."""
    return (
        key.path is None
        and key.target != resolved.id
        and index.by_id.get(resolved.id) is resolved
        and "\n" not in resolved.id
        and key.target.casefold() not in index.shared
    )


def analyse(
    kbs: list[GraphKB], *, strict_links: bool = False, touched: set[tuple[str, str]] | None = None
) -> tuple[LinkGraph, list[Issue]]:
    """The link graph of KBS and the graph issues of the reported entries. TOUCHED (with
    --changed-since): (KB, case-folded name) of the entries that changed or were deleted; a link
    from an unchanged entry that names one of them is reported too, as is a duplicate id shared
    with a changed entry."""
    graph = LinkGraph.of([(kb.name, kb.root, kb.facts) for kb in kbs])
    walk = _LinkWalk(graph, strict_links, touched)
    for kb in kbs:
        for facts in kb.facts:
            if facts.parsed and facts.links:
                walk.entry(kb, facts)
        if kb.cross_links_path:
            walk.issues.extend(
                link_rules.unmatched_cross_source(kb.name, kb.cross_links_path, source, line)
                for source, line in kb.unmatched_cross_sources
                if kb.cross_reported or (touched and (kb.name, source.casefold()) in touched)
            )
    issues = walk.issues
    for kb in kbs:
        issues.extend(link_rules.duplicate_ids(kb.name, kb.facts, involve=touched is not None))
        issues.extend(orphans(graph, (f for f in kb.facts if f.reported)))
    return graph, issues


def orphans(graph: LinkGraph, entries: Iterable[EntryFacts]) -> list[Issue]:
    """An orphan_entry issue for each of ENTRIES that links nowhere and that nothing links to."""
    return [
        link_rules.orphan_entry(f)
        for f in entries
        if f.parsed and f.path not in graph.linking and not graph.inlinks.get(f.path)
    ]


def entry_links(
    graph: LinkGraph, kb: GraphKB, facts: EntryFacts, *, strict_links: bool = False
) -> tuple[list[Issue], bool]:
    """One entry's link issues as `analyse` finds them, and whether the entry links out (to anything
    but itself or a file that is no entry), against GRAPH as it stands; GRAPH's inlinks are left
    alone. For checking one entry again after it changed."""
    walk = _LinkWalk(replace(graph, inlinks={}, linking=set()), strict_links, None)
    if facts.parsed and facts.links:
        walk.entry(kb, facts)
    return walk.issues, facts.path in walk.graph.linking


def graph_checks(
    facts: EntryFacts,
    plan: Plan,
    context: CheckContext,
    graph: LinkGraph,
    whole_entry: Callable[[], Entry | None],
    previous: tuple[object, bool],
) -> list[Issue]:
    """The checker and policy items of PLAN that need the graph, on one entry of FACTS' type.
    WHOLE_ENTRY reads the entry again, called only for the items that need it (plugin checkers,
    graded items that measure the entry too); PREVIOUS: (status at --base, there is a --base)."""
    bindings = plan.graph_bindings(facts.type)
    if not bindings:
        return []
    checked: Entry | EntryFacts = facts
    measures = FactsMeasures(facts, graph.inlinks, graph.type_of_target)
    field_line: Callable[[str], int] = lambda name: 1  # noqa: E731 - the facts keep no lines
    if plan.graph_needs_whole_entry(facts.type):
        entry = whole_entry()
        if entry is not None:
            checked, field_line = entry, entry.field_line
            whole = EntryMeasures(entry, context.schema)
            measures = WholeMeasures(facts, graph.inlinks, graph.type_of_target, whole)
        else:  # gone since pass 1: what measures the entry itself is not run
            bindings = [b for b in bindings if not b.measures_whole_entry]
    subject = Subject(checked, facts, facts.site, context, measures, field_line, *previous)
    return run_bindings(bindings, subject)
