"""Versioned result files: one JSON document per run (``--result-file``).

Everything a report or a comparison needs, computed from the frozen stats
records: every counter, min/avg/max and several percentiles, the per-interval
series, the effective options with secrets removed, tool and server versions,
start time, and which implementation ran the hot path (``implementation``: the C extension
or the Python twins, and for a Lua script which Lua and who ran its events).  Files are written atomically and durably (``pysysbench.core.files``).

Two fields belong to campaigns (``pysysbench campaign run``): ``labels`` (the
user's tags such as database version, instance size, parameter template; ``{}``
for a plain run) and ``campaign`` (which campaign, workload, thread count and
repeat produced the run; ``null`` for a plain run).  Readers of older files
treat a missing field as empty.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from collections.abc import Set as AbstractSet
from dataclasses import field
from typing import Any

from ..core.errors import DamagedResultFile, NotAResultFile, UsageError
from ..core.options import Values
from ..core.record import record
from .histogram import N_BUCKETS
from .records import IntervalStat, Summary

# json, platform, files (tempfile) and stats.steadiness are imported where a document is
# built, saved or read: a run without --result-file needs only RunOutcome and client_busy

FORMAT = "pysysbench-result"
FORMAT_VERSION = 1
RESULT_PERCENTILES = (50, 90, 95, 99, 99.9)
MASK = "***"


@record
class RunOutcome:
    """What one run measured and how it ended: what ``engine.run`` returns (the
    library call's answer) and what the result document is built from."""

    summary: Summary
    intervals: list[IntervalStat] = field(default_factory=list)
    started_at: str = ""
    exit_code: int = 0
    error: str | None = None
    forced: bool = False
    interrupted: str | None = None  # what stopped the run early: "SIGINT", "SIGTERM", "stdout closed"
    traceback: BaseException | None = None
    workers: int = 1
    client_cpu_s: float = 0.0
    per_worker: list[dict[Any, Any]] = field(default_factory=list)
    connections: dict[str, int] = field(default_factory=dict)  # database node -> sessions
    nodes: list[dict[Any, Any]] = field(default_factory=list)  # per client machine (Ray)
    server_version: str = ""
    interval_cpu_s: list[float] = field(default_factory=list)  # client CPU seconds of each report interval
    host: dict[Any, Any] = field(default_factory=dict)  # the client machine over the measured phase
    server_context: dict[Any, Any] | None = None  # engine/servercontext.py
    server_nodes: dict[Any, Any] | None = None  # --server-nodes: the per-node view (engine/nodes.py)
    partial: bool = False  # error: a worker process or Ray actor was lost; the figures (what was measured
    # until its last report) are still reported, on stdout as in the result file


def client_busy(outcome: RunOutcome) -> float:
    """Share of the client's cores its worker processes kept busy in the measured phase
    (0..1, start-up and warm-up not counted): the mean of the workers' shares (one
    worker process at most 100 %), or the one process's share when the threads run in
    this process."""
    if outcome.nodes:  # several client machines: the busiest one decides
        busiest: float = max(n["busy_fraction"] for n in outcome.nodes)
        return busiest
    elapsed = outcome.summary.total_time_s
    if elapsed <= 0:
        return 0.0
    if outcome.per_worker and all("busy_fraction" in w for w in outcome.per_worker):
        mean: float = sum(w["busy_fraction"] for w in outcome.per_worker) / len(outcome.per_worker)
        return mean
    return min(1.0, outcome.client_cpu_s / elapsed)


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
        **_retries(s),
        **_spans(s),
    }


def _spans(s: Summary) -> dict[str, Any]:
    """--shard-nodes' counts (absent when the option was off)."""
    if s.write_trx is None:
        return {}
    out: dict[str, Any] = {"write_trx": s.write_trx, "multi_node_write_trx": s.spanning_trx or 0}
    if s.write_trx:
        out["multi_node_write_share"] = (s.spanning_trx or 0) / s.write_trx
    return out


def _retries(s: Summary | IntervalStat) -> dict[str, int]:
    """--max-retries' counts (absent when the option was off)."""
    return {} if s.retried is None else {"retried": s.retried, "failed": s.failed or 0}


def interval_dict(st: IntervalStat) -> dict[str, Any]:
    q = st.reads + st.writes + st.others
    d: dict[str, Any] = {
        "time_s": st.time_s,
        "interval_s": st.interval_s,
        "threads": st.threads_running,
        "events": st.events,
        "tps": _rate(st.events, st.interval_s),
        "reads": st.reads,
        "writes": st.writes,
        "others": st.others,
        "qps": _rate(q, st.interval_s),
        "errors": st.errors,
        "reconnects": st.reconnects,
        "reconnect_failures": st.reconnect_failures,
        "latency_pct_ms": st.latency_pct_ms,
        **_retries(st),
    }
    if st.queue_length is not None:
        d.update(queue_length=st.queue_length, concurrency=st.concurrency)
    if st.error_codes:
        d["errors_by_code"] = dict(st.error_codes)
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


def build(
    *,
    values: Values,
    argv: list[str],
    test: str,
    command: str,
    driver: str,
    server_version: str,
    started_at: str,
    summary: Summary | None,
    intervals: list[IntervalStat],
    exit_code: int,
    error: str | None,
    version: str,
    interrupted: str | None = None,
    labels: dict[str, str] | None = None,
    campaign: dict[str, Any] | None = None,
    implementation: dict[str, str] | None = None,
) -> dict[str, Any]:
    import platform

    from .steadiness import of_intervals as steadiness_of

    interval_dicts = [interval_dict(st) for st in intervals]
    return {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "tool": {"name": "pysysbench", "version": version, "python": platform.python_version()},
        "client": {"hostname": platform.node(), "platform": platform.platform(), "cpus": os.cpu_count()},
        "implementation": implementation_dict(implementation),
        "command_line": redact_argv(argv, values),
        "test": test,
        "command": command,
        "driver": driver,
        "server_version": server_version,
        "started_at": started_at,
        "options": values.public(),
        "summary": summary_dict(summary) if summary is not None else None,
        "intervals": interval_dicts,
        "steadiness": steadiness_of(interval_dicts) if summary is not None else None,
        "exit_code": exit_code,
        "error": error,
        "interrupted": interrupted,
        "labels": dict(labels or {}),
        "campaign": campaign,
    }


def implementation_dict(extra: dict[str, str] | None = None) -> dict[str, Any]:
    """Which code ran the hot path in this process: the C extension or the Python twins
    (``PYSYSBENCH_NATIVE=off``, or not built), and what the workload adds (a Lua script:
    ``lua``, the Lua runtime; ``lua_events``, who ran its events; the CLI's ``sysbench_compat``,
    the sysbench release whose options, defaults and report the run copied)."""
    from ..runtime import native

    return {"c_extension": native.ENABLED, "hot_path": native.describe(), **(extra or {})}


def from_outcome(
    outcome: RunOutcome | None,
    *,
    values: Values,
    argv: list[str],
    test: str,
    driver: str,
    exit_code: int,
    error: str | None,
    interrupted: str | None,
    version: str,
    implementation: dict[str, str] | None = None,
) -> dict[str, Any]:
    """The result document of a ``run`` (``outcome`` None: it never started; ``implementation``:
    what the workload adds to :func:`implementation_dict`)."""
    doc = build(
        values=values,
        argv=argv,
        test=test,
        command="run",
        driver=driver,
        server_version=outcome.server_version if outcome else "",
        started_at=outcome.started_at if outcome else "",
        summary=outcome.summary if outcome else None,
        intervals=outcome.intervals if outcome else [],
        exit_code=exit_code,
        error=error,
        interrupted=interrupted,
        version=version,
        implementation=implementation,
    )
    if outcome is not None:
        queries = outcome.summary.reads + outcome.summary.writes + outcome.summary.others
        doc["client"].update(
            workers=outcome.workers,
            cpu_s=outcome.client_cpu_s,
            cpu_s_per_query=outcome.client_cpu_s / queries if queries else None,
            busy_fraction=client_busy(outcome),
            per_worker=outcome.per_worker,
        )
        if outcome.nodes:  # --ray-address: one entry per client machine
            doc["client"]["nodes"] = outcome.nodes
        doc["connections"] = outcome.connections  # database node (host:port) -> sessions
        for iv, cpu in zip(doc["intervals"], outcome.interval_cpu_s):
            iv["client_cpu_s"] = cpu
        doc["host"] = outcome.host or None
        doc["server_context"] = outcome.server_context
        if outcome.server_nodes is not None:
            doc["server_nodes"] = outcome.server_nodes
    return doc


def annotate(doc: dict[str, Any], *, labels: dict[str, str], campaign: dict[str, Any]) -> dict[str, Any]:
    """Attach a campaign's labels and run identity to a run's document."""
    doc["labels"] = dict(labels)
    doc["campaign"] = campaign
    return doc


def save(path: str, doc: dict[str, Any]) -> None:
    """Atomic, durable write (:func:`pysysbench.core.files.write_atomic`): a reader never sees half a file."""
    import json

    from ..core.files import write_atomic

    write_atomic(path, json.dumps(doc, indent=1, sort_keys=False) + "\n", "result file")


def load(path: str) -> dict[str, Any]:
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        raise UsageError(f"cannot read result file '{path}': {exc.strerror}") from None
    return loads(data, path)


def loads(data: bytes | str, path: str) -> dict[str, Any]:
    """The result document in ``data`` (the bytes of the file ``path``, named in errors),
    checked as :func:`load` checks it: for a reader that needs the bytes too (the history
    store hashes them)."""
    import json

    try:
        doc = json.loads(data)
    except json.JSONDecodeError as exc:
        raise NotAResultFile(
            f"'{path}' is not a pysysbench result file (invalid JSON at line {exc.lineno}; truncated?)"
        ) from None
    except UnicodeDecodeError:
        raise NotAResultFile(f"'{path}' is not a pysysbench result file (not UTF-8 text)") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise NotAResultFile(f"'{path}' is not a pysysbench result file")
    version = doc.get("format_version")
    if not isinstance(version, int) or isinstance(version, bool):
        raise NotAResultFile(f"'{path}' is not a pysysbench result file (no format version)")
    if version > FORMAT_VERSION:
        raise UsageError(
            f"'{path}' has result format version {version}; this pysysbench "
            f"reads up to {FORMAT_VERSION}: upgrade pysysbench"
        )
    problem = _first_problem(doc)
    if problem is not None:
        raise DamagedResultFile(
            f"'{path}' is a damaged pysysbench result file: {problem}; restore it from the "
            "run that wrote it, or move it out of the way"
        )
    return doc


# --- what readers (reports, compare, export, campaigns) rely on ------------------------------
# field -> kind; a field may be missing (older files; readers default it) or null where noted

_NUMBER, _INT, _TEXT, _TABLE, _LIST, _SCALAR = "a number", "an integer", "a string", "a table", "a list", "a value"
_TOP = {
    "test": _TEXT,
    "command": _TEXT,
    "driver": _TEXT,
    "server_version": _TEXT,
    "started_at": _TEXT,
    "exit_code": _INT,
    "error": _TEXT,
    "command_line": _LIST,
    "options": _TABLE,
    "labels": _TABLE,
    "campaign": _TABLE,
    "summary": _TABLE,
    "intervals": _LIST,
    "tool": _TABLE,
    "client": _TABLE,
    "connections": _TABLE,
    "steadiness": _TABLE,
    "host": _TABLE,
    "server_context": _TABLE,
    "server_nodes": _TABLE,
    "implementation": _TABLE,
    "fault": _TABLE,
}
_NULLABLE = {"exit_code", "error", "campaign", "summary", "steadiness", "host", "server_context", "server_nodes"}
_SUMMARY = {
    "total_time_s": _NUMBER,
    "elapsed_s": _NUMBER,
    "threads": _INT,
    "events": _INT,
    "tps": _NUMBER,
    "qps": _NUMBER,
    "errors": _INT,
    "errors_per_s": _NUMBER,
    "reconnects": _INT,
    "reconnects_per_s": _NUMBER,
    "queries": _TABLE,
    "latency_ms": _TABLE,
    "histogram": _TABLE,
    "errors_by_code": _TABLE,
    "reconnect_failures": _INT,
    "reconnect_failures_by_code": _TABLE,
    "retried": _INT,
    "failed": _INT,
    "write_trx": _INT,
    "multi_node_write_trx": _INT,
    "multi_node_write_share": _NUMBER,
    "thread_events": _LIST,
    "thread_latency_ms": _LIST,
}
_INTERVAL = {
    key: _NUMBER
    for key in (
        "time_s",
        "interval_s",
        "threads",
        "events",
        "tps",
        "reads",
        "writes",
        "others",
        "qps",
        "errors",
        "reconnects",
        "reconnect_failures",
        "retried",
        "failed",
        "latency_pct_ms",
        "queue_length",
        "concurrency",
        "client_cpu_s",
    )
}
# steadiness: first vs last third of the intervals (stats/steadiness.py); host: the client machine's
# load and CPU split over the measured phase (stats/host.py); client: the client's own CPU
_STEADINESS = {
    "intervals": _INT,
    "first_third_tps": _NUMBER,
    "last_third_tps": _NUMBER,
    "change": _NUMBER,
    "noise": _NUMBER,
    "steady": "a boolean",
}
_HOST = {
    "cpus": _INT,
    "loadavg_start": _LIST,
    "loadavg_end": _LIST,
    "busy_fraction": _NUMBER,
    "steal_fraction": _NUMBER,
}
_CLIENT = {
    "workers": _INT,
    "cpu_s": _NUMBER,
    "cpu_s_per_query": _NUMBER,
    "busy_fraction": _NUMBER,
    "per_worker": _LIST,
    "nodes": _LIST,
}
_SERVER_CONTEXT = {
    "server": _TEXT,
    "settings": _TABLE,
    "metrics": _TABLE,
    "derived": _TABLE,
    "notes": _LIST,
    "server_cpu_s": _NUMBER,
}
_SERVER_NODES = {"every_s": _NUMBER, "share_of": _TEXT, "skew_fraction": _NUMBER, "nodes": _LIST}
_IMPLEMENTATION = {
    "c_extension": "a boolean",
    "hot_path": _TEXT,
    "lua": _TEXT,
    "lua_events": _TEXT,
    "sysbench_compat": _TEXT,
}
# --fault: a lab node killed and started again during the run (lab/fault.py, stats/recovery.py)
_FAULT = {
    "node": _TEXT,
    "lab": _TEXT,
    "at_s": _NUMBER,
    "down_s": _NUMBER,
    "killed_s": _NUMBER,
    "restarted_s": _NUMBER,
    "answered_s": _NUMBER,
    "error": _TEXT,
    "notes": _LIST,
    "recovery": _TABLE,
}
_CAMPAIGN = {
    "name": _TEXT,
    "workload": _TEXT,
    "threads": _INT,
    "repeat": _INT,
    "fingerprint": _TEXT,
    "prepare_commands": _LIST,
    "sql_before_run": _LIST,
    "server_settings": _TABLE,
    "variant": _TEXT,
    "variant_sql": _LIST,
    "interleaved": _LIST,
}


def _is(value: Any, kind: str) -> bool:
    if kind in (_NUMBER, _INT):
        ok = (int, float) if kind == _NUMBER else (int,)
        return isinstance(value, ok) and not isinstance(value, bool)
    if kind == _SCALAR:
        return isinstance(value, (str, int, float, bool))
    if kind == "a boolean":
        return isinstance(value, bool)
    return isinstance(value, {_TEXT: str, _TABLE: dict, _LIST: list}[kind])


def _fields(
    where: str, table: dict[Any, Any], kinds: dict[str, str], nullable: AbstractSet[str] = frozenset()
) -> str | None:
    for key, kind in kinds.items():
        value = table.get(key)
        if key in table and not (value is None and key in nullable) and not _is(value, kind):
            return f"{where}{key} should be {kind}, not {_shown(value)}"
    return None


def _all(where: str, items: Iterable[tuple[Any, Any]], kind: str, *, buckets: bool = False) -> str | None:
    for key, value in items:
        if buckets and not (str(key).isdigit() and int(key) < N_BUCKETS):
            return f"{where} has the key {_shown(key)}, not a bucket number (0..{N_BUCKETS - 1})"
        if not (value is None and kind == _NUMBER) and not _is(value, kind):
            return f"{where}[{_shown(key)}] should be {kind}, not {_shown(value)}"
    return None


def _shown(value: Any) -> str:
    import json

    text = json.dumps(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _first_problem(doc: dict[str, Any]) -> str | None:
    """The first field a reader would trip over, described; None when the file reads."""
    problem = _fields("", doc, _TOP, _NULLABLE)
    summary, campaign = doc.get("summary"), doc.get("campaign")
    if problem is None and isinstance(summary, dict):
        problem = (
            _fields("summary.", summary, _SUMMARY)
            or _all("summary.latency_ms", (summary.get("latency_ms") or {}).items(), _NUMBER)
            or _all("summary.queries", (summary.get("queries") or {}).items(), _INT)
            or _all("summary.histogram", (summary.get("histogram") or {}).items(), _INT, buckets=True)
        )
    if problem is None and isinstance(campaign, dict):
        problem = _fields("campaign.", campaign, _CAMPAIGN, {"variant"})
    for key, kinds in (
        ("steadiness", _STEADINESS),
        ("host", _HOST),
        ("client", _CLIENT),
        ("server_context", _SERVER_CONTEXT),
        ("server_nodes", _SERVER_NODES),
        ("implementation", _IMPLEMENTATION),
        ("fault", _FAULT),
    ):
        if problem is None and isinstance(doc.get(key), dict):
            problem = _fields(f"{key}.", doc[key], kinds, set(kinds))
    if problem is None and isinstance(doc.get("server_context"), dict):
        ctx = doc["server_context"]
        problem = (
            _all("server_context.metrics", (ctx.get("metrics") or {}).items(), _NUMBER)
            or _all("server_context.derived", (ctx.get("derived") or {}).items(), _NUMBER)
            or _all("server_context.settings", (ctx.get("settings") or {}).items(), _SCALAR)
        )
    if problem is None:
        problem = _all("labels", (doc.get("labels") or {}).items(), _SCALAR)
    for i, interval in enumerate(doc.get("intervals") or []):
        if problem is not None:
            break
        problem = (
            f"intervals[{i}] should be a table, not {_shown(interval)}"
            if not isinstance(interval, dict)
            else _fields(f"intervals[{i}].", interval, _INTERVAL, set(_INTERVAL))
        )
    return problem


__all__ = ["build", "save", "load", "loads", "annotate", "redact_argv", "FORMAT_VERSION"]
