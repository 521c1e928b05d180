"""sysbench 1.0.20 human-readable report format (spec section 6), byte for byte, and
sysbench 1.1.0's, which differs in the cumulative report alone (``Throughput:`` in place
of ``General statistics:``).

Role: pure functions from the frozen :mod:`pysysbench.stats.records` to strings;
nothing here prints.  Single report lines are returned without a trailing newline;
multi-line blocks end with ``"\\n"`` on every line.

Numbers go through the same double arithmetic as sysbench's C code (e.g. ns ->
s -> ms as ``ns / 1e9 * 1000``, percentile ms -> s -> ms) so that values lying on a
rounding boundary print the same digits as the binary.  Python's ``%``-formatting
rounds like glibc's printf (exact binary value, half to even), so ``%.0f``,
``%.2f`` and friends match once the doubles match.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from pysysbench.stats.histogram import bucket_value_ms
from pysysbench.stats.records import IntervalStat, Summary

HISTOGRAM_TITLE = "Latency histogram (values are in milliseconds)"
HISTOGRAM_HEADER = "       value  ------------- distribution ------------- count"
HISTOGRAM_WIDTH = 40  # columns of the widest bar
_STARS = "*" * HISTOGRAM_WIDTH

_NS_PER_S = 1e9
_MS_PER_S = 1000


# ---------------------------------------------------------------- C-like helpers


def _fixed(x: float, decimals: int, width: int = 0) -> str:
    """Format like C's ``%<width>.<decimals>f``, including glibc's NaN spelling."""
    if math.isnan(x):
        # 0.0/0.0 on x86-64 yields a NaN with the sign bit set; glibc prints "-nan".
        return "-nan".rjust(width)
    return "%*.*f" % (width, decimals, x)


def _per_s(count: int, seconds: float) -> float:
    """``count / seconds`` with C's IEEE result for a zero divisor (inf or NaN)."""
    if seconds == 0:
        return math.nan if count == 0 else math.inf
    return count / seconds


def _ns_to_ms(ns: int) -> float:
    # sysbench: SEC2MS(NS2SEC(ns)), i.e. divide by 1e9 then multiply by 1000.
    return ns / _NS_PER_S * _MS_PER_S


def _ns_to_s(ns: int) -> float:
    return ns / _NS_PER_S


def _pct_ms(latency_pct_ms: float) -> float:
    # sysbench stores the percentile in seconds (MS2SEC) and prints SEC2MS of it.
    return latency_pct_ms / 1000.0 * _MS_PER_S


def _timestamp(time_s: float) -> str:
    """sysbench's log_timestamp() prefix: ``[ 3s ] ``."""
    return "[ %.0fs ] " % time_s


# ---------------------------------------------------------------- intermediate lines


def intermediate_line(st: IntervalStat) -> str:
    """Return one ``--report-interval`` line (spec 6.2), without newline."""
    sec = st.interval_s
    queries = st.reads + st.writes + st.others
    return (
        f"{_timestamp(st.time_s)}thds: {st.threads_running:d}"
        f" tps: {_fixed(_per_s(st.events, sec), 2, 4)}"
        f" qps: {_fixed(_per_s(queries, sec), 2, 4)}"
        f" (r/w/o: {_fixed(_per_s(st.reads, sec), 2, 4)}"
        f"/{_fixed(_per_s(st.writes, sec), 2, 4)}"
        f"/{_fixed(_per_s(st.others, sec), 2, 4)})"
        f" lat (ms,{st.percentile:d}%): {_fixed(_pct_ms(st.latency_pct_ms), 2, 4)}"
        f" err/s: {_fixed(_per_s(st.errors, sec), 2, 4)}"
        f" reconn/s: {_fixed(_per_s(st.reconnects, sec), 2, 4)}"
    ) + _retries_part(st)


def _retries_part(st: IntervalStat) -> str:
    """--max-retries' figures at the line's end (nothing without the option: sysbench's line)."""
    if st.retried is None:
        return ""
    return f" retried/s: {_fixed(_per_s(st.retried, st.interval_s), 2, 4)} failed/s: {_fixed(_per_s(st.failed or 0, st.interval_s), 2, 4)}"


def generic_line(st: IntervalStat) -> str:
    """The intermediate line of a run that used no database driver (a Lua script): events per second."""
    return (
        f"{_timestamp(st.time_s)}thds: {st.threads_running:d}"
        f" eps: {_fixed(_per_s(st.events, st.interval_s), 2, 4)}"
        f" lat (ms,{st.percentile:d}%): {_fixed(_pct_ms(st.latency_pct_ms), 2, 4)}"
    )


def rate_line(st: IntervalStat) -> str:
    """Return the ``--rate`` mode queue line printed after each intermediate line (6.3)."""
    queue_length = st.queue_length or 0
    concurrency = st.concurrency or 0
    return f"{_timestamp(st.time_s)}queue length: {queue_length:d}, concurrency: {concurrency:d}"


def checkpoint_header(time_s: float) -> str:
    """Return the line heading a ``--report-checkpoints`` report (6.6), without newline."""
    return f"{_timestamp(time_s)}Checkpoint report:"


# ---------------------------------------------------------------- histogram


def _histogram_row(i: int, count: int, max_count: int) -> str:
    width = math.floor(count * 40.0 / max_count + 0.5)
    return "%12.3f |%-40s %d\n" % (bucket_value_ms(i), _STARS[:width], count)


def histogram_block(hist: Sequence[int]) -> str:
    """Return the ``--histogram=on`` block (6.4), every line ending in a newline.

    Like sysbench, an empty histogram prints only the title and the one-space line.
    """
    lines = [HISTOGRAM_TITLE + "\n"]
    max_count = max(hist, default=0)
    if max_count > 0:
        lines.append(HISTOGRAM_HEADER + "\n")
        lines.extend(_histogram_row(i, c, max_count) for i, c in enumerate(hist) if c)
    lines.append(" \n")
    return "".join(lines)


# ---------------------------------------------------------------- cumulative report


def _sql_section(s: Summary) -> list[str]:
    sec = s.elapsed_s
    queries = s.reads + s.writes + s.others

    def rate_row(label: str, count: int) -> str:
        # %-6llu then a literal space: 6+-digit counts get exactly one space.
        return f"    {label:<37}{count:<6d} ({_fixed(_per_s(count, sec), 2)} per sec.)"

    return [
        "SQL statistics:",
        "    queries performed:",
        f"        read:                            {s.reads:d}",
        f"        write:                           {s.writes:d}",
        f"        other:                           {s.others:d}",
        f"        total:                           {queries:d}",
        rate_row("transactions:", s.events),
        rate_row("queries:", queries),
        rate_row("ignored errors:", s.errors),
        rate_row("reconnects:", s.reconnects),
        *(
            ()
            if s.retried is None  # --max-retries off: sysbench's rows only
            else (rate_row("retried transactions:", s.retried), rate_row("failed transactions:", s.failed or 0))
        ),
        *_spans_rows(s, rate_row),
    ]


def _spans_rows(s: Summary, rate_row: Callable[[str, int], str]) -> tuple[str, ...]:
    """--shard-nodes' rows (none without it): write transactions, those on several nodes, the share."""
    if s.write_trx is None:
        return ()
    share = f"{100 * (s.spanning_trx or 0) / s.write_trx:.2f}%" if s.write_trx else "-"
    return (
        rate_row("write transactions:", s.write_trx),
        rate_row("multi-node write transactions:", s.spanning_trx or 0),
        f"    {'multi-node share of writes:':<37}{share}",
    )


def _forced_shutdown_section(s: Summary) -> list[str]:
    # sysbench prints this only when some event was actually cut short.
    if not s.unfinished:
        return []
    return ["", f"Number of unfinished transactions on forced shutdown: {s.unfinished:d}"]


def _general_section(s: Summary) -> list[str]:
    return [
        "",
        "General statistics:",
        f"    total time:                          {_fixed(s.total_time_s, 4)}s",
        f"    total number of events:              {s.events:d}",
        "",
    ]


def _throughput_section(s: Summary) -> list[str]:
    """sysbench 1.1.0's ``General statistics:``: events per second over the measured interval."""
    return [
        "",
        "Throughput:",
        f"    events/s (eps):                      {_fixed(_per_s(s.events, s.elapsed_s), 4)}",
        f"    time elapsed:                        {_fixed(s.total_time_s, 4)}s",
        f"    total number of events:              {s.events:d}",
        "",
    ]


# sysbench release -> the section between the SQL statistics and the latency
_GENERAL = {"1.0": _general_section, "1.1": _throughput_section}


def _latency_section(s: Summary) -> list[str]:
    if s.percentile > 0:
        pct_value = _fixed(_pct_ms(s.latency_pct_ms), 2, 27)
        pct_row = f"        {s.percentile:3d}th percentile: {pct_value}"
    else:
        pct_row = "         percentile stats:               disabled"
    return [
        "Latency (ms):",
        f"         min: {_fixed(_ns_to_ms(s.lat_min_ns), 2, 39)}",
        f"         avg: {_fixed(_ns_to_ms(s.lat_avg_ns), 2, 39)}",
        f"         max: {_fixed(_ns_to_ms(s.lat_max_ns), 2, 39)}",
        pct_row,
        f"         sum: {_fixed(_ns_to_ms(s.lat_sum_ns), 2, 39)}",
        "",
    ]


def _population_stddev(values: Sequence[float], mean: float) -> float:
    n = len(values)
    if n == 0:
        return math.nan
    return math.sqrt(sum((mean - v) * (mean - v) for v in values) / n)


def _fairness_section(s: Summary) -> list[str]:
    # As in sysbench: the events mean comes from the per-thread counts (which on a
    # forced shutdown include the cut-short events), the time mean from the
    # cumulative latency sum (which does not); both stddevs use per-thread values.
    events_avg = _per_s(sum(s.thread_events), s.threads)
    # NS2SEC(sum) / threads, in that order, as the C code rounds it.
    time_avg_s = _ns_to_s(s.lat_sum_ns) / s.threads if s.threads else math.nan
    events_sd = _population_stddev(s.thread_events, events_avg)
    time_sd = _population_stddev([_ns_to_s(ns) for ns in s.thread_lat_ns], time_avg_s)
    return [
        "Threads fairness:",
        f"    events (avg/stddev):           {_fixed(events_avg, 4)}/{_fixed(events_sd, 2, 3)}",
        f"    execution time (avg/stddev):   {_fixed(time_avg_s, 4)}/{_fixed(time_sd, 2, 3)}",
        "",
    ]


# --db-debug=on at verbosity 5: sysbench 1.0.20 appends its per-thread query and fetch timers to
# the SQL statistics; it never updates them, so every figure is 0.0000s (spec 5.13).
_DB_DEBUG_TIMER = ["    min:", "    avg:", "    max:", "  total:"]
DB_DEBUG_LINES = (
    ["DEBUG: ", "DEBUG: Query execution statistics:"]
    + [f"DEBUG: {label:<40}0.0000s" for label in _DB_DEBUG_TIMER]
    + ["DEBUG: Results fetching statistics:"]
    + [f"DEBUG: {label:<40}0.0000s" for label in _DB_DEBUG_TIMER]
)


def summary_block(s: Summary, sql: bool = True, db_debug: bool = False, release: str = "1.0") -> str:
    """Return the cumulative report (6.5) from ``SQL statistics:`` to its final blank line;
    without ``sql`` (a Lua script that never initialised a database driver) it starts at
    ``General statistics:``, as sysbench's generic report does.  ``db_debug``: the
    ``--db-debug=on`` lines after the SQL statistics (the caller checks the verbosity).
    ``release``: the sysbench whose layout to copy, "1.0" or "1.1" (``Throughput:``)."""
    lines = (
        (_sql_section(s) + (DB_DEBUG_LINES if db_debug else []) if sql else [])
        + _forced_shutdown_section(s)
        + _GENERAL[release](s)
        + _latency_section(s)
        + _fairness_section(s)
    )
    return "".join(line + "\n" for line in lines)
