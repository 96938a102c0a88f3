"""Plugins (SPEC §11): installed packages that declare entry points in the group `kblint.plugins`.

The entry point names an object with any of `checkers` (name → callable, names namespaced
`plugin.name`), `types` (type name → defaults) and `kb_types` (the `kb_type` values its types
apply to; all if absent). Every plugin is loaded or reported: a plugin that fails to import, two
plugins defining one checker, and a plugin shadowing a core checker are each a `PluginProblem`
naming the package, shown on standard error and by `kblint checkers`.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .checkers.base import Checker, CheckerFunc, Param
from .model.kbschema import PluginType

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint

    from .checkers.registry import Registry

GROUP = "kblint.plugins"


@dataclass(slots=True)
class PluginProblem:
    """A plugin that could not be loaded, or that declared something wrong."""

    package: str
    message: str

    def __str__(self) -> str:
        return f"plugin {self.package}: {self.message}"


@dataclass(slots=True)
class LoadedPlugin:
    """A plugin that was loaded, and the checkers and types it added."""

    name: str  # the entry point's name
    package: str
    version: str
    checkers: list[str] = field(default_factory=list)
    types: list[str] = field(default_factory=list)


@dataclass(slots=True)
class Plugins:
    """What loading the installed plugins gave: the plugins, their types and the problems."""

    loaded: list[LoadedPlugin] = field(default_factory=list)
    problems: list[PluginProblem] = field(default_factory=list)
    types: list[PluginType] = field(default_factory=list)


def _param_specs(func: Any) -> tuple[Param, ...]:
    declared = getattr(func, "params", None)
    if declared is None:
        return ()
    specs = []
    items = declared.items() if isinstance(declared, dict) else ((getattr(p, "name", None), p) for p in declared)
    for name, spec in items:
        if isinstance(spec, Param):
            specs.append(spec)
        elif isinstance(spec, dict):
            specs.append(
                Param(
                    str(name),
                    str(spec.get("type", "str")),
                    bool(spec.get("required", False)),
                    spec.get("default"),
                    str(spec.get("help", "")),
                )
            )
        else:
            specs.append(Param(str(name), str(spec)))
    return tuple(specs)


def _entry_points() -> list[EntryPoint]:
    if not _may_declare_plugins():
        return []
    from importlib.metadata import entry_points

    return list(entry_points(group=GROUP))


def _declares_plugins(directory: str, name: str) -> bool:
    low = name.lower()
    if not (low.endswith((".dist-info", ".egg-info")) or low == "egg-info"):
        return False
    try:
        with open(os.path.join(directory, name, "entry_points.txt"), encoding="utf-8", errors="replace") as fh:
            return GROUP in fh.read()
    except OSError:
        return False  # no entry points, or an .egg-info file


def _may_declare_plugins() -> bool:
    """Whether any installed distribution could declare a kblint plugin. Importing
    importlib.metadata takes longer than a look at the entry_points.txt files where it finds them,
    and most installs have no plugin. What cannot be looked into (a zip on sys.path, another kind
    of finder) counts as maybe."""
    for finder in sys.meta_path:
        if hasattr(finder, "find_distributions") and getattr(finder, "__name__", "") != "PathFinder":
            return True
    for entry in sys.path:
        directory = entry or "."
        try:
            with os.scandir(directory) as children:
                names = [child.name for child in children]
        except NotADirectoryError:
            return True  # a zip file
        except OSError:
            continue
        if any(_declares_plugins(directory, name) for name in names):
            return True
    return False


def _add_checkers(
    registry: Registry,
    checkers: dict[Any, Any],
    package: str,
    owners: dict[str, str],
    result: Plugins,
    record: LoadedPlugin,
) -> None:
    def problem(message: str) -> None:
        result.problems.append(PluginProblem(package, message))

    for raw_name, func in checkers.items():
        name = str(raw_name)
        existing = registry.get(name)
        if existing is not None and existing.source == "core":
            problem(f"checker '{name}' shadows the core checker; the core one is kept")
        elif "." not in name:
            problem(f"checker '{name}' must be namespaced as 'plugin.{name}'; not loaded")
        elif name in owners:
            problem(f"checker '{name}' is also defined by plugin {owners[name]}; the first one is kept")
        elif not callable(func):
            problem(f"checker '{name}' is not callable")
        else:
            owners[name] = package
            registry.add(_checker(name, func, package))
            record.checkers.append(name)


def _checker(name: str, func: CheckerFunc, package: str) -> Checker:
    return Checker(
        name=name,
        func=func,
        params=_param_specs(func),
        source=package,
        needs_graph=bool(getattr(func, "needs_graph", False)),
        field=getattr(func, "field", None),
    )


def _add_types(obj: Any, package: str, result: Plugins, record: LoadedPlugin) -> None:
    kb_types_value = getattr(obj, "kb_types", None)
    kb_types = tuple(str(k) for k in kb_types_value) if kb_types_value else None
    types = getattr(obj, "types", None) or {}
    if not isinstance(types, dict):
        result.problems.append(PluginProblem(package, "`types` must be a mapping of type name to defaults"))
        return
    for tname, defaults in types.items():
        if not isinstance(defaults, dict):
            result.problems.append(PluginProblem(package, f"type '{tname}' defaults must be a mapping"))
            continue
        result.types.append(PluginType(str(tname), defaults, kb_types, package))
        record.types.append(str(tname))


def load(registry: Registry, entry_points: Iterable[EntryPoint] | None = None) -> Plugins:
    """Load every plugin into REGISTRY; return what was loaded and what went wrong."""
    result = Plugins()
    owners: dict[str, str] = {}
    found = _entry_points() if entry_points is None else list(entry_points)
    for ep in sorted(found, key=lambda e: e.name):
        dist = getattr(ep, "dist", None)
        package = dist.name if dist is not None else ep.value.split(":")[0]
        version = dist.version if dist is not None else "?"
        try:
            obj = ep.load()
        except Exception as exc:  # noqa: BLE001 - a broken plugin is reported, never fatal
            result.problems.append(
                PluginProblem(package, f"failed to import ({ep.value}): {type(exc).__name__}: {exc}")
            )
            continue
        record = LoadedPlugin(name=ep.name, package=package, version=version)
        checkers = getattr(obj, "checkers", None) or {}
        if isinstance(checkers, dict):
            _add_checkers(registry, checkers, package, owners, result, record)
        else:
            result.problems.append(PluginProblem(package, "`checkers` must be a mapping of name to checker"))
        _add_types(obj, package, result, record)
        result.loaded.append(record)
    return result
