"""A workload call that the loop's watchdog interrupted (engine/loopwatch.py, lua/bridge.c).

Lua that computes without yielding holds the event loop; past a stop bound the watchdog
interrupts it.  The call that took the interrupt -- its Lua error value is
:data:`~pysysbench.runtime.native.LUA_INTERRUPT_MARKER` (:func:`is_interrupt`), or the C event
loop's :class:`~pysysbench.runtime.native.LuaInterrupted` -- waits for the engine's cancel
(:func:`park`), as an event waiting on a hung server does.
"""

from __future__ import annotations

import asyncio

from ..runtime.native import LUA_INTERRUPT_MARKER, LuaInterrupted, lua_watch


def is_interrupt(value: object) -> bool:
    """Whether a Lua error value is the watchdog's interrupt."""
    return LUA_INTERRUPT_MARKER is not None and value == LUA_INTERRUPT_MARKER


def interrupted(exc: BaseException) -> bool:
    """Whether an exception is the C event loop's LuaInterrupted."""
    return LuaInterrupted is not None and isinstance(exc, LuaInterrupted)


async def park() -> None:
    """Tell the watchdog the loop runs again, then wait for the engine's cancel."""
    if lua_watch is not None:
        lua_watch.lua_watch_parked()
    await asyncio.get_running_loop().create_future()


__all__ = ["interrupted", "is_interrupt", "park"]
