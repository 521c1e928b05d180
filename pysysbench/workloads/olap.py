"""Select-only "OLAP" workloads of the KunlunBase report: one statement kind per event.

The KunlunBase 0.9.1 report measures point select, simple range, sum range,
ORDER BY range and DISTINCT range throughput separately (with 0.5's oltp.lua
and all other counts at 0).  Here each is a workload of its own, in 1.0 style:
statements prepared per table (``--db-ps-mode``), a random table and one
statement per event, no BEGIN/COMMIT.  Options are the OLTP ones (``--tables``,
``--table_size``, ``--range_size``, ...); the data set is ``oltp_common``'s.
"""

from __future__ import annotations

from .base import ThreadContext, register
from .oltp import Oltp


class SelectOnly(Oltp):
    """One statement of kind ``kind`` on a random table per event."""

    kind = "point"
    transactional = False

    def configure(self) -> None:
        super().configure()
        self.range_selects = True  # --range_selects does not turn these workloads off

    def statement_kinds(self) -> list[str]:
        return [self.kind]

    async def event(self, ctx: ThreadContext) -> None:
        r = ctx.rand
        stmt = ctx.stmts[self.kind][r.uniform(1, self.tables)]
        lo = r.default(1, self.table_size)
        if self.kind == "point":
            await stmt(lo)
        else:
            await stmt(lo, lo + self.range_size - 1)


@register
class OlapPointSelect(SelectOnly):
    """OLAP: one primary-key point select per event (SELECT c ... WHERE id=?)."""

    name = "olap_point_select"
    kind = "point"


@register
class OlapSimpleRange(SelectOnly):
    """OLAP: one simple range select per event (SELECT c ... WHERE id BETWEEN ? AND ?)."""

    name = "olap_simple_range"
    kind = "simple"


@register
class OlapSumRange(SelectOnly):
    """OLAP: one sum range select per event (SELECT SUM(k) ... WHERE id BETWEEN ? AND ?)."""

    name = "olap_sum_range"
    kind = "sum"


@register
class OlapOrderRange(SelectOnly):
    """OLAP: one ORDER BY range select per event (SELECT c ... BETWEEN ? AND ? ORDER BY c)."""

    name = "olap_order_range"
    kind = "order"


@register
class OlapDistinctRange(SelectOnly):
    """OLAP: one DISTINCT range select per event (SELECT DISTINCT c ... BETWEEN ? AND ? ORDER BY c)."""

    name = "olap_distinct_range"
    kind = "distinct"
