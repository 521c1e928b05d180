"""The parent-side control both remote executors share: worker processes
(:class:`~pysysbench.engine.procs.ProcessGroup`) and Ray actors
(:class:`~pysysbench.engine.raygroup.RayGroup`).

Role: :class:`RemoteGroup` holds what does not depend on how the parent reaches
its members -- request/reply (``sample``, ``end_warmup``, ``checkpoint``: ask
every live member, wait for the replies, merge the newest payloads), the first
fatal error stopping the rest, the end of the run (``wait``: every member done
or dead), ``stop``.  A subclass says how to ask (``_request``), how to tell
(``_tell``), what one member's entry in ``per_worker`` is and what else a merged
sample carries.  A member has ``last`` (its newest payload or None), ``done`` and
``dead``.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from ..core.errors import RunAborted
from .group import Sample, merged_sample
from .spec import RunSpec


class MemberLost(RunAborted):
    """A member (worker process, Ray actor) died or stopped answering: the run ends with
    this error and exit code 1, and still reports what every member measured until its
    last report (RunOutcome.partial)."""


class RemoteGroup:
    """A run's threads split over remote members (see the module docstring)."""

    def __init__(self, spec: RunSpec):
        self.spec = spec
        self.members: list[Any] = []
        self.fatal: BaseException | None = None
        self.traceback = None
        self._all_done: asyncio.Event | None = None
        self._heartbeat: asyncio.Task[Any] | None = None
        self._cpu0 = time.process_time()

    # -- what a subclass provides --

    async def _request(self, kind: str) -> None:
        """Ask every live member for ``kind`` and wait for the replies (they update ``last``)."""
        raise NotImplementedError

    def _tell(self, kind: str) -> None:
        """Tell every live member ``kind`` ("stop", "cancel") without waiting."""
        raise NotImplementedError

    def _worker_entry(self, member: Any) -> dict[str, Any]:
        raise NotImplementedError

    def _rebase(self) -> None:
        """The figures restart here (end of warm-up, a checkpoint)."""

    def _extra(self) -> dict[str, Any]:
        """More fields of a merged :class:`Sample`."""
        return {}

    # -- the shared control --

    def _merge(self) -> Sample:
        have = [m for m in self.members if m.last is not None]
        return merged_sample(
            [m.last for m in have],
            [m.last for m in have if not m.dead],
            time.process_time() - self._cpu0,
            per_worker=[self._worker_entry(m) for m in self.members],
            **self._extra(),
        )

    async def sample(self) -> Sample:
        await self._request("sample")
        return self._merge()

    async def end_warmup(self) -> Sample:
        await self._request("end_warmup")
        self._rebase()
        return self._merge()

    async def checkpoint(self) -> Sample:
        await self._request("checkpoint")
        self._rebase()
        return self._merge()

    def _set_fatal(self, exc: BaseException) -> None:
        if self.fatal is None:
            self.fatal = exc
        self.stop()

    def _check_all_done(self) -> None:
        if self._all_done is not None and all(m.done or m.dead for m in self.members):
            self._all_done.set()

    async def wait(self, timeout: float | None) -> bool:
        assert self._all_done is not None  # set when the members start
        try:
            await asyncio.wait_for(self._all_done.wait(), timeout)
        except TimeoutError:
            return False
        return True

    def stop(self) -> None:
        self._tell("stop")

    def cancel(self) -> None:
        self._tell("cancel")
