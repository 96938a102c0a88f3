"""`kblint explain NAME`: the documentation of a rule, a checker, or the policy grammar."""

from __future__ import annotations

import difflib
import inspect

from .checkers.registry import registry
from .rules import RULES


class UnknownName(Exception):
    def __init__(self, name: str, suggestions: list[str]):
        self.name = name
        self.suggestions = suggestions
        hint = f"; did you mean {', '.join(repr(s) for s in suggestions)}?" if suggestions else ""
        super().__init__(f"no rule, checker or topic named '{name}'{hint}")


def policy_doc() -> str:
    from . import policy

    return "policy — deterministic rubric items\n\n" + inspect.cleandoc(policy.__doc__ or "")


def policy_examples() -> list[str]:
    """The example expressions listed in the policy documentation."""
    doc = policy_doc()
    section = doc.split("Examples", 1)[1].split("\n\n", 2)[1]
    return [line.strip() for line in section.splitlines() if line.strip()]


def explain(name: str) -> str:
    if name == "policy":
        return policy_doc() + "\n"
    if name in RULES:
        rule = RULES[name]
        return f"{rule.name} — rule, tier {rule.tier}, default severity {rule.severity}\n\n{rule.summary}\n"
    reg = registry()
    checker = reg.get(name)
    if checker is not None:
        lines = [f"{checker.name} — checker ({checker.source}), emits rubric_violation", ""]
        if checker.params:
            lines.append("params:")
            for p in checker.params:
                need = "required" if p.required else (f"default {p.default!r}" if p.default is not None else "optional")
                lines.append(f"  {p.name} ({p.kind}, {need}){': ' + p.help if p.help else ''}")
            lines.append("")
        if checker.needs_graph:
            lines.append("runs after the graph pass (needs the whole workspace's links)")
            lines.append("")
        lines.append(checker.doc)
        return "\n".join(lines) + "\n"
    known = sorted(set(RULES) | set(reg.names()) | {"policy"})
    raise UnknownName(name, difflib.get_close_matches(name, known, n=3, cutoff=0.5))
