"""The library entry point of the engine: one run, from its spec to its outcome.

Role: :func:`run` (and :func:`run_async` inside a running event loop) makes the
run's driver and workload from the :class:`RunSpec` unless the caller already has
them (the CLI, which made them to check the options), runs the lifecycle
(:class:`LocalRun`: pre-flight, thread start-up, warm-up, measurement, reports)
and returns the :class:`RunOutcome`.  What the run says goes to ``hooks``; the
result document is built from the outcome by ``results.from_outcome``.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from ..stats.results import RunOutcome
from .local import Hooks, LocalRun
from .spec import RunSpec

if TYPE_CHECKING:
    from ..drivers.base import Driver
    from ..workloads.base import Workload


async def run_async(
    spec: RunSpec, hooks: Hooks | None = None, *, workload: Workload | None = None, driver: Driver | None = None
) -> RunOutcome:
    workload, driver = spec.parts(workload, driver)
    local = LocalRun(spec, workload, driver, hooks or Hooks())
    local.hooks.control(local)
    return await local.execute()


def run(
    spec: RunSpec, hooks: Hooks | None = None, *, workload: Workload | None = None, driver: Driver | None = None
) -> RunOutcome:
    """Run one benchmark on a new event loop (uvloop when installed)."""
    coro = run_async(spec, hooks, workload=workload, driver=driver)
    try:
        import uvloop
    except ImportError:
        return asyncio.run(coro)
    return uvloop.run(coro)
