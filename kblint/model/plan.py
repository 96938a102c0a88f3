"""Rubric items → bindings → the enforcement plan (SPEC §4, §5).

The plan is plain data: for each KB, every item of every scope with its binding, and for each
type the ordered list of items that apply to it. `kblint checkers --kb` prints it and the engine
executes it; nothing else decides what runs.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .. import policy
from ..checkers.base import Checker
from ..checkers.registry import Registry, registry, validate_params
from ..policy import Evaluator, Policy
from ..rules.rubric import did_you_mean, policy_typo, rubric_findings
from ..yamlread.lines import json_ready, yaml_kind
from .issue import BINDINGS, Coverage, Issue
from .kbschema import ConfigProblem, KBSchema, RubricItem, TypeSchema, system_rubric
from .levels import Level, LevelsError, read_levels, unordered

ITEM_KEYS = (
    "text",
    "checker",
    "params",
    "covered_by",
    "field",
    "fields",
    "policy",
    "id",
    "severity",
    "weight",
    "applies_to",
    "levels",
    "pass_level",
    "required",
    "json_schema",
)
_SCOPE_RANK = {"system": 0, "kb": 1, "type": 2}

_POLICY_FIRST = ("tags", "links", "outlinks", "inlinks")
_POLICY_SECOND = ("count", "required", ">=", ">", "<=", "<", "==", "!=")
_GATE_RE = re.compile(r"^status\s+(\w[\w-]*|\*)\s*->\s*(\w[\w-]*|\*)")


def is_policy_shaped(text: str) -> bool:
    """SPEC §6: whether a string item is meant as a policy expression (case-sensitive)."""
    tokens = re.sub(r"(->|>=|<=|==|!=|>|<)", r" \1 ", text).split()
    if not tokens:
        return False
    first = tokens[0]
    if first.startswith(("metadata.", "links.", "body.")):
        return True
    if first in _POLICY_FIRST and len(tokens) > 1 and tokens[1] in _POLICY_SECOND:
        return True
    return bool(_GATE_RE.match(text.strip()))


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.casefold()).strip("-")[:80] or "item"


@dataclass(slots=True)
class Binding:
    """One rubric item and how it is enforced."""

    text: str
    kind: str  # one of BINDINGS
    id: str
    scope: str  # "system" | "kb" | "type"
    line: int  # kb.yaml line (0: built in)
    source: str  # "system", "core", "kb.yaml", or a plugin
    type_name: str | None = None
    severity: str = "warning"
    weight: float = 1.0
    applies_to: tuple[str, ...] | None = None
    checker: str | None = None
    params: dict[str, Any] = field(default_factory=dict)
    policy: str | None = None
    fields: tuple[str, ...] = ()
    reason: str | None = None  # why broken
    broken_rule: str = "config_error"  # the rule that reports why it is broken
    mapping: bool = False  # written as a mapping (beats a string item of the same text)
    parsed: Policy | None = None  # the parsed policy expression
    evaluate: Evaluator | None = field(default=None, compare=False, repr=False)
    needs_graph: bool = False  # a checker or policy that runs after the graph pass
    impl: Checker | None = field(default=None, compare=False, repr=False)  # the checker named by `checker`
    levels: tuple[Level, ...] = ()  # a graded item's levels, lowest first (README "Graded rubrics")
    graded: bool = False  # it has levels
    id_given: bool = False  # its id was written in kb.yaml (else it is made from the text)
    pass_level: Level | None = None  # the level an entry needs (graded items)
    required: bool = False  # without an outcome the entry's score is incomplete
    json_schema: dict[str, Any] | None = None  # a JSON Schema criterion on the frontmatter
    validator: Any = field(default=None, compare=False, repr=False)  # json_schema, compiled once

    @property
    def runs(self) -> bool:
        """Whether kblint itself runs this item (a checker, a policy or a JSON Schema; not once it
        is broken, whatever it was bound to before)."""
        return self.kind in ("checker", "policy") or (self.kind == "schema" and self.validator is not None)

    @property
    def measures_whole_entry(self) -> bool:
        """Whether the item, run after the graph pass, also measures the entry itself: a graded
        item whose levels ask both of its links (`links.person`, `inlinks`) and of its frontmatter
        or body (`tags`, `body.words`). The graph pass then reads the entry again."""
        return self.graded and self.needs_graph and any(lv.evaluate and not lv.needs_graph for lv in self.levels)

    @property
    def scored(self) -> bool:
        """Whether the item's outcome on an entry counts in the entry's score: what kblint runs and
        what the judge answers; a schema-coverage claim and a broken item have no outcome."""
        return self.runs or self.kind == "judgment"


@dataclass(slots=True)
class ScopePlan:
    """The rubric items of one scope (system, KB or type) and how each is enforced."""

    scope: str  # "system" | "kb" | "type"
    type_name: str | None
    items: list[Binding]  # the items of this scope that apply somewhere (overridden ones left out)


@dataclass(slots=True)
class Plan:
    """How every rubric item of a KB is enforced, and which items apply to each type."""

    kb_name: str
    scopes: list[ScopePlan]
    by_type: dict[str, list[Binding]]  # type → the merged items that apply to its entries ("" for others)
    findings: list[Issue] = field(default_factory=list)  # what the rubric tier says of the rubric (kb.yaml)
    problems: list[ConfigProblem] = field(default_factory=list)  # kb.yaml's other config_errors (its schema's)
    _parts: dict[tuple[str, str], Any] = field(default_factory=dict, repr=False)  # per-type views, made once

    @property
    def has_required(self) -> bool:
        """Whether any item applying somewhere is `required: true`."""
        found = self._parts.get(("required", ""))
        if found is None:
            found = self._parts[("required", "")] = any(b.required for items in self.by_type.values() for b in items)
        return bool(found)

    def totals(self) -> dict[str, int]:
        totals = dict.fromkeys(BINDINGS, 0)
        for scope in self.scopes:
            for item in scope.items:
                totals[item.kind] += 1
        return totals

    def coverage(self) -> Coverage:
        t = self.totals()
        return Coverage(
            schema=t["schema"], checker=t["checker"], policy=t["policy"], judgment=t["judgment"], broken=t["broken"]
        )

    def broken(self) -> list[Binding]:
        return [item for scope in self.scopes for item in scope.items if item.kind == "broken"]

    def has_errors(self) -> bool:
        """Whether the KB's kb.yaml has a problem of severity error: a broken item, an error of
        the rubric tier, or another config_error that is no warning."""
        return (
            bool(self.broken())
            or any(issue.severity == "error" for issue in self.findings)
            or any(problem.severity in (None, "error") for problem in self.problems)
        )

    def for_type(self, type_name: str) -> list[Binding]:
        return self.by_type.get(type_name) or self.by_type.get("", [])

    def entry_bindings(self, type_name: str) -> list[Binding]:
        """The checker and policy items of a type that run on the entry alone, in pass 1."""
        return self._part("entry", type_name, lambda items: [b for b in items if b.runs and not b.needs_graph])

    def graph_bindings(self, type_name: str) -> list[Binding]:
        """The checker and policy items of a type that run after the graph pass."""
        return self._part("graph", type_name, lambda items: [b for b in items if b.runs and b.needs_graph])

    def graph_needs_whole_entry(self, type_name: str) -> bool:
        """Whether a type's graph items need the whole entry, re-read: a plugin checker that needs
        the graph gets it (SPEC §11; core checkers of the graph read the entry's facts), and so does
        a graded item that measures the entry too."""
        found: bool | None = self._parts.get(("whole", type_name))
        if found is None:
            found = self._parts[("whole", type_name)] = any(
                (b.impl is not None and b.impl.needs_graph and b.impl.source != "core") or b.measures_whole_entry
                for b in self.graph_bindings(type_name)
            )
        return found

    def judgment_bindings(self, type_name: str) -> list[Binding]:
        """The judgment items of a type."""
        return self._part("judgment", type_name, lambda items: [b for b in items if b.kind == "judgment"])

    def _part(self, name: str, type_name: str, make: Callable[[list[Binding]], list[Binding]]) -> list[Binding]:
        found: list[Binding] | None = self._parts.get((name, type_name))
        if found is None:
            found = self._parts[(name, type_name)] = make(self.for_type(type_name))
        return found


def _broken(b: Binding, reason: str) -> Binding:
    b.kind = "broken"
    b.reason = reason
    return b


def bind(item: RubricItem, schema: KBSchema, reg: Registry) -> Binding:
    """The binding of one item, validated; problems make it `broken` with the reason."""
    raw = item.raw
    b = Binding(
        text=item.text,
        kind="judgment",
        id=slug(item.text),
        scope=item.scope,
        line=item.line,
        source=item.source,
        type_name=item.type_name,
        mapping=isinstance(raw, dict),
    )
    if isinstance(raw, str):
        if not raw.strip():
            return _broken(b, "empty rubric item")
        if is_policy_shaped(raw):
            return _bind_policy(b, raw.strip())
        typo = policy_typo(raw.strip())
        if typo is not None:  # meant as a policy: never silently a judgment item
            b.broken_rule = "rubric_policy_typo"
            return _broken(b, typo)
        return b
    if not isinstance(raw, dict):
        return _broken(b, f"a rubric item must be a string or a mapping, got {yaml_kind(raw)}")
    return _bind_mapping(b, raw, schema, reg)


def _bind_mapping(b: Binding, raw: dict[Any, Any], schema: KBSchema, reg: Registry) -> Binding:
    problem = _item_keys_problem(raw) or _common_keys(b, raw, schema) or _form_problem(raw)
    if problem:
        return _broken(b, problem)
    if "levels" in raw:
        return _bind_levels(b, raw)
    if "checker" in raw:
        return _bind_checker(b, raw, reg)
    if "covered_by" in raw:
        return _bind_schema(b, raw)
    if "policy" in raw:
        return _bind_policy(b, raw["policy"].strip())
    if "json_schema" in raw:
        return _bind_json_schema(b, raw["json_schema"])
    return b


def _form_problem(raw: dict[Any, Any]) -> str | None:
    """What is wrong with the way an item binds (checker, covered_by, policy, levels or
    json_schema), if anything."""
    forms = [k for k in ("checker", "covered_by", "policy", "levels", "json_schema") if k in raw]
    if len(forms) > 1:
        return f"an item binds one way only, this one has {' and '.join(forms)}"
    if "pass_level" in raw and "levels" not in raw:
        return "pass_level given without levels"
    if "params" in raw and "checker" not in raw:
        return "params given without a checker"
    if ("field" in raw or "fields" in raw) and forms in ([], ["policy"], ["json_schema"]):
        return "field/fields are for covered_by: schema items"
    if "policy" in raw and (not isinstance(raw["policy"], str) or not raw["policy"].strip()):
        return "policy must be an expression string"
    return None


def _item_keys_problem(raw: dict[Any, Any]) -> str | None:
    unknown = [k for k in raw if k not in ITEM_KEYS]
    if unknown:
        key = str(unknown[0])
        near = difflib.get_close_matches(key, ITEM_KEYS, n=1)
        hint = f" (did you mean '{near[0]}'?)" if near else ""
        return f"unknown key '{key}' in rubric item{hint}; allowed: {', '.join(ITEM_KEYS)}"
    text = raw.get("text")
    if not isinstance(text, str) or not text.strip():
        return "rubric item has no 'text'"
    return None


MAX_WEIGHT = 1_000_000  # of one rubric item


def _wrong_id(ident: object) -> str | None:
    """What is wrong with a rubric item's `id`, if anything: it is a text (or a number) with a character."""
    if isinstance(ident, (dict, list, bool)):
        return f"id must be a non-empty text, got {yaml_kind(ident)}"
    return None if str(ident).strip() else "id must be a non-empty text, got an empty one"


def _common_keys(b: Binding, raw: dict[Any, Any], schema: KBSchema) -> str | None:
    """Read `id`, `severity`, `weight` and `applies_to` into B; what is wrong with them, if anything."""
    if raw.get("id") is not None:
        wrong = _wrong_id(raw["id"])
        if wrong is not None:
            return wrong
        b.id = str(raw["id"])
        b.id_given = True
    severity = raw.get("severity", "warning")
    if severity not in ("error", "warning", "info"):
        return f"severity must be error, warning or info, got {severity!r}"
    b.severity = severity
    weight = raw.get("weight", 1)
    if isinstance(weight, bool) or not isinstance(weight, (int, float)) or not 0 <= weight <= MAX_WEIGHT:
        # beyond it, weights add up to infinity and scores to NaN
        return f"weight must be a number from 0 to {MAX_WEIGHT:,}, got {weight!r}"
    b.weight = float(weight)
    required = raw.get("required", False)
    if not isinstance(required, bool):
        return f"required must be true or false, got {required!r}"
    b.required = required
    applies = raw.get("applies_to")
    if applies is None:
        return None
    if isinstance(applies, str):
        applies = [applies]
    if not isinstance(applies, list) or not all(isinstance(a, str) for a in applies):
        return "applies_to must be a list of type names"
    unknown_types = [a for a in applies if a not in schema.types]
    if unknown_types:
        return f"applies_to names unknown type '{unknown_types[0]}'"
    b.applies_to = tuple(applies)
    return None


def _bind_checker(b: Binding, raw: dict[Any, Any], reg: Registry) -> Binding:
    name = raw.get("checker")
    b.kind = "checker"
    b.checker = str(name)
    checker = reg.get(name) if isinstance(name, str) else None
    if checker is None:
        near = difflib.get_close_matches(str(name), reg.names(), n=1)
        hint = f" (did you mean '{near[0]}'?)" if near else ""
        return _broken(b, f"unknown checker '{name}'{hint}")
    params, problems = validate_params(checker, raw.get("params"))
    if problems:
        return _broken(b, "; ".join(problems))
    b.params = params
    b.needs_graph = checker.needs_graph
    b.impl = checker
    return b


def _bind_schema(b: Binding, raw: dict[Any, Any]) -> Binding:
    if raw["covered_by"] != "schema":
        return _broken(b, f"covered_by must be 'schema', got {raw['covered_by']!r}")
    b.kind = "schema"
    names = []
    if raw.get("field") is not None:
        names.append(raw["field"])
    if raw.get("fields") is not None:
        more = raw["fields"]
        names.extend(more if isinstance(more, list) else [more])
    if not all(isinstance(n, str) for n in names):
        return _broken(b, "field/fields must name fields")
    b.fields = tuple(names)
    return b


def _bind_json_schema(b: Binding, written: Any) -> Binding:
    """A JSON Schema criterion: a schema item that validates the frontmatter (json_schema.py)."""
    from . import json_schema

    b.kind = "schema"
    if not isinstance(written, dict):
        return _broken(b, f"json_schema must be a mapping (a JSON Schema), got {yaml_kind(written)}")
    b.json_schema = json_ready(written)
    try:
        b.validator = json_schema.compile_schema(b.json_schema)
    except json_schema.InvalidSchema as exc:
        return _broken(b, f"json_schema is not a valid JSON Schema: {exc}")
    return b


def _bind_levels(b: Binding, raw: dict[Any, Any]) -> Binding:
    """A graded item: by policies (its levels have `when:`) or by the judge (they have none)."""
    written = raw["levels"]
    deterministic = isinstance(written, list) and any(isinstance(lv, dict) and "when" in lv for lv in written)
    try:
        b.levels, b.pass_level = read_levels(written, raw.get("pass_level"), deterministic)
        b.graded = True
    except LevelsError as exc:
        return _broken(b, str(exc))
    wrong = unordered(b.levels)
    if wrong is not None:
        b.broken_rule = "rubric_levels_unordered"
        low, high = wrong
        return _broken(b, f"levels go down: '{high.id}' ({high.score:g}) comes after '{low.id}' ({low.score:g})")
    if deterministic:
        b.kind = "policy"
        b.needs_graph = any(level.needs_graph for level in b.levels)
    return b


def _bind_policy(b: Binding, expression: str) -> Binding:
    b.kind = "policy"
    b.policy = expression
    try:
        b.parsed = policy.parse(expression)
    except policy.PolicyError as exc:
        return _broken(b, f"policy does not parse{did_you_mean(expression)}: {exc.render()}")
    b.evaluate = policy.evaluator(b.parsed)
    b.needs_graph = policy.needs_graph(b.parsed)
    return b


def _stale_schema_claim(b: Binding, schema: KBSchema, types: list[str]) -> str | None:
    for type_name in types:
        ts = schema.types.get(type_name)
        if ts is None:
            continue
        for name in b.fields:
            if name not in _required(ts):
                why = f"covered_by: schema names field '{name}', which is not required for type '{type_name}'"
                return why + _applies_to_hint(b, schema)
    return None


def _required(ts: TypeSchema) -> set[str]:
    return set(ts.required_fields()) | ({"title"} if "title" in ts.required else set())


def _applies_to_hint(b: Binding, schema: KBSchema) -> str:
    """For a KB item that applies to every type: the types it could be restricted to."""
    if b.scope != "kb" or b.applies_to is not None:
        return ""
    requiring = [name for name in _kb_types(schema) if set(b.fields) <= _required(schema.types[name])]
    return f"; restrict the item with `applies_to: [{', '.join(requiring)}]`" if requiring else ""


def _merge(items: list[Binding]) -> list[Binding]:
    """Items with the same text merge: a mapping beats a string; type beats KB beats system."""
    order: list[str] = []
    winner: dict[str, Binding] = {}
    for item in items:
        current = winner.get(item.text)
        if current is None:
            order.append(item.text)
            winner[item.text] = item
        elif _precedence(item) >= _precedence(current):
            winner[item.text] = item
    return [winner[text] for text in order]


def _precedence(b: Binding) -> tuple[bool, int]:
    return (b.mapping, _SCOPE_RANK[b.scope])


def _kb_types(schema: KBSchema) -> list[str]:
    """The types an unrestricted KB-level schema claim is about: the KB's own (declared) types, not
    every core type; every type when it declares none."""
    return sorted(n for n, t in schema.types.items() if t.declared) or sorted(schema.types)


def _check_schema_claims(
    schema: KBSchema, system: list[Binding], kb_items: list[Binding], type_items: dict[str, list[Binding]]
) -> None:
    """Stale covered_by claims, checked against the types each item applies to."""
    for b in kb_items + system:
        if b.kind == "schema" and b.fields:
            targets = list(b.applies_to) if b.applies_to else _kb_types(schema)
            reason = _stale_schema_claim(b, schema, targets)
            if reason:
                _broken(b, reason)
    for name, items in type_items.items():
        for b in items:
            if b.kind == "schema" and b.fields:
                reason = _stale_schema_claim(b, schema, [name])
                if reason:
                    _broken(b, reason)


def _check_unique_ids(kb_items: list[Binding], type_items: dict[str, list[Binding]]) -> None:
    """An id names one item of the KB: an id written twice on different texts is a duplicate; an id
    made from a text (two texts that differ only in case or punctuation) gets a number instead."""
    items = kb_items + [b for items in type_items.values() for b in items]
    seen: dict[str, Binding] = {}
    for b in (b for b in items if b.id_given):
        first = seen.setdefault(b.id, b)
        if first is not b and first.text != b.text:
            _broken(b, f"duplicate item id '{b.id}' (also used at kb.yaml line {first.line})")
    for b in (b for b in items if not b.id_given):
        first = seen.setdefault(b.id, b)
        if first is not b and first.text != b.text:
            n = 2
            while f"{b.id}-{n}" in seen:
                n += 1
            b.id = f"{b.id}-{n}"
            seen[b.id] = b


def build_plan(schema: KBSchema, reg: Registry | None = None) -> Plan:
    reg = reg or registry()
    system = [bind(item, schema, reg) for item in system_rubric()]
    kb_items = [bind(item, schema, reg) for item in schema.rubric]
    type_items = {name: [bind(item, schema, reg) for item in ts.rubric] for name, ts in sorted(schema.types.items())}
    _check_schema_claims(schema, system, kb_items, type_items)
    _check_unique_ids(kb_items, type_items)

    by_type: dict[str, list[Binding]] = {}
    used: set[int] = set()
    for name in sorted(schema.types):
        applicable = (
            system + type_items.get(name, []) + [b for b in kb_items if b.applies_to is None or name in b.applies_to]
        )
        by_type[name] = _merge(applicable)
        used.update(id(b) for b in by_type[name])
    # entries of undeclared types get system and KB-wide items
    by_type[""] = _merge(system + [b for b in kb_items if b.applies_to is None])
    used.update(id(b) for b in by_type[""])

    scopes = [
        ScopePlan("system", None, [b for b in system if id(b) in used]),
        ScopePlan("kb", None, [b for b in kb_items if id(b) in used or b.kind == "broken"]),
    ]
    for name, items in type_items.items():
        if items:
            scopes.append(ScopePlan("type", name, [b for b in items if id(b) in used or b.kind == "broken"]))
    unscored = [_unscored(b) for b in kb_items + [b for items in type_items.values() for b in items]]
    problems = list(schema.problems) + [p for p in unscored if p is not None]
    plan = Plan(kb_name=schema.name, scopes=scopes, by_type=by_type, problems=problems)
    plan.findings = rubric_findings(schema, plan)
    return plan


def _unscored(b: Binding) -> ConfigProblem | None:
    """A warning for `weight` or `required` on an item that has no outcome to score (`covered_by:
    schema`): they would change nothing."""
    written = [key for key, given in (("weight", b.weight != 1), ("required", b.required)) if given]
    if b.kind != "schema" or b.validator is not None or not written:
        return None
    keys = " and ".join(written)
    verb = "change" if len(written) > 1 else "changes"
    message = f"rubric item {b.text!r}: {keys} {verb} nothing on a covered_by: schema item, which is not scored"
    return ConfigProblem(max(b.line, 1), message, severity="warning", discriminator=f"{b.id}:{keys}")
