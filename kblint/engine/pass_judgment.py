"""Pass 3: the judgment items of the plan sent to the LLM judge, and its verdicts as issues (SPEC §7).

Only the entries that have judgment items are read again here (bodies are not kept from pass 1).
Without an LLM (or with --no-judgment) the items are counted as not evaluated, and the run says so.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..config import Settings, llm_spec
from ..model.facts import EntryFacts
from ..model.issue import DryRunRow, Issue, JudgmentSummary
from ..model.levels import Grade
from ..model.plan import Binding
from ..paths import decodable
from ..progress import Progress
from ..rules import RULES, Site
from ..yamlread.lines import json_ready
from . import pass_pairs, scoring
from .pass_duplicates import Pair
from .pass_entries import KBContext, judged_entry
from .pass_pairs import PairJudgment

if TYPE_CHECKING:
    from ..judge import JudgeConfig, JudgeOutcome, JudgeRequest, JudgeStats, Verdict


class JudgmentSetupError(Exception):
    """The LLM configuration cannot be used (exit 2)."""


@dataclass(slots=True)
class Pending:
    """One entry waiting for the judge: its KB, its facts and its judgment items."""

    ctx: KBContext
    facts: EntryFacts
    items: list[Binding]
    data: bytes | None = None  # candidate text, when the entry does not come from a file


@dataclass(slots=True)
class JudgmentResult:
    """What the judgment tier gave: its issues and the report's judgment summary."""

    summary: JudgmentSummary
    issues: list[Issue] = field(default_factory=list)
    unavailable: str | None = None  # why the LLM could not be reached (or none is configured)
    dry_run: list[DryRunRow] | None = None
    pairs: PairJudgment | None = None  # the alike entries, classified or not
    verdicts: dict[str, int] = field(default_factory=dict)  # KB name → items that got a verdict
    errors: dict[str, int] = field(default_factory=dict)  # KB name → items that got a judgment_error

    def evaluated(self, kb_name: str) -> bool:
        """Whether some judgment item of the KB got a verdict."""
        return self.verdicts.get(kb_name, 0) > 0

    def incomplete(self, kb_name: str) -> str | None:
        """Why the KB's score cannot be given: its judgments were all errors."""
        errors = self.errors.get(kb_name, 0)
        if errors and not self.evaluated(kb_name):
            return f"every judgment failed ({errors} judgment_error)"
        return None


def judge_config(settings: Settings) -> JudgeConfig:
    from ..judge import JudgeConfig

    try:
        return JudgeConfig.from_spec(
            llm_spec(settings) or "",
            base_url=settings.llm_base_url,
            env=os.environ,
            concurrency=max(1, settings.llm_concurrency),
            min_confidence=settings.llm_min_confidence,
            max_calls=settings.max_llm_calls,
            cache_dir=None if settings.no_cache else settings.cache_dir,
            **_budgets(settings),
        )
    except ValueError as exc:
        raise JudgmentSetupError(f"--llm: {exc}") from None


def _budgets(settings: Settings) -> dict[str, Any]:
    """The timeout, output budget and output mode the user set (else the judge's defaults)."""
    budgets: dict[str, Any] = {}
    if settings.llm_timeout is not None:
        budgets["timeout"] = settings.llm_timeout
    if settings.llm_max_output is not None:
        budgets["max_tokens"] = settings.llm_max_output
    if settings.llm_context is not None:
        budgets["context"] = settings.llm_context
    if settings.llm_output is not None:
        budgets["output_mode"] = settings.llm_output
    return budgets


UNREADABLE = "the entry could not be read again for the judge (changed or removed during the run)"


def _request(p: Pending, key: str) -> JudgeRequest | None:
    from ..judge import JudgeItem, JudgeRequest

    sent = judged_entry(p.ctx, p.facts, p.data)
    if sent is None:
        return None
    schema = p.ctx.schema
    guidelines = json_ready(dict(schema.guidelines))
    ts = schema.types.get(sent["type"])
    if ts is not None and ts.guidelines:
        guidelines[f"type:{ts.name}"] = json_ready(ts.guidelines)
    items = [JudgeItem(b.id, b.text, judge_levels(b) if b.graded else None) for b in p.items]
    return JudgeRequest(key=key, entry=sent, items=items, guidelines=guidelines)


def judge_levels(b: Binding) -> list[dict[str, Any]]:
    """A graded item's levels as the judge is shown them, lowest first."""
    return [
        {
            "id": level.id,
            **({"label": level.label} if level.label else {}),
            **({"description": level.description} if level.description else {}),
            **({"indicators": list(level.indicators)} if level.indicators else {}),
        }
        for level in b.levels
    ]


def not_run(checks: int, settings: Settings, pairs: list[Pair]) -> JudgmentResult:
    """The judgment tier when it does not run: no LLM, or --no-judgment."""
    summary = JudgmentSummary(not_evaluated=checks)
    if settings.no_judgment:
        summary.reason = "judgment tier disabled (--no-judgment)"
        return JudgmentResult(summary, pairs=pass_pairs.unclassified(pairs, "--no-judgment"))
    unavailable = "no LLM configured (use --llm PROVIDER:MODEL or KBLINT_LLM)" if settings.llm_required else None
    return JudgmentResult(summary, unavailable=unavailable, pairs=pass_pairs.unclassified(pairs, "no LLM configured"))


def run_judgment(pending: list[Pending], settings: Settings, progress: Progress, pairs: list[Pair]) -> JudgmentResult:
    """Judge PENDING, and classify PAIRS, with the configured LLM (or, with --dry-run, say what
    would be sent)."""
    from ..judge import judge

    config = judge_config(settings)
    summary = JudgmentSummary(enabled=True, reason=None, evaluator=config.evaluator)
    requests = []
    by_key: dict[str, Pending] = {}
    reasons = set()
    for n, p in enumerate(pending):
        request = _request(p, str(n))
        if request is None:  # changed or gone since pass 1: its items are not evaluated, and said so
            summary.not_evaluated += len(p.items)
            reasons.add(UNREADABLE)
            continue
        requests.append(request)
        by_key[request.key] = p
    if settings.dry_run:
        return _dry_run(requests, by_key, config, summary, pairs)
    chosen, rest = pass_pairs.to_classify(pairs, settings.duplicates.max_compare)
    pair_requests = pass_pairs.requests(chosen, config)
    progress.phase("judging entries", len(requests) + len(pair_requests), at_once=True)
    everything = requests + pair_requests
    outcomes, stats, unavailable = judge(everything, config, progress=progress.update, busy=progress.note)
    _fill_summary(summary, stats)
    result = JudgmentResult(summary, unavailable=unavailable)
    result.pairs = pass_pairs.classified(chosen, rest, outcomes[len(requests) :], config)
    result.pairs.summary.requests = len(pair_requests)
    for outcome in outcomes[: len(requests)]:  # the judge answers in the order it was asked
        kb_name = by_key[outcome.key].ctx.schema.name
        result.verdicts[kb_name] = result.verdicts.get(kb_name, 0) + len(outcome.verdicts)
        result.errors[kb_name] = result.errors.get(kb_name, 0) + len(outcome.errors)
        result.issues.extend(_outcome_issues(outcome, by_key[outcome.key], config))
        summary.not_evaluated += len(outcome.not_evaluated)
        if outcome.not_evaluated and outcome.not_evaluated_reason:
            reasons.add(outcome.not_evaluated_reason)
    if reasons:
        summary.not_evaluated_reason = "; ".join(sorted(reasons))
    summary.providers = {config.evaluator: _provider_block(config, stats, outcomes)}
    if unavailable and (pending or chosen):
        kb = pending[0].ctx.schema if pending else chosen[0].newer.ctx.schema
        message = f"LLM provider unavailable ({unavailable}); {summary.not_evaluated} judgment checks not evaluated"
        result.issues.append(
            RULES["judgment_unavailable"].issue(
                Site(kb.name, kb.kb_yaml or kb.root), message, discriminator="unavailable", evaluator=config.evaluator
            )
        )
    return result


def _dry_run(
    requests: list[JudgeRequest],
    by_key: dict[str, Pending],
    config: JudgeConfig,
    summary: JudgmentSummary,
    pairs: list[Pair],
) -> JudgmentResult:
    """--dry-run: what the judge would be sent for each entry; nothing is sent, no pair classified."""
    from ..judge import dry_run

    rows = [
        DryRunRow(
            path=by_key[row["key"]].facts.path,
            entry_id=decodable(row["entry_id"]),
            items=row["items"],
            cached_items=row["cached_items"],
            estimated_prompt_tokens=row["estimated_prompt_tokens"],
            body_truncated=row["body_truncated"],
        )
        for row in dry_run(requests, config)
    ]
    summary.enabled, summary.reason = False, "dry run: nothing sent"
    summary.not_evaluated += sum(len(r.items) for r in requests)
    return JudgmentResult(summary, dry_run=rows, pairs=pass_pairs.unclassified(pairs, "dry run: nothing sent"))


# What an item error says, by kind, for the judgment block (the first pattern found wins).
_ERROR_KINDS = (
    ("prompt truncated", "truncated"),
    ("do not fit", "too_long"),
    ("answer cut", "cut"),
    ("no answer from", "timeout"),  # the runner's words for a request that got no answer in time
    ("timed out", "timeout"),
    ("no valid verdict", "invalid_answer"),
    ("invalid answer", "invalid_answer"),
    ("HTTP ", "http"),
)


def error_kind(message: str) -> str:
    return next((kind for pattern, kind in _ERROR_KINDS if pattern in message), "other")


def _provider_block(config: JudgeConfig, stats: JudgeStats, outcomes: list[JudgeOutcome]) -> dict[str, Any]:
    """The judgment block's figures of one provider: what was asked of it and what went wrong, by kind."""
    from ..judge import PROMPT_VERSION
    from ..judge.model import shown_url

    errors: dict[str, int] = {}
    for outcome in outcomes:
        for error in outcome.errors:
            kind = error_kind(error.message)
            errors[kind] = errors.get(kind, 0) + 1
    return {
        "provider": config.provider,
        "model": config.model,
        "base_url": shown_url(config.base_url or ""),
        "prompt_version": PROMPT_VERSION,
        "requests": stats.calls,
        "prompt_tokens": stats.prompt_tokens,
        "completion_tokens": stats.completion_tokens,
        "cache_hits": stats.cache_hits,
        "truncations": errors.get("truncated", 0),
        "split_entries": stats.split_entries,
        "bodies_truncated": stats.bodies_truncated,
        "errors": dict(sorted(errors.items())),
    }


def _fill_summary(summary: JudgmentSummary, stats: JudgeStats) -> None:
    """The judge's counts in the report's judgment block."""
    summary.calls, summary.cache_hits = stats.calls, stats.cache_hits
    summary.prompt_tokens, summary.completion_tokens = stats.prompt_tokens, stats.completion_tokens
    summary.timeouts = stats.timeouts
    summary.structured_output = stats.output_mode or None
    summary.structured_output_fallbacks = list(stats.fallbacks)
    summary.notes = list(stats.notes)
    if stats.answers_valid or stats.answers_invalid:
        summary.answers = {"valid": stats.answers_valid, "invalid": stats.answers_invalid}
        summary.verdicts = dict(stats.verdicts)


def _verdict_rule(verdict: Verdict, b: Binding, facts: EntryFacts, config: JudgeConfig) -> tuple[str | None, str]:
    """The rule of a pass/fail item's verdict (None: no issue) and its message; a pass or a
    confident fail is scored."""
    from ..judge import verdict_rule

    rule = verdict_rule(verdict, config.min_confidence)
    if verdict.verdict == "pass" or rule == "llm_rubric_violation":
        scoring.record(facts, b, verdict.verdict == "pass")
    return rule, verdict.reason or f"judged {verdict.verdict}"


def _graded_rule(verdict: Verdict, b: Binding, facts: EntryFacts, config: JudgeConfig) -> tuple[str | None, str]:
    """The rule of a graded item's level: below the level it needs, a violation when the judge is
    confident, else uncertain; a confident level is scored."""
    level = next((lv for lv in b.levels if lv.id == verdict.level), None)
    if level is None:  # the answer was checked against the level ids: a cached one from other levels
        return "judgment_error", f"the judge's level {verdict.level!r} is none of the item's levels"
    confident = verdict.confidence >= config.min_confidence
    if confident:
        scoring.record_level(facts, b, level)
    grade = Grade(level, b.pass_level or b.levels[1])
    if grade.passed:
        return None, ""
    message = f"judged {grade.describe()}" + (f": {verdict.reason}" if verdict.reason else "")
    return ("llm_rubric_violation" if confident else "judgment_uncertain"), message


def _outcome_issues(outcome: JudgeOutcome, p: Pending, config: JudgeConfig) -> list[Issue]:
    """The issues of one entry's verdicts and errors; its passes and fails are scored."""
    facts = p.facts
    items = {b.id: b for b in p.items}
    issues = []
    for verdict in outcome.verdicts:
        b = items.get(verdict.item_id)
        if b is None:
            continue
        rule, message = (
            _graded_rule(verdict, b, facts, config) if b.graded else _verdict_rule(verdict, b, facts, config)
        )
        if rule is not None:
            issues.append(
                RULES[rule].issue(
                    facts.site,
                    message,
                    discriminator=b.id,
                    severity=b.severity if rule == "llm_rubric_violation" else None,
                    rubric_item=b.text,
                    confidence=round(float(verdict.confidence), 3),
                    evaluator=config.evaluator,
                    cached=verdict.cached,
                    evidence=verdict.evidence or None,
                    item_id=b.id,
                )
            )
    for error in outcome.errors:
        b = items.get(error.item_id)
        issues.append(
            RULES["judgment_error"].issue(
                facts.site,
                error.message,
                discriminator=error.item_id,
                rubric_item=b.text if b else None,
                evaluator=config.evaluator,
                item_id=error.item_id,
            )
        )
    return issues


def cached_issues(p: Pending, config: JudgeConfig) -> list[Issue]:
    """The issues of the verdicts the verdict cache holds for P's items, sending nothing: what the
    judgment tier shows of an entry between two runs of the judge (an editor's diagnostics)."""
    from ..judge import JudgeOutcome
    from ..judge.cache import VerdictCache, item_key
    from ..judge.prompt import canonical

    request = _request(p, p.facts.path)
    if request is None or not config.cache_dir:
        return []
    cache = VerdictCache(config.cache_dir)
    entry_canon, guidelines_canon = canonical(dict(request.entry)), canonical(request.guidelines or {})
    verdicts = []
    seen: set[str] = set()
    for item in request.items:
        if item.id not in seen:
            seen.add(item.id)
            hit = cache.get(item_key(config, entry_canon, guidelines_canon, item.cache_text), item.id)
            if hit is not None:
                verdicts.append(hit)
    return _outcome_issues(JudgeOutcome(key=request.key, verdicts=verdicts), p, config)
