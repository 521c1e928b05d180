"""``record``: a dataclass whose ``__repr__``, ``__eq__`` and ``__hash__`` are shared, not generated.

Role: the package's records (options, specs, snapshots, summaries, ...) are declared as
dataclasses are, with ``@record`` in place of ``@dataclass``; the result *is* a dataclass
(``dataclasses.fields``, ``replace``, ``asdict``, pickling, ``frozen``, ``slots``, ``field()``
all work) and compares, hashes and prints exactly as the dataclass would.

Why: CPython 3.11's ``dataclass`` compiles every method it adds with its own ``exec`` (six for
a frozen class: ``__init__``, ``__repr__``, ``__eq__``, ``__hash__``, ``__setattr__``,
``__delattr__``), about 3 M instructions a class, and a plain ``run`` creates some thirty
records while it imports: a fifth of its start-up (docs/performance.md, "Start-up").  Here
only the methods that must be generated per class are (``__init__``, and for a frozen record
its two attribute guards); ``__repr__``, ``__eq__`` and ``__hash__`` are the functions below,
which read the fields at call time (slower per call; records are compared and printed in
tests and messages, never per statement).  Python 3.13's dataclasses compile all methods in
one ``exec``; there this module's saving shrinks, and it stays correct.
"""

from __future__ import annotations

import dataclasses
import reprlib
from typing import Any, Callable

__all__ = ["record"]


@reprlib.recursive_repr()
def _repr(self: Any) -> str:
    return (f"{self.__class__.__qualname__}("
            + ", ".join(f"{f.name}={getattr(self, f.name)!r}" for f in dataclasses.fields(self) if f.repr) + ")")


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


def record(cls: type | None = None, /, *, repr: bool = True, eq: bool = True, frozen: bool = False,
           **params: Any) -> Any:
    """``@record`` / ``@record(frozen=True, slots=True, ...)``: as ``@dataclass`` with the same
    parameters.  ``order`` and ``unsafe_hash`` go to dataclass unchanged (it generates those)."""
    def wrap(c: type) -> type:
        if params.get("order") or params.get("unsafe_hash"):
            return dataclasses.dataclass(c, repr=repr, eq=eq, frozen=frozen, **params)
        own = dict(c.__dict__)         # what the class defines itself stays, as dataclass keeps it
        # a class body with __eq__ and no __hash__ gets __hash__ = None from Python: not explicit
        explicit_hash = "__hash__" in own and not (own["__hash__"] is None and "__eq__" in own)
        c = dataclasses.dataclass(c, repr=False, eq=False, frozen=frozen, **params)
        if repr and "__repr__" not in own:
            c.__repr__ = _repr
        if eq:
            if "__eq__" not in own:
                c.__eq__ = _eq
            if not explicit_hash:
                # dataclass's rule for eq without unsafe_hash: frozen hashes its fields, else unhashable
                c.__hash__ = _hash if frozen else None   # type: ignore[assignment]
        return c
    return wrap if cls is None else wrap(cls)
