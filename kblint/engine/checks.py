"""Running a type's checker and policy items on one entry: in pass 1 on the entry, after the
graph pass on its facts. Each outcome is scored; each failure is a rubric_violation."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass

from .. import policy
from ..checkers.base import BadResult, CheckContext, EntrySubject, GraphSubject, describe, messages
from ..infra.budget import OverBudget, within_budget
from ..model.facts import EntryFacts
from ..model.issue import Issue
from ..model.levels import Grade, grade
from ..model.plan import Binding
from ..rules import RULES, Site
from ..userpattern import PatternTooSlow
from . import scoring
from .schema_items import run_json_schema


@dataclass(slots=True)
class Subject:
    """One entry as a pass checks it: what checkers receive, what policies measure, and where
    issues go. FIELD_LINE gives the line of a frontmatter field (1 when the pass has no lines)."""

    checked: EntrySubject | GraphSubject  # the Entry (pass 1, plugins' graph checkers), or the facts (graph pass)
    facts: EntryFacts  # where outcomes are scored
    site: Site
    context: CheckContext
    measures: policy.Measures
    field_line: Callable[[str], int]
    previous_status: object = None  # with --base: the entry's status there (policy.NEW, UNCHANGED)
    has_base: bool = False


def run_bindings(bindings: list[Binding], subject: Subject) -> list[Issue]:
    issues: list[Issue] = []
    for b in bindings:
        if b.graded:
            issue = _run_graded(b, subject)
            if issue is not None:
                issues.append(issue)
        elif b.kind == "policy":
            issue = _run_policy(b, subject)
            if issue is not None:
                issues.append(issue)
        elif b.validator is not None:
            issues.extend(run_json_schema(b, subject))
        else:
            issues.extend(_run_checker(b, subject))
    return issues


def _run_checker(b: Binding, subject: Subject) -> list[Issue]:
    checker = b.impl
    if checker is None:  # a bound checker is always resolved
        raise LookupError(f"checker {b.checker!r} is not bound")
    try:
        with within_budget() if checker.source != "core" else contextlib.nullcontext():
            found = messages(checker.func(subject.checked, b.params, subject.context))
    except PatternTooSlow as exc:
        message = f"checker '{b.checker}': {exc}"
        return [RULES["checker_error"].issue(subject.site, message, rubric_item=b.text, checker=b.checker)]
    except OverBudget as exc:
        message = f"checker '{b.checker}' ({checker.source}) {exc}: not checked on this entry"
        return [RULES["checker_error"].issue(subject.site, message, rubric_item=b.text, checker=b.checker)]
    except BadResult as exc:
        message = f"checker '{b.checker}' ({checker.source}) {exc}"
        return [RULES["checker_error"].issue(subject.site, message, rubric_item=b.text, checker=b.checker)]
    except KeyboardInterrupt:
        raise
    # A checker's SystemExit (or another BaseException) would end the run, even with exit code 0
    # and no report: it is a failing checker like any other.
    except BaseException as exc:  # noqa: BLE001 - a failing checker is reported, the run goes on
        message = f"checker '{b.checker}' ({checker.source}) raised {describe(exc)}"
        return [RULES["checker_error"].issue(subject.site, message, rubric_item=b.text, checker=b.checker)]
    scoring.record(subject.facts, b, not found)
    if not found:
        return []
    name = checker.field_for(b.params)
    line = subject.field_line(name) if name else 1
    return [
        RULES["rubric_violation"].issue(
            subject.site,
            message,
            line=line,
            field=name,
            severity=b.severity,
            discriminator=b.id,
            tier="checker",
            rubric_item=b.text,
            checker=b.checker,
            item_id=b.id,
        )
        for message in found
    ]


def _run_policy(b: Binding, subject: Subject) -> Issue | None:
    if b.evaluate is None or b.parsed is None:  # a bound policy is always parsed
        raise LookupError(f"policy {b.policy!r} is not parsed")
    message = b.evaluate(subject.measures, subject.previous_status, subject.has_base)
    if message is None:
        scoring.not_applicable(subject.facts, b)  # a gate that does not apply is no outcome
        return None
    scoring.record(subject.facts, b, not message)
    if not message:
        return None
    name = policy.field_of(b.parsed)
    return RULES["rubric_violation"].issue(
        subject.site,
        message,
        line=subject.field_line(name) if name else 1,
        field=name,
        severity=b.severity,
        discriminator=b.id,
        tier="policy",
        rubric_item=b.text,
        checker="policy",
        policy=b.policy,
        item_id=b.id,
    )


def _run_graded(b: Binding, subject: Subject) -> Issue | None:
    """An item graded by the `when:` policies of its levels: the highest level that holds."""
    required = b.pass_level or b.levels[1]
    graded = grade(b.levels, required, subject.measures, subject.previous_status, subject.has_base)
    if graded is None:
        scoring.not_applicable(subject.facts, b)
        return None
    reached, missed = graded
    scoring.record_level(subject.facts, b, reached)
    result = Grade(reached, required)
    if result.passed:
        return None
    why = f": {missed}" if missed else ""
    return RULES["rubric_violation"].issue(
        subject.site,
        f"Entry '{subject.facts.id}' reached {result.describe()} on '{b.text}'{why}",
        line=subject.field_line(required.field_name) if required.field_name else 1,
        field=required.field_name,
        severity=b.severity,
        discriminator=b.id,
        tier="policy",
        rubric_item=b.text,
        checker="policy",
        policy=required.when,
        item_id=b.id,
    )
