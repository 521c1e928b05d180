"""The sysbench 1.1 face (issue 41, first slice): ``--sysbench-compat=1.1`` or
``PYSYSBENCH_COMPAT=1.1`` gives 1.1.0's ``--version``, first line, ``--help``, general
option defaults and report layout; 1.0.20 stays the default.  The expected texts were
captured from the sysbench 1.1.0 binary (3ceba0b) and its own tests (tests/t/*.t); where
that binary is built (/root/.cache/sysbench-1.1.0) the help is compared with it too."""

from __future__ import annotations

import contextlib
import io
import json
import subprocess
from pathlib import Path

import pytest

from pysysbench.cli.main import main
from pysysbench.command.cmdline import parse, validate
from pysysbench.core.errors import ConfigError, InvalidOption, UsageError
from pysysbench.core.switches import COMPAT
from pysysbench.output import face, text
from pysysbench.output.registry import FORMATS
from pysysbench.output.sysbench_help import GENERAL_HELP, GENERAL_HELP_11
from pysysbench.stats.records import Summary

REF_11 = Path("/root/.cache/sysbench-1.1.0/bin/sysbench")
needs_ref = pytest.mark.skipif(not REF_11.exists(), reason="sysbench 1.1.0 is not built here: nothing to compare with")


@pytest.fixture(autouse=True)
def clean_face(monkeypatch):
    monkeypatch.delenv(COMPAT.name, raising=False)
    monkeypatch.delenv(face.ENV, raising=False)
    before = face.active()
    yield
    face.use(before)


def run_main(args: list[str], monkeypatch, strict: bool = True, compat: str | None = None) -> tuple[int, str, str]:
    monkeypatch.setenv(face.ENV, "sysbench" if strict else "pysysbench")
    if compat is None:
        monkeypatch.delenv(COMPAT.name, raising=False)
    else:
        monkeypatch.setenv(COMPAT.name, compat)
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(args)
    return code, out.getvalue(), err.getvalue()


# --- the switch ----------------------------------------------------------------------------


def test_the_environment_chooses_the_release_and_10_is_the_default():
    assert face.select("sysbench", {}).compat == "1.0"
    assert face.select("sysbench", {COMPAT.name: "1.1"}) == face.Face(strict=True, compat="1.1")
    assert face.select("pysysbench", {COMPAT.name: " 1.1 "}).compat == "1.1"
    with pytest.raises(UsageError, match=r"^invalid value for PYSYSBENCH_COMPAT: '2' \(choose 1.0 or 1.1\)$"):
        face.select("sysbench", {COMPAT.name: "2"})


@pytest.mark.parametrize("how", ["command line", "config file", "environment"])
def test_every_way_of_asking_for_11_gives_sysbench_110(how, monkeypatch, tmp_path):
    args = ["--version"]
    if how == "command line":
        args.insert(0, "--sysbench-compat=1.1")
    elif how == "config file":
        (tmp_path / "c.conf").write_text("sysbench-compat=1.1\n")
        args.insert(0, f"--config-file={tmp_path / 'c.conf'}")
    code, out, _ = run_main(args, monkeypatch, compat="1.1" if how == "environment" else None)
    assert (code, out) == (0, "sysbench 1.1.0\n")


def test_the_command_line_overrides_the_environment(monkeypatch):
    assert run_main(["--sysbench-compat=1.0", "--version"], monkeypatch, compat="1.1")[1] == "sysbench 1.0.20\n"
    assert run_main(["--version"], monkeypatch)[1] == "sysbench 1.0.20\n"


@pytest.mark.parametrize(
    "args, env, line",
    [
        (
            ["--sysbench-compat=1.2", "--version"],
            None,
            "invalid value for --sysbench-compat: '1.2' (choose 1.0 or 1.1)",
        ),
        (["--sysbench-compat", "--version"], None, "invalid value for --sysbench-compat: '' (choose 1.0 or 1.1)"),
        (["--version"], "11", "invalid value for PYSYSBENCH_COMPAT: '11' (choose 1.0 or 1.1)"),
    ],
)
@pytest.mark.parametrize("strict", [True, False])
def test_a_bad_value_is_one_line_and_exit_1(args, env, line, strict, monkeypatch):
    assert run_main(args, monkeypatch, strict=strict, compat=env) == (1, "", line + "\n")


# --- what a 1.1 user sees ------------------------------------------------------------------


def test_the_first_line_is_110s():
    # the 1.1.0 binary's line, whatever LuaJIT lupa embeds (test_face11_points.py compares it live)
    assert face.Face(strict=True, compat="1.1").header() == "sysbench 1.1.0 (using bundled LuaJIT 2.1.0-beta3)\n"
    first = face.Face(strict=True, compat="1.0").header().split("\n")[0]  # 1.0: the LuaJIT really embedded
    assert first.startswith("sysbench 1.0.20 (using bundled LuaJIT ") and len(first.split()) == 6


def test_help_is_110s_and_10_keeps_1020s(monkeypatch):
    assert run_main(["--help"], monkeypatch, compat="1.1") == (0, GENERAL_HELP_11, "")
    assert run_main(["--help"], monkeypatch) == (0, GENERAL_HELP, "")
    # tests/t/opt_help.t of sysbench 1.1.0
    for line in (
        "  --warmup-time=N                 execute events for this many seconds with statistics disabled "
        "before the actual benchmark run with statistics enabled [0]",
        "  --thread-init-timeout=N         wait time in seconds for worker threads to initialize [30]",
        "  --rand-type=STRING   random numbers distribution {uniform, gaussian, pareto, zipfian} to use by "
        "default [uniform]",
        "  --rand-zipfian-exp=N shape parameter (exponent, theta) for the Zipfian distribution [0.8]",
    ):
        assert line in GENERAL_HELP_11.splitlines()
    assert "--num-threads" not in GENERAL_HELP_11 and "--rand-spec" not in GENERAL_HELP_11


@needs_ref
def test_help_is_byte_identical_to_the_110_binary(monkeypatch):
    real = subprocess.run([str(REF_11), "--help"], capture_output=True, text=True, timeout=60)
    assert run_main(["--help"], monkeypatch, compat="1.1") == (real.returncode, real.stdout, real.stderr)


def test_11_defaults_and_the_gone_options(monkeypatch):
    face.use(face.Face(strict=True, compat="1.1"))
    v = parse(["cpu", "run"]).values
    assert (v.rand_type, v.output_format, v.sysbench_compat) == ("uniform", "1.1", "1.1")
    for gone in ("--num-threads=2", "--max-time=1", "--max-requests=1", "--tx-rate=1"):
        with pytest.raises(InvalidOption, match=f"^invalid option: {gone}$"):
            parse([gone, "cpu", "run"])
    with pytest.raises(ConfigError, match=r"^Invalid random numbers distribution: special\.$"):
        validate(parse(["--rand-type=special", "cpu", "run"]).values)
    validate(parse(["--rand-type=zipfian", "cpu", "run"]).values)


def test_10_defaults_are_unchanged(monkeypatch):
    face.use(face.Face(strict=True))
    inv = parse(["--num-threads=2", "cpu", "run"])
    v = inv.values
    assert (v.rand_type, v.output_format, v.sysbench_compat, v.threads) == ("special", "1.0", "1.0", 2)
    assert inv.warnings == ["WARNING: --num-threads is deprecated, use --threads instead"]


# --- the report ----------------------------------------------------------------------------


def summary(**kw) -> Summary:
    base = dict(
        total_time_s=1.0064,
        elapsed_s=663 / 658.7773,
        threads=1,
        events=663,
        reads=0,
        writes=0,
        others=0,
        errors=0,
        reconnects=0,
        lat_min_ns=420_000,
        lat_max_ns=18_840_000,
        lat_sum_ns=997_660_000,
        percentile=95,
        latency_pct_ms=8.43,
        hist=(0,) * 1024,
        thread_events=(663,),
        thread_lat_ns=(997_660_000,),
    )
    return Summary(**{**base, **kw})


# sysbench 1.1.0 cpu --time=1 run, from its blank line before "Throughput:"
CPU_REPORT_11 = """
Throughput:
    events/s (eps):                      658.7773
    time elapsed:                        1.0064s
    total number of events:              663

Latency (ms):
         min:                                    0.42
         avg:                                    1.50
         max:                                   18.84
         95th percentile:                        8.43
         sum:                                  997.66

Threads fairness:
    events (avg/stddev):           663.0000/0.00
    execution time (avg/stddev):   0.9977/0.00

"""

# sysbench 1.1.0 oltp_point_select --time=1 run against MariaDB, from "SQL statistics:"
OLTP_REPORT_11 = """\
SQL statistics:
    queries performed:
        read:                            35556
        write:                           0
        other:                           0
        total:                           35556
    transactions:                        35556  (35457.65 per sec.)
    queries:                             35556  (35457.65 per sec.)
    ignored errors:                      0      (0.00 per sec.)
    reconnects:                          0      (0.00 per sec.)

Throughput:
    events/s (eps):                      35457.6494
    time elapsed:                        1.0028s
    total number of events:              35556

Latency (ms):
         min:                                    0.02
         avg:                                    0.03
         max:                                    8.20
         95th percentile:                        0.04
         sum:                                  992.40

Threads fairness:
    events (avg/stddev):           35556.0000/0.00
    execution time (avg/stddev):   0.9924/0.00

"""


def test_the_report_is_110s():
    assert text.summary_block(summary(), sql=False, release="1.1") == CPU_REPORT_11
    oltp = summary(
        total_time_s=1.0028,
        elapsed_s=35556 / 35457.6494,
        events=35556,
        reads=35556,
        lat_min_ns=20_000,
        lat_max_ns=8_200_000,
        lat_sum_ns=992_400_000,
        latency_pct_ms=0.04,
        thread_events=(35556,),
        thread_lat_ns=(992_400_000,),
    )
    assert FORMATS["1.1"](_values(), None).summary(oltp) == OLTP_REPORT_11


def test_the_10_report_keeps_general_statistics():
    block = text.summary_block(summary(), sql=False)
    assert "General statistics:\n    total time:                          1.0064s\n" in block
    assert "Throughput:" not in block


class _Values(dict):
    def __getattr__(self, name):
        return self[name]


def _values(**kw) -> _Values:
    return _Values(
        dict(
            threads=2,
            rate=0,
            report_interval=0,
            report_checkpoints=[],
            debug=False,
            validate=False,
            rand_seed=0,
            warmup_time=0,
            time=1,
            events=0,
            db_debug=False,
            verbosity=3,
        ),
        **kw,
    )


def test_the_banner_puts_the_warmup_second():
    # tests/t/opt_warmup_time.t of sysbench 1.1.0
    assert FORMATS["1.1"](_values(warmup_time=1), None).banner(None) == [
        "Running the test with following options:",
        "Number of threads: 2",
        "Warmup time: 1s",
        "Initializing random number generator from current time\n",
        "",
    ]


def test_a_cpu_run_under_11_prints_throughput_and_records_the_release(monkeypatch, tmp_path):
    result = tmp_path / "r.json"
    code, out, _ = run_main(["cpu", "--events=20", f"--result-file={result}", "run"], monkeypatch, compat="1.1")
    assert code == 0 and out.startswith("sysbench 1.1.0 (using ")
    assert "\nThroughput:\n    events/s (eps):   " in out and "General statistics" not in out
    assert json.loads(result.read_text())["implementation"]["sysbench_compat"] == "1.1.0"
    code, out, _ = run_main(["cpu", "--events=20", f"--result-file={result}", "run"], monkeypatch)
    assert "\nGeneral statistics:\n" in out
    assert json.loads(result.read_text())["implementation"]["sysbench_compat"] == "1.0.20"


@needs_ref
def test_the_cpu_report_lines_match_the_110_binary(monkeypatch):
    """Every line's shape (numbers masked) of a cpu run, against the binary."""
    import re

    real = subprocess.run([str(REF_11), "cpu", "--events=20", "run"], capture_output=True, text=True, timeout=60)
    ours = run_main(["cpu", "--events=20", "run"], monkeypatch, compat="1.1")[1]
    mask = re.compile(r" *\d+(\.\d+)?")
    shape = [mask.sub("N", line) for line in real.stdout.splitlines()[1:]]
    assert [mask.sub("N", line) for line in ours.splitlines()[1:]] == shape


# sysbench 1.1.0 fileio --file-num=4 --file-total-size=32M --file-test-mode=rndrw --events=150 run,
# from its blank line before "Throughput:" (the binary's own figures)
FILEIO_REPORT_11 = [
    "",
    "Throughput:",
    "         read:  IOPS=3995.66 62.43 MiB/s (65.46 MB/s)",
    "         write: IOPS=2633.51 41.15 MiB/s (43.15 MB/s)",
    "         fsync: IOPS=363.24",
    "",
    "Latency (ms):",
    "         min:                                  0.00",
    "         avg:                                  0.09",
    "         max:                                  3.98",
    "         95th percentile:                      0.01",
    "         sum:                                 14.13",
    "",
]


def test_the_fileio_report_is_110s():
    from pysysbench.workloads.fileio import MIB, report_11

    s = summary(
        events=150,
        lat_min_ns=1_000,
        lat_max_ns=3_980_000,
        lat_sum_ns=14_130_000,
        latency_pct_ms=0.01,
        thread_events=(150,),
        thread_lat_ns=(14_130_000,),
    )
    assert report_11(s, 1.0, 3995.66, 2633.51, 363.24, 62.43 * MIB, 41.15 * MIB) == FILEIO_REPORT_11


def test_lua_sees_the_release(monkeypatch, tmp_path, capfd):
    """tests/t/api_basic.t of 1.1.0: sysbench.version and sysbench.version_string."""
    script = tmp_path / "v.lua"
    script.write_text("print(sysbench.version .. '|' .. sysbench.version_string)\n")
    run_main([str(script)], monkeypatch, compat="1.1")
    assert capfd.readouterr().out == "1.1.0|sysbench 1.1.0\n"
    run_main([str(script)], monkeypatch)
    assert capfd.readouterr().out == "1.0.20|sysbench 1.0.20\n"


def test_the_warmup_line_has_11s_blank(monkeypatch):
    out = run_main(["cpu", "--time=1", "--warmup-time=1", "run"], monkeypatch, compat="1.1")[1]
    assert "\nWarming up for 1 seconds...\n\nCPU speed:\n" in out


def test_one_commands_choice_does_not_outlive_it():
    """A campaign parses many commands in one process: --sysbench-compat holds for its own."""
    face.use(face.Face(strict=True))
    assert parse(["--sysbench-compat=1.1", "cpu", "run"]).values.rand_type == "uniform"
    assert face.active().compat == "1.1"
    assert parse(["cpu", "run"]).values.rand_type == "special"
    assert face.active() == face.Face(strict=True)
