"""What policies measure: on an Entry in pass 1, on EntryFacts and the graph in pass 2."""

from __future__ import annotations

from .checkers.core import body_has_section, entry_words, names_self_by_fields, outlink_count, self_names
from .graph import KB_AT, LINK_FIELDS, PATH_AT, RELATION_AT, TARGET_AT, EntryFacts, GraphResult
from .rules.fields import is_url
from .rules.common import is_empty


def count_values(value, url_only: bool = False) -> int:
    """Non-empty values: a list counts its non-empty members, a scalar 1, missing 0 (SPEC §6)."""
    members = value if isinstance(value, list) else [value]
    members = [m for m in members if not is_empty(m)]
    if url_only:
        members = [m for m in members if is_url(m)]
    return len(members)


class EntryMeasures:
    def __init__(self, entry, schema):
        self.entry = entry
        self.schema = schema
        self.status = entry.status

    def metadata_count(self, field: str) -> int:
        ts = self.schema.types.get(self.entry.type)
        spec = ts.fields.get(field) if ts is not None else None
        return count_values(self.entry.metadata.get(field), url_only=spec is not None and spec.type == "url")

    def links_count(self, name: str | None) -> int:
        return outlink_count(self.entry)

    def tags_count(self) -> int:
        return len(self.entry.tags)

    def has_section(self, heading: str) -> bool:
        return body_has_section(self.entry, {"heading": heading}, None) is None

    def words(self) -> int:
        return entry_words(self.entry)

    def inlinks_count(self) -> int:  # pragma: no cover - graph subjects are measured in pass 2
        raise RuntimeError("inlinks are measured after the graph pass")


class FactsMeasures:
    """Graph subjects (links.NAME, inlinks) measured on an entry's facts after the graph pass."""

    def __init__(self, facts: EntryFacts, graph: GraphResult):
        self.facts = facts
        self.graph = graph
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
        packed = facts.packed_links
        own_kb = facts.kb_name
        own = self_names(facts) if packed else frozenset()
        keys = set()
        for start in range(0, len(packed), LINK_FIELDS):
            target = packed[start + TARGET_AT]
            kb = packed[start + KB_AT] or own_kb
            path = packed[start + PATH_AT]
            if names_self_by_fields(kb, path, target, facts, own):
                continue
            if name is None or packed[start + RELATION_AT] == name or getattr(
                    self.graph.resolve_packed(facts, packed[start:start + LINK_FIELDS]), "type", None) == name:
                keys.add((kb, path if path is not None else target))
        return len(keys)

    def inlinks_count(self) -> int:
        return len(self.graph.inlinks.get(self.facts.path, ()))

    def metadata_count(self, field: str) -> int:  # pragma: no cover - entry subjects are measured in pass 1
        raise RuntimeError("metadata is measured in pass 1")

    tags_count = has_section = words = metadata_count
