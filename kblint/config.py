"""Settings: configuration file (kblint.toml or pyproject.toml [tool.kblint]) plus command-line
flags, which win (SPEC §12)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field, fields, replace
from typing import Any, Literal, overload

from .infra.files import FileProblem, not_regular_reason, read_regular_file
from .yamlread import DEFAULT_LIMITS, Limits

SCOPES = ("kb", "workspace")


@dataclass(frozen=True)
class DuplicateSettings:
    """[duplicates]: how entries are compared with each other (possible_duplicate)."""

    enabled: bool = True
    threshold: float = 0.8  # body similarity (Jaccard of word shingles) at or above which two entries are alike
    min_words: int = 50  # bodies shorter than this compare by title only
    scope: str = "kb"  # "kb": entries of one KB; "workspace": of every KB of the run
    types: tuple[str, ...] = ()  # the types compared; none: every type
    max_compare: int = 5  # the closest pairs of an entry that an LLM classifies


DEFAULT_DUPLICATES = DuplicateSettings()


@dataclass
class Settings:
    """What a run was asked to do: command-line options over configuration files over defaults."""

    paths: list[str] = field(default_factory=list)
    format: str | None = None  # None: text, or github under GitHub Actions
    output: str | None = None
    reports: list[str] = field(default_factory=list)  # FORMAT:FILE, more reports of the same run
    fail_on: str = "error"
    select: list[str] = field(default_factory=list)
    ignore: list[str] = field(default_factory=list)
    per_file_ignores: dict[str, list[str]] = field(default_factory=dict)  # KB-relative glob → names
    min_severity: str = "info"  # issues below it are hidden (and counted)
    kb: str | None = None  # a KB name (restricts the run) or a directory holding kb.yaml (context)
    type: str | None = None
    strict_links: bool = False
    respect_gitignore: bool = True
    exclude: list[str] = field(default_factory=list)
    stdin: bool = False
    stdin_path: str | None = None
    statistics: bool = False
    quiet: bool = False
    color: str = "auto"  # COLOR_CHOICES
    verbose: bool = False
    no_judgment: bool = False
    base: str | None = None  # git revision: status gates apply to real transitions since it
    changed_since: str | None = None
    baseline: str | None = None
    write_baseline: str | None = None
    cache_dir: str | None = None
    no_cache: bool = False
    jobs: int | None = None
    shard: str | None = None
    # the judgment tier
    llm: str | None = None  # "provider:model"
    llm_base_url: str | None = None
    llm_concurrency: int = 4
    llm_min_confidence: float = 0.7
    max_llm_calls: int | None = None
    llm_timeout: float | None = None  # seconds; None: by the provider (judge.model.default_timeout)
    llm_max_output: int | None = None  # tokens; None: JudgeConfig.max_tokens
    llm_context: int | None = None  # tokens of the model's context; None: as the server says
    llm_output: str | None = None  # how answers are asked for (a provider's output_modes); None: the best
    llm_required: bool = False
    dry_run: bool = False
    fix: bool = False  # write the safe fixes, then report what is left
    diff: bool = False  # print the safe fixes as a diff; write nothing
    limits: Limits = DEFAULT_LIMITS
    duplicates: DuplicateSettings = DEFAULT_DUPLICATES
    config_file: str | None = None  # the configuration file that was read, if any
    sources: dict[str, str] = field(default_factory=dict)  # field → where its value came from (default: none)

    def given_as(self, name: str) -> str:
        """How the user gave the setting NAME, for a message about its value: `--name`, or `name`
        and the configuration file that set it."""
        source = self.sources.get(name)
        if source is None or source == "command line":
            return "--" + name.replace("_", "-")
        return f"{name} in {source}"


class ConfigError(Exception):
    """A configuration file kblint cannot use (exit 2), naming the file and the key."""


def split_names(values: list[str] | str | None) -> list[str]:
    """`--select a,b --select c` → [a, b, c]."""
    if isinstance(values, str):
        values = [values]
    names: list[str] = []
    for value in values or []:
        names.extend(part.strip() for part in str(value).split(",") if part.strip())
    return names


# Keys of the configuration file: key → (Settings field, kind). Kinds check the value's type.
_FILE_KEYS = {
    "format": ("format", "str"),
    "output": ("output", "str"),
    "fail_on": ("fail_on", "fail_on"),
    "select": ("select", "names"),
    "ignore": ("ignore", "names"),
    "per_file_ignores": ("per_file_ignores", "globs"),
    "min_severity": ("min_severity", "severity"),
    "exclude": ("exclude", "names"),
    "kb": ("kb", "str"),
    "type": ("type", "str"),
    "strict_links": ("strict_links", "bool"),
    "respect_gitignore": ("respect_gitignore", "bool"),
    "statistics": ("statistics", "bool"),
    "quiet": ("quiet", "bool"),
    "color": ("color", "color"),
    "no_judgment": ("no_judgment", "bool"),
    "base": ("base", "str"),
    "baseline": ("baseline", "str"),
    "cache_dir": ("cache_dir", "str"),
    "no_cache": ("no_cache", "bool"),
    "jobs": ("jobs", "int"),
}
_LLM_KEYS = {
    "provider": ("llm_provider", "str"),
    "model": ("llm_model", "str"),
    "base_url": ("llm_base_url", "str"),
    "concurrency": ("llm_concurrency", "int"),
    "min_confidence": ("llm_min_confidence", "confidence"),
    "max_calls": ("max_llm_calls", "int"),
    "timeout": ("llm_timeout", "seconds"),
    "max_output": ("llm_max_output", "int"),
    "context": ("llm_context", "int"),
    "output": ("llm_output", "str"),
    "required": ("llm_required", "bool"),
}
# [limits]: key → (Limits field, kind); README "Limits" documents them
_LIMIT_KEYS = {
    "max_file_bytes": ("max_file_bytes", "int"),
    "max_yaml_depth": ("max_depth", "int"),
    "max_alias_nodes": ("max_alias_nodes", "int"),
    "max_path_depth": ("max_path_depth", "int"),
    "regex_timeout": ("regex_timeout", "seconds"),
    "plugin_timeout": ("plugin_timeout", "seconds"),
}
# [duplicates]: key → (DuplicateSettings field, kind); README "Duplicates" documents them
_DUPLICATE_KEYS = {
    "enabled": ("enabled", "bool"),
    "threshold": ("threshold", "fraction"),
    "min_words": ("min_words", "int"),
    "scope": ("scope", "scope"),
    "types": ("types", "names"),
    "max_compare": ("max_compare", "int"),
}
_TABLES = {"llm": _LLM_KEYS, "limits": _LIMIT_KEYS, "duplicates": _DUPLICATE_KEYS}
_PATH_KEYS = ("output", "baseline", "cache_dir")


_A_DAY = 86_400.0
_NUMBERS = {  # number kinds: the values each allows (NaN compares false: none)
    "confidence": lambda v: 0 <= v <= 1,
    "seconds": lambda v: 0 < v < _A_DAY,
    "fraction": lambda v: 0 < v <= 1,
}
COLOR_CHOICES = ("auto", "always", "never")
_CHOICES = {
    "fail_on": ("error", "warning", "info", "never"),
    "severity": ("error", "warning", "info"),
    "color": COLOR_CHOICES,
    "scope": SCOPES,
}


def _check(kind: str, key: str, value: Any, where: str) -> Any:
    if kind == "str" and isinstance(value, str):
        return value
    if kind == "bool" and isinstance(value, bool):
        return value
    if kind == "int" and isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    if kind in _NUMBERS and isinstance(value, (int, float)) and not isinstance(value, bool) and _NUMBERS[kind](value):
        return float(value)
    if kind == "names" and (
        isinstance(value, str) or (isinstance(value, list) and all(isinstance(v, str) for v in value))
    ):
        return split_names(value)
    if kind in _CHOICES and value in _CHOICES[kind]:
        return value
    if kind == "globs" and isinstance(value, dict) and all(_check("names", k, v, where) for k, v in value.items()):
        return {str(k): split_names(v) for k, v in value.items()}
    expected = {
        "str": "a string",
        "bool": "true or false",
        "int": "a whole number, 0 or more",
        "confidence": "a number from 0 to 1",
        "seconds": "a number of seconds above 0 and under a day (86400)",
        "fraction": "a number above 0 and at most 1",
        "scope": "one of kb, workspace",
        "names": "a list of names",
        "fail_on": "one of error, warning, info, never",
        "severity": "one of error, warning, info",
        "color": "one of auto, always, never",
        "globs": 'a table of glob = [names], e.g. {"drafts/**" = ["orphan_entry"]}',
    }[kind]
    raise ConfigError(f"{where}: '{key}' must be {expected}, got {value!r}")


def find_config(start: str) -> tuple[str, dict[str, Any]] | None:
    """The nearest kblint.toml, or pyproject.toml with a [tool.kblint] table, from START upward."""
    current = os.path.abspath(start)
    while True:
        candidate = os.path.join(current, "kblint.toml")
        if os.path.isfile(candidate):
            return candidate, _read_toml(candidate, pyproject=False)
        candidate = os.path.join(current, "pyproject.toml")
        if os.path.isfile(candidate):
            table = _read_toml(candidate, pyproject=True)
            if table is not None:
                return candidate, table
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent


@overload
def _read_toml(path: str, *, pyproject: Literal[False]) -> dict[str, Any]: ...
@overload
def _read_toml(path: str, *, pyproject: bool) -> dict[str, Any] | None: ...
def _read_toml(path: str, *, pyproject: bool) -> dict[str, Any] | None:
    try:
        raw = read_regular_file(path)
    except FileProblem as exc:
        raise ConfigError(f"{path}: cannot read: {exc.reason}") from None
    if pyproject and b"kblint" not in raw and b"\\" not in raw:
        return None  # it cannot spell [tool.kblint]: another tool's file, not ours to parse (or to fail on)
    import tomllib

    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: not UTF-8 ({exc.reason})") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None
    except RecursionError:
        raise ConfigError(f"{path}: invalid TOML: nested too deep to read") from None
    if pyproject:
        tool = data.get("tool")
        table = tool.get("kblint") if isinstance(tool, dict) else None
        return table if isinstance(table, dict) else None
    return data


def load_config(path: str | None, cwd: str | None = None) -> tuple[str | None, dict[str, Any]]:
    """(file, values by Settings field) from --config PATH or the nearest configuration file."""
    found: tuple[str, dict[str, Any]] | None
    if path is not None:
        problem = not_regular_reason(path)
        if problem is not None:
            raise ConfigError(f"--config {path}: {problem}")
        table = _read_toml(path, pyproject=os.path.basename(path) == "pyproject.toml")
        found = (os.path.abspath(path), table or {})
    else:
        found = find_config(cwd or os.getcwd())
        if found is None:
            return None, {}
    file, table = found
    values: dict = {}
    limits: dict[str, Any] = {}
    duplicates: dict[str, Any] = {}
    base_dir = os.path.dirname(file)
    prefix = "tool.kblint." if os.path.basename(file) == "pyproject.toml" else ""
    for key, value in table.items():
        if key in _TABLES and isinstance(value, dict):
            target_values = {"limits": limits, "duplicates": duplicates}.get(key, values)
            target_values.update(_table_values(file, prefix, key, value))
            continue
        if key in _TABLES:
            raise ConfigError(f"{file}: '{prefix}{key}' must be a table ([{prefix}{key}]), got {value!r}")
        if key not in _FILE_KEYS:
            import difflib

            near = difflib.get_close_matches(key, list(_FILE_KEYS) + list(_TABLES), n=1)
            hint = f"; did you mean '{near[0]}'?" if near else ""
            raise ConfigError(f"{file}: unknown key '{prefix}{key}'{hint}")
        target, kind = _FILE_KEYS[key]
        checked = _check(kind, key, value, file)
        if key in _PATH_KEYS and isinstance(checked, str):
            checked = os.path.join(base_dir, checked)
        values[target] = checked
    if limits:
        values["limits"] = replace(DEFAULT_LIMITS, **limits)
    if duplicates:
        if "types" in duplicates:
            duplicates["types"] = tuple(duplicates["types"])
        values["duplicates"] = replace(DEFAULT_DUPLICATES, **duplicates)
    if "llm_provider" in values or "llm_model" in values:
        provider = values.pop("llm_provider", None)
        model = values.pop("llm_model", None)
        if not provider or not model:
            raise ConfigError(f"{file}: [llm] needs both 'provider' and 'model'")
        values["llm"] = f"{provider}:{model}"
    return file, values


def _table_values(file: str, prefix: str, name: str, table: dict[str, Any]) -> dict[str, Any]:
    """The values of the [NAME] table of the configuration file, by their target field."""
    keys = _TABLES[name]
    values = {}
    for sub, value in table.items():
        if sub not in keys:
            raise ConfigError(f"{file}: unknown key '{prefix}{name}.{sub}' (known: {', '.join(keys)})")
        target, kind = keys[sub]
        values[target] = _check(kind, f"{name}.{sub}", value, file)
    return values


def resolve(flags: dict[str, Any], config_path: str | None = None, cwd: str | None = None) -> Settings:
    """Settings from the configuration file, then the flags that were given (not None)."""
    file, values = load_config(config_path, cwd)
    settings = Settings()
    names = {f.name for f in fields(Settings)}
    for key, value in values.items():
        setattr(settings, key, value)
        settings.sources[key] = str(file)
    for key, value in flags.items():
        if key not in names:
            raise KeyError(key)
        if value is None or (isinstance(value, list) and not value):
            continue
        setattr(settings, key, value)
        settings.sources[key] = "command line"
    settings.config_file = file
    if settings.cache_dir is None:
        settings.cache_dir = os.path.join(os.path.dirname(file) if file else (cwd or os.getcwd()), ".kblint_cache")
    return settings


def describe(settings: Settings) -> str:
    """`--show-settings`: every setting, its value, and where the value came from."""

    lines = [f"# configuration file: {settings.config_file or 'none found'}"]
    env_llm = os.environ.get("KBLINT_LLM")
    for f in fields(Settings):
        if f.name in ("config_file", "sources"):
            continue
        value, source = getattr(settings, f.name), settings.sources.get(f.name, "default")
        if f.name == "llm" and value is None and env_llm:
            value, source = env_llm, "KBLINT_LLM"
        if f.name in _TABLE_FIELDS:
            lines.extend(_describe_table(f.name, value, source))
            continue
        lines.append(f"{f.name} = {_toml(value)}  # {source}")
    return "\n".join(lines)


def _toml(value: Any) -> str:
    """VALUE as TOML writes it (JSON's scalars and arrays are TOML's; a table is written inline)."""
    import json

    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(k)} = {_toml(v)}" for k, v in value.items()) + "}"
    return json.dumps(value)


_TABLE_FIELDS = {"limits": (_LIMIT_KEYS, DEFAULT_LIMITS), "duplicates": (_DUPLICATE_KEYS, DEFAULT_DUPLICATES)}


def _describe_table(name: str, table: Any, source: str) -> list[str]:
    """One line per key of a [NAME] table (limits, duplicates)."""
    import json

    keys, default = _TABLE_FIELDS[name]
    by_field = {target: key for key, (target, _) in keys.items()}
    return [
        f"{name}.{by_field.get(f.name, f.name)} = {json.dumps(getattr(table, f.name))}  # "
        + (source if getattr(table, f.name) != getattr(default, f.name) else "default")
        for f in fields(table)
    ]


def llm_spec(settings: Settings) -> str | None:
    """`provider:model` of the judge: --llm, the configuration file, or KBLINT_LLM; None when none is set."""
    return settings.llm or os.environ.get("KBLINT_LLM") or None
