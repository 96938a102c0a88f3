"""Anthropic's Messages API."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlsplit

from .base import Answer, Provider, Question, at_route, split_query, token_count

_TOOL = "record_verdicts"


def _answer_text(blocks: list[dict[str, Any]]) -> str:
    """The forced tool call's input as JSON text, else the text blocks."""
    calls = [b.get("input") for b in blocks if b.get("type") == "tool_use"]
    if calls and isinstance(calls[0], dict):
        return json.dumps(calls[0])
    return "".join(str(b.get("text", "")) for b in blocks if b.get("type", "text") == "text")


class Anthropic(Provider):
    name = "anthropic"
    default_base_url = "https://api.anthropic.com"
    api_key_env = "ANTHROPIC_API_KEY"

    def endpoint(self, base_url: str) -> str:
        head, _ = split_query(base_url)
        return at_route(base_url, "/messages" if head.endswith("/v1") else "/v1/messages")

    def headers(self, api_key: str | None) -> dict[str, str]:
        headers = super().headers(api_key)
        headers["anthropic-version"] = "2023-06-01"
        if api_key:
            headers["x-api-key"] = api_key
        return headers

    output_modes = ("tool", "plain")
    output_fields = ("tool",)

    def body(self, model: str, system: str, ask: Question, mode: str) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": model,
            "max_tokens": ask.max_tokens,
            "temperature": 0,
            "system": system,
            "messages": [{"role": "user", "content": ask.user}],
        }
        if mode == "tool":  # a forced tool call: the answer is the tool's input, checked against SCHEMA
            body["tools"] = [
                {"name": _TOOL, "description": "Record one verdict for every rubric item.", "input_schema": ask.schema}
            ]
            body["tool_choice"] = {"type": "tool", "name": _TOOL}
        return body

    def read(self, data: object) -> Answer:
        if not isinstance(data, dict):
            return Answer("", 0, 0)
        blocks = data.get("content")
        text = _answer_text([b for b in blocks if isinstance(b, dict)]) if isinstance(blocks, list) else ""
        usage = data.get("usage")
        if not isinstance(usage, dict):
            usage = {}
        return Answer(
            text,
            token_count(usage.get("input_tokens")),
            token_count(usage.get("output_tokens")),
            cut=data.get("stop_reason") == "max_tokens",
        )

    def missing_key(self, base_url: str, api_key: str | None) -> str | None:
        if api_key or urlsplit(base_url).hostname != "api.anthropic.com":
            return None
        return f"{self.api_key_env} is not set"
