"""`kblint schema`: a KB's intent as JSON, for agents that write entries (SPEC §10).

Everything an agent needs to write an entry that passes: each type's fields, required and
optional keys, instructions, guidelines and goals, and the rubric that applies to the type with
how each item is enforced.
"""

from __future__ import annotations

from typing import Any

from .model.kbschema import COMMON_KEYS, KBSchema, TypeSchema
from .model.plan import Binding, Plan
from .paths import display_path
from .yamlread.lines import json_ready


def _item(b: Binding) -> dict[str, Any]:
    out: dict[str, Any] = {"id": b.id, "text": b.text, "binding": b.kind, "scope": b.scope, "severity": b.severity}
    if b.kind == "checker":
        out["checker"] = b.checker
        out["params"] = json_ready(dict(b.params))
    if b.kind == "policy":
        out["policy"] = b.policy
    if b.kind == "schema" and b.fields:
        out["fields"] = list(b.fields)
    if b.kind == "schema" and b.json_schema is not None:
        out["json_schema"] = b.json_schema  # what the entry's frontmatter must validate against
    if b.graded:
        from .report.coverage import level_dicts

        out["levels"] = level_dicts(b)  # lowest first: aim for the highest
        out["pass_level"] = b.pass_level.id if b.pass_level else None
    if b.weight != 1 or b.required:
        out.update({"weight": b.weight, "required": b.required})
    if b.kind == "judgment":
        out["note"] = "judged by an LLM when one is configured; write to satisfy it"
    if b.kind == "broken":
        out["reason"] = b.reason
    return out


def _type(ts: TypeSchema, plan: Plan) -> dict[str, Any]:
    required = ["title"] + [f for f in ts.required_fields() if f != "title"]
    fields = {}
    for name, spec in ts.fields.items():
        field = {"type": spec.declared_type or "any", "required": name in required}
        if spec.values is not None:
            field["values"] = json_ready(spec.values)
        if spec.min is not None:
            field["min"] = spec.min
        if spec.max is not None:
            field["max"] = spec.max
        if spec.description:
            field["description"] = spec.description
        fields[name] = field
    out = {
        "description": ts.description,
        "source": ts.source,
        "subdirectory": ts.subdirectory,
        "required": required,
        "optional": [k for k in dict.fromkeys(ts.optional + list(ts.fields)) if k not in required],
        "fields": fields,
        "ai_instructions": ts.ai_instructions,
        "guidelines": json_ready(ts.guidelines),
        "goals": json_ready(ts.goals),
        "workflow": {
            "states": ts.workflow.states,
            "transitions": [{"from": a, "to": b, "why": why} for a, b, why in ts.workflow.transitions],
        }
        if ts.workflow
        else None,
        "other_keys_allowed": not ts.knows_keys,
        "rubric": [_item(b) for b in plan.for_type(ts.name)],
    }
    return out


def intent(schema: KBSchema, plan: Plan) -> dict[str, Any]:
    return {
        "kb": {
            "name": schema.name,
            "description": schema.description,
            "kb_type": schema.kb_type,
            "path": display_path(schema.root),
        },
        "guidelines": json_ready(schema.guidelines),
        "goals": json_ready(schema.goals),
        "common_keys": sorted(COMMON_KEYS),
        "entry_format": "markdown with YAML frontmatter between '---' lines; `type` names one of `types`; "
        "links as [[entry-id]] in the body or `links:` in the frontmatter",
        "types": {name: _type(ts, plan) for name, ts in sorted(schema.types.items())},
        "validation_rules": [
            {
                k: v
                for k, v in {
                    "field": r.field,
                    "range": list(r.range) if r.range else None,
                    "enum": json_ready(r.enum),
                    "pattern": r.pattern,
                    "format": r.format,
                }.items()
                if v is not None
            }
            for r in schema.rules
        ],
        "validation_enforce": schema.enforce,
        "pass_threshold": schema.pass_threshold,
    }
