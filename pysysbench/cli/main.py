"""``pysysbench`` entry point: parse, build, call the library, render, map
exceptions to exit codes.  Only this module prints or exits.
"""

from __future__ import annotations

import asyncio
import inspect
import os
import signal
import sys
import traceback
from typing import Any, Callable, Coroutine

from ..runtime import native
from ..version import __version__
from ..drivers import REGISTRY as DRIVERS
from ..core.errors import ConfigError, InvalidOption, PySysbenchError, UsageError, WorkloadError
from ..engine.local import CLIENT_BUSY_FRACTION, CLIENT_BUSY_MIN_S, Hooks, LocalRun
from ..engine.run import run_async as run_engine
from ..engine.spec import RunSpec
from ..stats.results import RunOutcome, client_busy
from ..core.files import check_writable
from ..core.options import help_block, shown
from ..output import text
from ..output.registry import is_data_only, report_for
from ..workloads.base import Env, Workload, user_code
from . import face, subcommands
from .library import check_command, configure
from .compat import Invocation, choose_driver, general_help, header, parse, validate


EXIT_STDOUT_CLOSED = 128 + signal.SIGPIPE   # what a shell shows for sysbench killed by SIGPIPE


# sysbench's log levels (spec 1.4); ALWAYS: what sysbench writes without its logger
# (help, --version, a Lua script's print(), the workloads' "Creating table ..." lines)
ALWAYS, FATAL, ALERT, WARNING, NOTICE, INFO, DEBUG = -1, 0, 1, 2, 3, 4, 5
PREFIX_LEVELS = (("FATAL: ", FATAL), ("ALERT: ", ALERT), ("WARNING: ", WARNING), ("DEBUG: ", DEBUG))
# lines a workload's messages carry that sysbench prints through its logger, not print()
LOGGED_LINES = ("Initializing worker threads...",)


def level_of(line: str) -> int:
    """A line's sysbench log level from its prefix (NOTICE, the level of the report, when it has none)."""
    for prefix, level in PREFIX_LEVELS:
        if line.startswith(prefix):
            return level
    return NOTICE


class Printer:
    """Unbuffered line output, like sysbench's stdout, through sysbench's log levels:
    a line above ``verbosity`` (--verbosity, default 3; --debug: 5) is not printed.

    When the reader goes away ("pysysbench ... | head -1") the printer goes quiet
    (``closed``; the stream's descriptor is pointed at /dev/null so no later
    flush fails) and calls ``on_closed``: a run then stops as if interrupted.

    For a data-only report format (``--output-format=json``, :meth:`data_only`) the
    report's documents (:meth:`data`) are all that goes to standard output; every
    other line (the first line, the banner, progress, warnings, errors) goes to
    standard error."""

    def __init__(self, stream=None, verbosity: int = NOTICE):
        self.stream = stream or sys.stdout
        self.data_mode = False        # data_only: the documents alone on standard output (data_stream)
        self.data_stream = None
        self.verbosity = verbosity
        self.closed = False
        self.failed: str | None = None    # why standard output could not be written (closed, a full disk)
        self.on_closed: Callable[[], None] | None = None

    def data_only(self) -> None:
        """The documents keep standard output (a duplicate of its descriptor); descriptor 1
        itself then points at standard error, so whatever else writes there -- a Lua
        script's print(), a library, a worker process -- lands on stderr too."""
        if self.data_mode or self.stream is not sys.stdout:   # (a campaign's log keeps every line)
            return
        self.data_mode = True
        stdout = self.stream
        try:
            stdout.flush()
            saved = os.dup(stdout.fileno())
            os.dup2(sys.stderr.fileno(), stdout.fileno())
            self.data_stream = os.fdopen(saved, "w", encoding=stdout.encoding, errors=stdout.errors)
        except (OSError, ValueError, AttributeError):   # not a descriptor (a test's StringIO), or closed
            self.data_stream = stdout
        self.stream = sys.stderr

    def __call__(self, line: str = "", level: int | None = None) -> None:
        if (level_of(line) if level is None else level) <= self.verbosity:
            self.raw(line + "\n", ALWAYS)

    def logged(self, line: str) -> None:
        """A line sysbench's logger let through (the Lua log, lua/log.py, applied
        --verbosity itself): printed as it is, as is its ``(last message repeated N
        times)``, which has no level of its own."""
        self(line, ALWAYS)

    def script(self, line: str = "") -> None:
        """A workload's own message (sysbench's scripts print() them): shown at every
        verbosity, except the lines sysbench logs."""
        logged = line.rstrip("\n") in LOGGED_LINES or level_of(line) != NOTICE
        self(line, None if logged else ALWAYS)

    def raw(self, chunk: str, level: int = NOTICE) -> None:
        if self.closed or level > self.verbosity:
            return
        self._write(self.stream, chunk)

    def data(self, chunk: str) -> None:
        """One document of the report (a data-only format): standard output, at every verbosity."""
        if not self.closed and chunk:
            self._write(self.data_stream if self.data_mode else self.stream,
                        chunk if chunk.endswith("\n") else chunk + "\n")

    def _write(self, stream, chunk: str) -> None:
        try:
            stream.write(chunk)
            stream.flush()
        except BrokenPipeError:
            self._reader_gone(stream)
        except (OSError, ValueError, AttributeError) as exc:   # closed (>&-: None), /dev/full, ...
            self.failed = getattr(exc, "strerror", None) or "it is closed"
            self._reader_gone(stream)

    def _reader_gone(self, stream) -> None:
        self.closed = True
        _silence(stream)
        if self.on_closed is not None:
            self.on_closed()


def _silence(stream) -> None:
    """Point a closed pipe's descriptor at /dev/null: the buffered rest is dropped quietly."""
    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), stream.fileno())
    except (OSError, ValueError, AttributeError):
        pass


class Interrupts:
    """Stop requests during one ``run`` command outside the engine's own signal
    handlers (before the run starts, while the report prints and the result file
    is written): SIGINT and SIGTERM are recorded instead of raising or killing,
    and passed on to the run once it is there (``attach``); a closed standard
    output is one too.  So a result file is always written."""

    SIGNALS = (signal.SIGINT, signal.SIGTERM)

    def __init__(self) -> None:
        self.requests: list[tuple[str, int]] = []
        self.target: Callable[[str, int], None] | None = None
        self._previous: dict[int, Any] = {}

    def __enter__(self) -> "Interrupts":
        for sig in self.SIGNALS:
            try:
                self._previous[sig] = signal.signal(sig, self._signal)
            except ValueError:   # not the main thread: signals stay as they are
                pass
        return self

    def __exit__(self, *exc) -> None:
        for sig, previous in self._previous.items():
            if previous is not None:   # None: a handler not installed from Python, nothing to put back
                signal.signal(sig, previous)

    def _signal(self, sig: int, frame) -> None:
        self.request(signal.Signals(sig).name, 128 + sig)

    def request(self, reason: str, exit_code: int) -> None:
        self.requests.append((reason, exit_code))
        if self.target is not None:
            self.target(reason, exit_code)

    def attach(self, target: Callable[[str, int], None]) -> None:
        self.target = target
        for reason, exit_code in self.requests:
            target(reason, exit_code)

    @property
    def first(self) -> tuple[str | None, int]:
        return self.requests[0] if self.requests else (None, 0)


def run_async(coro: Coroutine[Any, Any, Any]) -> Any:
    """uvloop when installed (it is a dependency), the stdlib loop otherwise."""
    try:
        import uvloop
        return uvloop.run(coro)
    except ImportError:
        return asyncio.run(coro)


def console() -> None:
    """The command (``pysysbench``, ``python -m pysysbench``): :func:`main`, then the exit."""
    end_process(main())


def end_process(code: int) -> None:
    """Exit with ``code``.  Where nothing but the package's own code ran, in one thread,
    the process ends after the exit handlers without the interpreter's teardown (freeing
    every module and object one by one: about 37 M instructions, 7 % of a start-up);
    a Lua script (its C stdio buffers), a user's workload or driver module (files it left
    open are flushed when collected) or another thread still alive get the ordinary exit."""
    import atexit
    import threading
    if threading.active_count() == 1 and _only_own_code():
        atexit._run_exitfuncs()
        atexit._clear()
        if _flushed(sys.stdout) and _flushed(sys.stderr):
            os._exit(code)
    sys.exit(code)


def _only_own_code() -> bool:
    from ..engine.outside import origins
    return not origins() and not any(name.startswith(("lupa", "pysysbench_user_")) for name in sys.modules)


def _flushed(stream) -> bool:
    try:
        stream.flush()
    except (OSError, ValueError, AttributeError):   # what the interpreter's own exit would report: let it
        return False
    return True


def main(argv: list[str] | None = None) -> int:
    _fill_closed_descriptors()
    try:
        return _main(argv)
    except BrokenPipeError:
        # stdout closed early ("pysysbench ... | head"): stop quietly, as sysbench dies of SIGPIPE
        _silence(sys.stdout)
        return EXIT_STDOUT_CLOSED


def _fill_closed_descriptors() -> None:
    """A standard descriptor closed by the caller (``>&-``) is pointed at /dev/null, so no file,
    socket or pipe opened later takes its number (the event loop's library aborts when it
    closes one numbered 0-2, and a database socket on 1 would receive the report).  Python
    has set ``sys.stdout`` to None already: the report still finds standard output closed."""
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            try:
                got = os.open(os.devnull, os.O_RDWR)
                if got != fd:
                    os.dup2(got, fd)
                    os.close(got)
            except OSError:
                pass


def _unwritable_output(out: Printer, code: int) -> int:
    """Standard output could not be written (closed with >&-, a full disk): the run stopped as
    for a closed pipe; one line on standard error says why, and the exit code is 1."""
    if out.failed is None:
        return code
    try:
        print(f"FATAL: cannot write to standard output ({out.failed[:1].lower() + out.failed[1:]}): "
              "the report is lost", file=sys.stderr, flush=True)
    except (OSError, ValueError, AttributeError):
        pass
    return code if code not in (0, EXIT_STDOUT_CLOSED) else 1


def _main(argv: list[str] | None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    face.use(face.select())
    out = Printer(verbosity=_early_verbosity(argv))
    debug = any(a.split("=", 1)[0] == "--debug" and a.split("=", 1)[-1] not in ("off", "0", "false")
                for a in argv)
    try:
        native.check()
        return _unwritable_output(out, dispatch(argv, out))
    except UsageError as exc:
        _to_stderr(str(exc))
        return 1
    except PySysbenchError as exc:
        if debug:
            traceback.print_exc()
        _say_error(out, f"FATAL: {exc}")
        return _unwritable_output(out, exc.exit_code)
    except KeyboardInterrupt:
        _say_error(out, "FATAL: interrupted")
        return 130
    except Exception as exc:   # a bug: one line, the traceback with --debug
        if debug:
            traceback.print_exc()
        _say_error(out, f"FATAL: internal error: {type(exc).__name__}: {exc} (rerun with --debug for a "
                        "traceback and please report it)")
        return 1


def _to_stderr(line: str) -> None:
    try:
        print(line, file=sys.stderr, flush=True)
    except (OSError, ValueError, AttributeError):   # standard error closed too: the exit code says it
        pass


def _say_error(out: Printer, line: str) -> None:
    """An error line where the output goes; on standard error when standard output failed."""
    if out.failed is not None:
        if "(stdout closed)" not in line:     # the stop it caused: _unwritable_output's line says it
            _to_stderr(line)
    else:
        out(line)


def _early_verbosity(argv: list[str]) -> int:
    """--verbosity / --debug as given on the command line, for the lines printed before
    the options are parsed (a test that is not found); the parsed value replaces it."""
    level = NOTICE
    for a in argv:
        name, _, value = a.partition("=")
        if name == "--verbosity" and value.isdigit():
            level = int(value)
        elif name == "--debug" and value not in ("off", "0", "false"):
            return DEBUG
    return level


def dispatch(argv: list[str], out: Printer) -> int:
    command = subcommands.find(argv[0]) if argv else None
    if command is not None:
        return command(argv[1:], out)
    try:
        inv = parse(argv)
    except WorkloadError:
        out(header())      # sysbench prints its first line before it looks for the test
        raise
    except InvalidOption as exc:
        # ... and before it checks the test's options (a general option's value: before it)
        if face.active().strict and not exc.sysbench_text:
            out(header())
        raise
    v = inv.values
    for line in inv.stderr_warnings:
        print(line, file=sys.stderr)
    if v.version:
        out(face.active().version_line(), ALWAYS)
        return 0
    if v.help or inv.test is None:
        out.raw(general_help(), ALWAYS)
        return 0 if v.help else 1
    return execute(inv, out, argv)


def execute(inv: Invocation, out: Printer, command_line: list[str]) -> int:
    """One parsed command of a test (``prepare``, ``run``, ...), its text on ``out``;
    the exit code.  The CLI and the campaign executor (cli/campaign_backend.py) both
    come here; ``command_line`` is what the result file records."""
    v = inv.values
    if v.debug or ALWAYS < v.verbosity <= DEBUG:   # outside: refused by the bounds check, in words
        out.verbosity = DEBUG if v.debug else v.verbosity
    if is_data_only(v):     # --output-format=json: standard output holds the documents alone
        out.data_only()
    for line in inv.warnings:   # sysbench prints these before its logger knows --verbosity
        out(line, ALWAYS)
    out(header())
    cls = inv.workload_cls
    if getattr(cls, "runs_own_commands", False):   # a Lua script: sysbench's own command dispatch
        validate(v)      # the run's options, as configure() checks a built-in test's
        driver_name = v.db_driver if v.is_set("db_driver") else choose_driver(v)
        if driver_name == "sqlite":
            _check_sqlite_file(v, inv.command)
        return cls.dispatch(v, inv.command, inv.rest, out, driver_name,
                            lambda workload, driver: command_run(inv, workload, driver, out, command_line))
    if inv.command is None and face.active().strict and getattr(cls, "help_text", ""):
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
        raise WorkloadError("`sysbench.cmdline.call_command' function failed: oltp_common.lua: prewarm is "
                            "currently MySQL only")
    if inv.command == "run":
        return command_run(inv, workload, driver, out, command_line)
    # sysbench's scripts print() their messages (every --verbosity); built-in tests log them
    say = out if getattr(cls, "logs_messages", False) else out.script
    env = Env(driver=driver, values=v, say=say, seed=v.rand_seed or None)
    with user_code(workload, inv.command):
        if inv.command == "prepare":     # progress bars / plain progress lines (pysysbench.load)
            from .load_progress import load_display   # rich: only commands that load data need it
            with load_display(out, say, progress=not face.active().strict) as env.observer:
                run_async(workload.prepare(env))
            return 0
        run_async(getattr(workload, inv.command)(env))
    return 0


def _check_driver_name(v, command: str) -> None:
    """The sysbench face: an unknown --db-driver fails as 1.0.20 fails it (in the script)."""
    if face.active().strict and v.is_set("db_driver") and v.db_driver not in DRIVERS:
        # 1.0.20: the driver fails in the script's function (oltp_common.lua's sysbench.sql.driver())
        fn = "thread_init" if command == "run" else command
        raise ConfigError(f"invalid database driver name: '{v.db_driver}'\nFATAL: `{fn}' function failed: "
                          "oltp_common.lua: failed to initialize the DB driver"
                          + ("\nFATAL: Thread initialization failed!" if command == "run" else ""))


def _check_sqlite_file(v, command: str | None) -> None:
    """The embedded SQLite file: a folder that is not there is one line before anything
    runs (SQLite creates no folder, and nothing is created); a run that fell back to it
    because no driver was named says which file it uses, on stderr."""
    path = v.sqlite_db
    if not path or path == ":memory:" or path.startswith("file:"):
        return
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise ConfigError(f"--sqlite-db={shown(path)} is a folder: give a file name in it "
                          f"(e.g. --sqlite-db={shown(os.path.join(path, 'sbtest.db'))})")
    if not os.path.isdir(folder):
        what = "is not a folder" if os.path.exists(folder) else "does not exist"
        raise ConfigError(f"SQLite database '{shown(path)}': '{shown(folder)}' {what}, so nothing was created; "
                          "give --sqlite-db a file in an existing folder")
    if (command == "run" and not v.is_set("db_driver") and not any(k.startswith("sqlite_") for k in v.explicit)
            and os.path.exists(path)):    # (a missing file fails with a line naming the SQLite file)
        print(f"NOTE: no --db-driver given: running on the embedded SQLite file '{shown(os.path.abspath(path))}'; "
              "for a server give --db-driver=mysql or --db-driver=pgsql (with --mysql-host/--pgsql-host ...)",
              file=sys.stderr)


def print_workload_help(cls: type[Workload], out: Printer, test: str | None = None) -> int:
    if getattr(cls, "help_text", ""):   # a built-in test (workloads/builtin.py): sysbench's own text
        out(cls.help_text, ALWAYS)
        return 0
    strict = face.active().strict
    if not cls.options:
        if strict:    # sysbench's text, on stderr, no FATAL
            raise UsageError(f"'{cls.name}' test does not implement the 'help' command.")
        raise WorkloadError(f"'{cls.name}' test does not implement the 'help' command.")
    if strict:        # 1.0.20's block: the test as named ('oltp_read_write.lua' for a path), its options only
        name = os.path.basename(test or cls.name)
        out.raw(help_block(f"{name} options:", [o for o in cls.options if not o.extra], sort=True) + "\n",
                ALWAYS)
        return 0
    out.raw(help_block(f"{cls.name} options:", list(cls.options), sort=True) + "\n", ALWAYS)
    if cls.__doc__:   # after the sysbench-format block, so parsers of it are unaffected
        out(inspect.cleandoc(cls.__doc__) + "\n", ALWAYS)
    return 0


def command_run(inv: Invocation, workload: Workload, driver, out: Printer, argv: list[str]) -> int:
    v = inv.values
    spec = RunSpec.build(v, workload.source, driver, workload=workload, server_version=bool(v.result_file),
                         server_context=bool(v.result_file) and bool(v.get("server_context", True)))
    if v.result_file:
        check_writable(v.result_file)    # before anything runs, not after the measurement
    if v.get("latency_log"):
        from ..stats.latencylog import create
        check_writable(v.latency_log, "latency log")
        try:
            create(v.latency_log)
        except OSError as exc:
            from ..core.files import problem
            raise UsageError(f"cannot write latency log '{v.latency_log}': {problem(exc)}") from None
    with Interrupts() as stops:
        try:
            return _run_and_report(spec, workload, driver, out, argv, stops)
        finally:
            out.on_closed = None


def _run_and_report(spec: RunSpec, workload: Workload, driver, out: Printer, argv: list[str],
                    stops: Interrupts) -> int:
    v = spec.values
    fmt = report_for(v, workload)        # --output-format: the output registry (pysysbench.output.registry)
    emit = out.data if fmt.data_only else out.raw     # a document, or the text report's lines
    for line in fmt.banner(spec.forced_shutdown_s):
        out(line)

    intro = getattr(workload, "run_intro", None)   # a built-in test's mode lines and checks
    if intro is not None:
        intro(out)
    custom = getattr(workload, "reports", None)   # a Lua script's or built-in test's report hooks
    if hasattr(custom, "attach"):
        custom.attach(out, text.summary_block)
    sql = (lambda counts: True) if custom is None else custom.sql   # False: sysbench's generic reports

    def print_line(line: str | None) -> None:
        if line is not None:
            out(line)

    def interval(st) -> None:
        if custom is None or not custom.intermediate(st):
            emit(fmt.interval(st, sql(st)) + "\n")
        if st.queue_length is not None:
            print_line(fmt.rate(st))

    def checkpoint(t: float, summary) -> None:
        print_line(fmt.checkpoint_header(t))
        if custom is None or not custom.checkpoint(summary):
            emit(fmt.checkpoint_summary(t, summary, sql(summary)))

    hooks = Hooks(say=out, interval=interval, checkpoint=checkpoint,
                  note=(lambda line: None) if face.active().strict else out)
    outcome = _measure(spec, workload, driver, hooks, out, argv, stops)
    _limit_lines(v, outcome, out)
    busy = client_busy(outcome)
    warning = busy_warning(outcome, busy, driver, workload)
    if warning:
        out(warning)
    if outcome.error is not None:
        if v.debug and outcome.traceback is not None:
            traceback.print_exception(outcome.traceback)
        out(f"FATAL: {outcome.error}")
    if outcome.error is None or outcome.partial:   # a lost worker: the report of what was measured
        if v.histogram:
            emit(fmt.histogram(outcome.summary.hist))
        if custom is None or not custom.cumulative(outcome.summary):
            emit(fmt.summary(outcome.summary, sql(outcome.summary)))
        if v.debug:
            _per_thread_debug(outcome, out)
    reason, late_exit = stops.first      # a request while the report printed: the run was complete
    exit_code = outcome.exit_code or late_exit
    if v.result_file:
        _save_result(v, argv, workload, driver, outcome, exit_code=exit_code, error=outcome.error,
                     interrupted=outcome.interrupted or reason)
    return exit_code


def busy_warning(outcome: RunOutcome, busy: float, driver, workload: Workload) -> str | None:
    """The 'client may be the bottleneck' warning, when it applies: not for an embedded
    database (it runs inside the client: its CPU is not client overhead) nor for a built-in
    test (cpu, fileio, ...: the client machine is what it measures)."""
    if (busy < CLIENT_BUSY_FRACTION or outcome.summary.total_time_s < CLIENT_BUSY_MIN_S or outcome.error is not None
            or driver.caps.blocking or getattr(workload, "measures_the_client", False)):
        return None
    return (f"WARNING: the client kept {busy:.0%} of its {outcome.workers} worker process(es) busy: it may be "
            "the bottleneck (add --workers or client machines)")


def _limit_lines(v, outcome: RunOutcome, out: Printer) -> None:
    """sysbench's INFO lines (--verbosity >= 4) at the end of a run: each thread logs
    which limit it met (the logger folds the repeats), then ``Done.`` and a blank."""
    if outcome.error is not None or outcome.interrupted or outcome.forced or out.verbosity < INFO:
        return
    by_events = v.events and outcome.summary.events >= v.events
    out("Event limit exceeded, exiting..." if by_events else "Time limit exceeded, exiting...", INFO)
    if v.threads > 1:
        out(f"(last message repeated {v.threads - 1} times)", INFO)
    out("Done.\n", INFO)


def _measure(spec: RunSpec, workload: Workload, driver, hooks: Hooks, out: Printer, argv: list[str],
             stops: Interrupts) -> RunOutcome:
    """The run itself (``engine.run``), with the stop requests passed on to it; when
    it fails before measuring anything, the result file says so."""
    runs: list[LocalRun] = []

    def control(run: LocalRun) -> None:
        runs.append(run)
        stops.attach(run.interrupt)

    hooks.control = control
    # until the measurement is over, a closed stdout stops the run (the banner's lines count too)
    out.on_closed = lambda: stops.request("stdout closed", EXIT_STDOUT_CLOSED)
    if out.closed:
        out.on_closed()
    v = spec.values
    try:
        return run_async(run_engine(spec, hooks, workload=workload, driver=driver))
    except PySysbenchError as exc:
        if v.result_file:   # nothing was measured, but say so where the results were expected
            try:
                _save_result(v, argv, workload, driver, None, exit_code=exc.exit_code, error=str(exc),
                             interrupted=runs[0].stop_reason if runs else stops.first[0])
            except UsageError as failed:   # the run's own error is the one to report on stdout
                print(str(failed), file=sys.stderr)
        raise
    finally:
        stops.target = out.on_closed = None


def _save_result(v, argv: list[str], workload: Workload, driver, outcome: RunOutcome | None, *, exit_code: int,
                 error: str | None, interrupted: str | None) -> None:
    """The run's result file: what was measured (``outcome``; None when the run never started)."""
    from ..stats import results
    results.save(v.result_file, results.from_outcome(outcome, values=v, argv=argv, test=workload.name,
                                                     driver=driver.name, exit_code=exit_code, error=error,
                                                     interrupted=interrupted, version=__version__,
                                                     implementation=workload.implementation()))


def _per_thread_debug(outcome: RunOutcome, out: Printer) -> None:
    s = outcome.summary
    out("DEBUG: Verbose per-thread statistics:\n")
    for tid, (n, lat) in enumerate(zip(s.thread_events, s.thread_lat_ns)):
        avg = lat / n / 1e9 if n else 0.0
        out(f"DEBUG:     thread #{tid:3d}: events: {n}  avg: {avg:.4f}s")
        out(f"DEBUG:                  total time taken by event execution: {lat / 1e9:.4f}s")
    out()


if __name__ == "__main__":
    sys.exit(main())
