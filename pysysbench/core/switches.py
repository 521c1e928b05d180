"""Every environment variable pysysbench reads: the one module that reads them.

Role: each ``PYSYSBENCH_*`` switch is declared here once -- its name, its values, its
default and why it exists -- and every other module asks its :class:`Switch` instead of
``os.environ`` (tests/unit/test_switches.py fails on a read anywhere else).  Reading stays
where and when each caller did it: ``native.py`` and ``engine/worker.py`` read theirs once at
import, the others at each call (tests set them with monkeypatch between calls).
docs/usage.md (user switches) and docs/development.md (the rest) list them.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

OFF = ("off", "0", "no", "false")
ON = ("", "on", "1", "yes", "true", "auto")


class Switch:
    """One environment variable: ``name``, the ``values`` it takes, its ``default`` (what
    unset means), ``why`` it exists, and whether it is for ``users`` or for tests and
    development."""

    __slots__ = ("name", "values", "default", "why", "users")

    def __init__(self, name: str, values: str, default: str, why: str, users: bool = False):
        self.name, self.values, self.default, self.why, self.users = name, values, default, why, users

    def __repr__(self) -> str:
        return f"Switch({self.name})"

    def raw(self, environ: Mapping[str, str] | None = None) -> str | None:
        """The value as set (None: unset), from ``environ`` or the process's environment."""
        return (os.environ if environ is None else environ).get(self.name)

    def value(self, environ: Mapping[str, str] | None = None) -> str:
        """The value stripped and lower-cased ("" when unset)."""
        return (self.raw(environ) or "").strip().lower()

    def on(self) -> bool:
        """An on-by-default switch: on unless set to one of :data:`OFF`."""
        return self.value() not in OFF

    def take(self) -> str | None:
        """The value, removed from the environment (a message to this process alone)."""
        return os.environ.pop(self.name, None)

    def put(self, value: str) -> None:
        os.environ[self.name] = value


NATIVE = Switch(
    "PYSYSBENCH_NATIVE",
    "on | off (also 1/0, yes/no, true/false, auto)",
    "on",
    "off runs every C hot-path piece's Python twin: the twins are the C's contract, CI runs both ways, "
    "and a suspected C bug can be ruled out without rebuilding",
    users=True,
)
FACE = Switch(
    "PYSYSBENCH_FACE",
    "sysbench | pysysbench",
    "by the program's name (sysbench -> sysbench)",
    "lets a script or a test get sysbench 1.0.20's exact face (or pysysbench's) whatever the command is named",
    users=True,
)
COMPAT = Switch(
    "PYSYSBENCH_COMPAT",
    "1.0 | 1.1",
    "1.0 (sysbench 1.0.20: what Debian, Ubuntu and Homebrew ship)",
    "makes a `sysbench` link a sysbench 1.1.0 to scripts and test suites that cannot pass --sysbench-compat "
    "(which overrides it)",
    users=True,
)
MYSQL_PASSWORD = Switch(
    "PYSYSBENCH_MYSQL_PASSWORD",
    "a password",
    "none (--mysql-password, else no password)",
    "keeps the password off the command line (ps, shell history); passed on to Ray actors",
    users=True,
)
PGSQL_PASSWORD = Switch(
    "PYSYSBENCH_PGSQL_PASSWORD",
    "a password",
    "none (--pgsql-password, else no password)",
    "keeps the password off the command line (ps, shell history); passed on to Ray actors",
    users=True,
)
HISTORY_DB = Switch(
    "PYSYSBENCH_HISTORY_DB",
    "a file path, or a postgresql:// URL",
    "$XDG_DATA_HOME/pysysbench/history.sqlite (~/.local/share/pysysbench/history.sqlite)",
    "chooses the history store (`pysysbench history`) for every command of a shell or a CI job, as "
    "--history-db does for one",
    users=True,
)
WORKER_START = Switch(
    "PYSYSBENCH_WORKER_START",
    "spawn",
    "fork where the platform has it and no other thread runs",
    "tests the spawn start (the only one on macOS and Windows) on Linux, where fork is the default",
)
WIRE_POLL = Switch(
    "PYSYSBENCH_WIRE_POLL",
    "on | off",
    "on (read once, at import)",
    "off lets the event loop read the threads' sockets instead of the C poller (WirePump's twin), for comparison",
)
LUA = Switch(
    "PYSYSBENCH_LUA",
    "a lupa module: luajit21, luajit20, lua51, ... lua54",
    "the first one installed, LuaJIT first",
    "tests the fallback to a plain Lua 5.1-5.4 where LuaJIT is missing",
)
LUA_JIT_HOLD = Switch(
    "PYSYSBENCH_LUA_JIT_HOLD",
    "on | off",
    "on",
    "off lets a many-thread run's states compile from the start instead of waiting to see whether the JIT repays, "
    "to measure what holding saves",
)
LUA_STACKS = Switch(
    "PYSYSBENCH_LUA_STACKS",
    "on | off",
    "on",
    "off yields every statement through a coroutine (where the platform has no own stacks), to test and compare that path",
)
DRY_RUN_ERRORS = Switch(
    "PYSYSBENCH_DRY_RUN_ERRORS",
    "comma-separated error codes (e.g. 1213,40001)",
    "none",
    "makes the dry-run driver fail every third statement with those codes, to test error handling without a server",
)
CHILD_SAVED_ENV = Switch(
    "PYSYSBENCH_CHILD_SAVED_ENV",
    "JSON, set by pysysbench itself",
    "unset",
    "not a switch: carries the user's PYTHONPATH/PYTHONSAFEPATH from a parent to the child it spawns (childenv.py), "
    "which restores them",
)

ALL: tuple[Switch, ...] = (
    NATIVE,
    FACE,
    COMPAT,
    MYSQL_PASSWORD,
    PGSQL_PASSWORD,
    HISTORY_DB,
    WORKER_START,
    WIRE_POLL,
    LUA,
    LUA_JIT_HOLD,
    LUA_STACKS,
    DRY_RUN_ERRORS,
    CHILD_SAVED_ENV,
)


def set_values(names: tuple[str, ...]) -> dict[str, str]:
    """Those of ``names`` that are set to something, with their values (what Ray actors on
    other machines are passed: the switches above and an outside driver's password variable,
    which that driver declares itself)."""
    return {n: os.environ[n] for n in names if os.environ.get(n)}
