"""asyncio helpers that more than one layer needs.

Role: :func:`all_or_nothing` runs coroutines concurrently and, on the first failure,
cancels the rest and retrieves their outcomes before raising that failure -- so the
others' errors (the same server gone, usually) are neither lost nor logged by asyncio
with a traceback each at the loop's shutdown ("unhandled exception during
asyncio.run() shutdown"). The engine's thread start-up and the loader's parallel
loads both use it. :func:`close_quietly` ends a connection at a run's end, whatever
state its server is in (the engine's threads, the Lua states' own connections).
:func:`run_to_end` runs a coroutine on a new loop (uvloop when there is one).
Standard library only (uvloop when installed); it sits in the bottom layer.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Coroutine, Iterable
from typing import Any


async def all_or_nothing(aws: Iterable[Awaitable[Any]]) -> list[Any]:
    """The results of ``aws`` run concurrently; on the first failure, the others are
    cancelled and awaited, then that failure is raised."""
    tasks = [asyncio.ensure_future(a) for a in aws]
    try:
        return await asyncio.gather(*tasks)
    except BaseException:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise


CLOSE_TIMEOUT_S = 5


async def close_quietly(conn: Any) -> None:
    """``await conn.close()``, at most CLOSE_TIMEOUT_S: a connection that cannot close
    cleanly (a hung or vanished server) is simply dropped."""
    try:
        await asyncio.wait_for(conn.close(), CLOSE_TIMEOUT_S)
    except Exception:
        pass


def run_to_end(coro: Coroutine[Any, Any, Any]) -> Any:
    """``coro`` run on a new event loop: uvloop when installed (it is a dependency), the
    stdlib loop otherwise."""
    try:
        import uvloop

        return uvloop.run(coro)
    except ImportError:
        return asyncio.run(coro)


__all__ = ["all_or_nothing", "close_quietly", "run_to_end"]
