"""Unit tests for the engine/output contract: Snapshot merge/minus, IntervalStat, Summary."""

from __future__ import annotations

import dataclasses
import random

import pytest

from pysysbench.stats.histogram import (
    bucket_index,
    bucket_value_ms,
    new_counts,
    percentile_ms,
)
from pysysbench.stats.records import (
    IntervalStat,
    Snapshot,
    Summary,
    interval_from,
    summary_from,
)

COUNTERS = ("events", "reads", "writes", "others", "errors", "reconnects", "lat_sum_ns")


def record(snap: Snapshot, thread_id: int, latency_ns: int, reads=14, writes=4, others=2):
    """Record one event the way a worker does (test helper)."""
    snap.events += 1
    snap.reads += reads
    snap.writes += writes
    snap.others += others
    snap.lat_sum_ns += latency_ns
    if not snap.lat_min_ns or latency_ns < snap.lat_min_ns:
        snap.lat_min_ns = latency_ns
    snap.lat_max_ns = max(snap.lat_max_ns, latency_ns)
    snap.hist[bucket_index(latency_ns)] += 1
    snap.thread_events[thread_id] = snap.thread_events.get(thread_id, 0) + 1
    snap.thread_lat_ns[thread_id] = snap.thread_lat_ns.get(thread_id, 0) + latency_ns


def random_worker(rng: random.Random, worker: int, n_events: int) -> tuple[Snapshot, list[int]]:
    snap = Snapshot()
    samples = []
    for _ in range(n_events):
        lat = int(rng.lognormvariate(14, 1.2))  # ~1 ms median, long tail
        record(snap, worker * 4 + rng.randrange(4), lat)
        samples.append(lat)
    snap.errors = rng.randrange(5)
    snap.reconnects = rng.randrange(2)
    if snap.errors:
        snap.error_codes = {"1213": snap.errors}
    return snap, samples


def test_default_snapshot_is_empty():
    s = Snapshot()
    assert all(getattr(s, name) == 0 for name in COUNTERS)
    assert s.lat_min_ns == 0 and s.lat_max_ns == 0
    assert s.hist == new_counts()
    assert s.thread_events == {} and s.thread_lat_ns == {} and s.error_codes == {}
    assert Snapshot().hist is not s.hist


def test_copy_is_deep():
    s = Snapshot()
    record(s, 0, 1_000_000)
    c = s.copy()
    assert c == s
    record(s, 0, 2_000_000)
    s.error_codes["1205"] = 1
    assert c.events == 1 and sum(c.hist) == 1
    assert c.thread_events == {0: 1} and c.error_codes == {}


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_merge_equals_field_sums(seed):
    rng = random.Random(seed)
    parts = [random_worker(rng, w, rng.randrange(0, 300)) for w in range(6)]
    snaps = [p[0] for p in parts]
    merged = Snapshot.merge(snaps)
    for name in COUNTERS:
        assert getattr(merged, name) == sum(getattr(s, name) for s in snaps)
    assert merged.lat_min_ns == min(s.lat_min_ns for s in snaps if s.lat_min_ns)
    assert merged.lat_max_ns == max(s.lat_max_ns for s in snaps)
    assert merged.hist == [sum(col) for col in zip(*(s.hist for s in snaps))]
    expected_threads: dict[int, int] = {}
    for s in snaps:
        for k, v in s.thread_events.items():
            expected_threads[k] = expected_threads.get(k, 0) + v
    assert merged.thread_events == expected_threads
    assert sum(merged.thread_lat_ns.values()) == merged.lat_sum_ns
    assert merged.error_codes.get("1213", 0) == merged.errors


def test_merge_ignores_zero_minimum_of_idle_workers():
    busy = Snapshot()
    record(busy, 0, 5_000)
    merged = Snapshot.merge([Snapshot(), busy, Snapshot()])
    assert merged.lat_min_ns == 5_000
    assert Snapshot.merge([]) == Snapshot()
    assert Snapshot.merge([Snapshot(), Snapshot()]).lat_min_ns == 0


def test_merge_does_not_alias_inputs():
    a = Snapshot()
    record(a, 0, 1_000)
    merged = Snapshot.merge([a])
    merged.hist[0] += 99
    merged.thread_events[0] += 99
    assert sum(a.hist) == 1 and a.thread_events == {0: 1}


@pytest.mark.parametrize("seed", [4, 5])
def test_percentile_of_merged_equals_percentile_of_all_samples(seed):
    rng = random.Random(seed)
    parts = [random_worker(rng, w, rng.randrange(50, 400)) for w in range(5)]
    merged = Snapshot.merge(p[0] for p in parts)
    one = new_counts()
    for _, samples in parts:
        for ns in samples:
            one[bucket_index(ns)] += 1
    for p in (50, 90, 95, 99, 99.9, 100):
        assert percentile_ms(merged.hist, p) == percentile_ms(one, p)


def test_minus_gives_what_happened_in_between():
    rng = random.Random(9)
    snap = Snapshot()
    for _ in range(50):
        record(snap, rng.randrange(3), rng.randrange(10**5, 10**8))
    old = snap.copy()
    later = []
    for _ in range(70):
        lat = rng.randrange(10**5, 10**8)
        later.append(lat)
        record(snap, rng.randrange(3), lat)
    snap.errors += 3
    snap.error_codes["1213"] = 3
    d = snap.minus(old)
    assert d.events == 70 and d.reads == 70 * 14 and d.writes == 280 and d.others == 140
    assert d.lat_sum_ns == sum(later) and d.errors == 3
    assert sum(d.hist) == 70
    assert sum(d.thread_events.values()) == 70
    assert sum(d.thread_lat_ns.values()) == sum(later)
    assert d.error_codes == {"1213": 3}
    # min/max cannot be subtracted: kept from the newer snapshot.
    assert (d.lat_min_ns, d.lat_max_ns) == (snap.lat_min_ns, snap.lat_max_ns)
    assert snap.minus(snap).hist == new_counts()


def test_interval_from():
    old = Snapshot()
    record(old, 0, 3_000_000)
    new = old.copy()
    for lat_ms in (1, 2, 3, 4, 50):
        record(new, 1, lat_ms * 1_000_000)
    new.errors = 2
    st = interval_from(
        new, old, time_s=2.0003, interval_s=1.0001, threads_running=2, percentile=95, queue_length=3, concurrency=1
    )
    assert isinstance(st, IntervalStat)
    assert (st.events, st.reads, st.writes, st.others, st.errors, st.reconnects) == (5, 70, 20, 10, 2, 0)
    # n=5, p95: target floor(4.75+0.5)=5 -> the 50 ms bucket.
    assert st.latency_pct_ms == bucket_value_ms(bucket_index(50_000_000))
    assert (st.time_s, st.interval_s, st.threads_running) == (2.0003, 1.0001, 2)
    assert (st.queue_length, st.concurrency, st.percentile) == (3, 1, 95)
    with pytest.raises(dataclasses.FrozenInstanceError):
        st.events = 0  # type: ignore[misc]


def test_interval_from_percentile_disabled():
    new = Snapshot()
    record(new, 0, 3_000_000)
    st = interval_from(new, Snapshot(), time_s=1, interval_s=1, threads_running=1, percentile=0)
    assert st.latency_pct_ms == 0.0 and st.queue_length is None and st.concurrency is None


def test_summary_from_fills_idle_threads_and_percentiles():
    snap = Snapshot()
    for lat_ms in range(1, 101):
        record(snap, 2, lat_ms * 1_000_000)
    snap.errors = 1
    snap.error_codes = {"1213": 1, "1205": 0}
    s = summary_from(snap, Snapshot(), total_time_s=5.0, elapsed_s=4.9, threads=4, percentile=95)
    assert isinstance(s, Summary)
    assert s.thread_events == (0, 0, 100, 0)
    assert s.thread_lat_ns == (0, 0, snap.lat_sum_ns, 0)
    assert s.events == 100 and s.lat_avg_ns == snap.lat_sum_ns // 100
    assert (s.lat_min_ns, s.lat_max_ns) == (1_000_000, 100_000_000)
    assert s.latency_pct_ms == percentile_ms(snap.hist, 95)
    assert s.hist == tuple(snap.hist) and s.unfinished is None
    assert s.error_codes == {"1213": 1}
    pcts = s.percentiles_ms()
    assert list(pcts) == ["p50", "p90", "p95", "p99", "p99.9"]
    assert pcts["p95"] == s.latency_pct_ms
    assert pcts["p50"] == pytest.approx(50.0, rel=0.01)
    assert s.percentiles_ms((99.99,)) == {"p99.99": percentile_ms(snap.hist, 99.99)}


def test_summary_from_checkpoint_base():
    snap = Snapshot()
    record(snap, 0, 1_000_000)
    base = snap.copy()
    record(snap, 1, 2_000_000)
    s = summary_from(snap, base, total_time_s=2.0, elapsed_s=1.0, threads=2, percentile=95, unfinished=1)
    assert s.events == 1 and s.thread_events == (0, 1) and s.unfinished == 1


def test_summary_lat_avg_without_events():
    s = summary_from(Snapshot(), Snapshot(), total_time_s=1.0, elapsed_s=1.0, threads=1, percentile=95)
    assert s.lat_avg_ns == 0 and s.latency_pct_ms == bucket_value_ms(0)
