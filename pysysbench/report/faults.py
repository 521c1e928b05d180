"""The runs that killed a lab node (``--fault``): their figures as a table, and what the
timeline chart marks (the kill, the node down, the recovery).  From the result file's
``fault`` table (lab/fault.py, stats/recovery.py)."""

from __future__ import annotations

from typing import Any

from ..stats.recovery import errors_text
from .model import Cell
from .tables import TableData, number


def fault_of(doc: dict[str, Any]) -> dict[str, Any] | None:
    fault = doc.get("fault")
    return fault if isinstance(fault, dict) and fault.get("killed_s") is not None else None


def _s(value: Any) -> str:
    return f"{value:.1f} s" if isinstance(value, (int, float)) else "-"


def fault_table(cell_list: list[Cell]) -> TableData | None:
    """One row per run with a fault: the node, its times, the baseline, the time to recover
    and the errors of the fault window; None when no run had one."""
    rows = []
    for c in cell_list:
        for r in c.runs:
            fault = fault_of(r.doc)
            if fault is None:
                continue
            rec = fault.get("recovery") or {}
            baseline = rec.get("baseline_qps")
            ttr = rec.get("time_to_recover_s")
            codes = errors_text(rec.get("errors_by_code"))
            rows.append(
                [
                    str(c.threads),
                    f"r{r.repeat}",
                    f"{fault.get('node')} ({fault.get('lab')})",
                    _s(fault.get("killed_s")),
                    _s(fault.get("restarted_s")),
                    _s(fault.get("answered_s")),
                    number(baseline, 1) if isinstance(baseline, (int, float)) else "-",
                    _s(ttr) if ttr is not None else ("not recovered" if baseline is not None else "-"),
                    codes,
                ]
            )
    if not rows:
        return None
    headers = ["Threads", "Run", "Node killed", "Killed at", "Restarted at", "Answering at"]
    headers += ["QPS before (median)", "Time to recover (90 % QPS)", "Errors in the fault window"]
    return TableData(headers, rows, [True, False, False, True, True, True, True, True, False])


def mark(ax_top: Any, ax_bottom: Any, doc: dict[str, Any], color: Any) -> None:
    """On the timeline chart: the time the node was down shaded, the kill a dashed line
    (labelled with the node), the recovery a dotted one."""
    fault = fault_of(doc)
    if fault is None:
        return
    killed = fault["killed_s"]
    back = fault.get("answered_s") or fault.get("restarted_s") or killed
    recovered = (fault.get("recovery") or {}).get("recovered_s")
    for ax in (ax_top, ax_bottom):
        ax.axvspan(killed, back, color="#d62728", alpha=0.10, linewidth=0)
        ax.axvline(killed, color="#d62728", linestyle="--", linewidth=1.0)
        if recovered is not None:
            ax.axvline(recovered, color=color, linestyle=":", linewidth=1.2)
    labels = [(killed, f"kill {fault.get('node')}", "#d62728", -12)]
    if recovered is not None:
        labels.append((recovered, f"recovered (+{recovered - killed:.1f} s)", color, -24))
    for x, text, tint, dy in labels:
        ax_top.annotate(
            text,
            (x, 1.0),
            xycoords=("data", "axes fraction"),
            xytext=(3, dy),
            textcoords="offset points",
            fontsize="x-small",
            color=tint,
        )
