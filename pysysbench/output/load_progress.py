"""prepare's progress on the terminal: rich bars on a TTY, plain lines on a pipe.

Role: render the :class:`~pysysbench.load.prepare.LoadSnapshot` records the
fast prepare sends.  sysbench's own message lines (``Creating table
'sbtestN'...``, ``Inserting N records into 'sbtestN'``, ``Creating a secondary
index on 'sbtestN'...``) are printed unchanged in both modes.

* Plain (pipes, logs, CI): every ``PLAIN_EVERY_S`` one line such as
  ``[ 10s ] prepare: 1234567/4000000 rows (30.9%), 123456 rows/s, ETA 22s;
  indexes 0/4``, and a closing summary when at least one such line was printed
  (short prepares print exactly sysbench's lines).
* Rich (a terminal): one bar per phase -- tables created, rows loaded (with
  rows/s and ETA), secondary indexes -- started at the first progress update,
  so a prepare that sends none (other workloads) prints plain lines only.
"""

from __future__ import annotations

import sys
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.text import Text

PLAIN_EVERY_S = 10.0


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return "?"
    s = int(seconds + 0.5)
    return (
        f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}"
        if s >= 3600
        else f"{s // 60}:{s % 60:02d}"
        if s >= 60
        else f"{s}s"
    )


def progress_line(snap) -> str:
    pct = 100.0 * snap.rows_done / snap.rows_total if snap.rows_total else 100.0
    line = (
        f"[ {snap.elapsed_s:.0f}s ] prepare: {snap.rows_done}/{snap.rows_total} rows ({pct:.1f}%), "
        f"{snap.rows_per_s:.0f} rows/s, ETA {_duration(snap.eta_s)}"
    )
    if snap.indexes_total:
        line += f"; indexes {snap.indexes_done}/{snap.indexes_total}"
    return line


def summary_line(snap) -> str:
    return (
        f"[ {snap.elapsed_s:.0f}s ] prepare done: {snap.tables} table(s), {snap.rows_total} rows in "
        f"{snap.elapsed_s:.1f}s ({snap.rows_total / snap.elapsed_s if snap.elapsed_s else 0:.0f} rows/s "
        f"overall; {snap.method}, {snap.streams} connection(s))"
    )


class PlainLoadDisplay:
    def __init__(self, out, say=None, progress: bool = True):
        self.say = say or out  # the workload's messages
        self.out = out  # the progress lines
        self.next_at = PLAIN_EVERY_S if progress else float("inf")  # off: sysbench's lines only
        self.printed = False

    def __enter__(self) -> PlainLoadDisplay:
        return self

    def __exit__(self, *exc: Any) -> None:
        return None

    def update(self, snap) -> None:
        if snap.finished:
            if self.printed:
                self.out(summary_line(snap))
            return
        if snap.elapsed_s >= self.next_at:
            self.out(progress_line(snap))
            self.printed = True
            self.next_at = (snap.elapsed_s // PLAIN_EVERY_S + 1) * PLAIN_EVERY_S


class RichLoadDisplay:
    def __init__(self, out, console: Console | None = None, say=None):
        self.out = say or out
        self.console = console or Console()
        self.progress: Progress | None = None
        self.tasks: dict[str, Any] = {}

    def __enter__(self) -> RichLoadDisplay:
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.progress is not None:
            self.progress.stop()

    def say(self, line: str) -> None:
        if self.progress is None:
            self.out(line)
        else:
            self.console.print(Text(line))

    def _start(self, snap) -> None:
        self.progress = Progress(
            TextColumn("{task.description:<18}"),
            BarColumn(bar_width=30),
            MofNCompleteColumn(),
            TextColumn("{task.fields[rate]}"),
            TimeElapsedColumn(),
            TextColumn("{task.fields[eta]}"),
            console=self.console,
            transient=False,
        )
        self.progress.start()
        self.tasks["tables"] = self.progress.add_task("tables created", total=snap.tables, rate="", eta="")
        self.tasks["rows"] = self.progress.add_task("rows loaded", total=max(1, snap.rows_total), rate="", eta="")
        if snap.indexes_total:
            self.tasks["indexes"] = self.progress.add_task(
                "secondary indexes", total=snap.indexes_total, rate="", eta=""
            )

    def update(self, snap) -> None:
        if self.progress is None:
            self._start(snap)
        p, t = self.progress, self.tasks
        p.update(t["tables"], completed=snap.tables_created)
        rate = f"{snap.rows_per_s:,.0f} rows/s" if snap.rows_per_s else ""
        eta = "" if snap.finished or snap.eta_s is None else f"ETA {_duration(snap.eta_s)}"
        p.update(t["rows"], completed=snap.rows_done if snap.rows_total else 1, rate=rate, eta=eta)
        if "indexes" in t:
            p.update(t["indexes"], completed=snap.indexes_done)
        if snap.finished:
            p.stop()
            self.console.print(Text(summary_line(snap)))


def load_display(out, say=None, progress: bool = True) -> PlainLoadDisplay | RichLoadDisplay:
    """The display for prepare's progress on the printer's stream (a terminal: bars;
    a pipe, a file, a campaign's log: plain lines); ``say`` prints the workload's
    messages (default: ``out``).  ``progress=False`` (the sysbench face: sysbench 1.0.20
    prints no progress, and its log parsers and transcripts expect exactly its lines)
    prints the workload's messages only, however long the prepare takes."""
    if not progress:
        return PlainLoadDisplay(out, say, progress=False)
    console = Console(file=getattr(out, "stream", None) or sys.stdout)
    if console.is_terminal and not console.is_dumb_terminal:
        return RichLoadDisplay(out, console, say)
    return PlainLoadDisplay(out, say)
