"""A user's subclass of a bundled OLTP workload that overrides one step helper
(tests/integration/test_overrides.py).  ``OVERRIDE_CLASS`` names the bundled class,
``OVERRIDE_HELPER`` the helper; every call is counted per thread and the counts are
written to ``OVERRIDE_COUNT_DIR`` (one file per worker process) in thread_done."""

import os

from pysysbench.workloads import oltp

BASE = getattr(oltp, os.environ["OVERRIDE_CLASS"])
HELPER = os.environ["OVERRIDE_HELPER"]


async def _counted(self, ctx, *args):
    ctx.state["calls"] = ctx.state.get("calls", 0) + 1
    return await getattr(BASE, HELPER)(self, ctx, *args)


class Overridden(BASE):
    """The bundled workload with one helper overridden (counted)."""

    name = "overridden"

    async def thread_done(self, ctx):
        await super().thread_done(ctx)
        path = os.path.join(os.environ["OVERRIDE_COUNT_DIR"], f"{os.getpid()}-{ctx.tid}")
        with open(path, "w") as fh:
            fh.write(str(ctx.state.get("calls", 0)))


setattr(Overridden, HELPER, _counted)
