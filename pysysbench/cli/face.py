"""Which face the command line shows: pysysbench's own, or sysbench 1.0.20's.

Role: decide once per process (``select``, from the program name and the
environment) and answer the questions whose answer differs between the faces:
the first line, ``--version``, the default driver, the program name in texts.

* The **sysbench face** (``strict``): chosen when the program is invoked under
  the name ``sysbench`` (a symbolic link to or a copy of the ``pysysbench``
  console script), or when ``PYSYSBENCH_FACE=sysbench`` is set (for
  ``python -m pysysbench`` and wrappers that cannot rename the program).
  Everything a person or a parser observes is sysbench 1.0.20's: the first line,
  ``--version``, ``--help`` (1.0.20's text, :mod:`.sysbench_help`), the default
  driver ``mysql``, the commands and drivers listed, error texts.  pysysbench's
  extra options and subcommands keep working, unlisted.
* The **pysysbench face** (default): pysysbench's name, version and extras, in
  sysbench's line shapes (the first line has as many whitespace-separated
  tokens as sysbench's, so positional parsers find a version where they look).
  ``PYSYSBENCH_FACE=pysysbench`` forces it even under the name ``sysbench``.
"""

from __future__ import annotations

import os
import sys

from ..core.record import record
from ..core.switches import FACE as FACE_SWITCH
from ..version import __version__

ENV = FACE_SWITCH.name
SYSBENCH_VERSION = "1.0.20"


@record(frozen=True)
class Face:
    """The face a process shows (pysysbench's own, or sysbench 1.0.20's when ``strict``)."""

    strict: bool

    @property
    def program(self) -> str:
        return "sysbench" if self.strict else "pysysbench"

    @property
    def version(self) -> str:
        return SYSBENCH_VERSION if self.strict else __version__

    def version_line(self) -> str:
        return f"{self.program} {self.version}"

    def header(self) -> str:
        """The first line and its blank (sysbench: ``sysbench 1.0.20 (using bundled LuaJIT
        2.1.0-beta2)``: six tokens).  The runtime named is the one really used: the
        embedded LuaJIT in the sysbench face, CPython in pysysbench's."""
        runtime = lua_runtime() if self.strict else python_runtime()
        return f"{self.version_line()} (using {runtime})\n"

    @property
    def default_driver(self) -> str | None:
        """The driver without --db-driver and without driver options (None: pysysbench's sqlite)."""
        return "mysql" if self.strict else None


PYSYSBENCH = Face(strict=False)
SYSBENCH = Face(strict=True)
_active = PYSYSBENCH


def select(argv0: str | None = None, env: dict[str, str] | None = None) -> Face:
    """The face for a process started as ``argv0`` with the environment ``env`` (None: this one)."""
    wanted = FACE_SWITCH.value(env)
    if wanted in ("sysbench", "pysysbench"):
        return SYSBENCH if wanted == "sysbench" else PYSYSBENCH
    name = os.path.basename(sys.argv[0] if argv0 is None else argv0)
    return SYSBENCH if name == "sysbench" else PYSYSBENCH


def use(face: Face) -> None:
    global _active
    _active = face


def active() -> Face:
    return _active


def python_runtime() -> str:
    impl = sys.implementation.name
    impl = "CPython" if impl == "cpython" else impl
    return f"system {impl} {'.'.join(map(str, sys.version_info[:3]))}"


def lua_runtime() -> str:
    """``bundled LuaJIT 2.1.x`` from lupa's embedded runtime; without lupa, the
    version sysbench 1.0.20 bundles (the shape parsers expect)."""
    try:
        from ..lua.runtime import runtime_module
        module, _ = runtime_module()
        version = module.LuaRuntime().eval("jit and jit.version or _VERSION")
    except Exception:   # no lupa: the face still answers with sysbench's shape
        return "bundled LuaJIT 2.1.0-beta2"
    return f"bundled {version}"
