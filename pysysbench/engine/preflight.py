"""Pre-run checks (issue 42, 2.3): what would make a run fail once its threads start,
found before any of them does, each as one line (an error, or a warning when sysbench
would run anyway).  One implementation for every group (this process, worker processes,
Ray actors): ``LocalRun.preflight`` calls :func:`check_run` before the group is set up.

* the file-descriptor limit of this machine's processes (RLIMIT_NOFILE) against the
  connections each of them opens, raised to the hard limit when that is enough;
* every database node (each (host, port) of a host list) is connected once, in order:
  an unreachable one is the driver's connect error, naming it;
* per node: ``max_connections`` against the threads that land on it (thread *t* connects
  to node *t* mod *n*), less the slots reserved for superusers and those other clients
  hold; the server's limit on prepared statements (MySQL/MariaDB
  ``max_prepared_stmt_count``) against what those threads prepare
  (``Workload.prepared_per_thread``; unknown for Lua scripts: not checked), less what
  other clients hold; the workload's tables (``Workload.check_ready``: present, complete,
  the rows ``--table-size`` asks for), whose warnings go to ``note``.

Nothing is printed when every check passes.
"""

from __future__ import annotations

import resource
from collections.abc import Callable

from ..core.errors import ConfigError, DatabaseError
from ..drivers.base import Connection, Driver
from ..workloads.base import Workload, user_code

CONNECTION_HEADROOM = 1  # the pre-flight connection, still open while checking
# descriptors a process holds beside its connections: standard streams, the event loop,
# the sockets to worker processes, log and result files (a run with one thread holds ~16)
NOFILE_MARGIN = 32


async def check_run(
    workload: Workload, driver: Driver, threads: int, per_process: int | None, note: Callable[[str], None]
) -> None:
    """Every check for a run of ``threads`` threads, ``per_process`` connections in each
    of this machine's processes (None: they run elsewhere, Ray actors)."""
    if workload.connects and per_process is not None:
        check_open_files(per_process)
    with user_code(workload, "required_tables"):
        tables = workload.required_tables()
    if not tables:
        return
    with user_code(workload, "prepared_per_thread"):
        prepared = workload.prepared_per_thread() if driver.ps_mode != "disable" else 0
    names = driver.node_targets()
    for index, target in enumerate(names):
        conn = await driver.connect(index=index)
        try:
            node = Node(driver, conn, target, len(range(index, threads, len(names))), len(names) > 1)
            await node.check_connections()
            await node.check_prepared(prepared)
            with user_code(workload, "check_ready"):
                await workload.check_ready(conn, tables, target)
            for line in workload.ready_notes:
                note(line)
        finally:
            await conn.close()


def check_open_files(connections: int) -> None:
    """Raise the soft RLIMIT_NOFILE to the hard limit when ``connections`` (+ the margin)
    need more than the soft one (silently), or fail in one line when the hard one is too low."""
    need = connections + NOFILE_MARGIN
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY or need <= soft:
        return
    if hard == resource.RLIM_INFINITY or need <= hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
        return
    raise ConfigError(
        f"{connections} connections in one process need about {need} open files, but this process may "
        f"open {hard} (RLIMIT_NOFILE): raise the limit (ulimit -n {need}, or LimitNOFILE= for a service) "
        "or use fewer --threads per process (more --workers)"
    )


class Node:
    """One database node's checks on its pre-flight connection."""

    def __init__(self, driver: Driver, conn: Connection, target: str, threads: int, several: bool):
        self.dialect = driver.dialect
        self.conn = conn
        self.target = target
        self.threads = threads
        self.several = several  # a host list: the lines name the node and its share of the threads

    def _wanted(self, what: str) -> str:
        if self.several:
            return f"the {self.threads} threads on {self.target} need {what}"
        return f"--threads={self.threads} needs {what}"

    async def check_connections(self) -> None:
        """Fail before opening thousands of connections the server will refuse: its
        limit less the slots reserved for superusers and those other clients hold."""
        d = self.dialect
        limit = await count(self.conn, d.max_connections_sql)
        if not limit:
            return
        reserved = await count(self.conn, d.reserved_connections_sql)
        others = max(0, await count(self.conn, d.open_connections_sql) - 1)  # less this pre-flight session
        need = self.threads + CONNECTION_HEADROOM
        if need + reserved + others <= limit:
            return
        held = (f" ({reserved} reserved for superusers)" if reserved else "") + (
            f" and other clients hold {others}" if others else ""
        )
        fits = limit - reserved - others - CONNECTION_HEADROOM
        fewer = self._fewer(fits) if fits >= 1 else "close other clients' sessions"
        server = "the server's" if not self.several else "its"
        raise ConfigError(
            f"{self._wanted(f'{need} connections')} but {server} max_connections is "
            f"{limit}{held}: {fewer} or raise max_connections "
            f"({d.max_connections_hint.format(need=need + reserved + others)})"
        )

    def _fewer(self, fits: int) -> str:
        return f"use at most {fits} threads on it" if self.several else f"use at most --threads={fits}"

    async def check_prepared(self, per_thread: int | None) -> None:
        """The server's limit on prepared statements (all sessions together) against what
        the threads prepare, less what other clients hold; ``per_thread`` None: not known."""
        d = self.dialect
        if not per_thread or not d.prepared_limit_sql:
            return
        limit = await value(self.conn, d.prepared_limit_sql)
        if limit is None:
            return
        others = await count(self.conn, d.prepared_open_sql)
        need = self.threads * per_thread
        if need + others <= limit:
            return
        held = f" and other clients hold {others}" if others else ""
        fits = (limit - others) // per_thread
        fewer = self._fewer(fits) if fits >= 1 else "close other clients' prepared statements"
        raise ConfigError(
            f"{self._wanted(f'{need} prepared statements ({per_thread} each)')} but the server's "
            f"max_prepared_stmt_count is {limit}{held}: {fewer}, raise it "
            f"({d.prepared_limit_hint.format(need=need + others)}) or pass --db-ps-mode=disable"
        )


async def count(conn: Connection, sql: str) -> int:
    """:func:`value`, 0 when it is not known."""
    return await value(conn, sql) or 0


async def value(conn: Connection, sql: str) -> int | None:
    """The integer in the last column of the first row of ``sql``; None when there is no
    such statement or the server cannot answer it (a server without the view, a dry run)."""
    if not sql:
        return None
    try:
        rows = await conn.fetchall(sql)
    except DatabaseError:
        return None
    text = str(rows[0][-1]) if rows else ""
    return int(text) if text.isdigit() else None
