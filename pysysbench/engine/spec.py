"""The run specification: everything the engine needs to know about one run,
built once from the parsed options and frozen.

Role: :meth:`RunSpec.build` freezes the options (:meth:`Values.freeze`, with the
values derived from them -- ``--data-size``'s table size -- derived once, here)
and reads the engine's own into typed fields.  The executor, every worker group,
each worker process and each Ray actor get this one object (pickled as it is);
nothing writes into it and nobody reads the engine's options by name string.
The workload and the driver still see ``spec.values``: their own options.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from ..core.errors import ConfigError
from ..core.options import Values
from ..core.record import record
from .options import checkpoints_s, forced_shutdown_s, retry_codes

if TYPE_CHECKING:
    from ..drivers.base import Driver
    from ..drivers.targets import NodeTarget
    from ..workloads.base import Workload

THREADS_PER_EXTRA_WORKER = 64  # default --workers: one process per this many threads, up to the cores
MIN_WORKERS = 2  # ... but at least two (see default_workers)


@record(frozen=True)
class RunSpec:
    """One run, frozen.  ``test`` is how the workload was found (a name or a file
    path: what a worker process loads), ``driver`` the driver's registered name."""

    values: Values  # the frozen options (the workload's and the driver's read them)
    test: str
    driver: str
    blocking: bool  # the driver's calls block (SQLite): one OS thread per thread
    threads: int
    time_s: int
    events: int
    rate: int
    warmup_s: int
    report_interval_s: int
    checkpoints_s: tuple[float, ...]
    forced_shutdown_s: float | None
    thread_init_timeout_s: int
    reconnect_timeout_s: int
    reconnect_every: int  # --reconnect (0.5 scripts): re-open after every N events
    max_retries: int  # --max-retries: tries of a transaction after a retryable error (0 = off)
    retry_codes: tuple[str, ...]  # the retryable error codes (empty when off)
    percentile: int
    rand_seed: int
    workers: int  # worker processes (or actors' share: Ray decides its own)
    worker_sessions: bool
    ray_address: str
    ray_workers_per_node: int  # 0: one per CPU the node offers Ray (or the --ray-resource amount)
    ray_resource: str
    server_version: bool  # ask the server's version (for the result file)
    server_context: bool  # measure the server's context (engine/servercontext.py)
    metrics_addr: str  # --metrics-addr: serve live metrics (engine/metrics.py)
    server_nodes: tuple[NodeTarget, ...] = ()  # --server-nodes: the nodes to sample (engine/nodes.py)
    shard_nodes: tuple[int, str] | None = None  # --shard-nodes: (nodes, placement) (engine/spans.py)

    @classmethod
    def build(
        cls,
        values: Values,
        test: str,
        driver: Driver,
        *,
        workload: Workload | None = None,
        server_version: bool = False,
        server_context: bool = False,
    ) -> RunSpec:
        """Freeze ``values`` (unless parsing did: with what the test's options imply,
        ``Workload.derived_options``) and read the engine's options."""
        if not values.frozen:
            from ..workloads import find_workload

            values.freeze(find_workload(test).derived_options(values, driver))
        threads = values.threads
        time_s = values.time
        if workload is not None and values.get("max_retries", 0) and not workload.connects:
            raise ConfigError(
                f"--max-retries: the events of '{workload.name}' are not transactions pysysbench can roll back "
                "and re-run (a Lua script opens its own connections, a built-in test none); retries work on "
                "the bundled workloads, the 0.5 scripts and Python workload files"
            )
        return cls(
            values=values,
            test=test,
            driver=driver.name,
            blocking=driver.caps.blocking,
            threads=threads,
            time_s=time_s,
            events=values.events,
            rate=values.rate,
            warmup_s=values.warmup_time or 0,
            report_interval_s=values.report_interval,
            checkpoints_s=checkpoints_s(values.report_checkpoints),
            forced_shutdown_s=forced_shutdown_s(values.forced_shutdown, time_s),
            # 0: none; a negative one (the 1.1 face takes it, as 1.1.0's alarm() takes it
            # unsigned: 136 years) is none too
            thread_init_timeout_s=max(values.thread_init_timeout, 0),
            reconnect_timeout_s=values.get("reconnect_timeout", 0) or 0,
            reconnect_every=values.get("reconnect", 0) or 0,
            max_retries=values.get("max_retries", 0) or 0,
            retry_codes=retry_codes(values, driver.retryable),
            percentile=values.percentile,
            rand_seed=values.rand_seed or 0,
            # a built-in test's shared state (workloads/builtin.py) lives in this process
            workers=1
            if workload is not None and workload.os_threads
            else worker_count(values.get("workers", 0) or 0, threads, driver.caps.blocking),
            worker_sessions=values.get("worker_sessions", True),
            ray_address=values.get("ray_address", ""),
            ray_workers_per_node=values.get("ray_workers_per_node", 0) or 0,
            ray_resource=values.get("ray_resource", "") or "",
            server_version=server_version,
            server_context=server_context,
            metrics_addr=values.get("metrics_addr", "") or "",
            server_nodes=server_nodes(values.get("server_nodes", "") or ""),
            shard_nodes=shard_nodes(values.get("shard_nodes", "") or "", driver, workload),
        )

    def parts(self, workload: Workload | None = None, driver: Driver | None = None) -> tuple[Workload, Driver]:
        """The run's workload and driver: the given ones, or made afresh from the
        registries (in a worker process, a Ray actor, a library call)."""
        if driver is None:
            from ..drivers import REGISTRY as DRIVERS

            driver = DRIVERS[self.driver](self.values)
        if workload is None:
            from ..workloads import find_workload
            from ..workloads.base import user_code

            cls = find_workload(self.test)
            with user_code(cls, "configure"):
                workload = cls(self.values, driver)
        return workload, driver

    def thread_seed(self, tid: int) -> int | None:
        """Thread ``tid``'s random seed (None: from the OS), the same in every process."""
        return None if not self.rand_seed else self.rand_seed * 1_000_003 + tid


def server_nodes(text: str) -> tuple[NodeTarget, ...]:
    """--server-nodes' nodes (drivers/targets.py, imported only when the option is given)."""
    if not text:
        return ()
    from ..drivers.targets import targets

    return targets(text)


def shard_nodes(text: str, driver: Driver, workload: Workload | None) -> tuple[int, str] | None:
    """--shard-nodes' node count and placement (the one --load-nodes loads by), or None."""
    if not text:
        return None
    from ..drivers.targets import DATA_ROLES, PLACEMENT, targets

    placement = PLACEMENT.get(getattr(driver.dialect, "family", ""))
    if placement is None:
        raise ConfigError("--shard-nodes needs a MySQL/MariaDB or PostgreSQL driver (--db-driver=mysql or pgsql)")
    if workload is not None and workload.write_ids is None:
        raise ConfigError(
            f"--shard-nodes counts the rows the bundled OLTP workloads write; '{workload.name}' does not say "
            "which ids it writes"
        )
    return len(targets(text, "--shard-nodes", roles=DATA_ROLES)), placement


def worker_count(requested: int, threads: int, blocking: bool) -> int:
    """--workers, or (0) the default: see :func:`default_workers`."""
    if requested == 0:
        return default_workers(threads, blocking)
    return min(requested, threads)


def default_workers(threads: int, blocking: bool) -> int:
    """Two processes from 2 threads up (one more per 64 threads, up to the cores).

    One event loop is a single point every response must pass: when a server
    process it just woke preempts it, no connection gets its next statement until
    it runs again.  Measured on 2 cores, oltp_point_select at 8 threads on
    PostgreSQL: 72,748 involuntary context switches of the client in 6 s (MariaDB:
    2,261), 9-15 % idle CPU, 0.63-0.77x sysbench's QPS with one process and
    0.77-0.98x with two; MariaDB and the other workloads within the noise either
    way.  SQLite stays in one process: its threads work at once on OS threads of
    their own there, and its writers queue for the one write lock in any case."""
    if blocking:
        return 1
    cores = os.cpu_count() or 1
    return max(1, min(cores, threads, max(MIN_WORKERS, threads // THREADS_PER_EXTRA_WORKER)))
