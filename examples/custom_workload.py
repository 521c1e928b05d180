"""A custom pysysbench workload: look rows up by the secondary index k, then
touch one of them, in one transaction.

Run it like a bundled test, passing the file path as the test name:

    pysysbench examples/custom_workload.py --tables=2 --table-size=10000 prepare
    pysysbench examples/custom_workload.py --tables=2 --table-size=10000 --lookups=3 --time=10 run
    pysysbench examples/custom_workload.py --tables=2 cleanup
    pysysbench examples/custom_workload.py help

The file must define exactly one subclass of ``Workload``.  Subclassing
``OltpBase`` reuses the sbtest data set (options ``--tables``, ``--table_size``,
``--rand-type`` ..., and the ``prepare``/``cleanup``/``prewarm`` commands).
"""

from pysysbench import Option, OptType
from pysysbench.workloads.base import ThreadContext
from pysysbench.workloads.oltp_common import OLTP_OPTIONS, OltpBase


class KLookup(OltpBase):
    """Secondary-index lookups followed by one UPDATE, in one transaction."""

    name = "k_lookup"
    # declared options are parsed like built-in ones: --lookups=5 or --lookups 5
    options = OLTP_OPTIONS + [
        Option("lookups", OptType.INT, 5, "SELECTs by k per transaction", "workload options"),
    ]

    def configure(self) -> None:
        """Read options once; the event loop must not parse anything."""
        super().configure()
        self.lookups = self.values.lookups

    async def thread_init(self, ctx: ThreadContext) -> None:
        """Prepare statements once per connection.  '?' are parameters; {table}
        is replaced by 1..tables, giving ctx.stmts[name][table]."""
        await ctx.prepare("begin", "BEGIN")
        await ctx.prepare("commit", "COMMIT")
        await ctx.prepare("by_k", "SELECT id, c FROM sbtest{table} WHERE k=?", self.tables)
        await ctx.prepare("touch", "UPDATE sbtest{table} SET k=k+1 WHERE id=?", self.tables)

    async def event(self, ctx: ThreadContext) -> None:
        """One event = one "transaction" in the report.  ctx.rand draws with the
        distribution chosen by --rand-type (ctx.rand.default) or uniformly."""
        r = ctx.rand
        table = r.uniform(1, self.tables)
        await ctx.stmts["begin"][0]()
        for _ in range(self.lookups):
            await ctx.stmts["by_k"][table](r.default(1, self.table_size))
        await ctx.stmts["touch"][table](r.default(1, self.table_size))
        await ctx.stmts["commit"][0]()
