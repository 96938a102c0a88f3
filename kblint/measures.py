"""What policies measure (SPEC §6): on the whole entry in pass 1, on its facts and the link graph
after the graph pass. Both implement `policy.Measures`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .checkers.core import has_section
from .model.entry import Entry, is_empty
from .model.facts import EntryFacts
from .model.kbschema import KBSchema
from .model.link import LinkKey, names_itself, own_names
from .rules.fields import is_url


def count_values(value: Any, url_only: bool = False) -> int:
    """Non-empty values: a list counts its non-empty members, a scalar 1, missing 0 (SPEC §6)."""
    members = value if isinstance(value, list) else [value]
    members = [m for m in members if not is_empty(m)]
    if url_only:
        members = [m for m in members if is_url(m)]
    return len(members)


class EntryMeasures:
    """An entry's measures in pass 1: metadata, tags, sections, words and all its outgoing links."""

    def __init__(self, entry: Entry, schema: KBSchema):
        self.entry = entry
        self.schema = schema
        self.status = entry.status

    def metadata_count(self, field: str) -> int:
        ts = self.schema.types.get(self.entry.type)
        spec = ts.fields.get(field) if ts is not None else None
        return count_values(self.entry.metadata.get(field), url_only=spec is not None and spec.type == "url")

    def links_count(self, name: str | None) -> int:
        return self.entry.outlink_count

    def tags_count(self) -> int:
        return len(self.entry.tags)

    def has_section(self, heading: str) -> bool:
        return has_section(self.entry, heading)

    def words(self, up_to: int) -> int:
        """The body's words, counted no further than UP_TO (every word when UP_TO is negative)."""
        return self.entry.words_up_to(up_to) if up_to >= 0 else self.entry.word_count

    def inlinks_count(self) -> int:
        raise RuntimeError("inlinks are measured after the graph pass")


TypeOfTarget = Callable[[EntryFacts, LinkKey], "str | None"]


class FactsMeasures:
    """An entry's graph measures after the graph pass: links by relation or target type, inlinks."""

    def __init__(self, facts: EntryFacts, inlinks: dict[str, list[str]], type_of_target: TypeOfTarget):
        self.facts = facts
        self.inlinks = inlinks
        self.type_of_target = type_of_target
        self.status = facts.status
        self._links_counts: dict[str | None, int] = {}  # several items of a type may count one NAME

    def links_count(self, name: str | None) -> int:
        """Distinct (KB, target) pairs of the entry's links of relation NAME or to entries of type
        NAME (every link when NAME is None), not counting links to itself."""
        count = self._links_counts.get(name)
        if count is None:
            count = self._links_counts[name] = self._count_links(name)
        return count

    def _count_links(self, name: str | None) -> int:
        facts = self.facts
        names = own_names(facts) if facts.links else frozenset()
        keys = set()
        for key in facts.links.link_keys():
            kb = key.kb or facts.kb_name
            if names_itself(kb, key.path, key.target, facts, names):
                continue
            if name is None or key.relation == name or self.type_of_target(facts, key) == name:
                keys.add((kb, key.path if key.path is not None else key.target))
        return len(keys)

    def inlinks_count(self) -> int:
        return len(self.inlinks.get(self.facts.path, ()))

    def metadata_count(self, field: str) -> int:
        raise RuntimeError("metadata is measured in pass 1")

    def tags_count(self) -> int:
        raise RuntimeError("tags are measured in pass 1")

    def has_section(self, heading: str) -> bool:
        raise RuntimeError("sections are measured in pass 1")

    def words(self, up_to: int) -> int:
        raise RuntimeError("words are measured in pass 1")


class WholeMeasures(FactsMeasures):
    """An entry's measures after the graph pass when it was read again: its graph measures, and
    what pass 1 measures on the entry itself (for a graded item whose levels ask for both)."""

    def __init__(
        self, facts: EntryFacts, inlinks: dict[str, list[str]], type_of_target: TypeOfTarget, entry: EntryMeasures
    ):
        super().__init__(facts, inlinks, type_of_target)
        self.entry = entry

    def metadata_count(self, field: str) -> int:
        return self.entry.metadata_count(field)

    def tags_count(self) -> int:
        return self.entry.tags_count()

    def has_section(self, heading: str) -> bool:
        return self.entry.has_section(heading)

    def words(self, up_to: int) -> int:
        return self.entry.words(up_to)
