"""A policy is a rubric item kblint checks deterministically, without an LLM. Write it as the
item itself (`- "tags count >= 2"`) or as `{text: "...", policy: "tags count >= 2"}`. A
violation is a rubric_violation that says what was measured: `tags count is 1, policy
requires >= 2`. A policy that does not parse is a config_error with a caret under the problem.

Grammar (`->` and the operators need no spaces around them; keywords are lower case):

    policy      := gate | constraint
    gate        := "status" STATE "->" STATE "requires" constraint
    STATE       := a status value, or "*"
    constraint  := subject "count" OP INT
                 | subject "required"
                 | "body.section" QUOTED "required"
                 | "body.words" OP INT
    subject     := "metadata." FIELD | "links." NAME | "links" | "outlinks" | "inlinks" | "tags"
    OP          := ">=" | ">" | "<=" | "<" | "==" | "!="
    QUOTED      := '...' or "..."

Examples (each is checked by the test suite):

    tags count >= 2
    metadata.source_url count >= 2
    metadata.reviewers count >= 2
    links.actor count >= 1
    outlinks count >= 3
    inlinks required
    body.section 'References' required
    body.words >= 150
    status proposed->accepted requires metadata.reviewers count >= 2
    status * -> published requires tags count >= 3

`links.NAME` counts outgoing links whose relation is NAME or whose target entry has type NAME.
`links` and `outlinks` count distinct targets as written, broken ones too (each broken link is
its own broken_link issue); a link to the entry itself does not count. `tags` counts distinct
tags (one given twice counts once).
`subject required` means `subject count >= 1`. A gate applies its constraint to entries now in
the target status (with `--base REF`, only to entries that moved there since REF).
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

OPS = {">=": operator.ge, ">": operator.gt, "<=": operator.le, "<": operator.lt, "==": operator.eq, "!=": operator.ne}
_OP_CHARS = "<>=!"


class PolicyError(Exception):
    """A policy that does not parse: the expression, the column and what was expected there."""

    def __init__(self, text: str, column: int, expected: str):
        self.text = text
        self.column = column  # 0-based
        self.expected = expected
        super().__init__(self.render())

    def render(self) -> str:
        return f"{self.expected}\n    {self.text}\n    {' ' * self.column}^"


_RENDERED = re.compile(r"\n    (.*)\n    ( *)\^$")


def split_caret(text: str) -> tuple[str, str, int] | None:
    """TEXT that ends in a PolicyError.render() as (what comes before it, the policy, the 0-based
    column the caret points at); None when it does not end in one."""
    match = _RENDERED.search(text)
    return None if match is None else (text[: match.start()], match.group(1), len(match.group(2)))


def caret_in_one_line(text: str) -> str:
    """TEXT with a PolicyError.render() at its end written as one line (`... at column 6 of
    'tags cont >= 2'`): an issue is one line of a report, the plan (`checkers --kb`) shows the caret."""
    split = split_caret(text)
    if split is None:
        return text
    before, policy, column = split
    return f"{before} at column {column + 1} of {policy!r}"


@dataclass(frozen=True, slots=True)
class Token:
    """A piece of a policy (a word, an operator, `->`, quoted text, or the end), with its column."""

    kind: str  # "word" | "op" | "arrow" | "quoted" | "end"
    text: str
    column: int


def tokenize(text: str) -> list[Token]:
    tokens: list[Token] = []
    i = 0
    n = len(text)
    while i < n:
        c = text[i]
        if c.isspace():
            i += 1
            continue
        if text.startswith("->", i):
            tokens.append(Token("arrow", "->", i))
            i += 2
            continue
        if c in _OP_CHARS:
            two = text[i : i + 2]
            if two in OPS:
                tokens.append(Token("op", two, i))
                i += 2
            elif c in OPS:
                tokens.append(Token("op", c, i))
                i += 1
            else:
                hint = ""
                before = text[:i].rstrip()
                if c == "=" and before[-1:] in "<>!=" and before[-1:]:
                    hint = f" (write '{before[-1]}=' without a space)"
                raise PolicyError(text, i, f"unknown operator {c!r}: expected one of {', '.join(OPS)}{hint}")
            continue
        if c in "'\"":
            end = text.find(c, i + 1)
            if end < 0:
                raise PolicyError(text, i, "unterminated quoted string")
            tokens.append(Token("quoted", text[i + 1 : end], i))
            i = end + 1
            continue
        start = i
        while (
            i < n
            and not text[i].isspace()
            and text[i] not in _OP_CHARS
            and text[i] not in "'\""
            and not text.startswith("->", i)
        ):
            i += 1
        tokens.append(Token("word", text[start:i], start))
    tokens.append(Token("end", "", n))
    return tokens


# ---------------------------------------------------------------------------------------------
# The typed expression.


@dataclass(frozen=True, slots=True)
class Subject:
    """What a policy counts or requires: metadata.FIELD, links[.NAME], outlinks, inlinks or tags."""

    kind: str  # "metadata" | "links" | "outlinks" | "inlinks" | "tags"
    name: str | None = None  # the field (metadata) or the relation/type (links.NAME)

    def __str__(self) -> str:
        return f"{self.kind}.{self.name}" if self.name is not None else self.kind

    @property
    def needs_graph(self) -> bool:
        return self.kind == "inlinks" or (self.kind == "links" and self.name is not None)


@dataclass(frozen=True, slots=True)
class Count:
    """`SUBJECT count OP N`."""

    subject: Subject
    op: str
    value: int

    def __str__(self) -> str:
        return f"{self.subject} count {self.op} {self.value}"


@dataclass(frozen=True, slots=True)
class Required:
    """`SUBJECT required`."""

    subject: Subject

    def __str__(self) -> str:
        return f"{self.subject} required"


@dataclass(frozen=True, slots=True)
class Section:
    """`body.section 'HEADING' required`."""

    heading: str

    def __str__(self) -> str:
        quote = "'" if "'" not in self.heading else '"'
        return f"body.section {quote}{self.heading}{quote} required"


@dataclass(frozen=True, slots=True)
class Words:
    """`body.words OP N`."""

    op: str
    value: int

    def __str__(self) -> str:
        return f"body.words {self.op} {self.value}"


Constraint = Count | Required | Section | Words


@dataclass(frozen=True, slots=True)
class Gate:
    """`status FROM->TO requires CONSTRAINT`: the constraint applies to entries whose status is TO;
    with --base, only to those that moved there from FROM (gate_applies)."""

    from_state: str
    to_state: str
    constraint: Constraint

    def __str__(self) -> str:
        return f"status {self.from_state} -> {self.to_state} requires {self.constraint}"


Policy = Gate | Count | Required | Section | Words


def constraint_of(policy: Policy) -> Constraint:
    return policy.constraint if isinstance(policy, Gate) else policy


def field_of(policy: Policy) -> str | None:
    """The frontmatter key a policy's issue points at: its metadata field, or `tags`."""
    c = constraint_of(policy)
    if not isinstance(c, (Count, Required)):
        return None
    if c.subject.kind == "metadata":
        return c.subject.name
    return "tags" if c.subject.kind == "tags" else None


def needs_graph(policy: Policy) -> bool:
    c = constraint_of(policy)
    return isinstance(c, (Count, Required)) and c.subject.needs_graph


# ---------------------------------------------------------------------------------------------
# The parser.


class _Parser:
    def __init__(self, text: str):
        self.text = text
        self.tokens = tokenize(text)
        self.pos = 0

    @property
    def tok(self) -> Token:
        return self.tokens[self.pos]

    def fail(self, expected: str) -> PolicyError:
        tok = self.tok
        found = "the end of the policy" if tok.kind == "end" else repr(tok.text)
        return PolicyError(self.text, tok.column, f"expected {expected}, found {found}")

    def take(self) -> Token:
        tok = self.tok
        self.pos += 1
        return tok

    def word(self, value: str, expected: str | None = None) -> None:
        if self.tok.kind == "word" and self.tok.text == value:
            self.take()
            return
        raise self.fail(expected or f"'{value}'")

    def parse(self) -> Policy:
        if self.tok.kind == "word" and self.tok.text == "status":
            policy: Policy = self.gate()
        else:
            policy = self.constraint()
        if self.tok.kind != "end":
            raise self.fail("the end of the policy")
        return policy

    def state(self) -> str:
        if self.tok.kind != "word" or self.tok.text in ("requires",):
            raise self.fail("a status value or '*'")
        return self.take().text

    def gate(self) -> Gate:
        self.word("status")
        from_state = self.state()
        if self.tok.kind != "arrow":
            raise self.fail("'->' between the two statuses")
        self.take()
        to_state = self.state()
        self.word("requires")
        return Gate(from_state, to_state, self.constraint())

    def integer(self) -> int:
        tok = self.tok
        if tok.kind != "word" or not tok.text.isdigit() or not tok.text.isascii():
            raise self.fail("a whole number")
        self.take()
        return int(tok.text)

    def op(self) -> str:
        if self.tok.kind != "op":
            raise self.fail(f"an operator ({', '.join(OPS)})")
        return self.take().text

    def constraint(self) -> Constraint:
        tok = self.tok
        if tok.kind == "word" and tok.text == "body.section":
            self.take()
            if self.tok.kind != "quoted" or not self.tok.text.strip():
                raise self.fail("a quoted section heading such as 'References'")
            heading = self.take().text
            self.word("required")
            return Section(heading)
        if tok.kind == "word" and tok.text == "body.words":
            self.take()
            op = self.op()
            return Words(op, self.integer())
        subject = self.subject()
        if self.tok.kind == "word" and self.tok.text == "required":
            self.take()
            return Required(subject)
        self.word("count", "'count' or 'required'")
        op = self.op()
        return Count(subject, op, self.integer())

    def subject(self) -> Subject:
        tok = self.tok
        expected = "a subject (metadata.FIELD, links.NAME, links, outlinks, inlinks, tags, body.section, body.words)"
        if tok.kind != "word":
            raise self.fail(expected)
        text = tok.text
        for prefix in ("metadata.", "links."):
            if text.startswith(prefix):
                name = text[len(prefix) :]
                if not name or not all(ch.isalnum() or ch in "_-" for ch in name):
                    raise PolicyError(self.text, tok.column + len(prefix), f"expected a name after '{prefix}'")
                self.take()
                return Subject(prefix[:-1], name)
        if text in ("links", "outlinks", "inlinks", "tags"):
            self.take()
            return Subject(text)
        raise self.fail(expected)


def parse(text: str) -> Policy:
    """Parse a policy expression; raises PolicyError (and nothing else) when it does not parse."""
    if not isinstance(text, str):
        raise PolicyError(str(text), 0, "expected a policy expression string")
    return _Parser(text).parse()


# ---------------------------------------------------------------------------------------------
# Evaluation.


class Measures(Protocol):
    """What a policy can measure on an entry. Pass 1 measures the entry, pass 2 its facts."""

    @property
    def status(self) -> str | None: ...
    def metadata_count(self, field: str) -> int: ...
    def links_count(self, name: str | None) -> int: ...
    def inlinks_count(self) -> int: ...
    def tags_count(self) -> int: ...
    def has_section(self, heading: str) -> bool: ...
    def words(self, up_to: int) -> int: ...


# A policy as a function of an entry's measures (and, with --base, the entry's status there):
# None when a gate does not apply, "" when the entry satisfies it, else the violation's message.
Evaluator = Callable[[Measures, object, bool], "str | None"]


def gate_applies(gate: Gate, status: str | None, previous: object = None, has_base: bool = False) -> bool:
    """Whether a gate's constraint applies. PREVIOUS: the status at --base (NEW for a new entry)."""
    current = status if status is not None else ""
    if gate.to_state not in ("*", current):
        return False
    if gate.to_state == "*" and current == gate.from_state:
        return False
    if not has_base:
        return True
    if previous == NEW:
        return gate.from_state == "*"
    if previous in (UNCHANGED, status):
        return False
    return gate.from_state in ("*", previous)


# Previous statuses at --base that are not status values (strings, so they survive pickling).
NEW = "\x00new"  # the entry did not exist at --base
UNCHANGED = "\x00unchanged"  # the file did not change since --base


def _measurer(constraint: Constraint) -> Callable[[Measures], int | bool]:
    """The function that measures CONSTRAINT's subject on an entry's Measures."""
    if isinstance(constraint, Section):
        heading = constraint.heading
        return lambda m: m.has_section(heading)
    if isinstance(constraint, Words):
        # A count that passes is not shown: it need not go past the first number that passes.
        up_to = constraint.value + 1 if constraint.op in (">=", ">") else -1
        return lambda m: m.words(up_to)
    kind, name = constraint.subject.kind, constraint.subject.name
    if kind == "metadata":
        assert name is not None  # a metadata subject always names its field (_Parser.subject)
        return lambda m: m.metadata_count(name)
    if kind in ("links", "outlinks"):
        return lambda m: m.links_count(name)
    if kind == "inlinks":
        return lambda m: m.inlinks_count()
    return lambda m: m.tags_count()


def _measured(constraint: Constraint) -> str:
    """How a message names what is measured."""
    if isinstance(constraint, Section):
        return f"body.section '{constraint.heading}'"
    if isinstance(constraint, Words):
        return "body.words"
    return f"{constraint.subject} count"


def evaluator(policy: Policy) -> Evaluator:
    """POLICY as a function of an entry's Measures (and, with --base, the entry's status there):
    None for a gate that does not apply (no outcome at all), "" when the entry satisfies it, else
    the message. Made once per rubric item: an entry is measured against every policy of its type."""
    gate = policy if isinstance(policy, Gate) else None
    constraint = policy.constraint if isinstance(policy, Gate) else policy
    measure = _measurer(constraint)
    what = (f"status {gate.from_state}->{gate.to_state}: " if gate is not None else "") + _measured(constraint)
    if isinstance(constraint, Section):
        compare = None
    else:
        op, need = (">=", 1) if isinstance(constraint, Required) else (constraint.op, constraint.value)
        compare = OPS[op]

    def evaluate(m: Measures, previous: object, has_base: bool) -> str | None:
        if gate is not None and not gate_applies(gate, m.status, previous, has_base):
            return None
        value = measure(m)
        if compare is None:
            return "" if value else f"{what} is missing, policy requires it"
        return "" if compare(value, need) else f"{what} is {value}, policy requires {op} {need}"

    return evaluate
