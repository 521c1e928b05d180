"""sysbench's command dispatch for a Lua script (spec 1.4-1.8).

Custom commands first (they override every built-in name), then ``help``,
``prepare`` / ``cleanup`` (global functions run in the main state without
``init``), ``run`` (``init`` in the main state, the benchmark through the engine,
then ``done``), else ``Unknown command``.  Messages and exit codes are
sysbench 1.0.20's (spec 7).  The dispatcher is handed the script's workload class
(``LuaWorkload.dispatch``): script.py imports this module, never the reverse.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..core.errors import UsageError
from ..core.options import RawOption, Registry, Values
from . import options as lua_options
from .host import MainHost, load, make_services, program_argv
from .log import FATAL, error_text
from .reports import Reports
from .runtime import CommandSeeds11, fallback_warning
from .state import LuaState, options_source, release_parked


class Dispatcher:
    def __init__(
        self,
        cls: type,
        values: Values,
        command: str | None,
        rest: list[RawOption],
        out: Callable[[str], None],
        driver_name: str,
        run: Callable[[Any, Any], int],
    ):
        self.cls = cls
        self.ref = cls.script
        self.values = values
        self.command = command
        self.rest = rest
        self.out = out
        self.run_benchmark = run
        # the log filters by --verbosity itself: a printer prints what it lets through
        self.services = make_services(values, getattr(out, "logged", out), driver_name)
        if values.get("sysbench_compat") == "1.1" and command not in (None, "run"):
            self.services.seeds = CommandSeeds11(values.threads)  # 1.1.0 seeds run only
        cls.services = self.services
        self.log = self.services.log
        self.host: MainHost | None = None
        self.main: LuaState | None = None
        self.decls: list[lua_options.Declared] | None = None

    def new_state(self, tid: int) -> LuaState:
        return LuaState(self.services, tid, script_path=self.ref.script_path, argv=program_argv(), command=self.command)

    def execute(self) -> int:
        self.host = MainHost()
        try:
            return self._execute()
        except lua_options.SilentExit:
            return 1
        finally:
            if self.main is not None:
                self.host.run(self.main.close())
            self.host.close()

    def _execute(self) -> int:
        warning = fallback_warning()
        if warning is not None:
            self.out(warning)
        main = self.main = self.host.run(self._new_loaded(0))
        if main is None:
            return 1
        if self.command is None or self.ref.path is None:
            return 0
        if not self._options():
            return 1
        cmd = self.command
        if main.sysbench.cmdline.command_defined(cmd):
            return self._custom(cmd)
        if cmd == "help":
            return self._help()
        if cmd in ("prepare", "cleanup"):
            return self._simple(cmd)
        if cmd == "run":
            return self._run()
        raise UsageError(f"Unknown command: {cmd}")

    async def _new_loaded(self, tid: int) -> LuaState | None:
        st = self.new_state(tid)
        ok, err = await load(st, self.ref.path, self.ref.modname)
        if not ok:
            self.log(FATAL, error_text(err))
            await st.close()
            return None
        return st

    def _options(self) -> bool:
        main = self.main
        ok, rows = self.host.run(main.call(main.sysbench.cmdline.read_cmdline_options))
        if not ok:
            self.log(FATAL, f"`sysbench.cmdline.read_cmdline_options' function failed: {error_text(rows)}")
            return False
        self.decls = lua_options.declared(rows)
        validate = None
        script = Values(Registry())  # the script's own options: the run keeps its built-ins
        if self.decls:
            lua_options.register(script, self.decls)
            first = rows[1][5]
            if first is not None:
                validate = lambda name, value: bool(first(name, value))  # noqa: E731 (sysbench: the first validator)
        lua_options.apply(script, self.decls, self.rest, validate, run=self.values)
        self.values.script = lua_options.own(script)
        self.services.print_options = lambda: self._raw(lua_options.option_lines(self.decls or []))
        return True

    def _raw(self, chunk: str) -> None:
        raw = getattr(self.out, "raw", None)
        if raw is not None:
            raw(chunk)
        else:
            self.out(chunk.rstrip("\n"))

    def export(self, st: LuaState) -> None:
        st.export(options_source(lua_options.exported(self.values)), self.decls is None)

    def _call(self, st: LuaState, fn: Any, *args: Any) -> tuple[bool, Any]:
        self.export(st)
        return self.host.run(st.call(fn, *args))

    # --- commands -----------------------------------------------------------------

    def _custom(self, cmd: str) -> int:
        main = self.main
        threads = self.values.threads
        if not main.sysbench.cmdline.command_parallel(cmd) or threads <= 1:
            ok, ret = self._call(main, main.sysbench.cmdline.call_command, cmd)
            if not ok:
                self.log(FATAL, f"`sysbench.cmdline.call_command' function failed: {error_text(ret)}")
                return 1
            return 0 if ret else 1
        self.out("Initializing worker threads...\n")
        self.host.run(self._parallel(cmd, threads))
        return 0

    async def _parallel(self, cmd: str, threads: int) -> None:
        import asyncio

        async def one(tid: int) -> None:
            st = await self._new_loaded(tid)
            if st is None:
                return
            try:
                self.export(st)
                ok, ret = await st.call(st.sysbench.cmdline.call_command, cmd)
                if not ok:
                    self.log(FATAL, f"`sysbench.cmdline.call_command' function failed: {error_text(ret)}")
            finally:
                await st.close()

        await asyncio.gather(*(one(t) for t in range(threads)))

    def _help(self) -> int:
        main = self.main
        fn = main.global_("help")
        if fn is not None and main.rt.eval("type")(fn) == "function":
            ok, err = self._call(main, fn)
            if not ok:
                self.log(FATAL, f"`help' function failed: {error_text(err)}")
            return 0
        if self.decls is not None:
            self._raw(lua_options.help_text(self.ref.sname, self.decls))
            return 0
        raise UsageError(f"'{self.ref.sname}' test does not implement the 'help' command.")

    def _simple(self, cmd: str) -> int:
        main = self.main
        fn = main.global_(cmd)
        if fn is None or main.rt.eval("type")(fn) != "function":
            raise UsageError(f"'{self.ref.sname}' test does not implement the '{cmd}' command.")
        ok, err = self._call(main, fn)
        if not ok:
            self.log(FATAL, f"`{cmd}' function failed: {error_text(err)}")
            return 1
        return 0

    def _run(self) -> int:
        main = self.main
        init = main.global_("init")
        if init is not None:
            ok, err = self._call(main, init)
            if not ok:
                self.log(FATAL, f"`init' function failed: {error_text(err)}")
                return 1
        if main.rt.eval("type")(main.global_("event")) != "function":
            self.log(FATAL, f"cannot find the event() function in {self.ref.sname}")
            return 1
        driver = self.services.driver(self.services.driver_name)
        if driver is None:
            return 1
        self.services.used_driver = False  # a driver counts once the script asks for one
        workload = self.cls(self.values, driver)
        workload.reports = Reports(self, main)
        try:
            rc = self.run_benchmark(workload, driver)
        finally:
            release_parked()  # the threads' states whose lua_close waited for the report
            done = main.global_("done")
            if done is not None:
                ok, err = self._call(main, done)
                if not ok:
                    self.log(FATAL, f"`done' function failed: {error_text(err)}")
        return rc
