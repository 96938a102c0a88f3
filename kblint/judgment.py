"""Pass 3: the judgment items of the plan sent to the LLM judge, and its verdicts as issues.

Only the entries that have judgment items are re-read here (bodies are not kept from pass 1).
"""

from __future__ import annotations

import os
import sys
from dataclasses import field

from .config import Settings
from .issue import Issue
from .plainclass import dataclass
from .rubric import Binding
from .rules import RULES
from .yamlfile import json_ready


class JudgmentSetupError(Exception):
    """The LLM configuration cannot be used (exit 2)."""


@dataclass(slots=True)
class Pending:
    """One entry waiting for the judge: where it is, its facts, and its judgment items."""

    kb: object  # workspace.KB
    facts: object  # graph.EntryFacts
    items: list[Binding]
    data: bytes | None = None  # candidate text, when the entry does not come from a file


@dataclass(slots=True)
class JudgmentResult:
    """What the judgment tier gave: its issues and the report's judgment block."""

    issues: list[Issue] = field(default_factory=list)
    block: dict = field(default_factory=dict)
    unavailable: str | None = None
    dry_run: list[dict] | None = None


def llm_spec(settings: Settings) -> str | None:
    return settings.llm or os.environ.get("KBLINT_LLM") or None


def make_config(settings: Settings):
    from .judge import JudgeConfig

    spec = llm_spec(settings)
    try:
        return JudgeConfig.from_spec(
            spec, base_url=settings.llm_base_url, env=os.environ, concurrency=max(1, settings.llm_concurrency),
            min_confidence=settings.llm_min_confidence, max_calls=settings.max_llm_calls,
            cache_dir=None if settings.no_cache else settings.cache_dir,
        )
    except ValueError as exc:
        raise JudgmentSetupError(f"--llm: {exc}") from None


def _request(p: Pending, key: str):
    from .engine import read_entry
    from .judge import JudgeItem, JudgeRequest

    entry = read_entry(p.kb, p.facts, p.data)
    if entry is None:
        return None
    schema = p.kb.schema
    guidelines = json_ready(dict(schema.guidelines))
    ts = schema.types.get(entry.type)
    if ts is not None and ts.guidelines:
        guidelines[f"type:{ts.name}"] = json_ready(ts.guidelines)
    meta = {k: v for k, v in entry.metadata.items() if k not in ("id", "type", "title", "kblint")}
    return JudgeRequest(
        key=key,
        entry={"id": entry.id, "type": entry.type, "title": entry.title, "metadata": json_ready(meta),
               "body": entry.body},
        items=[JudgeItem(b.id, b.text) for b in p.items],
        guidelines=guidelines,
    )


def _progress():
    """A progress bar on standard error, on a terminal only."""
    if not sys.stderr.isatty():
        return None, None
    from rich.progress import Progress

    bar = Progress(transient=True, console=None)
    bar.start()
    task = bar.add_task("judging entries", total=None)

    def update(done: int, total: int) -> None:
        bar.update(task, completed=done, total=total)

    return update, bar


def run_judgment(pending: list[Pending], settings: Settings) -> JudgmentResult:
    from .judge import dry_run, judge, verdict_rule

    config = make_config(settings)
    requests = []
    by_key: dict[str, Pending] = {}
    for n, p in enumerate(pending):
        key = str(n)
        request = _request(p, key)
        if request is not None:
            requests.append(request)
            by_key[key] = p
    result = JudgmentResult()
    block = {"enabled": True, "reason": None, "evaluator": config.evaluator, "calls": 0, "cache_hits": 0,
             "prompt_tokens": 0, "completion_tokens": 0, "not_evaluated": 0}
    if settings.dry_run:
        result.dry_run = dry_run(requests, config)
        for row in result.dry_run:
            row["path"] = by_key[row["key"]].facts.path
        block.update(enabled=False, reason="dry run: nothing sent",
                     not_evaluated=sum(len(r.items) for r in requests))
        result.block = block
        return result
    update, bar = _progress()
    try:
        outcomes, stats, unavailable = judge(requests, config, progress=update)
    finally:
        if bar is not None:
            bar.stop()
    block.update(stats.to_dict())
    not_evaluated = 0
    reasons = set()
    for outcome in outcomes:
        p = by_key[outcome.key]
        facts = p.facts
        items = {b.id: b for b in p.items}
        for verdict in outcome.verdicts:
            b = items.get(verdict.item_id)
            if b is None:
                continue
            rule = verdict_rule(verdict, config.min_confidence)
            if verdict.verdict == "pass":
                facts.score_total += b.weight
                facts.score_passed += b.weight
            elif rule == "llm_rubric_violation":
                facts.score_total += b.weight
            if rule is None:
                continue
            severity = b.severity if rule == "llm_rubric_violation" else RULES[rule].severity
            result.issues.append(Issue(
                rule=rule, severity=severity, tier="judgment", message=verdict.reason or f"judged {verdict.verdict}",
                kb_name=facts.kb_name, entry_id=facts.id, path=facts.path, rubric_item=b.text,
                confidence=round(float(verdict.confidence), 3), evaluator=config.evaluator, cached=verdict.cached,
                discriminator=b.id, item_id=b.id, entry_type=facts.type))
        for error in outcome.errors:
            b = items.get(error.item_id)
            result.issues.append(Issue(
                rule="judgment_error", severity=RULES["judgment_error"].severity, tier="judgment",
                message=error.message, kb_name=facts.kb_name, entry_id=facts.id, path=facts.path,
                rubric_item=b.text if b else None, evaluator=config.evaluator, discriminator=error.item_id,
                item_id=error.item_id, entry_type=facts.type))
        not_evaluated += len(outcome.not_evaluated)
        if outcome.not_evaluated and outcome.not_evaluated_reason:
            reasons.add(outcome.not_evaluated_reason)
    block["not_evaluated"] = not_evaluated
    if reasons:
        block["not_evaluated_reason"] = "; ".join(sorted(reasons))
    if unavailable:
        result.unavailable = unavailable
        first = pending[0].kb if pending else None
        if first is not None:
            result.issues.append(Issue(
                rule="judgment_unavailable", severity=RULES["judgment_unavailable"].severity, tier="judgment",
                message=f"LLM provider unavailable ({unavailable}); {not_evaluated} judgment checks not evaluated",
                kb_name=first.name, entry_id=None, path=first.schema.kb_yaml or first.root,
                evaluator=config.evaluator, discriminator="unavailable"))
    result.block = block
    return result
