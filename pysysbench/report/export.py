"""Export of result files as flat rows: CSV or JSON lines, for pandas and spreadsheets.

Role: one row per run (or, with ``intervals``, one row per report interval of
every run), with the run's identity (file, campaign, workload, labels as
``label.<name>`` columns, threads, repeat) and its figures.  Columns are the
same for every row, so a CSV opens cleanly; units are in the column names.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable
from typing import Any

from .model import Run

RUN_COLUMNS = (
    "file",
    "campaign",
    "workload",
    "test",
    "threads",
    "repeat",
    "driver",
    "server_version",
    "started_at",
    "exit_code",
    "error",
    "time_s",
    "events",
    "tps",
    "qps",
    "reads",
    "writes",
    "others",
    "errors",
    "errors_per_s",
    "reconnects",
    "reconnects_per_s",
    "retried",
    "failed",
    "multi_node_write_share",
    "lat_min_ms",
    "lat_avg_ms",
    "lat_max_ms",
    "lat_p50_ms",
    "lat_p90_ms",
    "lat_p95_ms",
    "lat_p99_ms",
    "lat_p99.9_ms",
    "client_busy_fraction",
    "client_cpu_us_per_query",
    "steady",
    "steadiness_change",
    "host_load_start",
    "host_load_end",
    "host_steal_fraction",
    "server_hit_ratio",
    "server_lock_waits_per_trx",
    "server_fsyncs_per_trx",
    "server_cpu_us_per_query",
)
INTERVAL_COLUMNS = (
    "file",
    "campaign",
    "workload",
    "test",
    "threads",
    "repeat",
    "time_s",
    "interval_s",
    "threads_running",
    "events",
    "tps",
    "qps",
    "reads",
    "writes",
    "others",
    "errors",
    "reconnects",
    "retried",
    "failed",
    "latency_pct_ms",
    "percentile",
    "client_cpu_s",
)
FORMATS = ("csv", "jsonl")


def _identity(r: Run) -> dict[str, Any]:
    return {
        "file": r.path,
        "campaign": r.campaign.get("name"),
        "workload": r.workload,
        "test": r.test,
        "threads": r.threads,
        "repeat": r.repeat,
    }


def run_row(r: Run) -> dict[str, Any]:
    s = r.summary
    q = s.get("queries") or {}
    lat = s.get("latency_ms") or {}
    row = _identity(r)
    row.update(
        driver=r.doc.get("driver"),
        server_version=r.doc.get("server_version"),
        started_at=r.doc.get("started_at"),
        exit_code=r.doc.get("exit_code"),
        error=r.doc.get("error"),
        time_s=s.get("total_time_s"),
        events=s.get("events"),
        tps=s.get("tps"),
        qps=s.get("qps"),
        reads=q.get("read"),
        writes=q.get("write"),
        others=q.get("other"),
        errors=s.get("errors"),
        errors_per_s=s.get("errors_per_s"),
        reconnects=s.get("reconnects"),
        reconnects_per_s=s.get("reconnects_per_s"),
        retried=s.get("retried"),  # --max-retries (absent without it)
        failed=s.get("failed"),
        multi_node_write_share=s.get("multi_node_write_share"),  # --shard-nodes (the same)
    )
    for name in ("min", "avg", "max", "p50", "p90", "p95", "p99", "p99.9"):
        row[f"lat_{name}_ms"] = lat.get(name)
    h = r.host
    derived = r.derived
    row.update(
        client_busy_fraction=r.busy,
        client_cpu_us_per_query=r.cpu_us_per_query,
        steady=r.steady,
        steadiness_change=r.steadiness.get("change"),
        host_load_start=(h.get("loadavg_start") or [None])[0],
        host_load_end=(h.get("loadavg_end") or [None])[0],
        host_steal_fraction=h.get("steal_fraction"),
        server_hit_ratio=derived.get("hit_ratio"),
        server_lock_waits_per_trx=derived.get("lock_waits_per_trx"),
        server_fsyncs_per_trx=derived.get("fsyncs_per_trx"),
        server_cpu_us_per_query=derived.get("server_cpu_us_per_query"),
    )
    return row


def interval_rows(r: Run) -> Iterable[dict[str, Any]]:
    pct = (r.doc.get("options") or {}).get("percentile")
    for iv in r.intervals:
        row = _identity(r)
        row.update(
            time_s=iv.get("time_s"),
            interval_s=iv.get("interval_s"),
            threads_running=iv.get("threads"),
            events=iv.get("events"),
            tps=iv.get("tps"),
            qps=iv.get("qps"),
            reads=iv.get("reads"),
            writes=iv.get("writes"),
            others=iv.get("others"),
            errors=iv.get("errors"),
            reconnects=iv.get("reconnects"),
            retried=iv.get("retried"),
            failed=iv.get("failed"),
            latency_pct_ms=iv.get("latency_pct_ms"),
            percentile=pct,
            client_cpu_s=iv.get("client_cpu_s"),
        )
        yield row


def rows(runs: list[Run], *, intervals: bool = False) -> tuple[list[str], list[dict[str, Any]]]:
    """Column names and rows; labels become ``label.<name>`` columns (empty when absent)."""
    label_keys = sorted({k for r in runs for k in (r.doc.get("labels") or {})})
    base = INTERVAL_COLUMNS if intervals else RUN_COLUMNS
    columns = list(base[:4]) + [f"label.{k}" for k in label_keys] + list(base[4:])
    out = []
    for r in runs:
        labels = dict(r.doc.get("labels") or {})
        for row in interval_rows(r) if intervals else [run_row(r)]:
            row.update({f"label.{k}": labels.get(k) for k in label_keys})
            out.append({c: row.get(c) for c in columns})
    return columns, out


def to_csv(columns: list[str], data: list[dict[str, Any]]) -> str:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=columns, lineterminator="\n")
    w.writeheader()
    for row in data:
        w.writerow({k: "" if v is None else v for k, v in row.items()})
    return buf.getvalue()


def to_jsonl(columns: list[str], data: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in data)


def render(runs: list[Run], fmt: str, *, intervals: bool = False) -> str:
    columns, data = rows(runs, intervals=intervals)
    return to_csv(columns, data) if fmt == "csv" else to_jsonl(columns, data)
