"""What policies measure: on an Entry in pass 1, on EntryFacts and the graph in pass 2."""

from __future__ import annotations

from .checkers.core import body_has_section, entry_words, names_self, outlink_count, self_names
from .graph import EntryFacts, GraphResult, link_key
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

    def links_count(self, name: str | None) -> int:
        facts = self.facts
        keys = set()
        own = self_names(facts)
        for link in facts.links:
            if names_self(link, facts, own):
                continue
            if name is None or link.relation == name or getattr(self.graph.resolve(facts, link), "type", None) == name:
                keys.add(link_key(link, facts.kb_name))
        return len(keys)

    def inlinks_count(self) -> int:
        return len(self.graph.inlinks.get(self.facts.path, ()))

    def metadata_count(self, field: str) -> int:  # pragma: no cover - entry subjects are measured in pass 1
        raise RuntimeError("metadata is measured in pass 1")

    tags_count = has_section = words = metadata_count
