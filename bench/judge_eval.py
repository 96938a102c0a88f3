"""How well a model judges rubric items: its verdicts against a labelled calibration set.

    .venv/bin/python bench/judge_eval.py openai:gpt-4o-mini
    .venv/bin/python bench/judge_eval.py openai:smollm2-135m --base-url http://127.0.0.1:8765/v1 --limit 30
    .venv/bin/python bench/judge_eval.py ollama:llama3.1:8b --json

The cases (fixtures/judge-eval/cases.yaml, or --cases FILE) are (entry, rubric item, expected verdict)
triples in twins: the same entry with a minimal edit that makes the item pass or fail. Cases with the
same entry text go to the judge in one request, as kblint validate sends an entry's items together.

It prints the agreement (the share of cases whose verdict is the expected one: uncertain,
not_applicable and items with no usable verdict count as disagreement), Cohen's kappa, the confusion
table (expected x verdict), the share of items with no usable verdict, the seconds per request and the
tokens. Kappa is computed over every case with the judge's answers in three classes: pass, fail and
other (uncertain, not_applicable and no verdict, which never match a label); kappa over only the
cases answered pass or fail is printed beside it.

Verdicts are cached as kblint caches them (.kblint_cache here, --cache-dir DIR, or --no-cache): a run
again with the same model asks only what is missing. Exit status: 0, or 2 with a one-line message when
the cases, the model spec or the server are unusable.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from kblint.judge import JudgeConfig, JudgeItem, JudgeOutcome, JudgeRequest, JudgeStats, judge  # noqa: E402
from kblint.model.entry import ParseFailure, split_and_load  # noqa: E402

DEFAULT_CASES = ROOT / "fixtures" / "judge-eval" / "cases.yaml"
EXPECTED = ("pass", "fail")
GOT = ("pass", "fail", "uncertain", "not_applicable", "error")  # error: no usable verdict
FIELDS = ("id", "item_id", "item", "expected", "entry")


class EvalError(Exception):
    """Input the evaluation cannot use: its message is the whole story."""


@dataclass(frozen=True)
class Case:
    id: str
    item_id: str
    item: str
    expected: str
    entry: str
    edit: str = ""


@dataclass(frozen=True)
class Answer:
    """What the judge gave for one case."""

    verdict: str  # one of GOT
    confidence: float | None = None
    error: str | None = None  # why there is no usable verdict


def load_cases(path: Path) -> list[Case]:
    """The cases of a cases file, checked: every field present, ids unique, expected pass or fail."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise EvalError(f"cannot read the cases file {path}: {exc}") from None
    raw = data.get("cases") if isinstance(data, dict) else None
    if not isinstance(raw, list) or not raw:
        raise EvalError(f"{path}: expected a mapping with a non-empty list 'cases'")
    cases: list[Case] = []
    for n, item in enumerate(raw, 1):
        if not isinstance(item, dict) or any(not isinstance(item.get(k), str) or not item[k] for k in FIELDS):
            raise EvalError(f"{path}: case {n} lacks one of {', '.join(FIELDS)} (each a non-empty string)")
        if item["expected"] not in EXPECTED:
            raise EvalError(f"{path}: case {item['id']}: expected is {item['expected']!r}, not pass or fail")
        cases.append(Case(**{k: item[k] for k in FIELDS}, edit=str(item.get("edit") or "")))
    seen = Counter(c.id for c in cases)
    twice = sorted(i for i, n in seen.items() if n > 1)
    if twice:
        raise EvalError(f"{path}: case ids used more than once: {', '.join(twice)}")
    return cases


def entry_of(case: Case) -> dict[str, Any]:
    """The entry as kblint sends it to the judge: id, type, title, the other frontmatter, the body."""
    raw = split_and_load(case.entry)
    if isinstance(raw, ParseFailure):
        raise EvalError(f"case {case.id}: its entry cannot be read: {raw.message}")
    fm = raw.frontmatter
    meta = {str(k): v for k, v in fm.items() if k not in ("id", "type", "title", "kblint")}
    return {"id": fm.get("id"), "type": fm.get("type"), "title": fm.get("title"), "metadata": meta, "body": raw.body}


def group(cases: Sequence[Case]) -> list[tuple[JudgeRequest, list[Case]]]:
    """One request per distinct entry text, carrying the items of all its cases (in case order)."""
    groups: dict[str, list[Case]] = {}
    for case in cases:
        members = groups.setdefault(case.entry, [])
        clash = next((c for c in members if c.item_id == case.item_id), None)
        if clash is not None:
            raise EvalError(f"cases {clash.id} and {case.id} ask item {case.item_id!r} of the same entry")
        members.append(case)
    out = []
    for n, members in enumerate(groups.values(), 1):
        items = [JudgeItem(c.item_id, c.item) for c in members]
        out.append((JudgeRequest(key=f"request-{n}", entry=entry_of(members[0]), items=items), members))
    return out


def verdicts_by_case(
    groups: Sequence[tuple[JudgeRequest, list[Case]]], outcomes: Sequence[JudgeOutcome]
) -> dict[str, Answer]:
    """Each case's verdict and confidence; "error", and why, for an item that got no usable verdict."""
    got: dict[str, Answer] = {}
    for (_, members), outcome in zip(groups, outcomes, strict=True):
        verdicts = {v.item_id: v for v in outcome.verdicts}
        errors = {e.item_id: e.message for e in outcome.errors}
        for case in members:
            v = verdicts.get(case.item_id)
            if v is not None and v.verdict in GOT:
                got[case.id] = Answer(v.verdict, v.confidence)
            else:
                why = errors.get(case.item_id) or outcome.not_evaluated_reason or "no verdict"
                got[case.id] = Answer("error", None, why)
    return got


def cohen_kappa(pairs: Sequence[tuple[str, str]]) -> float | None:
    """Cohen's kappa of two raters' labels; None when chance agreement is total (both gave one label)."""
    n = len(pairs)
    if n == 0:
        return None
    observed = sum(a == b for a, b in pairs) / n
    first, second = Counter(a for a, _ in pairs), Counter(b for _, b in pairs)
    chance = sum(first[label] * second[label] for label in first) / (n * n)
    if chance >= 1:
        return None
    return (observed - chance) / (1 - chance)


def _three_classes(verdict: str) -> str:
    return verdict if verdict in EXPECTED else "other"


def metrics(cases: Sequence[Case], got: dict[str, Answer]) -> dict[str, Any]:
    """Agreement, both kappas, the confusion table, the share without a verdict, and agreement by item."""
    pairs = [(c.expected, got[c.id].verdict) for c in cases]
    answered = [(e, g) for e, g in pairs if g in EXPECTED]
    confusion = {e: dict.fromkeys(GOT, 0) for e in EXPECTED}
    for e, g in pairs:
        confusion[e][g] += 1
    by_item: dict[str, list[int]] = {}
    for c, (e, g) in zip(cases, pairs, strict=True):
        tally = by_item.setdefault(c.item_id, [0, 0])
        tally[0] += e == g
        tally[1] += 1
    agreed = sum(e == g for e, g in pairs)
    errors = sum(g == "error" for _, g in pairs)
    return {
        "cases": len(pairs),
        "expected": {e: sum(x == e for x, _ in pairs) for e in EXPECTED},
        "agreed": agreed,
        "agreement": agreed / len(pairs) if pairs else None,
        "kappa": cohen_kappa([(e, _three_classes(g)) for e, g in pairs]),
        "answered": len(answered),
        "kappa_answered": cohen_kappa(answered),
        "confusion": confusion,
        "no_verdict": errors,
        "invalid_rate": errors / len(pairs) if pairs else None,
        "by_item": {k: {"agreed": a, "cases": n} for k, (a, n) in by_item.items()},
    }


def run_stats(stats: JudgeStats, seconds: float, requests: int) -> dict[str, Any]:
    """What the run cost: requests, HTTP calls, cache hits, answers, time and tokens."""
    answers = stats.answers_valid + stats.answers_invalid
    return {
        "requests": requests,
        "calls": stats.calls,
        "cache_hits": stats.cache_hits,
        "answers": {"valid": stats.answers_valid, "invalid": stats.answers_invalid},
        "invalid_answer_rate": stats.answers_invalid / answers if answers else None,
        "timeouts": stats.timeouts,
        "output_mode": stats.output_mode,
        "fallbacks": list(stats.fallbacks),
        "seconds": round(seconds, 1),
        "seconds_per_request": round(seconds / stats.calls, 1) if stats.calls else None,
        "tokens": {"prompt": stats.prompt_tokens, "completion": stats.completion_tokens},
    }


def evaluate(cases: Sequence[Case], config: JudgeConfig, progress: Any = None) -> dict[str, Any]:
    """Judge the cases with the configured model and measure the verdicts against the labels."""
    groups = group(cases)
    started = time.monotonic()
    outcomes, stats, unavailable = judge([r for r, _ in groups], config, progress=progress)
    seconds = time.monotonic() - started
    if unavailable is not None:
        raise EvalError(f"the judge is unavailable: {unavailable}")
    got = verdicts_by_case(groups, outcomes)
    result: dict[str, Any] = {"model": config.evaluator, "base_url": config.base_url}
    result |= metrics(cases, got)
    result |= run_stats(stats, seconds, len(groups))
    result["results"] = [_case_result(c, got[c.id]) for c in cases]
    return result


def _case_result(case: Case, answer: Answer) -> dict[str, Any]:
    out: dict[str, Any] = {"id": case.id, "item": case.item_id, "expected": case.expected, "got": answer.verdict}
    out["confidence"] = answer.confidence
    if answer.error:
        out["error"] = answer.error
    return out


def _figure(value: float | None, digits: int = 3) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def render(result: dict[str, Any]) -> str:
    """The result as the text report."""
    r, exp, conf = result, result["expected"], result["confusion"]
    dodged = {g: sum(conf[e][g] for e in EXPECTED) for g in GOT[2:]}
    mode = r["output_mode"] or "none sent"
    lines = [
        f"judge {r['model']} at {r['base_url']} (answers asked as: {mode})",
        f"cases {r['cases']} ({exp['pass']} pass, {exp['fail']} fail) in {r['requests']} requests; "
        f"{r['calls']} HTTP calls, {r['cache_hits']} items from the cache",
        f"agreement {_figure(r['agreement'])} ({r['agreed']} of {r['cases']}); counted as disagreement: "
        f"uncertain {dodged['uncertain']}, not_applicable {dodged['not_applicable']}, no verdict {dodged['error']}",
        f"Cohen's kappa {_figure(r['kappa'])} (verdicts in three classes: pass, fail, other); "
        f"{_figure(r['kappa_answered'])} on the {r['answered']} cases answered pass or fail",
        "",
        "expected \\ got" + "".join(f"{g:>{len(g) + 2}}" for g in GOT),
        *(f"{e:<15}" + "".join(f"{conf[e][g]:>{len(g) + 2}}" for g in GOT) for e in EXPECTED),
        "",
        f"no usable verdict: {r['no_verdict']} of {r['cases']} cases ({_figure(r['invalid_rate'])}); "
        f"invalid answers: {r['answers']['invalid']} of {r['answers']['valid'] + r['answers']['invalid']}"
        f"; timeouts: {r['timeouts']}",
        f"time {r['seconds']} s, {_figure(r['seconds_per_request'], 1)} s per request; tokens: "
        f"{r['tokens']['prompt']} prompt, {r['tokens']['completion']} completion",
        "by item: " + ", ".join(f"{k} {v['agreed']}/{v['cases']}" for k, v in r["by_item"].items()),
    ]
    return "\n".join(lines)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("spec", metavar="PROVIDER:MODEL", help="the judge, as kblint's --llm takes it")
    parser.add_argument("--base-url", help="the provider's base URL (as --llm-base-url)")
    parser.add_argument("--timeout", type=float, default=0.0, help="seconds a request may take (0: kblint's default)")
    parser.add_argument("--concurrency", type=int, default=1, help="requests at once (default 1)")
    parser.add_argument("--limit", type=int, help="judge only the first N cases (pairs stay whole for even N)")
    parser.add_argument("--cases", type=Path, default=DEFAULT_CASES, help="the cases file (default: %(default)s)")
    cache = parser.add_mutually_exclusive_group()
    cache.add_argument("--cache-dir", default=".kblint_cache", help="the verdict cache (default: %(default)s)")
    cache.add_argument("--no-cache", action="store_true", help="neither read nor write cached verdicts")
    parser.add_argument("--json", action="store_true", help="print the figures and every case's verdict as JSON")
    return parser.parse_args(argv)


def _progress(started: float) -> Any:
    shown = [-1]

    def report(done: int, total: int) -> None:
        if done != shown[0]:
            shown[0] = done
            print(f"judged {done} of {total} requests ({time.monotonic() - started:.0f} s)", file=sys.stderr)

    return report


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        if args.limit is not None and args.limit < 1:
            raise EvalError("--limit must be at least 1")
        cases = load_cases(args.cases)[: args.limit]
        config = JudgeConfig.from_spec(
            args.spec,
            base_url=args.base_url,
            env=os.environ,
            concurrency=args.concurrency,
            timeout=args.timeout,
            cache_dir=None if args.no_cache else args.cache_dir,
        )
        result = evaluate(cases, config, progress=_progress(time.monotonic()))
    except (EvalError, ValueError) as exc:
        print(f"judge_eval: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(result, indent=2) if args.json else render(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
