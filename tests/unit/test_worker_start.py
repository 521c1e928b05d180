"""The parent's side of a worker's start-up messages (engine/procs.py)."""

from __future__ import annotations

import asyncio

from pysysbench.engine.procs import ProcessGroup, _Child
from pysysbench.options import Values


def test_a_ready_after_the_start_up_failed_is_ignored():
    """The soak (bench/soak.py, 2,000 threads): one worker's thread start-up timed out, the wait
    for the others was cancelled, and the next worker's late "ready" raised InvalidStateError in
    the channel's callback: a traceback printed over the one-line FATAL."""
    async def main() -> None:
        group = ProcessGroup(Values({}), "oltp_read_write", "mysql", threads=4, workers=2)
        late = _Child(1, proc=None, tids=range(2, 4), ready=asyncio.get_running_loop().create_future())
        late.ready.cancel()
        group._on_message(late, ("ready",))
        assert late.ready.cancelled()
    asyncio.run(main())
