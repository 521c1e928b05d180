"""The sysbench 1.1 face's Lua API and run rules (issue 41): ``sysbench.rand`` as 1.1.0 has
it (``varstring``, ``zipfian``, no ``special``), its numbers bit for bit with the same
``--rand-seed``.  The expected texts and streams were captured from the sysbench 1.1.0 binary
(3ceba0b, /root/.cache/sysbench-1.1.0); where that binary is built, they are compared with
it live too."""

from __future__ import annotations

import hashlib
import subprocess

import pytest
from test_face11 import REF_11, clean_face, needs_ref, run_main  # noqa: F401 (clean_face: a fixture)

pytest.importorskip("lupa")

# tests/t/api_rand.t of 1.1.0, with a seed
API_RAND = """ffi.cdef[[int printf(const char *fmt, ...);]]
function init()
  mod_funcs = {}
  for f in pairs(sysbench.rand) do table.insert(mod_funcs, f) end
  table.sort(mod_funcs)
  for i, f in ipairs(mod_funcs) do print(string.format("sysbench.rand.%s", f)) end
end
function event()
  print("sysbench.rand.default(0, 99) = " .. sysbench.rand.default(0, 99))
  print("sysbench.rand.unique(0, 4294967295) = " .. sysbench.rand.unique(0, 4294967295))
  ffi.C.printf("sysbench.rand.uniform_uint64() = %llu\\n", sysbench.rand.uniform_uint64())
  print([[sysbench.rand.string("abc-###-@@@-xyz") = ]] .. sysbench.rand.string("abc-###-@@@-xyz"))
  print([[sysbench.rand.varstring(1, 23) = ]] .. sysbench.rand.varstring(1, 23))
  print("sysbench.rand.uniform(0, 99) = " .. sysbench.rand.uniform(0, 99))
  print("sysbench.rand.gaussian(0, 99) = " .. sysbench.rand.gaussian(0, 99))
  print("sysbench.rand.pareto(0, 99) = " .. sysbench.rand.pareto(0, 99))
  print("sysbench.rand.zipfian(0, 99) = " .. sysbench.rand.zipfian(0, 99))
end
"""
NAMES_11 = "default gaussian pareto string uniform uniform_double uniform_uint64 unique varstring zipfian".split()
NAMES_10 = "default gaussian pareto special string uniform uniform_double uniform_uint64 unique".split()
# 1.1.0 --verbosity=0 --events=2 --rand-seed=42 (unique: the same whatever the seed)
EVENTS_11 = """sysbench.rand.default(0, 99) = 36
sysbench.rand.unique(0, 4294967295) = 2672933100
sysbench.rand.uniform_uint64() = 12985727069636131040
sysbench.rand.string("abc-###-@@@-xyz") = abc-762-zvp-xyz
sysbench.rand.varstring(1, 23) = LJvkat
sysbench.rand.uniform(0, 99) = 62
sysbench.rand.gaussian(0, 99) = 0
sysbench.rand.pareto(0, 99) = 0
sysbench.rand.zipfian(0, 99) = 16
sysbench.rand.default(0, 99) = 49
sysbench.rand.unique(0, 4294967295) = 2916245674
sysbench.rand.uniform_uint64() = 9962810077609019774
sysbench.rand.string("abc-###-@@@-xyz") = abc-654-ihe-xyz
sysbench.rand.varstring(1, 23) = IpTIa
sysbench.rand.uniform(0, 99) = 18
sysbench.rand.gaussian(0, 99) = 0
sysbench.rand.pareto(0, 99) = 3
sysbench.rand.zipfian(0, 99) = 24
"""

# many draws of each: their sha256 under 1.1.0 (--verbosity=0 --events=3)
STREAM = """function event()
  local t = {}
  for i = 1, 300 do t[#t+1] = sysbench.rand.zipfian(1, 1000) end
  for i = 1, 50 do t[#t+1] = sysbench.rand.zipfian(1, 4000000000) end
  for i = 1, 50 do t[#t+1] = sysbench.rand.zipfian(7, 10) end
  for i = 1, 50 do t[#t+1] = sysbench.rand.default(1, 100000) end
  for i = 1, 20 do t[#t+1] = sysbench.rand.varstring(0, 40) end
  for i = 1, 20 do t[#t+1] = sysbench.rand.varstring(10, 10) end
  t[#t+1] = sysbench.rand.pareto(1, 100)
  t[#t+1] = sysbench.rand.gaussian(1, 100)
  print(sysbench.tid .. " " .. table.concat(t, " "))
end
"""
STREAMS = {
    "--rand-seed=3": "60755732972890009da100bdcc3feb928ff49899da8544678755a0d972e3b406",
    "--rand-seed=9 --rand-zipfian-exp=2.5 --rand-type=zipfian": (
        "e3e7fa57ff95b7ffee5187e23d5ded80cf32b69314566162b19df24fed54d111"
    ),
    "--rand-seed=11 --rand-type=gaussian": "4c58ba4298e2eaa48993563f6fe4394b196f3562172dee1c5eed18462996c740",
}

# 1.1.0's own checks (sysbench.rand.lua's asserts) and the FFI's conversions
EDGES = """function event()
  print(pcall(sysbench.rand.varstring, 5, 1))
  print(pcall(sysbench.rand.varstring, 0, 0))
  print(pcall(sysbench.rand.varstring, 0, 3))
  print(pcall(sysbench.rand.varstring, 2.7, 3.9))
  print(pcall(sysbench.rand.varstring, -1, 3))
  print(pcall(sysbench.rand.varstring, "1", "3"))
  print(pcall(sysbench.rand.varstring))
  print(pcall(sysbench.rand.zipfian, 5, 1))
  print(pcall(sysbench.rand.zipfian, 1, 1))
  print(pcall(sysbench.rand.zipfian, "x", 1))
  print(pcall(sysbench.rand.zipfian, 0, 4294967295))
  print(pcall(sysbench.rand.special, 1, 3))
  print(pcall(sysbench.rand.gaussian, 20, 10))
end
"""
EDGES_11 = """false\t[string "sysbench.rand.lua"]:74: assertion failed!
false\t[string "sysbench.rand.lua"]:75: assertion failed!
true\td
true\t]Cz
true\t]@L
false\t[string "sysbench.rand.lua"]:75: attempt to compare number with string
false\t[string "sysbench.rand.lua"]:74: attempt to compare two nil values
true\t499640201
true\t1
false\tbad argument #1 to '?' (cannot convert 'string' to 'unsigned int')
true\t4294967295
false\tattempt to call a nil value
true\t20
"""


def lua_out(monkeypatch, capfd, tmp_path, text: str, args: list[str], compat: str | None = "1.1") -> str:
    script = tmp_path / "s.lua"
    script.write_text(text)
    capfd.readouterr()
    code, _, err = run_main(["--verbosity=0", *args, str(script), "run"], monkeypatch, compat=compat)
    assert code == 0, err
    return capfd.readouterr().out


def test_110s_rand_functions_and_numbers(monkeypatch, capfd, tmp_path):
    """api_rand.t: varstring and zipfian there, special gone; every number the 1.1.0 binary's."""
    out = lua_out(monkeypatch, capfd, tmp_path, API_RAND, ["--events=2", "--rand-seed=42"])
    assert out == "".join(f"sysbench.rand.{n}\n" for n in NAMES_11) + EVENTS_11


def test_the_10_face_keeps_10s_rand_table(monkeypatch, capfd, tmp_path):
    text = API_RAND.split("function event()")[0] + "function event() end\n"
    out = lua_out(monkeypatch, capfd, tmp_path, text, ["--events=1"], compat=None)
    assert out == "".join(f"sysbench.rand.{n}\n" for n in NAMES_10)


def test_110s_unique_sequence_does_not_depend_on_the_seed(monkeypatch, capfd, tmp_path):
    text = "function event() print(sysbench.rand.unique()) end\n"
    for seed in ("0", "5"):
        out = lua_out(monkeypatch, capfd, tmp_path, text, ["--events=2", f"--rand-seed={seed}"])
        assert out == "2672933100\n2916245674\n"


@pytest.mark.parametrize("args", sorted(STREAMS))
def test_zipfian_varstring_gaussian_streams_are_110s(args, monkeypatch, capfd, tmp_path):
    """zipfian through the C library's log1p/expm1 as 1.1.0 computes it; 1.1.0's gaussian is
    its lower bound (it reads the gone --rand-spec-iter as 0) and draws nothing."""
    out = lua_out(monkeypatch, capfd, tmp_path, STREAM, ["--events=3", *args.split()])
    assert hashlib.sha256(out.encode()).hexdigest() == STREAMS[args]


def test_varstring_and_zipfian_edges_are_110s(monkeypatch, capfd, tmp_path):
    assert lua_out(monkeypatch, capfd, tmp_path, EDGES, ["--events=1", "--rand-seed=42"]) == EDGES_11


@needs_ref
@pytest.mark.parametrize("text", [API_RAND, STREAM, EDGES], ids=["api_rand", "stream", "edges"])
def test_the_110_binary_prints_the_same(text, monkeypatch, capfd, tmp_path):
    args = ["--events=3", "--rand-seed=17", "--rand-zipfian-exp=1.2"]
    ours = lua_out(monkeypatch, capfd, tmp_path, text, args)
    real = subprocess.run(
        [str(REF_11), "--verbosity=0", *args, str(tmp_path / "s.lua"), "run"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert ours == real.stdout


# --- --warmup-time (tests/t/opt_warmup_time.t of 1.1.0) ------------------------------------------


@pytest.mark.parametrize(
    "arg, line",
    [
        ("--warmup-time=-1", "FATAL: Invalid value for --warmup-time: -1.\n\n"),
        ("--threads=0", "FATAL: Invalid value for --threads: 0.\n\n"),
        ("--rand-zipfian-exp=-1", "FATAL: --rand-zipfian-exp must be >= 0\n"),
        ("--rand-type=special", "FATAL: Invalid random numbers distribution: special.\n"),
        ("--forced-shutdown=x", "FATAL: Invalid value for --forced-shutdown: 'x'\n"),
    ],
)
def test_110_refuses_these_before_its_first_line(arg, line, monkeypatch):
    assert run_main([arg, "cpu", "run"], monkeypatch, compat="1.1") == (1, line, "")


def test_the_10_face_keeps_its_warmup_message_after_the_first_line(monkeypatch):
    code, out, _ = run_main(["--warmup-time=-1", "cpu", "run"], monkeypatch)
    assert code == 1 and out.startswith("sysbench 1.0.20 ")
    assert out.endswith("FATAL: Invalid value for --warmup-time: -1 (must be >= 0)\n")


BUSY_THEN_SLEEP = """ffi.cdef[[typedef struct { long s; long ns; } pysb_ts;
int clock_gettime(int, pysb_ts *); int usleep(unsigned int);]]
local n = 0
local function now() local t = ffi.new("pysb_ts") ffi.C.clock_gettime(1, t) return tonumber(t.s) + tonumber(t.ns) / 1e9 end
function event()
  n = n + 1
  if n == 1 then local t = now() while now() - t < 1.2 do end else ffi.C.usleep(1500000) end
end
"""


def test_110_counts_time_elapsed_from_the_warmups_nominal_end(monkeypatch, tmp_path):
    """1 s of warmup, --time=1; the first event holds the thread for 1.2 s (the warmup really
    ends then), the second sleeps 1.5 s: the run ends 2.7 s after its start at the earliest,
    and 1.1.0 subtracts the nominal warmup: at least 1.7 s (the 1.1.0 binary: 1.7036s), where
    counting from the warmup's real end gives 1.5 s."""
    script = tmp_path / "w.lua"
    script.write_text(BUSY_THEN_SLEEP)
    code, out, err = run_main(["--warmup-time=1", "--time=1", str(script), "run"], monkeypatch, compat="1.1")
    assert code == 0, err
    elapsed = next(line for line in out.splitlines() if "time elapsed:" in line)
    assert float(elapsed.split()[-1].rstrip("s")) >= 1.7


# --- --luajit-cmd (tests/t/opt_luajit_cmd.t of 1.1.0) --------------------------------------------

JIT_STATUS = 'print("JIT status: " .. (jit.status() and "on" or "off"))\n'


@pytest.mark.parametrize(
    "arg, want",
    [
        ("--luajit-cmd", "JIT status: on\n"),
        ("--luajit-cmd=", "JIT status: on\n"),
        ("--luajit-cmd=off", "JIT status: off\n"),
        ("--luajit-cmd=on", "JIT status: on\n"),
        ("--luajit-cmd=flush", "JIT status: on\n"),
        ("--luajit-cmd=opt=3", "JIT status: on\n"),
    ],
)
def test_luajit_cmd_is_luajit_dash_j(arg, want, monkeypatch, capfd, tmp_path):
    script = tmp_path / "j.lua"
    script.write_text(JIT_STATUS)
    capfd.readouterr()
    code, out, err = run_main([arg, str(script)], monkeypatch, compat="1.1")
    assert (code, err, capfd.readouterr().out) == (0, "", want)


@pytest.mark.parametrize(
    "arg, line",
    [
        ("--luajit-cmd=foo", "FATAL: unknown luaJIT command or jit.* modules not installed"),
        ("--luajit-cmd=off,", "FATAL: unknown luaJIT command or jit.* modules not installed"),
        ("--luajit-cmd=v", "FATAL: unknown luaJIT command or jit.* modules not installed"),
        (
            "--luajit-cmd=off=1",
            "FATAL: `lua_pcall' function failed: bad argument #1 to '?' (function expected, got string)",
        ),
    ],
)
@pytest.mark.parametrize("test", ["script", "oltp_read_write"])
def test_a_bad_luajit_cmd_is_110s_fatal_line(arg, line, test, monkeypatch, tmp_path):
    """The 1.1.0 binary's lines; a bundled workload run natively checks the command too (1.1.0
    runs it in Lua), a built-in C test does not (no Lua state)."""
    script = tmp_path / "j.lua"
    script.write_text(JIT_STATUS)
    target = [str(script)] if test == "script" else [test, "help"]
    code, out, _ = run_main([arg, *target], monkeypatch, compat="1.1")
    assert (code, out.split("\n")[2:]) == (1, [line, ""])
    assert run_main([arg, "cpu", "help"], monkeypatch, compat="1.1")[0] == 0


def test_every_thread_state_gets_the_luajit_cmd(monkeypatch, capfd, tmp_path):
    script = tmp_path / "j.lua"
    script.write_text("function event() print(jit.status() and 'on' or 'off') end\n")
    capfd.readouterr()
    code, _, err = run_main(
        ["--luajit-cmd=off", "--threads=2", "--events=4", str(script), "run"], monkeypatch, compat="1.1"
    )
    assert code == 0, err
    out = capfd.readouterr().out  # two threads' print()s may share a line: count the words
    assert out.count("off") == 4 and "on" not in out, out


def test_luajit_cmd_is_no_1020_option(monkeypatch):
    assert run_main(["--luajit-cmd=off", "cpu", "run"], monkeypatch)[::2] == (1, "invalid option: --luajit-cmd=off\n")


def test_the_ffi_names_are_110s_c_functions(monkeypatch, capfd, tmp_path):
    """ffi.C.sb_rand_varstr has none of sysbench.rand.varstring's asserts (min above max: from
    1; max 0: nothing); the 1.1.0 binary's output, --rand-seed=5."""
    text = """function event()
  local buf = ffi.new("uint8_t[?]", 64)
  local n = ffi.C.sb_rand_varstr(buf, 5, 1)
  print(n, ffi.string(buf, n))
  print(ffi.C.sb_rand_varstr(buf, 3, 0))
  n = ffi.C.sb_rand_varstr(buf, 10, 20)
  print(n, ffi.string(buf, n))
  print(ffi.C.sb_rand_zipfian(1, 100))
end
"""
    out = lua_out(monkeypatch, capfd, tmp_path, text, ["--events=2", "--rand-seed=5"])
    assert out == "1\t^\n0\n14\tjUT^L\\RX0OA9K[\n42\n1\tx\n0\n10\t7k0TWD>mDV\n1\n"
