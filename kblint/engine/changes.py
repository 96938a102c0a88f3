"""--changed-since REF: the entries a run reports, and the names a changed or deleted entry had,
with which links from unchanged entries are checked again.

An unchanged entry can get an issue from another's change: it may be an orphan now that the
changed entry links to it no more, or lack the inlinks an item asks for. The entries that a
changed or deleted entry linked to at REF get their graph issues reported too (`linked_before`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..model.entry import ParseFailure, build_entry, parse
from ..model.facts import EntryFacts
from ..model.graph import LinkGraph
from ..model.link import PackedLinks
from ..paths import relative_to, stem
from ..workspace import Workspace
from .pass_entries import KBRun


@dataclass(slots=True)
class ChangedSince:
    """What changed since the revision, over every KB of the run."""

    deleted_names: set[tuple[str, str]] = field(default_factory=set)  # (KB, case-folded name)
    earlier: dict[str, list[tuple[str, bytes]]] = field(default_factory=dict)  # KB → (path, text at REF)


def restrict_to_changed(ws: Workspace, ref: str) -> ChangedSince:
    """Report only the files changed since REF (every file of a KB whose kb.yaml changed); keep the
    (KB, case-folded name) of each entry file deleted since then, by its stem, its path and the id
    and aliases it had at REF, and the text at REF of each entry file changed or deleted."""
    from ..history import changed_since

    since = ChangedSince()
    for kb in ws.kbs:
        changes = changed_since(ref, kb.root)
        changed = changes.changed
        given = kb.reported  # the files named on the command line; None: the whole KB
        # a changed kb.yaml may change what any entry of its KB is found with: the whole KB is reported
        if given is not None or kb.schema.kb_yaml not in changed:
            kb.reported = {p for p in kb.files if p in changed and (given is None or p in given)}
        if given is None and kb.reported is not None:  # a changed cross-kb-links.yaml: its own issues are new
            kb.reported.update(p for p in (kb.cross_links_path,) if p is not None and p in changed)
        for path, earlier in changes.deleted.items():
            if path.endswith(".md"):
                relpath = relative_to(path, kb.root)  # a link may name it by its path, with or without .md
                names = [stem(relpath), relpath, relpath.removesuffix(".md"), *earlier]
                since.deleted_names.update((kb.name, name.casefold()) for name in names)
        since.earlier[kb.name] = list(changes.earlier.items())
    return since


def touched_names(runs: list[KBRun], since: ChangedSince) -> set[tuple[str, str]]:
    """(KB, case-folded name) of every entry that changed or was deleted."""
    touched = set(since.deleted_names)
    for r in runs:
        for result in r.results:
            facts = result.facts
            if facts.reported:
                touched.update((r.kb.name, n.casefold()) for n in (facts.id, facts.stem, *facts.aliases) if n)
    return touched


def linked_before(runs: list[KBRun], since: ChangedSince, graph: LinkGraph) -> list[EntryFacts]:
    """The unreported entries that an entry changed or deleted since REF linked to at REF."""
    found: dict[str, EntryFacts] = {}
    for r in runs:
        for path, data in since.earlier.get(r.kb.name, ()):
            raw = parse(data, r.ctx.limits)
            if isinstance(raw, ParseFailure):
                continue
            entry, _ = build_entry(raw, r.ctx.schema, path, relative_to(path, r.kb.root))
            for key in PackedLinks.of(entry.links).link_keys():
                target = graph.resolve_from(r.kb.name, key)
                if isinstance(target, EntryFacts) and not target.reported and target.parsed:
                    found[target.path] = target
    return list(found.values())
