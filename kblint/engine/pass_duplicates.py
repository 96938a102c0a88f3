"""Entries compared with each other (after the graph pass): pairs that share a title or an alias,
or whose bodies are near-identical, each one `possible_duplicate` on the newer-looking entry.

Pass 1 left each entry a sketch (`kblint.model.likeness`); entries that agree on a band of it, or
bear one name, are candidate pairs. A candidate is then measured exactly, from the two files read
again: the cost grows with the entries and the pairs found, not with every pair there could be.
An entry given to be added (`--stdin`, a file outside its KB) is also paired with the entries it
resembles below the threshold: with an LLM, the closest of them are classified (pass 3).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from ..config import DuplicateSettings
from ..model.facts import EntryFacts
from ..model.issue import Issue
from ..model.likeness import BANDS, bands_of, name_hash, name_key, shingles, similarity, title_hash_of, words
from ..rules import duplicates as duplicate_rules
from .pass_entries import KBContext, KBRun, read_entry

RELATED = 0.3  # a newcomer's neighbour at or above this similarity is classified by an LLM, if there is one
_NEIGHBOURS = 1000  # a newcomer is measured against at most this many entries
_READ_AHEAD = 256  # entries read again kept at once while pairs are measured


@dataclass(slots=True)
class Member:
    """An entry that takes part in the comparison."""

    ctx: KBContext
    facts: EntryFacts
    data: bytes | None = None  # a newcomer's text, when it does not come from a file
    newcomer: bool = False  # given to be added: the newer of any pair, compared with more of the KB


@dataclass(slots=True)
class Pair:
    """Two entries found alike: the issue goes on NEWER, and names OLDER."""

    newer: Member
    older: Member
    similarity: float | None  # of the bodies; None when one of them is too short to compare
    name: str  # the name both bear (normalised), or ""
    alike: bool  # at or above the threshold, or one name: a possible duplicate (else a newcomer's neighbour)


@dataclass(slots=True)
class _Read:
    """What the measure of a pair needs of one entry, read again."""

    names: frozenset[str]
    shingles: set[int] | None  # None: a body shorter than min_words
    dated: str  # its newest date in the frontmatter, as text ("" when none)


def members(runs: list[KBRun]) -> list[list[Member]]:
    """The entries of each KB that have a sketch, the KB's files first, then its newcomers."""
    found = []
    for r in runs:
        kb_members = [Member(r.ctx, res.facts) for res in r.results[: len(r.kb.files)] if res.facts.sketch]
        for cand, res in zip(r.kb.candidates, r.results[len(r.kb.files) :], strict=True):
            if res.facts.sketch:
                kb_members.append(Member(r.ctx, res.facts, cand.data, newcomer=cand.gated))
        found.append(kb_members)
    return found


def find(runs: list[KBRun], settings: DuplicateSettings) -> list[Pair]:
    """Every pair of alike entries (and the newcomers' neighbours), in the order of the files."""
    by_kb = members(runs)
    groups = [[m for kb in by_kb for m in kb]] if settings.scope == "workspace" else by_kb
    pairs: list[Pair] = []
    for group in groups:
        if len(group) > 1:
            pairs.extend(_measured(group, sorted(_candidates(group)), settings))
    return pairs


def _candidates(group: list[Member]) -> set[tuple[int, int]]:
    """(i, j), i < j: pairs of GROUP that share a name or a band. Of the entries that share one,
    each is paired with the first only, so that a thousand copies make a thousand pairs, not half a
    million; a newcomer is paired with every entry it shares one with (up to a bound)."""
    pairs: set[tuple[int, int]] = set()
    _chain(pairs, (_names(m.facts) for m in group))
    bands = [bands_of(m.facts.sketch) for m in group]
    for b in range(BANDS):
        _chain(pairs, ((bs[b],) if bs else () for bs in bands))
    newcomers = [i for i, m in enumerate(group) if m.newcomer]
    if newcomers:
        pairs.update(_newcomer_pairs(group, bands, newcomers))
    return pairs


def _names(facts: EntryFacts) -> tuple[int, ...]:
    keys = {title_hash_of(facts.sketch), *(name_hash(a) for a in facts.aliases)}
    keys.discard(0)
    return tuple(keys)


def _chain(pairs: set[tuple[int, int]], keys_of: Iterable[tuple[int, ...]]) -> None:
    """Pair each member with the first member that had one of its keys."""
    first: dict[int, int] = {}
    for i, keys in enumerate(keys_of):
        for key in keys:
            j = first.setdefault(key, i)
            if j != i:
                pairs.add((j, i))


def _newcomer_pairs(
    group: list[Member], bands: list[tuple[int, ...]], newcomers: list[int]
) -> Iterator[tuple[int, int]]:
    """Each newcomer with every entry that shares a band or a name with it (at most a bounded number)."""
    wanted = {(b, bands[n][b]): n for n in newcomers if bands[n] for b in range(BANDS)}
    names = {key: n for n in newcomers for key in _names(group[n].facts)}
    found = dict.fromkeys(newcomers, 0)
    for i, bs in enumerate(bands):
        hits = {wanted.get((b, bs[b])) for b in range(BANDS)} if bs else set()
        hits.update(names.get(key) for key in _names(group[i].facts))
        for n in hits:
            if n is not None and n != i and found[n] < _NEIGHBOURS:
                found[n] += 1
                yield (min(i, n), max(i, n))


def _measured(group: list[Member], candidates: list[tuple[int, int]], settings: DuplicateSettings) -> Iterator[Pair]:
    """The candidates that are alike (or a newcomer's neighbours), measured from the files."""
    reads: OrderedDict[int, _Read | None] = OrderedDict()
    for i, j in candidates:
        a, b = _read(group, i, reads, settings), _read(group, j, reads, settings)
        if a is None or b is None:
            continue  # a file that changed or went away since pass 1: it is not compared
        shared = sorted(a.names & b.names)
        sim = similarity(a.shingles, b.shingles) if a.shingles is not None and b.shingles is not None else None
        alike = bool(shared) or (sim is not None and sim >= settings.threshold)
        newcomer = group[i].newcomer or group[j].newcomer
        if alike or (newcomer and sim is not None and sim >= RELATED):
            newer, older = _newer_first(group[i], a, group[j], b)
            yield Pair(newer, older, sim, shared[0] if shared else "", alike)


def _read(
    group: list[Member], i: int, reads: OrderedDict[int, _Read | None], settings: DuplicateSettings
) -> _Read | None:
    found = reads.get(i)
    if found is not None or i in reads:
        reads.move_to_end(i)
        return found
    m = group[i]
    entry = read_entry(m.ctx, m.facts, m.data)
    read = None
    if entry is not None:
        names = {name_key(n) for n in (entry.title or "", *entry.aliases)}
        names.discard("")
        body_words = words(entry.body)
        dates = [str(entry.metadata.get(k)) for k in ("created", "date", "updated") if entry.metadata.get(k)]
        read = _Read(
            frozenset(names),
            shingles(body_words) if len(body_words) >= settings.min_words else None,
            max(dates, default=""),
        )
    reads[i] = read
    if len(reads) > _READ_AHEAD:
        reads.popitem(last=False)
    return read


def _newer_first(m: Member, a: _Read, n: Member, b: _Read) -> tuple[Member, Member]:
    """(the newer-looking, the other): a newcomer; else the one reported when only one is; else the
    later date in the frontmatter (created, date, updated); else the later path."""
    if m.newcomer != n.newcomer:
        return (m, n) if m.newcomer else (n, m)
    if m.facts.reported != n.facts.reported:
        return (m, n) if m.facts.reported else (n, m)
    return (m, n) if (a.dated, m.facts.path) > (b.dated, n.facts.path) else (n, m)


def issues(pairs: list[Pair]) -> list[Issue]:
    """possible_duplicate for each alike pair whose newer entry is reported."""
    return [duplicate_rules.possible_duplicate(p) for p in pairs if p.alike and p.newer.facts.reported]
