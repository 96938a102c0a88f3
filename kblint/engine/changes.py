"""--changed-since REF: the entries a run reports, and what their change may have made of others.

An unchanged entry can get an issue from another's change: a link of it may name an id or alias
the changed entry had at REF (or an entry deleted since), and it may be an orphan now that the
changed entry links to it no more, or lack the inlinks an item asks for. The names entries had at
REF make such links reported (`touched_names`); the entries that a changed or deleted entry linked
to at REF and links to no more get their graph issues reported (`linked_before`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from ..config import Settings
from ..model.entry import Entry, ParseFailure, build_entry, parse
from ..model.facts import EntryFacts
from ..model.graph import LinkGraph
from ..model.kbschema import load_cross_kb_links
from ..model.link import PackedLinks
from ..paths import relative_to, stem
from ..workspace import KB, Excluder, Workspace, not_an_entry
from .pass_entries import KBRun


@dataclass(slots=True)
class ChangedSince:
    """What changed since the revision, over every KB of the run."""

    # (KB, case-folded name) of each entry file changed or deleted since: the names it had then
    names_before: set[tuple[str, str]] = field(default_factory=set)
    earlier: dict[str, list[tuple[str, PackedLinks]]] = field(default_factory=dict)  # KB → (entry path, links then)
    given: dict[str, set[str] | None] = field(default_factory=dict)  # KB → the files named on the command line
    cross_before: dict[str, str] = field(default_factory=dict)  # KB → its cross-kb-links.yaml at REF, if it changed


def restrict_to_changed(ws: Workspace, ref: str, settings: Settings) -> ChangedSince:
    """Set each KB to report only its files changed since REF (the files named on the command line
    still, when its kb.yaml changed); keep what changed of its entries (ChangedSince)."""
    from ..history import changed_since

    since = ChangedSince()
    exclude = Excluder(settings.exclude)
    for kb in ws.kbs:
        changes = changed_since(ref, kb.root)
        given = since.given[kb.name] = kb.reported  # None: the whole KB
        _report_changed(kb, changes.changed, given)
        entries = set(kb.files)
        earlier = since.earlier[kb.name] = []
        for path, data in changes.earlier.items():
            if path == kb.cross_links_path or path == os.path.join(kb.root, "cross-kb-links.yaml"):
                since.cross_before[kb.name] = data.decode("utf-8", "replace")
                continue
            relpath = relative_to(path, kb.root)
            was_entry = (
                path in entries
                if path not in changes.deleted
                else not_an_entry(kb.root, relpath, exclude, settings.limits, respect_gitignore=False) is None
            )
            if not was_entry:
                continue  # a template, an excluded file, another KB's: it linked nowhere
            then = _entry_then(kb, path, relpath, data, settings)
            names = [then.id, *then.aliases] if then is not None else []
            if then is not None:
                earlier.append((path, PackedLinks.of(then.links)))
            if path in changes.deleted:  # a link may name it by its path, with or without .md
                names += [stem(relpath), relpath, relpath.removesuffix(".md")]
            since.names_before.update((kb.name, name.casefold()) for name in names)
    return since


def _entry_then(kb: KB, path: str, relpath: str, data: bytes, settings: Settings) -> Entry | None:
    """The entry DATA, the text of PATH at the revision, made (None when it did not parse)."""
    raw = parse(data, settings.limits)
    return None if isinstance(raw, ParseFailure) else build_entry(raw, kb.schema, path, relpath)[0]


def _report_changed(kb: KB, changed: set[str], given: set[str] | None) -> None:
    """The files of KB its run reports: those changed, of those named (GIVEN) if any; all of them
    when its kb.yaml changed, which may change what any entry is found with; and, when no file is
    named, a changed cross-kb-links.yaml, for its own issues."""
    if kb.schema.kb_yaml in changed:
        kb.reported = given
        return
    kb.reported = {p for p in kb.files if p in changed and (given is None or p in given)}
    if given is None and kb.cross_links_path is not None and kb.cross_links_path in changed:
        kb.reported.add(kb.cross_links_path)


def touched_names(runs: list[KBRun], since: ChangedSince) -> set[tuple[str, str]]:
    """(KB, case-folded name) of every entry that changed or was deleted, by its names now and then."""
    touched = set(since.names_before)
    for r in runs:
        for result in r.results:
            facts = result.facts
            if facts.reported:
                touched.update((r.kb.name, n.casefold()) for n in (facts.id, facts.stem, *facts.aliases) if n)
    return touched


def linked_before(runs: list[KBRun], since: ChangedSince, graph: LinkGraph) -> list[EntryFacts]:
    """The unreported entries that an entry changed or deleted since REF linked to at REF and links
    to no more (of the files named on the command line, when some were)."""
    found: dict[str, EntryFacts] = {}
    for r in runs:
        now = {res.facts.path: res.facts for res in r.results}
        for path, links in since.earlier.get(r.kb.name, ()):
            current = now.get(path)
            still = _targets(graph, r.kb.name, current.links) if current is not None and current.parsed else set()
            for target in _targets(graph, r.kb.name, links).values():
                given = since.given.get(target.kb_name)  # the files named of the target's KB
                if target.path not in still and not target.reported and (given is None or target.path in given):
                    found[target.path] = target
        for target in _cross_linked_before(r, since, graph):
            given = since.given.get(target.kb_name)
            if not target.reported and (given is None or target.path in given):
                found[target.path] = target
    return list(found.values())


def _cross_linked_before(r: KBRun, since: ChangedSince, graph: LinkGraph) -> list[EntryFacts]:
    """The entries at either end of a link the KB's cross-kb-links.yaml declared at REF and
    declares no more."""
    text = since.cross_before.get(r.kb.name)
    if text is None:
        return []
    now = {(c.source, c.target, c.target_kb) for c in r.kb.cross_links}
    _, then = load_cross_kb_links(r.kb.root, [], text)
    ends = []
    for c in then:
        if (c.source, c.target, c.target_kb) not in now:
            ends += [
                graph.indexes[k].lookup(name)
                for k, name in ((r.kb.name, c.source), (c.target_kb or r.kb.name, c.target))
                if k in graph.indexes
            ]
    return [e for e in ends if e is not None and e.parsed]


def _targets(graph: LinkGraph, kb_name: str, links: PackedLinks) -> dict[str, EntryFacts]:
    """The parsed entries LINKS of an entry of the KB named KB_NAME resolve to, by path."""
    found = {}
    for key in links.link_keys():
        target = graph.resolve_from(kb_name, key)
        if isinstance(target, EntryFacts) and target.parsed:
            found[target.path] = target
    return found
