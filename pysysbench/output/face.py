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

Each face copies one sysbench version (``compat``): 1.0.20 by default, 1.1.0 with
``--sysbench-compat=1.1`` (command line or config file) or ``PYSYSBENCH_COMPAT=1.1``
(the command line wins).  Under 1.1 the sysbench face's first line, ``--version`` and
``--help`` are 1.1.0's, and in either face the defaults and the report are 1.1's
(the option layer asks :func:`active` for them).
"""

from __future__ import annotations

import os
import sys

from ..core.errors import UsageError
from ..core.record import record
from ..core.switches import COMPAT as COMPAT_SWITCH
from ..core.switches import FACE as FACE_SWITCH
from ..version import SYSBENCH_RELEASES, __version__

ENV = FACE_SWITCH.name
SYSBENCH_VERSIONS = SYSBENCH_RELEASES
DEFAULT_COMPAT = "1.0"
SYSBENCH_VERSION = SYSBENCH_VERSIONS[DEFAULT_COMPAT]
# the LuaJIT each release bundles: the first line's runtime when lupa is missing
BUNDLED_LUAJIT = {"1.0": "bundled LuaJIT 2.1.0-beta2", "1.1": "bundled LuaJIT 2.1.0-beta3"}


@record(frozen=True)
class Face:
    """The face a process shows (pysysbench's own, or sysbench's when ``strict``), copying
    the sysbench release ``compat`` names (a key of :data:`SYSBENCH_VERSIONS`)."""

    strict: bool
    compat: str = DEFAULT_COMPAT

    @property
    def program(self) -> str:
        return "sysbench" if self.strict else "pysysbench"

    @property
    def version(self) -> str:
        return SYSBENCH_VERSIONS[self.compat] if self.strict else __version__

    def version_line(self) -> str:
        return f"{self.program} {self.version}"

    def header(self) -> str:
        """The first line and its blank (sysbench: ``sysbench 1.0.20 (using bundled LuaJIT
        2.1.0-beta2)``, ``sysbench 1.1.0 (using bundled LuaJIT 2.1.0-beta3)``: six tokens).
        The runtime named is the one really used: the embedded LuaJIT in the 1.0 sysbench
        face, CPython in pysysbench's; the 1.1 face prints 1.1.0's line as the binary does
        (its bundled LuaJIT's version, whatever lupa embeds)."""
        if self.strict and self.compat == "1.1":
            runtime = BUNDLED_LUAJIT["1.1"]
        else:
            runtime = lua_runtime(BUNDLED_LUAJIT[self.compat]) if self.strict else python_runtime()
        return f"{self.version_line()} (using {runtime})\n"

    @property
    def default_driver(self) -> str | None:
        """The driver without --db-driver and without driver options (None: pysysbench's sqlite)."""
        return "mysql" if self.strict else None

    def with_compat(self, compat: str) -> Face:
        """This face copying another sysbench release (``compat`` checked: :func:`compat_value`)."""
        return Face(self.strict, compat_value(compat, "--sysbench-compat"))


PYSYSBENCH = Face(strict=False)
SYSBENCH = Face(strict=True)
_chosen = PYSYSBENCH  # the process's face (use)
_active = PYSYSBENCH  # that face copying the release the command being parsed asks for (copying)


def select(argv0: str | None = None, env: dict[str, str] | None = None) -> Face:
    """The face for a process started as ``argv0`` with the environment ``env`` (None: this
    one); a bad ``PYSYSBENCH_COMPAT`` raises :class:`UsageError`."""
    compat = compat_value(COMPAT_SWITCH.value(env) or DEFAULT_COMPAT, COMPAT_SWITCH.name)
    wanted = FACE_SWITCH.value(env)
    if wanted in ("sysbench", "pysysbench"):
        return Face(wanted == "sysbench", compat)
    name = os.path.basename(sys.argv[0] if argv0 is None else argv0)
    return Face(name == "sysbench", compat)


def compat_value(value: str, where: str) -> str:
    """``value`` when it names a sysbench release pysysbench copies; else one line saying so."""
    if value not in SYSBENCH_VERSIONS:
        raise UsageError(f"invalid value for {where}: '{value}' (choose {' or '.join(SYSBENCH_VERSIONS)})")
    return value


def use(face: Face) -> None:
    global _active, _chosen
    _active = _chosen = face


def copying(compat: str | None) -> None:
    """The command being parsed asks for a release (--sysbench-compat; None: the process's,
    so one command's choice never outlives it, as in a campaign)."""
    global _active
    _active = _chosen if compat is None else _chosen.with_compat(compat)


def active() -> Face:
    return _active


def copied_release() -> str:
    """The sysbench release the active face copies ("1.0.20", "1.1.0"): the result file's record."""
    return SYSBENCH_VERSIONS[_active.compat]


def python_runtime() -> str:
    impl = sys.implementation.name
    impl = "CPython" if impl == "cpython" else impl
    return f"system {impl} {'.'.join(map(str, sys.version_info[:3]))}"


def lua_runtime(fallback: str = BUNDLED_LUAJIT[DEFAULT_COMPAT]) -> str:
    """``bundled LuaJIT 2.1.x`` from lupa's embedded runtime; without lupa, ``fallback``:
    the version the copied sysbench bundles (the shape parsers expect)."""
    try:
        from ..lua.runtime import runtime_module

        module, _ = runtime_module()
        version = module.LuaRuntime().eval("jit and jit.version or _VERSION")
    except Exception:  # no lupa: the face still answers with sysbench's shape
        return fallback
    return f"bundled {version}"
