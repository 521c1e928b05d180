"""A Lua script's declared options are its own (sysbench.cmdline.options), and the
--rand-* options reach sysbench.rand as in sysbench 1.0.20.

sysbench parses and reads its own options before a script declares any: a declaration of
the same name (``threads``, ``report-interval``, ``rand-type``) is what the script sees in
``sysbench.opt``, its default even when the command line gives the option (that value is
the run's), and the run keeps the built-in.  The expected texts and random streams are
/usr/bin/sysbench 1.0.20's on the same scripts and arguments.  Each test looks at both
sides: the script's view (what it prints) and the run's (the RunSpec the run is built from).
"""

from __future__ import annotations

import pytest

from pysysbench.cli.main import main
from pysysbench.core.rand import Rand, Xoroshiro128Plus
from pysysbench.core.rand_compat import GlibcRandom
from pysysbench.engine.spec import RunSpec
from pysysbench.lua import state as lua_state

pytest.importorskip("lupa")

SHOW = """
function init() print("init " .. show()) end
function thread_init() print("thread " .. sysbench.tid .. " " .. show()) end
function event() end
"""


@pytest.fixture
def specs(monkeypatch):
    """The RunSpec of each run: the run's own view of its options."""
    built = []
    real = RunSpec.build.__func__

    def build(cls, *args, **kwargs):
        built.append(real(cls, *args, **kwargs))
        return built[-1]

    monkeypatch.setattr(RunSpec, "build", classmethod(build))
    return built


def _run(tmp_path, capfd, text: str, *args: str, command: str = "run") -> tuple[int, list[str], str]:
    script = tmp_path / "t.lua"
    script.write_text(text)
    rc = main([str(script), f"--sqlite-db={tmp_path / 'x.db'}", *args, command])
    cap = capfd.readouterr()
    return rc, cap.out.splitlines(), cap.err


def _mine(lines: list[str]) -> list[str]:
    return [line for line in lines if line.startswith(("init ", "thread ", "ev "))]


THREADS = (
    """
sysbench.cmdline.options = {
  threads = {"x", 4},
  ["my-opt"] = {"mine", 7},
}
function show() return type(sysbench.opt.threads) .. " " .. sysbench.opt.threads .. " " .. sysbench.opt.my_opt end
"""
    + SHOW
)


def test_declared_threads_is_the_scripts_own_the_run_keeps_the_builtin(tmp_path, capfd, specs):
    # sysbench 1.0.20: "Number of threads: 1" and the script sees 4 (was: "Number of threads: 4.0",
    # then an internal TypeError)
    rc, out, err = _run(tmp_path, capfd, THREADS, "--events=4")
    assert rc == 0, out + [err]
    assert "Number of threads: 1" in out
    assert _mine(out) == ["init number 4 7", "thread 0 number 4 7"]
    assert specs[-1].threads == 1


def test_threads_on_the_command_line_is_the_runs_only(tmp_path, capfd, specs):
    # sysbench 1.0.20 with --threads=3: 3 threads, each sees its declared default 4;
    # the script's own --my-opt=3 reaches the script
    rc, out, err = _run(tmp_path, capfd, THREADS, "--events=4", "--threads=3", "--my-opt=3")
    assert rc == 0, out + [err]
    assert "Number of threads: 3" in out
    assert sorted(_mine(out)) == ["init number 4 3"] + [f"thread {t} number 4 3" for t in range(3)]
    assert specs[-1].threads == 3


def test_an_undeclared_builtin_is_the_runs_value(tmp_path, capfd):
    text = (
        "sysbench.cmdline.options = {}\n"
        'function show() return sysbench.opt.threads .. " " .. sysbench.opt.rand_type end\n' + SHOW
    )
    rc, out, err = _run(tmp_path, capfd, text, "--events=2", "--threads=2", "--rand-type=pareto")
    assert rc == 0, out + [err]
    assert sorted(_mine(out)) == ["init 2 pareto", "thread 0 2 pareto", "thread 1 2 pareto"]


def test_help_shows_the_scripts_declarations(tmp_path, capfd):
    text = THREADS.replace('["my-opt"]', '["report-interval"] = {"ri", "abc"},\n  ["my-opt"]')
    rc, out, err = _run(tmp_path, capfd, text, command="help")
    assert rc == 0, out + [err]
    assert out[-5:] == [
        "t.lua options:",
        "  --my-opt=N               mine [7]",
        "  --report-interval=STRING ri [abc]",
        "  --threads=N              x [4]",
        "",
    ]


def test_declared_text_report_interval_leaves_the_runs_alone(tmp_path, capfd, specs):
    text = (
        'sysbench.cmdline.options = {["report-interval"] = {"ri", "abc"}}\n'
        "function show() return sysbench.opt.report_interval end\n" + SHOW
    )
    rc, out, err = _run(tmp_path, capfd, text, "--events=2")
    assert rc == 0, out + [err]
    assert _mine(out) == ["init abc", "thread 0 abc"]
    assert not any("Report intermediate results" in line for line in out)
    assert specs[-1].report_interval_s == 0
    # the command line's is the run's, the script keeps its default (sysbench)
    rc, out, err = _run(tmp_path, capfd, text, "--events=2", "--report-interval=1")
    assert rc == 0, out + [err]
    assert _mine(out) == ["init abc", "thread 0 abc"]
    assert specs[-1].report_interval_s == 1


def test_declared_output_options_write_nothing_and_listen_nowhere(tmp_path, capfd, specs):
    result, log = tmp_path / "result.json", tmp_path / "latency.csv"
    text = (
        f'sysbench.cmdline.options = {{["result-file"] = {{"r", "{result}"}}, '
        f'["latency-log"] = {{"l", "{log}"}}, ["metrics-addr"] = {{"m", "0.0.0.0:19999"}}}}\n'
        'function show() return sysbench.opt.result_file .. " " .. sysbench.opt.latency_log .. " " '
        ".. sysbench.opt.metrics_addr end\n" + SHOW
    )
    rc, out, err = _run(tmp_path, capfd, text, "--events=2")
    assert rc == 0, out + [err]
    assert _mine(out) == [f"init {result} {log} 0.0.0.0:19999", f"thread 0 {result} {log} 0.0.0.0:19999"]
    assert not result.exists() and not log.exists()
    assert specs[-1].metrics_addr == ""
    assert not specs[-1].values.result_file and not specs[-1].values.latency_log


def test_a_script_claims_the_name_of_a_pysysbench_addition(tmp_path, capfd, specs):
    # sysbench has no --result-file: declared by the script, the command line's is the script's
    result = tmp_path / "mine.json"
    text = (
        'sysbench.cmdline.options = {["result-file"] = {"r", ""}}\n'
        'function show() return "[" .. sysbench.opt.result_file .. "]" end\n' + SHOW
    )
    rc, out, err = _run(tmp_path, capfd, text, "--events=2", f"--result-file={result}")
    assert rc == 0, out + [err]
    assert _mine(out) == [f"init [{result}]", f"thread 0 [{result}]"]
    assert not result.exists()
    assert not specs[-1].values.result_file
    # not declared: pysysbench's own option, the run writes the file
    text = 'function show() return "" end\n' + SHOW
    rc, out, err = _run(tmp_path, capfd, text, "--events=2", f"--result-file={result}")
    assert rc == 0, out + [err]
    assert result.exists()


def test_declared_reconnect_is_the_scripts_as_in_sysbench_11(tmp_path, capfd, specs):
    # sysbench 1.1's oltp_common.lua declares reconnect and reconnects itself; the engine's
    # reconnect-every must not take it (was: an internal AttributeError)
    text = (
        'sysbench.cmdline.options = {reconnect = {"Reconnect after every N events", 0}}\n'
        "function show() return sysbench.opt.reconnect end\n" + SHOW
    )
    rc, out, err = _run(tmp_path, capfd, text, "--events=20", "--reconnect=5")
    assert rc == 0, out + [err]
    assert _mine(out) == ["init 5", "thread 0 5"]
    assert "total number of events:              20" in "\n".join(out)
    assert specs[-1].reconnect_every == 0


def test_the_runs_options_are_checked_for_a_script(tmp_path, capfd):
    rc, out, err = _run(tmp_path, capfd, SHOW.replace("show()", '""'), "--rand-type=foo", "--events=1")
    assert rc == 1
    assert "FATAL: Invalid random numbers distribution: foo." in out
    assert not any("internal error" in line for line in out)
    rc, out, err = _run(tmp_path, capfd, SHOW.replace("show()", '""'), "--threads=0", "--events=1")
    assert rc == 1
    assert any(line.startswith("FATAL: Invalid value for --threads: 0") for line in out), out


# --- the --rand-* options and sysbench.rand -----------------------------------------------

RAND = """
sysbench.cmdline.options = {
  ["rand-type"] = {"script's own", "uniform"},
  ["rand-spec-iter"] = {"x", 2}, ["rand-spec-pct"] = {"x", 40}, ["rand-spec-res"] = {"x", 10},
  ["rand-seed"] = {"x", 99}, ["rand-pareto-h"] = {"x", 0.7},
}
function event()
  local t = {}
  for i=1,4 do t[#t+1] = sysbench.rand.default(1, 1000) end
  t[#t+1] = sysbench.rand.gaussian(1, 1000)
  t[#t+1] = sysbench.rand.special(1, 1000)
  t[#t+1] = sysbench.rand.pareto(1, 1000)
  t[#t+1] = sysbench.rand.uniform(1, 1000)
  print("ev " .. table.concat(t, " "))
end
function init()
  local o = sysbench.opt
  print("init " .. o.rand_type .. " " .. o.rand_spec_iter .. " " .. o.rand_spec_pct .. " " .. o.rand_spec_res
        .. " " .. o.rand_seed .. " " .. o.rand_pareto_h)
end
"""

# /usr/bin/sysbench 1.0.20: t.lua --rand-seed=7 ARGS --events=2 --percentile=0 run
SYSBENCH_STREAMS = {
    (): ["ev 501 502 499 505 468 503 2 970", "ev 480 499 503 501 532 503 682 75"],
    ("--rand-type=pareto", "--rand-pareto-h=0.3"): ["ev 125 243 49 613 468 503 49 970", "ev 2 2 105 13 539 505 3 221"],
    ("--rand-type=special", "--rand-spec-iter=3", "--rand-spec-pct=10", "--rand-spec-res=50"): [
        "ev 505 516 502 526 338 621 1 671",
        "ev 528 423 502 513 336 539 287 555",
    ],
    ("--rand-type=gaussian", "--rand-spec-iter=5"): [
        "ev 515 462 505 593 368 502 38 314",
        "ev 540 514 574 590 625 498 300 879",
    ],
    ("--rand-type=uniform", "--rand-spec-iter=2"): [
        "ev 540 658 408 866 322 503 24 159",
        "ev 259 403 933 808 191 502 152 409",
    ],
}


@pytest.mark.parametrize("args", list(SYSBENCH_STREAMS), ids=["declared", "pareto", "special", "gaussian", "uniform"])
@pytest.mark.parametrize("native", [True, False], ids=["c", "lua"])
def test_rand_options_reach_sysbench_rand_as_in_sysbench(tmp_path, capfd, monkeypatch, args, native):
    """The script declares every --rand-* with other defaults: sysbench.opt shows them, the
    draws follow the run's (the command line's, else the built-in defaults: special)."""
    if not native:
        monkeypatch.setattr(lua_state, "NATIVE_PATH", None)
    rc, out, err = _run(
        tmp_path, capfd, RAND, "--rand-seed=7", *args, "--events=2", "--percentile=0", "--threads=1", "--workers=1"
    )
    assert rc == 0, out + [err]
    assert _mine(out) == ["init uniform 2 40 10 99 0.7"] + SYSBENCH_STREAMS[args]


def _thread0_rand(seed: int, **kwargs) -> Rand:
    """Thread 0's generator of a --threads=1 run without background threads (sysbench's seeding)."""
    g = GlibcRandom(seed)
    r1, r2, r3, r4 = (g.random() for _ in range(4))
    xo = Xoroshiro128Plus((r1 << 32) | r2, (r3 << 32) | r4)
    rand = Rand(None, **kwargs)
    rand.set_source(xo.double)
    return rand


@pytest.mark.parametrize("native", [True, False], ids=["c", "lua"])
def test_rand_type_zipfian_reaches_sysbench_rand_default(tmp_path, capfd, monkeypatch, native):
    """pysysbench's --rand-type=zipfian (not in 1.0.20): sysbench.rand.default draws what the
    native workloads' Rand draws from the same stream (was: 'special', silently)."""
    if not native:
        monkeypatch.setattr(lua_state, "NATIVE_PATH", None)
    text = (
        "function event()\n  local t = {}\n"
        "  for i = 1, 200 do t[#t+1] = sysbench.rand.default(1, 1000) end\n"
        "  t[#t+1] = sysbench.rand.default(5, 5)\n  t[#t+1] = sysbench.rand.default(1, 4000000000)\n"
        '  print("ev " .. table.concat(t, " "))\nend\n'
    )
    for exp in (0.8, 1.0, 1.3):
        rc, out, err = _run(
            tmp_path,
            capfd,
            text,
            "--rand-seed=7",
            "--rand-type=zipfian",
            f"--rand-zipfian-exp={exp}",
            "--events=1",
            "--threads=1",
            "--workers=1",
        )
        assert rc == 0, out + [err]
        rand = _thread0_rand(7, rand_type="zipfian", zipf_exp=exp)
        want = [rand.default(1, 1000) for _ in range(200)] + [rand.default(5, 5), rand.default(1, 4000000000)]
        assert _mine(out) == ["ev " + " ".join(map(str, want))]
        assert sum(v <= 10 for v in want[:200]) > 40  # skewed to the low ids (uniform: about 2)


def test_zipfian_is_no_sysbench_rand_function(tmp_path, capfd):
    # 1.0.20's API has no sysbench.rand.zipfian (spec: calling it raises)
    text = 'function event() print("ev " .. tostring(sysbench.rand.zipfian)) end\n'
    rc, out, err = _run(tmp_path, capfd, text, "--rand-type=zipfian", "--events=1")
    assert rc == 0 and _mine(out) == ["ev nil"]


def test_a_claimed_name_takes_the_scripts_type(tmp_path, capfd, specs):
    # --workers is an integer of pysysbench's; the script's 'workers' is text (sysbench: any value)
    text = (
        'sysbench.cmdline.options = {workers = {"w", "none"}}\nfunction show() return sysbench.opt.workers end\n' + SHOW
    )
    rc, out, err = _run(tmp_path, capfd, text, "--events=2", "--workers=auto")
    assert rc == 0, out + [err]
    assert _mine(out) == ["init auto", "thread 0 auto"]
    # not declared: pysysbench's option, its value checked as before
    rc, out, err = _run(tmp_path, capfd, 'function show() return "" end\n' + SHOW, "--events=2", "--workers=auto")
    assert rc == 1
    assert "Invalid value for the 'workers' option: 'auto'" in err
    # a built-in test: the same error, before anything runs
    assert main(["oltp_point_select", f"--sqlite-db={tmp_path / 'x.db'}", "--workers=auto", "run"]) == 1
    assert "Invalid value for the 'workers' option: 'auto'" in capfd.readouterr().err


def test_script_options_reach_worker_processes(tmp_path, capfd):
    rc, out, err = _run(tmp_path, capfd, THREADS, "--events=4", "--threads=2", "--workers=2", "--my-opt=3")
    assert rc == 0, out + [err]
    assert sorted(_mine(out)) == ["init number 4 3", "thread 0 number 4 3", "thread 1 number 4 3"]
