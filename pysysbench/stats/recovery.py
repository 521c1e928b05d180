"""Time to recover from a fault, from a run's per-interval series (``--report-interval``).

Role: a node of a lab is killed at ``kill_s`` seconds into the run (``--fault``).  The
*baseline* is the median QPS of the intervals that ended by the kill; the run has
*recovered* at the start of the first interval that began at or after the kill (an interval
the kill fell into mixes before and after) whose QPS is at least ``RECOVERED_SHARE`` of the
baseline.  Time to recover = that start - ``kill_s`` (so its resolution is one interval).
The *fault window* runs from the kill to the recovery (to the run's end when it never
recovered); the errors by code are those of the intervals that overlap it.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from typing import Any

RECOVERED_SHARE = 0.9
SLACK_S = 0.05  # an interval that began this much before the kill still counts as after it (timer jitter)


def _start(iv: dict[str, Any]) -> float:
    return float(iv["time_s"]) - float(iv["interval_s"])


def recovery(intervals: Sequence[dict[str, Any]], kill_s: float, answered_s: float | None = None) -> dict[str, Any]:
    """The recovery figures of a result file's ``intervals`` for a kill at ``kill_s``:
    baseline_qps, recovered_s, time_to_recover_s (None when the run did not recover, or
    had no interval before the kill), and errors_by_code in the fault window: from the kill
    until QPS is back and the node answers again (``answered_s``; the other nodes may carry
    the QPS while a session still finds its connection to the killed one gone)."""
    before = [float(iv["qps"]) for iv in intervals if float(iv["time_s"]) <= kill_s + SLACK_S]
    baseline = statistics.median(before) if before else None
    recovered = None
    if baseline is not None:
        after = [iv for iv in intervals if _start(iv) >= kill_s - SLACK_S]
        back = next((iv for iv in after if float(iv["qps"]) >= RECOVERED_SHARE * baseline), None)
        recovered = None if back is None else max(kill_s, _start(back))
    end = max(recovered, answered_s or 0.0) if recovered is not None else float("inf")
    codes: dict[str, int] = {}
    for iv in intervals:
        if float(iv["time_s"]) > kill_s and _start(iv) < end:
            for code, n in (iv.get("errors_by_code") or {}).items():
                codes[code] = codes.get(code, 0) + int(n)
    return {
        "baseline_qps": baseline,
        "recovered_share": RECOVERED_SHARE,
        "recovered_s": recovered,
        "time_to_recover_s": None if recovered is None else round(recovered - kill_s, 3),
        "errors_by_code": dict(sorted(codes.items())),
    }


def errors_text(by_code: dict[str, int] | None) -> str:
    """``2013: 2, 1213: 3`` (in the record's order), ``none`` for no error."""
    return ", ".join(f"{code}: {n}" for code, n in (by_code or {}).items()) or "none"


def recovery_text(fault: dict[str, Any]) -> list[str]:
    """The lines printed after a run's summary (and shown by reports) for one fault record."""
    r = fault.get("recovery") or {}
    times = f"killed at {fault['killed_s']:.1f} s"
    if fault.get("restarted_s") is not None:
        times += f", restarted at {fault['restarted_s']:.1f} s"
    if fault.get("answered_s") is not None:
        times += f", answering again at {fault['answered_s']:.1f} s"
    if fault.get("error"):
        times += f" ({fault['error']})"
    if r.get("baseline_qps") is None:
        ttr = "time to recover: unknown (no report interval ended before the kill)"
    elif r.get("time_to_recover_s") is None:
        ttr = f"time to recover: not recovered by the end of the run (baseline {r['baseline_qps']:.1f} qps)"
    else:
        ttr = (
            f"time to recover: {r['time_to_recover_s']:.1f} s (QPS back to {r['recovered_share']:.0%} "
            f"of {r['baseline_qps']:.1f} at {r['recovered_s']:.1f} s)"
        )
    codes = errors_text(r.get("errors_by_code"))
    notes = [f"    lab: {line}" for line in fault.get("notes") or []]
    return [
        f"fault: {fault['node']} of lab {fault['lab']} {times}",
        f"    {ttr}; errors in the fault window: {codes}",
        *notes,
    ]
