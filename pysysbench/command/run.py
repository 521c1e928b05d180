"""The ``run`` command: a frozen spec through ``engine.run``, the report as the chosen format renders it.

Role: :func:`command_run` builds the :class:`RunSpec`, checks where the result file and
the latency log go, runs it with stop requests (SIGINT, SIGTERM, a closed standard
output) passed on to the engine (:class:`Interrupts`), renders the banner, the
per-interval lines, the final report (``output.registry``'s format, or a Lua script's or
built-in test's own report hooks) on the :class:`Printer`, and writes the result file.
"""

from __future__ import annotations

import signal
import traceback
from collections.abc import Callable
from typing import Any

from ..core.errors import PySysbenchError, UsageError
from ..core.files import check_writable
from ..engine.local import CLIENT_BUSY_FRACTION, CLIENT_BUSY_MIN_S, Hooks, LocalRun
from ..engine.run import run_async as run_engine
from ..engine.spec import RunSpec
from ..output import face
from ..output.printer import EXIT_STDOUT_CLOSED, INFO, Printer, to_stderr
from ..output.registry import report_for
from ..runtime.aio import run_to_end
from ..stats.results import RunOutcome, client_busy
from ..version import __version__
from ..workloads.base import Workload
from .cmdline import Invocation


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

    def __enter__(self) -> Interrupts:
        for sig in self.SIGNALS:
            try:
                self._previous[sig] = signal.signal(sig, self._signal)
            except ValueError:  # not the main thread: signals stay as they are
                pass
        return self

    def __exit__(self, *exc) -> None:
        for sig, previous in self._previous.items():
            if previous is not None:  # None: a handler not installed from Python, nothing to put back
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


# pysysbench-only companions of a run, registered by the layers above (``use``): each is
# called with the options and gives None (not asked for) or an object with start(run),
# finish(), lines(outcome) (printed after the summary) and record(outcome) (the result
# file's table ``key``): lab/fault.py's --fault
COMPANIONS: list[Callable[[Any], Any]] = []


def use(factory: Callable[[Any], Any]) -> None:
    if factory not in COMPANIONS:
        COMPANIONS.append(factory)


def _companions(v: Any) -> list[Any]:
    made = [c for c in (factory(v) for factory in COMPANIONS) if c is not None]
    if v.get("fault") and not made:
        raise UsageError("--fault works from the pysysbench command line and campaigns only")
    return made


def command_run(inv: Invocation, workload: Workload, driver, out: Printer, argv: list[str]) -> int:
    v = inv.values
    companions = _companions(v)
    spec = RunSpec.build(
        v,
        workload.source,
        driver,
        workload=workload,
        server_version=bool(v.result_file),
        server_context=bool(v.result_file) and bool(v.get("server_context", True)),
    )
    if v.result_file:
        check_writable(v.result_file)  # before anything runs, not after the measurement
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
            return _run_and_report(spec, workload, driver, out, argv, stops, companions)
        finally:
            out.on_closed = None


def _run_and_report(
    spec: RunSpec, workload: Workload, driver: Any, out: Printer, argv: list[str], stops: Interrupts, companions: list
) -> int:
    v = spec.values
    fmt = report_for(v, workload)  # --output-format: the output registry (pysysbench.output.registry)
    for line in fmt.banner(spec.forced_shutdown_s):
        out(line)

    workload.run_intro(out)  # a built-in test's mode lines and checks
    custom = workload.reports  # a Lua script's or built-in test's report hooks
    if custom is not None:
        custom.attach(out, fmt.summary_text)
    report = Report(fmt, custom, out)
    outcome = _measure(spec, workload, driver, report.hooks(), out, argv, stops, companions)
    _limit_lines(v, outcome, out)
    busy = client_busy(outcome)
    warning = busy_warning(outcome, busy, driver, workload)
    if warning:
        out(warning)
    report.final(v, outcome)
    for c in companions if not fmt.data_only else ():  # a document on stdout: the result file has them
        for line in c.lines(outcome):
            out(line)
    reason, late_exit = stops.first  # a request while the report printed: the run was complete
    exit_code = outcome.exit_code or late_exit
    if v.result_file:
        _save_result(
            v,
            argv,
            workload,
            driver,
            outcome,
            exit_code=exit_code,
            error=outcome.error,
            interrupted=outcome.interrupted or reason,
            extra={c.key: c.record(outcome) for c in companions},
        )
    return exit_code


class Report:
    """A run's lines as ``fmt`` renders them on ``out``, unless the workload's own report
    hooks (``custom``: a Lua script's or a built-in test's) print them instead."""

    def __init__(self, fmt: Any, custom: Any, out: Printer) -> None:
        self.fmt = fmt
        self.custom = custom
        self.out = out
        self.emit = out.data if fmt.data_only else out.raw  # a document, or the text report's lines
        # False: sysbench's generic reports
        self.sql: Callable[[Any], bool] = (lambda counts: True) if custom is None else custom.sql

    def hooks(self) -> Hooks:
        return Hooks(
            say=self.out,
            interval=self.interval,
            checkpoint=self.checkpoint,
            note=(lambda line: None) if face.active().strict else self.out,
        )

    def print_line(self, line: str | None) -> None:
        if line is not None:
            self.out(line)

    def interval(self, st: Any) -> None:
        if self.custom is None or not self.custom.intermediate(st):
            self.emit(self.fmt.interval(st, self.sql(st)) + "\n")
        if st.queue_length is not None:
            self.print_line(self.fmt.rate(st))

    def checkpoint(self, t: float, summary: Any) -> None:
        self.print_line(self.fmt.checkpoint_header(t))
        if self.custom is None or not self.custom.checkpoint(summary):
            self.emit(self.fmt.checkpoint_summary(t, summary, self.sql(summary)))

    def final(self, v: Any, outcome: RunOutcome) -> None:
        """The end of the report: the error, then what was measured."""
        out, custom = self.out, self.custom
        if outcome.error is not None:
            if v.debug and outcome.traceback is not None:
                traceback.print_exception(outcome.traceback)
            out(f"FATAL: {outcome.error}")
        if outcome.error is None or outcome.partial:  # a lost worker: the report of what was measured
            if v.histogram:
                self.emit(self.fmt.histogram(outcome.summary.hist))
            if custom is None or not custom.cumulative(outcome.summary):
                self.emit(self.fmt.summary(outcome.summary, self.sql(outcome.summary)))
            if outcome.server_nodes is not None:  # --server-nodes: pysysbench's own lines
                from ..engine.nodes import text_lines

                for line in text_lines(outcome.server_nodes):
                    out(line)
            if v.debug:
                _per_thread_debug(outcome, out)


def busy_warning(outcome: RunOutcome, busy: float, driver, workload: Workload) -> str | None:
    """The 'client may be the bottleneck' warning, when it applies: not for an embedded
    database (it runs inside the client: its CPU is not client overhead) nor for a built-in
    test (cpu, fileio, ...: the client machine is what it measures)."""
    if (
        busy < CLIENT_BUSY_FRACTION
        or outcome.summary.total_time_s < CLIENT_BUSY_MIN_S
        or outcome.error is not None
        or driver.caps.blocking
        or workload.measures_the_client
    ):
        return None
    return (
        f"WARNING: the client kept {busy:.0%} of its {outcome.workers} worker process(es) busy: it may be "
        "the bottleneck (add --workers or client machines)"
    )


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


def _measure(
    spec: RunSpec,
    workload: Workload,
    driver,
    hooks: Hooks,
    out: Printer,
    argv: list[str],
    stops: Interrupts,
    companions: list,
) -> RunOutcome:
    """The run itself (``engine.run``), with the stop requests passed on to it; when
    it fails before measuring anything, the result file says so."""
    runs: list[LocalRun] = []

    def control(run: LocalRun) -> None:
        runs.append(run)
        stops.attach(run.interrupt)
        for c in companions:
            c.start(run)

    hooks.control = control
    # until the measurement is over, a closed stdout stops the run (the banner's lines count too)
    out.on_closed = lambda: stops.request("stdout closed", EXIT_STDOUT_CLOSED)
    if out.closed:
        out.on_closed()
    v = spec.values
    try:
        return run_to_end(run_engine(spec, hooks, workload=workload, driver=driver))
    except PySysbenchError as exc:
        if v.result_file:  # nothing was measured, but say so where the results were expected
            try:
                _save_result(
                    v,
                    argv,
                    workload,
                    driver,
                    None,
                    exit_code=exc.exit_code,
                    error=str(exc),
                    interrupted=runs[0].stop_reason if runs else stops.first[0],
                    extra={c.key: c.record(None) for c in companions},
                )
            except UsageError as failed:  # the run's own error is the one to report on stdout
                to_stderr(str(failed))
        raise
    finally:
        stops.target = out.on_closed = None
        for c in companions:
            c.finish()


def _save_result(
    v,
    argv: list[str],
    workload: Workload,
    driver,
    outcome: RunOutcome | None,
    *,
    exit_code: int,
    error: str | None,
    interrupted: str | None,
    extra: dict[str, Any] | None = None,
) -> None:
    """The run's result file: what was measured (``outcome``; None when the run never started),
    and the companions' tables (``extra``)."""
    from ..stats import results

    results.save(
        v.result_file,
        {
            **results.from_outcome(
                outcome,
                values=v,
                argv=argv,
                test=workload.name,
                driver=driver.name,
                exit_code=exit_code,
                error=error,
                interrupted=interrupted,
                version=__version__,
                implementation={**workload.implementation(), "sysbench_compat": face.copied_release()},
            ),
            **(extra or {}),
        },
    )


def _per_thread_debug(outcome: RunOutcome, out: Printer) -> None:
    s = outcome.summary
    out("DEBUG: Verbose per-thread statistics:\n")
    for tid, (n, lat) in enumerate(zip(s.thread_events, s.thread_lat_ns)):
        avg = lat / n / 1e9 if n else 0.0
        out(f"DEBUG:     thread #{tid:3d}: events: {n}  avg: {avg:.4f}s")
        out(f"DEBUG:                  total time taken by event execution: {lat / 1e9:.4f}s")
    out()
