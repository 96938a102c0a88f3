"""The SARIF 2.1.0 report (SPEC §9): one run, a rule for every rule and rule/checker that fired.

A result's file is a URI relative to `%SRCROOT%`, the top of the git work tree that holds the
linted KBs (the current directory when they are in none), which the run's `originalUriBaseIds`
gives as an absolute file URI: code scanning expects paths from the repository's root, wherever
kblint ran. A file outside that directory has an absolute file URI.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

from .. import __version__
from ..infra.git import work_tree
from ..model.issue import Issue, Report
from ..model.json_schema import JSON_SCHEMA
from ..paths import relative_to
from ..rules import RULES
from . import issue_url

SCHEMA_URI = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
FINGERPRINT_KEY = "kblint/v1"
LEVELS = {"error": "error", "warning": "warning", "info": "note"}
SRCROOT = "%SRCROOT%"

# Result properties copied from the issue when set (SPEC §9 json keys).
_PROPERTIES = (
    "kb_name",
    "entry_id",
    "tier",
    "field",
    "rubric_item",
    "policy",
    "confidence",
    "evaluator",
    "cached",
    "evidence",
)


def rule_id(issue: Issue) -> str:
    """The rule, with `/CHECKER` appended when the issue has a checker (`rubric_violation/has_tags`)."""
    return f"{issue.rule}/{issue.checker}" if issue.checker else issue.rule


def _first_paragraph(text: str) -> str:
    return " ".join(text.strip().split("\n\n", 1)[0].split())


def _checker_texts(rule: str, checker: str) -> tuple[str, str]:
    """(short description, full help) of a rule/checker pair."""
    base = RULES[rule].summary if rule in RULES else rule
    if checker == "policy":
        from ..explain import policy_doc

        doc = policy_doc()
        body = doc.split("\n\n", 1)[1] if "\n\n" in doc else doc
        return (
            "A rubric item bound to a policy expression fails.",
            f"{base}\n\nThe item is checked by a policy expression (kblint explain policy).\n\n{body}",
        )
    if checker == JSON_SCHEMA:
        from ..explain import json_schema_doc

        body = json_schema_doc().split("\n\n", 1)[1]
        return ("A rubric item's JSON Schema does not validate the entry's frontmatter.", f"{base}\n\n{body}")
    from ..checkers.registry import registry

    found = registry().get(checker)
    if found is None or not found.doc:
        return (f"{base} (checker '{checker}')", f"{base}\n\nChecker '{checker}'.")
    short = found.description or f"Checker '{checker}'"
    return (short, f"{base}\n\nChecker '{checker}' ({found.source}): {found.doc}")


def _help(rule: str, checker: str | None) -> str:
    """How to fix an issue of RULE, and where it (or the CHECKER behind it) is documented."""
    from ..rules.docs import RULE_DOCS

    name = checker or rule
    doc = RULE_DOCS.get(rule)
    fix = f"{doc.fix}\n\n" if doc is not None else ""
    return f"{fix}Documentation: `kblint explain {name}`, {issue_url(rule, checker)}"


def rule_descriptor(rid: str, sample: Issue) -> dict[str, Any]:
    rule = RULES.get(sample.rule)
    summary = rule.summary if rule else sample.rule
    if sample.checker:
        short, full = _checker_texts(sample.rule, sample.checker)
    else:
        short, full = _first_paragraph(summary), summary
    tier = rule.tier if rule else sample.tier
    severity = rule.severity if rule else sample.severity
    return {
        "id": rid,
        "shortDescription": {"text": short},
        "fullDescription": {"text": full},
        "helpUri": issue_url(sample.rule, sample.checker),  # the section docs/rules.md has: as JSON's url
        "help": {"text": _help(sample.rule, sample.checker)},
        "defaultConfiguration": {"level": LEVELS.get(severity, "warning")},
        "properties": {"tags": ["kblint", tier]},
    }


def _file_uri(path: str) -> str:
    """The absolute file URI of PATH; its bytes are percent-encoded, so a name that is not UTF-8
    keeps every byte."""
    if os.sep != "/":
        return Path(path).as_uri()
    return "file://" + quote(os.fsencode(path), safe="/-._~!$&'()*+,;=@")


@dataclass(frozen=True, slots=True)
class Base:
    """The directory `%SRCROOT%` stands for, and what it is."""

    root: str  # absolute
    in_git: bool

    def description(self) -> str:
        if self.in_git:
            return "The root of the git repository that holds the linted files."
        return "The directory kblint ran in: the linted files are in no git repository."

    def as_location(self) -> dict[str, Any]:
        """The base's entry of `originalUriBaseIds`: an absolute URI ending with `/`."""
        return {"uri": _file_uri(self.root.rstrip(os.sep) + os.sep), "description": {"text": self.description()}}


def find_base(report: Report) -> Base:
    """The top of the git work tree holding the report's (first) KB, else the current directory.
    One walk up the directories per report: git is not run."""
    cwd = os.getcwd()
    top = work_tree(report.kbs[0].root if report.kbs else cwd)
    return Base(top, True) if top is not None else Base(cwd, False)


def _location(root: str, path: str) -> dict[str, str]:
    """The artifactLocation of PATH: relative to ROOT (`%SRCROOT%`) when it is below it."""
    if not path.startswith(root.rstrip(os.sep) + os.sep):
        return {"uri": _file_uri(path)}
    relative = relative_to(path, root)
    return {"uri": quote(os.fsencode(relative), safe="/-._~!$&'()*+,;=@"), "uriBaseId": SRCROOT}


def result(issue: Issue, rule_index: int, report: Report, base: Base) -> dict[str, Any]:
    artifact = _location(base.root, issue.path)
    out = {
        "ruleId": rule_id(issue),
        "ruleIndex": rule_index,
        "level": LEVELS[issue.severity],
        "message": {"text": issue.message or issue.rule},
        "locations": [
            {
                "physicalLocation": {
                    "artifactLocation": artifact,
                    "region": {
                        "startLine": max(int(issue.line or 1), 1),
                        "startColumn": max(int(issue.column or 1), 1),
                    },
                }
            }
        ],
        "partialFingerprints": {FINGERPRINT_KEY: report.fingerprint(issue)},
    }
    props = {}
    for key in _PROPERTIES:
        value = getattr(issue, key)
        if value is not None:
            props[key] = value
    if props:
        out["properties"] = props
    return out


def as_dict(report: Report) -> dict[str, Any]:
    index: dict[str, int] = {}
    samples: dict[str, Issue] = {}
    for issue in report.issues:
        samples.setdefault(rule_id(issue), issue)
    rules: list[dict[str, Any]] = []
    for rid in sorted(samples):
        index[rid] = len(rules)
        rules.append(rule_descriptor(rid, samples[rid]))
    base = find_base(report)
    results = [result(issue, index[rule_id(issue)], report, base) for issue in report.issues]
    problems = report.problems
    invocation: dict[str, Any] = {"executionSuccessful": not problems, "exitCode": report.exit_code}
    if problems:
        invocation["toolExecutionNotifications"] = [{"level": "error", "message": {"text": text}} for text in problems]
    return {
        "$schema": SCHEMA_URI,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {"name": "kblint", "version": __version__, "semanticVersion": __version__, "rules": rules}
                },
                "invocations": [invocation],
                "originalUriBaseIds": {SRCROOT: base.as_location()},
                "columnKind": "unicodeCodePoints",
                "results": results,
            }
        ],
    }


_RESULTS = "\0results\0"  # where the results go in the indented document


def render(report: Report) -> str:
    """The document indented, each result on one line (a report of many results stays readable)."""
    doc = as_dict(report)
    results = doc["runs"][0]["results"]
    doc["runs"][0]["results"] = _RESULTS
    text = json.dumps(doc, indent=2, ensure_ascii=False)
    lines = ",\n".join("        " + json.dumps(r, ensure_ascii=False) for r in results)
    body = "[\n" + lines + "\n      ]" if results else "[]"
    return text.replace(json.dumps(_RESULTS), body, 1) + "\n"
