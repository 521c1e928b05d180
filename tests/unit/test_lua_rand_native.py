"""sysbench.rand's generator in C (lua/bridge.c, called through LuaJIT's FFI) against its Lua
twin in sysbench.lua: the same numbers and strings draw for draw, and the reason for the C --
an interpreted draw leaves no garbage in the state's heap."""

from __future__ import annotations

import pytest

from pysysbench.cli.main import main
from pysysbench.lua import state as lua_state
from pysysbench.runtime.native import FILE as NATIVE_PATH

pytest.importorskip("lupa")

DRAWS = """
function event()
  local r = sysbench.rand
  local out = {}
  for i = 1, 300 do
    out[#out + 1] = r.uniform(1, 1000000) .. ":" .. r.default(1, 100000) .. ":" .. r.gaussian(5, 50)
      .. ":" .. r.pareto(1, 1000) .. ":" .. tostring(r.uniform_uint64()) .. ":" .. r.string("##@@-#\\0#")
      .. ":" .. string.format("%.17g", r.uniform_double())
  end
  out[#out + 1] = r.string(string.rep("###########-", 10))
  print(table.concat(out, " "))
end"""

GARBAGE = """
function event()
  jit.off()                       -- as a state runs a loop before it is hot: interpreted
  collectgarbage("collect")
  collectgarbage("stop")
  local before = collectgarbage("count")
  local r = sysbench.rand
  for i = 1, 2000 do r.uniform(1, 100000); r.special(1, 100000) end
  local s = r.string(string.rep("###########-", 10))
  print(string.format("garbage %.0f", collectgarbage("count") - before))
  collectgarbage("restart")
end"""


def _run(tmp_path, capfd, text: str) -> list[str]:
    script = tmp_path / "t.lua"
    script.write_text(text)
    assert (
        main(
            [
                str(script),
                "--threads=1",
                "--workers=1",
                f"--sqlite-db={tmp_path / 'x.db'}",
                "--rand-seed=11",
                "--rand-type=special",
                "--events=3",
                "run",
            ]
        )
        == 0
    )
    return [line for line in capfd.readouterr().out.splitlines() if line[:1].isdigit() or line.startswith("garbage")]


def _lua_only(monkeypatch) -> None:
    monkeypatch.setattr(lua_state, "NATIVE_PATH", None)


@pytest.mark.skipif(NATIVE_PATH is None, reason="the C extension is off (PYSYSBENCH_NATIVE=off) or not built")
def test_c_generator_draws_what_the_lua_one_draws(tmp_path, capfd, monkeypatch):
    c_lines = _run(tmp_path, capfd, DRAWS)
    _lua_only(monkeypatch)
    lua_lines = _run(tmp_path, capfd, DRAWS)
    assert len(c_lines) == 3 and len(c_lines[0].split()) == 301
    assert c_lines == lua_lines


@pytest.mark.skipif(NATIVE_PATH is None, reason="the C extension is off (PYSYSBENCH_NATIVE=off) or not built")
def test_c_generator_leaves_no_garbage_when_interpreted(tmp_path, capfd, monkeypatch):
    c_kb = [float(line.split()[1]) for line in _run(tmp_path, capfd, GARBAGE)]
    _lua_only(monkeypatch)
    lua_kb = [float(line.split()[1]) for line in _run(tmp_path, capfd, GARBAGE)]
    # the Lua twin boxes uint64 cdata in every draw: hundreds of KB for 4,000 draws and a string
    assert min(lua_kb) > 300
    assert max(c_kb) < 10


EVENTS_GARBAGE = """
local n, before = 0, 0
function event()
  n = n + 1
  if n == 1 then
    jit.off()
    collectgarbage("collect")
    collectgarbage("stop")
    before = collectgarbage("count")
  elseif n == 2001 then
    print(string.format("garbage %.0f", (collectgarbage("count") - before) * 1024))
    collectgarbage("restart")
  end
end"""


@pytest.mark.skipif(NATIVE_PATH is None, reason="the C extension is off (PYSYSBENCH_NATIVE=off) or not built")
def test_hidden_draw_after_each_event_leaves_no_garbage(tmp_path, capfd):
    # with --percentile on, sysbench draws once after every event; thrown away, it must not box
    # a uint64 cdata (24 bytes an event, and the collector's work on them, were a third of an
    # interpreted point select's time in LuaJIT)
    script = tmp_path / "t.lua"
    script.write_text(EVENTS_GARBAGE)
    assert (
        main(
            [
                str(script),
                "--threads=1",
                "--workers=1",
                f"--sqlite-db={tmp_path / 'x.db'}",
                "--percentile=95",
                "--events=2001",
                "run",
            ]
        )
        == 0
    )
    lines = [line for line in capfd.readouterr().out.splitlines() if line.startswith("garbage")]
    assert len(lines) == 1 and float(lines[0].split()[1]) < 2000  # 2000 events: 48,000 bytes before
