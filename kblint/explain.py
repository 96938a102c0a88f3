"""`kblint explain [NAME]`: the documentation of a rule, a checker, a tier or the policy grammar, and
with no name the list of them all; `rules_markdown()` is the same documentation as docs/rules.md."""

from __future__ import annotations

import difflib
import inspect
import re
import textwrap

from .checkers.base import Checker
from .checkers.registry import registry
from .model.json_schema import JSON_SCHEMA
from .paths import printable
from .rules import RULES, TIERS, Rule, doc_url
from .rules.docs import RULE_DOCS, TIER_DOCS, Example, suppression_forms, tier_rules
from .rules.fixable import fix_note

WIDTH = 88


class UnknownName(Exception):
    def __init__(self, name: str, suggestions: list[str]):
        self.name = name
        self.suggestions = suggestions
        hint = f"; did you mean {', '.join(repr(s) for s in suggestions)}?" if suggestions else ""
        shown = printable(name if len(name) <= _SHOWN_NAME else name[:_SHOWN_NAME] + "…")  # a name may be anything
        super().__init__(f"no rule, checker, tier or topic named '{shown}'{hint}")


_SHOWN_NAME = 80  # characters of an unknown name that a message repeats


def policy_doc() -> str:
    from . import policy

    return "policy — deterministic rubric items\n\n" + inspect.cleandoc(policy.__doc__ or "")


def policy_examples() -> list[str]:
    """The example expressions listed in the policy documentation."""
    doc = policy_doc()
    section = doc.split("Examples", 1)[1].split("\n\n", 2)[1]
    return [line.strip() for line in section.splitlines() if line.strip()]


def json_schema_doc() -> str:
    """The page of JSON Schema rubric items (the docstring of kblint/model/json_schema.py)."""
    from .model import json_schema

    return inspect.cleandoc(json_schema.__doc__ or "")


LEVELS = "levels"


def levels_doc() -> str:
    """The page of graded rubric items: their levels, and how entries are scored."""
    from .engine import scoring
    from .model import levels

    return (
        "levels — graded rubric items\n\n"
        + inspect.cleandoc(levels.__doc__ or "")
        + "\n\nScores\n\n"
        + inspect.cleandoc(scoring.__doc__ or "")
        + "\n"
    )


def explain(name: str | None) -> str:
    """The page of NAME (a rule, checker, tier, `policy`, `levels` or `json_schema`), or the list of them all."""
    if name is None:
        return overview()
    if name == LEVELS:
        return levels_doc()
    if name == "policy":
        return policy_doc() + "\n\n" + tier_page("policy", heading=False)
    if name == JSON_SCHEMA:
        return json_schema_doc() + "\n\n" + f"Documentation: {doc_url(JSON_SCHEMA)}\n"
    if name in RULES:
        return rule_page(RULES[name])
    if name in TIERS:
        return tier_page(name)
    checker = registry().get(name)
    if checker is not None:
        return checker_page(checker)
    known = {k.casefold(): k for k in sorted(set(RULES) | set(registry().names()) | set(TIERS) | {JSON_SCHEMA, LEVELS})}
    close = difflib.get_close_matches(name.casefold(), list(known), n=3, cutoff=0.5)  # BROKEN_LINK: broken_link
    raise UnknownName(name, [known[k] for k in close])


def _columns(rows: list[tuple[str, ...]], indent: str = "  ") -> list[str]:
    """ROWS as lines of aligned columns (the last one is not padded)."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)] if rows else []
    return [indent + "  ".join([*(c.ljust(w) for c, w in zip(row, widths, strict=False)), row[-1]]) for row in rows]


def _rule_rows(names: list[str], tier: str | None = None) -> list[tuple[str, ...]]:
    return [(n, tier or RULES[n].tier, RULES[n].severity, RULES[n].summary) for n in names]


def overview() -> str:
    """Every rule by tier (aligned as one table), every checker, and the topics."""
    groups = [(tier, tier_rules(tier)) for tier in TIERS if tier_rules(tier)]
    aligned = iter(_columns([row for tier, names in groups for row in _rule_rows(names, tier)]))
    lines = ["Rules (kblint explain RULE, kblint explain TIER):", ""]
    for tier, names in groups:
        lines += [f"{tier}:", *(next(aligned) for _ in names), ""]
    reg = registry()
    checkers = [reg.checkers[n] for n in reg.names()]
    lines += ["Checkers, which emit rubric_violation (kblint explain CHECKER):", ""]
    lines += _columns([(c.name, c.source, c.description) for c in checkers])
    lines += ["", "Topics:", ""]
    lines += _columns(
        [
            ("policy", "the grammar of policy rubric items, and the policy tier"),
            (JSON_SCHEMA, "rubric items that validate the frontmatter with a JSON Schema"),
            (LEVELS, "graded rubric items: quality levels, pass_level, weights, required items, scores"),
        ]
    )
    return "\n".join(lines) + "\n"


def tier_page(tier: str, heading: bool = True) -> str:
    lines = [f"{tier} — tier", ""] if heading else []
    lines += [*_wrap(TIER_DOCS[tier]), "", "Rules:"]
    lines += _columns(_rule_rows(tier_rules(tier), tier))
    return "\n".join(lines) + "\n"


def _wrap(text: str, first: str = "", rest: str = "") -> list[str]:
    """TEXT in lines of at most WIDTH, never broken inside a word or a `code span`."""
    kept = re.sub(r"`[^`]*`", lambda m: m.group().replace(" ", "\0"), text)
    lines = textwrap.wrap(
        kept, WIDTH, initial_indent=first, subsequent_indent=rest, break_long_words=False, break_on_hyphens=False
    )
    return [line.replace("\0", " ") for line in lines]


def _wrapped(text: str) -> list[str]:
    return _wrap(text, "  ", "  ")


def _example_lines(example: Example) -> list[str]:
    lines = [f"  $ {example.command()}"]
    if example.judge is not None:
        lines += _wrapped(example.judge.describe())
    for path, text in example.files.items():
        lines += ["", f"  ==> {path} <==", *("    " + line if line else "" for line in text.splitlines())]
    return lines


def rule_page(rule: Rule) -> str:
    doc = RULE_DOCS[rule.name]
    lines = [f"{rule.name} — rule, tier {rule.tier}, default severity {rule.severity}", ""]
    lines += [*_wrap(rule.summary), "", "What triggers it", *_wrapped(doc.triggers)]
    lines += ["", "How to fix it", *_wrapped(doc.fix)]
    note = fix_note(rule.name)
    if note:
        lines += _wrapped(f"Fix: {note}")
    lines += ["", "How to suppress it"]
    for form in suppression_forms(doc):
        lines += _wrap(form, "  - ", "    ")
    lines += ["", "Example that triggers it", *_example_lines(doc.bad)]
    lines += ["", "Example that passes", *_example_lines(doc.good)]
    lines += ["", f"Documentation: {doc_url(rule.name)}"]
    return "\n".join(lines) + "\n"


def checker_page(checker: Checker) -> str:
    lines = [f"{checker.name} — checker ({checker.source}), emits rubric_violation", ""]
    if checker.params:
        lines.append("params:")
        for p in checker.params:
            need = "required" if p.required else (f"default {p.default!r}" if p.default is not None else "optional")
            lines.append(f"  {p.name} ({p.kind}, {need}){': ' + p.help if p.help else ''}")
        lines.append("")
    if checker.needs_graph:
        lines.append("runs after the graph pass (needs the whole workspace's links)")
        lines.append("")
    lines.append(checker.doc)
    lines += ["", *_checker_advice(checker.name)]
    if checker.source == "core":
        lines += ["", f"Documentation: {doc_url(checker.name)}"]
    return "\n".join(lines) + "\n"


def _checker_advice(name: str) -> list[str]:
    """How to fix and how to suppress what a checker reports."""
    suppress = (
        f"`<!-- kblint-disable-next-line {name} -->` above the line, `<!-- kblint-disable {name} -->` ... "
        f"`<!-- kblint-enable {name} -->` around lines, or `kblint: {{disable: [{name}]}}` in the "
        "frontmatter for the whole entry; the rubric item's id names that one item only."
    )
    fix = "Make the entry do what the rubric item's text asks; the message says what the checker measured."
    return ["How to fix it:", *_wrapped(fix), "", "How to suppress it:", *_wrapped(suppress)]


# docs/rules.md: the same pages in markdown, one `## NAME` heading per rule and built-in checker, so
# that each name is its own anchor (doc_url).

_LANGUAGES = {".yaml": "yaml", ".yml": "yaml", ".toml": "toml", ".md": "markdown"}


def _fenced(text: str, language: str) -> list[str]:
    fence = "```"
    while fence in text:
        fence += "`"
    return [fence + language, *text.rstrip("\n").splitlines(), fence]


def _example_markdown(example: Example) -> list[str]:
    lines = [
        f"In the KB's directory, `{example.command()}`" + (f". {example.judge.describe()}" if example.judge else "")
    ]
    for path, text in example.files.items():
        language = next((lang for ext, lang in _LANGUAGES.items() if path.endswith(ext)), "")
        lines += ["", f"`{path}`", "", *_fenced(text, language)]
    return lines


def _rule_markdown(rule: Rule) -> list[str]:
    doc = RULE_DOCS[rule.name]
    lines = [f"## {rule.name}", "", f"Tier `{rule.tier}`, default severity `{rule.severity}`. {rule.summary}", ""]
    lines += ["### What triggers it", "", doc.triggers, "", "### How to fix it", "", doc.fix, ""]
    note = fix_note(rule.name)
    if note:
        lines += [f"Fix: {note}", ""]
    lines += ["### How to suppress it", "", *(f"- {form}" for form in suppression_forms(doc)), ""]
    lines += ["### Example that triggers it", "", *_example_markdown(doc.bad), ""]
    lines += ["### Example that passes", "", *_example_markdown(doc.good), ""]
    return lines


def _checker_markdown(checker: Checker) -> list[str]:
    lines = [f"## {checker.name}", "", "Checker: a failing rubric item bound to it is a `rubric_violation`.", ""]
    for p in checker.params:
        need = "required" if p.required else (f"default `{p.default!r}`" if p.default is not None else "optional")
        lines.append(f"- `{p.name}` ({p.kind}, {need}){': ' + p.help if p.help else ''}")
    if checker.params:
        lines.append("")
    if checker.needs_graph:
        lines += ["It runs after the graph pass: it needs the whole workspace's links.", ""]
    return [*lines, checker.doc, ""]


def _sentence(text: str) -> str:
    return text[:1].upper() + text[1:] + "."


def rules_markdown() -> str:
    """docs/rules.md: every rule by tier and every built-in checker, from the same source as `explain`."""
    checkers = [c for c in (registry().checkers[n] for n in registry().names()) if c.source == "core"]
    lines = [
        "# Rules and checkers",
        "",
        "<!-- Generated from kblint/rules/docs.py by `KBLINT_UPDATE_DOCS=1 pytest tests/test_rule_docs.py`. -->",
        "",
        "What each rule of kblint reports and each built-in checker checks; `kblint explain NAME` prints "
        "the same page, and `kblint explain` lists them all.",
        "",
    ]
    for tier in TIERS:
        names = tier_rules(tier)
        if names:
            lines.append(f"- {tier}: " + ", ".join(f"[{n}](#{n})" for n in names))
    lines.append("- checkers: " + ", ".join(f"[{c.name}](#{c.name})" for c in checkers))
    lines.append(f"- rubric items that validate the frontmatter: [{JSON_SCHEMA}](#{JSON_SCHEMA})")
    lines.append("")
    for name in RULES:
        lines += _rule_markdown(RULES[name])
    for checker in checkers:
        lines += _checker_markdown(checker)
    title, body = json_schema_doc().split("\n\n", 1)
    lines += [f"## {JSON_SCHEMA}", "", _sentence(title.split(" — ", 1)[1]), "", body, ""]
    return "\n".join(lines).rstrip("\n") + "\n"
