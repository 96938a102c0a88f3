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


def token_count(value: object) -> int:
    """A usage figure as reported, or 0 when it is missing or not a count."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


class Provider:
    """One LLM wire format: where requests go, what they carry, how answers read."""

    name: ClassVar[str]
    default_base_url: ClassVar[str]
    api_key_env: ClassVar[str | None] = None  # the environment variable holding the API key
    base_url_env: ClassVar[str | None] = None  # the environment variable that may set the base URL

    def endpoint(self, base_url: str) -> str:
        raise NotImplementedError

    def headers(self, api_key: str | None) -> dict[str, str]:
        from kblint import __version__

        return {"content-type": "application/json", "accept": "application/json", "user-agent": f"kblint/{__version__}"}

    # How the provider is asked for an answer that fits the verdict JSON Schema, best first, ending
    # with "plain" (the prompt alone); a server that refuses one is asked the next, once per run.
    output_modes: ClassVar[tuple[str, ...]] = ("plain",)
    # Words of a 4xx error that say the server refused the structured-output part of a request.
    output_fields: ClassVar[tuple[str, ...]] = ()

    def body(
        self, model: str, system: str, user: str, max_tokens: int, schema: dict[str, Any], mode: str
    ) -> dict[str, Any]:
        """The request: SCHEMA is the answer's JSON Schema, MODE one of output_modes."""
        raise NotImplementedError

    def read(self, data: object) -> Answer:
        """The answer in a 2xx response's JSON (empty text when it has none)."""
        raise NotImplementedError

    def missing_key(self, base_url: str, api_key: str | None) -> str | None:
        """Why requests cannot work without a key, before sending any (None: they may)."""
        return None
