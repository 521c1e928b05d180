"""Workloads, registered by name; a test name may also be a user's ``.py`` file."""

from __future__ import annotations

import importlib.util
import inspect
import os

from ..core.errors import WorkloadError
from . import (  # noqa: F401  (registration side effect)  # noqa: F401  (sysbench's built-in tests: cpu memory threads mutex fileio)
    builtin,
    bulk_insert,
    fileio,
    olap,  # noqa: F401  (registers; legacy.py, which resolves sysbench 0.5 script paths, is imported for .lua names)
    oltp,
    select_random,
    stock,
)
from .base import LUA_SOURCE_PREFIX, REGISTRY, Env, ThreadContext, Workload, register

__all__ = ["REGISTRY", "Env", "ThreadContext", "Workload", "register", "find_workload"]


def find_workload(name: str, lua_bundled: bool = False) -> type[Workload]:
    """Resolve a test name: a bundled workload (also given as sysbench's script
    path, e.g. /usr/share/sysbench/oltp_read_write.lua), a Python file, or else a
    sysbench Lua script (a file, a module on the Lua path, ``-`` = standard input),
    run by the Lua engine.  ``lua_bundled`` (--lua-bundled) sends the bundled names
    to the Lua engine too, which then runs the sysbench package's own files.  A bundled
    or 0.5 name whose file (or the common file it loads) is on disk and edited runs
    through the Lua engine as well: the native workload reproduces the stock scripts
    only (stock.py)."""
    if name.startswith(LUA_SOURCE_PREFIX):  # a worker process resolving a parent's script
        return _script(name[len(LUA_SOURCE_PREFIX) :])
    if name.endswith(".py"):
        return _load_file(name)
    if not lua_bundled:
        native = _native(name)
        if native is not None:
            return native
    return _script(name)


def _script(name: str) -> type[Workload]:
    """A sysbench Lua script's workload class: the Lua engine is imported only here, so a
    bundled test never loads it (nor lupa, which only a running script imports)."""
    from ..lua import script_class

    return script_class(name)


def _native(name: str) -> type[Workload] | None:
    stem = os.path.basename(name)
    if stem.endswith(".lua"):
        from . import legacy

        old = legacy.resolve(name)  # tests/db/oltp.lua & co. (sysbench 0.5 and the sysbench-xa fork)
        if old is not None:
            return None if stock.edited_legacy(name) else old
        stem = stem[:-4]
    if stem in REGISTRY and not stock.edited_bundled(name):
        cls = REGISTRY[stem]
        cls.source = stem
        return cls
    return None


def _load_file(path: str) -> type[Workload]:
    if not os.path.isfile(path):
        raise WorkloadError(f"Cannot find benchmark '{path}': no such file")
    mod_name = "pysysbench_user_" + os.path.splitext(os.path.basename(path))[0].replace("-", "_")
    spec = importlib.util.spec_from_file_location(mod_name, path)
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        raise WorkloadError(f"cannot load workload file '{path}': {type(exc).__name__}: {exc}") from None
    found = [
        obj
        for obj in vars(module).values()
        if inspect.isclass(obj) and issubclass(obj, Workload) and obj.__module__ == mod_name
    ]
    if len(found) != 1:
        raise WorkloadError(
            f"workload file '{path}' must define exactly one subclass of "
            f"pysysbench.workloads.Workload (found {len(found)})"
        )
    cls = found[0]
    if not cls.name:
        cls.name = os.path.splitext(os.path.basename(path))[0]
    cls.source = os.path.abspath(path)  # worker processes load the same file
    return cls
