"""The judgment tier (SPEC §7): rubric items judged by an LLM, one request per entry.

Usage::

    config = JudgeConfig.from_spec("openai:gpt-4o-mini", base_url=None, env=os.environ,
                                   concurrency=4, max_calls=None, cache_dir=".kblint_cache")
    outcomes, stats, unavailable = judge(requests, config, progress=callback)

`judge` never raises for provider trouble (unless `raise_unavailable=True`):
- each outcome (same order as `requests`) has `verdicts` (fresh or `cached`), `errors` (items that got no
  valid verdict: invalid answers after one retry, HTTP/network errors after `tries` attempts) and
  `not_evaluated` (items never asked: `--max-llm-calls` budget exhausted, or provider unavailable),
  with `not_evaluated_reason`;
- `unavailable` is None, or "PROVIDER: reason" when the provider could not be reached at all (connection
  refused or unknown host on every attempt before any answer, credentials rejected, a missing API key);
  then nothing more is sent, and the caller reports one `judgment_unavailable` issue.

The verdict → issue mapping is `verdict_rule(verdict, config.min_confidence)`.
Importing this package does not import httpx; `judge` imports it only when something must be sent.
"""

from __future__ import annotations

from .cache import cache_clear, cache_info
from .model import (
    PROMPT_VERSION,
    VERDICTS,
    ItemError,
    JudgeConfig,
    JudgeItem,
    JudgeOutcome,
    JudgeRequest,
    JudgeStats,
    JudgeUnavailable,
    Verdict,
    verdict_rule,
)
from .providers import PROVIDERS
from .runner import dry_run, judge, render_prompt

__all__ = [
    "PROMPT_VERSION",
    "PROVIDERS",
    "VERDICTS",
    "ItemError",
    "JudgeConfig",
    "JudgeItem",
    "JudgeOutcome",
    "JudgeRequest",
    "JudgeStats",
    "JudgeUnavailable",
    "Verdict",
    "verdict_rule",
    "judge",
    "dry_run",
    "render_prompt",
    "cache_info",
    "cache_clear",
]
