"""Peak finding (``threads = "auto"``) and the run-to-run noise statistics it uses."""

from __future__ import annotations

import math

import pytest

from pysysbench.campaign.peak import find_peak, improves, next_threads
from pysysbench.campaign.spec import AutoThreads
from pysysbench.stats.noise import difference, sample, t_critical, welch_margin


def curve(points: dict[int, float]):
    calls: list[tuple[int, str]] = []

    def measure(threads: int, phase: str) -> list[float]:
        calls.append((threads, phase))
        return [points[threads]] if threads in points else [saturating(threads)]

    return measure, calls


def saturating(threads: int) -> float:
    """Throughput that grows up to ~12 threads, then degrades a little."""
    return 1000 * min(threads, 12) - 5 * max(0, threads - 12) ** 2


# --- noise ---------------------------------------------------------------------------------


def test_sample_statistics():
    s = sample([10, 12, 14])
    assert (s.n, s.mean, s.sd) == (3, 12.0, 2.0)
    assert math.isclose(s.cv, 2 / 12)
    assert sample([5]).sd == 0.0


def test_t_critical_values():
    assert t_critical(1) == 12.706 and t_critical(4.9) == 2.776 and t_critical(30) == 2.042
    assert t_critical(1000) == 1.96 and t_critical(0.5) == 12.706


def test_welch_margin_matches_hand_computation():
    a, b = sample([100, 102, 98]), sample([110, 111, 109, 110])
    va, vb = 4 / 3, (2 / 3) / 4  # variances of the means
    df = (va + vb) ** 2 / (va**2 / 2 + vb**2 / 3)
    assert math.isclose(welch_margin(a, b), t_critical(df) * math.sqrt(va + vb))
    assert welch_margin(sample([1]), b) is None
    assert welch_margin(sample([5, 5]), sample([6, 6])) == 0.0


def test_difference_verdict_inputs():
    base = sample([1000, 1010, 990])
    clear = difference(base, sample([1100, 1110, 1090]), 0.01)
    assert math.isclose(clear.ratio, 1.1) and clear.significant is True
    noisy = difference(base, sample([900, 1200, 1050]), 0.01)
    assert noisy.significant is False and noisy.noise > abs(noisy.change)
    tiny = difference(sample([1000, 1000.5, 999.5]), sample([1003, 1003.5, 1002.5]), 0.01)
    assert tiny.significant is False  # beyond the noise, but under min_effect
    single = difference(sample([1000]), sample([1200]), 0.01)
    assert single.significant is None and single.noise is None and math.isclose(single.change, 0.2)


# --- search ---------------------------------------------------------------------------------


def test_next_threads_always_grows():
    assert [next_threads(t, 2) for t in (1, 2, 3, 48)] == [2, 4, 6, 96]
    assert next_threads(1, 1.2) == 2 and next_threads(10, 1.5) == 15


def test_doubling_then_refine():
    measure, calls = curve({})
    peak = find_peak(AutoThreads(start=1, factor=2, max=256), measure)
    assert [t for t, ph in calls if ph == "search"] == [1, 2, 4, 8, 16, 32]  # 32 is worse than 16
    assert [t for t, ph in calls if ph == "refine"] == [11, 23]  # geometric midpoints of 8..16 and 16..32
    assert peak.threads == 16 and peak.value == saturating(16)
    assert "no gain" in peak.stopped


def test_saturation_is_the_fewest_threads_within_noise_of_the_peak():
    measure, calls = curve({1: 100, 2: 200, 4: 390, 8: 400})
    peak = find_peak(AutoThreads(start=1, max=8, refine=0), measure)
    assert [t for t, _ in calls] == [1, 2, 4, 8]
    assert (peak.threads, peak.value, peak.saturation_threads) == (8, 400, 4)


def test_search_stops_at_max():
    measure, calls = curve({t: 100.0 * t for t in range(1, 100)})
    peak = find_peak(AutoThreads(start=2, factor=2, max=20, refine=0), measure)
    assert [t for t, _ in calls] == [2, 4, 8, 16, 20]
    assert peak.threads == 20 and peak.stopped == "reached max = 20"


def test_patience_tolerates_one_flat_step():
    values = {1: 100, 2: 190, 4: 195, 8: 400, 16: 380, 32: 300}
    measure, calls = curve(values)
    find_peak(AutoThreads(start=1, patience=1, refine=0), measure)
    assert [t for t, _ in calls] == [1, 2, 4]
    measure, calls = curve(values)
    peak = find_peak(AutoThreads(start=1, patience=2, refine=0), measure)
    assert [t for t, _ in calls] == [1, 2, 4, 8, 16, 32] and peak.threads == 8


def test_noise_from_repeats_blocks_false_improvements():
    best, new = sample([1000, 1100, 900]), sample([1080, 1180, 980])  # +8 %, but sd 100
    assert not improves(new, best, 0.05)
    assert improves(sample([1300, 1310, 1290]), best, 0.05)
    assert improves(sample([1080]), sample([1000]), 0.05)  # single runs: min_gain only


def test_peak_with_repeats_uses_means():
    def measure(threads, phase):
        base = saturating(threads)
        return [base * 0.98, base * 1.02]

    peak = find_peak(AutoThreads(start=4, factor=2, max=64, refine=0), measure)
    assert peak.threads == 16 and all(p.sample.n == 2 for p in peak.points)


def test_result_document():
    measure, _ = curve({})
    d = find_peak(AutoThreads(start=4, max=8, refine=0, metric="qps"), measure).as_dict()
    assert d["metric"] == "qps" and d["threads"] == 8
    assert [p["threads"] for p in d["tested"]] == [4, 8] and d["tested"][0]["n"] == 1


@pytest.mark.parametrize("start,maximum", [(1, 1), (3, 3)])
def test_single_point(start, maximum):
    measure, calls = curve({})
    peak = find_peak(AutoThreads(start=start, max=maximum), measure)
    assert calls == [(start, "search")] and peak.threads == start == peak.saturation_threads


def test_within_min_gain_and_within_noise_are_kept_apart():
    """Issue 20: with noisy repeats the old combined rule named the lowest thread count; the
    peak now carries both facts, and the progress line states them separately."""
    from pysysbench.campaign.spec import WorkloadSpec
    from pysysbench.cli.progress import peak_line

    noisy = {1: [600, 1500], 2: [1900, 2100], 4: [2000, 2040]}
    peak = find_peak(AutoThreads(start=1, max=4, patience=3, refine=0), lambda t, phase: noisy[t])
    assert peak.threads == 4 and peak.within_gain_threads == 2 and peak.within_noise_threads == 1
    assert peak.as_dict()["within_noise_threads"] == 1
    w = WorkloadSpec("ps", "oltp_point_select", (), AutoThreads(), {}, 1, 0, 2)
    assert ", within 5% of it from 2 threads, within noise of it from 1 thread" in peak_line(w, peak)
    single = find_peak(AutoThreads(start=1, max=2, patience=3, refine=0), lambda t, phase: [1000.0 * t])
    assert single.within_noise_threads is None and "noise unknown (no repeats)" in peak_line(w, single)
