"""An entry's links: `Link` as checkers see them, `PackedLinks` as the graph pass holds them."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any, NamedTuple, Protocol


class Link(NamedTuple):
    """One link of an entry (SPEC §3): checkers read `target`, `relation` and `kb`."""

    target: str
    relation: str
    kb: str | None  # None: the entry's own KB
    line: int
    column: int = 1
    path: str | None = None  # set when the link names a path: the KB-relative posix path of that file
    field: str | None = None  # the frontmatter key the link came from
    origin: str | None = None  # the file the link is written in, when not the entry (cross-kb-links.yaml)


_WIDTH = len(Link._fields)
_TARGET, _RELATION, _KB, _PATH, _ORIGIN = (
    Link._fields.index(n) for n in ("target", "relation", "kb", "path", "origin")
)


class LinkKey(NamedTuple):
    """What the graph pass looks up for a link, without making the Link."""

    at: int  # where the link is in its PackedLinks (for PackedLinks.link)
    target: str
    relation: str
    kb: str | None
    path: str | None
    origin: str | None


class PackedLinks:
    """An entry's links as one flat tuple of their fields. The graph pass holds the links of every
    entry of the workspace at once, and one tuple per entry takes half the memory of a tuple per link."""

    __slots__ = ("values",)

    def __init__(self, values: tuple[Any, ...] = ()):
        if len(values) % _WIDTH:
            raise ValueError("packed links of another shape")
        self.values = values

    @classmethod
    def of(cls, links: Iterable[Link]) -> PackedLinks:
        return cls(tuple([value for link in links for value in link]))

    def __len__(self) -> int:
        return len(self.values) // _WIDTH

    def __iter__(self) -> Iterator[Link]:
        values = self.values
        return (Link._make(values[i : i + _WIDTH]) for i in range(0, len(values), _WIDTH))

    def link_keys(self) -> Iterator[LinkKey]:
        """The LinkKey of each link."""
        values = self.values
        for i in range(0, len(values), _WIDTH):
            yield LinkKey(
                i, values[i + _TARGET], values[i + _RELATION], values[i + _KB], values[i + _PATH], values[i + _ORIGIN]
            )

    def link(self, at: int) -> Link:
        return Link._make(self.values[at : at + _WIDTH])

    def __eq__(self, other: object) -> bool:
        return isinstance(other, PackedLinks) and self.values == other.values

    def __hash__(self) -> int:
        return hash(self.values)

    def __repr__(self) -> str:
        return f"PackedLinks({list(self)!r})"


def link_key(link: Link, own_kb: str) -> tuple[str, str]:
    """What makes links distinct for counting (SPEC §3): the KB and the path or target they name."""
    return link.kb or own_kb, (link.path if link.path is not None else link.target)


class Named(Protocol):
    """What names an entry: its KB, id, file and aliases."""

    @property
    def kb_name(self) -> str: ...
    @property
    def id(self) -> str: ...
    @property
    def relpath(self) -> str: ...
    @property
    def stem(self) -> str: ...
    @property
    def aliases(self) -> Sequence[str]: ...


def own_names(entry: Named) -> frozenset[str]:
    """The names a link may use for ENTRY itself, case-folded: its id, file stem and aliases."""
    return frozenset([entry.id.casefold(), entry.stem.casefold(), *(a.casefold() for a in entry.aliases)])


def names_itself(kb: str, path: str | None, target: str, entry: Named, names: frozenset[str]) -> bool:
    """Whether a link into KB (resolved: never None), naming PATH or TARGET, names ENTRY itself
    (NAMES: own_names(entry))."""
    if kb != entry.kb_name:
        return False
    if path is not None and path == entry.relpath:
        return True
    return target.casefold() in names


def outlink_count(entry: Named, links: Iterable[Link]) -> int:
    """Distinct (KB, target) pairs among LINKS of ENTRY, not counting links to itself."""
    names = own_names(entry)
    own_kb = entry.kb_name
    return len(
        {
            link_key(link, own_kb)
            for link in links
            if not names_itself(link.kb or own_kb, link.path, link.target, entry, names)
        }
    )
