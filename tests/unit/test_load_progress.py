"""prepare's progress displays (pysysbench.output.load_progress): the plain line every
10 s on a pipe (nothing extra for a short prepare), rich bars on a terminal."""

from __future__ import annotations

import io
import re

from rich.console import Console

from pysysbench.load.prepare import LoadSnapshot
from pysysbench.output.load_progress import PLAIN_EVERY_S, PlainLoadDisplay, RichLoadDisplay, progress_line


def snap(elapsed: float, rows: int, *, finished: bool = False, indexes: int = 0) -> LoadSnapshot:
    return LoadSnapshot(
        elapsed_s=elapsed,
        tables=4,
        tables_created=4,
        tables_done=indexes,
        rows_total=4_000_000,
        rows_done=rows,
        load_elapsed_s=max(0.0, elapsed - 1),
        indexes_total=4,
        indexes_done=indexes,
        streams=4,
        method="copy",
        finished=finished,
    )


def test_plain_prints_a_line_every_interval_and_a_summary_only_after_one():
    out: list[str] = []
    d = PlainLoadDisplay(out.append)
    d.say("Creating table 'sbtest1'...")
    for t in (0.2, 5.0, 9.9):
        d.update(snap(t, 1000))
    assert out == ["Creating table 'sbtest1'..."]
    d.update(snap(PLAIN_EVERY_S + 0.1, 1_001_000))
    d.update(snap(PLAIN_EVERY_S + 3, 1_500_000))
    d.update(snap(2 * PLAIN_EVERY_S + 0.5, 3_001_000, indexes=1))
    assert len(out) == 3
    assert re.fullmatch(
        r"\[ 10s \] prepare: 1001000/4000000 rows \(25\.0%\), \d+ rows/s, ETA \d+s; indexes 0/4", out[1]
    ), out[1]
    assert out[2].startswith("[ 20s ] prepare: 3001000/4000000 rows (75.0%)") and out[2].endswith("indexes 1/4")
    d.update(snap(25.0, 4_000_000, finished=True, indexes=4))
    assert out[3].startswith("[ 25s ] prepare done: 4 table(s), 4000000 rows in 25.0s (160000 rows/s overall; copy")


def test_plain_short_prepare_prints_only_the_messages():
    out: list[str] = []
    d = PlainLoadDisplay(out.append)
    d.update(snap(1.0, 4_000_000, finished=True))
    assert out == []


def test_progress_line_before_the_first_row():
    line = progress_line(
        LoadSnapshot(
            elapsed_s=12,
            tables=1,
            tables_created=1,
            tables_done=0,
            rows_total=10,
            rows_done=0,
            load_elapsed_s=0,
            indexes_total=0,
            indexes_done=0,
            streams=1,
            method="copy",
        )
    )
    assert line == "[ 12s ] prepare: 0/10 rows (0.0%), 0 rows/s, ETA ?"


def test_rich_bars_per_phase():
    buf = io.StringIO()
    console = Console(file=buf, force_terminal=True, width=140, color_system=None)
    out: list[str] = []
    with RichLoadDisplay(out.append, console) as d:
        d.say("Creating table 'sbtest1'...")  # before any progress: the plain printer
        d.update(snap(2.0, 500_000))
        d.say("Inserting 1000000 records into 'sbtest1'")  # then above the bars
        d.update(snap(4.0, 4_000_000, finished=True, indexes=4))
    text = buf.getvalue()
    assert out == ["Creating table 'sbtest1'..."]
    for label in (
        "tables created",
        "rows loaded",
        "secondary indexes",
        "rows/s",
        "Inserting 1000000 records into 'sbtest1'",
        "prepare done: 4 table(s), 4000000 rows",
    ):
        assert label in text, text


def test_display_follows_the_printers_stream(monkeypatch):
    from pysysbench.output.load_progress import load_display

    monkeypatch.setenv("TERM", "xterm-256color")  # rich treats TERM=dumb as no terminal
    for name in ("TTY_COMPATIBLE", "TTY_INTERACTIVE", "NO_COLOR", "FORCE_COLOR"):
        monkeypatch.delenv(name, raising=False)

    class Printer:  # a campaign's per-run log: plain lines
        stream = io.StringIO()

        def __call__(self, line: str = "") -> None:
            self.stream.write(line + "\n")

    assert isinstance(load_display(Printer()), PlainLoadDisplay)

    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    class TtyPrinter(Printer):
        stream = Tty()

    assert isinstance(load_display(TtyPrinter()), RichLoadDisplay)


def test_no_progress_lines_under_the_sysbench_face():
    """Invoked as sysbench, a prepare prints sysbench 1.0.20's lines only, however long it
    takes (a slow machine once put '[ 10s ] prepare: ...' into a conformance transcript)."""
    from pysysbench.output.load_progress import load_display

    out = []
    d = load_display(out.append, progress=False)
    with d:
        d.say("Creating table 'sbtest1'...")
        for t in (5.0, 10.0, 25.0, 61.0):
            d.update(snap(t, 1_000_000))
        d.update(snap(70.0, 4_000_000, finished=True))
    assert out == ["Creating table 'sbtest1'..."]
