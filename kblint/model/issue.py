"""Issues and the report of a run: what every output format renders."""

from __future__ import annotations

import dataclasses
import hashlib
from dataclasses import dataclass, field
from operator import attrgetter
from typing import Any, NamedTuple

from ..paths import relative_to

SEVERITIES = ("error", "warning", "info")
SEVERITY_RANK = {"info": 0, "warning": 1, "error": 2}
FAIL_ON_CHOICES = ("error", "warning", "info", "never")
BINDINGS = ("schema", "checker", "policy", "judgment", "broken")


class Related(NamedTuple):
    """The other entry of an issue between two entries (one slot of the issue, not three: a run
    holds hundreds of thousands of issues)."""

    path: str  # absolute
    id: str
    similarity: float | None = None  # how alike the two entries' bodies are, from 0 to 1


@dataclass(slots=True)
class Issue:
    """One problem found, where it is, and what found it."""

    rule: str
    severity: str
    tier: str
    message: str
    kb_name: str | None = None
    entry_id: str | None = None
    path: str = ""  # absolute path of the file the issue is on
    line: int = 1
    column: int = 1
    field: str | None = None
    rubric_item: str | None = None
    checker: str | None = None
    policy: str | None = None
    confidence: float | None = None
    evaluator: str | None = None
    cached: bool | None = None
    evidence: str | None = None  # a judged issue: the words of the entry the judge quoted
    related: Related | None = None  # an issue between two entries (a duplicate): the other one
    # What tells this issue apart from others of the same rule on the same file
    # (a link target, a duplicate id): part of the fingerprint, never shown.
    discriminator: str = ""
    # The entry's type, kept so `--type` can filter; not part of the report.
    # (The class has a field named `field`: dataclasses.field is spelled out.)
    entry_type: str | None = dataclasses.field(default=None, repr=False)
    # The id of the rubric item behind the issue, so a suppression can name it.
    item_id: str | None = dataclasses.field(default=None, repr=False)
    # The fingerprint, once computed (see Report.fingerprint).
    fingerprint: str | None = dataclasses.field(default=None, repr=False)
    # `kblint validate --fix` has a fix for it: marked after the run, for the text report; never
    # stored, so it comes last and ISSUE_FIELDS (the run cache's columns) leaves it out.
    fixable: bool = dataclasses.field(default=False, repr=False)


ISSUE_FIELDS = tuple(name for name in Issue.__dataclass_fields__ if name != "fixable")
ISSUE_VALUES = attrgetter(*ISSUE_FIELDS)

_CONFIG_FILES = ("/kb.yaml", "/cross-kb-links.yaml")


def sort_key(issue: Issue) -> tuple[str, bool, str, int, int, str, str]:
    """Reports list each KB's issues together, those of its kb.yaml and cross-kb-links.yaml first
    (a link declared there is an issue of its line, whatever entry it starts from), then file by
    file, by line."""
    config = issue.path.endswith(_CONFIG_FILES)
    return (issue.kb_name or "", not config, issue.path, issue.line, issue.column, issue.rule, issue.message)


def in_report_order(issues: list[Issue], roots: dict[str, str]) -> list[Issue]:
    """ISSUES sorted as reports list them: by sort_key, with the KBs in the order of their
    directories (ROOTS: KB name → directory), so that a report runs by path (SPEC §9) but for each
    KB's kb.yaml and cross-kb-links.yaml, which come first. KB by KB: the sort keys of one KB's
    issues are held at once."""
    by_kb: dict[str, list[Issue]] = {}
    for issue in issues:
        by_kb.setdefault(issue.kb_name or "", []).append(issue)
    ordered: list[Issue] = []
    for name in sorted(by_kb, key=lambda name: (roots.get(name, name), name)):
        group = by_kb.pop(name)
        group.sort(key=sort_key)
        ordered.extend(group)
    return ordered


def fingerprint_of(issue: Issue, root: str | None) -> str:
    """The fingerprint of ISSUE of the KB whose directory is ROOT: stable across runs, directories
    and edits elsewhere in the file (SPEC §9), so the path in it is relative to the KB."""
    path = relative_to(issue.path, root) if root is not None else issue.path
    parts = (
        issue.kb_name or "",
        path,
        issue.rule,
        issue.checker or "",
        issue.rubric_item or issue.policy or "",
        issue.field or "",
        issue.discriminator,
    )
    return hashlib.sha256("\x1f".join(parts).encode("utf-8", "surrogateescape")).hexdigest()[:32]


def at_or_above(severity: str, threshold: str) -> bool:
    if threshold == "never":
        return False
    return SEVERITY_RANK[severity] >= SEVERITY_RANK[threshold]


def empty_counts() -> dict[str, int]:
    return {"error": 0, "warning": 0, "info": 0}


@dataclass(slots=True)
class Coverage:
    """How a KB's rubric items are bound, counted once per scope (SPEC §5.1)."""

    schema: int = 0
    checker: int = 0
    policy: int = 0
    judgment: int = 0
    broken: int = 0
    judgment_evaluated: bool = False

    def as_dict(self) -> dict[str, int | bool]:
        return {
            "schema": self.schema,
            "checker": self.checker,
            "policy": self.policy,
            "judgment": self.judgment,
            "broken": self.broken,
            "judgment_evaluated": self.judgment_evaluated,
        }


@dataclass(slots=True)
class JudgmentSummary:
    """What the judgment tier did in a run (the JSON report's `judgment` block)."""

    enabled: bool = False
    reason: str | None = "no LLM configured"
    evaluator: str | None = None
    calls: int = 0
    cache_hits: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    not_evaluated: int = 0
    not_evaluated_reason: str | None = None
    timeouts: int = 0  # requests the provider did not answer in time
    structured_output: str | None = None  # how answers were asked for (json_schema, tool, plain, ...)
    structured_output_fallbacks: list[str] = field(default_factory=list)  # modes the server refused
    answers: dict[str, int] = field(default_factory=dict)  # answers read: valid, invalid
    verdicts: dict[str, int] = field(default_factory=dict)  # new verdicts by kind
    notes: list[str] = field(default_factory=list)  # what the judge assumed (a context length it was not told)
    providers: dict[str, dict[str, Any]] = field(default_factory=dict)  # evaluator → what it was asked, errors by kind

    def as_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "enabled": self.enabled,
            "reason": self.reason,
            "evaluator": self.evaluator,
            "calls": self.calls,
            "cache_hits": self.cache_hits,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "not_evaluated": self.not_evaluated,
        }
        if self.not_evaluated_reason is not None:
            data["not_evaluated_reason"] = self.not_evaluated_reason
        if self.timeouts:
            data["timeouts"] = self.timeouts
        if self.structured_output:
            data["structured_output"] = self.structured_output
        if self.structured_output_fallbacks:
            data["structured_output_fallbacks"] = list(self.structured_output_fallbacks)
        if self.answers:
            data["answers"] = dict(self.answers)
            data["verdicts"] = dict(sorted(self.verdicts.items()))
        if self.notes:
            data["notes"] = list(self.notes)
        if self.providers:
            data["providers"] = {name: dict(block) for name, block in self.providers.items()}
        return data


@dataclass(slots=True)
class DuplicateSummary:
    """What the comparison of entries with each other found (the JSON report's `duplicates` block)."""

    enabled: bool = False
    pairs: int = 0  # pairs of alike entries (possible duplicates) on reported entries
    classified: dict[str, int] = field(default_factory=dict)  # by an LLM: class → pairs
    not_classified: int = 0  # alike pairs no LLM classified: they stay possible_duplicate
    reason: str | None = None  # why some were not classified
    requests: int = 0  # pairs sent to the judge (the judgment block counts them with the entries)

    def as_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"enabled": self.enabled, "pairs": self.pairs}
        if self.classified:
            data["classified"] = dict(self.classified)
            data["requests"] = self.requests
        data["not_classified"] = self.not_classified
        if self.reason:
            data["reason"] = self.reason
        return data


@dataclass(slots=True)
class KBReport:
    """One KB's line in a report: what was linted, its counts, score and coverage."""

    name: str
    root: str  # absolute directory
    files: int = 0
    entries: int = 0
    paths: list[str] = field(default_factory=list)  # absolute paths of the reported files
    ids: list[str | None] = field(default_factory=list)  # the id of the entry of each path (None: not parsed)
    counts: dict[str, int] = field(default_factory=empty_counts)
    score: float | None = None
    coverage: Coverage = field(default_factory=Coverage)
    incomplete: str | None = None  # why the score is not given: every judgment of the KB failed
    # graded items (README "Graded rubrics"): each entry's levels, and how many entries reached each level
    grades: list[EntryGrades] = field(default_factory=list)
    levels: dict[str, LevelCounts] = field(default_factory=dict)  # by item id


@dataclass(slots=True)
class Criterion:
    """The level an entry reached on one graded item."""

    item_id: str
    item: str  # the item's text
    level: str  # the level's id
    label: str  # the level's name
    score: float

    def text(self) -> str:
        """`Sources: excellent (1.00)`."""
        return f"{self.item}: {self.label} ({self.score:.2f})"

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclass(slots=True)
class EntryGrades:
    """An entry's levels on the graded items of its type."""

    path: str
    entry_id: str
    criteria: list[Criterion]

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def of(cls, data: dict[str, Any]) -> EntryGrades:
        """As as_dict gave it (the run cache)."""
        return cls(data["path"], data["entry_id"], [Criterion(**c) for c in data["criteria"]])


@dataclass(slots=True)
class LevelCounts:
    """How many of a KB's entries reached each level of one graded item."""

    item: str  # the item's text
    counts: dict[str, int]  # level id → entries, in the order of the levels

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclass(slots=True)
class DryRunRow:
    """What the judge would be sent for one entry (`--dry-run`)."""

    path: str
    entry_id: str | None
    items: list[str]
    cached_items: list[str]
    estimated_prompt_tokens: int
    body_truncated: bool


@dataclass(slots=True)
class Report:
    """The outcome of a run, as every output format renders it."""

    kbs: list[KBReport]
    issues: list[Issue]  # reported issues, sorted
    hidden: dict[str, int] = field(default_factory=dict)  # filter name → issues it hid
    judgment: JudgmentSummary = field(default_factory=JudgmentSummary)
    fail_on: str = "error"
    judgment_items: int = 0  # judgment items in the plans of the reported KBs
    baselined: int | None = None  # with --baseline: issues it hid
    baseline_stale: int = 0  # with --baseline: recorded issues that no longer occur
    dry_run: list[DryRunRow] | None = None  # with --dry-run: what the judge would have been sent
    fatal: str | None = None  # the run could not do its job (exit 2), e.g. --llm-required without an LLM
    unreadable: list[str] = field(default_factory=list)  # kb.yaml files that could not be read
    duplicates: DuplicateSummary = field(default_factory=DuplicateSummary)
    shard: str | None = None  # with --shard: K/N, the part of the files this report covers
    changed_since: str | None = None  # with --changed-since: REF, since when the files it covers changed
    _roots: dict[str, str] | None = field(default=None, repr=False)  # KB name → directory

    def fingerprint(self, issue: Issue) -> str:
        """ISSUE's fingerprint (computed once: pass 1 computes those of its issues)."""
        if issue.fingerprint is None:
            if self._roots is None:
                self._roots = {kb.name: kb.root for kb in reversed(self.kbs)}
            issue.fingerprint = fingerprint_of(issue, self._roots.get(issue.kb_name or ""))
        return issue.fingerprint

    @property
    def curation(self) -> list[Issue]:
        """The pairs of conflicting entries a human should curate, once each."""
        return [i for i in self.issues if i.rule == "conflicting_entries"]

    @property
    def files(self) -> int:
        return sum(kb.files for kb in self.kbs)

    @property
    def entries(self) -> int:
        return sum(kb.entries for kb in self.kbs)

    @property
    def counts(self) -> dict[str, int]:
        counts = empty_counts()
        for issue in self.issues:
            counts[issue.severity] += 1
        return counts

    @property
    def problems(self) -> list[str]:
        """What stopped kblint from doing its whole job: unreadable kb.yaml files, a fatal error."""
        return [*self.unreadable, *([self.fatal] if self.fatal else [])]

    @property
    def exit_code(self) -> int:
        if self.problems:
            return 2
        return 1 if any(at_or_above(i.severity, self.fail_on) for i in self.issues) else 0
