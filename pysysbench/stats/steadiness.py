"""Steadiness of a run: does its throughput trend while it is measured?

Role: a run whose TPS climbs from 24k to 75k in a few seconds (a cold cache, a
ramp-up) has a mean that describes no moment of it.  The test compares the
first and the last third of the run's report intervals: a change beyond the
interval-to-interval noise (95 %) and beyond ``MIN_CHANGE`` marks the run
unsteady.  The noise is estimated from successive differences (von Neumann's
mean square successive difference), which a trend barely inflates -- the plain
standard deviation of a climbing run would hide the very trend it should reveal.  Fewer than ``MIN_INTERVALS`` intervals
cannot tell (``steady`` is None).
"""

from __future__ import annotations

from typing import Any, Sequence

import math

from .noise import t_critical

MIN_INTERVALS = 6
MIN_CHANGE = 0.05


def steadiness(tps: Sequence[float]) -> dict[str, Any]:
    n = len(tps)
    if n < MIN_INTERVALS:
        return {"intervals": n, "steady": None}
    k = n // 3
    first, last = sum(tps[:k]) / k, sum(tps[-k:]) / k
    sd = math.sqrt(sum((b - a) ** 2 for a, b in zip(tps, tps[1:])) / (2 * (n - 1)))
    margin = t_critical(n - 1) * sd * math.sqrt(2 / k)
    if not first:
        return {"intervals": n, "first_third_tps": first, "last_third_tps": last, "steady": None}
    change, noise = last / first - 1, margin / first
    return {"intervals": n, "first_third_tps": first, "last_third_tps": last, "change": change, "noise": noise,
            "steady": not (abs(change) > noise and abs(change) >= MIN_CHANGE)}


def of_intervals(intervals: Sequence[dict[str, Any]]) -> dict[str, Any]:
    return steadiness([float(iv.get("tps") or 0.0) for iv in intervals if isinstance(iv, dict)])
