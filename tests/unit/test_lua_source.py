"""lua/bridge.c's event source against the Python bridge it stands for (lua/state.py):
the values a Lua event yields with a prepared statement reach the statement as lupa
converts them (integral numbers as int, others as float, nil, booleans, UTF-8 strings);
what the C does not take (another type, any request but OP_EXEC) is left to Python with
the whole request; a string that is not UTF-8 goes as bytes (lupa raises on it: the Python
bridge cannot send one); the answer Lua gets (1: the statement
counted a read); an event returning a true value stops the loop unrecorded.  Statements
here are plain coroutines (the server path is tests/integration/test_lua_bridge.py)."""

from __future__ import annotations

import asyncio

import pytest

from pysysbench.engine.worker import Limits
from pysysbench.lua.log import Log
from pysysbench.lua.runtime import Seeds, Unique, runtime_module
from pysysbench.lua.state import LuaState, Services
from pysysbench.runtime import native

pytest.importorskip("lupa")
if native.LuaEvents is None:
    pytest.skip(f"the C extension is not in use: {native.describe()}", allow_module_level=True)

SCRIPT = """
answers = {}
n = 0
function event()
   n = n + 1
   local r = coroutine.yield(1, 1, 42, -7, 2^53, 1.5, nil, true, false, "\\195\\169t\\195\\169")
   answers[#answers + 1] = r
   if n % 2 == 0 then
      r = coroutine.yield(1, 1, "x", {1})      -- not a plain value: the Python bridge's
      answers[#answers + 1] = r
   end
   if n == 4 then return "stop" end
end
"""


def _state() -> tuple[LuaState, list]:
    services = Services({}, Log(lambda line: None, 3), "mysql", {}, Unique(1), Seeds(1, 0, 1))
    st = LuaState(services, 0)
    st.rt.execute(SCRIPT)
    seen: list[tuple] = []
    lua_type = runtime_module()[0].lua_type

    async def stmt(*args):
        seen.append(tuple(f"<Lua {lua_type(v)}>" if lua_type(v) else v for v in args))
        if len(seen) % 3 == 0:
            st.counters.reads += 1  # every third one counts a read
        await asyncio.sleep(0)

    st.stmts.append(stmt)
    return st, seen


async def _failed(err):
    raise AssertionError(f"the event failed: {err}")


async def _python(st: LuaState) -> int:
    events = 0
    while not await st.event(_failed):
        events += 1
    return events


async def _c(st: LuaState) -> tuple[int, int]:
    src = st.native_events()
    recorded, handovers = [], 0
    while True:
        loop = native.EventLoop(src, lambda tid, ns: recorded.append(ns), 0, Limits(), 0)
        out = await loop
        if out is True:
            return len(recorded) + handovers, src.handovers
        assert out is ...
        if await st.finish_event(src, out, _failed):
            return len(recorded) + handovers, src.handovers
        handovers += 1


def test_the_c_source_gives_statements_what_the_python_bridge_gives():
    py, py_seen = _state()
    c, c_seen = _state()
    try:
        events = asyncio.run(_python(py))
        c_events, handed = asyncio.run(_c(c))
        assert events == c_events == 3
        assert c_seen == py_seen and len(c_seen) == 6
        assert c_seen[0] == (42, -7, 2**53, 1.5, None, True, False, "été")
        assert [type(v) for v in c_seen[0][:4]] == [int, int, int, float]
        assert handed == 2  # events 2 and 4: the second yield goes to Python
        assert c_seen[2] == ("x", "<Lua table>")

        def answers(st):
            return list(st.rt.globals().answers.values())

        assert answers(c) == answers(py) == [0, 0, 1, 0, 0, 1]
    finally:
        py.release()
        c.release()


def test_a_string_that_is_not_utf8_goes_as_bytes():
    st, seen = _state()
    st.rt.execute('function event() coroutine.yield(1, 1, "\\255\\254", "ok"); return true end')
    try:
        assert asyncio.run(_c(st)) == (0, 0)
        assert seen == [(b"\xff\xfe", "ok")]
    finally:
        st.release()
