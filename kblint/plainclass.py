"""`dataclass` as kblint declares its classes: the standard one, with a __repr__ and an __eq__
shared by every class instead of written and compiled for each.

The standard decorator writes the source of an __init__, a __repr__ and an __eq__ for each class
and compiles them: for kblint's classes, the two kept here cost about 40 M instructions, some 8%
of importing what `kblint validate` needs, for methods a run hardly calls. These give the same results:
the fields shown and compared are the same, as is the order, and a class that compares its fields
cannot be hashed. A frozen class keeps the standard methods (its __hash__ goes with them).
"""

from __future__ import annotations

import dataclasses
import reprlib

__all__ = ["dataclass"]


def dataclass(cls=None, /, **options):
    """dataclasses.dataclass(cls, **options), with the shared __repr__ and __eq__ unless the class
    is frozen or OPTIONS say otherwise."""

    def wrap(cls):
        if options.get("frozen"):
            return dataclasses.dataclass(cls, **options)
        standard = dict(options)
        if standard.pop("repr", True):
            cls.__repr__ = _repr
        if standard.pop("eq", True):
            cls.__eq__ = _eq
            cls.__hash__ = None  # what the standard decorator does for a mutable class that compares
        return dataclasses.dataclass(cls, repr=False, eq=False, **standard)

    return wrap if cls is None else wrap(cls)


@reprlib.recursive_repr()
def _repr(self) -> str:
    shown = ", ".join(f"{f.name}={getattr(self, f.name)!r}" for f in dataclasses.fields(self) if f.repr)
    return f"{self.__class__.__qualname__}({shown})"


def _eq(self, other):
    if other.__class__ is not self.__class__:
        return NotImplemented
    compared = [f.name for f in dataclasses.fields(self) if f.compare]
    return tuple(getattr(self, n) for n in compared) == tuple(getattr(other, n) for n in compared)
