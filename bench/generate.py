"""A synthetic, realistic kblint workspace for the benchmark and the tests (SPEC §13).

    .venv/bin/python bench/generate.py --entries N [--seed S] [--kbs K] [--duplicates FRACTION] [--force] OUT

Writes K knowledge bases (default 5, fewer for tiny N), sized unevenly, into OUT:

- each KB has a `kb.yaml` in Pyrite's format: types with `subdirectory`, `required`, `optional`
  and `fields` of many field types (select, date, list, url, number with min/max, object-ref,
  text, boolean), `validation.rules`, workflows, guidelines and goals, and an `evaluation_rubric`
  at KB and type level that uses every rubric form of SPEC §5 (judgment strings, named checkers
  with params, `covered_by: schema` with a field, policy strings, `{text, policy}` items, ids,
  severities, weights, `applies_to`);
- entries with realistic frontmatter (ids, titles, tags, dates, workflow statuses, select values,
  lists, urls, `links:` in all the shapes of SPEC §3, cross-KB links, links into a KB that is not
  generated) and bodies of ~100-400 words of generated prose with sections, wikilinks
  (`[[id]]`, `[[id|label]]`, `[[kb:id]]`, `[[dir/note]]`, aliases), relative markdown links,
  now and then a code block (whose `[[...]]` are not links);
- one `cross-kb-links.yaml`;
- defects planted at low rates (~1-2 % each): a broken wikilink, a missing required field, a
  select value outside its list, an impossible date `2025-13-45`, an unknown type, an unterminated
  frontmatter, a duplicate id, an entry with no links in or out, a link into an absent KB.

With `--duplicates FRACTION`, round(FRACTION * N) pairs of entries of one KB are planted, the four
kinds in turn: `exact` (a copy under another file name and id, same title), `few_words` (1-4 words
of the body changed, its own title), `retitled` (the same body, its own title) and `near_miss`
(the first half of an entry's body, then prose of its own: a pair that must not be reported). No
other two entries then have equal titles. The manifest's "duplicates" lists the pairs.

Every planted defect is listed, with the kblint rule that must report it, in `OUT/manifest.json`
(outside every KB, so kblint and the floor ignore it). Everything the generator decides comes from
one `random.Random(seed)`: the same N, S and K give byte-identical files. Bodies are generated
and written one entry at a time; only ids, titles and paths of all entries are kept in memory.
"""

from __future__ import annotations

import argparse
import bisect
import json
import os
import queue
import random
import re
import shutil
import sys
import textwrap
import threading
import time
from collections.abc import Callable

import yaml

MANIFEST = "manifest.json"
ABSENT_KB = "archive"  # links point into it; it is never generated (unresolved_external)

# Defects: kind -> (rate, the kblint rule that reports it). Each kind is planted on
# max(1, round(rate * N)) entries (none when N < MIN_ENTRIES_FOR_DEFECTS), never two on one entry.
DEFECTS = {
    "broken_wikilink": (0.02, "broken_link"),
    "missing_required": (0.02, "missing_required"),
    "bad_select": (0.02, "invalid_field"),
    "impossible_date": (0.01, "invalid_date"),
    "unknown_type": (0.01, "unknown_type"),
    "unterminated_frontmatter": (0.01, "parse_error"),
    "duplicate_id": (0.01, "duplicate_id"),
    "no_links": (0.01, "orphan_entry"),
    "absent_kb_link": (0.01, "unresolved_external"),
}
MIN_ENTRIES_FOR_DEFECTS = 40
WRITER_THREADS = 4
SENTENCE_POOL = 3000  # generated sentences per KB that bodies are drawn from
UNKNOWN_TYPES = ["memo", "clipping", "scratch", "draft-note"]
BAD_SELECT_VALUES = ["other", "unknown", "tbd", "n/a", "misc"]

# Planted duplicate pairs (--duplicates): kinds planted in turn, so about evenly. The bounds are
# those of a detector that reports bodies whose 3-word shingles have a Jaccard similarity of 0.8
# or more: a copy with a few words changed stays well above it, a near miss well below.
DUPLICATE_KINDS = ("exact", "few_words", "retitled", "near_miss")
SHINGLE_WORDS = 3
FEW_WORDS_MIN_JACCARD = 0.85
FEW_WORDS_MIN_BODY = 150  # words; below it, four changed words could pull a copy under 0.85
FEW_WORDS_TARGET = 220  # the body length asked of an original that gets a few-words copy
NEAR_MISS_MAX_JACCARD = 0.6
MAX_DUPLICATES = 0.2  # each pair takes two ordinary entries of one type
TITLE_REDRAWS = 8
_WORD = re.compile(r"\w+")

# ----------------------------------------------------------------------------------------------
# Word banks. Function words are repeated so that unweighted sampling gives prose-like frequencies.

_FUNCTION = [
    "the",
    "the",
    "the",
    "the",
    "the",
    "of",
    "of",
    "of",
    "of",
    "and",
    "and",
    "and",
    "to",
    "to",
    "to",
    "a",
    "a",
    "a",
    "in",
    "in",
    "in",
    "is",
    "is",
    "that",
    "that",
    "for",
    "for",
    "it",
    "as",
    "as",
    "was",
    "was",
    "with",
    "with",
    "by",
    "on",
    "on",
    "at",
    "from",
    "this",
    "this",
    "which",
    "be",
    "are",
    "or",
    "an",
    "not",
    "but",
    "had",
    "has",
    "have",
    "its",
    "their",
    "they",
    "were",
    "also",
    "these",
    "more",
    "most",
    "into",
    "than",
    "other",
    "some",
    "when",
    "where",
    "while",
    "because",
    "although",
    "after",
    "before",
    "between",
    "through",
    "during",
    "under",
    "over",
]
_COMMON = [
    "record",
    "records",
    "account",
    "accounts",
    "evidence",
    "source",
    "sources",
    "report",
    "reports",
    "period",
    "region",
    "people",
    "group",
    "groups",
    "change",
    "changes",
    "early",
    "late",
    "first",
    "later",
    "second",
    "several",
    "many",
    "few",
    "public",
    "private",
    "local",
    "central",
    "main",
    "major",
    "minor",
    "direct",
    "indirect",
    "clear",
    "unclear",
    "known",
    "unknown",
    "written",
    "oral",
    "official",
    "informal",
    "original",
    "later",
    "version",
    "versions",
    "detail",
    "details",
    "question",
    "questions",
    "answer",
    "answers",
    "claim",
    "claims",
    "argument",
    "arguments",
    "reason",
    "reasons",
    "result",
    "results",
    "effect",
    "effects",
    "cause",
    "causes",
    "pattern",
    "patterns",
    "system",
    "systems",
    "process",
    "processes",
    "decision",
    "decisions",
    "meeting",
    "meetings",
    "letter",
    "letters",
    "document",
    "documents",
    "archive",
    "archives",
    "note",
    "notes",
    "map",
    "maps",
    "route",
    "routes",
    "year",
    "years",
    "decade",
    "decades",
    "season",
    "seasons",
    "month",
    "months",
    "described",
    "suggests",
    "shows",
    "showed",
    "confirms",
    "confirmed",
    "contradicts",
    "contradicted",
    "remains",
    "remained",
    "appears",
    "appeared",
    "became",
    "become",
    "follows",
    "followed",
    "supports",
    "supported",
    "explains",
    "explained",
    "notes",
    "noted",
    "mentions",
    "mentioned",
    "traces",
    "traced",
    "links",
    "linked",
    "compares",
    "compared",
    "careful",
    "detailed",
    "partial",
    "complete",
    "brief",
    "long",
    "short",
    "broad",
    "narrow",
    "close",
    "distant",
    "similar",
    "different",
    "important",
    "significant",
    "useful",
    "doubtful",
    "reliable",
    "uncertain",
    "consistent",
]

_DOMAIN = {
    "atlas": [
        "river",
        "valley",
        "ridge",
        "pass",
        "coast",
        "harbour",
        "survey",
        "surveyor",
        "expedition",
        "camp",
        "summit",
        "glacier",
        "delta",
        "plateau",
        "basin",
        "trail",
        "crossing",
        "settlement",
        "village",
        "ford",
        "bridge",
        "coastline",
        "bearing",
        "latitude",
        "longitude",
        "altitude",
        "chart",
        "charts",
        "cartographer",
        "sketch",
        "compass",
        "supply",
        "winter",
    ],
    "ledger": [
        "payment",
        "payments",
        "transfer",
        "transfers",
        "account",
        "invoice",
        "invoices",
        "contract",
        "contracts",
        "company",
        "companies",
        "director",
        "directors",
        "shareholder",
        "shareholders",
        "bank",
        "banks",
        "fund",
        "funds",
        "offshore",
        "registry",
        "filing",
        "filings",
        "audit",
        "auditor",
        "tender",
        "subsidiary",
        "loan",
        "loans",
        "fee",
        "fees",
    ],
    "lexicon": [
        "concept",
        "concepts",
        "term",
        "terms",
        "definition",
        "definitions",
        "usage",
        "meaning",
        "meanings",
        "theory",
        "framework",
        "frameworks",
        "principle",
        "principles",
        "model",
        "models",
        "idea",
        "ideas",
        "author",
        "authors",
        "essay",
        "essays",
        "chapter",
        "chapters",
        "interpretation",
        "reader",
        "readers",
        "vocabulary",
        "argument",
    ],
    "chronicle": [
        "war",
        "treaty",
        "treaties",
        "council",
        "councils",
        "king",
        "queen",
        "duke",
        "parliament",
        "election",
        "elections",
        "battle",
        "battles",
        "siege",
        "famine",
        "harvest",
        "charter",
        "charters",
        "reform",
        "reforms",
        "uprising",
        "town",
        "towns",
        "guild",
        "guilds",
        "bishop",
        "abbey",
        "trade",
        "merchants",
        "dynasty",
        "succession",
        "rebellion",
    ],
    "meridian": [
        "service",
        "services",
        "deploy",
        "deployment",
        "latency",
        "outage",
        "incident",
        "incidents",
        "database",
        "queue",
        "cache",
        "cluster",
        "node",
        "nodes",
        "request",
        "requests",
        "release",
        "releases",
        "rollback",
        "schema",
        "config",
        "endpoint",
        "endpoints",
        "migration",
        "alert",
        "alerts",
        "pipeline",
        "dependency",
        "dependencies",
        "owner",
    ],
}

_FIRST = [
    "Ada",
    "Alan",
    "Alma",
    "Anna",
    "Arlo",
    "Aron",
    "Beatrix",
    "Bram",
    "Carla",
    "Cyrus",
    "Dana",
    "Dora",
    "Edith",
    "Elias",
    "Emil",
    "Eva",
    "Felix",
    "Freya",
    "Greta",
    "Hana",
    "Hugo",
    "Ida",
    "Ines",
    "Ivo",
    "Jana",
    "Jonas",
    "Karl",
    "Kira",
    "Lars",
    "Lena",
    "Leo",
    "Lina",
    "Lotte",
    "Luca",
    "Mara",
    "Marek",
    "Maya",
    "Mila",
    "Nadia",
    "Nils",
    "Nora",
    "Olaf",
    "Olga",
    "Oskar",
    "Paula",
    "Petra",
    "Quinn",
    "Rafael",
    "Rosa",
    "Ruth",
    "Sami",
    "Sara",
    "Silas",
    "Sofia",
    "Stellan",
    "Tara",
    "Theo",
    "Tilda",
    "Tomas",
    "Uma",
    "Vera",
    "Viktor",
    "Wanda",
    "Yara",
    "Zora",
]
_SYL1 = [
    "Kor",
    "Val",
    "Mer",
    "Ash",
    "Bel",
    "Dun",
    "Esk",
    "Fal",
    "Gar",
    "Hol",
    "Ist",
    "Jor",
    "Kel",
    "Lin",
    "Mor",
    "Nor",
    "Orm",
    "Pel",
    "Quar",
    "Ros",
    "Sal",
    "Tor",
    "Ul",
    "Ver",
    "Wyn",
    "Yar",
    "Zel",
    "Bran",
    "Cal",
    "Dra",
]
_SYL2 = [
    "avin",
    "dale",
    "esk",
    "ford",
    "gate",
    "holm",
    "ington",
    "stead",
    "mere",
    "wick",
    "borough",
    "ley",
    "marsh",
    "ton",
    "well",
    "by",
    "combe",
    "haven",
    "ridge",
    "more",
    "burn",
    "field",
    "moor",
    "ness",
    "thorpe",
    "wood",
    "bury",
    "cott",
    "den",
    "ham",
]
_ADJ = [
    "adaptive",
    "hidden",
    "early",
    "late",
    "northern",
    "southern",
    "open",
    "closed",
    "shared",
    "formal",
    "informal",
    "layered",
    "slow",
    "fast",
    "silent",
    "public",
    "private",
    "partial",
    "recursive",
    "implicit",
    "explicit",
    "distributed",
    "central",
    "fragile",
    "robust",
    "broken",
    "lasting",
    "brief",
    "minor",
    "major",
    "quiet",
    "mutual",
]
_NOUN = [
    "orientation",
    "tempo",
    "boundary",
    "friction",
    "channel",
    "ledger",
    "network",
    "loop",
    "signal",
    "pattern",
    "margin",
    "covenant",
    "frontier",
    "threshold",
    "cadence",
    "harbour",
    "archive",
    "record",
    "mandate",
    "charter",
    "registry",
    "exchange",
    "alliance",
    "circuit",
    "lattice",
    "reserve",
]
_TAIL = ["theory", "principle", "model", "loop", "effect", "doctrine", "method"]

_HEADINGS = [
    "Summary",
    "Background",
    "Overview",
    "Context",
    "Details",
    "Analysis",
    "Significance",
    "Timeline",
    "Evidence",
    "Discussion",
    "Assessment",
] + ["Open questions", "Later accounts", "Related work"]
_SOURCE_HEADINGS = ["Sources", "Sources", "Sources", "References", "Sources:", "Bibliography"]
_RELATIONS = [
    "related_to",
    "related_to",
    "mentions",
    "part_of",
    "cites",
    "follows",
    "supports",
    "contradicts",
    "influenced_by",
]
_NOTES = [
    "see the discussion in the body",
    "primary account",
    "disputed by later sources",
    "the two records disagree on the date",
    "context for the later events",
    "same period",
    "background reading",
]
_PUBLISHERS = [
    "Northgate Press",
    "Vellum & Co",
    "The Quarterly Review",
    "State Archive",
    "University Press",
    "Field Notes Society",
]


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def _q(text: str) -> str:
    """A double-quoted YAML scalar."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


# ----------------------------------------------------------------------------------------------
# The KBs. Each type: (name, weight, spec). spec keys go to kb.yaml (fields, required, ...), except
# `_title` (title generator), `_ref` (field -> target type of an object-ref), `_sources` (chance
# of a Sources section) and `_code` (chance of a code block).


def _field(ftype, **kw):
    d = {"type": ftype}
    d.update(kw)
    return d


PERSON = {
    "description": "A person who appears in the knowledge base",
    "subdirectory": "people",
    "required": ["title", "role"],
    "optional": ["born", "nationality", "affiliations", "homepage"],
    "fields": {
        "role": _field("text", description="Role or position, in a few words"),
        "born": _field("date"),
        "nationality": _field("string"),
        "affiliations": _field("list"),
        "homepage": _field("url"),
    },
    "_title": "person",
    "_sources": 0.4,
    "_code": 0.02,
}


def _person(extra_optional=(), extra_fields=None, refs=None):
    spec = json.loads(json.dumps({k: v for k, v in PERSON.items()}))
    spec["optional"] = spec["optional"] + list(extra_optional)
    spec["fields"].update(extra_fields or {})
    if refs:
        spec["_ref"] = refs
    return spec


KB_DESIGNS = [
    {
        "name": "atlas",
        "weight": 0.36,
        "kb_type": "research",
        "description": "A gazetteer of places, the expeditions that charted them and the people who went.",
        "guidelines": {
            "contributing": "Give every place its region and kind; cite the survey or account a claim comes from.",
            "quality": "Prefer first-hand survey records to later compilations, and say when accounts disagree.",
            "voice": "Descriptive and exact; name distances, dates and bearings where the sources give them.",
        },
        "goals": {
            "primary": "Map every place the expeditions reached and who reached it first.",
            "success_criteria": "Each place links to the expeditions and people connected with it.",
        },
        "validation": {
            "enforce": False,
            "rules": [
                {"field": "importance", "range": [1, 10]},
                {"field": "published", "format": "ISO8601"},
                {"field": "coordinates", "pattern": r"^-?\d{1,2}\.\d{4}, -?\d{1,3}\.\d{4}$"},
            ],
        },
        "types": [
            (
                "place",
                0.46,
                {
                    "description": "A named place: settlement, river, mountain, pass",
                    "subdirectory": "places",
                    "required": ["title", "region", "place_kind"],
                    "optional": ["coordinates", "population", "founded", "elevation_m", "url", "visited_by"],
                    "fields": {
                        "region": _field("select", values=["north", "south", "east", "west", "central", "coastal"]),
                        "place_kind": _field(
                            "select", values=["city", "village", "river", "mountain", "lake", "island", "pass", "ruin"]
                        ),
                        "coordinates": _field("string", description="Latitude, longitude"),
                        "population": _field("integer", min=0, max=50000000),
                        "founded": _field("date"),
                        "elevation_m": _field("number", min=-430, max=8849),
                        "url": _field("url"),
                        "visited_by": _field("object-ref", description="The first expedition that reached it"),
                    },
                    "workflow": {
                        "states": ["stub", "draft", "review", "published"],
                        "transitions": {
                            "stub -> draft": "basic facts gathered",
                            "draft -> review": "sources cited",
                            "review -> published": "a second editor checked it",
                        },
                    },
                    "_title": "place",
                    "_ref": {"visited_by": "expedition"},
                    "_sources": 0.55,
                    "_code": 0.02,
                    "_nest": "region",
                },
            ),
            (
                "expedition",
                0.16,
                {
                    "description": "A journey of exploration or survey",
                    "subdirectory": "expeditions",
                    "required": ["title", "date", "outcome"],
                    "optional": ["end_date", "leader", "members", "budget", "sources"],
                    "fields": {
                        "date": _field("date", description="Departure"),
                        "end_date": _field("date"),
                        "outcome": _field("select", values=["success", "partial", "failure", "abandoned"]),
                        "leader": _field("object-ref"),
                        "members": _field("list"),
                        "budget": _field("number", min=0),
                        "sources": _field("list"),
                    },
                    "_title": "expedition",
                    "_ref": {"leader": "person"},
                    "_sources": 0.7,
                    "_code": 0.03,
                },
            ),
            ("person", 0.24, _person(["explorer"], {"explorer": _field("boolean")})),
            (
                "source",
                0.14,
                {
                    "description": "A book, map, letter or article the KB relies on",
                    "subdirectory": "sources",
                    "required": ["title", "source_kind", "url"],
                    "optional": ["published", "author", "reliability"],
                    "fields": {
                        "source_kind": _field(
                            "select", values=["book", "article", "map", "letter", "archive", "interview"]
                        ),
                        "url": _field("url"),
                        "published": _field("date"),
                        "author": _field("string"),
                        "reliability": _field("number", min=1, max=5),
                    },
                    "_title": "source",
                    "_sources": 0.2,
                    "_code": 0.02,
                },
            ),
        ],
    },
    {
        "name": "ledger",
        "weight": 0.26,
        "kb_type": "journalism",
        "description": "Following the money: transactions, the companies and people behind them, and findings.",
        "guidelines": {
            "sourcing": "Every finding cites at least one document or on-the-record interview.",
            "voice": "Plain and precise; say what is known, how it is known, and what is not known.",
        },
        "goals": {
            "primary": "Document who paid whom, when, through which companies.",
            "success_criteria": "Each finding is sourced, dated and linked to the people and organizations involved.",
            "constraints": "Nothing is published on a single anonymous source.",
        },
        "pass_threshold": 0.5,
        "validation": {
            "enforce": True,
            "rules": [
                {"field": "importance", "range": [1, 10]},
                {"field": "amount", "min": 0},
                {"field": "currency", "enum": ["EUR", "USD", "GBP", "CHF"]},
            ],
        },
        "types": [
            (
                "transaction",
                0.34,
                {
                    "description": "One payment or transfer",
                    "subdirectory": "transactions",
                    "required": ["title", "date", "amount", "currency"],
                    "optional": ["payer", "payee", "channel", "documents", "evidence_url"],
                    "fields": {
                        "date": _field("date"),
                        "amount": _field("number", min=0),
                        "currency": _field("select", values=["EUR", "USD", "GBP", "CHF"]),
                        "payer": _field("object-ref"),
                        "payee": _field("object-ref"),
                        "channel": _field("select", values=["wire", "cash", "crypto", "cheque"]),
                        "documents": _field("list"),
                        "evidence_url": _field("url"),
                    },
                    "workflow": {
                        "states": ["reported", "verified", "disputed"],
                        "transitions": {
                            "reported -> verified": "bank record obtained",
                            "reported -> disputed": "a party contests it",
                        },
                    },
                    "_title": "transaction",
                    "_ref": {"payer": "organization", "payee": "organization"},
                    "_sources": 0.5,
                    "_code": 0.05,
                },
            ),
            (
                "organization",
                0.22,
                {
                    "description": "A company, agency, charity, trust or bank",
                    "subdirectory": "organizations",
                    "required": ["title", "org_type"],
                    "optional": ["jurisdiction", "founded", "registry_url", "parent"],
                    "fields": {
                        "org_type": _field("select", options=["company", "agency", "charity", "trust", "bank"]),
                        "jurisdiction": _field(
                            "select", values=["uk", "de", "nl", "cy", "vg", "ky", "ch"], allow_other=True
                        ),
                        "founded": _field("date"),
                        "registry_url": _field("url"),
                        "parent": _field("object-ref"),
                    },
                    "_title": "organization",
                    "_ref": {"parent": "organization"},
                    "_sources": 0.45,
                    "_code": 0.01,
                },
            ),
            (
                "person",
                0.24,
                _person(["employer"], {"employer": _field("object-ref")}, refs={"employer": "organization"}),
            ),
            (
                "finding",
                0.20,
                {
                    "description": "A claim the investigation established, with its evidence",
                    "subdirectory": "findings",
                    "required": ["title", "date", "confidence"],
                    "optional": ["sources", "reviewer"],
                    "fields": {
                        "date": _field("date"),
                        "confidence": _field("select", values=["low", "medium", "high"]),
                        "sources": _field("list"),
                        "reviewer": _field("string"),
                    },
                    "workflow": {
                        "states": ["draft", "review", "confirmed", "retracted"],
                        "transitions": {
                            "draft -> review": "evidence gathered",
                            "review -> confirmed": "a second reporter checked the sources",
                            "confirmed -> retracted": "the evidence did not hold",
                        },
                    },
                    "_title": "finding",
                    "_sources": 0.75,
                    "_code": 0.02,
                },
            ),
        ],
    },
    {
        "name": "lexicon",
        "weight": 0.18,
        "kb_type": "reference",
        "description": "Concepts, terms and the writings that define them.",
        "guidelines": {
            "quality": "Separate the original formulation of a concept from later interpretations.",
            "cross_linking": "Link every term to the concept it names and to the writing that introduced it.",
        },
        "goals": {
            "primary": "A navigable vocabulary of the field, with its origins.",
            "success_criteria": "A reader can go from any term to the writing that defined it.",
        },
        "validation": {
            "rules": [
                {"field": "importance", "range": [1, 10]},
                {"field": "date", "format": "ISO8601"},
            ]
        },
        "types": [
            (
                "concept",
                0.38,
                {
                    "description": "A key idea or framework",
                    "subdirectory": "concepts",
                    "required": ["title", "domain"],
                    "optional": ["first_appeared", "related_concepts", "maturity", "research_status"],
                    "fields": {
                        "domain": _field(
                            "select", values=["strategy", "economics", "engineering", "biology", "philosophy", "design"]
                        ),
                        "first_appeared": _field("string"),
                        "related_concepts": _field("list"),
                        "maturity": _field("integer", min=1, max=5),
                        "research_status": _field("select", values=["stub", "partial", "draft", "complete"]),
                    },
                    "workflow": {
                        "states": ["stub", "draft", "reviewed", "canonical"],
                        "transitions": {
                            "stub -> draft": "explained",
                            "draft -> reviewed": "checked",
                            "reviewed -> canonical": "agreed by the editors",
                        },
                    },
                    "_title": "concept",
                    "_sources": 0.5,
                    "_code": 0.03,
                },
            ),
            (
                "term",
                0.30,
                {
                    "description": "A word or phrase with a precise meaning in the field",
                    "subdirectory": "terms",
                    "required": ["title", "definition"],
                    "optional": ["part_of_speech", "synonyms", "see_also"],
                    "fields": {
                        "definition": _field("text"),
                        "part_of_speech": _field("select", values=["noun", "verb", "adjective", "phrase"]),
                        "synonyms": _field("list"),
                        "see_also": _field("object-ref"),
                    },
                    "_title": "term",
                    "_ref": {"see_also": "concept"},
                    "_sources": 0.3,
                    "_code": 0.02,
                },
            ),
            (
                "writing",
                0.20,
                {
                    "description": "A book, essay, paper or briefing",
                    "subdirectory": "writings",
                    "required": ["title", "writing_type", "date"],
                    "optional": ["url", "key_concepts", "pages", "publisher"],
                    "fields": {
                        "writing_type": _field("select", values=["book", "essay", "paper", "briefing", "lecture"]),
                        "date": _field("date"),
                        "url": _field("url"),
                        "key_concepts": _field("list"),
                        "pages": _field("integer", min=1, max=2000),
                        "publisher": _field("string"),
                    },
                    "_title": "writing",
                    "_sources": 0.4,
                    "_code": 0.02,
                },
            ),
            ("person", 0.12, _person()),
        ],
    },
    {
        "name": "chronicle",
        "weight": 0.13,
        "kb_type": "history",
        "description": "Events, eras and people of a regional history.",
        "guidelines": {
            "contributing": "Date every event; give the source of each date.",
            "voice": "Neutral; present competing accounts side by side.",
        },
        "goals": {
            "primary": "A dated, sourced chronicle of the region.",
            "success_criteria": "Every event belongs to an era and names who took part.",
        },
        "validation": {"rules": [{"field": "importance", "range": [1, 10]}]},
        "types": [
            (
                "event",
                0.52,
                {
                    "description": "Something that happened on a known date",
                    "subdirectory": "events",
                    "required": ["title", "date", "event_kind"],
                    "optional": ["importance", "location", "participants", "era"],
                    "fields": {
                        "date": _field("date"),
                        "event_kind": _field(
                            "select", values=["battle", "treaty", "election", "disaster", "founding", "discovery"]
                        ),
                        "importance": _field("number", min=1, max=10),
                        "location": _field("string"),
                        "participants": _field("list"),
                        "era": _field("object-ref"),
                    },
                    "workflow": {
                        "states": ["draft", "checked", "published"],
                        "transitions": {"draft -> checked": "date verified", "checked -> published": "editor approved"},
                    },
                    "_title": "event",
                    "_ref": {"era": "era"},
                    "_sources": 0.6,
                    "_code": 0.01,
                },
            ),
            (
                "era",
                0.12,
                {
                    "description": "A period of the history",
                    "subdirectory": "eras",
                    "required": ["title", "start", "end"],
                    "optional": ["theme"],
                    "fields": {
                        "start": _field("date"),
                        "end": _field("date"),
                        "theme": _field("select", values=["war", "trade", "reform", "decline", "growth"]),
                    },
                    "_title": "era",
                    "_sources": 0.5,
                    "_code": 0.0,
                },
            ),
            ("person", 0.36, _person(["died"], {"died": _field("date")})),
        ],
    },
    {
        "name": "meridian",
        "weight": 0.07,
        "kb_type": "engineering",
        "description": "Architecture decisions, components and incidents of a software platform.",
        "guidelines": {
            "contributing": "Write decisions as ADRs: context, decision, consequences.",
            "quality": "Link incidents to the components and decisions involved.",
        },
        "goals": {
            "primary": "Know why the platform is built the way it is.",
            "success_criteria": "Every component has an owner and its decisions on record.",
        },
        "validation": {
            "rules": [
                {"field": "language", "enum": ["python", "go", "rust", "typescript", "java"]},
                {"field": "date", "format": "ISO8601"},
            ]
        },
        "types": [
            (
                "decision",
                0.34,
                {
                    "description": "An architecture decision record",
                    "subdirectory": "decisions",
                    "required": ["title", "date", "scope"],
                    "optional": ["supersedes", "component", "deciders"],
                    "fields": {
                        "date": _field("date"),
                        "scope": _field("select", values=["team", "service", "platform", "org"]),
                        "supersedes": _field("object-ref"),
                        "component": _field("object-ref"),
                        "deciders": _field("list"),
                    },
                    "workflow": {
                        "states": ["proposed", "accepted", "deprecated", "superseded"],
                        "transitions": {
                            "proposed -> accepted": "reviewed",
                            "accepted -> superseded": "a newer decision replaces it",
                        },
                    },
                    "_title": "decision",
                    "_ref": {"supersedes": "decision", "component": "component"},
                    "_sources": 0.3,
                    "_code": 0.35,
                },
            ),
            (
                "component",
                0.26,
                {
                    "description": "A service, library or datastore",
                    "subdirectory": "components",
                    "required": ["title", "owner", "tier"],
                    "optional": ["repo_url", "language", "depends_on", "on_call"],
                    "fields": {
                        "owner": _field("string"),
                        "tier": _field("integer", min=0, max=3),
                        "repo_url": _field("url"),
                        "language": _field("select", values=["python", "go", "rust", "typescript", "java"]),
                        "depends_on": _field("list"),
                        "on_call": _field("boolean"),
                    },
                    "_title": "component",
                    "_sources": 0.1,
                    "_code": 0.4,
                },
            ),
            (
                "incident",
                0.26,
                {
                    "description": "An outage or degradation, with its postmortem",
                    "subdirectory": "incidents",
                    "required": ["title", "date", "severity"],
                    "optional": ["duration_minutes", "component", "postmortem_url"],
                    "fields": {
                        "date": _field("date"),
                        "severity": _field("select", values=["sev1", "sev2", "sev3", "sev4"]),
                        "duration_minutes": _field("integer", min=0, max=10080),
                        "component": _field("object-ref"),
                        "postmortem_url": _field("url"),
                    },
                    "_title": "incident",
                    "_ref": {"component": "component"},
                    "_sources": 0.4,
                    "_code": 0.3,
                },
            ),
            ("person", 0.14, _person(["team"], {"team": _field("string")})),
        ],
    },
]

_TAGS = {
    "atlas": [
        "survey",
        "coastal",
        "inland",
        "mountains",
        "rivers",
        "early-record",
        "disputed",
        "mapped",
        "unmapped",
        "settlement",
        "expedition",
        "trade-route",
        "winter-camp",
        "first-ascent",
        "archive",
        "oral-history",
    ],
    "ledger": [
        "procurement",
        "payments",
        "offshore",
        "shell-company",
        "tender",
        "fees",
        "bank-records",
        "council",
        "audit",
        "conflict-of-interest",
        "leak",
        "on-record",
        "anonymous",
        "follow-up",
    ],
    "lexicon": [
        "strategy",
        "core-concept",
        "jargon",
        "contested",
        "historical",
        "modern",
        "primary",
        "secondary",
        "definition",
        "framework",
        "systems-thinking",
        "design",
    ],
    "chronicle": [
        "war",
        "treaty",
        "reform",
        "famine",
        "trade",
        "succession",
        "religion",
        "charter",
        "uprising",
        "dynasty",
        "contested-date",
        "primary-source",
    ],
    "meridian": [
        "adr",
        "database",
        "latency",
        "outage",
        "security",
        "migration",
        "queue",
        "cache",
        "on-call",
        "postmortem",
        "deprecated",
        "platform",
    ],
}


# ----------------------------------------------------------------------------------------------
# kb.yaml


def _rubric_for_kb(design: dict, type_names: list[str]) -> list:
    """KB-level rubric: every form of SPEC §5 (the type-level ones add the rest)."""
    name = design["name"]
    people_types = [
        t for t in type_names if t in ("finding", "expedition", "event", "incident", "decision", "transaction")
    ][:2]
    items: list = [
        "Entries distinguish documented facts from interpretation",
        "Claims about dates are as precise as the sources allow",
        {
            "text": "Entry has at least two tags",
            "checker": "has_tags",
            "params": {"min": 2},
            "id": "two-tags",
            "severity": "info",
            "weight": 0.5,
        },
        {"text": "Entry cites its sources", "checker": "cites_source", "id": "cites-source", "weight": 2},
        {"text": "Entry body is substantial", "checker": "body_min_words", "params": {"min": 120}, "severity": "info"},
        "tags count >= 2",
        "outlinks count >= 2",
        {
            "text": "Entry is linked from somewhere",
            "policy": "inlinks count >= 1",
            "severity": "info",
            "id": "reachable",
        },
        {"text": "Entry body is non-empty", "covered_by": "schema"},
        {"text": "Entry has a title", "covered_by": "schema", "field": "title", "applies_to": type_names},
        {"text": "Entry explains why it matters", "id": "why-it-matters", "weight": 2},
    ]
    if people_types:
        items.append(
            {
                "text": f"{people_types[0].capitalize()} entries name the people involved",
                "policy": "links.person count >= 1",
                "applies_to": people_types,
                "id": "names-people",
            }
        )
    if name == "lexicon":
        items.append("Cross-KB connections are noted where frameworks intersect")
    return items


def _rubric_for_type(tname: str, spec: dict) -> list:
    req = [f for f in spec["required"] if f != "title"]
    optional = spec.get("optional", [])
    items: list = [f"{tname.capitalize()} entries say how they relate to the rest of the knowledge base"]
    if req:
        items.append(
            {"text": f"{tname.capitalize()} has a {req[0].replace('_', ' ')}", "covered_by": "schema", "field": req[0]}
        )
    if optional:
        opt = optional[0]
        items.append(
            {
                "text": f"{tname.capitalize()} records its {opt.replace('_', ' ')}",
                "checker": "has_field",
                "params": {"field": opt},
                "severity": "info",
                "id": f"{tname}-has-{opt}",
            }
        )
    if spec.get("_sources", 0) >= 0.5:
        items.append(
            {
                "text": f"{tname.capitalize()} has a Sources section",
                "checker": "body_has_section",
                "params": {"heading": "Sources"},
            }
        )
        items.append("body.section 'Sources' required")
    if tname in ("expedition", "finding", "event", "incident"):
        items.append("links.person count >= 1")
    wf = spec.get("workflow")
    if wf:
        states = wf["states"]
        a, b = states[1], states[2]
        items.append(
            f"status {a}->{b} requires metadata.sources count >= 1"
            if "sources" in optional
            else f"status {a}->{b} requires outlinks count >= 2"
        )
        items.append(
            {
                "text": f"{tname.capitalize()} entries in state {states[-1]} are written out",
                "id": f"{tname}-written-out",
                "policy": f"status *->{states[-1]} requires body.words >= 150",
                "severity": "error",
                "weight": 3,
            }
        )
    urls = [f for f, fs in spec["fields"].items() if fs["type"] == "url"]
    if urls:
        items.append(
            {
                "text": f"{tname.capitalize()} links to an online copy",
                "policy": f"metadata.{urls[0]} count >= 1",
                "severity": "info",
                "id": f"{tname}-online",
            }
        )
    if tname == "person":
        items = [
            "People entries describe the person's relation to the subject of the KB",
            {"text": "Person has a role or position described", "covered_by": "schema", "field": "role"},
            {"text": "Person entry is at least a paragraph", "checker": "body_min_words", "params": {"min": 60}},
            "tags count >= 1",
        ]
    return items


_PLAIN = re.compile(r"^[A-Za-z_][A-Za-z0-9_ .,()/'-]*$")
_RESERVED = {"yes", "no", "true", "false", "on", "off", "null", "y", "n", "~"}


def _scalar(v, flow: bool = False) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return str(v)
    s = str(v)
    if _PLAIN.match(s) and s.lower() not in _RESERVED and not (flow and "," in s):
        return s
    return json.dumps(s, ensure_ascii=False)  # a JSON string is a YAML double-quoted scalar


def _is_scalar(v) -> bool:
    return not isinstance(v, (dict, list))


def _flow(v) -> str | None:
    """Flow style for a short list of scalars or a short mapping of scalars / scalar lists."""
    if isinstance(v, list) and all(_is_scalar(x) for x in v):
        text = "[" + ", ".join(_scalar(x, True) for x in v) + "]"
    elif isinstance(v, dict) and all(
        _is_scalar(x) or (isinstance(x, list) and all(_is_scalar(y) for y in x)) for x in v.values()
    ):
        text = (
            "{"
            + ", ".join(
                f"{_scalar(k, True)}: {_flow(x) if isinstance(x, list) else _scalar(x, True)}" for k, x in v.items()
            )
            + "}"
        )
    else:
        return None
    return text if len(text) <= 84 else None


def _emit(v, indent: int, out: list[str]) -> None:
    """Block YAML the way people write kb.yaml: block mappings, flow for short leaves, `>` for prose."""
    pad = " " * indent
    if isinstance(v, dict):
        for key, x in v.items():
            head = f"{pad}{_scalar(key)}:"
            if _is_scalar(x):
                if isinstance(x, str) and len(x) > 84 - indent:
                    out.append(f"{head} >-")
                    out.extend(pad + "  " + line for line in textwrap.wrap(x, 96 - indent))
                else:
                    out.append(f"{head} {_scalar(x)}")
                continue
            flow = (
                _flow(x)
                if (isinstance(x, list) or indent >= 4 or not any(isinstance(y, dict) for y in x.values()))
                else None
            )
            if flow is not None and not (isinstance(x, dict) and len(x) > 3 and indent < 4):
                out.append(f"{head} {flow}")
            elif isinstance(x, list):
                out.append(head)
                _emit(x, indent + 2, out)
            else:
                out.append(head)
                _emit(x, indent + 2, out)
    elif isinstance(v, list):
        for x in v:
            if _is_scalar(x):
                out.append(f"{pad}- {_scalar(x)}")
            elif isinstance(x, dict):
                sub: list[str] = []
                _emit(x, indent + 2, sub)
                sub[0] = f"{pad}- " + sub[0][indent + 2 :]
                out.extend(sub)
            else:
                out.append(f"{pad}- {_flow(x)}")


def kb_yaml_text(design: dict, seed: int) -> str:
    types = {}
    type_names = [t for t, _, _ in design["types"]]
    for tname, _, spec in design["types"]:
        out = {k: v for k, v in spec.items() if not k.startswith("_")}
        out["ai_instructions"] = (
            f"One {tname} per entry. Fill the required fields, link the entry to "
            f"the related entries and cite where each claim comes from."
        )
        if tname != "person":
            out["guidelines"] = f"Write {tname} entries for a reader new to the subject."
            out["goals"] = f"Every {tname} the sources mention has an entry."
        out["evaluation_rubric"] = _rubric_for_type(tname, spec)
        out["display"] = {"icon": "file-text", "layout": "document"}
        types[tname] = out
    doc = {
        "name": design["name"],
        "description": design["description"],
        "kb_type": design["kb_type"],
        "guidelines": design["guidelines"],
        "goals": design["goals"],
        "evaluation_rubric": _rubric_for_kb(design, type_names),
    }
    if "pass_threshold" in design:
        doc["pass_threshold"] = design["pass_threshold"]
    doc["validation"] = design["validation"]
    doc["types"] = types
    doc["relationship_types"] = {r: {"inverse": r} for r in _RELATIONS[2:6]}
    lines = [
        f"# {design['name']}: a synthetic knowledge base generated by bench/generate.py (seed {seed}).",
        "# Its entries carry a few planted defects; manifest.json beside the KBs lists them.",
    ]
    for key, value in doc.items():
        if key in ("guidelines", "evaluation_rubric", "validation", "types", "relationship_types"):
            lines.append("")
        _emit({key: value}, 0, lines)
    text = "\n".join(lines) + "\n"
    if yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)) != doc:
        raise AssertionError(f"kb.yaml of {design['name']} does not round-trip")  # an emitter bug
    return text


# ----------------------------------------------------------------------------------------------
# Planning: every entry's KB, type, id, title and path, decided before any body is written.


class Plan:
    """Light per-entry records; no bodies."""

    def __init__(self):
        self.kb: list[int] = []
        self.type: list[str] = []
        self.id: list[str] = []
        self.title: list[str] = []
        self.path: list[str] = []  # relative to the KB root, posix
        self.nest: list[str | None] = []  # the nested folder's value (atlas places: region)
        self.alias: list[bool] = []


class Titles:
    def __init__(self, rng: random.Random):
        self.r = rng

    def _name(self) -> str:
        r = self.r
        return r.choice(_SYL1) + r.choice(_SYL2)

    def make(self, kind: str) -> str:
        """A title for an entry of KIND."""
        return self._MAKERS.get(kind, Titles._other)(self)

    def _person(self) -> str:
        r = self.r
        return f"{r.choice(_FIRST)} {self._name()}"

    def _place(self) -> str:
        r = self.r
        pre = r.choice(["", "", "", "Upper ", "Lower ", "North ", "Old ", "New "])
        suf = r.choice(
            [
                "",
                "",
                " Falls",
                " Pass",
                " Lake",
                " Ridge",
                " Harbour",
                " Crossing",
                " Springs",
                " Hill",
                " Bay",
                " Fort",
            ]
        )
        return f"{pre}{self._name()}{suf}"

    def _expedition(self) -> str:
        r = self.r
        return f"{self._name()} {r.choice(['Expedition', 'Survey', 'Traverse', 'Crossing'])} of {r.randint(1820, 1938)}"

    def _source(self) -> str:
        r = self.r
        return f"{r.choice(['Journal', 'Letters', 'Survey map', 'Account', 'Report'])} of {self._name()} ({r.randint(1820, 1990)})"

    def _organization(self) -> str:
        r = self.r
        return f"{self._name()} {r.choice(['Holdings', 'Trust', 'Bank', 'Group', 'Agency', 'Foundation', 'Ltd'])}"

    def _transaction(self) -> str:
        r = self.r
        return f"{r.choice(['Transfer', 'Payment', 'Invoice', 'Loan'])} {r.randint(1000, 99999)} to {self._name()}"

    def _finding(self) -> str:
        r = self.r
        return (
            f"{self._name()} {r.choice(['paid', 'funded', 'controlled', 'advised', 'concealed'])} "
            f"{self._name()} {r.choice(['through', 'via', 'before', 'after'])} the {r.choice(_NOUN)}"
        )

    def _concept(self) -> str:
        r = self.r
        tail = r.choice(["", "", ""] + [" " + t for t in _TAIL])
        return f"{r.choice(_ADJ).capitalize()} {r.choice(_NOUN)}{tail}"

    def _term(self) -> str:
        r = self.r
        return (
            f"{r.choice(_NOUN).capitalize()} {r.choice(_NOUN)}"
            if r.random() < 0.5
            else f"{r.choice(_ADJ).capitalize()} {r.choice(_NOUN)}"
        )

    def _writing(self) -> str:
        r = self.r
        return f"{r.choice(['On', 'Notes on', 'The', 'Against', 'Toward'])} {r.choice(_ADJ)} {r.choice(_NOUN)}s"

    def _event(self) -> str:
        r = self.r
        return f"{r.choice(['Battle of', 'Treaty of', 'Founding of', 'Flood at', 'Election in', 'Charter of'])} {self._name()}"

    def _era(self) -> str:
        r = self.r
        return f"The {r.choice(_ADJ)} {r.choice(['years', 'age', 'decades', 'period'])} of {self._name()}"

    def _decision(self) -> str:
        r = self.r
        return f"ADR {r.randint(1, 999)}: {r.choice(['Use', 'Adopt', 'Retire', 'Split', 'Cache'])} {r.choice(_DOMAIN['meridian'])} in {self._name().lower()}"

    def _component(self) -> str:
        r = self.r
        return f"{self._name().lower()}-{r.choice(['api', 'worker', 'db', 'gateway', 'scheduler', 'store'])}"

    def _incident(self) -> str:
        r = self.r
        return f"{r.choice(['Outage', 'Degraded', 'Data loss', 'Latency spike'])} in {self._name().lower()} on day {r.randint(1, 999)}"

    def _other(self) -> str:
        r = self.r
        return f"{r.choice(_ADJ).capitalize()} {r.choice(_NOUN)}"

    # A title of each kind; other kinds get _other's.
    _MAKERS: dict[str, Callable[[Titles], str]] = {
        "person": _person,
        "place": _place,
        "expedition": _expedition,
        "source": _source,
        "organization": _organization,
        "transaction": _transaction,
        "finding": _finding,
        "concept": _concept,
        "term": _term,
        "writing": _writing,
        "event": _event,
        "era": _era,
        "decision": _decision,
        "component": _component,
        "incident": _incident,
    }


def _kb_sizes(n: int, designs: list[dict]) -> list[int]:
    total = sum(d["weight"] for d in designs)
    sizes = [int(n * d["weight"] / total) for d in designs]
    sizes[0] += n - sum(sizes)
    return sizes


def title_key(title: str) -> str:
    """A title as duplicate detection compares it: case folded, its words joined by one space."""
    return " ".join(_WORD.findall(title.casefold()))


def _unique_title(titles: Titles, kind: str, title: str, seen: set[str]) -> str:
    """TITLE, or another of KIND when an entry already has it (normalised): a workspace with
    planted duplicates holds no other pair of equal titles. The title kinds with few forms (terms
    have about 1,500) run out at scale, so after a few draws a place name tells the title apart."""
    for _ in range(TITLE_REDRAWS):
        if title_key(title) not in seen:
            break
        title = titles.make(kind)
    while title_key(title) in seen:
        title = f"{title} ({titles._name()})"
    seen.add(title_key(title))
    return title


def make_plan(rng: random.Random, n: int, designs: list[dict], unique_titles: bool = False) -> Plan:
    """Every entry's KB, type, id, title and path. UNIQUE_TITLES: no two entries of the workspace
    have equal normalised titles; without it they come up by chance (seed 1: 1,377 pairs within
    the KBs of 20,000 entries, 34,361 within those of 100,000)."""
    plan = Plan()
    titles = Titles(rng)
    seen: set[str] = set()
    for k, (design, size) in enumerate(zip(designs, _kb_sizes(n, designs), strict=False)):
        tnames = [t for t, _, _ in design["types"]]
        cum, acc = [], 0.0
        for _, w, _ in design["types"]:
            acc += w
            cum.append(acc)
        specs = {t: s for t, _, s in design["types"]}
        used: dict[str, int] = {}
        for _ in range(size):
            tname = rng.choices(tnames, cum_weights=cum)[0]
            spec = specs[tname]
            title = titles.make(spec["_title"])
            if unique_titles:
                title = _unique_title(titles, spec["_title"], title, seen)
            base = _slug(title) or "entry"
            count = used.get(base, 0) + 1
            used[base] = count
            eid = base if count == 1 else f"{base}-{count}"
            nest = None
            if "_nest" in spec:
                nest = rng.choice(spec["fields"][spec["_nest"]]["values"])
                path = f"{spec['subdirectory']}/{nest}/{eid}.md"
            else:
                path = f"{spec['subdirectory']}/{eid}.md"
            plan.kb.append(k)
            plan.type.append(tname)
            plan.id.append(eid)
            plan.title.append(title)
            plan.path.append(path)
            plan.nest.append(nest)
            # an alias is the title when it is not just the id again (so it never collides with an id)
            plan.alias.append(rng.random() < 0.04 and " " in title)
    return plan


def choose_defects(rng: random.Random, plan: Plan, designs: list[dict]) -> dict[int, str]:
    """entry index -> defect kind; at most one per entry."""
    n = len(plan.id)
    if n < MIN_ENTRIES_FOR_DEFECTS:
        return {}
    free = list(range(n))
    rng.shuffle(free)
    taken: dict[int, str] = {}
    specs = [{t: s for t, _, s in d["types"]} for d in designs]

    def eligible(i: int, kind: str) -> bool:
        spec = specs[plan.kb[i]][plan.type[i]]
        if kind == "missing_required":
            return any(f != "title" for f in spec["required"])
        if kind == "bad_select":
            return any(fs["type"] == "select" and not fs.get("allow_other") for fs in spec["fields"].values())
        return True

    for kind, (rate, _) in DEFECTS.items():
        want = max(1, round(rate * n))
        got = 0
        rest = []
        for i in free:
            if got < want and eligible(i, kind):
                taken[i] = kind
                got += 1
            else:
                rest.append(i)
        free = rest
    return taken


# ----------------------------------------------------------------------------------------------
# Planted duplicates (--duplicates): pairs of entries of one KB that a duplicate detector must
# report (exact, few_words, retitled) or must not (near_miss).


def body_of(text: str) -> str:
    """The body of an entry's TEXT: what follows the closing `---` of its frontmatter."""
    end = text.find("\n---\n", 4)
    return text[end + 5 :] if text.startswith("---\n") and end > 0 else text


def shingles(body: str) -> set[str]:
    """The 3-word shingles of BODY, its words (`\\w+`) case folded."""
    words = _WORD.findall(body.casefold())
    return {" ".join(words[n : n + SHINGLE_WORDS]) for n in range(max(1, len(words) - SHINGLE_WORDS + 1))}


def jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a or b else 1.0


def choose_duplicates(
    rng: random.Random, plan: Plan, defects: dict[int, str], fraction: float
) -> dict[int, tuple[str, int]]:
    """copy -> (kind, original) for round(FRACTION * N) pairs (at least one of each kind), the kinds
    in turn. Both entries of a pair are ordinary entries (no planted defect, no alias: a copied
    alias would make links by that name ambiguous) of one KB and type, the original first in plan
    order, so that its text is written, and kept, by the time the copy is."""
    want = max(len(DUPLICATE_KINDS), round(fraction * len(plan.id)))
    groups: dict[tuple[int, str], list[int]] = {}
    for i in range(len(plan.id)):
        if i not in defects and not plan.alias[i]:
            groups.setdefault((plan.kb[i], plan.type[i]), []).append(i)
    order = [j for group in groups.values() for j in group[1:]]
    order.sort()
    rng.shuffle(order)
    used: set[int] = set()
    pairs: dict[int, tuple[str, int]] = {}
    for j in order:
        if len(pairs) == want:
            break
        group = groups[plan.kb[j], plan.type[j]]
        i = group[int(rng.random() * bisect.bisect_left(group, j))]
        if i in used or j in used:
            continue
        pairs[j] = (DUPLICATE_KINDS[len(pairs) % len(DUPLICATE_KINDS)], i)
        used.update((i, j))
    _place_copies(plan, pairs)
    return pairs


def _place_copies(plan: Plan, pairs: dict[int, tuple[str, int]]) -> None:
    """Each copy moves into its original's folder (so that the relative links it copies resolve);
    an exact copy takes the original's title and the id `ORIGINAL-copy`."""
    ids = set(zip(plan.kb, plan.id, strict=True))
    for j, (kind, i) in sorted(pairs.items()):
        if kind == "exact":
            eid, n = f"{plan.id[i]}-copy", 1
            while (plan.kb[j], eid) in ids:
                n += 1
                eid = f"{plan.id[i]}-copy-{n}"
            ids.add((plan.kb[j], eid))
            plan.id[j], plan.title[j] = eid, plan.title[i]
        elif title_key(plan.title[j]) == title_key(plan.title[i]):
            raise AssertionError(f"a {kind} copy has its original's title: {plan.title[i]}")
        plan.nest[j] = plan.nest[i]
        plan.path[j] = f"{plan.path[i].rpartition('/')[0]}/{plan.id[j]}.md"


# Spans of a body whose words must not change: links (a changed alias would break one), inline
# code and web addresses.
_KEEP = re.compile(r"\[\[[^\]]*\]\]|\[[^\]]*\]\([^)]*\)|`[^`]*`|https?://\S+")
_PROSE_WORD = re.compile(r"[A-Za-z]+")
_NOT_PROSE = ("#", "-", "Source:", "See also")


def prose_words(body: str) -> list[tuple[int, int]]:
    """(start, end) in BODY of each word of its prose paragraphs, outside links, code and lists."""
    spans: list[tuple[int, int]] = []
    at, in_code = 0, False
    for line in body.split("\n"):
        if line.startswith("```"):
            in_code = not in_code
        elif line and not in_code and not line.startswith(_NOT_PROSE):
            kept = [m.span() for m in _KEEP.finditer(line)]
            for m in _PROSE_WORD.finditer(line):
                if not any(a < m.end() and m.start() < b for a, b in kept):
                    spans.append((at + m.start(), at + m.end()))
        at += len(line) + 1
    return spans


def change_words(rng: random.Random, body: str) -> str:
    """BODY with 1-4 of its prose words replaced by other words."""
    spans = prose_words(body)
    chosen = sorted(rng.sample(spans, min(len(spans), rng.randint(1, 4))), reverse=True)
    for start, end in chosen:
        old = body[start:end]
        new = rng.choice([w for w in _COMMON if w != old.casefold()])
        body = body[:start] + (new.capitalize() if old[0].isupper() else new) + body[end:]
    return body


def first_half(body: str) -> str:
    """BODY's first paragraphs, as near to half of its words as a cut after a paragraph (not after
    a heading) comes."""
    blocks = body.split("\n\n")
    half = len(_WORD.findall(body)) / 2
    words, best, best_gap = 0, 1, float("inf")
    for n, block in enumerate(blocks[:-1], 1):
        words += len(_WORD.findall(block))
        if not block.lstrip("\n").startswith("#") and abs(words - half) < best_gap:
            best, best_gap = n, abs(words - half)
    return "\n\n".join(blocks[:best])


class Planted:
    """The planted pairs while entries are written: the originals' texts are kept until their
    copies are written; a near miss gets the first half of its original's body before its own."""

    def __init__(self, rng: random.Random, plan: Plan, pairs: dict[int, tuple[str, int]], names: list[str]):
        self.r = rng
        self.plan = plan
        self.pairs = pairs
        self.names = names
        self.originals = {i: kind for kind, i in pairs.values()}
        self.kept: dict[int, tuple[list[str], str]] = {}
        self.records: list[dict] = []

    def min_words(self, i: int) -> int:
        """The body length an entry needs: an original of a few-words copy needs a long body."""
        return FEW_WORDS_TARGET if self.originals.get(i) == "few_words" else 0

    def is_copy(self, i: int) -> bool:
        return i in self.pairs and self.pairs[i][0] != "near_miss"

    def copy_text(self, j: int) -> str:
        """The copy J: its original's frontmatter under J's id and title, and the original's body
        (with a few words changed for few_words)."""
        kind, i = self.pairs[j]
        fm, body = self.kept.pop(i)
        fm = [fm[0], f"id: {self.plan.id[j]}", f"title: {_q(self.plan.title[j])}"] + fm[3:]
        similarity = 1.0
        if kind == "few_words":
            if len(_WORD.findall(body)) < FEW_WORDS_MIN_BODY:
                raise AssertionError(f"the body of {self.plan.id[i]} is too short for a few-words copy")
            original = body
            body = change_words(self.r, body)
            similarity = jaccard(shingles(original), shingles(body))
            if similarity < FEW_WORDS_MIN_JACCARD:
                raise AssertionError(f"a few-words copy of {self.plan.id[i]} is only {similarity:.3f} alike")
        self.record(kind, j, i, similarity)
        return "\n".join(fm) + body

    def written(self, i: int, fm: list[str], body: str) -> str:
        """The body entry I is written with, once its frontmatter and body are made."""
        if i in self.originals:
            self.kept[i] = (fm, body)
        if i not in self.pairs:
            return body
        _, original = self.pairs[i]
        whole = self.kept.pop(original)[1]
        near = f"{first_half(whole)}\n{body}"
        similarity = jaccard(shingles(whole), shingles(near))
        if similarity > NEAR_MISS_MAX_JACCARD:
            raise AssertionError(f"a near miss of {self.plan.id[original]} is {similarity:.3f} alike")
        self.record("near_miss", i, original, similarity)
        return near

    def record(self, kind: str, j: int, i: int, similarity: float) -> None:
        kb = self.names[self.plan.kb[j]]
        self.records.append(
            {
                "kind": kind,
                "kb": kb,
                "path": f"{kb}/{self.plan.path[j]}",
                "original": f"{kb}/{self.plan.path[i]}",
                "similarity": round(similarity, 4),
            }
        )


# ----------------------------------------------------------------------------------------------
# Writing entries


class FileWriter:
    """Writes files on background threads, so that file creation (system time, which dominates on
    slow disks) overlaps with generating the next entries. The queue is bounded: at most a few
    hundred bodies wait in memory. What is written does not depend on the threads."""

    def __init__(self, threads: int = WRITER_THREADS, backlog: int = 256):
        self.q: queue.Queue = queue.Queue(maxsize=backlog)
        self.error: BaseException | None = None
        self.threads = [threading.Thread(target=self._run, daemon=True) for _ in range(threads)]
        for t in self.threads:
            t.start()

    def _run(self) -> None:
        while True:
            job = self.q.get()
            if job is None:
                return
            if self.error is None:
                try:
                    with open(job[0], "w", encoding="utf-8", newline="\n") as fh:
                        fh.write(job[1])
                except BaseException as exc:  # noqa: BLE001 - re-raised by close()
                    self.error = exc

    def write(self, path: str, text: str) -> None:
        if self.error is not None:
            raise self.error
        self.q.put((path, text))

    def close(self) -> None:
        for _ in self.threads:
            self.q.put(None)
        for t in self.threads:
            t.join()
        if self.error is not None:
            raise self.error


class Writer:
    """Writes the entries one at a time, in plan order, drawing every decision from the one RNG."""

    def __init__(
        self,
        rng: random.Random,
        plan: Plan,
        designs: list[dict],
        defects: dict[int, str],
        out: str,
        long_bodies: bool = False,
        planted: Planted | None = None,
    ):
        self.r = rng
        self.long_bodies = long_bodies
        self.planted = planted
        self.plan = plan
        self.designs = designs
        self.defects = defects
        self.out = out
        self.names = [d["name"] for d in designs]
        self.bases = [d.get("base", d["name"]) for d in designs]  # the design a copied KB was made from
        self.specs = [{t: s for t, _, s in d["types"]} for d in designs]
        self.vocab = [(_FUNCTION * 2) + _COMMON + _DOMAIN[d.get("base", d["name"])] * 2 for d in designs]
        self.manifest: list[dict] = []
        # Link targets: entries that parse and keep their planned id; never the planted orphans.
        bad_targets = ("no_links", "unterminated_frontmatter", "duplicate_id")
        k_count = len(designs)
        self.targets: list[list[int]] = [[] for _ in range(k_count)]
        self.targets_by_type: list[dict[str, list[int]]] = [{} for _ in range(k_count)]
        self.alias_targets: list[list[int]] = [[] for _ in range(k_count)]
        self.dup_of: dict[int, int] = {}
        for i in range(len(plan.id)):
            if defects.get(i) in bad_targets:
                continue
            k = plan.kb[i]
            self.targets[k].append(i)
            self.targets_by_type[k].setdefault(plan.type[i], []).append(i)
            if plan.alias[i]:
                self.alias_targets[k].append(i)
        for i, kind in sorted(defects.items()):
            if kind == "duplicate_id":
                pool = self.targets[plan.kb[i]]
                if pool:
                    self.dup_of[i] = rng.choice(pool)
        self.files = FileWriter()
        for d in sorted(
            {os.path.dirname(os.path.join(out, self.names[plan.kb[i]], plan.path[i])) for i in range(len(plan.id))}
        ):
            os.makedirs(d, exist_ok=True)
        self.plant = bool(defects)
        self._pools: dict[int, list[tuple[str, int]]] = {}

    # -- helpers ----------------------------------------------------------------------------
    def target(self, k: int, avoid: int, prefer: str | None = None) -> int | None:
        r = self.r
        pool = None
        if prefer:
            pool = self.targets_by_type[k].get(prefer)
        if not pool:
            pool = self.targets[k]
        if not pool:
            return None
        for _ in range(4):
            j = pool[int(r.random() * len(pool))]
            if j != avoid:
                return j
        return None

    def rel(self, src: int, dst: int) -> str:
        """Relative markdown path from entry src to entry dst (same KB)."""
        src_dirs = self.plan.path[src].split("/")[:-1]
        dst_parts = self.plan.path[dst].split("/")
        common = 0
        while common < len(src_dirs) and common < len(dst_parts) - 1 and src_dirs[common] == dst_parts[common]:
            common += 1
        return "/".join([".."] * (len(src_dirs) - common) + dst_parts[common:])

    def date(self, lo: int = 1850, hi: int = 2025) -> str:
        r = self.r
        return f"{r.randint(lo, hi):04d}-{r.randint(1, 12):02d}-{r.randint(1, 28):02d}"

    def sentences(self, k: int) -> list[tuple[str, int]]:
        """The KB's pool of generated sentences (text, word count); bodies draw from it.

        Drawing whole sentences from a pool of a few thousand per KB, rather than word by word,
        keeps generation fast (100,000 entries in seconds of CPU) while bodies still differ.
        """
        pool = self._pools.get(k)
        if pool is None:
            r = self.r
            vocab = self.vocab[k]
            pool = []
            for _ in range(SENTENCE_POOL):
                words = r.choices(vocab, k=r.randint(7, 19))
                words[0] = words[0].capitalize()
                words[-1] += "." if r.random() < 0.93 else "?"
                pool.append((" ".join(words), len(words)))
            self._pools[k] = pool
        return pool

    # -- one entry --------------------------------------------------------------------------
    def field_value(self, i: int, k: int, fname: str, fs: dict, spec: dict):
        """YAML text for one field value, or None to leave the field out."""
        r = self.r
        ft = fs["type"]
        if ft == "select":
            # the folder the entry is in (atlas: places/REGION/)
            return self.plan.nest[i] if fname == spec.get("_nest") else r.choice(fs.get("values") or fs.get("options"))
        if ft == "date":
            d = self.date()
            return _q(d) if r.random() < 0.1 else d
        if ft in ("number", "integer"):
            return self.number_value(fname, fs)
        if ft == "url":
            return f"https://{r.choice(['archive', 'records', 'docs', 'www'])}.example.org/{self.names[k]}/{self.plan.id[i]}"
        if ft == "boolean":
            return "true" if r.random() < 0.5 else "false"
        if ft == "list":
            return self.list_value(i, k, fname)
        if ft == "object-ref":
            j = self.target(k, i, spec.get("_ref", {}).get(fname))
            return None if j is None else self.plan.id[j]
        return self.text_value(k, fname)

    def number_value(self, fname: str, fs: dict) -> str:
        """YAML text for a number or integer field."""
        r = self.r
        lo = fs.get("min", 0)
        hi = fs.get("max", 2_000_000)
        if fname == "importance" or fs["type"] == "integer" or r.random() < 0.5:
            return str(r.randint(int(lo), int(hi)))
        return f"{r.uniform(lo, hi):.1f}"

    def list_value(self, i: int, k: int, fname: str) -> str:
        """YAML text for a list field."""
        r = self.r
        if fname in ("sources", "documents"):
            items = [
                f"{r.choice(['minutes', 'letter', 'ledger', 'report', 'interview'])}-{r.randint(1800, 2025)}-{r.randint(1, 99):02d}"
                for _ in range(r.randint(1, 3))
            ]
        elif fname in ("related_concepts", "key_concepts", "depends_on"):
            items = [self.plan.id[j] for j in (self.target(k, i) for _ in range(r.randint(1, 3))) if j is not None]
            items = items or ["none"]
        else:
            items = [
                f"{r.choice(_FIRST)} {r.choice(_SYL1)}{r.choice(_SYL2)}"
                if fname in ("members", "participants", "deciders")
                else r.choice(_NOUN)
                for _ in range(r.randint(1, 4))
            ]
        return "[" + ", ".join(_q(x) if " " in x else x for x in items) + "]"

    def text_value(self, k: int, fname: str) -> str:
        """YAML text for a string or text field."""
        r = self.r
        if fname == "coordinates":
            return _q(f"{r.uniform(-80, 80):.4f}, {r.uniform(-179, 179):.4f}")
        if fname == "role":
            return _q(
                f"{r.choice(['Surveyor', 'Director', 'Clerk', 'Editor', 'Engineer', 'Captain', 'Reporter', 'Treasurer'])}"
                f" of the {r.choice(_NOUN)} {r.choice(['office', 'company', 'council', 'team'])}"
            )
        if fname == "definition":
            return _q(" ".join(self.r.choices(self.vocab[k], k=r.randint(8, 20))).capitalize() + ".")
        if fname in ("author", "reviewer", "owner"):
            return _q(f"{r.choice(_FIRST)} {r.choice(_SYL1)}{r.choice(_SYL2)}")
        if fname == "publisher":
            return _q(r.choice(_PUBLISHERS))
        return _q(f"{r.choice(_ADJ)} {r.choice(_NOUN)}")

    def entry(self, i: int) -> None:  # noqa: C901, PLR0912, PLR0915 - pyproject.toml lists why
        r = self.r
        plan = self.plan
        k = plan.kb[i]
        kb = self.names[k]
        tname = plan.type[i]
        spec = self.specs[k][tname]
        defect = self.defects.get(i)
        eid = plan.id[i]
        rel_path = plan.path[i]
        orphan = defect == "no_links"
        notes: list[dict] = []
        planted = self.planted
        if planted is not None and planted.is_copy(i):
            self.files.write(os.path.join(self.out, kb, rel_path), planted.copy_text(i))
            return

        if defect == "duplicate_id" and i in self.dup_of:
            eid = plan.id[self.dup_of[i]]
            notes.append({"also": f"{kb}/{plan.path[self.dup_of[i]]}", "id": eid})

        fm: list[str] = ["---", f"id: {eid}", f"title: {_q(plan.title[i])}"]
        if defect == "unknown_type":
            bad = r.choice(UNKNOWN_TYPES)
            fm.append(f"type: {bad}")
            notes.append({"type": bad})
        elif r.random() < 0.97:
            fm.append(f"type: {tname}")
        # else: the type comes from the subdirectory (SPEC §3)

        ntags = r.choice([0, 1, 1, 2, 2, 3, 3, 3, 4, 5])
        tags = r.sample(_TAGS[self.bases[k]], ntags)
        if ntags and r.random() < 0.15:
            fm.append("tags:")
            fm.extend(f"  - {t}" for t in tags)
        else:
            fm.append(f"tags: [{', '.join(tags)}]")
        if plan.alias[i] and not orphan:
            fm.append(f"aliases: [{_q(plan.title[i])}]")
        wf = spec.get("workflow")
        if wf:
            fm.append(f"status: {r.choice(wf['states'])}")
        elif r.random() < 0.04:
            fm.append("status: stub")
        if r.random() < 0.5:
            fm.append(f"created_at: {self.date(2019, 2025)}")

        # declared fields
        skip_field = None
        if defect == "missing_required":
            skip_field = r.choice([f for f in spec["required"] if f != "title"])
            notes.append({"field": skip_field})
        bad_select = None
        if defect == "bad_select":
            bad_select = r.choice(
                [f for f, fs in spec["fields"].items() if fs["type"] == "select" and not fs.get("allow_other")]
            )
        date_field = None
        if defect == "impossible_date":
            dates = [f for f, fs in spec["fields"].items() if fs["type"] == "date"]
            date_field = r.choice(dates + ["date"]) if "date" not in dates else r.choice(dates)
            notes.append({"field": date_field, "value": "2025-13-45"})
        required = spec["required"]
        nested: list[str] = []
        for fname, fs in spec["fields"].items():
            if fname == skip_field:
                continue
            if fname == bad_select:
                value = r.choice(BAD_SELECT_VALUES)
                notes.append({"field": fname, "value": value})
            elif fname == date_field:
                value = "2025-13-45"
            elif fname in required or r.random() < 0.6:
                if orphan and fs["type"] == "object-ref":
                    continue
                if orphan and fname in ("related_concepts", "key_concepts", "depends_on"):
                    continue
                value = self.field_value(i, k, fname, fs, spec)
                if value is None:
                    continue
            else:
                continue
            line = f"{fname}: {value}"
            # Pyrite keeps some optional fields under `metadata:`; the entry model merges them
            if (
                fname not in required
                and fs["type"] != "object-ref"
                and fname not in (bad_select, date_field)
                and r.random() < 0.04
            ):
                nested.append(f"  {line}")
            else:
                fm.append(line)
        if date_field == "date" and "date" not in spec["fields"]:
            fm.append("date: 2025-13-45")
        if self.bases[k] in ("atlas", "chronicle") and "importance" not in spec["fields"] and r.random() < 0.3:
            fm.append(f"importance: {r.randint(1, 10)}")
        if nested:
            fm.append("metadata:")
            fm.extend(nested)

        # frontmatter links
        external = defect == "absent_kb_link"
        if not orphan:
            link_lines = []
            for _ in range(r.choice([0, 0, 1, 2, 2, 3, 4])):
                form = r.random()
                other_kb = r.random() < 0.08 and len(self.names) > 1
                kk = r.randrange(len(self.names)) if other_kb else k
                j = self.target(kk, i if kk == k else -1, "person" if r.random() < 0.3 else None)
                if j is None:
                    continue
                tid = plan.id[j]
                if form < 0.6:
                    link_lines.append(f"  - target: {tid}")
                    link_lines.append(f"    relation: {r.choice(_RELATIONS)}")
                    if kk != k or r.random() < 0.3:
                        link_lines.append(f"    kb: {self.names[kk]}")
                    if r.random() < 0.4:
                        link_lines.append(f"    note: {_q(r.choice(_NOTES))}")
                elif form < 0.75 and kk == k:
                    link_lines.append(f"  - {{to: {tid}, type: {r.choice(_RELATIONS)}}}")
                else:
                    link_lines.append(f"  - {tid}" if kk == k else f"  - {self.names[kk]}:{tid}")
            if external and r.random() < 0.5:
                ext = f"{r.choice(_NOUN)}-{r.randint(1, 500)}"
                link_lines.append(f"  - target: {ext}")
                link_lines.append(f"    kb: {ABSENT_KB}")
                link_lines.append("    relation: cites")
                notes.append({"target": f"{ABSENT_KB}:{ext}"})
                external = False
            if link_lines:
                fm.append("links:")
                fm.extend(link_lines)
            if r.random() < 0.08:
                refs = []
                for _ in range(r.randint(1, 2)):
                    kk = r.randrange(len(self.names))
                    j = self.target(kk, i if kk == k else -1)
                    if j is not None:
                        refs.append(plan.id[j] if kk == k else f"{self.names[kk]}:{plan.id[j]}")
                if refs:
                    fm.append(f"references: [{', '.join(refs)}]")
        if defect != "unterminated_frontmatter":
            fm.append("---")
        fm.append("")

        body = self.body(i, k, spec, orphan, external, defect, notes, planted.min_words(i) if planted else 0)
        if planted is not None:
            body = planted.written(i, fm, body)
        text = "\n".join(fm) + body
        self.files.write(os.path.join(self.out, kb, rel_path), text)
        if defect:
            rec = {"kind": defect, "rule": DEFECTS[defect][1], "kb": kb, "path": f"{kb}/{rel_path}", "entry_id": eid}
            for note in notes:
                rec.update(note)
            self.manifest.append(rec)

    def body(  # noqa: C901, PLR0912, PLR0915 - pyproject.toml lists why
        self,
        i: int,
        k: int,
        spec: dict,
        orphan: bool,
        external: bool,
        defect: str | None,
        notes: list[dict],
        min_words: int = 0,
    ) -> str:
        r = self.r
        plan = self.plan
        kb = self.names[k]

        # link tokens to spread over the prose
        tokens: list[str] = []
        if not orphan:
            for _ in range(r.choice([1, 1, 2, 2, 3, 3, 4, 5])):
                x = r.random()
                j = self.target(k, i, "person" if x < 0.2 else None)
                if j is None:
                    continue
                tid = plan.id[j]
                if x < 0.45:
                    tokens.append(f"[[{tid}]]")
                elif x < 0.65:
                    tokens.append(f"[[{tid}|{plan.title[j]}]]")
                elif x < 0.75:
                    tokens.append(f"[{plan.title[j]}]({self.rel(i, j)})")
                elif x < 0.80:
                    tokens.append(f"[[{tid}#{r.choice(_HEADINGS)}]]")
                elif x < 0.83:
                    tokens.append(f"[[{plan.path[j][:-3]}]]")
                elif x < 0.86 and self.alias_targets[k]:
                    a = self.alias_targets[k][int(r.random() * len(self.alias_targets[k]))]
                    if a != i:
                        tokens.append(f"[[{plan.title[a]}]]")
                elif x < 0.88:
                    tokens.append(f"[[{tid.upper() if len(tid) < 12 else tid.capitalize()}]]")
                else:
                    kk = r.randrange(len(self.names))
                    if kk == k:
                        tokens.append(f"[[{tid}]]")
                    else:
                        jj = self.target(kk, -1)
                        if jj is not None:
                            tokens.append(f"[[{self.names[kk]}:{plan.id[jj]}]]")
            if external:
                ext = f"{r.choice(_NOUN)}-{r.randint(1, 500)}"
                tokens.append(f"[[{ABSENT_KB}:{ext}]]")
                notes.append({"target": f"{ABSENT_KB}:{ext}"})
        if defect == "broken_wikilink":
            missing = (
                f"{_slug(plan.title[i])}-{r.choice(['draft', 'old', 'notes', 'v2', 'followup'])}-{r.randint(100, 999)}"
            )
            tokens.append(f"[[{missing}]]")
            notes.append({"target": missing})
        if r.random() < 0.15:
            tokens.append(f"[{r.choice(_PUBLISHERS)}](https://www.example.com/{r.randint(1, 9999)})")

        target_words = max(min_words, r.randint(300, 1000) if self.long_bodies else r.randint(100, 400))
        out: list[str] = [""]
        nsec = min(len(_HEADINGS), 1 + target_words // (300 if self.long_bodies else 120))
        heads = r.sample(_HEADINGS, nsec)
        if r.random() < 0.4:
            heads[0] = None  # an untitled opening paragraph
        per_sec = target_words // nsec + 1
        pending = tokens
        rand = r.random
        pool = self.sentences(k)
        npool = len(pool)
        for h in heads:
            if h:
                out.append(f"## {h}")
                out.append("")
            sec_words = 0
            while sec_words < per_sec:
                para: list[str] = []
                for _ in range(2 + int(rand() * 4)):
                    text, n = pool[int(rand() * npool)]
                    if pending and rand() < 0.35:  # a link inside the sentence, after a word
                        cut = text.find(" ", int(rand() * (len(text) - 1)))
                        if cut > 0:
                            text = f"{text[:cut]} {pending.pop()}{text[cut:]}"
                    if self.long_bodies and rand() < 0.3:
                        text = self.inline_code(text)
                    para.append(text)
                    sec_words += n
                out.append(" ".join(para))
                out.append("")
            if r.random() < spec.get("_code", 0.02):
                out.extend(self.code_block(kb))
        if pending:
            out.append("See also " + ", ".join(pending) + ".")
            out.append("")
        if r.random() < spec.get("_sources", 0.4):
            out.append(f"## {r.choice(_SOURCE_HEADINGS)}")
            out.append("")
            for _ in range(r.randint(1, 4)):
                out.append(
                    f"- {r.choice(_FIRST)} {r.choice(_SYL1)}{r.choice(_SYL2)}, *{r.choice(_ADJ).capitalize()} "
                    f"{r.choice(_NOUN)}s* ({r.choice(_PUBLISHERS)}, {r.randint(1850, 2024)}), "
                    f"https://books.example.org/{r.randint(1000, 99999)}"
                )
            out.append("")
        elif r.random() < 0.1:
            out.append(f"Source: {r.choice(_PUBLISHERS)}, {r.randint(1850, 2024)}.")
            out.append("")
        return "\n".join(out)

    def inline_code(self, text: str) -> str:
        """TEXT with one word (or a `[[...]]` that is no link) written as inline code, as technical
        notes are."""
        r = self.r
        words = text.split(" ")
        at = int(r.random() * len(words))
        if r.random() < 0.1:
            words.insert(at, "`[[not-a-link]]`")
        else:
            words[at] = f"`{words[at].strip('.?')}`"
        return " ".join(words)

    def code_block(self, kb: str) -> list[str]:
        r = self.r
        if kb.startswith("meridian") or r.random() < 0.5:
            lines = [
                "```yaml",
                f"service: {r.choice(_SYL1).lower()}{r.choice(_SYL2)}",
                f"replicas: {r.randint(1, 12)}",
                f"timeout_ms: {r.randint(100, 5000)}",
                "# [[not-a-link]] inside a code block is not a link",
                "```",
            ]
        else:
            lines = [
                "```",
                f"{r.choice(_NOUN)}  {r.randint(10, 99)}  {r.randint(100, 999)}",
                f"{r.choice(_NOUN)}  {r.randint(10, 99)}  {r.randint(100, 999)}",
                "```",
            ]
        text = lines + [""]
        if r.random() < 0.5:
            text += ["Write wikilinks as `[[target]]` or `[[target|label]]`.", ""]
        return text

    # -- cross-kb-links.yaml ----------------------------------------------------------------
    def cross_links(self, k: int, count: int) -> str:
        r = self.r
        kb = self.names[k]
        lines = [f"# Cross-KB links from {kb} to other KBs (SPEC §3: source, target, target_kb, relation, note)", ""]
        others = [kk for kk in range(len(self.names)) if kk != k]
        for n in range(count):
            i = self.target(k, -1)
            if i is None:
                break
            source = self.plan.id[i]
            if n == count - 1:  # one link into the KB that is not generated, reported on this file
                tkb, tid = ABSENT_KB, f"{r.choice(_NOUN)}-{r.randint(1, 500)}"
                self.manifest.append(
                    {
                        "kind": "absent_kb_link",
                        "rule": "unresolved_external",
                        "kb": kb,
                        "path": f"{kb}/cross-kb-links.yaml",
                        "source_path": f"{kb}/{self.plan.path[i]}",
                        "entry_id": source,
                        "target": f"{tkb}:{tid}",
                    }
                )
            elif n == count - 2 and self.plant:  # a source that is no entry of the KB (SPEC §3)
                kk = r.choice(others) if others else k
                j = self.target(kk, -1)
                if j is None:
                    continue
                source = f"{_slug(self.plan.title[i])}-{r.choice(['old', 'renamed', 'draft'])}"
                tkb, tid = self.names[kk], self.plan.id[j]
                self.manifest.append(
                    {
                        "kind": "unknown_cross_link_source",
                        "rule": "broken_link",
                        "kb": kb,
                        "path": f"{kb}/cross-kb-links.yaml",
                        "entry_id": None,
                        "source": source,
                    }
                )
            elif others:
                kk = r.choice(others)
                j = self.target(kk, -1)
                if j is None:
                    continue
                tkb, tid = self.names[kk], self.plan.id[j]
            else:
                continue
            lines += [
                f"- source: {source}",
                f"  target: {tid}",
                f"  target_kb: {tkb}",
                f"  relation: {r.choice(_RELATIONS)}",
                f"  note: {_q(r.choice(_NOTES))}",
                "",
            ]
        return "\n".join(lines)


# ----------------------------------------------------------------------------------------------


def designs_for(kbs: int) -> list[dict]:
    """The designs of KBS knowledge bases: KB_DESIGNS, then copies of them under other names."""
    designs = []
    for n in range(kbs):
        base = KB_DESIGNS[n % len(KB_DESIGNS)]
        design = dict(base, base=base["name"])
        if n >= len(KB_DESIGNS):
            design["name"] = f"{base['name']}-{n // len(KB_DESIGNS) + 1}"
        designs.append(design)
    return designs


def generate(
    out: str,
    entries: int,
    seed: int = 1,
    kbs: int = 5,
    long_bodies: bool = False,
    git: bool = False,
    duplicates: float = 0.0,
) -> dict:
    """Write the workspace into `out` (which must be empty or absent); return the manifest.
    LONG_BODIES: bodies of 300-1000 words with inline code, as in technical notes; GIT: the
    workspace is a git repository (kblint then asks git which files it ignores); DUPLICATES: plant
    round(DUPLICATES * N) pairs of entries (choose_duplicates), with titles unique otherwise."""
    rng = random.Random(seed)
    kbs = max(1, min(kbs, max(1, entries // 10)))
    designs = designs_for(kbs)
    plan = make_plan(rng, entries, designs, unique_titles=duplicates > 0)
    defects = choose_defects(rng, plan, designs)
    planted = None
    if duplicates > 0:  # no draw otherwise: the workspace stays byte for byte what it was without pairs
        pairs = choose_duplicates(rng, plan, defects, duplicates)
        planted = Planted(rng, plan, pairs, [d["name"] for d in designs])
    os.makedirs(out, exist_ok=True)
    if git:
        import subprocess

        subprocess.run(["git", "init", "-q", out], check=True)
        with open(os.path.join(out, ".gitignore"), "w", encoding="utf-8", newline="\n") as fh:
            fh.write("# scratch files are not entries\n*.scratch.md\n")
    w = Writer(rng, plan, designs, defects, out, long_bodies=long_bodies, planted=planted)
    for design in designs:
        root = os.path.join(out, design["name"])
        os.makedirs(root, exist_ok=True)
        with open(os.path.join(root, "kb.yaml"), "w", encoding="utf-8", newline="\n") as fh:
            fh.write(kb_yaml_text(design, seed))
        with open(os.path.join(root, "README.md"), "w", encoding="utf-8", newline="\n") as fh:
            fh.write(
                f"# {design['name']}\n\n{design['description']}\n\nGenerated by bench/generate.py; "
                f"README files are not entries.\n"
            )
        if git:  # a file git ignores: kblint must not read it
            with open(os.path.join(root, "todo.scratch.md"), "w", encoding="utf-8", newline="\n") as fh:
                fh.write("scratch notes, no frontmatter\n")
    try:
        for i in range(len(plan.id)):
            w.entry(i)
    finally:
        w.files.close()
    cross_kb = None
    if len(designs) > 1:
        k = 2 if len(designs) > 2 else 1
        cross_kb = designs[k]["name"]
        with open(os.path.join(out, cross_kb, "cross-kb-links.yaml"), "w", encoding="utf-8", newline="\n") as fh:
            fh.write(w.cross_links(k, max(3, min(40, entries // 100))))
    sizes: dict[str, int] = {}
    for k in plan.kb:
        sizes[designs[k]["name"]] = sizes.get(designs[k]["name"], 0) + 1
    manifest = {
        "generator": "bench/generate.py",
        "seed": seed,
        "entries": entries,
        "kbs": sizes,
        "absent_kb": ABSENT_KB,
        "cross_kb_links": f"{cross_kb}/cross-kb-links.yaml" if cross_kb else None,
        "defects": sorted(w.manifest, key=lambda d: (d["kind"], d["path"])),
    }
    if planted is not None:
        manifest["duplicates"] = sorted(planted.records, key=lambda d: (d["kind"], d["path"]))
    with open(os.path.join(out, MANIFEST), "w", encoding="utf-8", newline="\n") as fh:
        json.dump(manifest, fh, indent=1, sort_keys=True)
        fh.write("\n")
    return manifest


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Generate a synthetic kblint workspace (deterministic per seed).")
    ap.add_argument("out", help="directory to write (created; must be empty)")
    ap.add_argument("--entries", "-n", type=int, required=True, help="number of entries")
    ap.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    ap.add_argument(
        "--kbs", type=int, default=5, help=f"number of KBs (default 5; beyond {len(KB_DESIGNS)}, copies of the designs)"
    )
    ap.add_argument("--long-bodies", action="store_true", help="bodies of 300-1000 words with inline code")
    ap.add_argument("--git", action="store_true", help="make the workspace one git repository")
    ap.add_argument(
        "--duplicates",
        type=float,
        default=0.0,
        metavar="FRACTION",
        help="plant round(FRACTION * N) pairs of duplicate entries (exact, few_words, retitled) and near misses "
        f"within KBs, about evenly, at most {MAX_DUPLICATES} (default 0: none)",
    )
    ap.add_argument(
        "--force", action="store_true", help="replace OUT if it holds a workspace this script generated before"
    )
    args = ap.parse_args(argv)
    if args.entries < 1:
        ap.error("--entries must be at least 1")
    if not 0 <= args.duplicates <= MAX_DUPLICATES:
        ap.error(f"--duplicates must be between 0 and {MAX_DUPLICATES}")
    if os.path.isdir(args.out) and os.listdir(args.out):
        if not (args.force and os.path.isfile(os.path.join(args.out, MANIFEST))):
            ap.error(f"{args.out} is not empty (--force replaces a workspace generated by this script)")
        shutil.rmtree(args.out)
    start = time.perf_counter()
    manifest = generate(args.out, args.entries, args.seed, args.kbs, args.long_bodies, args.git, args.duplicates)
    elapsed = time.perf_counter() - start
    sizes = ", ".join(f"{k} {v}" for k, v in manifest["kbs"].items())
    pairs = f", {len(manifest['duplicates'])} planted duplicate pairs" if "duplicates" in manifest else ""
    print(
        f"generated {len(manifest['kbs'])} KBs, {args.entries} entries ({sizes}), "
        f"{len(manifest['defects'])} planted defects{pairs}, seed {args.seed}, into {args.out} in {elapsed:.2f} s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
