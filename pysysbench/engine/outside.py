"""Drivers and workloads registered from outside the package, carried to the run's children.

A driver or workload class a user's module registers (``drivers.base.register``,
``workloads.register``) lives in that module.  A worker process (``--workers``,
multiprocessing's ``spawn``) and a Ray actor are fresh interpreters: they import
pysysbench, whose own classes register themselves, but not the user's module, so the
name the run asks for was unknown there.  The parent lists where each such class came
from (:func:`origins`: its kind, name, module, qualified name and the module's file) and
passes the list with the child's start; the child calls :func:`bring_in` before it looks
a name up: it imports each module (by name; else from its file, as a Ray node on this
machine must) and registers the class when importing did not.

A class defined in the parent's main script (``__main__``) is found again in the child's
copy of it, which multiprocessing's spawn runs as ``__mp_main__`` (the script's
``if __name__ == "__main__":`` block does not run there); a Ray actor loads the script the
same way.  What cannot be brought in is a one-line error naming the class and why.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from collections.abc import Callable, Mapping
from types import ModuleType
from typing import Any

from ..core.errors import ConfigError
from ..core.record import record
from ..drivers.base import REGISTRY as DRIVERS
from ..drivers.base import register as register_driver
from ..workloads import REGISTRY as WORKLOADS
from ..workloads import register as register_workload

PACKAGE = __name__.split(".")[0]
MAIN_NAMES = ("__main__", "__mp_main__")  # a parent's script; spawn's copy of it in a child
# kind: (its registry, its register function, what the error calls it)
KINDS: dict[str, tuple[Mapping[str, type], Callable[[Any], object], str]] = {
    "driver": (DRIVERS, register_driver, "database driver"),
    "workload": (WORKLOADS, register_workload, "workload"),
}


@record(frozen=True)
class Origin:
    """Where a registered class came from: enough for another interpreter to find it."""

    kind: str  # "driver" or "workload"
    name: str  # its registered name
    module: str  # its module's name
    qualname: str  # its name in that module
    path: str | None  # the module's file (None: none, e.g. a class made in an interactive session)


def _outside(cls: type) -> bool:
    module = cls.__module__ or ""
    return module != PACKAGE and not module.startswith(PACKAGE + ".")


def origins() -> tuple[Origin, ...]:
    """Every registered driver and workload class defined outside pysysbench (empty in
    the usual run, whose classes are all the package's own)."""
    out = []
    for kind, (registry, _, _) in KINDS.items():
        for name, cls in sorted(registry.items()):
            if _outside(cls):
                module = sys.modules.get(cls.__module__)
                out.append(Origin(kind, name, cls.__module__, cls.__qualname__, getattr(module, "__file__", None)))
    return tuple(out)


def bring_in(carried: tuple[Origin, ...]) -> None:
    """In a child: register every class of ``carried`` that is not registered here yet
    (ConfigError, one line, when one cannot be found)."""
    for origin in carried:
        registry, register, what = KINDS[origin.kind]
        if origin.name in registry:
            continue
        try:
            module = _module(origin)
            if origin.name in registry:  # importing the module registered it
                continue
            cls: object = module
            for part in origin.qualname.split("."):
                cls = getattr(cls, part)
        except Exception as exc:  # whatever the user's module raises: the run ends with one line
            raise ConfigError(
                f"the {what} '{origin.name}' ({origin.module}.{origin.qualname}) cannot be loaded "
                f"in this worker process: {type(exc).__name__}: {exc} (define it in a module "
                "every worker can import)"
            ) from None
        register(cls)


def _module(origin: Origin) -> ModuleType:
    """The module ``origin`` names, imported (by name, else from its file)."""
    if origin.module in MAIN_NAMES:
        main = sys.modules.get("__mp_main__")
        if main is not None and origin.path is not None and getattr(main, "__file__", None) == origin.path:
            return main
        return _from_file("__mp_main__", origin.path)
    loaded = sys.modules.get(origin.module)
    if loaded is not None:
        return loaded
    try:
        return importlib.import_module(origin.module)
    except ImportError:
        if origin.path is None:
            raise
    return _from_file(origin.module, origin.path)


def _from_file(name: str, path: str | None) -> ModuleType:
    if path is None:
        raise ImportError(f"module {name} has no file")
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"no module can be loaded from {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module
