"""The context window of a run's requests: how many tokens the model may read, how large a context
a request asks for (Ollama's `num_ctx`), and whether the server read all of a prompt.

Prompts are measured by `prompt.estimate_tokens`, four characters a token. Real tokenizers count
English prose at 4 to 5 characters a token (the estimate is then up to a fifth too high) and JSON,
markup and most other scripts at fewer (the estimate is then too low): a request's context leaves
a quarter more room than the estimate, and a prompt counts as truncated only when the server read
clearly less than the estimate, or the whole context it was given.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from .providers import ContextRequest, Provider

if TYPE_CHECKING:
    import httpx

DEFAULT_CONTEXT = 4096  # tokens assumed when a server that cuts long prompts does not say its context
MIN_CONTEXT = 2048  # the smallest context asked for: Ollama's own default, which loads quickly
_STEP = 1024  # contexts are asked for in steps: the server reloads the model for every new size
_TEMPLATE_TOKENS = 256  # the chat template's tokens around the messages
# A prompt is truncated when the server read fewer tokens than this share of the user message's
# estimate. The system prompt is left out of it: a server may have kept it from the previous
# request and count only the tokens it read anew (Ollama 0.30 did). 0.6 is well below the
# densest tokenizer on prose (5 characters a token is 0.8 of the estimate).
TRUNCATION_FACTOR = 0.6


def needed(prompt_tokens: int, answer_tokens: int) -> int:
    """The context a prompt of PROMPT_TOKENS (estimated) and its answer need, in whole steps."""
    tokens = prompt_tokens + prompt_tokens // 4 + answer_tokens + _TEMPLATE_TOKENS
    return max(MIN_CONTEXT, -(-tokens // _STEP) * _STEP)


@dataclass
class Window:
    """The context of a run's requests."""

    limit: int | None = None  # tokens a request may use; None: not known (no prompt is held back)
    source: str = ""  # where the limit comes from: "model", "option" (--llm-context) or "assumed"
    size: int | None = None  # the context the run's requests ask for (a provider that sets it)

    def overflow(self, prompt_tokens: int, answer_tokens: int) -> str | None:
        """Why a prompt cannot be sent (it and its answer do not fit in the limit), or None."""
        if self.limit is None or prompt_tokens + answer_tokens <= self.limit:
            return None
        what = f"the prompt (~{prompt_tokens} tokens) and its answer (up to {answer_tokens}) do not fit"
        if self.source == "model":
            return f"{what} in the model's context of {self.limit} tokens: not sent; shorten the entry"
        if self.source == "option":
            return f"{what} in the context of {self.limit} tokens (--llm-context): not sent"
        return (
            f"{what} in the {self.limit} tokens of context assumed (the server does not say its context length): "
            "not sent; set --llm-context"
        )

    def room(self, prompt_tokens: int) -> int | None:
        """The most tokens an answer to a prompt of PROMPT_TOKENS may have (None: not known)."""
        return None if self.limit is None else self.limit - prompt_tokens

    def plan(self, needs: list[tuple[int, int]]) -> None:
        """The context of the run's requests, from the (prompt, answer) tokens of each: one size
        for all, large enough for the largest prompt that fits, so the model is loaded once."""
        fitting = [needed(p, a) for p, a in needs if self.overflow(p, a) is None]
        self.size = max([MIN_CONTEXT, *fitting])
        if self.limit is not None:
            self.size = min(self.size, self.limit)

    def request_size(self, prompt_tokens: int, answer_tokens: int) -> int:
        """The context one request asks for: the run's, or more for a larger answer budget."""
        size = max(self.size or MIN_CONTEXT, needed(prompt_tokens, answer_tokens))
        return size if self.limit is None else min(size, self.limit)


def truncation(read: int, prompt_tokens: int, user_tokens: int, size: int | None) -> str | None:
    """Why an answer cannot be used when the server read READ prompt tokens of a prompt estimated at
    PROMPT_TOKENS (USER_TOKENS of them the user message), in a context of SIZE; None when it can.
    A count of 0 says nothing: Ollama leaves it out when it had the whole prompt from a previous one."""
    if read <= 0:
        return None
    if read < TRUNCATION_FACTOR * user_tokens or (size is not None and read >= size):
        return (
            f"prompt truncated by the server ({read} of ~{prompt_tokens} tokens read): "
            "raise --llm-context or shorten the entry"
        )
    return None


async def model_context(
    client: httpx.AsyncClient, wire: Provider, request: ContextRequest, headers: dict[str, str]
) -> tuple[int | None, str | None]:
    """Ask the server the model's context length: (tokens, None), or (None, why it did not say);
    (None, None) when the server cannot be reached (the requests will say so)."""
    import httpx

    route = urlsplit(request.url).path
    content = None if request.body is None else json.dumps(request.body).encode("utf-8")
    try:
        # the client's timeout bounds each read; an answer that trickles in forever is bounded here
        sent = client.request(request.method, request.url, content=content, headers=headers)
        resp = await asyncio.wait_for(sent, client.timeout.read)
    except (httpx.ConnectError, httpx.ConnectTimeout):
        return None, None
    except (httpx.HTTPError, asyncio.TimeoutError) as exc:
        return None, f"{route}: {type(exc).__name__}"
    if not resp.is_success:
        return None, f"{route} answered HTTP {resp.status_code}"
    try:
        data = resp.json()
    except (ValueError, RecursionError):  # not JSON, or nested past what the decoder takes
        data = None
    tokens = wire.context_length(data)
    return (tokens, None) if tokens else (None, f"{route} does not give the model's context length")


def window_of(model: int | None, option: int | None, cuts_prompts: bool) -> Window:
    """The context limit of a run: the model's (MODEL, as the server says), capped by --llm-context
    (OPTION); for a server that cuts long prompts (CUTS_PROMPTS), DEFAULT_CONTEXT when neither is known."""
    if model is not None and (option is None or model <= option):
        return Window(model, "model")
    if option is not None:
        return Window(option, "option")
    return Window(DEFAULT_CONTEXT, "assumed") if cuts_prompts else Window()
