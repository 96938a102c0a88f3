"""What hides issues without changing the plan (SPEC §5.1, §10, §12): --select, --ignore and --type,
suppressions inside entries, baselines, and the entries of a --shard."""

from __future__ import annotations

import difflib
import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from ..checkers.registry import registry
from ..model.facts import EntryFacts
from ..model.issue import SEVERITY_RANK, Issue, Report
from ..model.json_schema import JSON_SCHEMA
from ..model.plan import Binding
from ..model.suppression import Suppression
from ..paths import display_path, relative_to
from ..rules import RULES, TIERS, Site
from ..workspace import UsageError, glob_to_regex


def check_names(names: list[str], option: str) -> None:
    """Every name given to --select or --ignore is a rule, a tier or a checker."""
    known = set(RULES) | set(TIERS) | set(registry().names()) | {JSON_SCHEMA}
    for name in names:
        if name not in known:
            near = difflib.get_close_matches(name, sorted(known), n=1)
            hint = f"; did you mean '{near[0]}'?" if near else ""
            raise UsageError(f"{option}: unknown rule, tier or checker '{name}'{hint}")


@dataclass(slots=True)
class IssueFilter:
    """--select / --ignore (rule, tier or checker names), --type, --min-severity and the
    configuration's per_file_ignores; counts what each hid."""

    select: set[str]
    ignore: set[str]
    type_name: str | None
    min_severity: str = "info"
    per_file: list[tuple[re.Pattern[str], set[str]]] = field(default_factory=list)
    roots: dict[str, str] = field(default_factory=dict)  # KB name → directory, for per_file_ignores
    hidden: dict[str, int] = field(default_factory=dict)

    @property
    def active(self) -> bool:
        return bool(self.select or self.ignore or self.type_name is not None or self.per_file) or (
            self.min_severity != "info"
        )

    def keep(self, issue: Issue) -> bool:
        if SEVERITY_RANK[issue.severity] < SEVERITY_RANK[self.min_severity]:
            return self._hide("--min-severity")
        if self.type_name is not None and issue.entry_id is not None and issue.entry_type != self.type_name:
            return self._hide("--type")
        names = {issue.rule, issue.tier} | ({issue.checker} if issue.checker else set())
        if self.select and not names & self.select:
            return self._hide("--select")
        if self.ignore and names & self.ignore:
            return self._hide("--ignore")
        if self.per_file and self._ignored_in_file(issue, names):
            return self._hide("per_file_ignores")
        return True

    def _ignored_in_file(self, issue: Issue, names: set[str]) -> bool:
        root = self.roots.get(issue.kb_name or "")
        relpath = relative_to(issue.path, root) if root is not None else issue.path
        return any(names & ignored and pattern.match(relpath) for pattern, ignored in self.per_file)

    def _hide(self, name: str) -> bool:
        self.hidden[name] = self.hidden.get(name, 0) + 1
        return False


def per_file_ignores(table: dict[str, list[str]]) -> list[tuple[re.Pattern[str], set[str]]]:
    """The configuration's per_file_ignores: (KB-relative glob, names) with the names checked."""
    for names in table.values():
        check_names(names, "per_file_ignores")
    return [(glob_to_regex(glob), set(names)) for glob, names in table.items()]


@dataclass(slots=True)
class Suppressed:
    """An entry that has suppressions, and the rubric items that apply to it."""

    facts: EntryFacts
    bindings: list[Binding]
    # Whether the entry is this run's to report. Another entry's issues may name it (a link to it
    # with --changed-since, the graph issues shard 1 reports): its suppressions hide them, but
    # whether each was used is for the run that reports the entry to say.
    counted: bool = True


def apply_suppressions(
    issues: list[Issue], suppressed: dict[str, Suppressed], hidden: dict[str, int], elsewhere: Iterable[Issue] = ()
) -> list[Issue]:
    """Drop the issues an entry's suppressions name on the lines they cover; report the
    suppressions that suppressed nothing, and the names that are no rule, checker or item.
    ELSEWHERE: issues found but reported by another run (another shard's): they use suppressions."""
    if not suppressed:
        return issues
    used: set[tuple[str, int]] = set()  # (path, index of the suppression in the entry's facts)
    for issue in elsewhere:
        used.update((issue.path, n) for n in _hits(issue, suppressed))
    kept = []
    for issue in issues:
        hit = _hits(issue, suppressed)
        if hit:
            used.update((issue.path, n) for n in hit)
            hidden["suppressions"] = hidden.get("suppressions", 0) + 1
        else:
            kept.append(issue)
    for path, entry in suppressed.items():
        if entry.counted:
            kept.extend(_unused_suppressions(path, entry, used))
    return kept


def _hits(issue: Issue, suppressed: dict[str, Suppressed]) -> list[int]:
    """The indexes of the suppressions of ISSUE's entry that hide it."""
    entry = suppressed.get(issue.path) if issue.entry_id is not None else None
    return _suppressing(issue, entry.facts.suppress) if entry is not None else []


def _suppressing(issue: Issue, suppress: tuple[Suppression, ...]) -> list[int]:
    """The indexes of the suppressions that hide ISSUE."""
    names = (issue.rule, issue.checker, issue.item_id)
    return [n for n, s in enumerate(suppress) if s.name in names and s.covers(issue.line)]


def _unused_suppressions(path: str, entry: Suppressed, used: set[tuple[str, int]]) -> list[Issue]:
    facts = entry.facts
    ran = _names_that_ran(entry.bindings)
    issues = []
    written: dict[str, int] = {}  # suppressions of each name so far: the same name twice in an entry is two issues
    for n, suppression in enumerate(facts.suppress):
        name = suppression.name
        again = written[name] = written.get(name, -1) + 1
        if (path, n) in used:
            continue
        if name in ran:
            rule, message = "unused_suppression", f"Suppression of '{name}' suppressed nothing"
        elif (
            name in RULES
            or name in registry().checkers
            or name == JSON_SCHEMA
            or any(b.id == name for b in entry.bindings)
        ):
            continue  # it did not run on this entry (e.g. the judgment tier without an LLM)
        else:
            rule, message = "invalid_suppression", _unknown_name(name, entry.bindings)
        site = Site(facts.kb_name, path, facts.id, facts.type)
        discriminator = f"{name}#{again}" if again else name
        issues.append(
            RULES[rule].issue(site, message, line=suppression.line, field="kblint", discriminator=discriminator)
        )
    return issues


def _unknown_name(name: str, bindings: list[Binding]) -> str:
    known = sorted(set(RULES) | set(registry().names()) | {JSON_SCHEMA} | {b.id for b in bindings if b.id})
    near = difflib.get_close_matches(name, known, n=1)
    hint = f"; did you mean '{near[0]}'?" if near else ""
    return f"Suppression names '{name}', which is no rule, checker or rubric item id here{hint}"


def _names_that_ran(bindings: list[Binding]) -> set[str]:
    ran = {name for name, rule in RULES.items() if rule.tier in ("structure", "schema")}
    for b in bindings:
        if b.runs:
            ran.update({"rubric_violation", b.checker or (JSON_SCHEMA if b.validator is not None else "policy"), b.id})
    return ran


def apply_baseline(report: Report, write_to: str | None, read_from: str | None, partial: bool = False) -> None:
    """--write-baseline records the report's issues; --baseline hides the recorded ones, and counts
    the recorded ones that no longer occur unless the run is PARTIAL (--shard, --changed-since:
    what it did not lint did not occur in it)."""
    from .. import baseline

    if write_to:
        baseline.write(
            write_to,
            [
                {
                    "fingerprint": report.fingerprint(i),
                    "path": display_path(i.path),
                    "rule": i.rule,
                    "checker": i.checker,
                    "message": i.message,
                }
                for i in report.issues
            ],
        )
    if read_from:
        known = baseline.load(read_from)
        prints = [(report.fingerprint(i), i) for i in report.issues]
        report.issues = [i for fp, i in prints if fp not in known]
        report.baselined = len(prints) - len(report.issues)
        current = {fp for fp, _ in prints}
        report.baseline_stale = 0 if partial else sum(1 for fp in known if fp not in current)
        if report.baselined:
            report.hidden["baseline"] = report.baselined


def parse_shard(text: str) -> tuple[int, int]:
    """`K/N` → (K, N)."""
    try:
        k, n = (int(part) for part in text.split("/"))
    except ValueError:
        raise UsageError(f"--shard {text}: expected K/N, e.g. 1/4") from None
    if not (n >= 1 and 1 <= k <= n):
        raise UsageError(f"--shard {text}: K must be between 1 and N")
    return k, n


def in_shard(kb_name: str, relpath: str, shard: tuple[int, int]) -> bool:
    """Whether an entry belongs to shard K of N: a stable hash of its KB and path."""
    digest = hashlib.sha1(f"{kb_name}\0{relpath}".encode("utf-8", "surrogateescape")).digest()
    return int.from_bytes(digest[:8], "big") % shard[1] == shard[0] - 1
