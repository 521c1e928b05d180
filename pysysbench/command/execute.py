"""A parsed command, executed: its text on a :class:`Printer`, its exit code.

Role: :func:`execute` is the command dispatch sysbench has -- a Lua script's own
(``runs_own_commands``), a built-in test's refusal without a command, ``help``, then the
driver and the workload (``library.configure``) and ``prepare`` / ``run`` / ``cleanup`` /
``prewarm`` / ``check``; ``run`` is :func:`.run.command_run` (a frozen spec through
``engine.run``).  The command line and the campaigns' steps both come here.
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Sequence
from dataclasses import replace

from ..core.errors import ConfigError, UsageError, WorkloadError
from ..core.options import Option, help_block, shown
from ..drivers import REGISTRY as DRIVERS
from ..output import face
from ..output.printer import ALWAYS, DEBUG, FATAL, Printer, to_stderr
from ..output.registry import is_data_only
from ..runtime.aio import run_to_end
from ..workloads.base import Env, Workload, user_code
from .cmdline import Invocation, check_before_header_11, choose_driver, header, validate
from .library import check_command, configure
from .run import command_run


def execute(inv: Invocation, out: Printer, command_line: list[str]) -> int:
    """One parsed command of a test (``prepare``, ``run``, ...), its text on ``out``;
    the exit code.  The CLI and the campaign backend (campaign/backend.py) both
    come here; ``command_line`` is what the result file records."""
    v = inv.values
    if v.debug or ALWAYS < v.verbosity <= DEBUG:  # outside: refused by the bounds check, in words
        out.verbosity = DEBUG if v.debug else v.verbosity
    if is_data_only(v):  # --output-format=json: standard output holds the documents alone
        out.data_only()
    for line in inv.warnings:  # sysbench prints these before its logger knows --verbosity
        out(line, ALWAYS)
    if face.active().strict and face.active().compat == "1.1":
        check_before_header_11(v)
    out(header())
    cls = inv.workload_cls
    _check_luajit_cmd(v, cls)
    _check_load_nodes(v, inv.command, inv.test, cls)
    if cls.runs_own_commands:  # a Lua script: sysbench's own command dispatch
        validate(v)  # the run's options, as configure() checks a built-in test's
        driver_name = v.db_driver if v.is_set("db_driver") else choose_driver(v)
        if driver_name == "sqlite":
            _check_sqlite_file(v, inv.command)
        return cls.dispatch(
            v,
            inv.command,
            inv.rest,
            out,
            driver_name,
            lambda workload, driver: command_run(inv, workload, driver, out, command_line),
        )
    if inv.command is None and face.active().strict and cls.help_text:
        # a built-in test, in 1.0.20's words
        out(f"The '{cls.name}' test requires a command argument. See 'sysbench {cls.name} help'", FATAL)
        return 1
    check_command(inv)
    if inv.command == "help":
        return print_workload_help(cls, out, inv.test)
    _check_driver_name(v, inv.command)
    workload, driver = configure(inv)
    if driver.name == "sqlite":
        _check_sqlite_file(v, inv.command)
    if inv.command == "prewarm" and face.active().strict and driver.dialect.family != "mysql":
        # 1.0.20's oltp_common.lua refuses (pysysbench's own face prewarms PostgreSQL)
        raise WorkloadError(
            "`sysbench.cmdline.call_command' function failed: oltp_common.lua: prewarm is currently MySQL only"
        )
    if inv.command == "run":
        return command_run(inv, workload, driver, out, command_line)
    # sysbench's scripts print() their messages (every --verbosity); built-in tests log them
    say = out if cls.logs_messages else out.script
    env = Env(driver=driver, values=v, say=say, seed=v.rand_seed or None)
    with user_code(workload, inv.command):
        if inv.command == "prepare":  # progress bars / plain progress lines (pysysbench.load)
            from ..output.load_progress import load_display  # rich: only commands that load data need it

            with load_display(out, say, progress=not face.active().strict) as env.observer:
                run_to_end(workload.prepare(env))
            return 0
        run_to_end(getattr(workload, inv.command)(env))
    return 0


def _check_luajit_cmd(v, cls: type[Workload]) -> None:
    """--luajit-cmd with one of sysbench's Lua scripts run natively: 1.1.0 would have run the
    command (a Lua script's states run it themselves; the built-in C tests have no Lua)."""
    if v.get("luajit_cmd") and not cls.runs_own_commands and not cls.logs_messages:
        from ..lua.runtime import check_luajit_command

        if (failed := check_luajit_command(v.luajit_cmd)) is not None:
            raise WorkloadError(failed)


def _check_load_nodes(v, command: str, test: str, cls: type[Workload]) -> None:
    """--load-nodes with a workload that prepares its own tables (a Lua script of one's own)."""
    if v.get("load_nodes") and command in ("prepare", "cleanup") and not cls.loads_per_node:
        raise ConfigError(
            f"--load-nodes: '{test}' prepares its own tables through the front; "
            "only the bundled oltp_* workloads load per node"
        )


def _check_driver_name(v, command: str) -> None:
    """The sysbench face: an unknown --db-driver fails as 1.0.20 fails it (in the script)."""
    if face.active().strict and v.is_set("db_driver") and v.db_driver not in DRIVERS:
        # 1.0.20: the driver fails in the script's function (oltp_common.lua's sysbench.sql.driver())
        fn = "thread_init" if command == "run" else command
        raise ConfigError(
            f"invalid database driver name: '{v.db_driver}'\nFATAL: `{fn}' function failed: "
            "oltp_common.lua: failed to initialize the DB driver"
            + (
                f"\nFATAL: {'Threads' if face.active().compat == '1.1' else 'Thread'} initialization failed!"
                if command == "run"
                else ""
            )
        )


def _check_sqlite_file(v, command: str | None) -> None:
    """The embedded SQLite file: a folder that is not there is one line before anything
    runs (SQLite creates no folder, and nothing is created); a run that fell back to it
    because no driver was named says which file it uses, on stderr."""
    path = v.sqlite_db
    if not path or path == ":memory:" or path.startswith("file:"):
        return
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise ConfigError(
            f"--sqlite-db={shown(path)} is a folder: give a file name in it "
            f"(e.g. --sqlite-db={shown(os.path.join(path, 'sbtest.db'))})"
        )
    if not os.path.isdir(folder):
        what = "is not a folder" if os.path.exists(folder) else "does not exist"
        raise ConfigError(
            f"SQLite database '{shown(path)}': '{shown(folder)}' {what}, so nothing was created; "
            "give --sqlite-db a file in an existing folder"
        )
    if (
        command == "run"
        and not v.is_set("db_driver")
        and not any(k.startswith("sqlite_") for k in v.explicit)
        and os.path.exists(path)
    ):  # (a missing file fails with a line naming the SQLite file)
        to_stderr(
            f"NOTE: no --db-driver given: running on the embedded SQLite file '{shown(os.path.abspath(path))}'; "
            "for a server give --db-driver=mysql or --db-driver=pgsql (with --mysql-host/--pgsql-host ...)"
        )


def release_options(options: Sequence[Option]) -> list[Option]:
    """The options of the sysbench release the face copies: 1.0.20's, and under 1.1 also
    the ones 1.1's scripts added, in 1.1's words (without pysysbench's "(sysbench 1.1)")."""
    compat = face.active().compat
    return [
        replace(o, help=o.help.removesuffix(f" (sysbench {o.since})")) if o.extra else o
        for o in options
        if not o.extra or (o.since and o.since == compat)
    ]


def print_workload_help(cls: type[Workload], out: Printer, test: str | None = None) -> int:
    if cls.help_text:  # a built-in test (workloads/builtin.py): sysbench's own text
        out(cls.help_text, ALWAYS)
        return 0
    strict = face.active().strict
    if not cls.options:
        if strict:  # sysbench's text, on stderr, no FATAL
            raise UsageError(f"'{cls.name}' test does not implement the 'help' command.")
        raise WorkloadError(f"'{cls.name}' test does not implement the 'help' command.")
    if strict:  # sysbench's block: the test as named ('oltp_read_write.lua' for a path), its options only
        name = os.path.basename(test or cls.name)
        out.raw(help_block(f"{name} options:", release_options(cls.options), sort=True) + "\n", ALWAYS)
        return 0
    out.raw(help_block(f"{cls.name} options:", list(cls.options), sort=True) + "\n", ALWAYS)
    if cls.__doc__:  # after the sysbench-format block, so parsers of it are unaffected
        out(inspect.cleandoc(cls.__doc__) + "\n", ALWAYS)
    return 0
