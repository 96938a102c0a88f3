"""The rules of SPEC §8: name, tier, default severity and documentation, and the one way an
issue of a rule is made (`Rule.issue`).

Where each rule's issues are made:

- `rules.structure` and `rules.schema`: an entry's own structure and schema rules (pass 1);
- `rules.links`: broken_link, unresolved_external, noncanonical_link, duplicate_id, orphan_entry
  (the graph pass);
- `rules.duplicates`: possible_duplicate, duplicate_entry, conflicting_entries;
- `rules.rubric`: the rubric_* rules of kb.yaml's rubric itself (rubric_levels_unordered and
  rubric_policy_typo through the broken items of `model.plan`); `rules.config`: config_error;
- in the engine, where what they report on happens: parse_error and invalid_suppression
  (`engine.pass_entries`, where files are read), rubric_violation and checker_error
  (`engine.checks`, `engine.schema_items`), score_below_threshold (`engine.scoring`),
  unused_suppression (`engine.filters`), llm_rubric_violation, judgment_uncertain, judgment_error
  and judgment_unavailable (`engine.pass_judgment`).

This table is what `--select`, `--ignore`, reports and `explain` read.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypedDict, Unpack

from ..model.issue import Issue, Related
from ..paths import decodable, printable


@dataclass(slots=True)
class Site:
    """Where an issue is: the file, and the KB and entry it belongs to (None for kb.yaml)."""

    kb_name: str | None
    path: str
    entry_id: str | None = None
    entry_type: str | None = None


class IssueDetails(TypedDict, total=False):
    """What some issues carry beside their place: the rubric item, checker or policy behind them,
    and for judgment issues the judge's confidence."""

    rubric_item: str | None
    checker: str | None
    policy: str | None
    item_id: str | None
    confidence: float | None
    evaluator: str | None
    cached: bool | None
    evidence: str | None
    related: Related | None


@dataclass(frozen=True, slots=True)
class Rule:
    """A built-in rule: its tier, default severity and what it checks."""

    name: str
    tier: str
    severity: str
    summary: str

    def issue(
        self,
        site: Site,
        message: str,
        *,
        line: int = 1,
        column: int = 1,
        field: str | None = None,
        discriminator: str = "",
        severity: str | None = None,
        tier: str | None = None,
        **details: Unpack[IssueDetails],
    ) -> Issue:
        """An issue of this rule at SITE (with the rule's tier and severity unless given)."""
        return Issue(
            rule=self.name,
            severity=severity or self.severity,
            tier=self.tier if tier is None else tier,
            message=_bounded(printable(message)),
            kb_name=site.kb_name,
            entry_id=decodable(site.entry_id) if site.entry_id is not None else None,
            path=site.path,
            line=line,
            column=column,
            field=field,
            discriminator=discriminator,
            entry_type=site.entry_type,
            **details,
        )


MAX_MESSAGE = 1000  # characters of a message: one that quotes what an entry holds (a 3 MB link target) is cut


def _bounded(message: str) -> str:
    return message if len(message) <= MAX_MESSAGE else message[: MAX_MESSAGE - 1] + "…"


_TABLE = [
    (
        "parse_error",
        "structure",
        "error",
        "The file cannot be read as an entry: no frontmatter fences, invalid YAML, "
        "frontmatter that is not a mapping, an empty file, or invalid UTF-8.",
    ),
    (
        "duplicate_id",
        "structure",
        "error",
        "Entries of one KB share an id; reported on each of them, naming the others (five, then a count).",
    ),
    (
        "duplicate_key",
        "structure",
        "warning",
        "A frontmatter key is given twice in one mapping: YAML keeps the last value and drops the other.",
    ),
    ("missing_title", "structure", "error", "The title is missing, empty or whitespace."),
    (
        "empty_body",
        "structure",
        "warning",
        "The body is empty or whitespace (not for collection and relationship entries).",
    ),
    (
        "missing_type",
        "structure",
        "info",
        "No `type` in the frontmatter and no type's subdirectory matches the entry's "
        "folder; the entry is checked as a `note`.",
    ),
    (
        "unknown_type",
        "schema",
        "warning",
        "The type is not declared in kb.yaml, not a core type and not from a plugin "
        "(an error when `validation.enforce` is true).",
    ),
    ("subdirectory_mismatch", "schema", "warning", "The type declares a subdirectory and the entry is not under it."),
    ("missing_required", "schema", "error", "A required field is missing, null or empty."),
    (
        "invalid_field",
        "schema",
        "warning",
        "A value does not fit its field type, select values, range, pattern or "
        "`validation.rules` (an error when `validation.enforce` is true).",
    ),
    (
        "invalid_date",
        "schema",
        "error",
        "A `date` field, a field of type date, or a value under a `format: ISO8601` rule is not a real date.",
    ),
    (
        "unknown_field",
        "schema",
        "info",
        "A frontmatter key the entry's type does not know (the type lists its fields).",
    ),
    ("invalid_status", "schema", "warning", "The status is not one of the type's `workflow.states`."),
    ("broken_link", "structure", "warning", "A link does not resolve to an entry (or file) of the workspace."),
    ("unresolved_external", "structure", "info", "A link into a KB that is not loaded in this run."),
    (
        "noncanonical_link",
        "structure",
        "info",
        "A link names its entry by a file name, an alias or its id in another case, not by its id.",
    ),
    ("orphan_entry", "structure", "info", "The entry has no links in or out."),
    (
        "possible_duplicate",
        "structure",
        "warning",
        "Two entries of one type share a title or alias, or their bodies are near-identical; on the newer-looking one.",
    ),
    ("rubric_violation", "checker", "warning", "A rubric item bound to a checker or a policy fails."),
    ("llm_rubric_violation", "judgment", "warning", "The LLM judge says the entry fails a rubric item."),
    ("judgment_uncertain", "judgment", "info", "The judge is not confident enough to pass or fail an item."),
    ("judgment_error", "judgment", "warning", "The judge's answer for an item could not be used."),
    ("judgment_unavailable", "judgment", "warning", "The LLM provider could not be reached."),
    (
        "duplicate_entry",
        "judgment",
        "error",
        "The LLM judge says the entry makes the same claim, at the same scope, as an existing entry.",
    ),
    (
        "conflicting_entries",
        "judgment",
        "warning",
        "The LLM judge says the entry and another one disagree on one subject: a human should curate them.",
    ),
    ("score_below_threshold", "score", "warning", "The entry's rubric score is below `pass_threshold`."),
    (
        "checker_error",
        "checker",
        "error",
        "A checker raised an exception or returned what is no result, or a pattern ran past its time limit.",
    ),
    ("config_error", "config", "error", "A problem in kb.yaml (or a file beside it) that kblint can point at."),
    ("unused_suppression", "config", "info", "A suppression that suppressed nothing."),
    (
        "invalid_suppression",
        "config",
        "warning",
        "A suppression comment or setting that kblint cannot read: a malformed directive or an unknown name.",
    ),
    (
        "rubric_duplicate_item",
        "rubric",
        "warning",
        "Two rubric items of one scope say the same thing (once case, punctuation and stop words are set aside).",
    ),
    (
        "rubric_threshold_unreachable",
        "rubric",
        "error",
        "`pass_threshold` is above the best score an entry of some type can get.",
    ),
    (
        "rubric_threshold_trivial",
        "rubric",
        "warning",
        "`pass_threshold` is 0, or at or below the worst score any entry can get: it checks nothing.",
    ),
    ("rubric_levels_unordered", "rubric", "error", "The scores of a graded item's levels go down."),
    (
        "rubric_unknown_name",
        "rubric",
        "warning",
        "A rubric item names a field, or a status gate a status, that no type it applies to declares.",
    ),
    (
        "rubric_restates_schema",
        "rubric",
        "info",
        "A judgment item only restates a required field, which the schema already checks.",
    ),
    (
        "rubric_policy_typo",
        "rubric",
        "error",
        "A rubric string looks like a policy but does not parse; it is not run as a judgment item either.",
    ),
]

RULES: dict[str, Rule] = {name: Rule(name, tier, severity, summary) for name, tier, severity, summary in _TABLE}
TIERS = ("structure", "schema", "checker", "policy", "judgment", "score", "config", "rubric")

HOMEPAGE = "https://github.com/kblint/kblint"
RULES_DOC = "docs/rules.md"  # generated from this table and the rule pages (`kblint explain`)


def doc_url(name: str) -> str:
    """The stable address of a rule's (or checker's) documentation: its anchor in docs/rules.md."""
    return f"{HOMEPAGE}/blob/main/{RULES_DOC}#{name}"
