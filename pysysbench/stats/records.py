"""Measurement records: the frozen contract between the engine and every output.

Role: workers publish cumulative :class:`Snapshot` counters; the aggregator merges
them across processes and subtracts the previous report's snapshot to obtain an
:class:`IntervalStat` (one intermediate line) or a :class:`Summary` (the final or a
checkpoint report).  This mirrors sysbench's ``sb_stat_t``: outputs are pure
functions of these records and never see live counters.

Every field that is summed is an integer (counts, nanoseconds, bucket counts) so
that merging and subtracting are exact, whatever the number of processes.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import field
from typing import Any

from pysysbench.stats.histogram import new_counts, percentile_ms

from ..core.record import record

DEFAULT_PERCENTILES = (50, 90, 95, 99, 99.9)

# Integer counters handled identically by merge and minus.
_COUNTERS = (
    "events",
    "reads",
    "writes",
    "others",
    "errors",
    "reconnects",
    "lat_sum_ns",
    "reopened",
    "retried",
    "failed",
    "write_trx",
    "spanning_trx",
)


def _dict_add(dst: dict[Any, Any], src: dict[Any, Any]) -> None:
    for key, value in src.items():
        dst[key] = dst.get(key, 0) + value


def _dict_minus(new: dict[Any, Any], base: dict[Any, Any]) -> dict[Any, Any]:
    out = dict(new)
    for key, value in base.items():
        out[key] = out.get(key, 0) - value
    return out


@record(slots=True)
class Snapshot:
    """Cumulative counters of one worker process (or a merge of several) at one instant."""

    events: int = 0
    reads: int = 0
    writes: int = 0
    others: int = 0
    errors: int = 0
    reconnects: int = 0
    lat_sum_ns: int = 0
    lat_min_ns: int = 0  # 0 = no event recorded yet
    lat_max_ns: int = 0
    hist: list[int] = field(default_factory=new_counts)  # 1024 bucket counts
    thread_events: dict[int, int] = field(default_factory=dict)  # global thread id -> events
    thread_lat_ns: dict[int, int] = field(default_factory=dict)  # global thread id -> latency sum
    error_codes: dict[str, int] = field(default_factory=dict)  # error code -> count
    reconnect_failures: dict[str, int] = field(default_factory=dict)  # error code -> failed reconnect attempts
    reconnect_error: str = ""  # the last failed reconnect's message (not a counter: merge keeps one)
    reopened: int = 0  # lost connections re-opened (a reconnect that succeeded)
    retried: int = 0  # --max-retries: transactions retried at least once
    failed: int = 0  # --max-retries: transactions that still failed after the last retry
    write_trx: int = 0  # --shard-nodes: transactions that wrote a row
    spanning_trx: int = 0  # --shard-nodes: those whose rows are on more than one node

    @property
    def failed_reconnects(self) -> int:
        return sum(self.reconnect_failures.values())

    def copy(self) -> Snapshot:
        """Return a deep copy (the lists and dicts are not shared)."""
        return Snapshot(
            **{name: getattr(self, name) for name in _COUNTERS},
            lat_min_ns=self.lat_min_ns,
            lat_max_ns=self.lat_max_ns,
            hist=list(self.hist),
            thread_events=dict(self.thread_events),
            thread_lat_ns=dict(self.thread_lat_ns),
            error_codes=dict(self.error_codes),
            reconnect_failures=dict(self.reconnect_failures),
            reconnect_error=self.reconnect_error,
        )

    @staticmethod
    def merge(snaps: Iterable[Snapshot]) -> Snapshot:
        """Combine snapshots of disjoint workers taken at the same instant, exactly.

        Counters, buckets and dict entries add; min is the least non-zero min
        (0 means "no sample" and must not win); max is the greatest max.
        """
        out = Snapshot()
        for snap in snaps:
            for name in _COUNTERS:
                setattr(out, name, getattr(out, name) + getattr(snap, name))
            if snap.lat_min_ns and (not out.lat_min_ns or snap.lat_min_ns < out.lat_min_ns):
                out.lat_min_ns = snap.lat_min_ns
            out.lat_max_ns = max(out.lat_max_ns, snap.lat_max_ns)
            out.hist = [a + b for a, b in zip(out.hist, snap.hist, strict=True)]
            _dict_add(out.thread_events, snap.thread_events)
            _dict_add(out.thread_lat_ns, snap.thread_lat_ns)
            _dict_add(out.error_codes, snap.error_codes)
            _dict_add(out.reconnect_failures, snap.reconnect_failures)
            out.reconnect_error = snap.reconnect_error or out.reconnect_error
        return out

    def minus(self, base: Snapshot) -> Snapshot:
        """Return what was recorded between *base* and *self*.

        min/max cannot be subtracted, so they are kept from *self*; the engine
        resets them at checkpoints, which is exactly when sysbench does.
        """
        out = Snapshot(
            **{name: getattr(self, name) - getattr(base, name) for name in _COUNTERS},
            lat_min_ns=self.lat_min_ns,
            lat_max_ns=self.lat_max_ns,
            reconnect_error=self.reconnect_error,
        )
        out.hist = [a - b for a, b in zip(self.hist, base.hist, strict=True)]
        out.thread_events = _dict_minus(self.thread_events, base.thread_events)
        out.thread_lat_ns = _dict_minus(self.thread_lat_ns, base.thread_lat_ns)
        out.error_codes = _dict_minus(self.error_codes, base.error_codes)
        out.reconnect_failures = _dict_minus(self.reconnect_failures, base.reconnect_failures)
        return out


@record(frozen=True, slots=True)
class IntervalStat:
    """One intermediate report line (counts of the interval, not rates)."""

    time_s: float  # elapsed since start (printed %.0f)
    interval_s: float  # actual length of the interval (rates divide by it)
    threads_running: int
    events: int
    reads: int
    writes: int
    others: int
    errors: int
    reconnects: int
    percentile: int  # P of --percentile (0 = disabled)
    latency_pct_ms: float  # percentile of this interval's histogram (0.0 when disabled)
    queue_length: int | None = None  # rate mode only
    concurrency: int | None = None  # rate mode only
    reconnect_failures: int = 0  # failed attempts to re-open lost connections
    retried: int | None = None  # --max-retries: transactions retried (None: the option is off)
    failed: int | None = None  # --max-retries: transactions failed after their last retry
    error_codes: dict[str, int] = field(default_factory=dict)  # error code -> count (ignored errors)


@record(frozen=True, slots=True)
class Summary:
    """The final (or checkpoint) cumulative report."""

    total_time_s: float  # printed "total time" (since start, even after checkpoints)
    elapsed_s: float  # divisor of the "per sec." figures (since start or last checkpoint)
    threads: int
    events: int
    reads: int
    writes: int
    others: int
    errors: int
    reconnects: int
    lat_min_ns: int
    lat_max_ns: int
    lat_sum_ns: int
    percentile: int
    latency_pct_ms: float
    hist: tuple[int, ...]
    thread_events: tuple[int, ...]  # one per thread, thread id order
    thread_lat_ns: tuple[int, ...]
    unfinished: int | None = None  # forced shutdown only
    error_codes: dict[str, int] = field(default_factory=dict)
    reconnect_failures: dict[str, int] = field(default_factory=dict)  # error code -> failed reconnect attempts
    reconnect_error: str = ""  # the last failed reconnect's message
    retried: int | None = None  # --max-retries: transactions retried (None: the option is off)
    failed: int | None = None  # --max-retries: transactions failed after their last retry
    write_trx: int | None = None  # --shard-nodes: transactions that wrote (None: the option is off)
    spanning_trx: int | None = None  # --shard-nodes: those that wrote on more than one node

    @property
    def lat_avg_ns(self) -> int:
        """Mean latency in whole ns (sysbench divides the integer sum)."""
        return self.lat_sum_ns // self.events if self.events else 0

    def percentiles_ms(self, ps: Iterable[float] = DEFAULT_PERCENTILES) -> dict[str, float]:
        """Return several percentiles of the histogram, keyed ``"p50"``, ``"p99.9"``, ..."""
        return {f"p{p:g}": percentile_ms(self.hist, p) for p in ps}


def _interval_pct_ms(hist: list[int], percentile: int) -> float:
    # percentile 0 disables the histogram in sysbench; report 0.0, not bucket 0.
    return percentile_ms(hist, percentile) if percentile > 0 else 0.0


def interval_from(
    new: Snapshot,
    old: Snapshot,
    *,
    time_s: float,
    interval_s: float,
    threads_running: int,
    percentile: int,
    queue_length: int | None = None,
    concurrency: int | None = None,
    retries: bool = False,
) -> IntervalStat:
    """Build one intermediate line's record from two consecutive merged snapshots."""
    d = new.minus(old)
    return IntervalStat(
        time_s=time_s,
        interval_s=interval_s,
        threads_running=threads_running,
        events=d.events,
        reads=d.reads,
        writes=d.writes,
        others=d.others,
        errors=d.errors,
        reconnects=d.reconnects,
        percentile=percentile,
        latency_pct_ms=_interval_pct_ms(d.hist, percentile),
        queue_length=queue_length,
        concurrency=concurrency,
        reconnect_failures=d.failed_reconnects,
        retried=d.retried if retries else None,
        failed=d.failed if retries else None,
        error_codes={k: v for k, v in d.error_codes.items() if v},
    )


def summary_from(
    snap: Snapshot,
    base: Snapshot,
    *,
    total_time_s: float,
    elapsed_s: float,
    threads: int,
    percentile: int,
    unfinished: int | None = None,
    retries: bool = False,
    spans: bool = False,
) -> Summary:
    """Build the cumulative report from *snap* minus *base* (zero or last checkpoint).

    Threads that completed no event still get a 0 entry (ids 0..threads-1), as
    sysbench's fairness figures divide by all threads.  On forced shutdown
    sysbench counts each still-running event in the per-thread fairness figures
    but not in the totals; a caller reproducing that adds those events to
    ``snap.thread_events`` / ``snap.thread_lat_ns`` only.
    """
    d = snap.minus(base)
    return Summary(
        total_time_s=total_time_s,
        elapsed_s=elapsed_s,
        threads=threads,
        events=d.events,
        reads=d.reads,
        writes=d.writes,
        others=d.others,
        errors=d.errors,
        reconnects=d.reconnects,
        lat_min_ns=d.lat_min_ns,
        lat_max_ns=d.lat_max_ns,
        lat_sum_ns=d.lat_sum_ns,
        percentile=percentile,
        latency_pct_ms=_interval_pct_ms(d.hist, percentile),
        hist=tuple(d.hist),
        thread_events=tuple(d.thread_events.get(t, 0) for t in range(threads)),
        thread_lat_ns=tuple(d.thread_lat_ns.get(t, 0) for t in range(threads)),
        unfinished=unfinished,
        error_codes={k: v for k, v in d.error_codes.items() if v},
        reconnect_failures={k: v for k, v in d.reconnect_failures.items() if v},
        reconnect_error=d.reconnect_error if d.failed_reconnects else "",
        retried=d.retried if retries else None,
        failed=d.failed if retries else None,
        write_trx=d.write_trx if spans else None,
        spanning_trx=d.spanning_trx if spans else None,
    )
