"""Data model of the judgment tier (SPEC §7): configuration, requests, verdicts, outcomes.

Nothing here imports httpx: building a configuration or reading the cache stays cheap (SPEC §13).
"""

from __future__ import annotations

import asyncio
import os
import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from .providers import PROVIDERS, Provider, provider_named

PROMPT_VERSION = "6"

VERDICTS = ("pass", "fail", "uncertain", "not_applicable")
GRADED = "graded"  # the verdict of an item with levels: its level says how it did


class JudgeUnavailable(Exception):
    """The provider cannot be reached at all (refused, unknown host, rejected credentials)."""

    def __init__(self, provider: str, reason: str):
        super().__init__(f"{provider}: {reason}")
        self.provider = provider
        self.reason = reason


LOCAL_TIMEOUT = 600.0  # a model on the machine's CPU may need minutes for a long entry
HOSTED_TIMEOUT = 60.0


def _is_http_url(url: str) -> bool:
    """Whether URL is one an HTTP request can be sent to (urlsplit raises on a bad port or IPv6 host;
    it drops white space and control characters that the request would refuse)."""
    if any(c.isspace() or not c.isprintable() for c in url):
        return False
    try:
        where = urlsplit(url)
        where.port  # noqa: B018 - read for the ValueError of a port out of range
    except ValueError:
        return False
    return where.scheme.lower() in ("http", "https") and bool(where.hostname)


# query parameters that carry a credential (api_key, access_token, sig, …): their values are not shown
_SECRET_PARAM_RE = re.compile(r"key|token|secret|sig|pass|auth|cred", re.IGNORECASE)


def shown_url(url: str) -> str:
    """URL as a message or a report shows it: without a user name and password it may hold, nor
    the values of query parameters named as credentials (`?api_key=…`)."""
    try:
        where = urlsplit(url)
    except ValueError:  # no URL a request is sent to: shown as given
        return url
    if "@" in where.netloc:
        where = where._replace(netloc=where.netloc.rsplit("@", 1)[1])
    if where.query:
        where = where._replace(query="&".join(_shown_param(p) for p in where.query.split("&")))
    return where.geturl()


def _shown_param(param: str) -> str:
    name, eq, value = param.partition("=")
    return f"{name}=***" if eq and value and _SECRET_PARAM_RE.search(name) else param


def default_timeout(base_url: str) -> float:
    """The time a request may take when the user did not say: generous for a server on this machine."""
    host = urlsplit(base_url).hostname or ""
    return LOCAL_TIMEOUT if host in ("localhost", "127.0.0.1", "::1") or host.endswith(".local") else HOSTED_TIMEOUT


@dataclass
class JudgeConfig:
    """How the judge talks to its LLM: the provider and model, limits, retries and the cache."""

    provider: str  # a key of providers.PROVIDERS
    model: str
    base_url: str | None = None  # None: the provider's default (DEFAULT_BASE_URLS)
    api_key: str | None = field(default=None, repr=False)  # never printed, logged or cached
    concurrency: int = 4
    min_confidence: float = 0.7
    max_calls: int | None = None
    cache_dir: str | None = None  # None: no cache
    timeout: float = 0.0  # seconds a request may take; 0: default_timeout() of the base URL
    # Tuning knobs (not on the command line; tests make the backoff tiny).
    tries: int = 3  # HTTP attempts per request for network errors, 429 and 5xx
    retry_base_delay: float = 1.0  # seconds; doubles after each failed attempt
    max_retry_delay: float = 30.0  # cap for a server's Retry-After
    max_body_chars: int = 12_000  # longer bodies are truncated in the prompt (and the block says so)
    output_mode: str | None = None  # how answers are asked for (the wire's output_modes); None: its best
    max_tokens: int = 4096  # the largest answer budget of a request (prompt.answer_tokens sizes each)
    context: int | None = None  # tokens of context a request may use (--llm-context); None: as the server says
    sleep: Callable[[float], Awaitable[Any]] = field(default=asyncio.sleep, repr=False)  # the back-off's clock

    def __post_init__(self) -> None:
        if self.provider not in PROVIDERS:
            raise ValueError(f"unknown LLM provider {self.provider!r} (expected one of: {', '.join(PROVIDERS)})")
        if not self.model:
            raise ValueError(f"no model given for LLM provider {self.provider!r} (expected PROVIDER:MODEL)")
        wire = PROVIDERS[self.provider]
        given = self.base_url or wire.default_base_url
        if not _is_http_url(given):
            raise ValueError(f"the base URL {shown_url(given)!r} is no http:// or https:// URL")
        self.base_url = wire.base_url_of(given)
        if self.timeout < 0 or self.max_tokens < 1 or (self.context is not None and self.context < 1):
            raise ValueError("the LLM timeout, output budget and context must be above 0")
        if self.timeout == 0:
            self.timeout = default_timeout(self.base_url)
        modes = PROVIDERS[self.provider].output_modes
        if self.output_mode is not None and self.output_mode not in modes:
            raise ValueError(f"output {self.output_mode!r} is not one of {self.provider}'s: {', '.join(modes)}")
        if self.concurrency < 1:
            raise ValueError("LLM concurrency must be at least 1")
        if self.max_calls is not None and self.max_calls < 0:
            raise ValueError("--max-llm-calls must be >= 0")
        if self.tries < 1:
            raise ValueError("tries must be at least 1")

    @property
    def evaluator(self) -> str:
        return f"{self.provider}:{self.model}"

    @property
    def wire(self) -> Provider:
        """The provider's wire format."""
        return provider_named(self.provider)

    @property
    def url(self) -> str:
        return self.wire.endpoint(self.base_url or "")

    @classmethod
    def from_spec(
        cls, spec: str, base_url: str | None = None, env: Mapping[str, str] | None = None, **options: Any
    ) -> JudgeConfig:
        """Build a configuration from `PROVIDER:MODEL` (the model may itself hold colons: `ollama:llama3:8b`).

        The base URL is `base_url`, else (openai) `OPENAI_BASE_URL`, else the provider's default; the API
        key comes from `OPENAI_API_KEY` / `ANTHROPIC_API_KEY` (ollama needs none). Other fields of the
        dataclass may be passed as keyword options. Raises ValueError on a malformed spec.
        """
        env = os.environ if env is None else env
        provider, sep, model = (spec or "").strip().partition(":")
        provider = provider.strip().lower()
        if not sep:
            raise ValueError(f"invalid LLM spec {spec!r}: expected PROVIDER:MODEL, e.g. openai:gpt-4o-mini")
        if provider not in PROVIDERS:
            raise ValueError(f"unknown LLM provider {provider!r} in {spec!r} (expected one of: {', '.join(PROVIDERS)})")
        model = model.strip()
        wire = PROVIDERS[provider]
        if base_url is None and wire.base_url_env:
            base_url = env.get(wire.base_url_env) or None
        api_key = options.pop("api_key", None)
        if api_key is None and wire.api_key_env:
            api_key = env.get(wire.api_key_env) or None
        return cls(provider=provider, model=model, base_url=base_url, api_key=api_key, **options)


@dataclass
class JudgeItem:
    """A rubric item as the judge is asked it; a graded item has levels, lowest first, each a
    mapping with "id" and optionally "label", "description" and "indicators"."""

    id: str
    text: str
    levels: list[dict[str, Any]] | None = None

    @property
    def level_ids(self) -> tuple[str, ...]:
        return tuple(str(level["id"]) for level in self.levels or ())

    @property
    def cache_text(self) -> str:
        """What the verdict depends on besides the entry: the text, and the levels of a graded item."""
        if not self.levels:
            return self.text
        import json

        return json.dumps([self.text, self.levels], sort_keys=True, ensure_ascii=False)


@dataclass
class JudgeRequest:
    """One entry and the items to judge it on."""

    key: str  # the caller's handle for the entry (e.g. its path); echoed in the outcome
    entry: dict[str, Any]  # {"id", "type", "title", "metadata", "body"}
    items: list[JudgeItem]
    guidelines: dict[str, Any] = field(default_factory=dict)


@dataclass
class Verdict:
    """The judge's verdict on one item."""

    item_id: str
    verdict: str  # one of VERDICTS, or GRADED
    confidence: float
    reason: str
    cached: bool = False
    level: str | None = None  # a graded item's level id
    evidence: str = ""  # a short quote of the entry that bears the verdict out (found in it), or ""


@dataclass
class ItemError:
    """An item that got no usable verdict, and why."""

    item_id: str
    message: str


@dataclass
class JudgeOutcome:
    """What judging one entry gave."""

    key: str
    verdicts: list[Verdict] = field(default_factory=list)
    errors: list[ItemError] = field(default_factory=list)
    not_evaluated: list[str] = field(
        default_factory=list
    )  # item ids not judged: budget exhausted or provider unavailable
    not_evaluated_reason: str | None = None  # "budget exhausted (--max-llm-calls N)" or "provider unavailable: ..."


@dataclass
class JudgeStats:
    """The judge's counts for a run."""

    calls: int = 0  # HTTP requests sent to the provider (retries included; refused connections not)
    cache_hits: int = 0  # items answered from the cache
    prompt_tokens: int = 0
    completion_tokens: int = 0
    timeouts: int = 0  # requests that got no answer within the timeout
    output_mode: str = ""  # how answers were asked for in the end (a provider's output_modes)
    fallbacks: list[str] = field(default_factory=list)  # the modes the server refused, and why
    answers_valid: int = 0  # answers that gave a verdict for every item asked
    answers_invalid: int = 0  # answers that did not (not JSON, ids missing, a verdict out of range)
    verdicts: dict[str, int] = field(default_factory=dict)  # new verdicts by kind (cache hits apart)
    notes: list[str] = field(default_factory=list)  # what the run assumed, for the summary (said once each)
    split_entries: int = 0  # entries whose items were asked in several requests (the context holds only some)
    bodies_truncated: int = 0  # requests sent with the body cut to fit the context

    def count_answer(self, valid: bool, verdicts: list[str]) -> None:
        """One answer read: whether it was valid, and the verdicts it gave."""
        if valid:
            self.answers_valid += 1
        else:
            self.answers_invalid += 1
        for verdict in verdicts:
            self.verdicts[verdict] = self.verdicts.get(verdict, 0) + 1


def verdict_rule(verdict: Verdict, min_confidence: float = 0.7) -> str | None:
    """The issue rule a verdict yields (SPEC §7): `llm_rubric_violation` for a confident fail,
    `judgment_uncertain` for `uncertain` or a fail below `min_confidence`, else None (pass, not_applicable)."""
    if verdict.verdict == "fail":
        return "llm_rubric_violation" if verdict.confidence >= min_confidence else "judgment_uncertain"
    if verdict.verdict == "uncertain":
        return "judgment_uncertain"
    return None
