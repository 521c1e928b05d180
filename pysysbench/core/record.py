"""``record``: a dataclass whose methods are shared functions, not code compiled per class.

Role: the package's records (options, specs, snapshots, summaries, ...) are declared as
dataclasses are, with ``@record`` in place of ``@dataclass``; the result *is* a dataclass
(``dataclasses.fields``, ``replace``, ``asdict``, pickling, ``frozen``, ``slots``, ``field()``
all work) and constructs, compares, hashes and prints exactly as the dataclass would.

Why: CPython 3.11's ``dataclass`` writes the source of every method it adds and compiles it
with its own ``exec`` (six for a frozen class: ``__init__``, ``__repr__``, ``__eq__``,
``__hash__``, ``__setattr__``, ``__delattr__``): 1-6 M instructions a class, and a plain
``run`` creates some thirty records while it imports, a sixth of its start-up
(bench/journal/2026-12-02.md, "Start-up").  Here nothing is compiled per class:

* ``__repr__``, ``__eq__`` and ``__hash__`` are the functions below, which read the fields at
  call time (slower per call; records are compared and printed in tests and messages, never
  per statement);
* a frozen record's ``__setattr__`` / ``__delattr__`` are closures over the class and its
  field names, with the dataclass's test and message;
* ``__init__`` is one code object compiled with this module, ``_init``, whose parameters are
  replaced per class (``CodeType.replace``: the dataclass's names, order, defaults and
  keyword-only marker), so Python itself binds the arguments -- the same signature, the same
  errors for a missing or an unexpected argument -- and the body hands ``locals()`` to
  ``_fill``, which assigns the fields in the dataclass's order (default factories, a slotted
  class's ``init=False`` defaults, ``object.__setattr__`` when frozen) and calls
  ``__post_init__``.  A class this does not cover (``InitVar`` or ``ClassVar`` pseudo-fields,
  a field named ``self``, a frozen record with dataclass bases or its own ``__setattr__``,
  ``order`` / ``unsafe_hash``) gets the dataclass's own generated methods.

Python 3.13's dataclasses compile all methods in one ``exec``; there this module's saving
shrinks, and it stays correct (tests/unit/test_record.py compares every class shape with
the dataclass it stands for).
"""

from __future__ import annotations

import builtins
import dataclasses
import reprlib
import types
from collections.abc import Callable
from typing import Any, TypeVar, dataclass_transform, overload

_T = TypeVar("_T")

__all__ = ["record"]


@reprlib.recursive_repr()
def _repr(self: Any) -> str:
    return (
        f"{self.__class__.__qualname__}("
        + ", ".join(f"{f.name}={getattr(self, f.name)!r}" for f in dataclasses.fields(self) if f.repr)
        + ")"
    )


def _values(self: Any, keep: Callable[[dataclasses.Field], bool]) -> tuple:
    return tuple(getattr(self, f.name) for f in dataclasses.fields(self) if keep(f))


def _compared(f: dataclasses.Field) -> bool:
    return f.compare


def _hashed(f: dataclasses.Field) -> bool:
    return f.compare if f.hash is None else f.hash


def _eq(self: Any, other: Any) -> Any:
    if other.__class__ is self.__class__:
        return _values(self, _compared) == _values(other, _compared)
    return NotImplemented


def _hash(self: Any) -> int:
    return hash(_values(self, _hashed))


class _Factory:
    """The default of a parameter whose field has a default factory (the dataclass's
    ``_HAS_DEFAULT_FACTORY``: the same text in a signature)."""

    def __repr__(self) -> str:
        return "<factory>"


_FACTORY = _Factory()
_NOTHING = object()


_plan: tuple = ()  # each record's __init__ has its own globals, where _plan is its class's


def _init(self):  # the template of every record's __init__: its parameters are replaced
    _fill(self, _plan, locals())


def _fill(self: Any, plan: tuple, given: dict) -> None:
    put, steps, post_init = plan
    for name, factory, default in steps:
        if default is _NOTHING:  # a parameter
            value = given[name]
            if factory is not None and value is _FACTORY:
                value = factory()
        elif factory is not None:  # init=False with a default factory
            value = factory()
        else:  # init=False with a default, slotted class
            value = default
        put(self, name, value)
    if post_init:
        self.__post_init__()


def _make_init(cls: type, frozen: bool, slots: bool) -> Callable[..., None]:
    """The dataclass's ``__init__`` for ``cls`` without compiling (``_init_fn``'s rules)."""
    fields = dataclasses.fields(cls)
    positional = [f for f in fields if f.init and not f.kw_only]
    keyword = [f for f in fields if f.init and f.kw_only]
    seen_default = False
    for f in positional:
        if not (f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING):
            seen_default = True
        elif seen_default:
            raise TypeError(f"non-default argument {f.name!r} follows default argument")

    def default_of(f: dataclasses.Field) -> Any:
        return f.default if f.default_factory is dataclasses.MISSING else _FACTORY

    steps = []
    for f in fields:
        factory = None if f.default_factory is dataclasses.MISSING else f.default_factory
        if f.init:
            steps.append((f.name, factory, _NOTHING))
        elif factory is not None:
            steps.append((f.name, factory, None))
        elif slots and f.default is not dataclasses.MISSING:
            steps.append((f.name, None, f.default))
    plan = (object.__setattr__ if frozen else setattr, tuple(steps), hasattr(cls, "__post_init__"))
    names = ("self", *(f.name for f in positional), *(f.name for f in keyword))
    qualname = f"{cls.__qualname__}.__init__"
    code = _init.__code__.replace(
        co_argcount=1 + len(positional),
        co_kwonlyargcount=len(keyword),
        co_nlocals=len(names),
        co_varnames=names,
        co_qualname=qualname,
    )
    defaults = tuple(default_of(f) for f in positional if default_of(f) is not dataclasses.MISSING)
    space = {"__builtins__": builtins, "__name__": cls.__module__, "_fill": _fill, "_plan": plan}
    fn = types.FunctionType(code, space, "__init__", defaults or None)
    fn.__kwdefaults__ = {f.name: default_of(f) for f in keyword if default_of(f) is not dataclasses.MISSING} or None
    fn.__qualname__ = qualname
    fn.__annotations__ = {**{f.name: f.type for f in positional}, **{f.name: f.type for f in keyword}, "return": None}
    return fn


def _frozen_guards(cls: type, names: frozenset) -> tuple[Callable, Callable]:
    """The dataclass's ``__setattr__`` / ``__delattr__`` of a frozen class (``cls``: the class as
    decorated, before a slotted copy is made, as the dataclass's own guards hold it)."""

    def __setattr__(self, name, value):
        if type(self) is cls or name in names:
            raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")
        super(cls, self).__setattr__(name, value)

    def __delattr__(self, name):
        if type(self) is cls or name in names:
            raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")
        super(cls, self).__delattr__(name)

    for fn in (__setattr__, __delattr__):
        fn.__qualname__ = f"{cls.__qualname__}.{fn.__name__}"
    return __setattr__, __delattr__


def _getstate(self: Any) -> list:  # a frozen slotted class's pickling, as the dataclass's
    return [getattr(self, f.name) for f in dataclasses.fields(self)]


def _setstate(self: Any, state: list) -> None:
    for f, value in zip(dataclasses.fields(self), state):
        object.__setattr__(self, f.name, value)


def _simple(c: type) -> bool:
    """Whether the shared ``__init__`` stands for the dataclass's on ``c``: no ``InitVar`` or
    ``ClassVar`` pseudo-field (in the class's annotations or a dataclass base's fields), no
    field named ``self``."""
    for name, annotation in c.__dict__.get("__annotations__", {}).items():
        text = annotation if isinstance(annotation, str) else builtins.repr(annotation)
        if "ClassVar" in text or "InitVar" in text or name == "self":
            return False
    for base in c.__mro__[1:]:
        fields = base.__dict__.get("__dataclass_fields__")
        if fields is not None and ("self" in fields or len(fields) != len(dataclasses.fields(base))):
            return False
    return True


@overload
def record(cls: type[_T], /) -> type[_T]: ...


@overload
def record(
    cls: None = None,
    /,
    *,
    repr: bool = True,
    eq: bool = True,
    frozen: bool = False,
    init: bool = True,
    order: bool = False,
    unsafe_hash: bool = False,
    match_args: bool = True,
    kw_only: bool = False,
    slots: bool = False,
    weakref_slot: bool = False,
) -> Callable[[type[_T]], type[_T]]: ...


@dataclass_transform(field_specifiers=(dataclasses.field, dataclasses.Field))  # type checkers see a dataclass
def record(
    cls: type | None = None,
    /,
    *,
    repr: bool = True,
    eq: bool = True,
    frozen: bool = False,
    init: bool = True,
    **params: Any,
) -> Any:
    """``@record`` / ``@record(frozen=True, slots=True, ...)``: as ``@dataclass`` with the same
    parameters.  ``order`` and ``unsafe_hash`` go to dataclass unchanged (it generates those)."""

    def wrap(c: Any) -> Any:  # Any: the methods are set on the class at run time
        if params.get("order") or params.get("unsafe_hash"):
            return dataclasses.dataclass(c, init=init, repr=repr, eq=eq, frozen=frozen, **params)
        own = dict(c.__dict__)  # what the class defines itself stays, as dataclass keeps it
        # a class body with __eq__ and no __hash__ gets __hash__ = None from Python: not explicit
        explicit_hash = "__hash__" in own and not (own["__hash__"] is None and "__eq__" in own)
        if not _simple(c):
            c = dataclasses.dataclass(c, init=init, repr=False, eq=False, frozen=frozen, **params)
        else:
            c = _fast_record(c, own, init, frozen, params)
        if repr and "__repr__" not in own:
            c.__repr__ = _repr
        if eq:
            if "__eq__" not in own:
                c.__eq__ = _eq
            if not explicit_hash:
                # dataclass's rule for eq without unsafe_hash: frozen hashes its fields, else unhashable
                c.__hash__ = _hash if frozen else None
        return c

    return wrap if cls is None else wrap(cls)


def _fast_record(c: Any, own: dict[str, Any], init: bool, frozen: bool, params: dict[str, Any]) -> Any:
    """A record without dataclass's generated methods: its fields, the shared ``__init__`` and,
    when frozen, the shared guards (``own``: what the class body defines itself)."""
    # the guards of a frozen record with dataclass bases (whose frozen checks need the
    # dataclass's own path) or with its own __setattr__ (an error) are the dataclass's
    shared_guards = frozen and not (
        "__setattr__" in own or "__delattr__" in own or any("__dataclass_fields__" in b.__dict__ for b in c.__mro__[1:])
    )
    undocumented = not own.get("__doc__")
    if undocumented:  # the dataclass's text needs the __init__ below: written after it
        c.__doc__ = "-"
    decorated = c
    c = dataclasses.dataclass(c, init=False, repr=False, eq=False, frozen=frozen and not shared_guards, **params)
    slots = bool(params.get("slots"))
    if init:
        made = _make_init(c, frozen, slots)  # checks the defaults' order in any case
        if "__init__" not in own:
            c.__init__ = made
    if shared_guards:
        c.__setattr__, c.__delattr__ = _frozen_guards(decorated, frozenset(f.name for f in dataclasses.fields(c)))
        if slots:
            if "__getstate__" not in own:
                c.__getstate__ = _getstate
            if "__setstate__" not in own:
                c.__setstate__ = _setstate
        c.__dataclass_params__.frozen = True  # what a subclass's frozen check reads
    c.__dataclass_params__.init = init
    if undocumented:
        c.__doc__ = _signature_doc(c)
    return c


def _signature_doc(c: Any) -> str:
    """dataclass's text for an undocumented class: its name and its __init__'s signature."""
    import inspect  # imported by asyncio already; a documented record never needs it

    try:
        text = str(inspect.signature(c)).replace(" -> None", "")
    except (TypeError, ValueError):
        text = ""
    return c.__name__ + text
