"""kblint's dataclass: the standard one, with shared __repr__ and __eq__ that give the same results."""

from __future__ import annotations

import dataclasses

import pytest

from kblint.plainclass import dataclass


def _pair(**options):
    """The same class made by kblint's dataclass and by the standard one."""
    made = []
    for decorate in (dataclass, dataclasses.dataclass):
        namespace = {
            "__annotations__": {"a": "int", "b": "list", "hidden": "str", "ignored": "int"},
            "b": dataclasses.field(default_factory=list),
            "hidden": dataclasses.field(default="h", repr=False),
            "ignored": dataclasses.field(default=0, compare=False),
        }
        made.append(decorate(**options)(type("Thing", (), namespace)))
    return made


@pytest.mark.parametrize("options", [{}, {"slots": True}, {"repr": False}, {"eq": False}, {"frozen": True}])
def test_same_repr_eq_and_hash_as_the_standard_dataclass(options):
    ours, standard = _pair(**options)
    for args in [(1,), (1, [2, "x"]), (2, [], "other", 5)]:
        x, y = ours(*args), standard(*args)
        if options.get("repr", True):
            assert repr(x) == repr(y)
        assert (x == ours(*args)) == (y == standard(*args))
        assert (x == ours(9)) == (y == standard(9))
        assert (x == ours(*args[:1], [0], *args[2:])) == (y == standard(*args[:1], [0], *args[2:]))
        assert x.__eq__(object()) is NotImplemented or not options.get("eq", True)
        assert (x.__class__.__hash__ is None) == (y.__class__.__hash__ is None)
        if options.get("frozen"):  # the standard methods, __hash__ with them
            assert hash(ours(1, ())) == hash(standard(1, ()))
    assert dataclasses.fields(ours) and [f.name for f in dataclasses.fields(ours)] == \
        [f.name for f in dataclasses.fields(standard)]
    assert ("__slots__" in ours.__dict__) == ("__slots__" in standard.__dict__)


def test_fields_that_are_not_compared_do_not_count():
    ours, _ = _pair()
    assert ours(1, [], "h", 1) == ours(1, [], "h", 2)
    assert ours(1, [], "h") != ours(1, [], "i")


def test_a_repr_that_reaches_itself_does_not_recurse():
    ours, standard = _pair()
    x, y = ours(1), standard(1)
    x.b.append(x)
    y.b.append(y)
    assert repr(x) == repr(y)


def _both(make):
    """MAKE(decorator) with kblint's dataclass and with the standard one."""
    return make(dataclass), make(dataclasses.dataclass)


def test_methods_the_class_writes_itself_are_kept():
    def make(decorate):
        @decorate
        class Own:
            a: int

            def __repr__(self):
                return "own"

            def __eq__(self, other):
                return True

            def __hash__(self):
                return 7

        return Own

    for cls in _both(make):
        assert repr(cls(1)) == "own" and cls(1) == cls(2) and hash(cls(1)) == 7


def test_a_subclass_compares_and_shows_what_the_standard_one_does():
    def make(decorate):
        @decorate
        class Base:
            a: int

        @decorate(eq=False, repr=False)
        class Quiet(Base):
            b: int = 0

        @decorate
        class Loud(Base):
            b: int = 0

        return Quiet, Loud

    (quiet, loud), (quiet_std, loud_std) = _both(make)
    assert (quiet(1, 2) == quiet(1, 3)) == (quiet_std(1, 2) == quiet_std(1, 3))
    assert repr(quiet(1, 2)).split("(", 1)[1] == repr(quiet_std(1, 2)).split("(", 1)[1]
    assert (loud(1, 2) == loud(1, 3)) == (loud_std(1, 2) == loud_std(1, 3)) is False
    assert repr(loud(1, 2)).split("(", 1)[1] == repr(loud_std(1, 2)).split("(", 1)[1] == "a=1, b=2)"


def test_ordered_classes_get_the_standard_methods():
    def make(decorate):
        @decorate(order=True)
        class Ordered:
            a: int

        return Ordered

    ours, standard = _both(make)
    assert ours(1) < ours(2) and standard(1) < standard(2) and ours(1) == ours(1)
