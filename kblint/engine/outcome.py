"""What linting found, as the run cache stores it and the report is made from."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..model.issue import DryRunRow, DuplicateSummary, Issue, JudgmentSummary, KBReport


@dataclass(slots=True)
class Outcome:
    """What linting found, before --select/--ignore/--type, baselines and counts."""

    kbs: list[KBReport]
    issues: list[Issue]  # suppressions applied, in report order (model.issue.in_report_order)
    hidden: dict[str, int]
    judgment: JudgmentSummary
    judgment_items: int
    dry_run: list[DryRunRow] | None = None
    unavailable: str | None = None  # the LLM could not be reached (or none is configured)
    # non-entry files links named, as (KB root, KB-relative path), and whether they exist
    probes: dict[tuple[str, str], bool] = field(default_factory=dict)
    duplicates: DuplicateSummary = field(default_factory=DuplicateSummary)
