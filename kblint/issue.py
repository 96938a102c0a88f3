"""The Issue data model: one finding, low in the house so every module may import it."""

from __future__ import annotations

import hashlib
from functools import lru_cache
from operator import attrgetter
from dataclasses import field as dc_field

from .plainclass import dataclass

SEVERITIES = ("error", "warning", "info")
SEVERITY_RANK = {"info": 0, "warning": 1, "error": 2}
FAIL_ON_CHOICES = ("error", "warning", "info", "never")


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
    # What tells this issue apart from others of the same rule on the same file
    # (a link target, a duplicate id): part of the fingerprint, never shown.
    discriminator: str = ""
    # The entry's type, kept so `--type` can filter; not part of the report.
    entry_type: str | None = dc_field(default=None, repr=False)
    # The id of the rubric item behind the issue, so a suppression can name it.
    item_id: str | None = dc_field(default=None, repr=False)
    # Report.fingerprint, once computed (the run cache keeps it: a warm run need not hash again).
    stored_fingerprint: str | None = dc_field(default=None, repr=False)

    def fingerprint(self, display_path: str) -> str:
        parts = (
            self.kb_name or "",
            display_path,
            self.rule,
            self.checker or "",
            self.rubric_item or self.policy or "",
            self.field or "",
            self.discriminator,
        )
        return hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()[:32]


# The order of a report's issues: by file, position, rule, message.
SORT_KEY = attrgetter("path", "line", "column", "rule", "message")


def at_or_above(severity: str, threshold: str) -> bool:
    if threshold == "never":
        return False
    return SEVERITY_RANK[severity] >= SEVERITY_RANK[threshold]


def empty_counts() -> dict[str, int]:
    return {"error": 0, "warning": 0, "info": 0}


@dataclass(slots=True)
class KBReport:
    """One KB's line in a report: what was linted, its counts, score and coverage."""

    name: str
    root: str  # absolute directory
    files: int = 0
    entries: int = 0
    paths: list[str] = dc_field(default_factory=list)  # absolute paths of the reported files
    counts: dict[str, int] = dc_field(default_factory=empty_counts)
    score: float | None = None
    coverage: dict = dc_field(default_factory=lambda: {
        "schema": 0, "checker": 0, "policy": 0, "judgment": 0, "broken": 0, "judgment_evaluated": False})


@dataclass(slots=True)
class Report:
    """The outcome of a run, as every output format renders it."""

    kbs: list[KBReport]
    issues: list[Issue]  # reported issues, sorted
    hidden: dict[str, int] = dc_field(default_factory=dict)  # filter name → issues it hid
    judgment: dict = dc_field(default_factory=lambda: {
        "enabled": False, "reason": "no LLM configured", "evaluator": None, "calls": 0, "cache_hits": 0,
        "prompt_tokens": 0, "completion_tokens": 0, "not_evaluated": 0})
    fail_on: str = "error"
    judgment_items: int = 0  # judgment items in the plans of the reported KBs
    baselined: int | None = None  # with --baseline: issues it hid
    dry_run: list | None = None  # with --dry-run: what the judge would have been sent
    fatal: str | None = None  # the run could not do its job (exit 2), e.g. --llm-required without an LLM
    baseline_stale: int = 0  # with --baseline: recorded issues that no longer occur
    unreadable: list[str] = dc_field(default_factory=list)  # kb.yaml files that could not be read
    _roots: dict[str, str] | None = dc_field(default=None, repr=False)  # KB name → root, for fingerprints

    def fingerprint(self, issue: Issue) -> str:
        """Stable across runs and directories: the path in it is relative to the issue's KB."""
        found = issue.stored_fingerprint
        if found is not None:
            return found
        if self._roots is None:
            self._roots = {}
            for kb in self.kbs:
                self._roots.setdefault(kb.name, kb.root)
        found = issue.stored_fingerprint = fingerprint_in(issue, self._roots.get(issue.kb_name))
        return found

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
    def exit_code(self) -> int:
        if self.unreadable or self.fatal:
            return 2
        return 1 if any(at_or_above(i.severity, self.fail_on) for i in self.issues) else 0


def fingerprint_in(issue: Issue, root: str | None) -> str:
    """The fingerprint of ISSUE of the KB whose directory is ROOT (the path in it is relative to ROOT)."""
    return issue.fingerprint(_relative(issue.path, root) if root is not None else issue.path)


@lru_cache(maxsize=65536)
def _relative(path: str, root: str) -> str:
    import os

    prefix = root.rstrip(os.sep) + os.sep
    rel = path[len(prefix):] if path.startswith(prefix) else os.path.relpath(path, root)
    return rel.replace(os.sep, "/")
