"""OpenAI's Chat Completions API, which most servers speak (vLLM, llama.cpp, LM Studio)."""

from __future__ import annotations

from typing import Any, ClassVar

from .base import Answer, ContextRequest, Provider, Question, at_route, split_query, token_count


class OpenAI(Provider):
    name = "openai"
    default_base_url = "https://api.openai.com/v1"
    api_key_env: ClassVar[str | None] = "OPENAI_API_KEY"
    base_url_env: ClassVar[str | None] = "OPENAI_BASE_URL"

    def endpoint(self, base_url: str) -> str:
        return at_route(base_url, "/chat/completions")

    def headers(self, api_key: str | None) -> dict[str, str]:
        headers = super().headers(api_key)
        if api_key:
            headers["authorization"] = f"Bearer {api_key}"
        return headers

    output_modes = ("json_schema", "json_object", "plain")
    output_fields = ("response_format", "json_schema", "json_object")

    def body(self, model: str, system: str, ask: Question, mode: str) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": model,
            "temperature": 0,
            "max_tokens": ask.max_tokens,
            "messages": [{"role": "system", "content": system}, {"role": "user", "content": ask.user}],
        }
        if mode == "json_schema":  # llama.cpp and vLLM turn it into a grammar: the answer cannot stray
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "kblint_verdicts", "strict": True, "schema": ask.schema},
            }
        elif mode == "json_object":  # llama-cpp-python's server reads a schema here (others ignore it)
            body["response_format"] = {"type": "json_object", "schema": ask.schema}
        return body

    def read(self, data: object) -> Answer:
        if not isinstance(data, dict):
            return Answer("", 0, 0)
        try:
            choice = data["choices"][0]
            content = choice["message"]["content"]
        except (KeyError, IndexError, TypeError):
            choice, content = {}, ""
        if isinstance(content, list):  # content parts
            content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
        usage = data.get("usage")
        if not isinstance(usage, dict):
            usage = {}
        return Answer(
            content if isinstance(content, str) else "",
            token_count(usage.get("prompt_tokens")),
            token_count(usage.get("completion_tokens")),
            cut=isinstance(choice, dict) and choice.get("finish_reason") == "length",
        )

    def missing_key(self, base_url: str, api_key: str | None) -> str | None:
        if api_key or base_url != self.default_base_url:
            return None
        return f"{self.api_key_env} is not set (set it, or --llm-base-url for a local server)"

    def context_request(self, base_url: str, model: str) -> ContextRequest | None:
        """llama.cpp's `GET /props` (beside /v1), which says the context of each of its slots;
        other servers answer 404. Not sent to OpenAI itself, which has no such route."""
        if base_url == self.default_base_url:
            return None
        head, tail = split_query(base_url)
        root = head.removesuffix("/v1")
        return ContextRequest("GET", root + "/props" + tail)

    def context_length(self, data: object) -> int | None:
        settings = data.get("default_generation_settings") if isinstance(data, dict) else None
        n_ctx = token_count(settings.get("n_ctx")) if isinstance(settings, dict) else 0
        return n_ctx or None
