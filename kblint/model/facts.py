"""EntryFacts: what the graph pass and the judgment pass know of an entry once pass 1 is over.

Small enough to hold for every entry of a 100,000-entry workspace: no body, no frontmatter.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from operator import attrgetter

from ..paths import stem
from ..rules import Site
from .link import PackedLinks
from .suppression import Suppression


@dataclass(slots=True)
class EntryFacts:
    """One file's identity, links and outcomes so far."""

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
    links: PackedLinks = field(default_factory=PackedLinks)
    # rubric outcomes so far, for the entry's score (SPEC §5.4)
    score_passed: float = 0.0
    score_total: float = 0.0
    judgment_items: int = 0  # judgment items that apply to the entry
    suppress: tuple[Suppression, ...] = ()  # the entry's suppressions
    grades: tuple[tuple[str, str, float], ...] = ()  # (item id, level id, score) of its graded items
    required_done: tuple[str, ...] = ()  # the ids of `required: true` items that have an outcome
    sketch: bytes = b""  # its title and body as likeness.sketch makes them; empty: not compared

    @property
    def stem(self) -> str:
        return stem(self.relpath)

    @property
    def site(self) -> Site:
        return Site(self.kb_name, self.path, self.id if self.parsed else None, self.type or None)


FACTS_FIELDS = tuple(EntryFacts.__dataclass_fields__)
FACTS_VALUES = attrgetter(*FACTS_FIELDS)
