"""Steadiness of a run: does its throughput trend while it is measured?

Role: a run whose TPS climbs from 24k to 75k in a few seconds (a cold cache, a
ramp-up) has a mean that describes no moment of it.  The test compares the
first and the last third of the run's report intervals: a change beyond the
interval-to-interval noise (95 %) and beyond ``MIN_CHANGE`` marks the run
unsteady.  The noise is the spread of the intervals around a straight line
fitted through them (residual standard deviation, n - 2 degrees of freedom),
which a trend does not inflate -- the plain standard deviation of a climbing run
would hide the very trend it should reveal.  Fewer than ``MIN_INTERVALS`` intervals
cannot tell (``steady`` is None).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from .noise import t_critical

MIN_INTERVALS = 4
MIN_CHANGE = 0.10


def steadiness(tps: Sequence[float]) -> dict[str, Any]:
    n = len(tps)
    if n < MIN_INTERVALS:
        return {"intervals": n, "steady": None}
    k = n // 3
    first, last = sum(tps[:k]) / k, sum(tps[-k:]) / k
    xs = range(n)
    mx, my = (n - 1) / 2, sum(tps) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, tps)) / sxx
    residual = sum((y - my - slope * (x - mx)) ** 2 for x, y in zip(xs, tps))
    sd = math.sqrt(residual / (n - 2))
    margin = t_critical(n - 2) * sd * math.sqrt(2 / k)
    if not first:
        return {"intervals": n, "first_third_tps": first, "last_third_tps": last, "steady": None}
    change, noise = last / first - 1, margin / first
    return {
        "intervals": n,
        "first_third_tps": first,
        "last_third_tps": last,
        "change": change,
        "noise": noise,
        "steady": not (abs(change) > noise and abs(change) >= MIN_CHANGE),
    }


def of_intervals(intervals: Sequence[dict[str, Any]]) -> dict[str, Any]:
    return steadiness([float(iv.get("tps") or 0.0) for iv in intervals if isinstance(iv, dict)])
