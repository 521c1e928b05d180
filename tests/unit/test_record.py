"""pysysbench.record: a record behaves as the dataclass it stands for (repr, ==, hash, frozen,
slots, field options, inheritance, pickling, replace), class shape by class shape, and is
cheaper to create (fewer generated methods)."""

from __future__ import annotations

import dataclasses
import pickle
from dataclasses import dataclass, field

import pytest

from pysysbench.record import record


def shapes(deco):
    """The same class bodies under ``deco`` (dataclass or record); module-level names so
    instances pickle."""
    out = {}

    @deco()
    class Plain:
        a: int = 0
        b: str = "x"
        c: list = field(default_factory=list)
    out["plain"] = Plain

    @deco(frozen=True)
    class Frozen:
        a: int = 0
        b: str = "x"
    out["frozen"] = Frozen

    @deco(slots=True)
    class Slots:
        a: int = 0
        b: float = 1.5
    out["slots"] = Slots

    @deco(frozen=True, slots=True)
    class FrozenSlots:
        a: int = 0
        b: tuple = ()
    out["frozen_slots"] = FrozenSlots

    @deco(eq=False)
    class NoEq:
        a: int = 0
    out["no_eq"] = NoEq

    @deco(repr=False)
    class NoRepr:
        a: int = 0
    out["no_repr"] = NoRepr

    @deco(frozen=True)
    class FieldOptions:
        a: int = 0
        hidden: str = field(default="secret", repr=False)
        noise: float = field(default=0.0, compare=False)
        unhashed: int = field(default=0, hash=False)
    out["field_options"] = FieldOptions

    @deco(frozen=True)
    class Base:
        a: int = 0

    @deco(frozen=True)
    class Derived(Base):
        b: int = 0
    out["derived"] = Derived

    @deco(frozen=True)
    class OwnEq:
        a: int = 0

        def __eq__(self, other):
            return isinstance(other, OwnEq)
    out["own_eq"] = OwnEq

    @deco(frozen=True)
    class Nested:
        inner: object = None
    out["nested"] = Nested
    return out


DC, REC = shapes(dataclass), shapes(record)


def _no_address(text: str) -> str:
    import re
    return re.sub(r" at 0x[0-9a-f]+", " at ADDR", text)


def behaviour(cls, shape):
    if shape == "nested":
        a, b, c = cls(inner=cls()), cls(inner=cls()), cls(inner=1)
    else:
        a, b, c = cls(), cls(), cls(a=1)
    seen = {"repr": (_no_address(repr(a)), _no_address(repr(c))), "eq": (a == b, a == c, a != c, a == object()),
            "fields": [f.name for f in dataclasses.fields(cls)], "is_dataclass": dataclasses.is_dataclass(cls)}
    try:
        seen["hash"] = (hash(a) == hash(b), hash(a) == hash(c))
    except TypeError as exc:
        seen["hash"] = f"TypeError: {exc}".replace(cls.__qualname__, "C")
    try:
        setattr(a, seen["fields"][0], 5)
        seen["assign"] = getattr(a, seen["fields"][0])
    except dataclasses.FrozenInstanceError as exc:
        seen["assign"] = f"frozen: {exc}"
    seen["replace"] = _no_address(repr(dataclasses.replace(c, **({"inner": 2} if shape == "nested" else {"a": 2}))))
    seen["asdict"] = dataclasses.asdict(c) if shape != "nested" else None
    return seen


@pytest.mark.parametrize("shape", sorted(DC))
def test_a_record_behaves_as_its_dataclass(shape):
    assert behaviour(REC[shape], shape) == behaviour(DC[shape], shape)


@record(frozen=True, slots=True)
class Pickled:
    a: int = 0
    b: str = ""


@record
class PickledPlain:
    a: int = 0
    c: list = field(default_factory=list)


def test_records_pickle_and_compare_after_the_round_trip():
    for obj in (Pickled(3, "x"), PickledPlain(2, [1])):
        back = pickle.loads(pickle.dumps(obj))
        assert back == obj and back is not obj and repr(back) == repr(obj)
    assert hash(pickle.loads(pickle.dumps(Pickled(1, "y")))) == hash(Pickled(1, "y"))


def test_recursive_values_repr_as_dataclasses_do():
    rec, dc = REC["plain"](c=[]), DC["plain"](c=[])
    rec.c.append(rec)
    dc.c.append(dc)
    assert repr(rec) == repr(dc)


def test_a_record_generates_fewer_methods():
    """The point of it: a frozen record compiles three methods where the dataclass compiles six."""
    if not hasattr(dataclasses, "_create_fn"):
        pytest.skip("this Python's dataclasses build their methods another way (3.13: one exec per class)")
    made = []
    real = dataclasses._create_fn

    def counting(name, *args, **kwargs):
        made.append(name)
        return real(name, *args, **kwargs)

    dataclasses._create_fn = counting
    try:
        shapes(dataclass)
        with_dc = len(made)
        made.clear()
        shapes(record)
        with_record = len(made)
    finally:
        dataclasses._create_fn = real
    assert with_record < with_dc * 0.6, (with_record, with_dc)
