"""``select_random_points`` and ``select_random_ranges`` (spec 3.7).

Both read ``sbtest1`` only; thread t draws its k values from its own slice
[table_size/threads * t, + table_size/threads] so threads do not overlap.
The statement text keeps sysbench's multi-line layout.
"""

from __future__ import annotations

from ..core.errors import WorkloadError
from ..core.options import COUNT, Bounds, Option, OptType
from .base import Env, ThreadContext, register
from .oltp_common import GROUP, OLTP_OPTIONS, OltpBase

UINT32 = 0xFFFFFFFF
# one prepared statement carries at most 65535 parameters (MySQL and PostgreSQL protocols)
POINTS = Bounds(1, 65535, why="a prepared statement takes at most 65535 parameters")
RANGES = Bounds(1, 32767, why="a prepared statement takes at most 65535 parameters, two per range")


class SelectRandom(OltpBase):
    sql = ""

    def required_tables(self) -> list[str]:
        return ["sbtest1"]

    async def cleanup(self, env: Env) -> None:
        if self.tables != 1:
            raise WorkloadError(
                f"'{self.name}' cleanup supports only --tables=1 (as sysbench); "
                f"use oltp_read_write cleanup --tables={self.tables}"
            )
        await super().cleanup(env)

    def prepared_per_thread(self) -> int:
        return 1  # "select", below

    def params(self) -> int:
        raise NotImplementedError

    async def thread_init(self, ctx: ThreadContext) -> None:
        await ctx.prepare("select", self.sql)
        rlen = self.table_size / ctx.threads
        rmin = rlen * (ctx.tid % ctx.threads)
        # sb_rand truncates both bounds to uint32
        ctx.state["bounds"] = (int(rmin) & UINT32, int(rmin + rlen) & UINT32)


@register
class SelectRandomPoints(SelectRandom):
    """One SELECT ... WHERE k IN (random_points values) per event on sbtest1."""

    name = "select_random_points"
    options = OLTP_OPTIONS + [
        Option(
            "random_points",
            OptType.INT,
            10,
            "Number of random points in the IN() clause in generated SELECTs",
            GROUP,
            bounds=POINTS,
        )
    ]

    def configure(self) -> None:
        super().configure()
        n = self.points = self.values.random_points
        self.sql = (
            "        SELECT id, k, c, pad\n          FROM sbtest1\n          WHERE k IN ("
            + ", ".join("?" * n)
            + ")\n        "
        )

    async def event(self, ctx: ThreadContext) -> None:
        lo, hi = ctx.state["bounds"]
        draw = ctx.rand.default
        await ctx.stmts["select"][0](*[draw(lo, hi) for _ in range(self.points)])


@register
class SelectRandomRanges(SelectRandom):
    """One SELECT count(k) ... WHERE k BETWEEN ... OR ... per event on sbtest1."""

    name = "select_random_ranges"
    options = OLTP_OPTIONS + [
        Option("delta", OptType.INT, 5, "Size of BETWEEN ranges", GROUP, bounds=COUNT),
        Option("number_of_ranges", OptType.INT, 10, "Number of random BETWEEN ranges per SELECT", GROUP, bounds=RANGES),
    ]

    def configure(self) -> None:
        super().configure()
        n = self.ranges = self.values.number_of_ranges
        self.delta = self.values.delta
        self.sql = "        SELECT count(k)\n          FROM sbtest1\n          WHERE " + " OR ".join(
            ["k BETWEEN ? AND ?"] * n
        )

    async def event(self, ctx: ThreadContext) -> None:
        lo, hi = ctx.state["bounds"]
        draw, delta = ctx.rand.default, self.delta
        args = []
        for _ in range(self.ranges):
            v = draw(lo, hi)
            args += (v, v + delta)
        await ctx.stmts["select"][0](*args)
