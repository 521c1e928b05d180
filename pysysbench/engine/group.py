"""Worker groups: the seam between the run lifecycle and where threads live.

:class:`LocalRun` drives a group through ``setup -> init -> start -> [end_warmup]
-> sample ... -> wait -> close``.  :class:`InProcessGroup` runs every thread on the
current event loop; :class:`pysysbench.engine.procs.ProcessGroup` splits them
over worker processes and :class:`pysysbench.engine.raygroup.RayGroup` over Ray
actors on several machines; both merge their snapshots exactly.  All answer
with :class:`Sample` records, so reports never see where the numbers came from.
``setup`` gets the executor itself ready (a Ray connection and actors) and is
not part of ``--thread-init-timeout``; ``init`` connects the threads.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable
from dataclasses import field
from typing import TYPE_CHECKING, Any

from ..core.record import record
from ..drivers.base import Driver
from ..runtime.memory import pin_mmap_threshold
from ..stats.records import Snapshot
from ..workloads.base import Workload
from .budget import EventBudget
from .spec import RunSpec
from .worker import Worker

if TYPE_CHECKING:
    from .loopwatch import LoopWatch


@record
class Sample:
    """A group's state at one instant."""

    snapshot: Snapshot
    running: int = 0  # threads still looping
    inflight: int = 0  # events executing now
    queue_length: int = 0  # rate mode: arrivals waiting for a thread
    cpu_s: float = 0.0  # client CPU seconds used so far (all processes)
    per_worker: list[dict[Any, Any]] = field(default_factory=list)
    connections: dict[str, int] = field(default_factory=dict)  # database node -> sessions
    nodes: list[dict[Any, Any]] = field(default_factory=list)  # client machines (Ray only)


def merge_counts(dicts: Iterable[dict[str, int]]) -> dict[str, int]:
    """Add up ``{key: count}`` dicts (connections per database node)."""
    out: dict[str, int] = {}
    for d in dicts:
        for key, n in d.items():
            out[key] = out.get(key, 0) + n
    return out


def merged_sample(
    payloads: list[dict[Any, Any]], alive: list[dict[Any, Any]], parent_cpu_s: float, **extra: Any
) -> Sample:
    """Merge the last payloads of remote workers (processes or Ray actors).
    Counters come from every worker that ever reported, dead ones included (what
    they measured is kept); running/in-flight/queue only from live ones."""
    return Sample(
        snapshot=Snapshot.merge(p["snapshot"] for p in payloads) if payloads else Snapshot(),
        running=sum(p["running"] for p in alive),
        inflight=sum(p["inflight"] for p in alive),
        queue_length=sum(p["queue_length"] for p in alive),
        cpu_s=sum(p["cpu_s"] for p in payloads) + parent_cpu_s,
        connections=merge_counts(p.get("connections", {}) for p in payloads),
        **extra,
    )


def split(total: int, parts: int, index: int) -> int:
    """Share ``index`` of ``total`` split as evenly as possible over ``parts``."""
    return total // parts + (1 if index < total % parts else 0)


@record(frozen=True)
class Share:
    """What one remote worker (a process, a Ray actor) runs: a contiguous slice of the
    global thread ids with its share of ``--rate`` (a sum of independent Poisson streams
    is a Poisson stream of the summed rate) and the ``--events`` budget it takes from."""

    tids: range
    rate: float
    budget: EventBudget | None  # None: no --events


def shares(spec: RunSpec, parts: int, budget: EventBudget | None = None) -> list[Share]:
    """``parts`` shares of the run.  ``budget``: the run's --events budget, shared by every
    part (worker processes map it); without one (Ray actors on other machines cannot),
    each part gets a budget of its own, its share of --events -- 0 for some parts when
    --events is below ``parts``: those run no event (a budget of 0 is empty, not unlimited)."""
    out, first = [], 0
    for i in range(parts):
        n = split(spec.threads, parts, i)
        mine = budget if budget is not None or not spec.events else EventBudget(split(spec.events, parts, i))
        out.append(Share(range(first, first + n), spec.rate / parts if spec.rate else 0.0, mine))
        first += n
    return out


def share_group(spec: RunSpec, share: Share) -> InProcessGroup:
    """A remote worker's group: the driver and workload made afresh from the spec there."""
    workload, driver = spec.parts()
    return InProcessGroup(spec, workload, driver, share.tids, rate=share.rate, budget=share.budget)


class InProcessGroup:
    """All threads on the current event loop (one worker)."""

    watch: LoopWatch  # a worker process's watchdog (engine/procs.py), set there only

    def __init__(
        self,
        spec: RunSpec,
        workload: Workload,
        driver: Driver,
        tids: range,
        rate: float = 0.0,
        budget: EventBudget | None = None,
    ):
        pin_mmap_threshold()  # the process holding the connections returns their buffers (memory.py)
        self.worker = Worker(spec, workload, driver, tids)
        self.rate = rate
        self.budget = budget
        self.cpu0 = time.process_time()

    @property
    def fatal(self) -> BaseException | None:
        return self.worker.fatal

    @property
    def traceback(self) -> BaseException | None:
        return self.worker.traceback

    async def setup(self) -> None:
        """Nothing to get ready: the threads live on this event loop."""

    async def init(self) -> None:
        try:
            await self.worker.init_threads()
        except BaseException:
            await self.worker.close()
            raise

    def start(self, deadline_ns: int, warming: bool) -> None:
        lim = self.worker.limits
        lim.deadline_ns = deadline_ns
        lim.budget = self.budget
        lim.warming = warming
        self.worker.start(self.rate)

    async def wait(self, timeout: float | None) -> bool:
        tasks = self.worker.tasks
        if tasks:
            await asyncio.wait([t.finished for t in tasks], timeout=timeout)
        return self.worker.running() == 0

    def sample_now(self) -> Sample:
        w = self.worker
        return Sample(
            w.snapshot(),
            w.running(),
            w.busy(),
            w.queue_length(),
            time.process_time() - self.cpu0,
            connections=w.connections(),
        )

    async def sample(self) -> Sample:
        return self.sample_now()

    async def end_warmup(self) -> Sample:
        return self.leave_warmup()

    def leave_warmup(self) -> Sample:
        """Atomically (no await): leave warm-up and return the baseline."""
        self.worker.limits.warming = False
        self.worker.recorder.reset_minmax()
        return self.sample_now()

    async def checkpoint(self) -> Sample:
        s = self.sample_now()
        self.worker.recorder.reset_minmax()
        return s

    def stop(self) -> None:
        self.worker.stop()

    def cancel(self) -> None:
        self.worker.cancel()

    async def close(self) -> None:
        await self.worker.close()
