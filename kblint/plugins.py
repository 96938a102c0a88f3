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
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .checkers.base import KIND_NAMES, Checker, CheckerFunc, Param, describe, kind_ok
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


class _BadShape(ValueError):
    """A plugin declared something of the wrong type; the message says what."""


def _param_specs(func: Any) -> tuple[Param, ...]:
    """The params a checker declares in `func.params`: a mapping of param name to a spec (a
    mapping, a kind name or a Param), or a list of Params."""
    declared = getattr(func, "params", None)
    if declared is None:
        return ()
    if isinstance(declared, Mapping):
        return tuple(_param(name, spec) for name, spec in declared.items())
    if isinstance(declared, Iterable) and not isinstance(declared, (str, bytes)):
        specs = tuple(declared)
        if all(isinstance(p, Param) for p in specs):
            return tuple(_checked(p) for p in specs)
    raise _BadShape(
        f"`params` must be a mapping of param name to spec, or a list of Param, got {type(declared).__name__}"
    )


def _param(name: object, spec: object) -> Param:
    if not isinstance(name, str):
        raise _BadShape(f"param names must be strings, got {type(name).__name__}")
    if isinstance(spec, Param):
        return _checked(spec)
    if isinstance(spec, str):
        return _checked(Param(name, spec))
    if not isinstance(spec, Mapping):
        raise _BadShape(f"param '{name}' must be a mapping (type, required, default, help), got {type(spec).__name__}")
    kind, required, help_text = spec.get("type", "str"), spec.get("required", False), spec.get("help", "")
    for key, value, want in (("type", kind, str), ("required", required, bool), ("help", help_text, str)):
        if not isinstance(value, want):
            raise _BadShape(f"param '{name}': `{key}` must be a {want.__name__}, got {type(value).__name__}")
    return _checked(Param(name, kind, required, spec.get("default"), help_text))


def _checked(param: Param) -> Param:
    """PARAM, when its kind is one kblint knows and its default, if any, is of that kind."""
    if param.kind not in KIND_NAMES:
        raise _BadShape(f"param '{param.name}': `type` must be one of {', '.join(KIND_NAMES)}, got {param.kind!r}")
    if param.default is not None and not kind_ok(param.kind, param.default):
        raise _BadShape(f"param '{param.name}': its default must be {KIND_NAMES[param.kind]}, got {param.default!r}")
    return param


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

    for name, func in checkers.items():
        existing = registry.get(name) if isinstance(name, str) else None
        if not isinstance(name, str):
            problem(f"checker names must be strings, got {type(name).__name__} {name!r}; not loaded")
        elif existing is not None and existing.source == "core":
            problem(f"checker '{name}' shadows the core checker; the core one is kept")
        elif "." not in name:
            problem(f"checker '{name}' must be namespaced as 'plugin.{name}'; not loaded")
        elif name in owners:
            problem(f"checker '{name}' is also defined by plugin {owners[name]}; the first one is kept")
        elif not callable(func):
            problem(f"checker '{name}' is not callable; not loaded")
        else:
            try:
                checker = _checker(name, func, package)
            except _BadShape as exc:
                problem(f"checker '{name}': {exc}; not loaded")
                continue
            owners[name] = package
            registry.add(checker)
            record.checkers.append(name)


def _checker(name: str, func: CheckerFunc, package: str) -> Checker:
    """The checker FUNC declares; _BadShape when one of its documented attributes has the wrong
    type, which would otherwise fail later, in the middle of a run or of `kblint checkers`."""
    params = _param_specs(func)
    needs_graph = getattr(func, "needs_graph", False)
    field_name = getattr(func, "field", None)
    doc = getattr(func, "__doc__", None)
    if not isinstance(needs_graph, bool):
        raise _BadShape(f"`needs_graph` must be True or False, got {type(needs_graph).__name__}")
    if field_name is not None and not isinstance(field_name, str):
        raise _BadShape(f"`field` must be a string, got {type(field_name).__name__}")
    if doc is not None and not isinstance(doc, str):
        raise _BadShape(f"its docstring must be a string, got {type(doc).__name__}")
    return Checker(name=name, func=func, params=params, source=package, needs_graph=needs_graph, field=field_name)


def _kb_types(obj: Any) -> tuple[str, ...] | None:
    """The kb_type values a plugin's types apply to (None: every KB, as when absent or empty)."""
    value = getattr(obj, "kb_types", None)
    if value is None:
        return None
    names = tuple(value) if isinstance(value, Iterable) and not isinstance(value, (str, bytes, Mapping)) else None
    if names is None or not all(isinstance(n, str) for n in names):
        raise _BadShape(f"`kb_types` must be a list of kb_type names, got {type(value).__name__} {value!r}")
    return names or None


def _add_types(obj: Any, package: str, result: Plugins, record: LoadedPlugin) -> None:
    def problem(message: str) -> None:
        result.problems.append(PluginProblem(package, message))

    try:
        kb_types = _kb_types(obj)
    except _BadShape as exc:  # applying its types to every KB instead would be wrong
        problem(f"{exc}; its types are not loaded")
        return
    types = getattr(obj, "types", None)
    if types is None:
        return
    if not isinstance(types, dict):
        problem("`types` must be a mapping of type name to defaults")
        return
    for tname, defaults in types.items():
        if not isinstance(tname, str):
            problem(f"type names must be strings, got {type(tname).__name__} {tname!r}")
        elif not isinstance(defaults, dict):
            problem(f"type '{tname}' defaults must be a mapping")
        else:
            result.types.append(PluginType(tname, defaults, kb_types, package))
            record.types.append(tname)


def _add(
    registry: Registry, obj: Any, package: str, owners: dict[str, str], result: Plugins, record: LoadedPlugin
) -> None:
    checkers = getattr(obj, "checkers", None)
    if checkers is None and getattr(obj, "types", None) is None:
        what = f"names {type(obj).__name__}, which has neither `checkers` nor `types`"
        result.problems.append(PluginProblem(package, f"its entry point {what}: nothing to load"))
        return
    if isinstance(checkers, dict):
        _add_checkers(registry, checkers, package, owners, result, record)
    elif checkers is not None:
        result.problems.append(PluginProblem(package, "`checkers` must be a mapping of name to checker"))
    _add_types(obj, package, result, record)


def load(registry: Registry, entry_points: Iterable[EntryPoint] | None = None) -> Plugins:
    """Load every plugin into REGISTRY; return what was loaded and what went wrong. A plugin's
    code that raises, even SystemExit, is that plugin's problem: only Ctrl-C stops the loading."""
    result = Plugins()
    owners: dict[str, str] = {}
    found = _entry_points() if entry_points is None else list(entry_points)
    for ep in sorted(found, key=lambda e: e.name):
        dist = getattr(ep, "dist", None)
        package = dist.name if dist is not None else ep.value.split(":")[0]
        version = dist.version if dist is not None else "?"
        try:
            obj = ep.load()
        except KeyboardInterrupt:
            raise
        except BaseException as exc:  # noqa: BLE001 - a broken plugin is reported, never fatal
            result.problems.append(PluginProblem(package, f"failed to import ({ep.value}): {describe(exc)}"))
            continue
        record = LoadedPlugin(name=ep.name, package=package, version=version)
        result.loaded.append(record)
        try:
            _add(registry, obj, package, owners, result, record)
        except KeyboardInterrupt:
            raise
        except BaseException as exc:  # noqa: BLE001 - its attributes are its code: they may raise too
            result.problems.append(PluginProblem(package, f"could not be read: {describe(exc)}"))
    return result
