"""The checker registry: core checkers (and, through plugins, others), their declared params,
and validation of an item's params before the run."""

from __future__ import annotations

import inspect
import re
from dataclasses import field
from typing import Callable

from ..plainclass import dataclass


@dataclass(frozen=True, slots=True)
class Param:
    """A parameter a checker accepts in a rubric item's `params`."""

    name: str
    kind: str  # "int" | "str" | "str_list" | "regex"
    required: bool = False
    default: object = None
    help: str = ""


@dataclass(slots=True)
class Checker:
    """A named check that rubric items can bind to, with the parameters it takes."""

    name: str
    func: Callable
    params: tuple[Param, ...] = ()
    source: str = "core"
    needs_graph: bool = False  # runs after the graph pass, on the entry's facts and the graph
    # The frontmatter field an issue points at (a param name prefixed "param:" or a key).
    field: str | None = None

    @property
    def doc(self) -> str:
        return inspect.cleandoc(self.func.__doc__ or "").strip()

    @property
    def description(self) -> str:
        return self.doc.split("\n", 1)[0].strip()

    def field_for(self, params: dict) -> str | None:
        if self.field and self.field.startswith("param:"):
            value = params.get(self.field[6:])
            return value if isinstance(value, str) else None
        return self.field

    def signature(self) -> str:
        parts = []
        for p in self.params:
            text = p.name
            if not p.required:
                text += f"={p.default!r}" if p.default is not None else "=?"
            parts.append(text)
        return ", ".join(parts)


def _kind_ok(kind: str, value) -> bool:
    if kind == "int":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind in ("str", "regex"):
        return isinstance(value, str) and value != ""
    if kind == "str_list":
        return isinstance(value, list) and all(isinstance(v, str) for v in value) and bool(value)
    return True


_KIND_NAMES = {"int": "an integer", "str": "a non-empty string", "regex": "a regular expression",
               "str_list": "a non-empty list of strings"}


def validate_params(checker: Checker, params: object) -> tuple[dict, list[str]]:
    """Params with defaults filled in, and the problems found (empty when the params are good)."""
    problems: list[str] = []
    if params is None:
        params = {}
    if not isinstance(params, dict):
        return {}, [f"params of checker '{checker.name}' must be a mapping"]
    declared = {p.name: p for p in checker.params}
    for key in params:
        if key not in declared:
            known = ", ".join(declared) or "none"
            problems.append(f"checker '{checker.name}' has no param '{key}' (params: {known})")
    resolved: dict = {}
    for p in checker.params:
        if p.name not in params or params[p.name] is None:
            if p.required:
                problems.append(f"checker '{checker.name}' needs param '{p.name}' ({_KIND_NAMES[p.kind]})")
            elif p.default is not None:
                resolved[p.name] = list(p.default) if isinstance(p.default, (list, tuple)) else p.default
            continue
        value = params[p.name]
        if not _kind_ok(p.kind, value):
            problems.append(f"checker '{checker.name}': param '{p.name}' must be {_KIND_NAMES[p.kind]}, "
                            f"got {value!r}")
            continue
        if p.kind == "regex":
            try:
                re.compile(value)
            except re.error as exc:
                problems.append(f"checker '{checker.name}': param '{p.name}' is not a valid regex: {exc}")
                continue
        resolved[p.name] = value
    return resolved, problems


@dataclass(slots=True)
class Registry:
    """The checkers known to this run: the core ones and those plugins add."""

    checkers: dict[str, Checker] = field(default_factory=dict)
    plugins: object = None  # kblint.plugins.Plugins once loaded

    def add(self, checker: Checker) -> None:
        self.checkers[checker.name] = checker

    def get(self, name: str) -> Checker | None:
        return self.checkers.get(name)

    def names(self) -> list[str]:
        return sorted(self.checkers)


_REGISTRY: Registry | None = None


def registry() -> Registry:
    """The process-wide registry, built on first use."""
    global _REGISTRY
    if _REGISTRY is None:
        from . import core

        from .. import plugins

        reg = Registry()
        for checker in core.CHECKERS:
            reg.add(checker)
        reg.plugins = plugins.load(reg)
        _REGISTRY = reg
    return _REGISTRY
