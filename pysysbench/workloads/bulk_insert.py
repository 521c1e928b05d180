"""``bulk_insert`` (spec 3.9): each event appends one row to a per-thread
multi-row INSERT, flushed at 512 KiB and at thread end; so "queries" counts the
flushed statements while "transactions" counts rows, as in sysbench."""

from __future__ import annotations

from .base import Env, ThreadContext, Workload, register
from .oltp_common import BULK_INSERT_MAX_BYTES, drop_tables


def _create_sql(table: int) -> str:
    return (
        f"\n        CREATE TABLE IF NOT EXISTS sbtest{table} (\n"
        "          id INTEGER NOT NULL,\n"
        "          k INTEGER DEFAULT '0' NOT NULL,\n"
        "          PRIMARY KEY (id)\n"
        "        )"
    )


@register
class BulkInsert(Workload):
    """Multi-row INSERTs into sbtest<thread+1>, one row per event."""

    name = "bulk_insert"
    options = []
    commands = ("prepare", "run", "cleanup")

    def required_tables(self) -> list[str]:
        return [f"sbtest{t}" for t in range(1, self.values.threads + 1)]

    async def prepare(self, env: Env) -> None:
        conn = await env.driver.connect()
        try:
            for t in range(1, env.values.threads + 1):
                env.say(f"Creating table 'sbtest{t}'...")
                await conn.query(_create_sql(t))
        finally:
            await conn.close()

    async def cleanup(self, env: Env) -> None:
        await drop_tables(env, env.values.threads)

    async def thread_init(self, ctx: ThreadContext) -> None:
        prefix = f"INSERT INTO sbtest{ctx.tid + 1} VALUES"
        ctx.state.update(prefix=prefix, rows=[], length=len(prefix), n=0)

    async def event(self, ctx: ThreadContext) -> None:
        st = ctx.state
        st["n"] += 1
        row = f"({st['n']},{st['n']})"
        comma = 1 if st["rows"] else 0
        # as sysbench: flush when row + terminator (+ comma) would not fit (spec 2.4)
        if st["rows"] and st["length"] + comma + len(row) + 1 > BULK_INSERT_MAX_BYTES:
            await self._flush(ctx)
            comma = 0
        st["rows"].append(row)
        st["length"] += comma + len(row)

    async def _flush(self, ctx: ThreadContext) -> None:
        st = ctx.state
        sql = st["prefix"] + ",".join(st["rows"])
        st["rows"], st["length"] = [], len(st["prefix"])
        await ctx.conn.query(sql)

    async def thread_done(self, ctx: ThreadContext) -> None:
        if ctx.state.get("rows"):
            await self._flush(ctx)
