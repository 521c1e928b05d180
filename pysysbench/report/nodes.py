"""The per-node view in reports: runs made with ``--server-nodes`` (engine/nodes.py).

Role: one row per database node of every such run (name, role, QPS and its share of the
role's work, errors, CPU, intervals down, the skew flag) in the workload's section, and
a chart of every node's per-interval QPS (one panel per run, a cross where a node was
down).  Read from the result files' ``server_nodes`` only; a report without such runs
has neither.
"""

from __future__ import annotations

from typing import Any

from .model import Cell, Run, differing_keys, variant_text, variants
from .tables import TableData, number

MAX_PANELS = 6  # runs drawn in the chart (the first ones); the table lists every run


def view(r: Run) -> dict[str, Any]:
    v = r.doc.get("server_nodes")
    return v if isinstance(v, dict) and isinstance(v.get("nodes"), list) else {}


def _runs(cell_list: list[Cell]) -> list[tuple[Cell, Run]]:
    return [(c, r) for c in cell_list for r in c.runs if view(r).get("nodes")]


def _share(n: dict[str, Any]) -> str:
    share = n.get("share")
    return "-" if not isinstance(share, (int, float)) else f"{share:.1%} (even {n.get('even_share', 0):.1%})"


def _cpu(n: dict[str, Any]) -> str:
    cpu = n.get("cpu_pct")
    return "-" if not isinstance(cpu, (int, float)) else f"{cpu:.1f}%"


def node_row(n: dict[str, Any]) -> list[str]:
    down = n.get("intervals_down") or 0
    return [
        str(n.get("name", "?")),
        str(n.get("role", "")),
        number(n.get("qps") or 0.0),
        _share(n),
        f"{n.get('errors') or 0:g}",
        _cpu(n),
        f"{down}/{n.get('intervals', 0)}" if down else "-",
        "skew" if n.get("skew") else "-",
    ]


def nodes_table(cell_list: list[Cell]) -> TableData | None:
    """One row per node of every run that sampled its nodes (None: no such run)."""
    runs = _runs(cell_list)
    if not runs:
        return None
    vs = variants(cell_list)
    keys = differing_keys(vs) if len(vs) > 1 else []
    headers = ([", ".join(keys)] if keys else []) + ["Threads", "Run", "Node", "Role", "QPS", "Share"]
    headers += ["Errors", "CPU (one core)", "Down", "Skew"]
    rows = []
    for c, r in runs:
        unit = view(r).get("share_of", "queries")
        for n in view(r)["nodes"]:
            first = ([variant_text(c.variant, keys)] if keys else []) + [str(c.threads), f"r{r.repeat}"]
            row = first + node_row(n)
            if unit != "queries":  # PostgreSQL: transactions, not statements
                row[len(first) + 2] += " tps"
            rows.append(row)
    right = ([False] if keys else []) + [True, False, False, False, True, True, True, True, True, False]
    return TableData(headers, rows, right)


def skew_notes(cell_list: list[Cell]) -> list[str]:
    """One sentence per run with a skewed or down node."""
    out = []
    for c, r in _runs(cell_list):
        odd = [n for n in view(r)["nodes"] if n.get("skew") or n.get("intervals_down")]
        if odd:
            names = ", ".join(
                f"{n['name']} {_share(n)}"
                + (f", down {n['intervals_down']}/{n['intervals']}" if n.get("intervals_down") else "")
                for n in odd
            )
            out.append(f"{c.threads} threads r{r.repeat}: the work is not spread evenly over the nodes: {names}")
    return out


def nodes_chart(workload: str, cell_list: list[Cell]) -> bytes | None:
    """Every node's per-interval QPS, one panel per run (None: no run sampled its nodes)."""
    runs = _runs(cell_list)[:MAX_PANELS]
    if not runs:
        return None
    from matplotlib.figure import Figure

    from .charts import WIDTH_IN, _style, png

    fig = Figure(figsize=(WIDTH_IN, 1.2 + 2.2 * len(runs)), layout="constrained")
    axes = fig.subplots(len(runs), 1, sharex=True, squeeze=False)[:, 0]
    for ax, (c, r) in zip(axes, runs):
        for n in view(r)["nodes"]:
            series = [iv for iv in n.get("series") or [] if isinstance(iv, dict)]
            ts = [iv.get("time_s") for iv in series]
            qps = [iv.get("qps") if iv.get("up") else None for iv in series]
            (line,) = ax.plot(
                ts,
                [float("nan") if q is None else q for q in qps],
                linewidth=1.2,
                label=f"{n.get('name')} ({n.get('role')})",
            )
            down = [t for t, iv in zip(ts, series) if not iv.get("up")]
            ax.plot(down, [0] * len(down), "x", color=line.get_color(), markersize=7)
        ax.set_title(f"{c.threads} threads r{r.repeat}", fontsize="small")
        ax.set_ylabel(view(r).get("share_of", "queries") + "/s")
        ax.set_ylim(bottom=0)
        ax.legend(fontsize="x-small", loc="upper left", bbox_to_anchor=(1.0, 1.0))
    axes[0].figure.suptitle(f"{workload}: per-node throughput (x: node down)")
    axes[-1].set_xlabel("seconds since the start of the measured phase")
    _style(fig)
    return png(fig)
