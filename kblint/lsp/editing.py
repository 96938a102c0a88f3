"""What the server offers while an entry is written: completion of link targets after `[[`, of
`type:` values and of the field names the entry's type declares; and, on hover over an issue, the
rule, how its rubric item is enforced (the line `kblint checkers --kb` prints), and its documentation.

Positions here are in characters (code points), as in kblint.lsp.ranges."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..model.facts import EntryFacts
from ..model.issue import Issue
from ..model.kbschema import COMMON_KEYS, KBSchema
from ..model.plan import Binding
from ..report import issue_url
from ..report.coverage import item_line
from ..rules import RULES
from .workspace import HeldKB, HeldWorkspace

MAX_TARGETS = 100  # link targets offered at once; typing more narrows them
_KEY_RE = re.compile(r"^([A-Za-z_][\w-]*)?$")
_VALUE_RE = re.compile(r"^([A-Za-z_][\w-]*):[ \t]*([^\s,\[\]{}]*)$")
_PRESENT_KEY_RE = re.compile(r"^([^\s#:'\"-][^:]*?)[ \t]*:(?:[ \t]|$)")


@dataclass(frozen=True, slots=True)
class Offer:
    """One completion: what is inserted in place of the characters from START to the cursor."""

    label: str
    kind: str  # "target", "kb", "type", "field", "value"
    detail: str
    insert: str
    start: int
    sort: str = ""


def complete(held: HeldWorkspace, path: str, lines: list[str], line: int, character: int) -> tuple[list[Offer], bool]:
    """What may be written at the cursor, and whether more would be offered for more typing."""
    if not 0 <= line < len(lines):
        return [], False
    before = lines[line][:character]
    opening = before.rfind("[[")
    if opening >= 0 and "]]" not in before[opening:]:
        return link_targets(held, path, before[opening + 2 :], opening + 2)
    end = frontmatter_end(lines)
    kb = held.kb_of(path)
    if kb is None or end is None or not 0 < line < end:
        return [], False
    value = _VALUE_RE.match(before)
    if value is not None:
        start = character - len(value.group(2))
        return _values(kb.ctx.schema, _type_of(held, kb, path, lines, end), value.group(1), start), False
    if _KEY_RE.match(before):
        present = {m.group(1) for text in lines[1:end] if (m := _PRESENT_KEY_RE.match(text))}
        return _fields(kb.ctx.schema, _type_of(held, kb, path, lines, end), present), False
    return [], False


def frontmatter_end(lines: list[str]) -> int | None:
    """The line of the frontmatter's closing `---` (None: the file has no frontmatter, or it is not closed)."""
    if not lines or lines[0].rstrip() != "---":
        return None
    return next((n for n in range(1, len(lines)) if lines[n].rstrip() == "---"), None)


def link_targets(held: HeldWorkspace, path: str, typed: str, start: int) -> tuple[list[Offer], bool]:
    """Entries of the KB (or of the KB named before a `:`) whose id or alias begins with what
    was typed after `[[`, else holds it; and the other KBs' names."""
    if "|" in typed or "#" in typed:
        return [], False
    own = held.kb_of(path)
    kb_name, colon, partial = typed.rpartition(":")
    name = kb_name if colon else (own.name if own is not None else "")
    index = held.live.graph.indexes.get(name)
    offers: list[Offer] = []
    if not colon:
        offers += [
            Offer(f"{other}:", "kb", "another KB", f"{other}:", start, f"2{other}")
            for other in sorted(held.kbs)
            if other != name and other.casefold().startswith(partial.casefold())
        ]
    if index is None:
        return offers, False
    folded = partial.casefold()
    begin = start + len(typed) - len(partial)
    found: list[Offer] = []
    for table, kind in ((index.by_id, "id"), (index.by_name, "alias")):
        for target, facts in table.items():
            spelled = target.casefold()
            if folded in spelled and (kind == "id" or target in facts.aliases) and facts.path != path:
                rank = "0" if spelled.startswith(folded) else "1"
                found.append(Offer(target, "target", _described(facts, kind), target, begin, rank + spelled))
    found.sort(key=lambda o: o.sort)
    return offers + found[:MAX_TARGETS], len(found) > MAX_TARGETS


def _described(facts: EntryFacts, kind: str) -> str:
    what = f"alias of {facts.id}" if kind == "alias" else facts.type
    return f"{what} · {facts.relpath}"


def _type_of(held: HeldWorkspace, kb: HeldKB, path: str, lines: list[str], end: int) -> str:
    """The entry's type as written, else as last linted."""
    for text in lines[1:end]:
        m = re.match(r"^type:[ \t]*['\"]?([\w-]+)", text)
        if m:
            return m.group(1)
    facts = held.live.facts.get(path)
    return facts.type if facts is not None else ""


def _fields(schema: KBSchema, type_name: str, present: set[str]) -> list[Offer]:
    """The keys the entry's type declares (required first), then the keys every entry may have."""
    ts = schema.types.get(type_name)
    declared: dict[str, str] = {}
    if ts is not None:
        for name in ts.required_fields():
            declared[name] = "required"
        for name, spec in ts.fields.items():
            declared.setdefault(name, spec.declared_type or spec.type or "field")
        for name in ts.optional:
            declared.setdefault(name, "optional")
    offers = [
        Offer(name, "field", f"{what} · {type_name}", f"{name}: ", 0, f"0{n:04d}")
        for n, (name, what) in enumerate(declared.items())
        if name not in present
    ]
    offers += [
        Offer(k, "field", "any entry", f"{k}: ", 0, f"1{k}") for k in sorted(COMMON_KEYS - present - set(declared))
    ]
    return offers


def _values(schema: KBSchema, type_name: str, key: str, start: int) -> list[Offer]:
    """The values a field takes: the KB's types for `type:`, a select's values, a workflow's states."""
    ts = schema.types.get(type_name)
    found: list[tuple[str, str]] = []
    if key == "type":
        found = [(name, t.description or f"type ({t.source})") for name, t in sorted(schema.types.items())]
    elif key == "status" and ts is not None and ts.workflow is not None:
        found = [(state, "workflow state") for state in ts.workflow.states]
    elif ts is not None and key in ts.fields and ts.fields[key].values:
        found = [(str(v), f"value of {key}") for v in ts.fields[key].values or ()]
    return [Offer(value, "value", detail, value, start, f"{n:04d}") for n, (value, detail) in enumerate(found)]


def binding_of(kb: HeldKB, issue: Issue) -> Binding | None:
    """The rubric item behind an issue, as the plan binds it."""
    if issue.item_id is None and issue.rubric_item is None:
        return None
    plan = kb.ctx.plan
    candidates = plan.for_type(issue.entry_type or "") if issue.entry_id is not None else []
    candidates = [*candidates, *(b for scope in plan.scopes for b in scope.items)]
    for b in candidates:
        if (issue.item_id is not None and b.id == issue.item_id) or (
            issue.item_id is None and b.text == issue.rubric_item
        ):
            return b
    return None


def explain_issue(held: HeldWorkspace, issue: Issue) -> str:
    """Markdown for a hover over ISSUE: the rule, how its rubric item is enforced, its documentation."""
    rule = RULES.get(issue.rule)
    parts = [f"**{issue.rule}** ({issue.tier}, {issue.severity})" + (f": {rule.summary}" if rule else "")]
    kb = held.kb_of(issue.path)
    b = binding_of(kb, issue) if kb is not None else None
    if b is not None:
        evaluator = held.judge.evaluator if held.judge is not None else None
        parts.append(f"Rubric item, enforced as:\n\n    {item_line(b, evaluator)}")
    elif issue.rubric_item:
        parts.append(f"Rubric item: {issue.rubric_item}")
    parts.append(f"[Documentation of {issue.rule}]({issue_url(issue.rule, issue.checker)})")
    return "\n\n".join(parts)
