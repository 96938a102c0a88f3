"""Entries compared with each other (before the link graph is built): pairs of one type that share a
title or an alias, or whose bodies are near-identical, each one `possible_duplicate` on the
newer-looking entry.

Pass 1 left each entry a sketch (`kblint.model.likeness`); entries that share a name or a band of
it are candidate pairs. Bodies that are the same are known so by their sketches; a candidate whose
sketches agree on enough bins is measured exactly, from the two files read again. The cost grows
with the entries and the pairs found, not with every pair there could be. An entry given to be
added (`--stdin`, a file outside its KB) is also paired with the entries it resembles below the
threshold: with an LLM, the closest of them are classified (pass 3).
"""

from __future__ import annotations

from collections import Counter, OrderedDict
from collections.abc import Hashable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import combinations

from ..config import DuplicateSettings
from ..model.facts import EntryFacts
from ..model.issue import Issue
from ..model.likeness import (
    BANDS,
    BinTable,
    agreement,
    body_keys,
    dated,
    has_body,
    name_hash,
    same_body,
    same_title,
    shingles,
    similarity,
    title_keys,
    words,
)
from ..rules import duplicates as duplicate_rules
from .pass_entries import KBContext, KBRun, read_raw

RELATED = 0.3  # a newcomer's neighbour at or above this similarity is classified by an LLM, if there is one
MIN_AGREEMENT = 6  # bins of 16 two sketches agree on, at least, for their bodies to be measured
COMMON_BAND = 5  # entries that share a band, at most, for it to pair them
_NEIGHBOURS = 1000  # a newcomer is measured against at most this many entries
_READ_AHEAD = 256  # bodies read again kept at once while pairs are measured


@dataclass(slots=True)
class Member:
    """An entry of a pair."""

    ctx: KBContext
    facts: EntryFacts
    data: bytes | None = None  # a newcomer's text, when it does not come from a file
    newcomer: bool = False  # given to be added: the newer of any pair, compared with more of the KB


@dataclass(slots=True)
class Pair:
    """Two entries found alike: the issue goes on NEWER, and names OLDER."""

    newer: Member
    older: Member
    similarity: float | None  # of the bodies, measured; None when not (a body too short, a pair found by name)
    same_name: bool  # they share a title or an alias
    alike: bool  # at or above the threshold, or one name: a possible duplicate (else a newcomer's neighbour)

    @property
    def reported(self) -> bool:
        """Whether the run reports on either entry (with --changed-since, the pair of a changed one)."""
        return self.newer.facts.reported or self.older.facts.reported


@dataclass(slots=True)
class _Group:
    """The entries compared with each other (a KB's, or the workspace's), as parallel lists: an
    object for each of 100,000 entries would cost the collector more than the comparison."""

    facts: list[EntryFacts] = field(default_factory=list)
    contexts: list[KBContext] = field(default_factory=list)
    newcomers: dict[int, bytes | None] = field(default_factory=dict)  # index → the newcomer's text

    def add(self, run: KBRun) -> None:
        files = len(run.kb.files)
        kept = [res.facts for res in run.results[:files] if res.facts.sketch]
        self.facts.extend(kept)
        self.contexts.extend([run.ctx] * len(kept))
        for cand, res in zip(run.kb.candidates, run.results[files:], strict=True):
            if res.facts.sketch:
                if cand.gated:
                    self.newcomers[len(self.facts)] = cand.data
                self.facts.append(res.facts)
                self.contexts.append(run.ctx)

    def member(self, i: int) -> Member:
        return Member(self.contexts[i], self.facts[i], self.newcomers.get(i), i in self.newcomers)


def find(runs: list[KBRun], settings: DuplicateSettings) -> list[Pair]:
    """Every pair of alike entries (and the newcomers' neighbours), in the order of the files."""
    groups: list[_Group] = []
    for r in runs:
        if settings.scope != "workspace" or not groups:
            groups.append(_Group())
        groups[-1].add(r)
    pairs: list[Pair] = []
    for group in groups:
        if len(group.facts) > 1:
            pairs.extend(_measured(group, sorted(_candidates(group)), settings))
    return pairs


def _candidates(group: _Group) -> set[tuple[int, int]]:
    """(i, j), i < j: pairs of GROUP that share a name or a body, or a band and enough bins. Of the
    entries that share a name or a body, each is paired with the first only, so that a thousand
    copies make a thousand pairs, not half a million; a band that more than COMMON_BAND entries
    share pairs none (a sentence that many entries repeat makes it). A newcomer is paired with
    every entry it shares a name or a band with (up to a bound)."""
    sketches = [f.sketch for f in group.facts]
    pairs: set[tuple[int, int]] = set()
    _by_name(pairs, group.facts, title_keys(sketches))
    for run in _runs(body_keys(sketches)):
        pairs.update((run[0], i) for i in run[1:])
    table = BinTable(sketches)
    for b in range(BANDS):
        for run in _runs(table.band_keys(b)):
            if len(run) <= COMMON_BAND:
                pairs.update(
                    (i, j)
                    for i, j in combinations(run, 2)
                    if table.agreement(i, j) >= MIN_AGREEMENT and not same_body(sketches[i], sketches[j])
                )
    if group.newcomers:
        pairs.update(_newcomer_pairs(group, table))
    return pairs


def _runs(keys: Sequence[Hashable]) -> Iterator[list[int]]:
    """The indexes of the entries that share a key (0 or None: none), ascending, for each key two
    or more share."""
    shared = {key for key, count in Counter(keys).items() if count > 1 and key}
    runs: dict[Hashable, list[int]] = {}
    for i in [i for i, key in enumerate(keys) if key in shared]:
        runs.setdefault(keys[i], []).append(i)
    return iter(runs.values())


def _by_name(pairs: set[tuple[int, int]], facts: list[EntryFacts], titles: list[int]) -> None:
    """Entries of one type that share a title or an alias (a title may be another entry's alias),
    each paired with the first of its type that had it."""
    named = [(i, f.aliases) for i, f in enumerate(facts) if f.aliases]
    if not named:
        for run in _runs([(f.type, t) if t else None for f, t in zip(facts, titles, strict=True)]):
            pairs.update((run[0], i) for i in run[1:])
        return
    keys = [[(f.type, t)] if t else [] for f, t in zip(facts, titles, strict=True)]
    for i, aliases in named:
        keys[i].extend((facts[i].type, name_hash(a)) for a in aliases)
    first: dict[tuple[str, int], int] = {}
    for i, own in enumerate(keys):
        for key in own:
            j = first.setdefault(key, i)
            if j != i:
                pairs.add((min(i, j), max(i, j)))


def _names(facts: EntryFacts) -> set[tuple[str, int]]:
    """The entry's title and aliases, each as (its type, the name's hash)."""
    keys = {*title_keys([facts.sketch]), *(name_hash(a) for a in facts.aliases)}
    keys.discard(0)
    return {(facts.type, key) for key in keys}


def _newcomer_pairs(group: _Group, table: BinTable) -> Iterator[tuple[int, int]]:
    """Each newcomer with every entry that shares a band or a name with it (at most a bounded number)."""
    keys = {key: n for n in group.newcomers for key in _keys(group, table, n)}
    found = dict.fromkeys(group.newcomers, 0)
    for i in range(len(group.facts)):
        for n in {keys.get(key) for key in _keys(group, table, i)}:
            if n is not None and n != i and found[n] < _NEIGHBOURS:
                found[n] += 1
                yield (min(i, n), max(i, n))


def _keys(group: _Group, table: BinTable, i: int) -> list[tuple[int, Hashable]]:
    """Every band and name of entry I, each with where it comes from (-1: a name)."""
    keys: list[tuple[int, Hashable]] = [(-1, name) for name in _names(group.facts[i])]
    keys.extend((b, band) for b, band in enumerate(table.bands[i * BANDS : (i + 1) * BANDS]) if band)
    return keys


def _measured(group: _Group, candidates: list[tuple[int, int]], settings: DuplicateSettings) -> Iterator[Pair]:
    """The candidates that are alike (or a newcomer's neighbours): bodies that are the same are so
    by their sketches; others that agree on enough bins are measured from the files."""
    reads: OrderedDict[int, set[str] | None] = OrderedDict()
    for i, j in candidates:
        f, g = group.facts[i], group.facts[j]
        same_name = _same_name(f, g)
        newcomer = i in group.newcomers or j in group.newcomers
        sim = None
        if same_body(f.sketch, g.sketch):
            sim = 1.0
        elif (newcomer and has_body(f.sketch) and has_body(g.sketch)) or agreement(f.sketch, g.sketch) >= MIN_AGREEMENT:
            sim = _measure(group, i, j, reads)  # a newcomer's bodies are measured when both are long enough
        alike = same_name or (sim is not None and sim >= settings.threshold)
        if alike or (newcomer and sim is not None and sim >= RELATED):
            newer, older = _newer_first(group.member(i), group.member(j))
            yield Pair(newer, older, sim, same_name, alike)


def _same_name(f: EntryFacts, g: EntryFacts) -> bool:
    """Whether F and G share a title or an alias, being of one type: a name alone does not make a
    writing the duplicate of the concept it names (their bodies may still)."""
    if f.type != g.type:
        return False
    if f.aliases or g.aliases:
        return bool(_names(f) & _names(g))
    return same_title(f.sketch, g.sketch)


def _measure(group: _Group, i: int, j: int, reads: OrderedDict[int, set[str] | None]) -> float | None:
    """The similarity of two bodies read again (None when one cannot be read now)."""
    a, b = _shingles(group, i, reads), _shingles(group, j, reads)
    return similarity(a, b) if a is not None and b is not None else None


def _shingles(group: _Group, i: int, reads: OrderedDict[int, set[str] | None]) -> set[str] | None:
    if i in reads:
        reads.move_to_end(i)
        return reads[i]
    raw = read_raw(group.contexts[i], group.facts[i], group.newcomers.get(i))
    found = shingles(words(raw.body)) if raw is not None else None
    reads[i] = found
    if len(reads) > _READ_AHEAD:
        reads.popitem(last=False)
    return found


def _newer_first(m: Member, n: Member) -> tuple[Member, Member]:
    """(the newer-looking, the other): a newcomer; else, when both are dated, the later (created,
    else date, else updated); else the later path. Which entries the run reports on plays no part:
    a pair's issue stays on one entry, with one fingerprint, in every run."""
    if m.newcomer != n.newcomer:
        return (m, n) if m.newcomer else (n, m)
    a, b = dated(m.facts.sketch), dated(n.facts.sketch)
    if a and b and a != b:
        return (m, n) if a > b else (n, m)
    return (m, n) if m.facts.path > n.facts.path else (n, m)


def forget_sketches(runs: list[KBRun]) -> None:
    """Drop the entries' sketches once the pairs are found: the later passes hold every entry's
    facts, and need none of them."""
    for r in runs:
        for result in r.results:
            result.facts.sketch = b""


def issues(pairs: list[Pair]) -> list[Issue]:
    """possible_duplicate for each alike pair whose newer entry is reported."""
    return [duplicate_rules.possible_duplicate(p) for p in pairs if p.alike and p.reported]
