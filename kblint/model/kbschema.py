"""kb.yaml → KBSchema / TypeSchema / FieldSchema with line numbers; system intent; core types.

SPEC §4. Every rubric item, type, field and rule keeps the kb.yaml line it came from, so later
tiers can point authors at the exact line to fix. Problems in kb.yaml that do not stop the run
are collected as `ConfigProblem`s and reported as `config_error` issues.
"""

from __future__ import annotations

import copy
import difflib
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ..infra.files import OUTSIDE, FileProblem, leads_outside, read_regular_file
from ..paths import printable
from ..userpattern import pattern_error
from ..yamlread import DEFAULT_LIMITS, RepeatedKey
from ..yamlread.lines import LineDict, YamlFileError, decode_yaml_bytes, line_of, load_text, yaml_kind

# Field type vocabularies (Pyrite's and the common one) → canonical name.
FIELD_TYPES = {
    "string": "string",
    "text": "string",
    "number": "number",
    "float": "number",
    "integer": "integer",
    "int": "integer",
    "boolean": "boolean",
    "bool": "boolean",
    "checkbox": "boolean",
    "date": "date",
    "datetime": "datetime",
    "select": "select",
    "multi-select": "multi-select",
    "multiselect": "multi-select",
    "multi_select": "multi-select",
    "list": "list",
    "tags": "tags",
    "url": "url",
    "object-ref": "object-ref",
    "object_ref": "object-ref",
}

# Keys every entry may carry whatever its type declares (SPEC §4).
COMMON_KEYS = frozenset(
    [
        "id",
        "title",
        "type",
        "tags",
        "links",
        "aliases",
        "status",
        "date",
        "summary",
        "references",
        "metadata",
        "kblint",
        "importance",
        "sources",
        "created_at",
        "updated_at",
    ]
)

# Types for which an empty body is normal (SPEC §8, empty_body).
BODYLESS_TYPES = frozenset({"collection", "relationship"})


@dataclass(slots=True)
class ConfigProblem:
    """A problem in kb.yaml (or a file beside it), with its line."""

    line: int
    message: str
    field: str | None = None
    path: str | None = None  # the file it is in; None for kb.yaml
    severity: str | None = None  # None: config_error's own (error); a likely typo is a warning
    discriminator: str | None = None  # what tells it from others in its fingerprint (None: its message)


@dataclass(slots=True)
class FieldSchema:
    """A field a type declares: its type and the values it allows."""

    name: str
    type: str | None  # canonical type, None when unspecified
    declared_type: str | None = None
    values: list[Any] | None = None
    required: bool = False
    min: float | None = None
    max: float | None = None
    allow_other: bool = False
    description: str | None = None
    line: int = 1


@dataclass(slots=True)
class FieldRule:
    """One `validation.rules` item: applies to a field of any type."""

    field: str
    range: tuple[float | None, float | None] | None = None
    enum: list[Any] | None = None
    pattern: str | None = None
    format: str | None = None
    line: int = 1


@dataclass(slots=True)
class Workflow:
    """A type's workflow: its states and the transitions between them."""

    states: list[str]
    transitions: list[tuple[str, str, str]]  # (from, to, why)
    line: int = 1


@dataclass(slots=True)
class RubricItem:
    """One evaluation_rubric element as written; binding it is the rubric tier's job."""

    raw: Any  # the string or mapping as written
    text: str
    line: int
    scope: str  # "system" | "kb" | "type"
    type_name: str | None = None
    source: str = "kb.yaml"  # "system", "core", "kb.yaml", or a plugin name

    @property
    def is_string(self) -> bool:
        return isinstance(self.raw, str)


@dataclass(slots=True)
class TypeSchema:
    """An entry type of kb.yaml: its fields, workflow and rubric."""

    name: str
    description: str | None = None
    subdirectory: str | None = None
    required: list[str] = field(default_factory=list)
    optional: list[str] = field(default_factory=list)
    fields: dict[str, FieldSchema] = field(default_factory=dict)
    ai_instructions: str | None = None
    guidelines: Any = None
    goals: Any = None
    rubric: list[RubricItem] = field(default_factory=list)
    workflow: Workflow | None = None
    source: str = "core"  # "core" | "kb.yaml" | plugin name
    declared: bool = False  # declared in kb.yaml
    knows_keys: bool = False  # lists fields/required/optional: other keys are unknown_field
    line: int = 1
    pass_threshold: float | None = None  # beats the KB's for entries of this type
    pass_threshold_line: int = 0

    def required_fields(self) -> list[str]:
        names = list(self.required)
        for name, spec in self.fields.items():
            if spec.required and name not in names:
                names.append(name)
        return [n for n in names if n != "title"]

    def known_keys(self) -> set[str]:
        return set(self.fields) | set(self.required) | set(self.optional) | COMMON_KEYS

    def knows(self, key: str) -> bool:
        """Whether KEY is one of known_keys() (asked of every key of every entry: no set is made)."""
        return key in self.fields or key in COMMON_KEYS or key in self.required or key in self.optional

    def object_ref_fields(self) -> tuple[str, ...]:
        return tuple(name for name, spec in self.fields.items() if spec.type == "object-ref")


@dataclass(slots=True)
class KBSchema:
    """A KB's intent, read from its kb.yaml (or the default intent when it has none): its types,
    rubric, validation rules and settings."""

    name: str
    root: str  # absolute directory
    kb_yaml: str | None  # absolute path, None for the default intent
    description: str | None = None
    kb_type: str | None = None
    guidelines: dict[str, Any] = field(default_factory=dict)
    goals: dict[Any, Any] = field(default_factory=dict)
    rubric: list[RubricItem] = field(default_factory=list)
    pass_threshold: float | None = None
    pass_threshold_line: int = 0
    enforce: bool = False
    rules: list[FieldRule] = field(default_factory=list)
    types: dict[str, TypeSchema] = field(default_factory=dict)
    problems: list[ConfigProblem] = field(default_factory=list)
    raw: dict[Any, Any] = field(default_factory=dict)

    def threshold_for(self, type_name: str) -> float | None:
        """The pass_threshold of entries of TYPE_NAME: the type's, else the KB's."""
        ts = self.types.get(type_name)
        if ts is not None and ts.pass_threshold is not None:
            return ts.pass_threshold
        return self.pass_threshold

    def type_for_subdirectory(self, segment: str) -> str | None:
        for ts in self.types.values():
            if ts.subdirectory and ts.subdirectory.strip("/") == segment:
                return ts.name
        return None

    def types_holding(self, relpath: str) -> list[str]:
        """The types whose subdirectory holds the KB-relative RELPATH, at any depth (a type is
        inferred only from the top folder: `type_for_subdirectory`)."""
        return [ts.name for ts in self.types.values() if ts.subdirectory and relpath.startswith(ts.subdirectory + "/")]


# ---------------------------------------------------------------------------------------------
# System intent and core types (SPEC §4, Pyrite-compatible).

SYSTEM_RUBRIC = (
    {"text": "Entry has a descriptive title", "checker": "descriptive_title"},
    {"text": "Entry body is non-empty", "covered_by": "schema"},
    {"text": "Entry has at least one tag", "checker": "has_tags"},
    {"text": "Entry links to at least one related entry (unless a stub)", "checker": "has_outlinks"},
)

SYSTEM_GUIDELINES = {
    "sourcing": "Cite sources for factual claims; prefer primary sources and say where each claim comes from.",
    "cross_linking": (
        "Link each entry to the related entries of the knowledge base so readers can navigate between them."
    ),
    "completeness": "Fill the fields the type asks for and write a body that explains the subject, not just names it.",
}


CORE_TYPES = ("note", "person", "organization", "event", "document", "topic", "relationship", "timeline", "collection")

CORE_RUBRIC: dict[str, tuple[dict[str, Any], ...]] = {
    "person": (
        {"text": "Person has a role or position described", "checker": "has_field", "params": {"field": "role"}},
    ),
    "event": (
        {"text": "Event has a date field", "covered_by": "schema"},
        {"text": "Event has an importance score between 1 and 10", "covered_by": "schema"},
    ),
    "document": (
        {
            "text": "Document has a source URL or author",
            "checker": "has_any_field",
            "params": {"fields": ["url", "author"]},
        },
        {
            "text": "Document has a document_type classification",
            "checker": "has_field",
            "params": {"field": "document_type"},
        },
    ),
}


def _core_types() -> dict[str, TypeSchema]:
    types = {name: TypeSchema(name=name, required=["title"]) for name in CORE_TYPES}
    for name, items in CORE_RUBRIC.items():
        types[name].rubric = [
            RubricItem(raw=copy.deepcopy(item), text=item["text"], line=0, scope="type", type_name=name, source="core")
            for item in items
        ]
    event = types["event"]
    event.required = ["title", "date"]
    event.fields = {
        "date": FieldSchema(name="date", type="date", declared_type="date", line=0),
        "importance": FieldSchema(name="importance", type="number", declared_type="number", min=1, max=10, line=0),
    }
    return types


def system_rubric() -> list[RubricItem]:
    return [
        RubricItem(raw=dict(item), text=item["text"], line=0, scope="system", source="system") for item in SYSTEM_RUBRIC
    ]


# ---------------------------------------------------------------------------------------------
# Loading kb.yaml.


def _names(value: Any, what: str, line: int, problems: list[ConfigProblem]) -> list[str]:
    """The names (of fields, of states) VALUE lists, or names alone; a mapping or a list in their
    place names nothing: left out, and said."""
    items = value if isinstance(value, (list, tuple)) else [value]  # a plugin's defaults may give a tuple
    names = []
    for item in items:
        if isinstance(item, (dict, list)):
            problems.append(ConfigProblem(line, f"{what} must list names, got {yaml_kind(item)}: left out"))
        elif item is not None:
            names.append(str(item))
    return names


def _number(value: Any) -> float | None:
    """VALUE when it is a number (YAML's `.nan` is not one: no value is above or below it)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)) and value == value:  # noqa: PLR0124 - false for NaN alone
        return value
    return None


def _empty_range(low: float | None, high: float | None) -> str | None:
    """What is wrong with the bounds LOW and HIGH when no value lies between them."""
    if low is not None and high is not None and low > high:
        return f"the minimum {low!r} is above the maximum {high!r}: no value is within them"
    return None


def _item_text(raw: Any) -> str:
    if isinstance(raw, str):
        return raw
    if isinstance(raw, dict):
        text = raw.get("text")
        return str(text) if text is not None else ""
    return str(raw)


def _rubric(
    value: Any,
    scope: str,
    type_name: str | None,
    problems: list[ConfigProblem],
    where_line: int,
    key: str = "evaluation_rubric",  # a plugin's type may say `rubric`
) -> list[RubricItem]:
    if value is None:
        return []
    if not isinstance(value, list):
        where = "evaluation_rubric" if type_name is None else f"type '{type_name}': {key}"
        problems.append(ConfigProblem(where_line, f"{where} must be a list of items"))
        return []
    return [
        RubricItem(raw=raw, text=_item_text(raw), line=line_of(value, i, where_line), scope=scope, type_name=type_name)
        for i, raw in enumerate(value)
    ]


def _field(name: str, spec: Any, line: int, problems: list[ConfigProblem], type_name: str) -> FieldSchema:
    if spec is None or isinstance(spec, str):
        spec = {"type": spec} if spec else {}
    if not isinstance(spec, dict):
        problems.append(ConfigProblem(line, f"type '{type_name}': field '{name}' must be a mapping"))
        return FieldSchema(name=name, type=None, line=line)

    def problem(key: str, message: str) -> None:
        problems.append(ConfigProblem(line_of(spec, key, line), f"type '{type_name}': field '{name}'{message}"))

    declared = spec.get("type")
    canonical = None
    if declared is not None:
        canonical = FIELD_TYPES.get(str(declared).strip().lower())
        if canonical is None:
            problem("type", f" has unknown field type '{declared}' (known: {', '.join(sorted(set(FIELD_TYPES)))})")
    values = spec.get("values", spec.get("options"))
    if values is not None and not isinstance(values, list):
        key = "values" if "values" in spec else "options"
        problem(key, f": {key} must be a list, got {values!r}")
        values = [values]
    for bound in ("min", "max"):
        if spec.get(bound) is not None and _number(spec.get(bound)) is None:
            problem(bound, f": {bound} must be a number, got {spec.get(bound)!r}")
    empty = _empty_range(_number(spec.get("min")), _number(spec.get("max")))
    if empty:
        problem("min", f": {empty}")
    description = spec.get("description")
    return FieldSchema(
        name=name,
        type=canonical,
        declared_type=str(declared) if declared is not None else None,
        values=list(values) if values is not None else None,
        required=spec.get("required") is True,
        min=_number(spec.get("min")),
        max=_number(spec.get("max")),
        allow_other=spec.get("allow_other") is True,
        description=description if isinstance(description, str) else None,
        line=line,
    )


def _transitions(raw: Any, line: int, problems: list[ConfigProblem], type_name: str) -> list[tuple[str, str, str]]:
    """A workflow's transitions: `"from -> to": why` keys, or `{from, to, why}` items; any other
    form is left out, and said."""
    transitions = []
    where = f"type '{type_name}': workflow transition"
    if isinstance(raw, dict):
        for key, why in raw.items():
            parts = str(key).split("->")
            if len(parts) == 2:  # noqa: PLR2004 - from and to
                transitions.append((parts[0].strip(), parts[1].strip(), str(why) if why is not None else ""))
            else:
                problems.append(
                    ConfigProblem(line_of(raw, key, line), f"{where} '{key}' is not `from -> to`: left out")
                )
    elif isinstance(raw, list):
        for n, item in enumerate(raw):
            if isinstance(item, dict) and "from" in item and "to" in item:
                transitions.append((str(item["from"]), str(item["to"]), str(item.get("why", ""))))
            else:
                message = f"{where} {item!r} needs both `from` and `to` (or a mapping of `from -> to: why`): left out"
                problems.append(ConfigProblem(line_of(raw, n, line), message))
    elif raw is not None:
        problems.append(ConfigProblem(line, f"{where}s must be a mapping or a list, got {yaml_kind(raw)}: left out"))
    return transitions


def _workflow(value: Any, line: int, problems: list[ConfigProblem], type_name: str) -> Workflow | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        problems.append(ConfigProblem(line, f"type '{type_name}': workflow must be a mapping"))
        return None
    states = _names(
        value.get("states"), f"type '{type_name}': workflow states", line_of(value, "states", line), problems
    )
    transitions = _transitions(value.get("transitions"), line_of(value, "transitions", line), problems, type_name)
    return Workflow(states=states, transitions=transitions, line=line)


def _text_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _type_fields(ts: TypeSchema, spec: dict[Any, Any], line: int, problems: list[ConfigProblem]) -> None:
    fields = spec.get("fields")
    if "fields" in spec:
        ts.fields = {}
    if isinstance(fields, dict):
        for fname, fspec in fields.items():
            ts.fields[str(fname)] = _field(str(fname), fspec, line_of(fields, fname, line), problems, ts.name)
    elif fields is not None:
        problems.append(
            ConfigProblem(
                line_of(spec, "fields", line), f"type '{ts.name}': fields must be a mapping of field name to spec"
            )
        )


def _type(
    name: str, spec: Any, line: int, base: TypeSchema | None, problems: list[ConfigProblem], source: str = "kb.yaml"
) -> TypeSchema:
    if spec is None:
        spec = LineDict(line)
    if not isinstance(spec, dict):
        problems.append(ConfigProblem(line, f"type '{name}' must be a mapping"))
        spec = LineDict(line)
    ts = TypeSchema(name=name, source=source, declared=source == "kb.yaml", line=line)
    if source == "kb.yaml" and isinstance(spec, LineDict):
        _misspelt_keys(spec, TYPE_KEYS, f"type '{name}': ", problems)
    if base is not None:  # a core type redeclared: its fields and required are replaced, rubric kept
        ts.rubric = list(base.rubric)
        ts.fields = dict(base.fields)
        ts.required = list(base.required)
    ts.description = _text_or_none(spec.get("description"))
    sub = spec.get("subdirectory")
    ts.subdirectory = str(sub).strip().strip("/") if sub not in (None, "") else None
    if ts.subdirectory is not None and (str(sub).startswith("/") or ".." in ts.subdirectory.split("/")):
        where = printable(str(sub))
        message = f"type '{name}': subdirectory {where!r} is no folder inside the KB: no entry is under it"
        problems.append(ConfigProblem(line_of(spec, "subdirectory", line), message, severity="warning"))
    if "required" in spec:
        ts.required = _names(
            spec.get("required"), f"type '{name}': required", line_of(spec, "required", line), problems
        )
    ts.optional = _names(spec.get("optional"), f"type '{name}': optional", line_of(spec, "optional", line), problems)
    _type_fields(ts, spec, line, problems)
    ts.knows_keys = any(k in spec for k in ("fields", "required", "optional"))
    ts.ai_instructions = _text_or_none(spec.get("ai_instructions"))
    ts.guidelines = spec.get("guidelines")
    ts.goals = spec.get("goals")
    rubric_key = "evaluation_rubric" if "evaluation_rubric" in spec else ("rubric" if source != "kb.yaml" else None)
    if rubric_key and rubric_key in spec:
        ts.rubric = _rubric(spec.get(rubric_key), "type", name, problems, line_of(spec, rubric_key, line), rubric_key)
        for item in ts.rubric:
            item.source = source
    ts.workflow = _workflow(spec.get("workflow"), line_of(spec, "workflow", line), problems, name)
    if "pass_threshold" in spec:
        ts.pass_threshold_line = line_of(spec, "pass_threshold", line)
        ts.pass_threshold = _threshold(spec.get("pass_threshold"), ts.pass_threshold_line, problems)
    return ts


def _validation_rule(raw: dict[Any, Any], line: int, problems: list[ConfigProblem]) -> FieldRule:
    rule = FieldRule(field=str(raw["field"]), line=line)

    def problem(message: str) -> None:
        problems.append(ConfigProblem(line, f"validation rule for '{rule.field}': {message}"))

    given: list[Any] = []  # the bounds the rule takes: min and max, else a well-formed range
    if "range" in raw:
        rng = raw["range"]
        if isinstance(rng, list) and len(rng) == 2:  # noqa: PLR2004 - [min, max]
            given = rng
        else:
            problem("range must be [min, max]")
    if "min" in raw or "max" in raw:
        given = [raw.get("min"), raw.get("max")]
    if given:
        rule.range = (_number(given[0]), _number(given[1]))
        wrong = [b for b in given if b is not None and _number(b) is None]
        if wrong:  # half a range is not the rule its author wrote: none of it is checked
            rule.range = None
            problem(f"a range's bounds must be numbers, got {wrong[0]!r}: the range is not checked")
        elif empty := _empty_range(*rule.range):
            problem(empty)
    if "enum" in raw:
        rule.enum = list(raw["enum"]) if isinstance(raw["enum"], list) else [raw["enum"]]
    if "pattern" in raw:
        pattern = raw["pattern"]
        error = None if isinstance(pattern, (dict, list)) else pattern_error(str(pattern))
        if isinstance(pattern, (dict, list)):
            problem(f"pattern must be a regular expression, got {yaml_kind(pattern)}")
        elif error is not None:
            problem(f"invalid pattern: {error}")
        else:
            rule.pattern = str(pattern)
    if "format" in raw:
        rule.format = str(raw["format"])
        if rule.format.upper() not in ("ISO8601", "DATE", "DATETIME", "URL"):
            problem(f"unknown format '{rule.format}' (known: ISO8601, date, datetime, url)")
    return rule


def _validation(value: Any, line: int, problems: list[ConfigProblem]) -> tuple[bool, list[FieldRule]]:
    if value is None:
        return False, []
    if not isinstance(value, dict):
        problems.append(ConfigProblem(line, "validation must be a mapping"))
        return False, []
    enforce = value.get("enforce") is True
    raw_rules = value.get("rules")
    if raw_rules is None:
        return enforce, []
    if not isinstance(raw_rules, list):
        problems.append(ConfigProblem(line_of(value, "rules", line), "validation.rules must be a list"))
        return enforce, []
    rules: list[FieldRule] = []
    for i, raw in enumerate(raw_rules):
        rline = line_of(raw_rules, i, line)
        if not isinstance(raw, dict) or not raw.get("field"):
            problems.append(ConfigProblem(rline, "a validation rule must be a mapping with a 'field'"))
            continue
        rules.append(_validation_rule(raw, rline, problems))
    return enforce, rules


@dataclass(slots=True)
class PluginType:
    """An entry type a plugin adds, with the defaults it gives the type."""

    name: str
    defaults: dict[str, Any]
    kb_types: tuple[str, ...] | None  # None: every KB
    source: str  # the plugin package


def default_schema(root: str, plugin_types: Iterable[PluginType] = ()) -> KBSchema:
    """The intent of a KB with no kb.yaml: system intent, core types (and plugin types)."""
    name = printable(os.path.basename(os.path.normpath(root))) or "kb"
    schema = KBSchema(name=name, root=root, kb_yaml=None)
    schema.types = _core_types()
    schema.guidelines = dict(SYSTEM_GUIDELINES)
    add_plugin_types(schema, plugin_types)
    return schema


def add_plugin_types(schema: KBSchema, plugin_types: Iterable[PluginType]) -> None:
    """Types from plugins that apply to the KB's kb_type (SPEC §11); a plugin type that redefines a
    core type is based on it, as a kb.yaml declaration is."""
    for ptype in plugin_types:
        if ptype.kb_types is not None and schema.kb_type not in ptype.kb_types:
            continue
        problems: list[ConfigProblem] = []
        ts = _type(ptype.name, dict(ptype.defaults), 0, schema.types.get(ptype.name), problems, source=ptype.source)
        ts.knows_keys = False  # a plugin's defaults do not make other keys unknown in every KB
        schema.types[ptype.name] = ts
        schema.problems.extend(ConfigProblem(1, f"plugin {ptype.source}: {p.message}") for p in problems)


def load_yaml_file(path: str, root: str | None = None, problems: list[ConfigProblem] | None = None) -> Any:
    """A YAML file's data with line numbers; raises YamlFileError. A file of the KB at ROOT that
    is a symlink to a file outside it is not read, nor one over the default size limit. PROBLEMS,
    when given, gets a warning for each key given twice in a mapping."""
    if root is not None and leads_outside(root, path):
        raise YamlFileError(path, 1, OUTSIDE)
    try:
        data = read_regular_file(path, DEFAULT_LIMITS.max_file_bytes)
    except FileProblem as exc:
        raise YamlFileError(path, 1, f"cannot read: {exc.reason}") from None
    return _load_text(decode_yaml_bytes(data, path), path, problems)


def _load_text(text: str, path: str, problems: list[ConfigProblem] | None) -> Any:
    repeated: list[RepeatedKey] = []
    data = load_text(text, path, repeated=repeated)
    if problems is not None:
        problems.extend(
            ConfigProblem(r.line, printable(r.message), path=path, severity="warning", discriminator=f"{r.key}#{n}")
            for n, r in enumerate(repeated, 1)
        )
    return data


def _kb_settings(schema: KBSchema, data: LineDict, problems: list[ConfigProblem]) -> None:
    name = data.get("name")
    if isinstance(name, str) and name.strip() and printable(name) == name:
        schema.name = name.strip()
    elif isinstance(name, str) and name.strip():
        problems.append(
            ConfigProblem(
                data.line_of("name"), f"name holds control characters; using the directory name '{schema.name}'"
            )
        )
    elif name not in (None, ""):
        problems.append(
            ConfigProblem(
                data.line_of("name"), f"name must be a string, got {name!r}; using the directory name '{schema.name}'"
            )
        )
    schema.description = _text_or_none(data.get("description"))
    schema.kb_type = str(data["kb_type"]) if data.get("kb_type") is not None else None
    guidelines = data.get("guidelines")
    if isinstance(guidelines, dict):
        schema.guidelines.update({str(k): v for k, v in guidelines.items()})
    elif guidelines is not None:
        problems.append(ConfigProblem(data.line_of("guidelines"), "guidelines must be a mapping"))
    goals = data.get("goals")
    if isinstance(goals, dict):
        schema.goals = dict(goals)
    elif goals is not None:
        problems.append(ConfigProblem(data.line_of("goals"), "goals must be a mapping"))
    if data.get("pass_threshold") is not None:
        schema.pass_threshold_line = data.line_of("pass_threshold")
        schema.pass_threshold = _threshold(data["pass_threshold"], schema.pass_threshold_line, problems)


_PERCENT = 100
_LEAST_PERCENT = 2  # pass_threshold: 1.5 is no percentage, 80 likely is


def _threshold(value: Any, line: int, problems: list[ConfigProblem]) -> float | None:
    if _number(value) is None or not 0 <= value <= 1:
        got = repr(value) if isinstance(value, (int, float, str)) else yaml_kind(value)
        meant = (
            f" (a score of {value / _PERCENT:g}?)"
            if _number(value) is not None and _LEAST_PERCENT <= value <= _PERCENT
            else ""
        )
        problems.append(ConfigProblem(line, f"pass_threshold must be a number from 0 to 1, got {got}{meant}"))
        return None
    return float(value)


def load_kb_schema(root: str, plugin_types: Iterable[PluginType] = ()) -> KBSchema:
    """Load ROOT/kb.yaml. Raises YamlFileError when it is not valid YAML or not a mapping."""
    path = os.path.join(root, "kb.yaml")
    read: list[ConfigProblem] = []
    return _schema_of(load_yaml_file(path, root, read), root, path, plugin_types, read)


def schema_from_text(text: str, path: str, plugin_types: Iterable[PluginType] = ()) -> KBSchema:
    """The schema the kb.yaml TEXT at PATH describes. Raises YamlFileError as load_kb_schema does."""
    read: list[ConfigProblem] = []
    data = _load_text(text.removeprefix("\ufeff"), path, read)
    return _schema_of(data, os.path.dirname(os.path.abspath(path)), path, plugin_types, read)


# The keys kblint reads at the top of kb.yaml and in a type; others (Pyrite's `display`,
# `relationship_types`, ...) are left alone, but one a letter or two away from these is a typo.
KB_KEYS = (
    "name",
    "description",
    "kb_type",
    "guidelines",
    "goals",
    "evaluation_rubric",
    "validation",
    "types",
    "pass_threshold",
)
TYPE_KEYS = (
    "description",
    "subdirectory",
    "required",
    "optional",
    "fields",
    "ai_instructions",
    "guidelines",
    "goals",
    "evaluation_rubric",
    "workflow",
    "pass_threshold",
)


def _misspelt_keys(spec: LineDict, known: tuple[str, ...], where: str, problems: list[ConfigProblem]) -> None:
    """A config error for each key of SPEC that is not one of KNOWN but close to one: the value is
    ignored, and a misspelt `required` or `validation` would leave its rules unchecked unsaid."""
    for key in spec:
        if isinstance(key, str) and key not in known:
            near = difflib.get_close_matches(key, known, n=1, cutoff=0.85)
            if near:
                message = f"{where}unknown key '{key}' (did you mean '{near[0]}'?): left out"
                problems.append(ConfigProblem(spec.line_of(key), message, severity="warning"))


def _schema_of(
    data: Any, root: str, path: str, plugin_types: Iterable[PluginType], read: list[ConfigProblem]
) -> KBSchema:
    """The schema kb.yaml's DATA describes; READ: what reading the file found (keys given twice)."""
    if data is None:
        data = LineDict(1)
    if not isinstance(data, LineDict):
        raise YamlFileError(path, getattr(data, "line", 1), "kb.yaml must be a mapping of keys to values")
    schema = default_schema(root)
    schema.kb_yaml = path
    schema.raw = data
    problems = schema.problems
    problems.extend(read)
    _kb_settings(schema, data, problems)
    _misspelt_keys(data, KB_KEYS, "", problems)
    schema.rubric = _rubric(data.get("evaluation_rubric"), "kb", None, problems, data.line_of("evaluation_rubric"))
    schema.enforce, schema.rules = _validation(data.get("validation"), data.line_of("validation"), problems)
    add_plugin_types(schema, plugin_types)
    types = data.get("types")
    if isinstance(types, dict):
        for tname, spec in types.items():
            line = line_of(types, tname, 1)
            if tname is None or isinstance(tname, bool) or not str(tname).strip():  # `~:`, `"":`, `yes:`
                got = "an empty one" if isinstance(tname, str) else yaml_kind(tname)
                problems.append(ConfigProblem(line, f"a type needs a name, got {got}: left out"))
                continue
            schema.types[str(tname)] = _type(str(tname), spec, line, schema.types.get(str(tname)), problems)
    elif types is not None:
        problems.append(ConfigProblem(data.line_of("types"), "types must be a mapping of type name to definition"))
    return schema


@dataclass(slots=True)
class CrossKBLink:
    """One link declared in cross-kb-links.yaml."""

    source: str
    target: str
    target_kb: str | None
    relation: str
    source_line: int  # of `source:`, where an issue about the source points
    target_line: int  # of `target:`, where an issue about the link points


def _cross_link(item: Any, line: int) -> CrossKBLink | None:
    if not isinstance(item, dict) or not item.get("source") or not item.get("target"):
        return None
    kb = item.get("target_kb")
    return CrossKBLink(
        source=str(item["source"]).strip(),
        target=str(item["target"]).strip(),
        target_kb=str(kb).strip() if kb not in (None, "") else None,
        relation=str(item.get("relation") or "related"),
        source_line=line_of(item, "source", line),
        target_line=line_of(item, "target", line),
    )


def load_cross_kb_links(
    root: str, problems: list[ConfigProblem], text: str | None = None
) -> tuple[str | None, list[CrossKBLink]]:
    """Read ROOT/cross-kb-links.yaml if present (TEXT: its text as an editor holds it, saved or
    not): a list, or a mapping with the list under `links`."""
    path = os.path.join(root, "cross-kb-links.yaml")
    if text is None and not os.path.lexists(path):
        return None, []
    try:
        data = (
            load_yaml_file(path, root, problems)
            if text is None
            else _load_text(text.removeprefix("\ufeff"), path, problems)
        )
    except YamlFileError as exc:
        problems.append(ConfigProblem(exc.line, exc.reason, path=path))
        return path, []
    if isinstance(data, dict):
        data = data.get("links", data)  # a mapping without `links` is no list of links either
    if data is None:
        return path, []
    if not isinstance(data, list):
        problems.append(
            ConfigProblem(1, "cross-kb-links.yaml must be a list of links (or hold one under 'links')", path=path)
        )
        return path, []
    links = []
    for i, item in enumerate(data):
        line = line_of(data, i, 1)
        link = _cross_link(item, line)
        if link is None:
            problems.append(ConfigProblem(line, "each link needs 'source' and 'target'", path=path))
        else:
            links.append(link)
    return path, links
