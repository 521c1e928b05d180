"""The bundled sysbench 1.0.20 OLTP scripts as small classes (spec 3.5, 3.6).

Each query group draws its own table (even when its count is 0), then its ids,
in sysbench's order.  Statements are prepared per table in ``thread_init``, only
for the groups a script uses, plus BEGIN/COMMIT unless ``--skip_trx``.
"""

from __future__ import annotations

from ..core.rand import C_TEMPLATE, PAD_TEMPLATE, thread_unique

from .base import ID, ThreadContext, native_step, plus, register, string
from .check import AT_LEAST, AT_MOST
from .oltp_common import OltpBase

SQL = {
    "point": "SELECT c FROM sbtest{table} WHERE id=?",
    "simple": "SELECT c FROM sbtest{table} WHERE id BETWEEN ? AND ?",
    "sum": "SELECT SUM(k) FROM sbtest{table} WHERE id BETWEEN ? AND ?",
    "order": "SELECT c FROM sbtest{table} WHERE id BETWEEN ? AND ? ORDER BY c",
    "distinct": "SELECT DISTINCT c FROM sbtest{table} WHERE id BETWEEN ? AND ? ORDER BY c",
    "index": "UPDATE sbtest{table} SET k=k+1 WHERE id=?",
    "non_index": "UPDATE sbtest{table} SET c=? WHERE id=?",
    "delete": "DELETE FROM sbtest{table} WHERE id=?",
    "insert": "INSERT INTO sbtest{table} (id, k, c, pad) VALUES (?, ?, ?, ?)",
}
RANGES = ("simple", "sum", "order", "distinct")
# what the C event loop's steps stand for (Oltp.event_steps): overriding any of them
# in a subclass means its events run as written, in Python
NATIVE_HELPERS = ("event_steps", "_begin", "_commit", "_points", "_ranges", "_non_index", "_delete_inserts")


class Oltp(OltpBase):
    """Common event steps; subclasses list their groups and compose ``event``."""

    groups: tuple[str, ...] = ()
    transactional = True     # BEGIN/COMMIT around the event unless --skip_trx

    def configure(self) -> None:
        super().configure()
        v = self.values
        self.counts = {"point": v.point_selects, "simple": v.simple_ranges, "sum": v.sum_ranges,
                       "order": v.order_ranges, "distinct": v.distinct_ranges, "index": v.index_updates,
                       "non_index": v.non_index_updates, "delete": v.delete_inserts}
        self.use_trx = self.transactional and self.trx
        self.range_selects = v.range_selects

    def statement_kinds(self) -> list[str]:
        kinds = []
        for g in self.groups:
            if g in RANGES and not self.range_selects:
                continue
            kinds.extend(("delete", "insert") if g == "delete" else (g,))
        return kinds

    async def thread_init(self, ctx: ThreadContext) -> None:
        if self.use_trx:
            await ctx.prepare("begin", "BEGIN")
            await ctx.prepare("commit", "COMMIT")
        for kind in self.statement_kinds():
            await ctx.prepare(kind, SQL[kind], self.tables)

    @classmethod
    def native_parts(cls) -> tuple[str, ...] | None:
        """The parts of ``event`` (its ``steps``) when the C event loop provably does
        what this class's Python does: ``event`` lists its parts and no class below the
        one defining it overrides a method those parts stand for.  A subclass that
        overrides ``_points`` (say) inherits ``event.steps`` but not its meaning, so it
        runs in Python."""
        parts = getattr(cls.event, "steps", None)
        if parts is None:
            return None
        owner = next(k for k in cls.__mro__ if "event" in vars(k))
        if any(getattr(cls, name) is not getattr(owner, name) for name in NATIVE_HELPERS):
            return None
        return parts

    def event_steps(self, ctx: ThreadContext, parts: tuple[str, ...]) -> list[tuple]:
        """The event made of ``parts`` (its ``event.steps``) as steps of the C event loop
        (engine/event_loop.c's ``EventLoop``, run by engine/worker.py): each part is the method of
        the same name below, the same statements with the same draws in the same order."""
        s, out = ctx.stmts, []
        for part in parts:
            if part in ("begin", "commit"):                 # _begin / _commit
                if self.use_trx:
                    out.append(native_step((s[part][0],), 1, per_table=False))
            elif part in ("point", "index"):                # _points: stmt(id)
                out.append(native_step((s[part],), self.counts[part], (ID,), ((0, (0,)),)))
            elif part == "ranges":                          # _ranges: stmt(lo, lo + range_size - 1)
                if self.range_selects:
                    out.extend(native_step((s[kind],), self.counts[kind], (ID, plus(0, self.range_size - 1)),
                                           ((0, (0, 1)),)) for kind in RANGES)
            elif part == "non_index":                       # _non_index: stmt(c, id)
                out.append(native_step((s["non_index"],), self.counts["non_index"], (string(C_TEMPLATE), ID),
                                       ((0, (0, 1)),)))
            elif part == "delete":                          # _delete_inserts: delete(id), insert(id, k, c, pad)
                out.append(native_step((s["delete"], s["insert"]), self.counts["delete"],
                                       (ID, ID, string(C_TEMPLATE), string(PAD_TEMPLATE)),
                                       ((0, (0,)), (1, (0, 1, 2, 3)))))
            else:
                raise ValueError(f"no event part {part!r}")
        return out

    async def _begin(self, ctx: ThreadContext) -> None:
        if self.use_trx:
            await ctx.stmts["begin"][0]()

    async def _commit(self, ctx: ThreadContext) -> None:
        if self.use_trx:
            await ctx.stmts["commit"][0]()

    async def _points(self, ctx: ThreadContext, kind: str = "point") -> None:
        r = ctx.rand
        stmt = ctx.stmts[kind][r.uniform(1, self.tables)]
        draw, n = r.default, self.table_size
        for _ in range(self.counts[kind]):
            await stmt(draw(1, n))

    async def _ranges(self, ctx: ThreadContext) -> None:
        if not self.range_selects:
            return
        r = ctx.rand
        draw, n, width = r.default, self.table_size, self.range_size - 1
        for kind in RANGES:
            stmt = ctx.stmts[kind][r.uniform(1, self.tables)]
            for _ in range(self.counts[kind]):
                lo = draw(1, n)
                await stmt(lo, lo + width)

    async def _non_index(self, ctx: ThreadContext) -> None:
        r = ctx.rand
        stmt = ctx.stmts["non_index"][r.uniform(1, self.tables)]
        for _ in range(self.counts["non_index"]):
            c = r.string(C_TEMPLATE)
            await stmt(c, r.default(1, self.table_size))

    async def _delete_inserts(self, ctx: ThreadContext) -> None:
        r = ctx.rand
        t = r.uniform(1, self.tables)
        delete, insert = ctx.stmts["delete"][t], ctx.stmts["insert"][t]
        n = self.table_size
        for _ in range(self.counts["delete"]):
            ident = r.default(1, n)
            k = r.default(1, n)
            c = r.string(C_TEMPLATE)
            pad = r.string(PAD_TEMPLATE)
            await delete(ident)
            await insert(ident, k, c, pad)


@register
class OltpReadWrite(Oltp):
    """Point selects, range selects, updates and a delete/insert pair in one transaction."""

    name = "oltp_read_write"
    groups = ("point", "simple", "sum", "order", "distinct", "index", "non_index", "delete")

    async def event(self, ctx: ThreadContext) -> None:
        await self._begin(ctx)
        await self._points(ctx)
        await self._ranges(ctx)
        await self._points(ctx, "index")
        await self._non_index(ctx)
        await self._delete_inserts(ctx)
        await self._commit(ctx)

    # the parts above, for event_steps (a subclass that overrides event runs its own in Python)
    event.steps = ("begin", "point", "ranges", "index", "non_index", "delete", "commit")


@register
class OltpReadOnly(Oltp):
    """Point selects and range selects in one transaction."""

    name = "oltp_read_only"
    groups = ("point", "simple", "sum", "order", "distinct")

    async def event(self, ctx: ThreadContext) -> None:
        await self._begin(ctx)
        await self._points(ctx)
        await self._ranges(ctx)
        await self._commit(ctx)

    event.steps = ("begin", "point", "ranges", "commit")


@register
class OltpWriteOnly(Oltp):
    """Index updates, non-index updates and delete/insert pairs in one transaction."""

    name = "oltp_write_only"
    groups = ("index", "non_index", "delete")

    async def event(self, ctx: ThreadContext) -> None:
        await self._begin(ctx)
        await self._points(ctx, "index")
        await self._non_index(ctx)
        await self._delete_inserts(ctx)
        await self._commit(ctx)

    event.steps = ("begin", "index", "non_index", "delete", "commit")


@register
class OltpPointSelect(Oltp):
    """One primary-key point select per event."""

    name = "oltp_point_select"
    groups = ("point",)
    transactional = False

    def configure(self) -> None:
        super().configure()
        self.counts["point"] = 1   # sysbench forces point_selects=1 for this script

    async def event(self, ctx: ThreadContext) -> None:
        # _points with its one statement inlined: the table, then the id, as sysbench draws them
        r = ctx.rand
        stmt = ctx.stmts["point"][r.uniform(1, self.tables)]
        await stmt(r.default(1, self.table_size))

    event.steps = ("point",)


@register
class OltpUpdateIndex(Oltp):
    """UPDATE of the indexed column k (index_updates per event)."""

    name = "oltp_update_index"
    groups = ("index",)
    transactional = False

    async def event(self, ctx: ThreadContext) -> None:
        await self._points(ctx, "index")

    event.steps = ("index",)


@register
class OltpUpdateNonIndex(Oltp):
    """UPDATE of the non-indexed column c (non_index_updates per event)."""

    name = "oltp_update_non_index"
    groups = ("non_index",)
    transactional = False

    async def event(self, ctx: ThreadContext) -> None:
        await self._non_index(ctx)

    event.steps = ("non_index",)


@register
class OltpDelete(Oltp):
    """One DELETE by primary key per event."""

    name = "oltp_delete"
    groups = ("delete_only",)
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
            return
        ident = 0 if self.values.auto_inc else ctx.state["unique"].next() - 2147483648
        await ctx.conn.query(f"INSERT INTO sbtest{t} (id, k, c, pad) VALUES ({ident}, {k}, '{c}', '{pad}')")


@register
class OltpCommon(OltpBase):
    """The sbtest data set alone: prepare, prewarm and cleanup (the TiDB report
    prepares with ``sysbench oltp_common prepare``); it has no events to run."""

    name = "oltp_common"
    commands = ("prepare", "prewarm", "cleanup", "help")
