"""What a checker is and what it receives (SPEC §5.2, §11).

A checker is called as `checker(subject, params, context)` and returns None (or an empty
iterable) when the entry passes, else a message, an Issue, or an iterable of those; anything else
(bytes, a mapping, an empty message) is a checker_error, as is any exception but Ctrl-C. In pass 1
the subject is the whole entry (`EntrySubject`); a core checker that needs the graph runs after
the graph pass on the entry's compact facts (`GraphSubject`), and a plugin checker that needs the
graph gets the whole entry, re-read.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from ..model.issue import Issue

if TYPE_CHECKING:
    from ..model.entry import RawEntry
    from ..model.kbschema import KBSchema
    from ..model.link import Link
    from ..model.markdown import Heading

Params = Mapping[str, Any]


class GraphSubject(Protocol):
    """An entry as the graph pass holds it (EntryFacts): who it is and where its links go."""

    @property
    def kb_name(self) -> str: ...
    @property
    def path(self) -> str: ...
    @property
    def relpath(self) -> str: ...
    @property
    def id(self) -> str: ...
    @property
    def type(self) -> str: ...
    @property
    def status(self) -> str | None: ...
    @property
    def stem(self) -> str: ...
    @property
    def aliases(self) -> Sequence[str]: ...
    @property
    def links(self) -> Iterable[Link]: ...


class EntrySubject(GraphSubject, Protocol):
    """A whole entry (SPEC §3's entry model): what pass-1 checkers and policies read."""

    @property
    def title(self) -> str | None: ...
    @property
    def tags(self) -> list[str]: ...
    @property
    def metadata(self) -> dict[Any, Any]: ...
    @property
    def body(self) -> str: ...
    @property
    def raw(self) -> RawEntry: ...
    @property
    def headings(self) -> list[Heading]: ...
    @property
    def fences(self) -> list[tuple[int, int]]: ...
    @property
    def comments(self) -> list[tuple[int, int]]: ...
    @property
    def uncommented(self) -> str: ...
    @property
    def word_count(self) -> int: ...
    def words_up_to(self, n: int) -> int: ...
    @property
    def outlink_count(self) -> int: ...


class Graph(Protocol):
    """The read-only link graph a checker that needs it may consult."""

    inlinks: dict[str, list[str]]

    def entry_at(self, path: str) -> GraphSubject | None: ...


@dataclass(slots=True)
class CheckContext:
    """What a checker may read besides the entry: the KB schema, and the graph after pass 2."""

    schema: KBSchema
    inlinks: dict[str, list[str]] | None = None  # entry path → paths of the entries linking to it
    graph: Graph | None = None


# A checker takes an EntrySubject or a GraphSubject (as it declares: needs_graph), and returns what
# `messages` reads.
CheckerFunc = Callable[[Any, Params, CheckContext], object]


# The kinds of value a param takes, as a message names them.
KIND_NAMES = {
    "int": "an integer",
    "str": "a non-empty string",
    "regex": "a regular expression",
    "str_list": "a non-empty list of strings",
}


def kind_ok(kind: str, value: object) -> bool:
    """Whether VALUE is a value of KIND (one of KIND_NAMES)."""
    if kind == "int":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind in ("str", "regex"):
        return isinstance(value, str) and value != ""
    if kind == "str_list":
        return isinstance(value, list) and all(isinstance(v, str) for v in value) and bool(value)
    return True


@dataclass(frozen=True, slots=True)
class Param:
    """A parameter a checker accepts in a rubric item's `params`."""

    name: str
    kind: str  # "int" | "str" | "str_list" | "regex"
    required: bool = False
    default: object = None
    help: str = ""
    minimum: int | None = None  # of an "int": the least value that means something (a count: 0)


@dataclass(slots=True)
class Checker:
    """A named check that rubric items can bind to, with the parameters it takes."""

    name: str
    func: CheckerFunc
    params: tuple[Param, ...] = ()
    source: str = "core"
    needs_graph: bool = False  # runs after the graph pass
    # The frontmatter field an issue points at (a param name prefixed "param:" or a key).
    field: str | None = None

    @property
    def doc(self) -> str:
        return inspect.cleandoc(self.func.__doc__ or "").strip()

    @property
    def description(self) -> str:
        return self.doc.split("\n", 1)[0].strip()

    def field_for(self, params: Params) -> str | None:
        if self.field and self.field.startswith("param:"):
            value = params.get(self.field[6:])
            return value if isinstance(value, str) else None
        return self.field

    def signature(self) -> str:
        parts = []
        for p in self.params:
            text = p.name
            if not p.required:
                text += f"={p.default!r}" if p.default is not None else "=?"
            parts.append(text)
        return ", ".join(parts)


class BadResult(TypeError):
    """A checker returned something that is none of the return values documented above."""


_EXPECTED = "expected None, a message, an Issue or an iterable of those"


def messages(result: object) -> list[str]:
    """The violation messages a checker's result holds (none when it passed); BadResult for a
    result that is none of None, a message, an Issue or an iterable of those. Bytes and mappings
    are iterable but hold no messages, and an empty message would be a violation saying nothing."""
    if result is None:
        return []
    if isinstance(result, (str, Issue)):
        return [_message(result)]
    if isinstance(result, Iterable) and not isinstance(result, (bytes, bytearray, memoryview, Mapping)):
        return [m for item in result for m in messages(item)]
    raise BadResult(f"returned {type(result).__name__}, {_EXPECTED}")


def _message(item: str | Issue) -> str:
    text = item.message if isinstance(item, Issue) else item
    # a plain copy: a str subclass's own methods would run, and could raise, wherever it is shown
    text = str.__str__(text) if isinstance(text, str) else ""
    if text.strip():
        return text
    if isinstance(item, str):
        raise BadResult(f"returned an empty str, {_EXPECTED}")
    what = "an empty message" if isinstance(item.message, str) else f"a message of {type(item.message).__name__}"
    raise BadResult(f"returned an Issue with {what}, {_EXPECTED}")


def describe(exc: BaseException) -> str:
    """`Type: message` of an exception a plugin's code raised, whose __str__ is its code too: it
    may raise in turn (even SystemExit, which would end the run), and then the type alone is told."""
    try:
        text = str.__str__(str(exc))
    except KeyboardInterrupt:
        raise
    except BaseException:  # noqa: BLE001 - telling what went wrong must not fail in turn
        return type(exc).__name__
    return f"{type(exc).__name__}: {text}"
