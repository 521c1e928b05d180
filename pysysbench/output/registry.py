"""The output registry: how a run's report is written (``--output-format``).

Role: one object per run that turns the banner, the interval lines, the
checkpoints, the histogram and the cumulative report into text; the CLI prints
what it returns and knows nothing of the formats.  Registered:

* ``1.0`` -- sysbench 1.0.20's text (:mod:`.text`), the default and the only
  format the sysbench face lists (the others work there too, unlisted);
* ``1.1`` -- sysbench 1.1.0's text (``Throughput:``), the default under
  ``--sysbench-compat=1.1``;
* ``0.5`` -- sysbench 0.5's text (:mod:`.legacy_text`);
* ``json`` -- one JSON document a line: ``{"interval": ...}`` per report interval,
  ``{"checkpoint": t, "summary": ...}``, ``{"summary": ...}`` at the end (the
  result file's field names, :mod:`pysysbench.stats.results`).

A format is a class with the methods of :class:`Text10`, registered under its
name with :func:`register`; a Lua script's report hooks are applied by the CLI
before the format is asked.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..core.options import Option, OptType
from ..stats.records import IntervalStat, Summary
from ..stats.results import interval_dict, summary_dict
from . import text
from .legacy_text import Format05

FORMATS: dict[str, Callable[[Any, Any], Text10]] = {}


def register(name: str):
    def deco(cls):
        if name in FORMATS:
            raise ValueError(f"output format {name!r} is already registered")
        FORMATS[name] = cls
        return cls

    return deco


def is_data_only(values: Any) -> bool:
    """Whether --output-format names a format whose standard output is its documents alone."""
    return getattr(FORMATS.get(values.get("output_format", "1.0") or "1.0"), "data_only", False)


def report_for(values: Any, workload: Any) -> Text10:
    """The format ``--output-format`` names (1.0 when it is not given)."""
    return FORMATS[values.get("output_format", "1.0") or "1.0"](values, workload)


@register("1.0")
class Text10:
    """sysbench 1.0.20's text (spec section 6)."""

    data_only = False  # True: standard output holds the report's documents alone (the CLI's Printer.data)
    release = "1.0"  # the sysbench whose text layout this copies (text.summary_block)

    def __init__(self, values: Any, workload: Any = None):
        self.values = values

    def banner(self, grace_s: float | None) -> list[str]:
        """The lines after the first line, up to the blank before 'Initializing worker threads...'."""
        v = self.values
        out = ["Running the test with following options:", f"Number of threads: {v.threads}"]
        if v.rate:
            out.append(f"Target transaction rate: {v.rate}/sec")
        if v.report_interval:
            out.append(f"Report intermediate results every {v.report_interval} second(s)")
        if v.report_checkpoints:
            out.append(f"Report checkpoint(s) at {', '.join(v.report_checkpoints)} seconds")
        if v.debug:
            out.append("Debug mode enabled.\n")
        if v.validate:
            out.append("Validation checks: on.\n")
        if v.rand_seed:
            out.append(f"Initializing random number generator from seed ({v.rand_seed}).\n")
        else:
            out.append("Initializing random number generator from current time\n")
        if v.get("warmup_time", 0):
            out.append(f"Warmup time: {v.warmup_time}s")
        if not v.time and not v.events:
            out.append("WARNING: Both event and time limits are disabled, running an endless test")
        if grace_s is not None:
            out.append(f"Forcing shutdown in {int(v.time + grace_s)} seconds\n")  # replaces the blank (A.7)
        else:
            out.append("")
        return out

    def interval(self, st: IntervalStat, sql: bool = True) -> str:
        """One interval line; ``sql`` False: sysbench's generic line (a script without a driver)."""
        return text.intermediate_line(st) if sql else text.generic_line(st)

    def rate(self, st: IntervalStat) -> str | None:
        return text.rate_line(st)

    def checkpoint_header(self, t: float) -> str | None:
        return text.checkpoint_header(t)

    def checkpoint_summary(self, t: float, s: Summary, sql: bool = True) -> str:
        return self.summary(s, sql)

    def summary(self, s: Summary, sql: bool = True) -> str:
        v = self.values
        db_debug = bool(v.get("db_debug", False)) and (bool(v.get("debug", False)) or v.get("verbosity", 3) >= 5)
        return text.summary_block(s, sql, db_debug, self.release)

    def summary_text(self, s: Summary, sql: bool = True) -> str:
        """The text report alone, whatever the format (a built-in test's own report hook prints it)."""
        return text.summary_block(s, sql, release=self.release)

    def histogram(self, hist) -> str:
        return text.histogram_block(hist)


@register("1.1")
class Text11(Text10):
    """sysbench 1.1.0's text: ``Throughput:`` in the report, the warmup time second in the banner."""

    release = "1.1"

    def banner(self, grace_s: float | None) -> list[str]:
        lines = super().banner(grace_s)
        warmup = [line for line in lines if line.startswith("Warmup time: ")]
        rest = [line for line in lines if not line.startswith("Warmup time: ")]
        return rest[:2] + warmup + rest[2:]


@register("0.5")
class Text05(Text10):
    """sysbench 0.5's text (spec 7.3); the histogram stays 1.0's (0.5 had none)."""

    def __init__(self, values: Any, workload: Any = None):
        super().__init__(values, workload)
        self.old = Format05() if workload is None else Format05(tx_per_event=workload.tx_per_event)

    def banner(self, grace_s: float | None) -> list[str]:
        return self.old.banner(self.values, grace_s)

    def interval(self, st: IntervalStat, sql: bool = True) -> str:
        return self.old.interval_line(st)

    def rate(self, st: IntervalStat) -> str:
        return self.old.rate_line(st)

    def summary(self, s: Summary, sql: bool = True) -> str:
        return self.old.summary_block(s)


@register("json")
class Json(Text10):
    """One JSON document a line, for programs: no banner, no text (every other line goes to standard error)."""

    data_only = True

    def banner(self, grace_s: float | None) -> list[str]:
        return []

    def interval(self, st: IntervalStat, sql: bool = True) -> str:
        import json  # here: the text formats, every run's, never need it

        return json.dumps({"interval": interval_dict(st)})

    def rate(self, st: IntervalStat) -> str | None:
        return None  # the queue length and concurrency are in the interval's document

    def checkpoint_header(self, t: float) -> str | None:
        return None

    def checkpoint_summary(self, t: float, s: Summary, sql: bool = True) -> str:
        import json

        return json.dumps({"checkpoint": t, "summary": summary_dict(s)}) + "\n"

    def summary(self, s: Summary, sql: bool = True) -> str:
        import json

        return json.dumps({"summary": summary_dict(s)}) + "\n"

    def histogram(self, hist) -> str:
        return ""  # in the summary's document


OUTPUT_OPTIONS = [
    Option(
        "output-format",
        OptType.STRING,
        "1.0",
        "report format: '1.0' (sysbench 1.0.20's text), '1.1' (sysbench 1.1.0's: 'Throughput:'), '0.5' (sysbench 0.5's: 'OLTP test statistics:', "
        "'response time:', 'approx.  95 percentile:' ...) or 'json' (one JSON document a line)",
        "General options",
        choices=tuple(FORMATS),
    ),
]
