"""The declared workload contract: every trait the engine, the outputs and the CLI read
from a workload, with its type, its default and what it means.

:class:`Traits` is the one list: each trait is a class attribute annotated
``Annotated[type, "meaning"]`` with its default.  :class:`~.base.Workload` inherits
it, so the readers write ``workload.batched``, never ``getattr(workload, "batched",
False)``, and a workload sets only the traits where it differs.  The hooks (``prepare``,
``run_intro``, ``after_parse``, ...) are :class:`~.base.Workload`'s methods.

:func:`check` runs when a workload class is made (``Workload.__init_subclass__``: the
bundled workloads, the built-in tests, the 0.5 scripts, each Lua script's class, a
user's ``.py`` file): a trait of the wrong type, a hook that is no function, or an
attribute one letter away from a trait (``os_thread``, ``connect``) fails with one
line naming the class.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from types import UnionType
from typing import (
    Annotated,
    Any,
    NamedTuple,
    Protocol,
    Union,
    get_args,
    get_origin,
    get_type_hints,
    runtime_checkable,
)

from ..core.errors import WorkloadError
from ..core.options import Option

WHERE = "pysysbench/workloads/contract.py"


@runtime_checkable
class ReportHooks(Protocol):
    """A workload's own reports (``Traits.reports``): each True when it printed the report
    in place of the text's."""

    def attach(self, say: Callable[[str], None], summary_block: Callable[..., str]) -> None:
        """The CLI's printer and its sysbench summary renderer (output/text.py)."""

    def sql(self, counts: Any) -> bool:
        """Whether the text reports show "SQL statistics" (else sysbench's generic ones)."""

    def intermediate(self, st: Any) -> bool: ...

    def checkpoint(self, summary: Any) -> bool: ...

    def cumulative(self, summary: Any) -> bool: ...


class Traits:
    """Every workload trait: its type, its default, what it means."""

    # --- what it is
    name: Annotated[str, "the test name: the registry's key, shown by help and the reports"] = ""
    options: Annotated[list[Option], "the options it declares (parsed in phase 2, listed by help)"] = []
    commands: Annotated[tuple[str, ...], "the commands it implements"] = ("prepare", "run", "cleanup", "help")
    source: Annotated[
        str, "how find_workload() found it (a name, a .py path, lua:<script>): worker processes resolve it again"
    ] = ""
    # --- the engine
    connects: Annotated[bool, "the engine opens each thread's connection (False: the workload does)"] = True
    holds_loop: Annotated[bool, "its code may hold the event loop (Lua): engine/loopwatch.py keeps the stop bounds"] = (
        False
    )
    os_threads: Annotated[
        bool, "each thread is an OS thread and the run stays in one process (a built-in test's shared state)"
    ] = False
    batched: Annotated[
        bool,
        "the worker runs a thread's events in C batches (engine/worker.py "
        "_batch_loop; the runner is ctx.state['runner'])",
    ] = False
    own_event_limit: Annotated[bool, "--events does not apply to a batched run: the test counts its own events"] = False
    ready_notes: Annotated[tuple[str, ...], "warnings check_ready found, printed before the run starts"] = ()
    # --- the reports
    tx_per_event: Annotated[int, "COMMITs per event: the 0.5 text's transactions (0.5 counted them by COMMIT)"] = 1
    reports: Annotated[
        ReportHooks | None, "its own report hooks (a Lua script's, a built-in test's); None: the text reports"
    ] = None
    measures_the_client: Annotated[
        bool, "the client machine is the subject: no 'client may be the bottleneck' warning"
    ] = False
    # --- the command line
    runs_own_commands: Annotated[bool, "its dispatch() runs every command, sysbench's way (a Lua script)"] = False
    help_text: Annotated[str, "help's text byte for byte (a built-in test); empty: help lists the options"] = ""
    logs_messages: Annotated[
        bool, "prepare/cleanup lines are log lines (--verbosity applies), not a script's print()"
    ] = False
    accepts_unknown_options: Annotated[bool, "an unknown option is a WARNING, not an error (sysbench 0.5)"] = False
    loads_per_node: Annotated[bool, "prepare and cleanup honour --load-nodes (the bulk loader's sbtest tables)"] = False
    write_ids: Annotated[
        dict[str, int] | None,
        "its writing statements (ctx.stmts names) -> the position of the row's id among their arguments, "
        "for --shard-nodes (engine/spans.py); None: it does not say",
    ] = None
    inert_options: Annotated[dict[str, str], "option name -> why it has no effect (a WARNING when given)"] = {}


class Trait(NamedTuple):
    """One row of the contract."""

    name: str
    type: Any  # the annotation, ``Annotated`` stripped
    default: Any
    doc: str

    def shown(self) -> str:
        """The type as written (``bool``, ``tuple[str, ...]``)."""
        plain = isinstance(self.type, type) and not get_args(self.type)
        return self.type.__name__ if plain else re.sub(r"\b(?:\w+\.)+", "", str(self.type))


def _table() -> dict[str, Trait]:
    """The contract's rows, read from :class:`Traits`' annotations (``Annotated[type, doc]``)."""
    out = {}
    for name, hint in get_type_hints(Traits, include_extras=True).items():
        kind, doc = get_args(hint)[:2]
        out[name] = Trait(name, kind, vars(Traits)[name], doc)
    return out


TRAITS: dict[str, Trait] = _table()


@functools.cache
def _shape(hint: Any) -> tuple[Any, tuple]:
    return get_origin(hint), get_args(hint)


def conforms(value: Any, hint: Any) -> bool:
    """Whether ``value`` is of the type ``hint`` (the forms the traits use)."""
    origin, args = _shape(hint)
    if origin in (Union, UnionType):
        return any(conforms(value, arg) for arg in args)
    if hint is None or hint is type(None):
        return value is None
    if origin is tuple:
        return isinstance(value, tuple) and all(conforms(item, args[0]) for item in value)
    if origin is list:
        return isinstance(value, list) and all(conforms(item, args[0]) for item in value)
    if origin is dict:
        return isinstance(value, dict) and all(conforms(k, args[0]) and conforms(v, args[1]) for k, v in value.items())
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, hint)


def _one_off(name: str) -> set[str]:
    """``name`` and every string one deleted letter away: two names whose sets meet are one
    insertion, deletion, substitution or swap apart."""
    return {name} | {name[:i] + name[i + 1 :] for i in range(len(name))}


_NEAR = {near: name for name in TRAITS for near in _one_off(name)}


@functools.cache
def _near_trait(name: str) -> str | None:
    """The trait ``name`` looks like a typo of: one letter away, or its start or it with up to
    two more letters (``batch`` for ``batched``)."""
    near = next((_NEAR[one] for one in _one_off(name) if one in _NEAR), None)
    if near is None:
        near = next(
            (t for t in TRAITS if abs(len(t) - len(name)) <= 2 and (t.startswith(name) or name.startswith(t))), None
        )
    return near


def _own(cls: type, base: type) -> set[str]:
    """The attributes ``cls`` sets itself or takes from a mixin (a class that is no workload)."""
    out: set[str] = set()
    for klass in cls.__mro__:
        if klass is cls or not (issubclass(klass, base) or klass in base.__mro__):
            out.update(vars(klass))
    return out


def _problem(cls: type, base: type, name: str) -> str | None:
    """What is wrong with ``cls``'s attribute ``name``, or None."""
    value = getattr(cls, name)
    trait = TRAITS.get(name)
    if trait is not None:
        if conforms(value, trait.type):
            return None
        return f"trait '{name}' must be {trait.shown()}, not {type(value).__name__} ({value!r})"
    if name.startswith("_"):
        return None
    if hasattr(base, name):
        if callable(getattr(base, name)) and not callable(value):
            return f"'{name}' must be a method, as Workload.{name} is (not {value!r})"
        return None
    near = _near_trait(name)
    return None if near is None else f"'{name}' is no trait of the workload contract: did you mean '{near}'?"


def check(cls: type, base: type) -> None:
    """Raise :class:`WorkloadError` when the workload class ``cls`` (a subclass of ``base``)
    breaks the contract."""
    for name in _own(cls, base):
        problem = _problem(cls, base, name)
        if problem is not None:
            raise WorkloadError(
                f"workload class {cls.__qualname__} ({cls.__module__}): {problem} (the traits: {WHERE})"
            )
