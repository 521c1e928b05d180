"""Issue 40 g: run as a new user would, with every kind of bad input -- malformed values,
unreachable hosts, unreadable files, scripts that raise in every callback, a full disk,
an unwritable latency log, a closed standard output, huge / negative / NaN numbers, an
unknown script, a folder as a script -- and count: each gives a clear error line and a
sysbench-like exit code; no Python traceback and no 'internal error' line in any of them.

Each case is a real ``python -m pysysbench`` process on a throw-away SQLite file (the
unreachable hosts are 127.0.0.1 on a closed port and a name under .invalid).
"""

from __future__ import annotations

import os
import socket
import stat
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
TIMEOUT_S = 60
ERROR_STARTS = (
    "FATAL:",
    "pysysbench campaign: ",
    "invalid option",
    "Invalid value",
    "Unknown command",
    "Unrecognized command",
    "cannot ",
    "Cannot ",
    "--",
    "'",
    "unable",
    "usage:",
    "Usage:",
    "error:",
    "config file",
    "campaign file",
    "No such",
)


def closed_port() -> int:
    """A port on 127.0.0.1 nothing listens on (bound, then closed)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


LUA_CALLBACKS = {
    "init": "function init() error('boom in init') end\nfunction event() end\n",
    "done": "function done() error('boom in done') end\nfunction event() end\n",
    "thread_init": "function thread_init() error('boom in thread_init') end\nfunction event() end\n",
    "thread_done": "function thread_done() error('boom in thread_done') end\nfunction event() end\n",
    "event": "function event() error('boom in event') end\n",
    "event_table": "function event() error({code = 1}) end\n",
    "prepare": "function prepare() error('boom in prepare') end\nfunction event() end\n",
    "cleanup": "function cleanup() error('boom in cleanup') end\nfunction event() end\n",
    "report_intermediate": "function event() end\n"
    "sysbench.hooks.report_intermediate = function(stat) error('boom in report') end\n",
    "report_cumulative": "function event() end\n"
    "sysbench.hooks.report_cumulative = function(stat) error('boom in report') end\n",
    "syntax": "function event( end\n",
    "command": "sysbench.cmdline.commands = { boom = {function() error('boom in command') end} }\n"
    "function event() end\n",
}
LUA_COMMAND = {"prepare": "prepare", "cleanup": "cleanup", "command": "boom"}
# sysbench ignores what these return: a FATAL line, and the run goes on to its report (exit 0)
LUA_IGNORED = {"done", "thread_done", "report_intermediate", "report_cumulative"}

PY_CALLBACKS = {
    "event": "    async def event(self, ctx):\n        raise ValueError('boom in event')\n",
    "thread_done": "    async def event(self, ctx):\n        return None\n\n"
    "    async def thread_done(self, ctx):\n        raise ValueError('boom in thread_done')\n",
    "cleanup": "    async def event(self, ctx):\n        return None\n\n"
    "    async def cleanup(self, env):\n        raise ValueError('boom in cleanup')\n",
}
PY_WORKLOAD = '''from pysysbench.workloads.base import Workload


class Raising(Workload):
    """A user's workload with a bug."""
    name = "raising"
    commands = ("prepare", "run", "cleanup", "help")

{body}'''


def full_device(tmp: Path) -> str:
    """A device every write to fails with 'no space left' (/dev/full's): our own node when we may
    make one, so a regression that renames a file over it cannot replace the machine's /dev/full."""
    node = tmp / "full"
    if not node.exists():
        try:
            os.mknod(node, 0o666 | stat.S_IFCHR, os.makedev(1, 7))
        except OSError:
            return "/dev/full"
    return str(node)


def cases(tmp: Path) -> list[tuple[str, list[str], set[int], dict]]:
    """(name, arguments, accepted exit codes, extra: stdout='closed'|path, fatal: a FATAL line is due)."""
    db = f"--sqlite-db={tmp / 'p.db'}"
    full = full_device(tmp)
    run = ["oltp_read_only", db, "--table-size=20", "--time=1"]
    port = closed_port()
    out = []

    def add(name, args, codes=frozenset({1}), **extra):
        out.append((name, list(args), set(codes), extra))

    # malformed and absurd numbers
    for arg in [
        "--threads=abc",
        "--threads=0",
        "--threads=-5",
        "--threads=1e100",
        "--time=nan",
        "--time=inf",
        "--time=-1",
        "--time=10000000000",
        "--events=1e20",
        "--events=-1",
        "--events=99999999999",
        "--rate=1e999",
        "--rate=-3",
        "--report-interval=99999999999",
        "--report-interval=-1",
        "--warmup-time=99999999999999",
        "--warmup-time=-1",
        "--rand-seed=1e20",
        "--rand-seed=nan",
        "--rand-type=bogus",
        "--rand-pareto-h=nan",
        "--rand-zipfian-exp=inf",
        "--rand-spec-pct=-1",
        "--percentile=101",
        "--verbosity=-1",
        "--table-size=-1",
        "--table-size=1e300",
        "--tables=0",
        "--range-size=abc",
        "--data-size=garbage",
        "--data-size=10X",
        "--report-checkpoints=a,b",
        "--report-checkpoints=-5",
        "--forced-shutdown=xyz",
        "--histogram=maybe",
        "--latency-log-rate=0",
        "--latency-log-rate=nan",
        "--thread-stack-size=zz",
        "--output-format=xml",
        "--db-driver=oracle",
        "--workers=-1",
        "--point-selects=-1",
        "--point-selects=1e15",
        "--thread-init-timeout=-1",
        "--reconnect-timeout=nan",
        "--num-threads=abc",
        "--max-time=1e12",
        "--metrics-addr=nowhere",
        "--forced-shutdown=1e400",
        "--forced-shutdown=nan",
        "--forced-shutdown=inf",
        "--forced-shutdown=-5",
        "--rand-pareto-h=1e-300",
        "--report-checkpoints=nan",
        "--report-checkpoints=1e20",
    ]:
        add(arg, [*run, arg, "run"])
    # two billion tables: the pre-flight named them all in a list (memory capped: a regression fails)
    add("--tables=2147483647", [*run, "--tables=2147483647", "run"], memory=True)
    add(
        "--oltp-tables-count=2147483647",
        ["tests/db/oltp.lua", db, "--oltp-table-size=20", "--time=1", "--oltp-tables-count=2147483647", "run"],
        memory=True,
    )
    add("--mysql-port=99999", ["oltp_read_only", "--db-driver=mysql", "--mysql-port=99999", "run"])
    add("--mysql-ssl=garbage", ["oltp_read_only", "--db-driver=mysql", "--mysql-ssl=garbage", "run"])
    add("--pgsql-port=abc", ["oltp_read_only", "--db-driver=pgsql", "--pgsql-port=abc", "run"])
    add("--pgsql-sslmode=x", ["oltp_read_only", "--db-driver=pgsql", "--pgsql-sslmode=x", "run"])
    # the command line itself
    add("unknown option", [*run, "--foo=bar", "run"])
    add("single dash", [*run, "-x", "run"])
    add("unknown test", ["no_such_test", "run"])
    add("deprecated --test unknown", ["--test=no_such_test", "run"])
    add("unknown command", [*run, "frobnicate"])
    add("extra argument", [*run, "run", "extra"])
    add("folder as script", [str(tmp), "run"])
    add("missing script file", [str(tmp / "missing.lua"), "run"])
    add("empty file name", ["", "run"])
    add("cpu bad prime", ["cpu", "--cpu-max-prime=-1", "--time=1", "run"])
    add("memory block 0", ["memory", "--memory-block-size=0", "--time=1", "run"])
    add("fileio no mode", ["fileio", "--time=1", "run"])
    add("legacy bad size", ["tests/db/oltp.lua", db, "--oltp-table-size=abc", "run"])
    # files
    add("config file missing", [f"--config-file={tmp / 'missing.conf'}", *run, "run"])
    add("config file a folder", [f"--config-file={tmp}", *run, "run"])
    add("config file binary", [f"--config-file={tmp / 'binary.conf'}", *run, "run"])
    add("config file random", [f"--config-file={tmp / 'random.conf'}", *run, "run"])
    add("result file on a full disk", [*run, f"--result-file={full}", "run"])
    add("result file a folder", [*run, f"--result-file={tmp}", "run"])
    add("result file under a file", [*run, f"--result-file={tmp / 'binary.conf' / 'r.json'}", "run"])
    add("result file in /proc", [*run, "--result-file=/proc/r.json", "run"])
    add("latency log on a full disk", [*run, f"--latency-log={full}", "run"])
    add("latency log in /proc", [*run, "--latency-log=/proc/lat.csv", "run"])
    add("latency log a folder", [*run, f"--latency-log={tmp}", "run"])
    add("sqlite db missing folder", ["oltp_read_only", f"--sqlite-db={tmp / 'no' / 'x.db'}", "--time=1", "run"])
    add("sqlite db a folder", ["oltp_read_only", f"--sqlite-db={tmp}", "--time=1", "run"])
    add("sqlite db not a database", ["oltp_read_only", f"--sqlite-db={tmp / 'random.conf'}", "--time=1", "run"])
    add("run before prepare", ["oltp_read_only", f"--sqlite-db={tmp / 'empty.db'}", "--time=1", "run"])
    add("report missing file", ["report", str(tmp / "missing.json"), f"--output={tmp / 'rep'}"])
    add("compare missing files", ["compare", str(tmp / "a.json"), str(tmp / "b.json")])
    add("campaign missing file", ["campaign", "run", str(tmp / "missing.toml")])
    add("campaign without action", ["campaign", str(tmp / "missing.toml")])
    add("campaign not toml", ["campaign", "run", str(tmp / "binary.conf")])
    add("export not a result", ["export", str(tmp / "binary.conf"), "--format=csv"])
    # output
    add("closed stdout", [*run, "run"], stdout="closed")
    add("stdout on a full disk", [*run, "run"], stdout=full)
    # unreachable servers (never another address than these)
    for drv in ("mysql", "pgsql"):
        add(
            f"{drv} closed port",
            [
                "oltp_read_only",
                f"--db-driver={drv}",
                f"--{drv}-host=127.0.0.1",
                f"--{drv}-port={port}",
                "--time=1",
                "run",
            ],
        )
        add(
            f"{drv} unresolvable host",
            ["oltp_read_only", f"--db-driver={drv}", f"--{drv}-host=host.invalid", "--time=1", "run"],
        )
    # scripts raising in every callback
    for name in LUA_CALLBACKS:
        limits = ["--time=2"] if name == "report_intermediate" else ["--time=1", "--events=20"]
        add(
            f"lua raises in {name}",
            [str(tmp / f"raise_{name}.lua"), db, *limits, "--report-interval=1", LUA_COMMAND.get(name, "run")],
            {0} if name in LUA_IGNORED else {1},
            fatal=name in LUA_IGNORED,
        )
    for name in PY_CALLBACKS:
        add(
            f"python workload raises in {name}",
            [str(tmp / f"raise_{name}.py"), db, "--time=1", "--events=20", "cleanup" if name == "cleanup" else "run"],
        )
    return out


def write_files(tmp: Path) -> None:
    (tmp / "binary.conf").write_bytes(b"\x1b[31mred=\x01x\nthreads=\x00\x7f\n")
    (tmp / "random.conf").write_bytes(bytes(range(256)) * 3)
    for name, body in LUA_CALLBACKS.items():
        (tmp / f"raise_{name}.lua").write_text(body)
    for name, body in PY_CALLBACKS.items():
        (tmp / f"raise_{name}.py").write_text(PY_WORKLOAD.format(body=body))


FACE_ENV: dict[str, str] = {}
MEMORY_CAP = 4 << 30  # address space of a case that once grew without bound


def cap_memory() -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))


def run_case(args: list[str], stdout: str | None, cwd: Path, memory: bool = False) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYSYSBENCH_")}
    env.update(FACE_ENV)
    env["PYTHONPATH"] = str(REPO)
    cmd = [sys.executable, "-m", "pysysbench", *args]
    if stdout == "closed":  # the shell's >&-
        proc = subprocess.run(
            ["sh", "-c", 'exec "$@" >&-', "sh", *cmd],
            stderr=subprocess.PIPE,
            text=True,
            timeout=TIMEOUT_S,
            env=env,
            cwd=cwd,
            preexec_fn=cap_memory if memory else None,
        )
        proc.stdout = ""
        return proc
    if stdout is not None:
        with open(stdout, "w") as fh:
            proc = subprocess.run(
                cmd,
                stdout=fh,
                stderr=subprocess.PIPE,
                text=True,
                timeout=TIMEOUT_S,
                env=env,
                cwd=cwd,
                preexec_fn=cap_memory if memory else None,
            )
        proc.stdout = ""
        return proc
    return subprocess.run(
        cmd,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        env=env,
        cwd=cwd,
        preexec_fn=cap_memory if memory else None,
    )


TOOLS = ("report", "compare", "campaign", "export")


@pytest.mark.parametrize("face_name", ["pysysbench", "sysbench"])
def test_every_hostile_input_gives_a_clear_line_and_no_traceback(tmp_path, monkeypatch, face_name):
    """Both faces: invoked as sysbench (its default driver mysql: SQLite named here), the same
    inputs end the same way."""
    monkeypatch.setitem(FACE_ENV, "PYSYSBENCH_FACE", face_name)
    write_files(tmp_path)
    prepared = run_case(
        ["oltp_read_only", "--db-driver=sqlite", f"--sqlite-db={tmp_path / 'p.db'}", "--table-size=20", "prepare"],
        None,
        tmp_path,
    )
    assert prepared.returncode == 0, prepared.stdout + prepared.stderr
    all_cases = cases(tmp_path)
    assert len(all_cases) >= 100  # the ones in tests/unit and 40 more at least
    problems = []
    for name, args, codes, extra in all_cases:
        if face_name == "sysbench":
            if args[0] in TOOLS:  # pysysbench's subcommands: not in sysbench's face
                continue
            if not any(a.startswith(("--db-driver", "--mysql", "--pgsql")) for a in args):
                args = ["--db-driver=sqlite", *args]
        proc = run_case(args, extra.get("stdout"), tmp_path, extra.get("memory", False))
        text = proc.stdout + proc.stderr
        lines = [line for line in text.splitlines() if line.strip()]
        errors = [line for line in lines if line.startswith(ERROR_STARTS) or "error" in line.lower()]
        if "Traceback" in text:
            problems.append(f"{name}: a traceback\n{text}")
        elif "internal error" in text:
            problems.append(f"{name}: an internal error\n{text}")
        elif proc.returncode not in codes:
            problems.append(f"{name}: exit code {proc.returncode}, expected {sorted(codes)}\n{text}")
        elif not errors or (extra.get("fatal") and not any(line.startswith("FATAL: ") for line in lines)):
            problems.append(f"{name}: no error line\n{text}")
    assert not problems, f"{len(problems)} of {len(all_cases)} cases:\n\n" + "\n\n".join(problems)


def test_a_result_file_over_a_device_is_written_in_place(tmp_path):
    """--result-file=/dev/full renamed a regular file over the device (as root): a target that
    is not a regular file is written in place, and a full one is one line."""
    from pysysbench.core.errors import UsageError
    from pysysbench.core.files import check_writable, write_atomic

    full = full_device(tmp_path)
    if full == "/dev/full":
        pytest.skip("cannot make a device node here (not root): the test will not risk the real /dev/full")
    check_writable(full)
    with pytest.raises(UsageError, match="cannot write result file '.*full': no space left on the device"):
        write_atomic(full, "{}")
    assert stat.S_ISCHR(os.stat(full).st_mode)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    import threading

    got = []
    reader = threading.Thread(target=lambda: got.append(open(fifo).read()))
    reader.start()
    write_atomic(str(fifo), "{}\n")
    reader.join(10)
    assert got == ["{}\n"] and stat.S_ISFIFO(os.stat(fifo).st_mode)


def cli(args, cwd, **kw) -> subprocess.CompletedProcess:
    return run_case(list(args), None, cwd)


def test_a_missing_sqlite_folder_is_one_line_and_creates_nothing(tmp_path):
    """run (or prepare) against --sqlite-db in a folder that is not there: one line before
    anything runs, no folder and no file created (issue 40 c)."""
    target = tmp_path / "no" / "such" / "x.db"
    for command in ("run", "prepare", "cleanup"):
        proc = cli(["oltp_read_only", f"--sqlite-db={target}", "--time=1", command], tmp_path)
        fatal = [line for line in (proc.stdout + proc.stderr).splitlines() if line.startswith("FATAL")]
        assert proc.returncode == 1 and fatal == [
            f"FATAL: SQLite database '{target}': '{target.parent}' does not exist, so nothing was created; give "
            "--sqlite-db a file in an existing folder"
        ], proc.stdout + proc.stderr
        assert "Running the test" not in proc.stdout  # before the banner
        assert not (tmp_path / "no").exists()


NOTE = (
    "NOTE: no --db-driver given: running on the embedded SQLite file '{path}'; for a server give "
    "--db-driver=mysql or --db-driver=pgsql (with --mysql-host/--pgsql-host ...)"
)


def test_a_run_that_falls_back_to_sqlite_says_so_on_stderr(tmp_path):
    """Without --db-driver nor driver options, pysysbench runs on ./sbtest.db: one line on
    stderr names the file and how to point at a server (issue 40 d); naming SQLite silences it."""
    assert cli(["oltp_read_only", "--table-size=10", "prepare"], tmp_path).returncode == 0
    proc = cli(["oltp_read_only", "--table-size=10", "--events=10", "--time=0", "run"], tmp_path)
    assert proc.returncode == 0 and proc.stderr.splitlines() == [NOTE.format(path=tmp_path / "sbtest.db")]
    for named in (["--db-driver=sqlite"], [f"--sqlite-db={tmp_path / 'sbtest.db'}"]):
        proc = cli(["oltp_read_only", *named, "--table-size=10", "--events=10", "--time=0", "run"], tmp_path)
        assert proc.returncode == 0 and proc.stderr == ""


def test_a_run_on_tables_of_another_size_warns_with_both_sizes(db, run_cli):
    """A run given neither --table-size nor --data-size assumes 10000 rows: on tables prepared
    with 100 (or 20000) it says so, with both sizes, on each driver (issue 40 d)."""
    target = {"sqlite": "SQLite database", "mysql": "MySQL server", "pgsql": "PostgreSQL server"}[db.name]
    run_cli.ok("oltp_point_select", *db.opts, "--table-size=100", "prepare")
    proc = run_cli.ok("oltp_point_select", *db.opts, "--events=10", "--time=0", "run")
    warnings = [line for line in proc.stdout.splitlines() if line.startswith("WARNING: sbtest1")]
    assert len(warnings) == 1 and target in warnings[0], run_cli.describe(proc)
    assert warnings[0].endswith(
        "holds ids up to 100, but this run assumes --table-size=10000 (neither "
        "--table-size nor --data-size was given): give the size the tables were "
        "prepared with"
    ), warnings[0]
    proc = run_cli.ok("oltp_point_select", *db.opts, "--table-size=100", "--events=10", "--time=0", "run")
    assert "WARNING: sbtest1" not in proc.stdout
    if db.name == "sqlite":  # larger tables: 20000 rows reach twice the assumed size
        run_cli.ok("oltp_point_select", *db.opts, "--table-size=20000", "cleanup")
        run_cli.ok("oltp_point_select", *db.opts, "--table-size=20000", "prepare")
        proc = run_cli.ok("oltp_point_select", *db.opts, "--events=10", "--time=0", "run")
        assert "holds ids up to 20000, but this run assumes --table-size=10000" in proc.stdout


def test_json_output_keeps_stdout_for_json_even_when_a_script_prints(tmp_path):
    """--output-format=json: a Lua script's print() and every line but the documents go to
    stderr (descriptor 1 itself points there), stdout holds JSON alone (issue 40 a)."""
    import json

    script = tmp_path / "printing.lua"
    script.write_text('function event() print("hello from event") end\n')
    proc = cli([str(script), "--events=2", "--time=0", "--report-interval=1", "--output-format=json", "run"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert [list(json.loads(line)) for line in proc.stdout.splitlines()] == [["summary"]], proc.stdout
    assert proc.stderr.count("hello from event") == 2 and "Threads started!" in proc.stderr


def test_json_output_to_a_closed_stdout_is_one_line(tmp_path):
    proc = run_case(
        [
            "oltp_read_only",
            f"--sqlite-db={tmp_path / 'x.db'}",
            "--table-size=10",
            "--events=5",
            "--time=0",
            "--output-format=json",
            "prepare",
        ],
        None,
        tmp_path,
    )
    assert proc.returncode == 0
    proc = run_case(
        [
            "oltp_read_only",
            f"--sqlite-db={tmp_path / 'x.db'}",
            "--table-size=10",
            "--events=5",
            "--time=0",
            "--output-format=json",
            "run",
        ],
        "closed",
        tmp_path,
    )
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert [line for line in proc.stderr.splitlines() if line.startswith("FATAL")] == [
        "FATAL: cannot write to standard output (it is closed): the report is lost"
    ]
