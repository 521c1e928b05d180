"""Campaign progress on the terminal: rich bars on a TTY, plain lines on a pipe.

Role: render :class:`pysysbench.campaign.Events`.  The plain display writes one
line when a run starts and one when it ends (figures from the run's result
file), which is what a log file or CI wants.  The rich display shows an overall
bar, a bar for the current run (time-based) with the benchmark's latest output
line shown verbatim, and prints each finished run above the bars.
"""

from __future__ import annotations

import time
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.text import Text

from ..campaign.executor import Events, RunRecord
from ..campaign.peak import Peak
from ..campaign.plan import PlannedRun
from ..campaign.spec import WorkloadSpec


def run_line(run: PlannedRun, record: RunRecord) -> str:
    k = run.key
    head = f"{k.workload} threads={k.threads} r{k.repeat}"
    if record.status in ("ok", "stored"):
        s = (record.doc or {}).get("summary") or {}
        lat = s.get("latency_ms") or {}
        figures = (
            f"tps {s.get('tps', 0):,.2f}  qps {s.get('qps', 0):,.2f}  p95 {lat.get('p95', 0):.2f} ms  "
            f"err/s {s.get('errors_per_s', 0):.2f}"
        )
        return f"{head}: {figures}" + ("  (stored earlier, skipped)" if record.status == "stored" else "")
    return f"{head}: {record.status.upper()}: {record.error}"


def _threads(n: int) -> str:
    return f"{n} thread" + ("" if n == 1 else "s")


def peak_line(w: WorkloadSpec, peak: Peak) -> str:
    gain, noise = peak.within_gain_threads, peak.within_noise_threads
    sat = (
        f", within {w.auto.min_gain:.0%} of it from {_threads(gain)}"
        if w.auto and gain is not None and gain != peak.threads
        else ""
    )
    sat += (
        f", within noise of it from {_threads(noise)}"
        if noise is not None and noise != peak.threads
        else ", noise unknown (no repeats)"
        if noise is None
        else ""
    )
    return (
        f"{w.name}: peak {peak.metric.upper()} {peak.value:,.2f} at {_threads(peak.threads)}{sat} "
        f"(tested {', '.join(str(p.threads) for p in sorted(peak.points, key=lambda p: p.threads))}; "
        f"search stopped: {peak.stopped})"
    )


class PlainDisplay:
    """One line per step: for pipes, logs and CI."""

    def __init__(self, say):
        self.say = say
        self.total = "?"

    def __enter__(self) -> PlainDisplay:
        return self

    def __exit__(self, *exc: Any) -> None:
        return None

    def line(self, text: str) -> None:
        """Benchmark output: kept in the run's log file only."""

    def events(self) -> Events:
        return Events(
            phase=lambda text: self.say(f"campaign: {text}"),
            plan=self._plan,
            run_started=self._started,
            run_finished=self._finished,
            peak=lambda w, p: self.say(f"campaign: {peak_line(w, p)}"),
        )

    def _plan(self, total: int, exact: bool) -> None:
        self.total = str(total) if exact else f"~{total}"
        self.say(f"campaign: {self.total} runs planned" + ("" if exact else " (peak finding decides the rest)"))

    def _started(self, run: PlannedRun, position: int) -> None:
        self.position = position
        self.say(
            f"[{position}/{self.total}] {run.key.workload} threads={run.key.threads} r{run.key.repeat}: "
            f"{run.expected_s:g} s"
        )

    def _finished(self, run: PlannedRun, record: RunRecord) -> None:
        self.say(f"[{self.position}/{self.total}] {run_line(run, record)}")


class TimedProgress(Progress):
    """Tasks marked ``timed`` advance with the clock (a run's bar), not by updates."""

    def get_renderables(self):
        for task in self.tasks:
            if task.fields.get("timed") and task.start_time is not None and not task.finished:
                task.completed = min(time.monotonic() - task.fields["t0"], task.total or 0)
        yield from super().get_renderables()


class RichDisplay:
    """Live bars on a terminal."""

    def __init__(self, console: Console | None = None):
        self.console = console or Console()
        self.progress = TimedProgress(
            TextColumn("{task.description}"),
            BarColumn(bar_width=30),
            TextColumn("{task.completed:>5.0f}/{task.total:.0f}"),
            TimeElapsedColumn(),
            TextColumn("{task.fields[last]}", markup=False, style="dim"),
            console=self.console,
            transient=False,
        )
        self.overall = None
        self.current = None
        self.exact = True

    def __enter__(self) -> RichDisplay:
        self.progress.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.overall is not None:  # peak finding: the estimate becomes the real count
            task = next(t for t in self.progress.tasks if t.id == self.overall)
            self.progress.update(self.overall, total=task.completed)
        self.progress.stop()

    def line(self, text: str) -> None:
        if self.current is not None:
            self.progress.update(self.current, last=text.strip()[:90])

    def events(self) -> Events:
        return Events(
            phase=lambda text: self.console.print(Text(f"campaign: {text}", style="bold")),
            plan=self._plan,
            run_started=self._started,
            run_finished=self._finished,
            peak=lambda w, p: self.console.print(Text(f"peak: {peak_line(w, p)}", style="bold green")),
        )

    def _plan(self, total: int, exact: bool) -> None:
        self.exact = exact
        self.overall = self.progress.add_task("campaign runs" + ("" if exact else " (about)"), total=total, last="")

    def _started(self, run: PlannedRun, position: int) -> None:
        if self.current is not None:
            self.progress.remove_task(self.current)
        desc = f"{run.key.workload} t={run.key.threads} r{run.key.repeat}"
        self.current = self.progress.add_task(desc, total=run.expected_s, last="", timed=True, t0=time.monotonic())

    def _finished(self, run: PlannedRun, record: RunRecord) -> None:
        style = {"ok": "green", "stored": "dim", "failed": "red", "interrupted": "yellow"}[record.status]
        self.console.print(Text(run_line(run, record), style=style))
        if self.current is not None:
            self.progress.remove_task(self.current)
            self.current = None
        if self.overall is not None:
            task = next(t for t in self.progress.tasks if t.id == self.overall)
            if task.completed + 1 > (task.total or 0):
                self.progress.update(self.overall, total=task.completed + 1)
            self.progress.advance(self.overall)
