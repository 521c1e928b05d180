"""The client machine's state around a run: load average and CPU time split.

Role: two snapshots (start and end of the measured phase) tell whether the
machine was busier during one run than during another (drift between the sides
of a comparison) and whether a hypervisor took CPU away (steal).  Linux reads
``/proc/stat``; elsewhere only the load average is known.  Standard library only,
never raises: a missing figure is absent, not an error.
"""

from __future__ import annotations

import os
from typing import Any

PROC_STAT = "/proc/stat"
FIELDS = ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal")


def snapshot() -> dict[str, Any]:
    out: dict[str, Any] = {}
    try:
        out["loadavg"] = [round(x, 2) for x in os.getloadavg()]
    except OSError:
        pass
    try:
        with open(PROC_STAT, "rb") as fh:  # bytes: a text file's codec import was 0.7 M instructions
            first = fh.readline().split()
        if first and first[0] == b"cpu":
            out["cpu"] = dict(zip(FIELDS, (int(x) for x in first[1 : 1 + len(FIELDS)])))
    except (OSError, ValueError):
        pass
    return out


def between(start: dict[str, Any], end: dict[str, Any]) -> dict[str, Any]:
    """What the result file stores under ``host``: load averages at both ends, and over
    the interval the machine's busy and steal shares of all its CPUs."""
    out: dict[str, Any] = {"cpus": os.cpu_count()}
    if "loadavg" in start:
        out["loadavg_start"] = start["loadavg"]
    if "loadavg" in end:
        out["loadavg_end"] = end["loadavg"]
    a, b = start.get("cpu"), end.get("cpu")
    if a and b:
        delta = {k: b.get(k, 0) - a.get(k, 0) for k in FIELDS}
        total = sum(delta.values())
        if total > 0:
            out["busy_fraction"] = round((total - delta["idle"] - delta["iowait"]) / total, 4)
            out["steal_fraction"] = round(delta["steal"] / total, 4)
    return out


def mean_load(host: dict[str, Any] | None) -> float | None:
    """The 1-minute load average over a run (mean of its two ends), None when unknown."""
    if not host:
        return None
    ends = [h[0] for h in (host.get("loadavg_start"), host.get("loadavg_end")) if isinstance(h, list) and h]
    return sum(ends) / len(ends) if ends else None
