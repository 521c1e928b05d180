"""Campaign execution: check, SQL hooks, data set, runs, peaks, manifest, resume.

Role: run a :class:`Campaign` step by step through a :class:`Backend`
(``backend.InProcessBackend`` hands each :class:`Request` to the library in-process,
the code ``pysysbench TEST run`` calls), store every run's result file (annotated with
the campaign's labels and the run's identity) and keep ``manifest.json``
current after every step.

Resume: a run is skipped when its result file exists, is complete (exit code 0,
a summary) and carries the same option fingerprint; anything else is run again.
Prepare is skipped when the manifest says it finished with the same command.
Interrupting a run (Ctrl-C) keeps what it measured in its result file, marks the
campaign interrupted and stops; the next invocation picks up from there.

Library code: it reports progress through :class:`Events` and raises; it never
prints.
"""

from __future__ import annotations

import math
import os
import signal
import time
from collections.abc import Callable
from typing import Any, Protocol

from ..core.errors import PySysbenchError, RunAborted, UsageError
from ..core.record import record
from ..stats import results
from . import manifest as mf
from .peak import Peak, find_peak
from .plan import PlannedRun, Planner, Request, fingerprint
from .spec import Campaign, MemorySizing, WorkloadSpec, option_key

EXIT_INTERRUPTED = 128 + signal.SIGINT
# a run stopped by Ctrl-C or SIGTERM (pysysbench exits 128 + the signal, as a shell reports it)
INTERRUPTED_EXIT_CODES = (EXIT_INTERRUPTED, 128 + signal.SIGTERM)
SUPERSEDED = ".superseded"


@record(frozen=True)
class CommandOutcome:
    exit_code: int
    error: str | None = None


class Backend(Protocol):
    """How a campaign reaches the benchmark (``backend.InProcessBackend``: in-process)."""

    def check(self, request: Request) -> list[str]:
        """Parse and validate a request's options without connecting; raise on a bad option.
        Returns warnings: options that parse but may not do what is meant."""

    def command(self, request: Request, log_path: str) -> CommandOutcome:
        """Execute prepare / cleanup / prewarm / run; the text output goes to ``log_path``."""

    def sql(self, connection: list[str], statements: list[str]) -> None:
        """Execute statements on one connection of the configured driver."""

    def rows(self, connection: list[str], query: str) -> list[tuple]:
        """Rows of one query on the configured driver."""


@record
class RunRecord:
    """What the manifest keeps per run."""

    status: str  # ok | stored | failed | interrupted
    doc: dict[str, Any] | None = None
    error: str | None = None


def _nothing(*args: Any) -> None:
    return None


@record
class Events:
    """Progress callbacks (the CLI renders them; tests collect them)."""

    phase: Callable[[str], None] = _nothing  # a step outside runs
    plan: Callable[[int, bool], None] = _nothing  # run count, exact?
    run_started: Callable[[PlannedRun, int], None] = _nothing  # run, position (1-based)
    run_finished: Callable[[PlannedRun, RunRecord], None] = _nothing
    peak: Callable[[WorkloadSpec, Peak], None] = _nothing


def metric_of(doc: dict[str, Any] | None, metric: str) -> float:
    summary = (doc or {}).get("summary") or {}
    return float(summary.get(metric) or 0.0)


def estimate_runs(campaign: Campaign) -> tuple[int, bool]:
    """Number of runs, and whether it is exact (peak finding is open-ended)."""
    total, exact = 0, True
    for w in campaign.workloads:
        if w.auto is None:
            total += len(w.threads) * w.repeats * max(1, len(campaign.variants))
            continue
        exact = False
        a = w.auto
        steps = 1 + max(0, math.ceil(math.log(max(a.max / a.start, 1.0), a.factor)))
        total += (min(steps, 4) + 2 * a.refine) * w.repeats
    return total, exact


class CampaignRun:
    """One invocation of ``campaign run`` (fresh or resumed)."""

    def __init__(
        self,
        campaign: Campaign,
        results_dir: str,
        backend: Backend,
        events: Events | None = None,
        *,
        restart: bool = False,
    ):
        self.c = campaign
        self.dir = results_dir
        self.backend = backend
        self.events = events or Events()
        self.restart = restart
        self.manifest: dict[str, Any] = {}
        self.planner: Planner | None = None
        self.position = 0
        self.executed = 0

    # --- top level --------------------------------------------------------------

    def execute(self) -> dict[str, Any]:
        prior = None if self.restart else mf.load(self.dir)
        self.manifest = mf.new(self.c, self.dir, prior)
        try:
            self._steps()
        except KeyboardInterrupt:
            self.manifest["status"] = "interrupted"
            raise
        except RunAborted as exc:
            self.manifest["status"] = "interrupted" if exc.exit_code in INTERRUPTED_EXIT_CODES else "failed"
            raise
        except PySysbenchError:
            self.manifest["status"] = "failed"
            raise
        finally:
            mf.save(self.dir, self.manifest)
        return self.manifest

    def _steps(self) -> None:
        os.makedirs(os.path.join(self.dir, "logs"), exist_ok=True)
        self.check()
        self.events.plan(*estimate_runs(self.c))
        self._sql("before-campaign", self.c.sql.before_campaign)
        self.planner = Planner(self.c, self.dir, self._table_size())
        self._prepare()
        self._capture()
        for w in self.c.workloads:
            self._workload(w)
        self._retire_stale()
        failed = [k for k, r in self.manifest["runs"].items() if r["status"] == "failed"]
        self.manifest["status"] = "complete" if not failed else "complete with failed runs"

    def check(self) -> list[str]:
        """Every command line parses before anything touches the database; the warnings
        of the checks, each once, are returned (and told as a phase)."""
        size = self.c.table_size
        planner = Planner(self.c, self.dir, 1 if isinstance(size, MemorySizing) else size)
        requests = [planner.prepare_request("prepare")] if self.c.prepare else []
        for w in self.c.workloads:
            first = w.threads[0] if w.threads else w.auto.start
            for v in self.c.variants or (None,):
                requests.append(planner.run(w, first, 1, "check", v).request)
        warnings: list[str] = []
        for request in requests:
            try:
                found = self.backend.check(request) or []
            except PySysbenchError as exc:
                raise UsageError(
                    f"campaign file '{self.c.path}': {exc} (in: pysysbench {' '.join(request.command_line)})"
                ) from None
            warnings += [f"WARNING: {w}" for w in found if f"WARNING: {w}" not in warnings]
        for w in warnings:
            self.events.phase(w)
        return warnings

    # --- data set -----------------------------------------------------------------

    def _sql(self, what: str, statements: tuple[str, ...]) -> None:
        if not statements:
            return
        self.events.phase(f"SQL {what}: {len(statements)} statement(s)")
        try:
            self.backend.sql(self._connection(), list(statements))
        except PySysbenchError as exc:
            raise RunAborted(f"SQL {what} failed: {exc}") from None

    def _switch(self, run: PlannedRun) -> None:
        """The variant's SQL (e.g. SET GLOBAL ...), on its own connection, before each of its runs."""
        v = run.variant
        try:
            self.backend.sql(self.planner.connection_args(v), list(v.sql))
        except PySysbenchError as exc:
            raise RunAborted(f"[[variant]] '{v.name}': switch SQL failed: {exc}") from None

    def _connection(self) -> list[str]:
        planner = self.planner or Planner(self.c, self.dir, None)
        return planner.connection_args()

    def _table_size(self) -> int | None:
        size = self.c.table_size
        if not isinstance(size, MemorySizing):
            return size
        if self.manifest.get("table_size"):
            return int(self.manifest["table_size"])  # decided when the campaign started
        memory, source = self._memory(size)
        tables = int(next((v for k, v in self.c.data.items() if option_key(k) == "tables"), 1))
        rows = max(1, int(memory * size.factor / (tables * size.row_bytes)))
        self.manifest["table_size"] = rows
        self.manifest["table_size_source"] = (
            f"{source} = {memory} bytes x {size.factor:g} / ({tables} tables x {size.row_bytes} bytes per row)"
        )
        self.events.phase(f"data set sized from memory: {tables} tables x {rows} rows")
        return rows

    def _memory(self, size: MemorySizing) -> tuple[int, str]:
        if size.memory_bytes is not None:
            return size.memory_bytes, "memory"
        try:
            rows = self.backend.rows(self._connection(), size.memory_query)
            return int(float(rows[0][0])), size.memory_query
        except (PySysbenchError, IndexError, TypeError, ValueError) as exc:
            raise RunAborted(
                f"[data] table-size: memory-query '{size.memory_query}' did not return a number of bytes ({exc})"
            ) from None

    def _prepare(self) -> None:
        if self.c.prepare is None:
            self.manifest["prepare"] = {"status": "not configured"}
            return
        commands = ["cleanup"] if self.c.prepare.cleanup else []
        commands.append("prepare")
        if self.c.prepare.prewarm:
            commands.append("prewarm")
        requests = [self.planner.prepare_request(cmd) for cmd in commands]
        fp = fingerprint([a for r in requests for a in r.words()])
        prior = self.manifest["prepare"]
        if prior.get("status") == "done" and prior.get("fingerprint") == fp:
            self.events.phase("data set already prepared (skipping prepare)")
        else:
            for request in requests:
                self._prepare_step(request)
            self.manifest["prepare"] = {
                "status": "done",
                "fingerprint": fp,
                "commands": [r.command_line for r in requests],
            }
            mf.save(self.dir, self.manifest)
        self._sql("after-prepare", self.c.sql.after_prepare)

    def _prepare_step(self, request: Request) -> None:
        command = request.command
        self.events.phase(f"{command}: pysysbench {' '.join(request.command_line)}")
        log = os.path.join(self.dir, "logs", f"{command}.log")
        outcome = self.backend.command(request, log)
        if outcome.exit_code != 0:
            self.manifest["prepare"] = {"status": "failed", "error": outcome.error}
            raise RunAborted(
                f"{command} failed: {outcome.error or f'exit code {outcome.exit_code}'} (see {log})", outcome.exit_code
            )

    def _capture(self) -> None:
        settings: dict[str, str] = {}
        for query in self.c.sql.capture:
            try:
                for row in self.backend.rows(self._connection(), query):
                    if len(row) >= 2:
                        settings[str(row[0])] = str(row[1])
                    elif len(row) == 1:  # a bare value: named by its query
                        settings[query] = str(row[0])
            except PySysbenchError as exc:
                raise RunAborted(f"[sql] capture query '{query}' failed: {exc}") from None
        if settings:
            self.manifest["server_settings"] = settings

    # --- runs -----------------------------------------------------------------------

    def _workload(self, w: WorkloadSpec) -> None:
        if w.auto is None:
            for run in self.planner.fixed_runs(w):
                self._measure(run, w)
            return
        peak = find_peak(w.auto, lambda threads, phase: self._point(w, threads, phase))
        self.manifest["peaks"][w.name] = peak.as_dict()
        mf.save(self.dir, self.manifest)
        self.events.peak(w, peak)

    def _point(self, w: WorkloadSpec, threads: int, phase: str) -> list[float]:
        docs = [self._measure(self.planner.run(w, threads, r, phase), w) for r in range(1, w.repeats + 1)]
        return [metric_of(d, w.auto.metric) for d in docs]

    def _measure(self, run: PlannedRun, w: WorkloadSpec) -> dict[str, Any] | None:
        self.position += 1
        self.events.run_started(run, self.position)
        stored = self._stored(run)
        record = RunRecord("stored", stored) if stored is not None else self._execute(run, w)
        self._remember(run, record)
        self.events.run_finished(run, record)
        if record.status == "interrupted":
            raise RunAborted(
                f"interrupted during {run.key.stem}; rerun the same command to resume",
                (record.doc or {}).get("exit_code") or EXIT_INTERRUPTED,
            )
        if record.status == "failed" and self.c.run.on_error == "stop":
            raise RunAborted(
                f"run {run.key.stem} failed: {record.error} (log: {run.log_path}); fix the cause "
                'and rerun the same command to resume, or set on-error = "continue" in [run]'
            )
        return record.doc if record.status in ("ok", "stored") else None

    def _stored(self, run: PlannedRun) -> dict[str, Any] | None:
        if self.restart or not os.path.exists(run.result_path):
            return None
        try:
            doc = results.load(run.result_path)
        except UsageError:
            return None
        camp = doc.get("campaign") or {}
        if doc.get("exit_code") != 0 or doc.get("summary") is None or camp.get("fingerprint") != run.fingerprint:
            return None
        return doc

    def _execute(self, run: PlannedRun, w: WorkloadSpec) -> RunRecord:
        if self.executed and self.c.run.pause_s:
            time.sleep(self.c.run.pause_s)
        self.executed += 1
        self._sql("before-run", self.c.sql.before_run)
        if run.variant is not None and run.variant.sql:
            self._switch(run)
        if os.path.exists(run.result_path):
            os.remove(run.result_path)  # a stale file must not pass for this run's result
        outcome = self.backend.command(run.request, run.log_path)
        doc = self._annotate(run, w)
        error = outcome.error or (doc or {}).get("error") or f"exit code {outcome.exit_code}"
        if outcome.exit_code in INTERRUPTED_EXIT_CODES:
            return RunRecord("interrupted", doc, error)
        if outcome.exit_code != 0 or doc is None or doc.get("summary") is None:
            return RunRecord("failed", doc, error)
        return RunRecord("ok", doc)

    def _annotate(self, run: PlannedRun, w: WorkloadSpec) -> dict[str, Any] | None:
        if not os.path.exists(run.result_path):
            return None
        doc = results.load(run.result_path)
        labels = dict(self.c.labels)
        if run.variant is not None:
            labels.update(run.variant.labels)
            labels["variant"] = run.variant.name
        results.annotate(doc, labels=labels, campaign=self._identity(run, w))
        results.save(run.result_path, doc)
        return doc

    def _identity(self, run: PlannedRun, w: WorkloadSpec) -> dict[str, Any]:
        prep = self.manifest.get("prepare") or {}
        return {
            "name": self.c.name,
            "file": os.path.basename(self.c.path),
            "sha256": self.c.sha256,
            "run_id": run.key.stem,
            "workload": w.name,
            "threads": run.key.threads,
            "repeat": run.key.repeat,
            "repeats": w.repeats,
            "phase": run.phase,
            "auto": w.auto is not None,
            "fingerprint": run.fingerprint,
            "table_size": self.manifest.get("table_size"),
            "table_size_source": self.manifest.get("table_size_source"),
            "prepare_commands": prep.get("commands") or [],
            "sql_before_run": list(self.c.sql.before_run),
            "variant": run.variant.name if run.variant else None,
            "variant_sql": list(run.variant.sql) if run.variant else [],
            "interleaved": [v.name for v in self.c.variants],
            "server_settings": dict(self.manifest.get("server_settings") or {}),
        }

    def _retire_stale(self) -> None:
        """Result files of this campaign that the finished plan no longer contains (an
        earlier invocation with other options searched other thread counts) get the
        suffix ``.superseded``: kept for the curious, invisible to reports."""
        current = {r["file"] for r in self.manifest["runs"].values()} | {mf.FILE_NAME}
        retired = []
        for name in sorted(os.listdir(self.dir)):
            path = os.path.join(self.dir, name)
            if not name.endswith(".json") or name in current:
                continue
            try:
                doc = results.load(path)
            except UsageError:
                continue
            if (doc.get("campaign") or {}).get("name") == self.c.name:
                os.replace(path, path + SUPERSEDED)
                retired.append(name)
        if retired:
            self.manifest["superseded"] = retired
            self.events.phase(
                f"{len(retired)} result file(s) of earlier invocations with other options renamed "
                f"to *{SUPERSEDED} (not part of this campaign's results any more)"
            )

    def _remember(self, run: PlannedRun, record: RunRecord) -> None:
        summary = (record.doc or {}).get("summary") or {}
        lat = summary.get("latency_ms") or {}
        self.manifest["runs"][run.key.stem] = {
            "workload": run.key.workload,
            "variant": run.key.variant,
            "test": run.test,
            "threads": run.key.threads,
            "repeat": run.key.repeat,
            "phase": run.phase,
            "status": record.status,
            "file": os.path.basename(run.result_path),
            "log": os.path.relpath(run.log_path, self.dir),
            "command": run.command_line,
            "tps": summary.get("tps"),
            "qps": summary.get("qps"),
            "p95_ms": lat.get("p95"),
            "p99_ms": lat.get("p99"),
            "errors_per_s": summary.get("errors_per_s"),
            "error": record.error,
        }
        mf.save(self.dir, self.manifest)


def run_campaign(
    campaign: Campaign, results_dir: str, backend: Backend, events: Events | None = None, *, restart: bool = False
) -> dict[str, Any]:
    return CampaignRun(campaign, results_dir, backend, events, restart=restart).execute()


__all__ = ["Backend", "CommandOutcome", "Events", "RunRecord", "CampaignRun", "run_campaign", "estimate_runs"]
