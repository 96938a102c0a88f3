"""The rubric tier: kblint lints the rubric of kb.yaml itself.

- rubric_duplicate_item: two items of one scope say the same thing (after case, punctuation and
  stop words are set aside);
- rubric_threshold_unreachable / rubric_threshold_trivial: a `pass_threshold` above the best
  score an entry can get, or at or below the worst;
- rubric_levels_unordered: a graded item's level scores go down (found where levels are read, in
  the plan, which breaks the item);
- rubric_restates_schema: a judgment string that only restates a required field;
- rubric_policy_typo: a string that looks like a policy but does not parse (`policy_typo`, called
  where string items are bound: the item is broken instead of silently becoming a judgment item);
- rubric_unknown_name: a policy or a checker names a field, or a gate a status, that no type the
  item applies to declares.

`rubric_findings` is what the plan records about its rubric; the broken items report themselves
(kblint.rules.config).
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, NamedTuple

from .. import policy
from ..model.issue import Issue
from ..model.kbschema import KBSchema, RubricItem, TypeSchema
from ..model.levels import reaches
from . import RULES, Site

if TYPE_CHECKING:
    from ..model.plan import Binding, Plan

# ---------------------------------------------------------------------------------------------
# rubric_policy_typo: strings that look like a policy.

_OPERATORS = ("->", ">=", "<=", "==", "!=", ">", "<")
_COMPARISONS = _OPERATORS[1:]
_SPLIT = re.compile(r"(->|>=|<=|==|!=|>|<)")
_SUBJECTS = ("tags", "links", "outlinks", "inlinks")
_PREFIXES = ("metadata", "links", "body")
_BODY_PARTS = ("section", "words")
_KEYWORDS = ("count", "required")
_CLOSE = 0.75  # difflib ratio of a misspelt keyword to the keyword ("tag" → "tags", "cont" → "count")
_GATE_LENGTH = 5  # status A -> B requires ...


def _tokens(text: str) -> list[str]:
    return _SPLIT.sub(r" \1 ", text).split()


def _near(word: str, choices: tuple[str, ...]) -> str | None:
    """The keyword among CHOICES that WORD is, or nearly is (whatever its case)."""
    folded = word.casefold()
    if folded in choices:
        return folded
    found = difflib.get_close_matches(folded, choices, n=1, cutoff=_CLOSE)
    return found[0] if found else None


def _dotted(first: str) -> str | None:
    """FIRST as the subject it nearly is, for `metadata.F`, `links.N`, `body.section`, `body.words`."""
    prefix, dot, rest = first.partition(".")
    near = _near(prefix, _PREFIXES) if dot and rest else None
    if near is None:
        return None
    if near == "body":
        part = _near(rest, _BODY_PARTS)
        return f"body.{part}" if part else None
    return f"{near}.{rest}"


def _constraint(tokens: list[str]) -> list[str] | None:
    """TOKENS as the constraint they nearly are (`tags count >= 2`, `metadata.x required`,
    `body.words > 100`), or None when they are not one."""
    head = (_dotted(tokens[0]) or _near(tokens[0], _SUBJECTS)) if tokens else None
    rest = tokens[1:]
    if head is None or not rest:
        return None
    if head == "body.section":
        quoted = rest[0][:1] in "'\"" and len(rest) > 1
        return [head, *rest[:-1], "required"] if quoted and _near(rest[-1], ("required",)) else None
    if rest[0] in _COMPARISONS and len(rest) == 2 and rest[1].isdigit():  # noqa: PLR2004 - `tags >= 2`
        return [head, *rest] if head == "body.words" else [head, "count", *rest]
    keyword = _near(rest[0], _KEYWORDS) if head != "body.words" else None
    if keyword == "required" and len(rest) == 1:
        return [head, keyword]
    if keyword == "count" and any(t in _COMPARISONS for t in rest[1:]):
        return [head, keyword, *rest[1:]]
    return None


def _corrected(tokens: list[str]) -> list[str] | None:
    """TOKENS as the policy they nearly are, when they look like one; None when they do not."""
    if len(tokens) > _GATE_LENGTH and tokens[2] == "->" and _near(tokens[0], ("status",)):
        if _near(tokens[4], ("requires",)) is None:
            return None
        rest = _constraint(tokens[5:]) or tokens[5:]
        return ["status", tokens[1], "->", tokens[3], "requires", *rest]
    return _constraint(tokens)


def policy_typo(text: str) -> str | None:
    """Why the string item TEXT is broken when it looks like a policy (its first words are close to
    a policy's) but does not parse: the parser's caret, and the expression meant when a corrected
    one parses. None for any other string (it is a judgment item)."""
    if _corrected(_tokens(text)) is None or _only_capitalised(text):
        return None
    try:
        policy.parse(text)
    except policy.PolicyError as exc:
        return f"it looks like a policy but does not parse{did_you_mean(text)}: {exc.render()}"
    return None


def did_you_mean(text: str) -> str:
    """` (did you mean 'POLICY'?)` when TEXT, a policy that does not parse, is a misspelling of
    one that does (its keywords nearly written); else empty."""
    corrected = _corrected(_tokens(text))
    if corrected is None:
        return ""
    suggestion = " ".join(corrected)
    try:
        policy.parse(suggestion)
    except policy.PolicyError:
        return ""
    return f" (did you mean {suggestion!r}?)"


def _only_capitalised(text: str) -> bool:
    """A policy written with a capital first letter ("Tags count >= 2"): SPEC §6 reads it, being
    case-sensitive, as a judgment item, so it is one, not a typo."""
    if not text[:1].isupper():
        return False
    try:
        policy.parse(text[:1].lower() + text[1:])
    except policy.PolicyError:
        return False
    return True


# ---------------------------------------------------------------------------------------------
# rubric_threshold_unreachable / rubric_threshold_trivial.

_NAMED = 3  # types named in a message before "and N more"


def score_bounds(items: Iterable[Binding]) -> tuple[float, float]:
    """The best and worst score an entry can get from ITEMS: the weighted mean of each scored
    item's highest (lowest) score, its top (bottom) level's for a graded item, 1 (0) otherwise.
    An entry with nothing scored scores 1."""
    total = best = worst = 0.0
    for b in items:
        if not b.scored or b.weight <= 0:
            continue
        scores = [level.score for level in b.levels] or [0.0, 1.0]
        total += b.weight
        best += b.weight * max(scores)
        worst += b.weight * min(scores)
    return (best / total, worst / total) if total else (1.0, 1.0)


def _names(types: list[str]) -> str:
    named = ", ".join(f"'{t}'" for t in types[:_NAMED])
    more = f" and {len(types) - _NAMED} more" if len(types) > _NAMED else ""
    return f"type{'s' if len(types) > 1 else ''} {named}{more}"


def _threshold_issues(
    threshold: float, bounds: dict[str, tuple[float, float]], site: Site, line: int, of: str
) -> list[Issue]:
    """The issue of one pass_threshold (OF: "" for the KB's, " of type 'x'" for a type's) over the
    best and worst scores of the types it applies to, if any."""
    if not bounds:
        return []
    short = sorted((best, name) for name, (best, _) in bounds.items() if not reaches(best, threshold))
    if short:
        rule = RULES["rubric_threshold_unreachable"]
        message = (
            f"pass_threshold {threshold:g}{of} is above the best score an entry of "
            f"{_names([name for _, name in short])} can get ({short[0][0]:.2f}): no such entry can pass"
        )
    else:
        worst = min(w for _, w in bounds.values())
        if not reaches(worst, threshold):
            return []
        rule = RULES["rubric_threshold_trivial"]
        message = (
            f"pass_threshold {threshold:g}{of} is at or below the worst score an entry can get "
            f"({worst:.2f}): no entry can fall below it, so it checks nothing"
        )
    return [rule.issue(site, message, line=line, field="pass_threshold", discriminator=f"pass_threshold{of}")]


def threshold_issues(schema: KBSchema, plan: Plan, site: Site) -> list[Issue]:
    """The KB's pass_threshold over the types without one of their own, and each type's own
    (a type-level `pass_threshold`, when the schema has them)."""
    bounds = {name: score_bounds(plan.for_type(name)) for name in sorted(schema.types)}
    own = {name: ts.pass_threshold for name, ts in schema.types.items()}
    issues: list[Issue] = []
    if schema.pass_threshold is not None:
        kb_bounds = {name: b for name, b in bounds.items() if own.get(name) is None}
        issues += _threshold_issues(schema.pass_threshold, kb_bounds, site, max(schema.pass_threshold_line, 1), "")
    for name, threshold in sorted(own.items()):
        if threshold is not None:
            line = schema.types[name].pass_threshold_line or schema.types[name].line
            issues += _threshold_issues(threshold, {name: bounds[name]}, site, max(line, 1), f" of type '{name}'")
    return issues


# ---------------------------------------------------------------------------------------------
# rubric_duplicate_item.

_STOP_TEXT = (
    "a an the of to in on at by for with from into about as and or but is are was were be been being "
    "it its this that these those their there has have had having do does did should must shall "
    "will would can could may might each every any all some entry entries"
)
_STOP_WORDS = frozenset(_STOP_TEXT.split())
# Words whose difference is a different item however close the rest: counts, operators, negations.
_SIGNATURE = re.compile(r"^(?:\d+|one|two|three|four|five|six|seven|eight|nine|ten|no|not|never|none|nor|without)$")
# A number ends a word of its own (`v2`, `explicit2`): a label numbered apart is another item.
_WORDS = re.compile(r"->|>=|<=|==|!=|[<>]|\d+|[^\W\d]+")
_NEAR = 0.9  # difflib ratio of two normalised texts that say the same thing
# Stop words that still tell two items apart when each has one: `links to` is not `links from`.
_DIRECTIONS = frozenset(("to", "from", "by", "for", "into"))
# What binds a mapping item: two items bound differently are two items, whatever their texts.
_BINDING_KEYS = ("policy", "checker", "params", "levels", "json_schema", "covered_by", "field", "fields")


def normalise(text: str) -> list[str]:
    """TEXT's words without case, punctuation and stop words (operators kept)."""
    return [w for w in _words(text) if w not in _STOP_WORDS]


def _words(text: str) -> list[str]:
    return _WORDS.findall(text.casefold().replace("'", ""))


class _Said(NamedTuple):
    """An item as compared: its text's normalised words, them joined, its counts and negations,
    its directions, and what binds it (None for a string)."""

    words: list[str]
    joined: str
    signature: list[str]
    directions: frozenset[str]
    binding: str | None

    @classmethod
    def of(cls, item: RubricItem) -> _Said:
        words = normalise(item.text)
        signature = sorted(w for w in words if w in _OPERATORS or _SIGNATURE.match(w))
        directions = frozenset(w for w in _words(item.text) if w in _DIRECTIONS)
        return cls(words, " ".join(words), signature, directions, _binding(item))


def _binding(item: RubricItem) -> str | None:
    if not isinstance(item.raw, dict):
        return None
    bound = {key: item.raw[key] for key in _BINDING_KEYS if key in item.raw}
    return json.dumps(bound, sort_keys=True, default=str) if bound else None


def _same(a: _Said, b: _Said) -> bool:
    """Whether two items say the same thing: not when both are bound and differently, nor when
    their texts go in different directions; else their texts equal once normalised, or nearly
    equal with the same counts and negations (expressions, which hold an operator, only when equal)."""
    if a.binding is not None and b.binding is not None and a.binding != b.binding:
        return False
    if a.directions and b.directions and a.directions != b.directions:
        return False
    if a.words == b.words:
        return bool(a.words)
    if a.signature != b.signature or any(w in _OPERATORS for w in a.signature):
        return False
    shorter, longer = sorted((len(a.joined), len(b.joined)))
    if 2 * shorter < _NEAR * (shorter + longer):  # ratio() is at most this: no matcher needed
        return False
    matcher = difflib.SequenceMatcher(None, a.joined, b.joined)
    # the quick bounds are upper bounds of ratio(): most pairs are told apart without it
    return matcher.quick_ratio() >= _NEAR and matcher.ratio() >= _NEAR


def _targets(item: RubricItem) -> set[str] | None:
    applies = item.raw.get("applies_to") if isinstance(item.raw, dict) else None
    if isinstance(applies, str):
        return {applies}
    return {str(a) for a in applies} if isinstance(applies, list) else None


def _overlap(a: RubricItem, b: RubricItem) -> bool:
    """Whether two items of one scope apply to a type in common."""
    ta, tb = _targets(a), _targets(b)
    return ta is None or tb is None or bool(ta & tb)


def duplicate_issues(items: list[RubricItem], site: Site) -> list[Issue]:
    """Each item of one scope that says what an earlier one says, naming the earlier one."""
    rule = RULES["rubric_duplicate_item"]
    issues: list[Issue] = []
    seen: list[tuple[RubricItem, _Said]] = []
    for item in items:
        said = _Said.of(item)
        earlier = next((e for e, w in seen if _same(w, said) and _overlap(e, item)), None)
        if earlier is not None:
            how = "repeats" if earlier.text == item.text else "says the same as"
            message = f"rubric item {item.text!r} {how} {earlier.text!r} (kb.yaml line {earlier.line})"
            issues.append(
                rule.issue(site, message, line=max(item.line, 1), discriminator=item.text, rubric_item=item.text)
            )
        seen.append((item, said))
    return issues


# ---------------------------------------------------------------------------------------------
# rubric_restates_schema.


def restates_issues(schema: KBSchema, plan: Plan, site: Site) -> list[Issue]:
    """Judgment strings that only restate a required field (what `kblint migrate` would bind to
    `covered_by: schema`)."""
    judged = {
        (b.scope, b.type_name, b.line, b.text)
        for scope in plan.scopes
        for b in scope.items
        if b.kind == "judgment" and not b.mapping
    }
    items = [*schema.rubric, *(item for ts in schema.types.values() for item in ts.rubric)]
    candidates = [i for i in items if i.source == "kb.yaml" and (i.scope, i.type_name, i.line, i.text) in judged]
    if not candidates:
        return []
    from ..rubric_match import match_item  # `kblint migrate`'s matcher, loaded when there is a string to match

    rule = RULES["rubric_restates_schema"]
    issues: list[Issue] = []
    for item in candidates:
        found = match_item(item, schema)
        if found is None or found[0].get("covered_by") != "schema":
            continue
        replacement, reason = found
        names = replacement.get("fields")
        claim = f"fields: [{', '.join(names)}]" if names else f"field: {replacement.get('field')}"
        applies = replacement.get("applies_to")
        if applies:
            claim += f", applies_to: [{', '.join(applies)}]"
        message = (
            f"judgment item {item.text!r} only restates the schema: {reason}; bind it with "
            f"`covered_by: schema, {claim}` rather than ask a judge (`kblint migrate` proposes it)"
        )
        issues.append(rule.issue(site, message, line=max(item.line, 1), discriminator=item.text, rubric_item=item.text))
    return issues


# ---------------------------------------------------------------------------------------------
# rubric_unknown_name.

_SUGGEST = 0.6  # difflib ratio of a name to the declared one it is taken for a misspelling of


class _Named(NamedTuple):
    """A field or status an item names, and where (its policy, a level's, its checker)."""

    kind: str  # "field" | "status"
    name: str
    where: str  # "" when the item's text is its policy


def _policies(b: Binding) -> Iterator[tuple[policy.Policy, str]]:
    """The policies of B, its own or its levels' `when:`, each with where it is written."""
    if not b.graded:
        if b.parsed is not None:
            yield b.parsed, "" if b.text == b.policy else f" (policy {b.policy!r})"
        return
    for level in b.levels:
        if level.parsed is not None:
            yield level.parsed, f" (level '{level.id}': {level.when!r})"


def _named_in(b: Binding) -> Iterator[_Named]:
    for p, where in _policies(b):
        if isinstance(p, policy.Gate):
            yield from (_Named("status", s, where) for s in (p.from_state, p.to_state) if s != "*")
        c = policy.constraint_of(p)
        if isinstance(c, (policy.Count, policy.Required)) and c.subject.kind == "metadata" and c.subject.name:
            yield _Named("field", c.subject.name, where)
    if b.kind == "checker" and b.impl is not None:
        name = b.impl.field_for(b.params)
        if name:
            yield _Named("field", name, f" (checker {b.checker})")


def _declared(kind: str, types: list[TypeSchema]) -> set[str] | None:
    """The fields (or statuses) TYPES declare; None when one of them does not say (a type that does
    not list its fields, or has no workflow), where any name may be meant."""
    if kind == "field":
        return None if not all(ts.knows_keys for ts in types) else set().union(*(ts.known_keys() for ts in types))
    if not all(ts.workflow is not None for ts in types):
        return None
    return {state for ts in types if ts.workflow is not None for state in ts.workflow.states}


def _unknown_name_issue(b: Binding, named: _Named, types: list[TypeSchema], site: Site) -> Issue | None:
    declared = _declared(named.kind, types)
    if declared is None or named.name in declared:
        return None
    near = difflib.get_close_matches(named.name, sorted(declared), n=1, cutoff=_SUGGEST)
    hint = f" (did you mean '{near[0]}'?)" if near else ""
    whose = _names([ts.name for ts in types])
    what = "a field" if named.kind == "field" else "a workflow status"
    message = f"rubric item {b.text!r}{named.where} names '{named.name}', which is not {what} of {whose}{hint}"
    rule = RULES["rubric_unknown_name"]
    return rule.issue(
        site, message, line=max(b.line, 1), discriminator=f"{b.text}:{named.where}:{named.name}", rubric_item=b.text
    )


def unknown_name_issues(schema: KBSchema, plan: Plan, site: Site) -> list[Issue]:
    """The fields and statuses that items of kb.yaml name and no type they apply to declares."""
    types_of: dict[int, tuple[Binding, list[TypeSchema]]] = {}
    for type_name, bindings in plan.by_type.items():
        ts = schema.types.get(type_name)
        if ts is None:
            continue
        for b in bindings:
            if b.source == "kb.yaml" and b.runs:
                types_of.setdefault(id(b), (b, []))[1].append(ts)
    issues = []
    for b, types in types_of.values():
        for named in dict.fromkeys(_named_in(b)):
            issue = _unknown_name_issue(b, named, types, site)
            if issue is not None:
                issues.append(issue)
    return issues


# ---------------------------------------------------------------------------------------------


def rubric_findings(schema: KBSchema, plan: Plan) -> list[Issue]:
    """What kblint finds wrong with the rubric of kb.yaml that does not break an item."""
    site = Site(schema.name, schema.kb_yaml or schema.root)
    issues = threshold_issues(schema, plan, site)
    issues += duplicate_issues([i for i in schema.rubric if i.source == "kb.yaml"], site)
    for ts in schema.types.values():
        issues += duplicate_issues([i for i in ts.rubric if i.source == "kb.yaml"], site)
    issues += restates_issues(schema, plan, site)
    issues += unknown_name_issues(schema, plan, site)
    return sorted(issues, key=lambda issue: (issue.line, issue.rule))
