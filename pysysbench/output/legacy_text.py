"""sysbench 0.5's report format (``--output-format=0.5``, spec 7.3).

Role: pure functions from the frozen :mod:`pysysbench.stats.records` to the
lines sysbench 0.5 printed, for users whose parsers expect them:

    [  10s] threads: 8, tps: 1608.84, reads: 16088.39, writes: 0.00, response time: 5.93ms (95%),
            errors: 0.00, reconnects:  0.00          (one line)
    OLTP test statistics: ... read/write requests: ... other operations: ...
    General statistics: ... total time taken by event execution: ... response time: ... approx.  95 percentile:

0.5 counted "transactions" by COMMIT statements, not by events: a workload
tells how many it sends per event (``tx_per_event``: 1 for oltp.lua, 0 for
scripts without BEGIN/COMMIT, which therefore show 0 transactions as in 0.5).
The percentile comes from pysysbench's 1024-bucket histogram (0.5 used
100 000 buckets), so the last digit can differ from what 0.5 would print.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from ..core.record import record
from ..stats.records import IntervalStat, Summary

_NS_PER_S = 1e9


def _per_s(count: float, seconds: float) -> float:
    if seconds == 0:
        return math.nan if count == 0 else math.inf
    return count / seconds


def _fixed(x: float, fmt: str) -> str:
    return "-nan" if math.isnan(x) else fmt % x


def _ms(ns: float) -> float:
    return ns / _NS_PER_S * 1000


def _stamp(time_s: float) -> str:
    return "[%4.0fs] " % time_s


@record(frozen=True)
class Format05:
    """The 0.5 report for one run; ``tx_per_event`` COMMITs per event."""

    tx_per_event: int = 1

    def banner(self, v: Any, grace_s: float | None = None) -> list[str]:
        """The lines after the header, up to the blank before 'Initializing worker
        threads...'; ``grace_s`` is the --forced-shutdown delay (None: off)."""
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
            out.append("Additional request validation enabled.\n")
        if v.get("rand_init", False):
            out.append("Initializing random number generator from timer.\n")
        if v.rand_seed:
            out.append(f"Initializing random number generator from seed ({v.rand_seed}).\n")
        else:
            out.append("Random number generator seed is 0 and will be ignored\n")
        if grace_s is not None:
            out.append(f"Forcing shutdown in {int(v.time + grace_s)} seconds")
        out.append("")
        return out

    def interval_line(self, st: IntervalStat) -> str:
        sec = st.interval_s
        pct = "%4.2fms (%u%%)" % (st.latency_pct_ms, st.percentile)
        return (
            f"{_stamp(st.time_s)}threads: {st.threads_running}, "
            f"tps: {_fixed(_per_s(st.events * self.tx_per_event, sec), '%4.2f')}, "
            f"reads: {_fixed(_per_s(st.reads, sec), '%4.2f')}, "
            f"writes: {_fixed(_per_s(st.writes, sec), '%4.2f')}, "
            f"response time: {pct}, "
            f"errors: {_fixed(_per_s(st.errors, sec), '%4.2f')}, "
            f"reconnects: {_fixed(_per_s(st.reconnects, sec), '%5.2f')}"
        )

    @staticmethod
    def rate_line(st: IntervalStat) -> str:
        return f"{_stamp(st.time_s)}queue length: {st.queue_length or 0}, concurrency: {st.concurrency or 0}"

    def summary_block(self, s: Summary) -> str:
        sec = s.elapsed_s
        tx = s.events * self.tx_per_event
        rw = s.reads + s.writes

        def row(label: str, count: int) -> str:
            return f"    {label:<37}{count:<6d} ({_fixed(_per_s(count, sec), '%.2f')} per sec.)"

        lines = [
            "OLTP test statistics:",
            "    queries performed:",
            f"        read:                            {s.reads}",
            f"        write:                           {s.writes}",
            f"        other:                           {s.others}",
            f"        total:                           {rw + s.others}",
            row("transactions:", tx),
            row("read/write requests:", rw),
            row("other operations:", s.others),
            row("ignored errors:", s.errors),
            row("reconnects:", s.reconnects),
        ]
        if s.unfinished:
            lines += ["", f"Number of unfinished transactions on forced shutdown: {s.unfinished}"]
        lines += [
            "",
            "General statistics:",
            f"    total time:                          {s.total_time_s:.4f}s",
            f"    total number of events:              {s.events}",
            f"    total time taken by event execution: {s.lat_sum_ns / _NS_PER_S:.4f}s",
            "    response time:",
            f"         min:                            {_ms(s.lat_min_ns):10.2f}ms",
            f"         avg:                            {_ms(s.lat_avg_ns):10.2f}ms",
            f"         max:                            {_ms(s.lat_max_ns):10.2f}ms",
        ]
        if s.events > 0 and s.percentile > 0:
            lines.append(f"         approx. {s.percentile:3d} percentile:         {s.latency_pct_ms:10.2f}ms")
        lines += [""] + _fairness(s)
        return "".join(line + "\n" for line in lines)


def _stddev(values: Sequence[float], mean: float) -> float:
    return math.sqrt(sum((mean - v) ** 2 for v in values) / len(values)) if values else math.nan


def _fairness(s: Summary) -> list[str]:
    events_avg = _per_s(sum(s.thread_events), s.threads)
    time_avg = s.lat_sum_ns / _NS_PER_S / s.threads if s.threads else math.nan
    ev_sd = _stddev(s.thread_events, events_avg)
    time_sd = _stddev([ns / _NS_PER_S for ns in s.thread_lat_ns], time_avg)
    return [
        "Threads fairness:",
        f"    events (avg/stddev):           {_fixed(events_avg, '%.4f')}/{_fixed(ev_sd, '%3.2f')}",
        f"    execution time (avg/stddev):   {_fixed(time_avg, '%.4f')}/{_fixed(time_sd, '%3.2f')}",
        "",
    ]


def report_format(values: Any, workload: Any) -> Format05 | None:
    """The 0.5 format when ``--output-format=0.5``, else None (the 1.0 text)."""
    if values.get("output_format", "1.0") != "0.5":
        return None
    return Format05(tx_per_event=workload.tx_per_event)
