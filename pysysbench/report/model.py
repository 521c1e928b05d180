"""What reports are made of: result files -> runs -> cells.

Role: load result files (``results.load`` only: a report never talks to a
database), give each run its identity (workload, variant, threads, repeat) and
headline figures, and group repeats of the same (workload, variant, threads)
into a :class:`Cell` with mean and spread.  A *variant* is the set of labels a
run was stored with (database version, instance size, parameter template...);
runs without labels fall back to their campaign's name.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import field
from typing import Any, TypeGuard

from ..core.errors import DamagedResultFile, UsageError
from ..core.record import record
from ..stats import results
from ..stats.histogram import N_BUCKETS
from ..stats.host import mean_load
from ..stats.noise import Sample, sample
from ..stats.steadiness import of_intervals

SATURATED_BUSY = 0.9  # the run command's warning threshold (engine.local.CLIENT_BUSY_FRACTION)
# A run measured on a busy host is unreliable (docs/campaigns.md): the 1-minute load average when
# its measured phase began exceeded the cores its client left to the rest of the machine (the
# machine's cores minus the cores the client kept busy, at least MIN_FREE_CORES), or a hypervisor
# took STEAL_LIMIT or more of the machine's CPU time during it.
MIN_FREE_CORES = 1.0
STEAL_LIMIT = 0.05

Variant = tuple[tuple[str, str], ...]


@record(frozen=True)
class Metric:
    key: str
    title: str  # table header
    unit: str
    higher_is_better: bool
    decimals: int = 2


METRICS = {
    "tps": Metric("tps", "TPS", "transactions/s", True),
    "qps": Metric("qps", "QPS", "queries/s", True),
    "p95": Metric("p95", "95% latency (ms)", "ms", False),
    "p99": Metric("p99", "99% latency (ms)", "ms", False),
    "avg": Metric("avg", "avg latency (ms)", "ms", False),
    "errors_per_s": Metric("errors_per_s", "Errors/s", "errors/s", False),
    # from the run's server context (engine/servercontext.py), for compare --metric=...
    "hit_ratio": Metric("hit_ratio", "buffer-pool hit ratio", "", True, 4),
    "lock_waits_per_trx": Metric("lock_waits_per_trx", "lock waits / trx", "", False, 4),
    "fsyncs_per_trx": Metric("fsyncs_per_trx", "fsyncs / trx", "", False, 3),
    "server_cpu_us_per_query": Metric("server_cpu_us_per_query", "server CPU / query (µs)", "µs", False, 1),
    "client_cpu_us_per_query": Metric("client_cpu_us_per_query", "client CPU / query (µs)", "µs", False, 1),
}
SERVER_METRICS = ("hit_ratio", "lock_waits_per_trx", "fsyncs_per_trx", "server_cpu_us_per_query")
TABLE_METRICS = ("tps", "qps", "p95", "p99", "errors_per_s")


@record(frozen=True)
class Run:
    """One stored run, with the figures reports use."""

    path: str
    doc: dict[str, Any] = field(repr=False, compare=False)
    workload: str
    test: str
    variant: Variant
    threads: int
    repeat: int

    @property
    def ok(self) -> bool:
        return self.doc.get("exit_code") == 0 and self.doc.get("summary") is not None

    @property
    def summary(self) -> dict[str, Any]:
        return self.doc.get("summary") or {}

    @property
    def campaign(self) -> dict[str, Any]:
        return self.doc.get("campaign") or {}

    def value(self, metric: str) -> float:
        s = self.summary
        if metric in SERVER_METRICS:
            return float(self.derived.get(metric) or 0.0)
        if metric == "client_cpu_us_per_query":
            return self.cpu_us_per_query or 0.0
        if metric in ("tps", "qps", "errors_per_s"):
            return float(s.get(metric) or 0.0)
        return float((s.get("latency_ms") or {}).get(metric) or 0.0)

    def histogram(self) -> list[int]:
        counts = [0] * N_BUCKETS
        for index, n in (self.summary.get("histogram") or {}).items():
            counts[int(index)] += int(n)
        return counts

    @property
    def intervals(self) -> list[dict[str, Any]]:
        return self.doc.get("intervals") or []

    @property
    def steadiness(self) -> dict[str, Any]:
        """From the stored intervals (so every file is judged by the same rule, whichever
        version wrote it); the stored verdict when a file has no intervals."""
        return of_intervals(self.intervals) if self.intervals else (self.doc.get("steadiness") or {"steady": None})

    @property
    def steady(self) -> bool | None:
        return self.steadiness.get("steady")

    @property
    def client(self) -> dict[str, Any]:
        return self.doc.get("client") or {}

    @property
    def busy(self) -> float | None:
        value = self.client.get("busy_fraction")
        return float(value) if isinstance(value, (int, float)) else None

    @property
    def cpu_us_per_query(self) -> float | None:
        value = self.client.get("cpu_s_per_query")
        return float(value) * 1e6 if isinstance(value, (int, float)) else None

    @property
    def saturated(self) -> bool:
        """The client kept its cores busy: the figures may be the client's limit, not the server's.
        An embedded database (SQLite) runs inside the client, so its CPU is the benchmark's."""
        return self.busy is not None and self.busy >= SATURATED_BUSY and self.doc.get("driver") != "sqlite"

    def option(self, *names: str) -> Any:
        """The first of ``names`` the run was given ('-' and '_' alike), else None."""
        opts = {str(k).replace("-", "_").lower(): v for k, v in (self.doc.get("options") or {}).items()}
        return next((opts[n] for n in names if opts.get(n) is not None), None)

    @property
    def tables(self) -> Any:
        return self.option("tables", "oltp_tables_count")

    @property
    def table_size(self) -> Any:
        return self.option("table_size", "oltp_table_size")

    @property
    def host(self) -> dict[str, Any]:
        return self.doc.get("host") or {}

    @property
    def load(self) -> float | None:
        return mean_load(self.host)

    @property
    def client_cores(self) -> float | None:
        """Cores the client kept busy over the measured phase (its CPU time / the phase's length)."""
        cpu_s, elapsed = self.client.get("cpu_s"), self.summary.get("total_time_s")
        if _number(cpu_s) and _number(elapsed) and elapsed > 0:
            return cpu_s / elapsed
        workers = self.client.get("workers")
        return float(workers) if _number(workers) else None

    @property
    def free_cores(self) -> float | None:
        """The cores the client left to everything else on its machine (at least MIN_FREE_CORES)."""
        cpus = self.host.get("cpus") or self.client.get("cpus")
        own = self.client_cores
        if not _number(cpus) or own is None:
            return None
        return max(cpus - own, MIN_FREE_CORES)

    @property
    def host_problems(self) -> list[str]:
        """Why the client machine's load makes this run unreliable (empty: nothing known against it)."""
        out = []
        start, free = self.host.get("loadavg_start"), self.free_cores
        if isinstance(start, list) and start and _number(start[0]) and free is not None and start[0] > free:
            out.append(f"load {start[0]:.2f} at start, above {free:.1f} free cores")
        steal = self.host.get("steal_fraction")
        if _number(steal) and steal >= STEAL_LIMIT:
            out.append(f"steal {steal:.0%}")
        return out

    @property
    def server_context(self) -> dict[str, Any]:
        return self.doc.get("server_context") or {}

    @property
    def derived(self) -> dict[str, float]:
        """The server context's derived figures (fsyncs per transaction recomputed from the
        stored deltas for files written before it was derived)."""
        out = dict(self.server_context.get("derived") or {})
        metrics = self.server_context.get("metrics") or {}
        events = self.summary.get("events") or 0
        if "fsyncs_per_trx" not in out and events and isinstance(metrics.get("Innodb_data_fsyncs"), (int, float)):
            out["fsyncs_per_trx"] = metrics["Innodb_data_fsyncs"] / events
        return out


def _number(value: Any) -> TypeGuard[float]:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def variant_of(doc: dict[str, Any]) -> Variant:
    labels = doc.get("labels") or {}
    if not labels and (doc.get("campaign") or {}).get("name"):
        labels = {"campaign": doc["campaign"]["name"]}
    return tuple(sorted((str(k), str(v)) for k, v in labels.items()))


def variant_text(variant: Variant, keys: Iterable[str] | None = None) -> str:
    keep = set(keys) if keys is not None else None
    parts = [v if keep is not None else f"{k}={v}" for k, v in variant if keep is None or k in keep]
    return ", ".join(parts) if parts else "all runs"


def differing_keys(variants: Iterable[Variant]) -> list[str]:
    """Label keys whose values differ between variants (what distinguishes them)."""
    maps = [dict(v) for v in variants]
    keys = sorted({k for m in maps for k in m})
    return [k for k in keys if len({m.get(k) for m in maps}) > 1]


def run_of(path: str, doc: dict[str, Any]) -> Run:
    camp = doc.get("campaign") or {}
    summary = doc.get("summary") or {}
    threads = camp.get("threads") or summary.get("threads") or (doc.get("options") or {}).get("threads") or 1
    return Run(
        path=path,
        doc=doc,
        workload=str(camp.get("workload") or doc.get("test") or "?"),
        test=str(doc.get("test") or "?"),
        variant=variant_of(doc),
        threads=int(threads),
        repeat=int(camp.get("repeat") or 1),
    )


def result_paths(arg: str) -> list[tuple[str, bool]]:
    """(path, explicit) for a file, or every ``*.json`` under a directory (not explicit)."""
    if os.path.isdir(arg):
        found: list[tuple[str, bool]] = []
        for root, dirs, files in os.walk(arg):
            dirs.sort()
            found.extend((os.path.join(root, f), False) for f in sorted(files) if f.endswith(".json"))
        return found
    if not os.path.exists(arg):
        raise UsageError(f"'{arg}': no such result file or directory")
    return [(arg, True)]


def load_runs(args: Iterable[str]) -> list[Run]:
    """Runs of every result file named or found under a directory.  In a directory,
    JSON files that are not result files (``manifest.json``) are skipped; a damaged
    result file is an error there too (a report must not silently lack a run)."""
    runs = []
    for arg in args:
        for path, explicit in result_paths(arg):
            try:
                doc = results.load(path)
            except DamagedResultFile:
                raise
            except UsageError:
                if explicit:
                    raise
                continue
            runs.append(run_of(path, doc))
    return runs


@record(frozen=True)
class Cell:
    """Repeats of one (workload, variant, threads)."""

    workload: str
    variant: Variant
    threads: int
    runs: tuple[Run, ...]

    def sample(self, metric: str) -> Sample:
        return sample([r.value(metric) for r in self.runs])

    def histogram(self) -> list[int]:
        """Repeats merged exactly: bucket counts add."""
        total = [0] * N_BUCKETS
        for r in self.runs:
            for i, n in enumerate(r.histogram()):
                total[i] += n
        return total


def cells(runs: Iterable[Run]) -> dict[str, list[Cell]]:
    """Successful runs grouped per workload, workloads in the order they were first
    run (a campaign's order), cells sorted by variant then threads."""
    grouped: dict[str, dict[tuple[Variant, int], list[Run]]] = {}
    first: dict[str, str] = {}
    for r in runs:
        if r.ok:
            grouped.setdefault(r.workload, {}).setdefault((r.variant, r.threads), []).append(r)
            started = str(r.doc.get("started_at") or "")
            first[r.workload] = min(first.get(r.workload, started), started)
    out = {}
    for workload in sorted(grouped, key=lambda w: (first[w], w)):
        by_key = grouped[workload]
        out[workload] = [
            Cell(workload, v, t, tuple(sorted(rs, key=lambda r: r.repeat))) for (v, t), rs in sorted(by_key.items())
        ]
    return out


def variants(cell_list: Iterable[Cell]) -> list[Variant]:
    seen: list[Variant] = []
    for c in cell_list:
        if c.variant not in seen:
            seen.append(c.variant)
    return seen
