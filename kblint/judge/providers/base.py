"""The interface every LLM provider implements."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar


@dataclass(frozen=True, slots=True)
class Answer:
    """What a 2xx response carried: the model's text and the tokens it counted."""

    text: str
    prompt_tokens: int
    completion_tokens: int
    cut: bool = False  # the server stopped the answer at its output budget


def split_query(url: str) -> tuple[str, str]:
    """URL cut where its query or fragment starts (`?api-version=...`): the part a route is added
    to, and the rest, which goes after the route."""
    cut = min((i for i in (url.find("?"), url.find("#")) if i >= 0), default=len(url))
    return url[:cut], url[cut:]


def at_route(base_url: str, route: str) -> str:
    """BASE_URL with ROUTE added to its path, its query kept after it."""
    head, tail = split_query(base_url)
    return head + route + tail


def token_count(value: object) -> int:
    """A usage figure as reported, or 0 when it is missing or not a count."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


@dataclass(frozen=True, slots=True)
class Question:
    """What one request asks, whatever the wire format: the user message, the answer's budget
    and its JSON Schema, the prompt's estimated tokens and the context asked for."""

    user: str
    max_tokens: int
    schema: dict[str, Any]
    prompt_tokens: int = 0  # the system prompt and the user message, estimated
    user_tokens: int = 0  # the user message alone, estimated
    context: int | None = None  # the context size the request asks for (a provider that sets it)


class Provider:
    """One LLM wire format: where requests go, what they carry, how answers read."""

    name: ClassVar[str]
    default_base_url: ClassVar[str]
    api_key_env: ClassVar[str | None] = None  # the environment variable holding the API key
    base_url_env: ClassVar[str | None] = None  # the environment variable that may set the base URL
    # Whether a request says how large a context the server gives it (Ollama's num_ctx): the server
    # then cuts a longer prompt without a word, and the judge checks the tokens it read.
    sets_context: ClassVar[bool] = False

    @classmethod
    def base_url_of(cls, url: str) -> str:
        """The base URL requests are built on, from what the user gave: its path without a
        trailing slash, its query kept."""
        head, tail = split_query(url)
        return cls.root_of(head.rstrip("/")) + tail

    @classmethod
    def root_of(cls, url: str) -> str:
        """The base URL made of URL, the user's URL up to its query with no trailing slash: URL itself
        unless the provider's servers have routes users give in its place."""
        return url

    def endpoint(self, base_url: str) -> str:
        raise NotImplementedError

    def error_text(self, data: object) -> str | None:
        """What an error response's JSON DATA says went wrong: `{"error": {"message": ...}}` as
        OpenAI and Anthropic write it, or `{"error": "..."}` as Ollama and some proxies do; None
        when it is in neither form."""
        error = data.get("error") if isinstance(data, dict) else None
        message = error.get("message") if isinstance(error, dict) else error
        return message if isinstance(message, str) and message else None

    def headers(self, api_key: str | None) -> dict[str, str]:
        from kblint import __version__

        return {"content-type": "application/json", "accept": "application/json", "user-agent": f"kblint/{__version__}"}

    # How the provider is asked for an answer that fits the verdict JSON Schema, best first, ending
    # with "plain" (the prompt alone); a server that refuses one is asked the next, once per run.
    output_modes: ClassVar[tuple[str, ...]] = ("plain",)
    # Words of a 4xx error that say the server refused the structured-output part of a request.
    output_fields: ClassVar[tuple[str, ...]] = ()

    def body(self, model: str, system: str, ask: Question, mode: str) -> dict[str, Any]:
        """The request of ASK in MODE (one of output_modes), with the SYSTEM prompt."""
        raise NotImplementedError

    def read(self, data: object) -> Answer:
        """The answer in a 2xx response's JSON (empty text when it has none)."""
        raise NotImplementedError

    def missing_key(self, base_url: str, api_key: str | None) -> str | None:
        """Why requests cannot work without a key, before sending any (None: they may)."""
        return None

    def context_request(self, base_url: str, model: str) -> ContextRequest | None:
        """The request that tells the model's context length, sent once before the others (None: none)."""
        return None

    def context_length(self, data: object) -> int | None:
        """The context length in a 2xx answer to context_request (None when it does not say)."""
        return None


@dataclass(frozen=True, slots=True)
class ContextRequest:
    """A request for the model's context length: METHOD to URL, with a JSON BODY for a POST."""

    method: str
    url: str
    body: dict[str, Any] | None = None
