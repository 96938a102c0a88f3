"""The coverage report: the plan of each KB as `kblint checkers --kb` prints it.

The text plan shows what kb.yaml says (item texts, checkers and their parameters, policies, level
ids, type names) with its control characters escaped, as every text report shows input text; the
JSON plan carries it as it is.
"""

from __future__ import annotations

import json
from typing import Any

from ..checkers.registry import Registry
from ..model.plan import Binding, Plan, ScopePlan
from ..paths import display_path, printable
from ..policy import split_caret
from ..rules import RULES

NOT_EVALUATED = "not evaluated: no LLM configured"


def judgment_note(evaluator: str | None) -> str:
    return f"evaluated by {evaluator}" if evaluator else NOT_EVALUATED


def _call(b: Binding) -> str:
    args = ", ".join(f"{printable(str(k))}={printable(str(v))}" for k, v in b.params.items())
    return f"{printable(str(b.checker))}({args})"


def _graded(b: Binding) -> str:
    """`graded: fail < pass < excellent, needs pass` for an item with levels."""
    needs = f", needs {printable(b.pass_level.id)}" if b.pass_level is not None else ""
    return f"graded: {' < '.join(printable(level.id) for level in b.levels)}{needs}"


def shown_reason(reason: str) -> str:
    """REASON (why an item is broken) escaped; a policy's caret at its end (PolicyError.render())
    stays on lines of its own, under the escaped policy's character it points at."""
    split = split_caret(reason)
    if split is None:
        return printable(reason)
    before, policy, column = split
    caret = " " * len(printable(policy[:column]))
    return f"{printable(before)}\n    {printable(policy)}\n    {caret}^"


def item_line(b: Binding, evaluator: str | None = None) -> str:
    """The line of item B in the plan, what kb.yaml says escaped (a broken item's reason may end
    in a policy's caret, on lines of their own)."""
    text = printable(b.text)
    if b.kind == "broken":
        return f"[broken] {text} — {shown_reason(b.reason or '')}"
    how = [b.kind, *([_graded(b)] if b.graded else []), *_scoring(b)]
    tag = f"[{', '.join(how)}] {text}"
    if b.kind == "checker":
        return f"{tag} → {_call(b)}"
    if b.kind == "policy" and not b.graded:
        return tag + (f" → {printable(str(b.policy))}" if b.policy != b.text else "")
    if b.kind == "schema":
        fields = f" ({', '.join(printable(f) for f in b.fields)})" if b.fields else ""
        return f"{tag}{fields}" + (" → json_schema" if b.json_schema is not None else "")
    return f"{tag} ({judgment_note(evaluator)})" if b.kind == "judgment" else tag


def _scoring(b: Binding) -> list[str]:
    """What kb.yaml says of item B beside its binding: the types it applies to, its weight, required."""
    applies = [f"applies to {', '.join(printable(t) for t in b.applies_to)}"] if b.applies_to is not None else []
    weight = [f"weight {b.weight:g}"] if b.weight != 1 else []
    return applies + weight + (["required"] if b.required else [])


def _scope_title(scope: ScopePlan) -> str:
    """`system`, `KB` or `type NAME`; a type whose items all come from kblint's core types (a KB
    need not declare them) or from a plugin says so."""
    title = {"system": "system", "kb": "KB"}.get(scope.scope)
    if title is not None:
        return title
    sources = {b.source for b in scope.items}
    origin = " (built-in items)" if sources == {"core"} else ""
    if len(sources) == 1 and not sources & {"core", "kb.yaml", "system"}:
        origin = f" (from {printable(next(iter(sources)))})"
    return f"type {printable(str(scope.type_name))}{origin}"


def rubric_findings(plan: Plan) -> list[dict[str, Any]]:
    """What the rubric tier says of the KB's rubric: its findings, and the items it breaks."""
    broken = [
        {
            "rule": b.broken_rule,
            "severity": RULES[b.broken_rule].severity,
            "line": b.line or None,
            "message": f"rubric item {b.text!r} is not enforced: {b.reason}",
            "rubric_item": b.text,
        }
        for b in plan.broken()
        if RULES[b.broken_rule].tier == "rubric"
    ]
    found = [
        {"rule": i.rule, "severity": i.severity, "line": i.line, "message": i.message, "rubric_item": i.rubric_item}
        for i in plan.findings
    ]
    return sorted(broken + found, key=lambda f: (f["line"] or 0, f["rule"]))


def config_problems(plan: Plan) -> list[dict[str, Any]]:
    """The config_errors of kb.yaml that are no rubric item's (a pass_threshold out of range, a
    rubric that is no list, a misspelt key), as `validate` reports them."""
    return [
        {
            "rule": "config_error",
            "severity": p.severity or RULES["config_error"].severity,
            "line": p.line or None,
            "message": p.message,
            **({"path": display_path(p.path)} if p.path else {}),
        }
        for p in sorted(plan.problems, key=lambda p: (p.path or "", p.line))  # in the order of the file
    ]


def _findings_lines(plan: Plan) -> list[str]:
    lines = []
    for title, findings in (("kb.yaml problems", config_problems(plan)), ("rubric findings", rubric_findings(plan))):
        lines += [f"  {title}:"] if findings else []
        for f in findings:
            where = f"{f.get('path', 'kb.yaml')}:{f['line']}: " if f["line"] else ""
            message = shown_reason(f["message"]).split("\n", 1)[0]  # without a policy's caret
            lines.append(f"    {where}{f['severity']} {f['rule']} {message}")
    return lines


def render_text(plans: list[tuple[Plan, str]], evaluator: str | None = None) -> str:
    lines: list[str] = []
    for plan, root in plans:
        lines.append(f"{printable(plan.kb_name)} ({display_path(root)})")
        for scope in plan.scopes:
            if not scope.items:
                continue
            lines.append(f"  {_scope_title(scope)}:")
            for b in scope.items:
                where = f"kb.yaml:{b.line}: " if b.kind == "broken" and b.line else ""
                lines.append(f"    {where}{item_line(b, evaluator)}")
        lines += _findings_lines(plan)
        t = plan.totals()
        lines.append(
            f"  totals: {t['checker']} checker, {t['policy']} policy, {t['schema']} schema, "
            f"{t['judgment']} judgment ({judgment_note(evaluator)}), {t['broken']} broken"
        )
        lines.append("")
    return "\n".join(lines)


def item_dict(b: Binding) -> dict[str, Any]:
    return {
        "id": b.id,
        "text": b.text,
        "binding": b.kind,
        "checker": b.checker,
        "params": dict(b.params) if b.checker else None,
        "policy": b.policy,
        "json_schema": b.json_schema,
        "reason": b.reason,
        "line": b.line or None,
        **({"levels": level_dicts(b), "pass_level": b.pass_level.id if b.pass_level else None} if b.graded else {}),
        **({"applies_to": list(b.applies_to)} if b.applies_to is not None else {}),
        **({"weight": b.weight} if b.weight != 1 else {}),
        **({"required": True} if b.required else {}),
    }


def level_dicts(b: Binding) -> list[dict[str, Any]]:
    """A graded item's levels, lowest first, as the JSON plan and `kblint schema` give them."""
    return [
        {
            "id": level.id,
            "score": level.score,
            **({"label": level.label} if level.label else {}),
            **({"description": level.description} if level.description else {}),
            **({"indicators": list(level.indicators)} if level.indicators else {}),
            **({"when": level.when} if level.when else {}),
        }
        for level in b.levels
    ]


def checker_dicts(reg: Registry) -> list[dict[str, Any]]:
    return [
        {
            "name": c.name,
            "source": c.source,
            "params": [
                {"name": p.name, "type": p.kind, "required": p.required, "default": p.default} for p in c.params
            ],
            "description": c.description,
        }
        for c in (reg.checkers[n] for n in reg.names())
    ]


def plugin_dict(reg: Registry) -> dict[str, Any]:
    plugins = reg.plugins
    if plugins is None:
        return {"loaded": [], "problems": []}
    return {
        "loaded": [
            {"name": p.name, "package": p.package, "version": p.version, "checkers": p.checkers, "types": p.types}
            for p in plugins.loaded
        ],
        "problems": [{"package": p.package, "message": p.message} for p in plugins.problems],
    }


def render_json(reg: Registry, plans: list[tuple[Plan, str]], evaluator: str | None = None) -> str:
    data: dict[str, Any] = {"checkers": checker_dicts(reg), "plugins": plugin_dict(reg), "kbs": []}
    for plan, root in plans:
        data["kbs"].append(
            {
                "name": plan.kb_name,
                "path": display_path(root),
                "scopes": [
                    {"scope": s.scope, "type": s.type_name, "items": [item_dict(b) for b in s.items]}
                    for s in plan.scopes
                ],
                "totals": {**plan.totals(), "judgment_evaluated": evaluator is not None},
                "evaluator": evaluator,
                "rubric_findings": rubric_findings(plan),
                "config_problems": config_problems(plan),
            }
        )
    return json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n"


def render_checkers(reg: Registry) -> str:
    rows = []
    for name in reg.names():
        c = reg.checkers[name]
        rows.append((name, c.source, c.signature() or "—", c.description))
    w0 = max(len(r[0]) for r in rows)
    w1 = max(len(r[1]) for r in rows)
    w2 = max(len(r[2]) for r in rows)
    lines = [f"{a:<{w0}}  {b:<{w1}}  {c:<{w2}}  {d}" for a, b, c, d in rows]
    plugins = reg.plugins
    if plugins is not None and (plugins.loaded or plugins.problems):
        lines.append("")
        lines.append("plugins:")
        for p in plugins.loaded:
            what = ", ".join(p.checkers + [f"type {t}" for t in p.types]) or "nothing"
            lines.append(f"  {p.package} {p.version} ({p.name}): {what}")
        for problem in plugins.problems:
            lines.append(f"  problem: {printable(str(problem))}")
    return "\n".join(lines) + "\n"
