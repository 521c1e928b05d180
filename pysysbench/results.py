"""Versioned result files: one JSON document per run (``--result-file``).

Everything a report or a comparison needs, computed from the frozen stats
records: every counter, min/avg/max and several percentiles, the per-interval
series, the effective options with secrets removed, tool and server versions,
start time.  Files are written atomically and durably (``pysysbench.files``).

Two fields belong to campaigns (``pysysbench campaign run``): ``labels`` (the
user's tags such as database version, instance size, parameter template; ``{}``
for a plain run) and ``campaign`` (which campaign, workload, thread count and
repeat produced the run; ``null`` for a plain run).  Readers of older files
treat a missing field as empty.
"""

from __future__ import annotations

import json
import os
import platform
from typing import Any, Iterable

from .errors import UsageError
from .files import write_atomic
from .options import Values
from .stats.records import IntervalStat, Summary

FORMAT = "pysysbench-result"
FORMAT_VERSION = 1
RESULT_PERCENTILES = (50, 90, 95, 99, 99.9)
MASK = "***"


def _rate(count: int, seconds: float) -> float:
    return count / seconds if seconds > 0 else 0.0


def summary_dict(s: Summary) -> dict[str, Any]:
    queries = s.reads + s.writes + s.others
    return {
        "total_time_s": s.total_time_s,
        "elapsed_s": s.elapsed_s,
        "threads": s.threads,
        "events": s.events,
        "tps": _rate(s.events, s.elapsed_s),
        "queries": {"read": s.reads, "write": s.writes, "other": s.others, "total": queries},
        "qps": _rate(queries, s.elapsed_s),
        "errors": s.errors,
        "errors_per_s": _rate(s.errors, s.elapsed_s),
        "reconnects": s.reconnects,
        "reconnects_per_s": _rate(s.reconnects, s.elapsed_s),
        "errors_by_code": dict(s.error_codes),
        "reconnect_failures": sum(s.reconnect_failures.values()),
        "reconnect_failures_by_code": dict(s.reconnect_failures),
        "last_reconnect_error": s.reconnect_error or None,
        "latency_ms": {
            "min": s.lat_min_ns / 1e6,
            "avg": s.lat_avg_ns / 1e6,
            "max": s.lat_max_ns / 1e6,
            "sum": s.lat_sum_ns / 1e6,
            "percentile": s.percentile,
            "percentile_value": s.latency_pct_ms,
            **(s.percentiles_ms(RESULT_PERCENTILES) if s.events else {}),
        },
        "histogram": {str(i): n for i, n in enumerate(s.hist) if n},
        "thread_events": list(s.thread_events),
        "thread_latency_ms": [ns / 1e6 for ns in s.thread_lat_ns],
        "unfinished": s.unfinished,
    }


def interval_dict(st: IntervalStat) -> dict[str, Any]:
    q = st.reads + st.writes + st.others
    d = {
        "time_s": st.time_s, "interval_s": st.interval_s, "threads": st.threads_running,
        "events": st.events, "tps": _rate(st.events, st.interval_s),
        "reads": st.reads, "writes": st.writes, "others": st.others, "qps": _rate(q, st.interval_s),
        "errors": st.errors, "reconnects": st.reconnects, "reconnect_failures": st.reconnect_failures,
        "latency_pct_ms": st.latency_pct_ms,
    }
    if st.queue_length is not None:
        d.update(queue_length=st.queue_length, concurrency=st.concurrency)
    return d


def redact_argv(argv: Iterable[str], values: Values) -> list[str]:
    """The command line with secret option values masked."""
    secret = {o.key for o in values.registry if o.secret}
    out = []
    for arg in argv:
        if arg.startswith("--") and "=" in arg:
            name, _ = arg[2:].split("=", 1)
            if name.replace("-", "_").lower() in secret:
                arg = f"--{name}={MASK}"
        out.append(arg)
    return out


def build(*, values: Values, argv: list[str], test: str, command: str, driver: str, server_version: str,
          started_at: str, summary: Summary | None, intervals: list[IntervalStat], exit_code: int,
          error: str | None, version: str, interrupted: str | None = None, labels: dict[str, str] | None = None,
          campaign: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "tool": {"name": "pysysbench", "version": version, "python": platform.python_version()},
        "client": {"hostname": platform.node(), "platform": platform.platform(), "cpus": os.cpu_count()},
        "command_line": redact_argv(argv, values),
        "test": test,
        "command": command,
        "driver": driver,
        "server_version": server_version,
        "started_at": started_at,
        "options": values.public(),
        "summary": summary_dict(summary) if summary is not None else None,
        "intervals": [interval_dict(st) for st in intervals],
        "exit_code": exit_code,
        "error": error,
        "interrupted": interrupted,
        "labels": dict(labels or {}),
        "campaign": campaign,
    }


def annotate(doc: dict[str, Any], *, labels: dict[str, str], campaign: dict[str, Any]) -> dict[str, Any]:
    """Attach a campaign's labels and run identity to a run's document."""
    doc["labels"] = dict(labels)
    doc["campaign"] = campaign
    return doc


def save(path: str, doc: dict[str, Any]) -> None:
    """Atomic, durable write (:func:`pysysbench.files.write_atomic`): a reader never sees half a file."""
    write_atomic(path, json.dumps(doc, indent=1, sort_keys=False) + "\n", "result file")


def load(path: str) -> dict[str, Any]:
    try:
        with open(path, encoding="utf-8") as fh:
            doc = json.load(fh)
    except OSError as exc:
        raise UsageError(f"cannot read result file '{path}': {exc.strerror}") from None
    except json.JSONDecodeError as exc:
        raise UsageError(f"'{path}' is not a pysysbench result file (invalid JSON at line {exc.lineno}; "
                         "truncated?)") from None
    except UnicodeDecodeError:
        raise UsageError(f"'{path}' is not a pysysbench result file (not UTF-8 text)") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise UsageError(f"'{path}' is not a pysysbench result file")
    version = doc.get("format_version")
    if not isinstance(version, int) or isinstance(version, bool):
        raise UsageError(f"'{path}' is not a pysysbench result file (no format version)")
    if not isinstance(doc.get("summary"), (dict, type(None))) or not isinstance(doc.get("intervals", []), list):
        raise UsageError(f"'{path}' is a damaged pysysbench result file (summary or intervals malformed)")
    if version > FORMAT_VERSION:
        raise UsageError(f"'{path}' has result format version {version}; this pysysbench "
                         f"reads up to {FORMAT_VERSION}: upgrade pysysbench")
    return doc


__all__ = ["build", "save", "load", "annotate", "redact_argv", "FORMAT_VERSION"]
