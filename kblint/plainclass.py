"""`dataclass` as kblint declares its classes: the standard one, with a __repr__ and an __eq__ made
from shared code instead of written and compiled for each class.

The standard decorator writes the source of an __init__, a __repr__ and an __eq__ for each class
and compiles them: for kblint's classes, the two made here cost about 40 M instructions, some 8%
of importing what `kblint validate` needs, for methods a run hardly calls. These give the same
results: the same fields shown and compared, in the same order; a method the class defines itself
is kept, and a class that compares its fields cannot be hashed unless it says how. A frozen or
ordered class, or one that asks for a __hash__, gets the standard methods.
"""

from __future__ import annotations

import dataclasses
import reprlib

__all__ = ["dataclass"]


def dataclass(cls=None, /, **options):
    """dataclasses.dataclass(cls, **options), with the __repr__ and __eq__ made here."""

    def wrap(cls):
        if options.get("frozen") or options.get("order") or options.get("unsafe_hash"):
            return dataclasses.dataclass(cls, **options)
        own = cls.__dict__
        # as the standard decorator tells it: a __hash__ = None that Python set for an __eq__ the
        # class wrote is not the class's own choice
        class_hash = own.get("__hash__", dataclasses.MISSING)
        explicit_hash = not (class_hash is dataclasses.MISSING or (class_hash is None and "__eq__" in own))
        write_repr = options.get("repr", True) and "__repr__" not in own
        write_eq = options.get("eq", True) and "__eq__" not in own
        made = dataclasses.dataclass(cls, **{**options, "repr": False, "eq": False})
        fields = dataclasses.fields(made)
        if write_repr:
            made.__repr__ = _method(made, "__repr__", _repr_of(tuple(f.name for f in fields if f.repr)))
        if write_eq:
            made.__eq__ = _method(made, "__eq__", _eq_of(tuple(f.name for f in fields if f.compare)))
        if options.get("eq", True) and not explicit_hash:
            made.__hash__ = None
        return made

    return wrap if cls is None else wrap(cls)


def _method(cls, name: str, function):
    function.__qualname__ = f"{cls.__qualname__}.{name}"
    return function


def _repr_of(names: tuple[str, ...]):
    @reprlib.recursive_repr()
    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in names)
        return f"{self.__class__.__qualname__}({shown})"

    return __repr__


def _eq_of(names: tuple[str, ...]):
    def __eq__(self, other):
        if other.__class__ is not self.__class__:
            return NotImplemented
        return tuple([getattr(self, n) for n in names]) == tuple([getattr(other, n) for n in names])

    return __eq__
