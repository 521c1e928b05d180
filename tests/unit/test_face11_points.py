"""Issue 41 point by point, where test_face11.py / test_face11_lua.py leave a gap: what a
script reads in ``sysbench.opt`` under 1.1, 1.1.0's line (on stderr) for a non-number option value, and
a campaign asking for 1.1 (point 1's campaign, point 4: the face is recorded and the run's
1.1 text reads back).  The expected texts are the 1.1.0 binary's (3ceba0b); where it is
built (/root/.cache/sysbench-1.1.0) they are compared with it live too."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from test_face11 import REF_11, clean_face, needs_ref, run_main  # noqa: F401 (clean_face: a fixture)

from pysysbench.stats import textlog

REPO = Path(__file__).resolve().parents[2]

pytest.importorskip("lupa")

OPT_SCRIPT = """function event()
  local k = {}
  for n in pairs(sysbench.opt) do k[#k+1] = n end
  table.sort(k)
  for _, n in ipairs(k) do
    local v = sysbench.opt[n]
    print(n .. "=" .. (type(v) == "table" and "<table>" or tostring(v)))
  end
end
"""
# sysbench 1.1.0 --verbosity=0 --events=1 opt.lua run: sysbench.opt as a 1.1 script sees it
OPT_11 = dict(
    line.split("=", 1)
    for line in """db_debug=false db_ps_mode=auto debug=false events=1 forced_shutdown=off help=false
histogram=false luajit_cmd= mysql_compression=false mysql_compression_algorithms=zlib mysql_db=sbtest mysql_debug=false
mysql_dry_run=false mysql_host=<table> mysql_ignore_errors=<table> mysql_password= mysql_port=<table>
mysql_socket=<table> mysql_ssl=false mysql_ssl_ca= mysql_ssl_cert= mysql_ssl_cipher= mysql_ssl_key=
mysql_user=sbtest percentile=95 pgsql_db=sbtest pgsql_host=localhost pgsql_password= pgsql_port=5432
pgsql_sslmode=prefer pgsql_user=sbtest rand_pareto_h=0.2
rand_seed=0 rand_type=uniform rand_zipfian_exp=0.8 rate=0 report_checkpoints=<table> report_interval=0
thread_init_timeout=30 thread_stack_size=65536 threads=1 time=10 validate=false verbosity=0 version=false
warmup_time=0""".split()
)
# where pysysbench's value differs from 1.1.0's, on purpose: the reason
DIFFERENT = {
    "db_driver": "1.1.0: mysql; pysysbench's default driver is the embedded sqlite",
}


def lua_opts(monkeypatch, capfd, tmp_path) -> dict[str, str]:
    script = tmp_path / "opt.lua"
    script.write_text(OPT_SCRIPT)
    capfd.readouterr()
    code, _, err = run_main(["--verbosity=0", "--events=1", str(script), "run"], monkeypatch, compat="1.1")
    assert code == 0, err
    return dict(line.split("=", 1) for line in capfd.readouterr().out.splitlines())


def test_sysbench_opt_holds_110s_values(monkeypatch, capfd, tmp_path):
    mine = lua_opts(monkeypatch, capfd, tmp_path)
    wrong = {k: (v, mine.get(k)) for k, v in OPT_11.items() if mine.get(k) != v}
    assert not wrong, f"sysbench.opt under 1.1 differs from 1.1.0's (1.1.0, pysysbench): {wrong}"


@needs_ref
def test_sysbench_opt_as_the_110_binary_has_it(tmp_path):
    (tmp_path / "opt.lua").write_text(OPT_SCRIPT)
    real = subprocess.run(
        [str(REF_11), "--verbosity=0", "--events=1", "opt.lua", "run"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )
    got = dict(line.split("=", 1) for line in real.stdout.splitlines())
    assert {k: v for k, v in got.items() if k not in DIFFERENT} == OPT_11


@pytest.mark.parametrize(
    "arg, line",
    [
        ("--warmup-time=abc", "Invalid value for the 'warmup_time' option: 'abc'\n"),
        ("--threads=x", "Invalid value for the 'threads' option: 'x'\n"),
        ("--time=x", "Invalid value for the 'time' option: 'x'\n"),
        ("--rate=x", "Invalid value for the 'rate' option: 'x'\n"),
    ],
)
def test_a_value_that_is_no_number_is_110s_line(arg, line, monkeypatch):
    assert run_main(["--events=1", arg, "cpu", "run"], monkeypatch, compat="1.1") == (1, "", line)
    if REF_11.exists():
        real = subprocess.run(
            [str(REF_11), "--events=1", arg, "cpu", "run"], capture_output=True, text=True, timeout=60
        )
        assert (real.returncode, real.stdout, real.stderr) == (1, "", line)


CAMPAIGN = """name = "face11"
[connection]
db-driver = "sqlite"
sqlite-db = "{results_dir}/sbtest.db"
[data]
tables = 1
table-size = 100
[prepare]
test = "oltp_common"
[run]
time = 1
pause = 0
options = { sysbench-compat = "1.1" }
[[workload]]
test = "oltp_point_select"
threads = [1]
"""


@pytest.mark.timeout(120)
def test_a_campaign_asking_for_11_runs_11_and_records_it(tmp_path):
    (tmp_path / "c.toml").write_text(CAMPAIGN)
    env = {k: v for k, v in os.environ.items() if k != "PYSYSBENCH_COMPAT"}
    env["PYTHONPATH"] = str(REPO)
    res = tmp_path / "res"
    proc = subprocess.run(
        [sys.executable, "-m", "pysysbench", "campaign", "run", "c.toml", f"--results-dir={res}"],
        capture_output=True,
        text=True,
        timeout=110,
        cwd=tmp_path,
        env=env,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    doc = json.loads((res / "oltp_point_select-t0001-r1.json").read_text())
    assert doc["implementation"]["sysbench_compat"] == "1.1.0"
    log = (res / "logs" / "oltp_point_select-t0001-r1.log").read_text()
    assert "\nThroughput:\n    events/s (eps):" in log and "General statistics:" not in log
    (run,) = textlog.parse(log)  # the 1.1 text of the run reads back
    assert (run.format, run.test, run.complete) == ("1.1", "oltp_point_select", True)
    assert run.summary.events == doc["summary"]["events"]


# --- what 1.1.0 prints where pysysbench's wider options met it (its binary's texts) --------------

BANNER_11 = "sysbench 1.1.0 (using bundled LuaJIT 2.1.0-beta3)\n\n"


def real_110(args: list[str], cwd: Path | None = None) -> tuple[int, str, str]:
    real = subprocess.run([str(REF_11), *args], capture_output=True, text=True, timeout=60, cwd=cwd)
    return real.returncode, real.stdout, real.stderr


@pytest.mark.parametrize(
    "args, want",
    [
        (["--version"], (0, "sysbench 1.1.0\n", "")),
        # 1.1.0 built on MariaDB's client library (Debian's, the suite's) declares --mysql-ssl a flag
        (["--mysql-ssl=bogus", "cpu", "run"], (1, BANNER_11, "invalid option: --mysql-ssl=bogus\n")),
        (["--mysql-ssl=", "cpu", "run"], (1, BANNER_11, "invalid option: --mysql-ssl=\n")),
        (["--mysql_ssl=yes", "cpu", "run"], (1, BANNER_11, "invalid option: --mysql_ssl=yes\n")),
    ],
)
def test_the_110_binarys_text(args, want, monkeypatch):
    assert run_main(args, monkeypatch, compat="1.1") == want
    if REF_11.exists():
        assert real_110(args) == want


def test_the_first_line_is_the_110_binarys_whatever_luajit_runs(monkeypatch):
    code, out, _ = run_main(["--events=1", "cpu", "run"], monkeypatch, compat="1.1")
    assert code == 0 and out.startswith(BANNER_11)
    if REF_11.exists():
        assert real_110(["--events=1", "cpu", "run"])[1].startswith(BANNER_11)
    code, out, _ = run_main(["--events=1", "cpu", "run"], monkeypatch)  # 1.0: the LuaJIT embedded, as before
    assert out.startswith("sysbench 1.0.20 (using bundled LuaJIT 2.1.") and out.split("\n")[0].count(" ") == 5


TYPES_SCRIPT = """function event()
  for _, n in ipairs({"mysql_ssl", "pgsql_host", "pgsql_port"}) do
    local v = sysbench.opt[n]
    print(n .. "=" .. type(v) .. ":" .. (type(v) == "table" and table.concat(v, ",") or tostring(v)))
  end
end
"""
SSL_OFF = "mysql_ssl=boolean:false"
SSL_ON = "mysql_ssl=boolean:true"
ONE_HOST = "pgsql_host=string:localhost pgsql_port=number:5432"


@pytest.mark.parametrize(
    "args, seen, as_110",
    [
        ([], f"{SSL_OFF} {ONE_HOST}", True),
        (["--mysql-ssl"], f"{SSL_ON} {ONE_HOST}", True),
        (["--mysql-ssl=on"], f"{SSL_ON} {ONE_HOST}", True),
        (["--mysql-ssl=true"], f"{SSL_ON} {ONE_HOST}", True),
        (["--mysql-ssl=1"], f"{SSL_ON} {ONE_HOST}", True),
        (["--mysql-ssl=0"], f"{SSL_OFF} {ONE_HOST}", True),
        (["--pgsql-host=db1", "--pgsql-port=5433"], f"{SSL_OFF} pgsql_host=string:db1 pgsql_port=number:5433", True),
        # pysysbench's extensions: MySQL's SSL modes (a flag to the script), several hosts and ports
        (["--mysql-ssl=REQUIRED"], f"{SSL_ON} {ONE_HOST}", False),
        (["--mysql-ssl=verify_identity"], f"{SSL_ON} {ONE_HOST}", False),
        (["--mysql-ssl=disabled"], f"{SSL_OFF} {ONE_HOST}", False),
        (["--pgsql-host=a,b", "--pgsql-port=1,2"], f"{SSL_OFF} pgsql_host=table:a,b pgsql_port=table:1,2", False),
    ],
)
def test_a_script_sees_110s_types(args, seen, as_110, monkeypatch, capfd, tmp_path):
    (tmp_path / "types.lua").write_text(TYPES_SCRIPT)
    capfd.readouterr()
    monkeypatch.chdir(tmp_path)
    code, _, err = run_main(["--verbosity=0", "--events=1", *args, "types.lua", "run"], monkeypatch, compat="1.1")
    assert (code, err, " ".join(capfd.readouterr().out.split())) == (0, "", seen)
    if as_110 and REF_11.exists():
        code, out, err = real_110(["--verbosity=0", "--events=1", *args, "types.lua", "run"], tmp_path)
        assert (code, err, " ".join(out.split())) == (0, "", seen)


CONNECT = """function thread_init()
  con = sysbench.sql.driver():connect()
end
function event() end
"""
# sysbench 1.1.0 --db-driver=pgsql --pgsql-sslmode=bogus --events=1 conn.lua run: libpq refuses
# the mode when the script connects (no server is asked)
BAD_SSLMODE_RUN = (
    BANNER_11 + "Running the test with following options:\nNumber of threads: 1\n"
    "Initializing random number generator from current time\n\n\nInitializing worker threads...\n\n"
    'FATAL: Connection to database failed: invalid sslmode value: "bogus"\n\n'
    "FATAL: `thread_init' function failed: conn.lua:2: connection creation failed\n"
    "FATAL: Threads initialization failed!\n"
)
BAD_SSLMODE = 'FATAL: Connection to database failed: invalid sslmode value: "bogus"\n'


def face_run(args: list[str], cwd: Path, face_name: str = "sysbench", compat: str = "1.1") -> tuple[int, str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYSYSBENCH_COMPAT", "PYSYSBENCH_FACE")}
    env.update(PYTHONPATH=str(REPO), PYSYSBENCH_FACE=face_name, PYSYSBENCH_COMPAT=compat)
    cmd = [sys.executable, "-m", "pysysbench", *args]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60, cwd=cwd, env=env)
    return proc.returncode, proc.stdout, proc.stderr


def test_a_bad_sslmode_fails_at_connect_in_110s_words(tmp_path):
    (tmp_path / "conn.lua").write_text(CONNECT)
    args = ["--db-driver=pgsql", "--pgsql-sslmode=bogus", "--events=1", "conn.lua", "run"]
    assert face_run(args, tmp_path) == (1, BAD_SSLMODE_RUN, "")
    if REF_11.exists():
        assert real_110(args, tmp_path) == (1, BAD_SSLMODE_RUN, "")
    # a bundled workload (pysysbench's own code): 1.1.0's line, alone (its Lua lines are not there)
    code, out, err = face_run(["--db-driver=pgsql", "--pgsql-sslmode=bogus", "oltp_point_select", "prepare"], tmp_path)
    assert (code, out, err) == (1, BANNER_11 + BAD_SSLMODE, "")


@pytest.mark.parametrize("face_name, compat", [("sysbench", "1.0"), ("pysysbench", "1.1")])
def test_elsewhere_a_bad_sslmode_is_refused_before_anything(face_name, compat, tmp_path):
    args = ["--db-driver=pgsql", "--pgsql-sslmode=bogus", "oltp_point_select", "prepare"]
    code, _, err = face_run(args, tmp_path, face_name, compat)
    assert (code, err) == (
        1,
        "Invalid value for the 'pgsql-sslmode' option: 'bogus' "
        "(choose one of: disable, allow, prefer, require, verify-ca, verify-full)\n",
    )


def test_an_unknown_driver_ends_in_110s_last_line(monkeypatch):
    code, out, _ = run_main(["--db-driver=foo", "--events=1", "oltp_point_select", "run"], monkeypatch, compat="1.1")
    assert (code, out.splitlines()[-1]) == (1, "FATAL: Threads initialization failed!")
    if REF_11.exists():
        assert real_110(["--db-driver=foo", "--events=1", "oltp_point_select", "run"])[1].splitlines()[-1] == (
            "FATAL: Threads initialization failed!"
        )
    code, out, _ = run_main(["--db-driver=foo", "--events=1", "oltp_point_select", "run"], monkeypatch)  # 1.0.20's
    assert (code, out.splitlines()[-1]) == (1, "FATAL: Thread initialization failed!")


@pytest.mark.parametrize(
    "arg, key, raw, real_code",
    [  # 1.1.0 reads each as 0 (atoi, strtod): a stack of 0 it refuses, the others it runs with
        ("--thread-stack-size=x", "thread_stack_size", "x", 1),
        ("--rand-zipfian-exp=x", "rand_zipfian_exp", "x", 0),
        ("--events=", "events", "", 0),
    ],
)
def test_a_value_that_is_no_number_stays_refused_on_purpose(arg, key, raw, real_code, monkeypatch):
    """docs/sysbench-face.md: a deliberate difference (one clear line, where 1.1.0 takes 0)."""
    line = f"Invalid value for the '{key}' option: '{raw}'\n"
    assert run_main(["--time=1", arg, "cpu", "run"], monkeypatch, compat="1.1") == (1, "", line)
    if REF_11.exists():
        assert real_110(["--time=1", "--verbosity=0", arg, "cpu", "run"])[0] == real_code
