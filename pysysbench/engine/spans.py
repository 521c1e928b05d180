"""``--shard-nodes``: how many write transactions span several nodes of a sharded cluster.

A cluster whose tables are hash-partitioned over N nodes commits a transaction that wrote
rows on more than one node with two-phase commit (Spider's internal XA, KunlunBase's XA
2PC; its report ran 80 % of its write transactions so); pgshard's postgres_fdw commits them
node by node.  The client knows where every id lives -- the placement ``--load-nodes``
loads by (load/placement.py: ``id mod N`` on MySQL/MariaDB, PostgreSQL's own hash) -- so it
counts, per transaction, the nodes its writes went to.

The workload names its writing statements (``Workload.write_ids``: statement name -> the
position of the id among its arguments); :meth:`ShardSpans.attach` wraps those of a thread
so that each records its id in ``ctx.written`` (a workload that writes otherwise notes its
rows there itself), and BEGIN starts a new transaction.  After each recorded event
the transaction is tallied into the thread's counters: ``write_trx`` (transactions that
wrote a row) and ``spanning_trx`` (those whose rows are on more than one node).  Outside a
transaction (``--skip_trx``, the single-statement workloads) every write is a transaction
of its own.  With the option the events run on the Python loop (the C loop does not tell
its ids); without it nothing here is imported.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.errors import ConfigError
from ..load.placement import node_of


class ShardSpans:
    """The placement of ids over ``nodes`` nodes (``mod`` or ``pg-hash``) and the attaching."""

    def __init__(self, nodes: int, placement: str):
        self.nodes = nodes
        self.placement = placement

    def nodes_of(self, ids: list[int]) -> int:
        """How many distinct nodes ``ids`` live on."""
        if len(ids) < 2:
            return len(ids)
        return len(set(node_of(np.asarray(ids, dtype=np.int64), self.nodes, self.placement).tolist()))

    def attach(self, ctx: Any, workload: Any) -> None:
        """Wrap ``ctx``'s writing statements (again after a reconnect prepared new ones) and,
        once, chain the tally after the thread's ``after_event``."""
        write_ids = workload.write_ids
        if write_ids is None:
            raise ConfigError(
                f"--shard-nodes counts the rows the bundled OLTP workloads write; '{workload.name}' does not "
                "say which ids it writes"
            )
        if ctx.written is None:
            ctx.written = []
        ids: list[int] = ctx.written
        stmts = ctx.stmts
        for name, at in write_ids.items():
            if name in stmts:
                stmts[name] = [_watched(s, at, ids) for s in stmts[name]]
        in_trx = "begin" in stmts
        if in_trx:
            stmts["begin"] = [_starting(s, ids) for s in stmts["begin"]]
        if getattr(ctx.after_event, "shard_spans", False):
            return
        counters = ctx.counters
        before = ctx.after_event

        def tally() -> None:
            if ids:
                if in_trx:
                    counters.write_trx += 1
                    counters.spanning_trx += self.nodes_of(ids) > 1
                else:  # autocommit: each statement is its own transaction, on one node
                    counters.write_trx += len(ids)
                ids.clear()
            if before is not None:
                before()

        tally.shard_spans = True  # type: ignore[attr-defined]
        ctx.after_event = tally


def _watched(stmt: Any, at: int, ids: list[int]) -> Any:
    """``stmt`` noting its id argument (position ``at``) in ``ids`` once it succeeded (a
    statement that failed wrote nothing: in autocommit its event is restarted, and no BEGIN
    clears what it would have left)."""
    if stmt is None or getattr(stmt, "shard_spans", False):
        return stmt

    async def call(*args: Any) -> Any:
        result = await stmt(*args)
        ids.append(args[at])
        return result

    call.shard_spans = True  # type: ignore[attr-defined]
    return call


def _starting(stmt: Any, ids: list[int]) -> Any:
    """BEGIN: a new transaction (an attempt that failed left its ids behind)."""
    if stmt is None or getattr(stmt, "shard_spans", False):
        return stmt

    def call(*args: Any) -> Any:
        ids.clear()
        return stmt(*args)

    call.shard_spans = True  # type: ignore[attr-defined]
    return call
