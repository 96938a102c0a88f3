"""LLM providers: one class per wire format behind one interface (`Provider`).

A provider knows its endpoint, headers, request body and how to read an answer; the runner does
the rest (caching, retries, concurrency). Adding a provider is one new class in `PROVIDERS`.
"""

from __future__ import annotations

from .anthropic import Anthropic
from .base import Answer, ContextRequest, Provider, Question
from .ollama import Ollama
from .openai import OpenAI

PROVIDERS: dict[str, type[Provider]] = {p.name: p for p in (OpenAI, Ollama, Anthropic)}


def provider_named(name: str) -> Provider:
    """The provider called NAME; KeyError for an unknown one."""
    return PROVIDERS[name]()


__all__ = ["PROVIDERS", "Answer", "ContextRequest", "Provider", "Question", "provider_named"]
