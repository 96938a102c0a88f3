"""json_schema — rubric items that validate the frontmatter with a JSON Schema

An item `{text, json_schema: {...}}` validates each entry's frontmatter against the schema it
gives, with the `jsonschema` library (Draft 2020-12, or the draft its `$schema` names). The item is
a `schema` item of the plan; it passes on an entry with no validation error, and fails with one
rubric_violation (tier schema, checker json_schema) for each error, at the line of the field:

    notes/harbor.md:5: metadata.sources[2]: 'x' is not a 'uri'

The frontmatter is validated as JSON data: dates that YAML reads (`date: 2025-01-31`) become ISO
text (`"2025-01-31"`, which `format: date` accepts; a date and time without a UTC offset is no
RFC 3339 `date-time`), keys become text, and the `kblint:` key of suppressions is left out. The
frontmatter is called `metadata` in the paths of the messages, as in policies. The errors of an
entry come sorted by path, at most 20 for each item, then one issue that counts the others.

Formats are checked: date, date-time, time, ipv4, ipv6, idn-hostname, uri, uri-reference, regex,
uuid, and email and idn-email (only that the value holds an `@`). Other formats (hostname, iri,
duration, json-pointer, uri-template, ...) are not checked: any value passes them.

Patterns (`pattern`, `patternProperties`) run with the same engine and time budget as the other
patterns of kb.yaml (README "Limits"). A `$ref` names a part of the same schema (`#/$defs/source`);
nothing is fetched from elsewhere, and a `$ref` that cannot be resolved is a checker_error.

An item whose schema is no valid JSON Schema is a config_error at its line, and the item is
`[broken]` in the plan. `kblint schema` gives each item's schema to agents that write entries.

Example

    evaluation_rubric:
      - text: "Sources are URLs"
        json_schema:
          required: [sources]
          properties:
            sources: {type: array, minItems: 1, items: {type: string, format: uri}}
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from typing import Any

from .. import userpattern

JSON_SCHEMA = "json_schema"  # the checker its issues name, for --select, --ignore and suppressions
MAX_ERRORS = 20  # errors reported for one item on one entry
MAX_MESSAGE = 300  # characters of one error's message (one that quotes a whole mapping is cut)
# Parts of a schema with its local $refs written out: `anyOf` of two refs to the level below, 40
# levels deep, is 2**40 parts to try on one value (a schema that refers to itself counts once).
MAX_EXPANDED = 100_000
ROOT = "metadata"  # what the paths call the frontmatter
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")
_DATA_KEYWORDS = ("const", "enum", "examples", "default")  # their values are data, not schemas
_DEFINITIONS = ("$defs", "definitions")  # schemas used only through $ref


class InvalidSchema(Exception):
    """A json_schema that is no valid JSON Schema (or has a pattern kblint will not run)."""


class CannotValidate(Exception):
    """A schema that cannot be applied to an entry (a `$ref` that does not resolve)."""


@dataclass(frozen=True, slots=True)
class SchemaError:
    """One validation error: where in the frontmatter, what is wrong, and which keyword said so."""

    path: tuple[str | int, ...]
    message: str
    keyword: str  # the schema path of the keyword that failed (`properties/sources/items/format`)

    @property
    def json_path(self) -> str:
        return json_path(self.path)


def json_path(path: tuple[str | int, ...] | list[str | int], root: str = ROOT) -> str:
    """`metadata.sources[2]`: keys as `.name` (or `['odd name']`), list items as `[n]`."""
    parts = [root]
    for step in path:
        if isinstance(step, int):
            parts.append(f"[{step}]")
        elif _NAME.fullmatch(step):
            parts.append(f".{step}")
        else:
            parts.append(f"[{step!r}]")
    return "".join(parts)


def compile_schema(schema: dict[str, Any]) -> Any:
    """A validator of SCHEMA (JSON data), checked against its draft's metaschema; InvalidSchema
    says what is wrong and where."""
    from jsonschema import Draft202012Validator, validators
    from jsonschema.exceptions import SchemaError as Invalid

    declared = schema.get("$schema")
    if declared is not None and not isinstance(declared, str):
        raise InvalidSchema(f"$schema must be the URI of a JSON Schema draft, got {declared!r}")
    base = Draft202012Validator if declared is None else validators.validator_for(schema, default=None)
    if base is None:
        raise InvalidSchema(f"$schema {declared!r} is no JSON Schema draft kblint knows (2020-12 is the default)")
    try:
        base.check_schema(schema, format_checker=base.FORMAT_CHECKER)
    except Invalid as exc:
        raise InvalidSchema(f"{json_path(list(exc.path), 'json_schema')}: {_short(exc.message)}") from None
    patterns = list(_patterns(schema, ()))
    for where, pattern in patterns:
        problem = userpattern.pattern_error(pattern)
        if problem is not None:
            raise InvalidSchema(f"{json_path(list(where), 'json_schema')}: invalid pattern {pattern!r}: {problem}")
    try:
        too_large = _expanded_size(schema, schema, {}, set()) > MAX_EXPANDED
    except RecursionError:
        too_large = True  # $refs that lead through thousands of parts
    if too_large:
        raise InvalidSchema(
            f"the schema's $refs expand it to more than {MAX_EXPANDED} parts: validating an entry could take for ever"
        )
    if patterns and _has_key(schema, "unevaluatedProperties"):
        # jsonschema's unevaluatedProperties matches patternProperties itself, with `re` and no time budget
        raise InvalidSchema("unevaluatedProperties cannot be used with patterns: use additionalProperties")
    return _budgeted(base)(schema, format_checker=base.FORMAT_CHECKER, registry=_registry())


@cache
def _registry() -> Any:
    """What a `$ref` may name besides the schema itself: the drafts' metaschemas, which the
    library holds. Any other URI (a file, a web address) is refused, never fetched: kb.yaml is
    untrusted input."""
    from jsonschema_specifications import REGISTRY
    from referencing import Registry

    return REGISTRY.combine(Registry(retrieve=_refuse))  # type: ignore[call-arg]  # an attrs alias mypy misses


def _refuse(uri: str) -> Any:
    from referencing.exceptions import NoSuchResource

    raise NoSuchResource(uri)


def _expanded_size(node: Any, root: Any, sizes: dict[int, int], open_: set[int]) -> int:
    """How many parts NODE has with the local `$ref`s (`#/...`) it holds written out in place:
    what validating one value may walk, whatever the value. SIZES keeps the size of each part
    already counted; a part that refers back to one being counted (OPEN_) counts once."""
    if not isinstance(node, (dict, list)):
        return 1
    if id(node) in sizes:
        return sizes[id(node)]
    if id(node) in open_:
        return 1  # recursion: bounded by the value's own depth
    open_.add(id(node))
    # definitions are walked where a $ref leads to them, not where they are written
    children = [v for k, v in node.items() if k not in _DEFINITIONS] if isinstance(node, dict) else node
    total = 1 + sum(_expanded_size(child, root, sizes, open_) for child in children)
    ref = node.get("$ref") if isinstance(node, dict) else None
    if isinstance(ref, str) and ref.startswith("#"):
        target = _local_target(root, ref)
        if target is not None:
            total += _expanded_size(target, root, sizes, open_)
    open_.discard(id(node))
    sizes[id(node)] = total = min(total, MAX_EXPANDED + 1)
    return total


def _local_target(root: Any, ref: str) -> Any:
    """The part of ROOT a `#/a/b` JSON pointer names, or None."""
    node = root
    for escaped in ref[1:].split("/")[1:] if ref != "#" else []:
        step = escaped.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and step in node:
            node = node[step]
        elif isinstance(node, list) and step.isdigit() and int(step) < len(node):
            node = node[int(step)]
        else:
            return None
    return node


def _has_key(schema: Any, key: str) -> bool:
    """Whether KEY is a keyword somewhere in SCHEMA."""
    if isinstance(schema, list):
        return any(_has_key(item, key) for item in schema)
    if not isinstance(schema, dict):
        return False
    return key in schema or any(_has_key(v, key) for k, v in schema.items() if k not in _DATA_KEYWORDS)


def _patterns(schema: Any, where: tuple[str | int, ...]) -> Iterator[tuple[tuple[str | int, ...], str]]:
    """Every regular expression of SCHEMA (its `pattern` values and `patternProperties` names)."""
    if isinstance(schema, list):
        for n, item in enumerate(schema):
            yield from _patterns(item, (*where, n))
    if not isinstance(schema, dict):
        return
    for key, value in schema.items():
        if key in _DATA_KEYWORDS:
            continue
        if key == "pattern" and isinstance(value, str):
            yield (*where, key), value
        if key == "patternProperties" and isinstance(value, dict):
            yield from (((*where, key), name) for name in value)
        yield from _patterns(value, (*where, key))


def validation_errors(validator: Any, instance: Any) -> list[SchemaError]:
    """The errors of INSTANCE, sorted by path; CannotValidate for a `$ref` that does not resolve.
    PatternTooSlow, or whatever else the library raises, goes to the caller."""
    from referencing.exceptions import Unresolvable

    try:
        found = [
            SchemaError(tuple(e.absolute_path), _short(e.message), "/".join(str(s) for s in e.relative_schema_path))
            for e in validator.iter_errors(instance)
        ]
    except Unresolvable as exc:
        ref = getattr(exc, "ref", None)
        raise CannotValidate(f"$ref {ref!r} does not resolve (nothing is fetched from elsewhere)") from None
    except RecursionError:
        raise CannotValidate("the schema refers to itself without end ($ref)") from None
    found.sort(key=lambda e: ([_step_key(s) for s in e.path], e.keyword, e.message))
    return found


def _step_key(step: str | int) -> tuple[bool, int, str]:
    """List items in their order (`[2]` before `[10]`), keys in alphabetical order."""
    return (True, 0, step) if isinstance(step, str) else (False, step, "")


def _short(message: str) -> str:
    return message if len(message) <= MAX_MESSAGE else message[: MAX_MESSAGE - 1] + "…"


# Patterns run by kblint's engine, under the time budget of kb.yaml patterns: the keywords of
# jsonschema that match patterns, made to call userpattern.search instead of `re.search`.


@cache
def _budgeted(base: Any) -> Any:
    from jsonschema import validators

    keywords = {"pattern": _pattern, "patternProperties": _pattern_properties}
    keywords["additionalProperties"] = _additional_properties
    return validators.extend(base, keywords)


def _pattern(validator: Any, pattern: str, instance: Any, schema: Any) -> Iterator[Any]:
    if validator.is_type(instance, "string") and not userpattern.search(pattern, instance):
        from jsonschema.exceptions import ValidationError

        yield ValidationError(f"{instance!r} does not match {pattern!r}")


def _pattern_properties(validator: Any, patterns: dict[str, Any], instance: Any, schema: Any) -> Iterator[Any]:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in patterns.items():
        for key, value in instance.items():
            if userpattern.search(pattern, key):
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def _additional_properties(validator: Any, allowed: Any, instance: Any, schema: Any) -> Iterator[Any]:
    """jsonschema's `additionalProperties`, with the names `patternProperties` covers found by kblint's engine."""
    if not validator.is_type(instance, "object"):
        return
    from jsonschema.exceptions import ValidationError

    properties = schema.get("properties", {})
    patterns = list(schema.get("patternProperties", {}))
    extras = [
        key
        for key in instance
        if key not in properties and not any(userpattern.search(pattern, key) for pattern in patterns)
    ]
    if validator.is_type(allowed, "object"):
        for key in extras:
            yield from validator.descend(instance[key], allowed, path=key)
    elif not allowed and extras:
        names = ", ".join(repr(key) for key in sorted(extras))
        if patterns:
            verb = "does" if len(extras) == 1 else "do"
            regexes = ", ".join(repr(pattern) for pattern in sorted(patterns))
            yield ValidationError(f"{names} {verb} not match any of the regexes: {regexes}")
        else:
            verb = "was" if len(extras) == 1 else "were"
            yield ValidationError(f"Additional properties are not allowed ({names} {verb} unexpected)")
