"""Ollama's native chat API (`POST /api/chat`), which sets the context size of each request.

Through its OpenAI-compatible route Ollama gives every request its default context (2048 or 4096
tokens, whatever the model could take) and cuts a longer prompt without an error: the model
would judge an entry it was never shown whole. Here each request asks for `num_ctx`
tokens, sized from the prompt, and the answer says how many prompt tokens the server read.
"""

from __future__ import annotations

from typing import Any

from .base import Answer, ContextRequest, Provider, Question, at_route, token_count

_COMPATIBLE_ROUTES = ("/v1", "/api")  # what users paste from other clients' settings


class Ollama(Provider):
    name = "ollama"
    default_base_url = "http://localhost:11434"
    sets_context = True

    @classmethod
    def root_of(cls, url: str) -> str:
        """The server's root: a base URL ending in /v1 (the OpenAI-compatible route) or /api
        means the same server."""
        for route in _COMPATIBLE_ROUTES:
            if url.endswith(route):
                return url[: -len(route)]
        return url

    def endpoint(self, base_url: str) -> str:
        return at_route(base_url, "/api/chat")

    # "json_schema": `format` is the verdicts' JSON Schema (Ollama 0.5 and later turn it into a
    # grammar); "json": any JSON object; "plain": the prompt alone.
    output_modes = ("json_schema", "json", "plain")
    output_fields = ("format",)

    def body(self, model: str, system: str, ask: Question, mode: str) -> dict[str, Any]:
        options: dict[str, Any] = {"num_predict": ask.max_tokens, "temperature": 0}
        if ask.context is not None:
            options["num_ctx"] = ask.context
        body: dict[str, Any] = {
            "model": model,
            "messages": [{"role": "system", "content": system}, {"role": "user", "content": ask.user}],
            "stream": False,
            "options": options,
        }
        if mode == "json_schema":
            body["format"] = ask.schema
        elif mode == "json":
            body["format"] = "json"
        return body

    def read(self, data: object) -> Answer:
        if not isinstance(data, dict):
            return Answer("", 0, 0)
        message = data.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        return Answer(
            content if isinstance(content, str) else "",
            token_count(data.get("prompt_eval_count")),
            token_count(data.get("eval_count")),
            cut=data.get("done_reason") == "length",
        )

    def context_request(self, base_url: str, model: str) -> ContextRequest:
        return ContextRequest("POST", at_route(base_url, "/api/show"), {"model": model})

    def context_length(self, data: object) -> int | None:
        """`model_info`'s `<architecture>.context_length`: the context the model was trained for."""
        info = data.get("model_info") if isinstance(data, dict) else None
        if not isinstance(info, dict):
            return None
        for key, value in info.items():
            if str(key).endswith(".context_length") and token_count(value) > 0:
                return int(value)
        return None
