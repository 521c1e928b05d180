"""Bad input never crashes: property-based tests over the command line, config
files and result files.  Every input ends in success or in a clear error line
with a non-zero exit code -- never a traceback or an unexpected exception.

The command-line property runs the real CLI in-process on a throw-away SQLite
database, with limits appended so that any valid combination finishes quickly.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shutil
import string
import subprocess

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pysysbench.cli.main import main
from pysysbench.command.cmdline import base_registry, parse
from pysysbench.core.errors import PySysbenchError
from pysysbench.core.options import read_config_file
from pysysbench.stats import results
from pysysbench.workloads import REGISTRY

# everything except the network drivers' options (the property must not touch shared servers)
GENERAL_NAMES = sorted(
    o.name
    for o in base_registry()
    if not o.name.startswith(("mysql", "pgsql", "db-driver", "config-file", "result-file", "sqlite-db"))
)
WORKLOAD_NAMES = [
    "tables",
    "table_size",
    "range_size",
    "point_selects",
    "skip_trx",
    "auto_inc",
    "create_secondary",
    "secondary",
    "delete_inserts",
    "random_points",
    "number_of_ranges",
]
WORDS = sorted(REGISTRY) + [
    "prepare",
    "run",
    "cleanup",
    "help",
    "check",
    "prewarm",
    "bogus",
    "-",
    "x.py",
    "oltp_common",
    "/usr/share/sysbench/oltp_read_only.lua",
]
SAFE_LIMITS = [
    "--threads=1",
    "--workers=1",
    "--time=1",
    "--events=3",
    "--table-size=5",
    "--tables=1",
    "--rate=0",
    "--report-interval=0",
    "--warmup-time=0",
    "--thread-init-timeout=5",
    "--histogram=off",
    "--report-checkpoints=",
    "--forced-shutdown=off",
]

values = st.one_of(
    st.none(),
    st.text(string.printable, max_size=12),
    st.sampled_from(
        [
            "on",
            "off",
            "0",
            "1",
            "-1",
            "1e3",
            "abc",
            "",
            "10G",
            "special",
            "zipfian",
            "99999999999999999999",
            "1.5",
            "auto",
            "disable",
        ]
    ),
)
option = st.builds(
    lambda n, v: f"--{n}" if v is None else f"--{n}={v}",
    st.sampled_from(GENERAL_NAMES + WORKLOAD_NAMES + ["bogus-option"]),
    values,
)
argv = st.lists(st.one_of(option, st.sampled_from(WORDS), st.text(string.printable, max_size=8)), max_size=6)


def run_main(args: list[str]) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(args)
    return code, out.getvalue() + err.getvalue()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(args=argv)
def test_command_line_never_crashes(args, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, output = run_main([*args, f"--sqlite-db={tmp_path / 'fuzz.db'}", *SAFE_LIMITS])
    assert isinstance(code, int)
    debug = any(
        a.split("=", 1)[0] == "--debug" and a.split("=", 1)[-1].lower() not in ("off", "0", "false") for a in args
    )
    if not debug:  # --debug deliberately adds a traceback to an error line
        assert "Traceback" not in output
    assert "internal error" not in output, output
    if code != 0:
        errors = [
            line
            for line in output.splitlines()
            if line.startswith("FATAL:")
            or line.lower().startswith(("invalid", "unknown", "unrecognized", "cannot", "usage"))
        ]
        assert errors or "Usage:" in output, output


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(content=st.text(max_size=300))
def test_config_file_never_crashes(content, tmp_path):
    path = tmp_path / "fuzz.conf"
    path.write_text(content, encoding="utf-8")
    try:
        parse([f"--config-file={path}", "oltp_read_write", "help"])
    except PySysbenchError as exc:
        assert str(exc) and "\n" not in str(exc)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    content=st.one_of(
        st.binary(max_size=200),
        st.text(max_size=200).map(str.encode),
        st.recursive(
            st.none() | st.booleans() | st.integers() | st.text(max_size=5),
            lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=5), c, max_size=3),
            max_leaves=8,
        ).map(lambda o: json.dumps(o).encode()),
    )
)
def test_result_file_loader_rejects_foreign_files_clearly(content, tmp_path):
    path = tmp_path / "r.json"
    path.write_bytes(content)
    with pytest.raises(PySysbenchError) as info:
        results.load(str(path))
    assert str(info.value) and "Traceback" not in str(info.value)


def test_truncated_result_file_is_rejected(tmp_path):
    doc = {"format": results.FORMAT, "format_version": results.FORMAT_VERSION, "summary": {}}
    path = tmp_path / "r.json"
    path.write_text(json.dumps(doc)[:-7])
    with pytest.raises(PySysbenchError, match="not a pysysbench result file"):
        results.load(str(path))


def test_newer_result_format_is_rejected_with_upgrade_hint(tmp_path):
    path = tmp_path / "r.json"
    path.write_text(json.dumps({"format": results.FORMAT, "format_version": results.FORMAT_VERSION + 1}))
    with pytest.raises(PySysbenchError, match="upgrade pysysbench"):
        results.load(str(path))


def test_config_reader_handles_unreadable_file(tmp_path):
    with pytest.raises(PySysbenchError, match="cannot read config file"):
        read_config_file(str(tmp_path / "missing.conf"))
    if os.geteuid() != 0:  # root reads anything
        p = tmp_path / "locked.conf"
        p.write_text("threads=2\n")
        p.chmod(0)
        with pytest.raises(PySysbenchError):
            read_config_file(str(p))


# --- bounds (issue 16, point 9): one line saying what is wrong and what to do ----------------------

GOLDEN_RESULTS = os.path.join(os.path.dirname(__file__), "..", "golden", "data", "campaign-results")


def fatal_lines(output: str) -> list[str]:
    return [line for line in output.splitlines() if line.startswith("FATAL:")]


def checked(args: list[str]) -> None:
    """Parse and run the post-parse checks, as every command does before it starts."""
    from pysysbench.command.cmdline import validate

    validate(parse(args).values)


@pytest.mark.parametrize("command", ["run", "prepare"])
def test_zero_tables_is_refused(tmp_path, command):
    code, output = run_main(["oltp_read_only", f"--sqlite-db={tmp_path / 't.db'}", "--tables=0", "--time=1", command])
    assert code == 1 and "IndexError" not in output
    assert fatal_lines(output) == ["FATAL: Invalid value for --tables: 0 (must be between 1 and 2147483647)"]


@pytest.mark.parametrize(
    "args,message",
    [
        (
            ["--table-size=10000000000"],
            "Invalid value for --table_size: 10000000000 (must be between 0 and 2147483647, the range of the INTEGER id column)",
        ),
        (["--db-driver=mysql", "--mysql-port=-1"], "Invalid value for --mysql-port: -1 (must be between 1 and 65535)"),
        (
            ["--db-driver=mysql", "--mysql-port=99999"],
            "Invalid value for --mysql-port: 99999 (must be between 1 and 65535)",
        ),
        (
            ["--db-driver=mysql", "--mysql-port=3306,0"],
            "Invalid value for --mysql-port: 0 (must be between 1 and 65535)",
        ),
        (
            ["--db-driver=pgsql", "--pgsql-port=99999"],
            "Invalid value for --pgsql-port: 99999 (must be between 1 and 65535)",
        ),
        (
            ["--db-driver=pgsql", "--pgsql-port=x"],
            "Invalid value for --pgsql-port: 'x' (must be an integer between 1 and 65535)",
        ),
        (["--threads=100000000"], "Invalid value for --threads: 100000000 (must be between 1 and 1000000)"),
        (["--num-threads=2000000"], "Invalid value for --threads: 2000000 (must be between 1 and 1000000)"),
        (["--rand-spec-iter=0"], "Invalid value for --rand-spec-iter: 0 (must be >= 1)"),
        (["--rand-spec-pct=200"], "Invalid value for --rand-spec-pct: 200 (must be between 0 and 100)"),
        (
            ["--rand-pareto-h=1"],
            "Invalid value for --rand-pareto-h: 1 (must be >= 1e-15 and < 1, below that 1 - h rounds to 1)",
        ),
        (["--rand-zipfian-exp=-1"], "Invalid value for --rand-zipfian-exp: -1 (must be >= 0)"),
        (["--verbosity=9"], "Invalid value for --verbosity: 9 (must be between 0 and 5)"),
        (
            ["--point-selects=100000000000"],
            "Invalid value for --point_selects: 100000000000 (must be between 0 and 2147483647)",
        ),
    ],
)
def test_numbers_outside_their_bounds_are_refused(args, message):
    with pytest.raises(PySysbenchError) as info:
        checked(["oltp_read_write", *args, "run"])
    assert str(info.value) == message


@pytest.mark.parametrize(
    "test,arg,message",
    [
        ("select_random_points", "--random_points=70000", "(must be between 1 and 65535, a prepared statement takes"),
        ("select_random_ranges", "--number_of_ranges=0", "(must be between 1 and 32767"),
        ("tests/db/oltp.lua", "--oltp-tables-count=0", "Invalid value for --oltp-tables-count: 0"),
        # the 0.4 name is applied as --rand-spec-iter (with a NOTE line), whose bounds then apply
        ("tests/db/oltp.lua", "--oltp-dist-iter=0", "Invalid value for --rand-spec-iter: 0 (must be >= 1)"),
        (
            "tests/db/oltp.lua",
            "--oltp-point-selects=-1",
            "Invalid value for --oltp-point-selects: -1 (must be between 0",
        ),
    ],
)
def test_workload_options_declare_bounds_too(test, arg, message):
    with pytest.raises(PySysbenchError, match=re_escape(message)):
        checked([test, arg, "run"])


def re_escape(text: str) -> str:
    return re.escape(text)


def test_every_declared_bound_rejects_just_outside_and_accepts_the_edge():
    """All options of every workload: a value one step outside a bound is refused
    with the option's name, the bound itself (when inclusive) is accepted."""
    from pysysbench.core.options import OptType

    for cls in sorted(REGISTRY.values(), key=lambda c: c.name):
        for opt in [*base_registry(), *cls.options]:
            b = opt.bounds
            if b is None or opt.alias_for:
                continue
            step = 1 if opt.type in (OptType.INT, OptType.LIST) else 0.5
            for edge, outside, is_open in (
                (b.min, (b.min or 0) - step, b.open_min),
                (b.max, (b.max or 0) + step, b.open_max),
            ):
                if edge is None:
                    continue
                with pytest.raises(PySysbenchError, match=f"^Invalid value for --{opt.name}: "):
                    checked([cls.name, f"--{opt.name}={outside}", "run"])
                if not is_open:
                    checked([cls.name, f"--{opt.name}={edge}", "run"])


def test_data_size_beyond_the_id_range_is_refused(tmp_path):
    code, output = run_main(["oltp_read_only", f"--sqlite-db={tmp_path / 't.db'}", "--data-size=1T", "--time=1", "run"])
    assert code == 1
    assert fatal_lines(output) == [
        "FATAL: --data-size asks for 5066873860 rows per table, more than --table_size "
        "allows (between 0 and 2147483647, the range of the INTEGER id column): use more "
        "--tables or a smaller --data-size"
    ]


def test_long_lists_in_messages_are_capped(tmp_path):
    db = f"--sqlite-db={tmp_path / 't.db'}"
    assert run_main(["oltp_read_only", db, "--tables=2", "--table-size=10", "prepare"])[0] == 0
    code, output = run_main(["oltp_read_only", db, "--tables=3000", "--table-size=10", "check"])
    assert code == 1
    assert fatal_lines(output) == [
        "FATAL: data check failed for sbtest3, sbtest4, sbtest5, sbtest6, sbtest7, sbtest8, "
        "sbtest9, sbtest10, sbtest11, sbtest12 (and 2988 more)"
    ]


def test_listing_helper():
    from pysysbench.core.errors import listing

    assert listing([]) == "" and listing(["a", "b"]) == "a, b"
    assert listing(range(100_000), 3) == "0, 1, 2 (and 99997 more)"


@pytest.mark.parametrize(
    "body,message",
    [
        ("threads = [0, -1, 1e8]", "'threads' element 1 is 0: a thread count is an integer between 1 and 1000000"),
        ("threads = [1, -1]", "'threads' element 2 is -1: a thread count is an integer between 1 and 1000000"),
        (
            "threads = [1, 1e8]",
            "'threads' element 2 is 100000000.0: a thread count is an integer between 1 and 1000000",
        ),
        (
            "threads = [1, 100000000]",
            "'threads' element 2 is 100000000: a thread count is an integer between 1 and 1000000",
        ),
        ("threads = [1]\nrepeats = 1000000000", "'repeats' must be <= 1000, got 1000000000"),
        ("threads = 'auto'\nauto = { max = 100000000 }", "'max' must be <= 1000000, got 100000000"),
    ],
)
def test_campaign_counts_have_bounds_and_name_the_element(tmp_path, body, message):
    from pysysbench.campaign import spec

    path = tmp_path / "c.toml"
    path.write_text(f"[[workload]]\ntest = 'oltp_read_only'\n{body}\n")
    with pytest.raises(PySysbenchError) as info:
        spec.load(str(path))
    assert str(info.value) == f"campaign file '{path}': [[workload]] #1 (oltp_read_only): {message}" or str(
        info.value
    ).endswith(message), str(info.value)
    assert "\n" not in str(info.value)


def damaged_copy(tmp_path, change) -> str:
    src = os.path.join(GOLDEN_RESULTS, "a", "rw-t0001-r1.json")
    with open(src) as fh:
        doc = json.load(fh)
    change(doc)
    path = tmp_path / "damaged.json"
    path.write_text(json.dumps(doc))
    return str(path)


@pytest.mark.parametrize(
    "change,field",
    [
        (lambda d: d["summary"].update(tps="fast"), 'summary.tps should be a number, not "fast"'),
        (lambda d: d["summary"].update(threads="four"), 'summary.threads should be an integer, not "four"'),
        (lambda d: d["summary"]["histogram"].update(x=3), 'summary.histogram has the key "x", not a bucket number'),
        (lambda d: d["summary"]["histogram"].update({"5000": 3}), 'summary.histogram has the key "5000"'),
        (lambda d: d["campaign"].update(repeat="1"), 'campaign.repeat should be an integer, not "1"'),
        (lambda d: d["summary"]["latency_ms"].update(p95=[1]), 'summary.latency_ms["p95"] should be a number'),
        (lambda d: d["intervals"][0].update(tps={}), "intervals[0].tps should be a number, not {}"),
        (lambda d: d.update(labels={"x": [1]}), 'labels["x"] should be a value, not [1]'),
    ],
)
@pytest.mark.parametrize("command", ["report", "compare"])
def test_damaged_result_file_names_file_and_field(tmp_path, change, field, command):
    path = damaged_copy(tmp_path, change)
    args = (
        [command, path, f"--output={tmp_path / 'out'}"]
        if command == "report"
        else [command, path, os.path.join(GOLDEN_RESULTS, "b")]
    )
    code, output = run_main(args)
    assert code == 1 and "internal error" not in output and "Traceback" not in output, output
    lines = [line for line in output.splitlines() if "damaged" in line]
    assert len(lines) == 1 and lines[0].startswith(f"'{path}' is a damaged pysysbench result file: {field}"), output


def test_damaged_result_file_in_a_directory_is_not_skipped(tmp_path):
    damaged_copy(tmp_path, lambda d: d["summary"].update(tps="fast"))
    code, output = run_main(["report", str(tmp_path), f"--output={tmp_path / 'out'}"])
    assert code == 1 and "damaged.json' is a damaged pysysbench result file: summary.tps" in output


def test_labels_are_escaped_in_report_md(tmp_path):
    results_dir = tmp_path / "results"
    results_dir.mkdir()
    for name in ("rw-t0001-r1.json", "rw-t0001-r2.json"):
        with open(os.path.join(GOLDEN_RESULTS, "a", name)) as fh:
            doc = json.load(fh)
        doc["labels"] = {"template": "<script>alert(1)</script> *bold* a|b [x](y) _em_ snake_case"}
        (results_dir / name).write_text(json.dumps(doc))
    code, output = run_main(["report", str(results_dir), f"--output={tmp_path / 'out'}", "--no-charts"])
    assert code == 0, output
    md = (tmp_path / "out" / "report.md").read_text()
    assert "<script>" not in md and "*bold*" not in md
    assert r"&lt;script&gt;alert(1)&lt;/script&gt; \*bold\* a\|b \[x\](y) \_em\_ snake_case" in md


USER_WORKLOAD = '''
from pysysbench.workloads.base import Workload


class Mine(Workload):
    """A user's workload with a bug."""
    name = "mine"
    commands = ("prepare", "run", "help")

    async def prepare(self, env):
        return {}["no_such_key"]

    async def thread_init(self, ctx):
        self.settings = {}
        ctx.state["x"] = self.settings["missing_setting"]

    async def event(self, ctx):
        return None
'''


@pytest.mark.parametrize("command,line,function", [("run", 15, "thread_init"), ("prepare", 11, "prepare")])
def test_a_user_workload_raising_is_not_an_internal_error(tmp_path, command, line, function):
    path = tmp_path / "mine.py"
    path.write_text(USER_WORKLOAD)
    code, output = run_main([str(path), "--time=1", f"--sqlite-db={tmp_path / 't.db'}", command])
    key = "missing_setting" if command == "run" else "no_such_key"
    assert code == 1 and "internal error" not in output and "please report" not in output, output
    assert fatal_lines(output) == [
        f"FATAL: workload file '{path}' raised KeyError: '{key}' in {function} (line {line}): "
        "fix the workload (rerun with --debug for the traceback)"
    ]


def test_labels_are_shown_as_written_in_terminal_comparisons(tmp_path):
    for group in ("a", "b"):
        (tmp_path / group).mkdir()
        for name in ("rw-t0001-r1.json", "rw-t0002-r1.json"):
            with open(os.path.join(GOLDEN_RESULTS, group, name)) as fh:
                doc = json.load(fh)
            doc["labels"] = {"[red]k": f"[bold]{group}"}
            (tmp_path / group / name).write_text(json.dumps(doc))
    code, output = run_main(["compare", str(tmp_path / "a"), str(tmp_path / "b")])
    assert code == 0, output
    headers = [line for line in output.splitlines() if line.startswith("┃")]
    assert any("[red]k=[bold]a" in line for line in headers), output  # not taken for rich markup


# --- issue 40: the command line's reliability ------------------------------------------------------


def run_split(args: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(args)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def small_db(tmp_path):
    db = f"--sqlite-db={tmp_path / 's.db'}"
    assert run_main(["oltp_read_only", db, "--table-size=10", "prepare"])[0] == 0
    return db


@pytest.mark.parametrize("face_name", ["pysysbench", "sysbench"])
def test_json_output_puts_only_json_on_stdout(small_db, monkeypatch, face_name):
    """--output-format=json: every stdout line is a JSON document (issue 40 a); the first line,
    'Initializing worker threads...', 'Threads started!' and the blanks go to stderr."""
    monkeypatch.setenv("PYSYSBENCH_FACE", face_name)
    code, out, err = run_split(
        [
            "oltp_read_only",
            "--db-driver=sqlite",
            small_db,
            "--table-size=10",
            "--time=0",
            "--events=200",
            "--report-checkpoints=100",
            "--histogram",
            "--output-format=json",
            "run",
        ]
    )
    assert code == 0, err
    lines = out.splitlines()
    assert lines and all(json.loads(line) for line in lines), out
    assert "summary" in json.loads(lines[-1])
    assert "Threads started!" in err and "Initializing worker threads..." in err


def test_json_output_errors_go_to_stderr(tmp_path):
    code, out, err = run_split(
        ["oltp_read_only", f"--sqlite-db={tmp_path / 'none.db'}", "--time=1", "--output-format=json", "run"]
    )
    assert code == 1 and out == "" and "FATAL: table 'sbtest1' does not exist" in err


INT_RANGE = "(expected an integer between -2147483648 and 2147483647)"


@pytest.mark.parametrize(
    "arg",
    [
        "--time=10000000000",
        "--warmup-time=99999999999999",
        "--events=10000000000",
        "--report-interval=99999999999",
        "--rand-seed=10000000000",
        "--rate=2147483648",
        "--threads=99999999999",
        "--thread-init-timeout=2147483648",
        "--max-time=10000000000",
        "--verbosity=-2147483649",
        "--events=1e10",
    ],
)
def test_general_integers_are_c_ints_as_in_sysbench(arg):
    """sysbench reads its general integer options as C ints (sb_get_value_int: strtol, then
    'Invalid value for the 'X' option: 'V'' on stderr, exit 1); --time=10000000000 and
    --warmup-time=99999999999999 ended in 'internal error: OverflowError' (issue 40 b)."""
    name, _, value = arg[2:].partition("=")
    code, out, err = run_split(["oltp_read_only", "--sqlite-db=/nonexistent/x.db", arg, "run"])
    assert code == 1 and out == ""
    assert err == f"Invalid value for the '{name}' option: '{value}' {INT_RANGE}\n"


@pytest.mark.parametrize(
    "arg",
    [
        "--time=10000000000",
        "--report-interval=99999999999",
        "--rand-seed=1e20",
        "--threads=abc",
        "--events=-1x",
        "--percentile=abc",
    ],
)
def test_a_general_options_bad_value_in_the_sysbench_face_is_sysbenchs_line(arg, monkeypatch):
    """The sysbench face: sysbench 1.0.20 checks its general options before its first line and
    names the option by its key (report_interval), with nothing after the value."""
    monkeypatch.setenv("PYSYSBENCH_FACE", "sysbench")
    name, _, value = arg[2:].partition("=")
    code, out, err = run_split(["oltp_read_only", "--sqlite-db=/nonexistent/x.db", arg, "run"])
    assert (code, out, err) == (1, "", f"Invalid value for the '{name.replace('-', '_')}' option: '{value}'\n")
    real = shutil.which("sysbench")
    if real and os.path.realpath(real).endswith("/usr/bin/sysbench"):  # Debian's sysbench 1.0.20
        ref = subprocess.run([real, arg, "cpu", "run"], capture_output=True, text=True, timeout=30)
        assert (ref.returncode, ref.stdout, ref.stderr) == (code, out, err)


def test_the_largest_c_int_time_does_not_overflow(small_db):
    code, output = run_main(
        [
            "oltp_read_only",
            small_db,
            "--table-size=10",
            "--time=2147483647",
            "--events=20",
            "--report-interval=2147483647",
            "--rand-seed=2147483647",
            "--thread-init-timeout=2147483647",
            "run",
        ]
    )
    assert code == 0 and "internal error" not in output and "Traceback" not in output, output


@pytest.mark.parametrize(
    "args,message",
    [
        (["--foo=bar"], "invalid option: --foo=bar"),
        (["--foo"], "invalid option: --foo"),
        (["--foo="], "invalid option: --foo="),
        (["--foo=a\nb\x1b[2J"], "invalid option: --foo=a\\nb\\x1b[2J"),
    ],
)
@pytest.mark.parametrize("face_name", ["pysysbench", "sysbench"])
def test_invalid_option_echoes_the_option_with_its_value(monkeypatch, args, message, face_name):
    """sysbench prints the argument it refuses as given: 'invalid option: --foo=bar' (issue 40 e);
    control characters escaped, so the line stays one line."""
    monkeypatch.setenv("PYSYSBENCH_FACE", face_name)
    for test in ("oltp_read_only", None):
        code, out, err = run_split([*args, *([test, "run"] if test else [])])
        assert code == 1 and "Traceback" not in out + err
        line = err.splitlines()[-1]
        assert line == message if face_name == "sysbench" else line.startswith(message + " (see "), err


@pytest.mark.parametrize("mode", ["REQUIRED", "VERIFY_CA", "Verify_Identity", "DISABLED", "PREFERRED", "ON"])
def test_mysql_ssl_takes_the_mysql_clients_upper_case_spellings(mode):
    """--mysql-ssl=REQUIRED as the mysql client spells --ssl-mode (issue 40 c)."""
    assert parse(["--db-driver=mysql", f"--mysql-ssl={mode}", "oltp_read_only", "run"]).values.mysql_ssl == mode.lower()


def test_mysql_ssl_garbage_is_still_refused():
    # sysbench 1.0.20's flag: its words ('invalid option', as /usr/bin/sysbench prints)
    with pytest.raises(PySysbenchError, match="^invalid option: --mysql-ssl=REQUIRE$"):
        parse(["--db-driver=mysql", "--mysql-ssl=REQUIRE", "oltp_read_only", "run"])


@pytest.mark.parametrize(
    "content,shown",
    [
        (b"\x1b[31mred=\x01x\n", "invalid option: --\\x1b[31mred=\\x01x (in bin.conf line 1)"),
        (
            b"threads=\x01\x1b[2J\n",
            "Invalid value for the 'threads' option: '\\x01\\x1b[2J' (expected an integer) (in bin.conf line 1)",
        ),
        (
            b"threads=1\x00\n",
            "Invalid value for the 'threads' option: '1\\x00' (expected an integer) (in bin.conf line 1)",
        ),
    ],
)
def test_config_file_control_bytes_are_escaped(tmp_path, content, shown):
    """A garbage config file's control bytes are escaped in the error line (issue 40 c)."""
    path = tmp_path / "bin.conf"
    path.write_bytes(content)
    code, out, err = run_split([f"--config-file={path}", "oltp_read_only", "run"])
    assert code == 1 and err.splitlines()[-1].startswith(shown), err
    assert all(ch.isprintable() for ch in err.replace("\n", ""))
