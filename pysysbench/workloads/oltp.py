"""The bundled sysbench 1.0.20 OLTP scripts as small classes (spec 3.5, 3.6).

A script's event is a list of parts (``parts``: names of oltp_common.PARTS, where each
part's statements and draws are defined once); the Python helpers here interpret the
parts (base.run_steps) and ``event_steps`` hands the same steps to the C event loop.
Each query group draws its own table (even when its count is 0), then its ids, in
sysbench's order.  Statements are prepared per table in ``thread_init``, only for the
parts a script uses, plus BEGIN/COMMIT unless ``--skip_trx``.
"""

from __future__ import annotations

from collections.abc import Coroutine
from functools import cached_property
from typing import Any

from ..core.rand import C_TEMPLATE, PAD_TEMPLATE, thread_unique
from .base import ThreadContext, compile_steps, native_step, register, run_steps
from .check import AT_LEAST, AT_MOST
from .oltp_common import PARTS, RANGE_WIDTH, SQL, OltpBase, Part

# the methods that run the parts: a subclass overriding one has its events run part by part
# through them, in Python
HELPERS = (*dict.fromkeys(part.helper for part in PARTS.values()), "_run", "_by_helpers")
# what the C event loop's steps stand for (Oltp.event_steps): overriding any of them
# in a subclass means its events run as written, in Python
NATIVE_HELPERS = ("event", "event_steps", *HELPERS)


class Oltp(OltpBase):
    """The OLTP event made of ``parts`` (oltp_common.PARTS), run by the Python helpers below
    or by the C event loop; subclasses list their parts."""

    parts: tuple[str, ...] = ()  # the event: names of PARTS, in order
    transactional = True  # BEGIN/COMMIT around the event unless --skip_trx

    def configure(self) -> None:
        super().configure()
        v = self.values
        self.counts = {
            "point": v.point_selects,
            "simple": v.simple_ranges,
            "sum": v.sum_ranges,
            "order": v.order_ranges,
            "distinct": v.distinct_ranges,
            "index": v.index_updates,
            "non_index": v.non_index_updates,
            "delete": v.delete_inserts,
        }
        self.use_trx = self.transactional and self.trx
        self.range_selects = v.range_selects

    def statement_kinds(self) -> list[str]:
        """The statements ``parts`` send, in order (BEGIN and COMMIT aside)."""
        names = (name for part in self.parts for step in self.part_steps[part] for name in step[0])
        return [name for name in dict.fromkeys(names) if name not in ("begin", "commit")]

    def prepared_per_thread(self) -> int:
        return (2 if self.use_trx else 0) + len(self.statement_kinds()) * self.tables

    async def thread_init(self, ctx: ThreadContext) -> None:
        if self.use_trx:
            await ctx.prepare("begin", "BEGIN")
            await ctx.prepare("commit", "COMMIT")
        for kind in self.statement_kinds():
            await ctx.prepare(kind, SQL[kind], self.tables)

    @classmethod
    def native_parts(cls) -> tuple[str, ...] | None:
        """``parts`` when the C event loop provably does what this class's Python does: no
        method the parts stand for (``NATIVE_HELPERS``) is overridden.  A subclass that
        overrides ``_points`` (say) inherits ``parts`` but not their meaning, so it runs
        in Python."""
        if not cls.parts or any(getattr(cls, name) is not getattr(Oltp, name) for name in NATIVE_HELPERS):
            return None
        return cls.parts

    @cached_property
    def part_steps(self) -> dict[str, tuple]:
        """PARTS with this workload's counts and range width: the steps each part sends
        (none when its flag is off)."""
        return {name: self._resolved(part) for name, part in PARTS.items()}

    def _resolved(self, part: Part) -> tuple:
        if part.flag is not None and not getattr(self, part.flag):
            return ()
        width = self.range_size - 1

        def value(draw):
            return ("plus", draw[1], width) if draw[0] == "plus" and draw[2] == RANGE_WIDTH else draw

        return tuple(
            (
                names,
                per_table,
                count if isinstance(count, int) else self.counts[count],
                tuple(value(d) for d in draws),
                calls,
            )
            for names, per_table, count, draws, calls in part.steps
        )

    def event_steps(self, ctx: ThreadContext, parts: tuple[str, ...]) -> list[tuple]:
        """The event made of ``parts`` as steps of the C event loop (engine/event_loop.c's
        ``EventLoop``, run by engine/worker.py): ``part_steps`` with each statement's
        handles, the same statements with the same draws in the same order as ``event``."""
        unknown = [part for part in parts if part not in PARTS]
        if unknown:
            raise ValueError(f"no event part {unknown[0]!r}")
        s = ctx.stmts
        return [
            native_step(tuple(s[n] if per_table else s[n][0] for n in names), count, draws, calls, per_table)
            for part in parts
            for names, per_table, count, draws, calls in self.part_steps[part]
        ]

    @cached_property
    def part_programs(self) -> dict[str, tuple]:
        """``part_steps`` as the Python helpers run them (base.run_steps)."""
        return {name: compile_steps(steps) for name, steps in self.part_steps.items()}

    @cached_property
    def _program(self) -> tuple | None:
        """The whole event as one program when no helper is overridden (each helper runs its
        part's program: the same statements, draws and order); None: ``event`` calls the helpers."""
        if any(getattr(type(self), name) is not getattr(Oltp, name) for name in HELPERS):
            return None
        return tuple(step for part in self.parts for step in self.part_programs[part])

    def event(self, ctx: ThreadContext) -> Coroutine[Any, Any, None]:
        """The parts in order (returned, not awaited here: one frame fewer per statement)."""
        program = self._program
        if program is None:
            return self._by_helpers(ctx)
        return run_steps(program, ctx.stmts, ctx.rand, self.tables, self.table_size)

    async def _by_helpers(self, ctx: ThreadContext) -> None:
        for part in self.parts:
            await getattr(self, PARTS[part].helper)(ctx, *PARTS[part].args)

    # the helpers return the coroutine running their part
    def _run(self, ctx: ThreadContext, part: str) -> Coroutine[Any, Any, None]:
        return run_steps(self.part_programs[part], ctx.stmts, ctx.rand, self.tables, self.table_size)

    def _begin(self, ctx: ThreadContext) -> Coroutine[Any, Any, None]:
        return self._run(ctx, "begin")

    def _commit(self, ctx: ThreadContext) -> Coroutine[Any, Any, None]:
        return self._run(ctx, "commit")

    def _points(self, ctx: ThreadContext, kind: str = "point") -> Coroutine[Any, Any, None]:
        return self._run(ctx, kind)

    def _ranges(self, ctx: ThreadContext) -> Coroutine[Any, Any, None]:
        return self._run(ctx, "ranges")

    def _non_index(self, ctx: ThreadContext) -> Coroutine[Any, Any, None]:
        return self._run(ctx, "non_index")

    def _delete_inserts(self, ctx: ThreadContext) -> Coroutine[Any, Any, None]:
        return self._run(ctx, "delete")


@register
class OltpReadWrite(Oltp):
    """Point selects, range selects, updates and a delete/insert pair in one transaction."""

    name = "oltp_read_write"
    parts = ("begin", "point", "ranges", "index", "non_index", "delete", "commit")


@register
class OltpReadOnly(Oltp):
    """Point selects and range selects in one transaction."""

    name = "oltp_read_only"
    parts = ("begin", "point", "ranges", "commit")


@register
class OltpWriteOnly(Oltp):
    """Index updates, non-index updates and delete/insert pairs in one transaction."""

    name = "oltp_write_only"
    parts = ("begin", "index", "non_index", "delete", "commit")


@register
class OltpPointSelect(Oltp):
    """One primary-key point select per event."""

    name = "oltp_point_select"
    parts = ("point",)
    transactional = False

    def configure(self) -> None:
        super().configure()
        self.counts["point"] = 1  # sysbench forces point_selects=1 for this script


@register
class OltpUpdateIndex(Oltp):
    """UPDATE of the indexed column k (index_updates per event)."""

    name = "oltp_update_index"
    parts = ("index",)
    transactional = False


@register
class OltpUpdateNonIndex(Oltp):
    """UPDATE of the non-indexed column c (non_index_updates per event)."""

    name = "oltp_update_non_index"
    parts = ("non_index",)
    transactional = False


@register
class OltpDelete(Oltp):
    """One DELETE by primary key per event."""

    name = "oltp_delete"
    transactional = False
    row_count_rule = AT_MOST

    def statement_kinds(self) -> list[str]:
        return ["delete"]

    async def event(self, ctx: ThreadContext) -> None:
        r = ctx.rand
        stmt = ctx.stmts["delete"][r.uniform(1, self.tables)]
        await stmt(r.default(1, self.table_size))


@register
class OltpInsert(Oltp):
    """One INSERT per event, sent as plain text (never prepared), as sysbench."""

    name = "oltp_insert"
    transactional = False
    row_count_rule = AT_LEAST
    write_ids: dict[str, int] | None = {}  # its INSERT is text: the event notes its row (ctx.written)

    def configure(self) -> None:
        super().configure()
        # with client-generated ids the tables start empty (spec 3.8)
        self.prepare_table_size = None if self.values.auto_inc else 0
        self.omit_id = self.values.auto_inc and self.driver.caps.auto_inc_insert_omits_id

    async def thread_init(self, ctx: ThreadContext) -> None:
        await super().thread_init(ctx)
        ctx.state["unique"] = thread_unique(self.values, ctx.tid, ctx.threads)

    async def event(self, ctx: ThreadContext) -> None:
        r = ctx.rand
        t = r.uniform(1, self.tables)
        k = r.default(1, self.table_size)
        c = r.string(C_TEMPLATE)
        pad = r.string(PAD_TEMPLATE)
        if self.omit_id:
            await ctx.conn.query(f"INSERT INTO sbtest{t} (k, c, pad) VALUES ({k}, '{c}', '{pad}')")
        else:
            ident = 0 if self.values.auto_inc else ctx.state["unique"].next() - 2147483648
            await ctx.conn.query(f"INSERT INTO sbtest{t} (id, k, c, pad) VALUES ({ident}, {k}, '{c}', '{pad}')")
        if ctx.written is not None:  # --shard-nodes: one row, one transaction (its node does not matter)
            ctx.written.append(0)


@register
class OltpCommon(OltpBase):
    """The sbtest data set alone: prepare, prewarm and cleanup (the TiDB report
    prepares with ``sysbench oltp_common prepare``); it has no events to run."""

    name = "oltp_common"
    commands = ("prepare", "prewarm", "cleanup", "help")
