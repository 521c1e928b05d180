"""Per-node view (``--server-nodes``): every database node's counters, once per interval.

Role: a run through a proxy (``pysysbench lab``'s HAProxy, a cloud endpoint) shows the
client one server; this samples every node behind it on a session of its own, so the
result file says which node did the work, which one was down, and whose CPU it cost.

* ``--server-nodes=lab:DIR``: every SQL node of the lab manifest ``DIR/lab.json`` (all but
  the proxy), with its name, role and pid; ``--server-nodes=HOST:PORT,HOST:PORT``: those
  nodes (role ``node``, no pid: no CPU).  The run's driver (MySQL or PostgreSQL) and its credentials are used.
* MariaDB / MySQL: ``SHOW GLOBAL STATUS`` Questions (less this sampler's own statement),
  Com_commit, Com_rollback, Threads_connected and the error counters of :data:`ERRORS`;
  PostgreSQL: ``pg_stat_database`` of the run's database (xact_commit, xact_rollback,
  deadlocks, conflicts, numbackends; it has no statement counter, so its share is of
  transactions, and a backend reports its counts at most once a second and late when busy, so
  its intervals are lumpy while its totals hold); the node's CPU from ``/proc/PID/stat``
  (PostgreSQL: with its backends).
* One asyncio task in the run's own process samples every node at each tick of
  ``--report-interval`` (1 s without it), off the benchmark threads' path.  A node that
  does not answer within :data:`ANSWER_TIMEOUT_S` is *down* for that interval (its session
  is dropped and opened again at the next tick); it never fails the run.
* Which nodes: ``drivers/targets.py`` (shared with ``--load-nodes``), which reads a lab
  manifest as data, as the report reads result files, since the engine sits below the lab layer.

Skew: a node's share of its role's work (queries, or transactions) against the even
share ``1/n`` of the ``n`` nodes of that role; flagged when it departs by more than
:data:`SKEW_FRACTION` of the even share.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from time import perf_counter_ns
from typing import TYPE_CHECKING, Any

from ..core.errors import ConfigError
from ..drivers.targets import NodeTarget, aimed, lab_targets
from .servercontext import as_number, process_alive, process_cpu_s

if TYPE_CHECKING:
    from ..drivers.base import Connection, Driver

# Why 25 %: HAProxy balances connections, not statements, so a node's share follows the connections
# it holds.  With equal connections per node (galera read port, 3 and 6 threads, four 4-s runs on
# the 2-core machine) the shares were 30.8-36.3 %, within 9 % of the even 33.3 %; one connection
# more or less among 4 per node is 25 %, among 3 it is 33 %: that, a node down for a quarter of the
# run, or a node the proxy left out is what this flags (a node killed 3 s into a 7-s run: 6.6-8.4 %).
SKEW_FRACTION = 0.25
ANSWER_TIMEOUT_S = 1.0  # a node that has not answered a sample in this long is down for the interval
DEFAULT_EVERY_S = 1  # the sampling interval without --report-interval
MYSQL_COUNTERS = ("Questions", "Com_commit", "Com_rollback", "Threads_connected")
# the error counters summed into a node's errors (absent ones count nothing): deadlocks, Galera's
# certification failures and brute-force aborts, PostgreSQL's deadlocks and recovery conflicts
ERRORS = ("Innodb_deadlocks", "wsrep_local_cert_failures", "wsrep_local_bf_aborts", "deadlocks", "conflicts")
MYSQL_SQL = "SHOW GLOBAL STATUS WHERE Variable_name IN ({})".format(
    ", ".join(f"'{n}'" for n in (*MYSQL_COUNTERS, *ERRORS[:3]))
)
PG_COLUMNS = ("xact_commit", "xact_rollback", "deadlocks", "conflicts", "numbackends")
PG_SQL = f"SELECT {', '.join(PG_COLUMNS)} FROM pg_stat_database WHERE datname = current_database()"
GAUGES = ("Threads_connected", "numbackends")


def current_pid(t: NodeTarget, known: int) -> int:
    """The node's pid now: ``known`` while alive, else the one its lab's manifest names now (a
    node started again); 0 when there is none."""
    if process_alive(known, t.mark):
        return known
    if t.lab:
        try:
            again = next((n for n in lab_targets(t.lab) if n.name == t.name), None)
        except ConfigError:
            again = None
        if again is not None and again.pid != known and process_alive(again.pid, again.mark):
            return again.pid
    return 0


# --- sampling -----------------------------------------------------------------------------------


@dataclass
class Sample:
    t_ns: int
    counters: dict[str, float] | None  # None: the node did not answer (down)
    cpu_s: float | None = None
    pid: int = 0  # the process cpu_s is of (CPU is compared only between samples of one process)


@dataclass
class NodeSession:
    target: NodeTarget
    driver: Any  # the run's driver, aimed at this node alone
    conn: Any = None
    samples: list[Sample] = field(default_factory=list)
    pid: int = 0


class NodeWatch:
    """Samples every node: :meth:`start` at the measured phase's start, :meth:`finish` at its end."""

    def __init__(self, driver: Driver, nodes: tuple[NodeTarget, ...], every_s: float) -> None:
        self.family = getattr(driver.dialect, "family", "")
        if self.family not in ("mysql", "postgresql"):
            raise ConfigError("--server-nodes needs a MySQL or PostgreSQL driver (--db-driver=mysql or pgsql)")
        self.sessions = [NodeSession(t, aimed(driver, t)) for t in nodes]
        self.every_s = every_s or DEFAULT_EVERY_S
        self.children = self.family == "postgresql"  # PostgreSQL's backends are child processes
        self.own_queries = 1 if self.family == "mysql" else 0  # the sampler's statement counts in Questions
        self.t0 = 0
        self.stop = asyncio.Event()
        self.task: asyncio.Task[None] | None = None

    def start(self, t0_ns: int) -> None:
        self.t0 = t0_ns
        self.task = asyncio.create_task(self._follow())

    async def _follow(self) -> None:
        every_ns = int(self.every_s * 1e9)
        k = 0
        while True:
            await self.sample_all()
            k = max(k + 1, (perf_counter_ns() - self.t0) // every_ns + 1)  # missed ticks are skipped
            try:
                await asyncio.wait_for(self.stop.wait(), (self.t0 + k * every_ns - perf_counter_ns()) / 1e9)
                return
            except TimeoutError:
                pass

    async def finish(self) -> None:
        """The last sample (the run's end), then every node's session closed."""
        if self.task is None:
            return
        self.stop.set()
        await asyncio.gather(self.task, return_exceptions=True)
        self.task = None
        await self.sample_all()
        await asyncio.gather(*(self._drop(s) for s in self.sessions))
        for s in self.sessions:
            fold_short_end(s.samples, int(self.every_s * 1e9))

    async def sample_all(self) -> None:
        await asyncio.gather(*(self._sample(s) for s in self.sessions))

    async def _sample(self, s: NodeSession) -> None:
        try:
            counters = await asyncio.wait_for(self._read(s), ANSWER_TIMEOUT_S)
        except Exception:  # noqa: BLE001  # whatever a dying node makes its client library raise: down, never the run's end
            counters = None
            await self._drop(s)
        s.pid = pid = current_pid(s.target, s.pid or s.target.pid)
        cpu = process_cpu_s(pid, self.children) if pid else None
        s.samples.append(Sample(perf_counter_ns(), counters, cpu, pid))

    async def _read(self, s: NodeSession) -> dict[str, float]:
        if s.conn is None:
            s.conn = await s.driver.connect()
        conn: Connection = s.conn
        if self.family == "mysql":
            rows = await conn.fetchall(MYSQL_SQL)
            return {str(k): float(v) for k, v in rows if as_number(v) is not None}
        rows = await conn.fetchall(PG_SQL)
        return {k: float(v) for k, v in zip(PG_COLUMNS, rows[0] if rows else ()) if as_number(v) is not None}

    @staticmethod
    async def _drop(s: NodeSession) -> None:
        conn, s.conn = s.conn, None
        if conn is not None:
            try:
                await asyncio.wait_for(conn.close(), ANSWER_TIMEOUT_S)
            except Exception:  # noqa: BLE001  # a session to a node gone: nothing left to close
                pass

    def result(self, connections: dict[str, int] | None = None) -> dict[str, Any]:
        series = {s.target.name: node_series(s.samples, self.t0, self.own_queries) for s in self.sessions}
        nodes = [
            node_entry(s.target, series[s.target.name], (connections or {}).get(s.target.where)) for s in self.sessions
        ]
        return {
            "every_s": self.every_s,
            "share_of": "queries" if self.family == "mysql" else "transactions",
            "skew_fraction": SKEW_FRACTION,
            "nodes": with_shares(nodes),
        }


# --- series, totals, shares (pure: tested on synthetic samples) ------------------------------------


def fold_short_end(samples: list[Sample], every_ns: int) -> None:
    """The run's end sample comes soon after the last tick's: an interval that short says
    little (a few statements over a few ms), so the tick's sample is dropped and the last
    interval runs from the tick before to the end."""
    if len(samples) >= 3 and samples[-1].t_ns - samples[-2].t_ns < every_ns / 2:
        del samples[-2]


def _delta(cur: dict[str, float], prev: dict[str, float], name: str) -> float | None:
    """A counter's growth between two answered samples; None when either lacks it or it went
    down (the node was restarted: its counters began again)."""
    if name not in cur or name not in prev or cur[name] < prev[name]:
        return None
    return cur[name] - prev[name]


def work(counters_delta: dict[str, float | None]) -> float | None:
    """The node's work in an interval: its statements (MySQL) or transactions (PostgreSQL)."""
    if counters_delta.get("Questions") is not None:
        return counters_delta["Questions"]
    commits, rollbacks = counters_delta.get("xact_commit"), counters_delta.get("xact_rollback")
    return None if commits is None or rollbacks is None else commits + rollbacks


def deltas(prev: Sample, cur: Sample, own_queries: int) -> dict[str, float | None]:
    """Every counter's growth over an interval ({}: the node did not answer at one end), less
    what the sampler itself did (its statement; PostgreSQL: its SELECT, a transaction)."""
    if cur.counters is None or prev.counters is None:
        return {}
    d = {n: _delta(cur.counters, prev.counters, n) for n in set(cur.counters) - set(GAUGES)}
    for name, own in (("Questions", own_queries), ("xact_commit", 1)):
        if (v := d.get(name)) is not None:
            d[name] = max(0.0, v - own)
    return d


def interval_entry(prev: Sample, cur: Sample, t0_ns: int, own_queries: int) -> dict[str, Any]:
    """One interval of one node: rates over the interval, or ``up: false`` and nulls."""
    dt = (cur.t_ns - prev.t_ns) / 1e9
    entry: dict[str, Any] = {
        "time_s": round((cur.t_ns - t0_ns) / 1e9, 3),
        "interval_s": dt,
        "up": cur.counters is not None,
    }
    d = deltas(prev, cur, own_queries)
    w = work(d)
    commits = d.get("Com_commit", d.get("xact_commit"))
    rollbacks = d.get("Com_rollback", d.get("xact_rollback"))
    errors = [v for n in ERRORS if (v := d.get(n)) is not None]
    cpu = None  # compared only between two readings of one process (a node started again: not)
    if cur.cpu_s is not None and prev.cpu_s is not None and cur.pid == prev.pid:
        cpu = max(0.0, cur.cpu_s - prev.cpu_s)
    entry.update(
        work=w,
        qps=None if w is None or dt <= 0 else w / dt,
        commits_per_s=None if commits is None or dt <= 0 else commits / dt,
        rollbacks=rollbacks,
        errors=sum(errors) if errors else (None if not d else 0),
        cpu_s=cpu,
        cpu_pct=None if cpu is None or dt <= 0 else 100 * cpu / dt,
        sessions=(cur.counters or {}).get("Threads_connected", (cur.counters or {}).get("numbackends")),
    )
    return entry


def node_series(samples: list[Sample], t0_ns: int, own_queries: int = 0) -> list[dict[str, Any]]:
    return [interval_entry(p, c, t0_ns, own_queries) for p, c in zip(samples, samples[1:])]


def _sum(series: list[dict[str, Any]], key: str) -> float | None:
    values = [iv[key] for iv in series if iv.get(key) is not None]
    return sum(values) if values else None


def node_entry(t: NodeTarget, series: list[dict[str, Any]], client_sessions: int | None = None) -> dict[str, Any]:
    """A node's totals over the run (shares added by :func:`with_shares`) and its series."""
    elapsed = sum(iv["interval_s"] for iv in series)
    work_total, cpu = _sum(series, "work"), _sum(series, "cpu_s")
    commits = sum(iv["commits_per_s"] * iv["interval_s"] for iv in series if iv.get("commits_per_s") is not None)
    entry: dict[str, Any] = {
        "name": t.name,
        "role": t.role,
        "address": t.where,
        "pid": t.pid or None,
        "work": work_total or 0,
        "qps": (work_total or 0) / elapsed if elapsed > 0 else 0.0,
        "commits": round(commits),
        "rollbacks": _sum(series, "rollbacks") or 0,
        "errors": _sum(series, "errors") or 0,
        "cpu_s": cpu,
        "cpu_pct": None if cpu is None or elapsed <= 0 else 100 * cpu / elapsed,
        "intervals": len(series),
        "intervals_down": sum(1 for iv in series if not iv["up"]),
    }
    if client_sessions is not None:  # the client's own sessions on this node (a host list naming it)
        entry["client_sessions"] = client_sessions
    entry["series"] = series
    return entry


def with_shares(nodes: list[dict[str, Any]], skew_fraction: float = SKEW_FRACTION) -> list[dict[str, Any]]:
    """Each node's ``share`` of its role's work, the ``even_share`` (1/n of the role's nodes), and
    ``skew`` (True when the share departs from the even one by more than ``skew_fraction`` of it;
    never for a role of one node or a role that did no work)."""
    roles: dict[str, list[dict[str, Any]]] = {}
    for n in nodes:
        roles.setdefault(n["role"], []).append(n)
    for members in roles.values():
        total = sum(n["work"] for n in members)
        even = 1 / len(members)
        for n in members:
            n["share"] = n["work"] / total if total else None
            n["even_share"] = even
            n["skew"] = bool(total and len(members) > 1 and abs(n["share"] - even) > skew_fraction * even)
    return nodes


def text_lines(view: dict[str, Any]) -> list[str]:
    """The lines after the summary: one per node (pysysbench's own, with --server-nodes only)."""
    unit = "qps" if view.get("share_of") == "queries" else "tps"
    out = [f"Server nodes (every {view['every_s']:g} s; share of the role's {view['share_of']}):"]
    for n in view["nodes"]:
        share = "-" if n["share"] is None else f"{100 * n['share']:.1f}%"
        cpu = "-" if n["cpu_pct"] is None else f"{n['cpu_pct']:.1f}%"
        down = f", down {n['intervals_down']}/{n['intervals']} intervals" if n["intervals_down"] else ""
        flag = f"  SKEW (even {100 * n['even_share']:.1f}%)" if n["skew"] else ""
        out.append(
            f"    {n['name']:<10} {n['role']:<11} {unit}: {n['qps']:9.2f}  share: {share:>6}  "
            f"errors: {n['errors']:g}  CPU: {cpu:>6}{down}{flag}"
        )
    return out + [""]
