"""config_error: problems in kb.yaml (and the files beside it) that kblint can point at, rubric
items that are not enforced because they are broken (SPEC §5), and what the rubric tier finds in the
rubric itself (kblint.rules.rubric)."""

from __future__ import annotations

from ..model.issue import Issue
from ..model.kbschema import KBSchema
from ..model.plan import Plan
from ..policy import caret_in_one_line
from . import RULES, Site


def _from(source: str) -> str:
    """Where a rubric item comes from when kb.yaml does not hold it: a plugin's type."""
    return "" if source in ("kb.yaml", "system", "core") else f" (from the plugin {source})"


def config_errors(schema: KBSchema, plan: Plan) -> list[Issue]:
    rule = RULES["config_error"]
    here = schema.kb_yaml or schema.root
    issues = [
        RULES[b.broken_rule].issue(
            Site(schema.name, here),
            caret_in_one_line(f"rubric item {b.text!r}{_from(b.source)} is not enforced: {b.reason}"),
            line=max(b.line, 1),
            discriminator=b.id,
            rubric_item=b.text,
        )
        for b in plan.broken()
    ]
    issues.extend(
        rule.issue(
            Site(schema.name, problem.path or here),
            problem.message,
            line=problem.line,
            field=problem.field,
            discriminator=problem.message if problem.discriminator is None else problem.discriminator,
            severity=problem.severity,
        )
        for problem in plan.problems
    )
    issues.extend(plan.findings)  # the rubric tier's findings on the rubric itself
    return issues
