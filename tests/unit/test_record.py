"""pysysbench.core.record: a record behaves as the dataclass it stands for (repr, ==, hash, frozen,
slots, field options, inheritance, pickling, replace), class shape by class shape, and is
cheaper to create (fewer generated methods)."""

from __future__ import annotations

import dataclasses
import pickle
from dataclasses import InitVar, dataclass, field
from typing import ClassVar

import pytest

from pysysbench.core.record import record


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

    @deco()
    class Required:  # no docstring: the dataclass writes one from the signature
        a: int
        b: str = "x"
        c: list = field(default_factory=list)
        d: float = field(default=0.5, kw_only=True)
        e: dict = field(default_factory=dict, kw_only=True)
        f: int = field(default=3, init=False)
        g: list = field(default_factory=list, init=False)

    out["required"] = Required

    @deco(frozen=True, slots=True)
    class FrozenSlotsRequired:
        a: int
        b: tuple = field(default=(), kw_only=True)
        c: int = field(default=7, init=False)
        d: list = field(default_factory=list, init=False)

    out["frozen_slots_required"] = FrozenSlotsRequired

    @deco()
    class PostInit:
        a: int = 0
        b: int = field(default=0, init=False)

        def __post_init__(self):
            self.b = self.a * 2

    out["post_init"] = PostInit

    @deco(frozen=True)
    class FrozenPostInit:
        a: int = 0
        b: int = field(default=0, init=False)

        def __post_init__(self):
            object.__setattr__(self, "b", self.a + 1)

    out["frozen_post_init"] = FrozenPostInit

    @deco()
    class OwnInit:
        a: int = 0

        def __init__(self, x):
            self.a = x * 10

    out["own_init"] = OwnInit

    @deco()
    class PlainDerived(Plain):
        d: int = 4

    out["plain_derived"] = PlainDerived

    @deco(frozen=True)
    class Empty:
        pass

    out["empty"] = Empty
    return out


DC, REC = shapes(dataclass), shapes(record)


def _no_address(text: str) -> str:
    import re

    return re.sub(r" at 0x[0-9a-f]+", " at ADDR", text)


def behaviour(cls, shape):
    if shape in CONSTRUCTED:
        return constructed(cls, shape)
    if shape == "nested":
        a, b, c = cls(inner=cls()), cls(inner=cls()), cls(inner=1)
    else:
        a, b, c = cls(), cls(), cls(a=1)
    seen = {
        "repr": (_no_address(repr(a)), _no_address(repr(c))),
        "eq": (a == b, a == c, a != c, a == object()),
        "fields": [f.name for f in dataclasses.fields(cls)],
        "is_dataclass": dataclasses.is_dataclass(cls),
    }
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


# the shapes whose instances are made by calls of their own (required arguments, own __init__)
CONSTRUCTED = {
    "required",
    "frozen_slots_required",
    "post_init",
    "frozen_post_init",
    "own_init",
    "plain_derived",
    "empty",
}


def _call(cls, *args, **kwargs):
    try:
        obj = cls(*args, **kwargs)
    except TypeError as exc:
        return f"TypeError: {exc}"
    return {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)}


def constructed(cls, shape):
    """What a caller can see of a record's __init__ and its frozen guards, for comparison."""
    import inspect

    init = cls.__init__
    seen = {
        "doc": cls.__doc__,
        "signature": str(inspect.signature(cls)),
        "init_signature": str(inspect.signature(init)),
        "qualname": init.__qualname__,
        "name": init.__name__,
        "module": init.__module__,
        "annotations": getattr(init, "__annotations__", None),
        "match_args": getattr(cls, "__match_args__", None),
        "fields": [(f.name, f.init, f.kw_only) for f in dataclasses.fields(cls)],
    }
    calls = {
        "required": [
            ((1,), {}),
            ((1, "y", [2]), {"d": 1.0, "e": {"k": 1}}),
            ((), {}),
            ((1, 2, 3, 4), {}),
            ((1,), {"zz": 1}),
            ((1,), {"a": 2}),
            ((1,), {"f": 2}),
        ],
        "frozen_slots_required": [((1,), {}), ((1,), {"b": (2,)}), ((), {}), ((1, 2), {}), ((1,), {"c": 1})],
        "post_init": [((), {}), ((3,), {}), ((1, 2), {})],
        "frozen_post_init": [((), {}), ((3,), {}), ((), {"b": 1})],
        "own_init": [((2,), {}), ((), {})],
        "plain_derived": [((), {}), ((1, "y", [], 5), {}), ((), {"d": 1})],
        "empty": [((), {}), ((1,), {})],
    }[shape]
    seen["calls"] = [_call(cls, *args, **kwargs) for args, kwargs in calls]
    first = cls(*calls[0][0], **calls[0][1])
    if shape == "required":  # each call's factories give new objects
        assert first.c is not cls(1).c and first.g is not cls(1).g
    seen["state"] = first.__getstate__() if hasattr(first, "__getstate__") else None
    seen["replace"] = _no_address(repr(dataclasses.replace(first))) if shape not in ("own_init",) else None
    for name in ("a", "zz"):
        for attempt in ("set", "del"):
            try:
                setattr(first, name, 9) if attempt == "set" else delattr(first, name)
                seen[f"{attempt} {name}"] = getattr(first, name, "gone")
            except (dataclasses.FrozenInstanceError, AttributeError, TypeError) as exc:
                seen[f"{attempt} {name}"] = f"{type(exc).__name__}: {exc}"
    return seen


@record(frozen=True, slots=True)
class PickledRequired:
    a: int
    b: tuple = field(default=(), kw_only=True)


def test_a_records_init_binds_as_the_dataclass_does():
    """The same parameters, defaults and errors (Python binds them: the shared __init__ has the
    dataclass's signature); a default after a non-default fails as the dataclass does."""
    with pytest.raises(TypeError, match="non-default argument 'b' follows default argument"):

        @record
        class Bad:
            a: int = 0
            b: int

    obj = PickledRequired(1, b=(2,))
    assert pickle.loads(pickle.dumps(obj)) == obj


def test_records_with_pseudo_fields_and_frozen_bases_are_the_dataclass_s():
    """InitVar / ClassVar, a frozen record derived from another: what the shared methods do not
    cover is the dataclass's own path, with its checks."""
    for deco in (dataclass, record):

        @deco
        class WithInitVar:
            a: int = 0
            b: InitVar[int] = 1
            c: ClassVar[int] = 5

            def __post_init__(self, b):
                self.a += b

        assert WithInitVar(2, 3).a == 5 and WithInitVar.c == 5

        @deco(frozen=True)
        class FrozenBase:
            a: int = 0

        with pytest.raises(TypeError, match="cannot inherit non-frozen dataclass from a frozen one"):

            @deco
            class NotFrozen(FrozenBase):
                b: int = 0

        @deco
        class PlainBase:
            a: int = 0

        with pytest.raises(TypeError, match="cannot inherit frozen dataclass from a non-frozen one"):

            @deco(frozen=True)
            class Frozen(PlainBase):
                b: int = 0

        with pytest.raises(TypeError, match="Cannot overwrite attribute __setattr__"):

            @deco(frozen=True)
            class OwnSetattr:
                a: int = 0

                def __setattr__(self, name, value):
                    pass

    with pytest.raises(TypeError, match="cannot inherit frozen dataclass from a non-frozen one"):

        @dataclass(frozen=True)
        class FrozenOnARecord(REC["plain"]):
            d: int = 0

    @dataclass(frozen=True)
    class DataclassOnAFrozenRecord(REC["frozen"]):
        d: int = 0

    assert DataclassOnAFrozenRecord(1, "y", 2).d == 2


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


def test_a_record_compiles_no_method():
    """The point of it: where a dataclass compiles up to six methods per class, a record compiles none."""
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
    # the two are the "derived" shape's guards: a frozen class with dataclass bases keeps the dataclass's
    assert with_dc > 40 and with_record == 2, (with_record, with_dc)
