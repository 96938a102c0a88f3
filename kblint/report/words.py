"""How reports word what they count."""

from __future__ import annotations


def plural(n: int, word: str, many: str | None = None) -> str:
    """`1 issue`, `2 issues` (MANY: the word for more than one, when it is not WORD + s)."""
    return f"{n} {word if n == 1 else many or word + 's'}"
