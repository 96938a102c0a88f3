"""The checker registry: the core checkers and those plugins add, and validation of a rubric
item's params before the run."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .. import userpattern
from .base import KIND_NAMES, Checker, Param, kind_ok

if TYPE_CHECKING:
    from ..plugins import Plugins


def _param_problem(checker: Checker, p: Param, value: object) -> str | None:
    if not kind_ok(p.kind, value):
        return f"checker '{checker.name}': param '{p.name}' must be {KIND_NAMES.get(p.kind, p.kind)}, got {value!r}"
    if p.minimum is not None and isinstance(value, int) and value < p.minimum:  # such an item could never fail
        return f"checker '{checker.name}': param '{p.name}' must be {p.minimum} or more, got {value!r}"
    if p.kind == "regex":
        error = userpattern.pattern_error(str(value))
        if error is not None:
            return f"checker '{checker.name}': param '{p.name}' is not a valid regex: {error}"
    return None


def validate_params(checker: Checker, params: object) -> tuple[dict[str, Any], list[str]]:
    """Params with defaults filled in, and the problems found (empty when the params are good)."""
    if params is None:
        params = {}
    if not isinstance(params, dict):
        return {}, [f"params of checker '{checker.name}' must be a mapping"]
    declared = {p.name: p for p in checker.params}
    problems = [
        f"checker '{checker.name}' has no param '{key}' (params: {', '.join(declared) or 'none'})"
        for key in params
        if key not in declared
    ]
    resolved: dict[str, Any] = {}
    for p in checker.params:
        value = params.get(p.name)
        if value is None:
            if p.required:
                problems.append(f"checker '{checker.name}' needs param '{p.name}' ({KIND_NAMES.get(p.kind, p.kind)})")
            elif p.default is not None:
                resolved[p.name] = list(p.default) if isinstance(p.default, (list, tuple)) else p.default
            continue
        problem = _param_problem(checker, p, value)
        if problem:
            problems.append(problem)
        else:
            resolved[p.name] = value
    return resolved, problems


@dataclass(slots=True)
class Registry:
    """The checkers known to this run: the core ones and those plugins add."""

    checkers: dict[str, Checker] = field(default_factory=dict)
    plugins: Plugins | None = None

    def add(self, checker: Checker) -> None:
        self.checkers[checker.name] = checker

    def get(self, name: str) -> Checker | None:
        return self.checkers.get(name)

    def names(self) -> list[str]:
        return sorted(self.checkers)


_REGISTRY: list[Registry] = []  # the process-wide registry, once built


def registry() -> Registry:
    """The process-wide registry: the core checkers, then the installed plugins' (built on first use)."""
    if not _REGISTRY:
        from .. import plugins
        from .core import CHECKERS

        reg = Registry()
        for checker in CHECKERS:
            reg.add(checker)
        reg.plugins = plugins.load(reg)
        _REGISTRY.append(reg)
    return _REGISTRY[0]


def reset_registry() -> None:
    """Forget the registry, so that the next use loads the plugins again (after sys.path changes)."""
    _REGISTRY.clear()
