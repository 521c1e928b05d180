"""Campaign files: parsing, validation and the one-line errors of bad files
(``pysysbench.campaign.spec``, ``campaign check`` on the CLI)."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

import pytest

from pysysbench.campaign import spec
from pysysbench.campaign.plan import Planner, fingerprint, redact
from pysysbench.cli.main import main
from pysysbench.core.errors import UsageError

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
CAMPAIGNS = sorted(p.name for p in EXAMPLES.glob("*.toml"))

MINIMAL = """
[connection]
db-driver = "sqlite"
[[workload]]
test = "oltp_point_select"
threads = [1, 2]
"""


def write(tmp_path: Path, text: str, name: str = "c.toml") -> str:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return str(path)


def load(tmp_path: Path, text: str, overrides: list[str] | None = None) -> spec.Campaign:
    return spec.load(write(tmp_path, text), overrides)


def test_examples_are_present():
    assert {
        "campaign-example.toml",
        "polardbx.toml",
        "tencentdb-mariadb.toml",
        "tidb.toml",
        "kunlunbase.toml",
        "tencentdb-mysql.toml",
    } <= set(CAMPAIGNS)


@pytest.mark.parametrize("name", CAMPAIGNS)
def test_every_example_parses_and_every_command_line_is_valid(name, capsys):
    assert main(["campaign", "check", str(EXAMPLES / name)]) == 0
    assert capsys.readouterr().out.rstrip().endswith("campaign file OK")


def test_minimal_file_defaults(tmp_path):
    c = load(tmp_path, MINIMAL)
    assert c.name == "c"
    assert c.prepare is None and c.labels == {} and c.table_size is None
    (w,) = c.workloads
    assert (w.name, w.test, w.threads, w.auto) == ("oltp_point_select", "oltp_point_select", (1, 2), None)
    assert (w.time_s, w.warmup_s, w.repeats) == (10, 0, 1)


def test_full_example_values():
    c = spec.load(str(EXAMPLES / "campaign-example.toml"))
    assert c.name == "example" and c.labels["template"] == "default"
    assert c.table_size == 5000 and c.data == {"tables": 4}
    assert c.prepare.test == "oltp_common" and c.prepare.threads == 4
    assert (c.run.time_s, c.run.warmup_s, c.run.pause_s) == (4, 1, 1.0)
    auto = c.workloads[1].auto
    assert (auto.start, auto.factor, auto.max, auto.min_gain, auto.metric) == (1, 2.0, 16, 0.05, "tps")
    assert c.workloads[1].time_s == 3 and c.workloads[0].time_s == 4


def test_dash_and_underscore_keys_are_one_key(tmp_path):
    c = load(tmp_path, MINIMAL + "[run]\nreport_interval = 2\non_error = 'continue'\n")
    assert c.run.report_interval_s == 2 and c.run.on_error == "continue"


def test_overrides_with_set(tmp_path):
    c = load(
        tmp_path,
        MINIMAL,
        ["run.time=3", "workload.1.threads=[4]", "labels.template=hp", "connection.sqlite-db=x.db", "name=other"],
    )
    assert c.run.time_s == 3 and c.workloads[0].time_s == 3
    assert c.workloads[0].threads == (4,)
    assert c.labels == {"template": "hp"} and c.connection["sqlite-db"] == "x.db" and c.name == "other"


def test_memory_sizing(tmp_path):
    c = load(tmp_path, MINIMAL + "[data]\ntables = 4\ntable-size = { memory = '100M', factor = 1.2 }\n")
    assert c.table_size == spec.MemorySizing(100 * 2**20, None, 1.2, spec.DEFAULT_ROW_BYTES)


BAD = [
    ("name = 'x'\n[[workload]\n", "is not valid TOML"),
    ("[connection]\n", "no [[workload]] tables"),
    ("[workload]\ntest = 'oltp_insert'\n", "write [[workload]], not [workload]"),
    ("[[workload]]\nthreads = [1]\n", "'test' is required"),
    ("[[workload]]\ntest = 'oltp_insert'\nthreads = 'many'\n", "'threads' must be a list of thread counts"),
    ("[[workload]]\ntest = 'oltp_insert'\nthreads = [0]\n", "'threads' element 1 is 0: a thread count is"),
    ("[[workload]]\ntest = 'oltp_insert'\nthreads = [2, 2]\n", "lists a thread count twice"),
    ("[[workload]]\ntest = 'oltp_insert'\nthread = [1]\n", "unknown key 'thread' (did you mean 'threads'?)"),
    (
        "[[workload]]\ntest = 'oltp_insert'\nthreads = [1]\n[[workload]]\ntest = 'oltp_insert'\nthreads = [2]\n",
        "name 'oltp_insert' is used twice",
    ),
    (
        "[[workload]]\ntest = 'oltp_insert'\nthreads = [1]\noptions = { threads = 4 }\n",
        "option 'threads' cannot be set here: use the workload's 'threads' list",
    ),
    ("[[workload]]\ntest = 'oltp_insert'\nthreads = [1]\noptions = { time = 4 }\n", "use 'time' in [run]"),
    ("[[workload]]\ntest = 'oltp_insert'\nthreads = 'auto'\nauto = { factor = 1 }\n", "'factor' must be > 1"),
    (
        "[[workload]]\ntest = 'oltp_insert'\nthreads = 'auto'\nauto = { metric = 'p95' }\n",
        "'metric' must be one of tps, qps",
    ),
    ("[[workload]]\ntest = 'oltp_insert'\nthreads = [1]\nauto = { max = 4 }\n", 'only used with threads = "auto"'),
    ("[run]\ntime = 0\n[[workload]]\ntest = 'oltp_insert'\nthreads = [1]\n", "'time' must be >= 1"),
    ("[run]\ntime = '10s'\n[[workload]]\ntest = 'oltp_insert'\nthreads = [1]\n", "'time' must be an integer"),
    (
        "[run]\non-error = 'ignore'\n[[workload]]\ntest = 'oltp_insert'\nthreads = [1]\n",
        "'on-error' must be one of stop, continue",
    ),
    (
        "[data]\ntable-size = -5\n[[workload]]\ntest = 'oltp_insert'\nthreads = [1]\n",
        "'table-size' must be a positive integer",
    ),
    (
        "[data]\ntable-size = { factor = 1.2 }\n[[workload]]\ntest = 'oltp_insert'\nthreads = [1]\n",
        "give exactly one of 'memory'",
    ),
    (
        "[data]\ntable-size = { memory = 'lots' }\n[[workload]]\ntest = 'oltp_insert'\nthreads = [1]\n",
        "'memory' must be a size",
    ),
    (
        "[sql]\nbefore-run = 5\n[[workload]]\ntest = 'oltp_insert'\nthreads = [1]\n",
        "'before-run' must be a string or a list of strings",
    ),
    ("[labels]\nx = [1]\n[[workload]]\ntest = 'oltp_insert'\nthreads = [1]\n", "'x' must be a string or a number"),
    (
        "[connection]\nmysql-host = { a = 1 }\n[[workload]]\ntest = 'oltp_insert'\nthreads = [1]\n",
        "must be a string, number, boolean or list",
    ),
    ("name = 'a b'\n[[workload]]\ntest = 'oltp_insert'\nthreads = [1]\n", "'name' must be letters"),
    ("[[workload]]\ntest = 'oltp_insert'\nthreads = [1]\n[extra]\n", "unknown key 'extra'"),
    ("[prepare]\nthreads = 0\n[[workload]]\ntest = 'oltp_insert'\nthreads = [1]\n", "'threads' must be >= 1"),
]


@pytest.mark.parametrize("text,message", BAD, ids=[m for _, m in BAD])
def test_bad_files_fail_with_one_clear_line(tmp_path, text, message):
    path = write(tmp_path, text)
    with pytest.raises(UsageError) as ei:
        spec.load(path)
    text = str(ei.value)
    assert message in text
    assert text.startswith(f"campaign file '{path}'")
    assert "\n" not in text


def test_bad_set_override(tmp_path):
    path = write(tmp_path, MINIMAL)
    with pytest.raises(UsageError, match="expected KEY.PATH=VALUE"):
        spec.load(path, ["run.time"])
    with pytest.raises(UsageError, match="no element #3"):
        spec.load(path, ["workload.3.time=1"])


def test_cli_errors_are_one_line_without_traceback(tmp_path, capsys):
    bad = write(tmp_path, "[[workload]]\ntest = 'oltp_insert'\nthread = [1]\n")
    assert main(["campaign", "check", bad]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err and "did you mean 'threads'" in err
    assert main(["campaign", "run", str(tmp_path / "missing.toml")]) == 1
    assert "cannot read campaign file" in capsys.readouterr().err
    assert main(["campaign", "explode"]) == 1
    assert "invalid choice" in capsys.readouterr().err


def test_unknown_sysbench_option_is_caught_before_running(tmp_path, capsys):
    bad = write(tmp_path, MINIMAL.replace("threads = [1, 2]", "threads = [1]\noptions = { point_selectz = 4 }"))
    assert main(["campaign", "check", bad]) == 1
    err = capsys.readouterr().err
    assert "invalid option: --point_selectz" in err and err.count("\n") == 1


def test_unknown_test_is_caught_before_running(tmp_path, capsys):
    bad = write(tmp_path, MINIMAL.replace("oltp_point_select", "oltp_nonsense"))
    assert main(["campaign", "run", bad, f"--results-dir={tmp_path / 'r'}"]) == 1
    assert "Cannot find benchmark 'oltp_nonsense'" in capsys.readouterr().err
    assert not (tmp_path / "r" / "oltp_nonsense-t0001-r1.json").exists()


# --- planning ---------------------------------------------------------------------------


def test_run_command_lines_and_precedence(tmp_path):
    c = load(
        tmp_path,
        """
        [connection]
        db-driver = "sqlite"
        sqlite-db = "{results_dir}/x.db"
        [data]
        tables = 2
        table_size = 100
        [run]
        time = 3
        warmup = 1
        options = { rand-type = "uniform", range_size = 7 }
        [[workload]]
        test = "oltp_read_only"
        threads = [4]
        repeats = 2
        options = { range-size = 5, skip_trx = true }
    """,
    )
    planner = Planner(c, "R", c.table_size)
    runs = planner.fixed_runs(c.workloads[0])
    assert [r.key.stem for r in runs] == ["oltp_read_only-t0004-r1", "oltp_read_only-t0004-r2"]
    assert runs[0].request.words() == [  # the command line it stands for: fingerprints unchanged
        "oltp_read_only",
        "--db-driver=sqlite",
        "--sqlite-db=R/x.db",
        "--tables=2",
        "--table-size=100",
        "--rand-type=uniform",
        "--range-size=5",
        "--skip_trx=on",
        "--threads=4",
        "--time=3",
        "--warmup-time=1",
        "--report-interval=1",
        "--result-file=R/oltp_read_only-t0004-r1.json",
        "run",
    ]
    assert runs[0].fingerprint == runs[1].fingerprint  # only the result file differs


def test_repeats_are_whole_sweeps(tmp_path):
    c = load(tmp_path, MINIMAL.replace("threads = [1, 2]", "threads = [1, 2]\nrepeats = 2"))
    stems = [r.key.stem for r in Planner(c, "R", None).fixed_runs(c.workloads[0])]
    assert stems == [
        "oltp_point_select-t0001-r1",
        "oltp_point_select-t0002-r1",
        "oltp_point_select-t0001-r2",
        "oltp_point_select-t0002-r2",
    ]


def test_config_file_is_relative_to_the_campaign_file():
    camp = spec.load(str(EXAMPLES / "polardbx.toml"))
    argv = Planner(camp, "R", 10).prepare_request("prepare").words()
    conf = next(a.split("=", 1)[1] for a in argv if a.startswith("--config-file="))
    assert os.path.samefile(conf, EXAMPLES / "polardbx-sysb.conf")
    assert conf == os.path.relpath(EXAMPLES / "polardbx-sysb.conf")  # below the working directory
    assert argv[0] == "oltp_point_select" and argv[-1] == "prepare" and "--auto_inc=off" in argv


def test_passwords_are_masked_and_do_not_change_fingerprints():
    argv = ["oltp_read_write", "--mysql-password=s3cret", "--pgsql_password=x", "--mysql-user=u", "run"]
    assert redact(argv) == ["oltp_read_write", "--mysql-password=***", "--pgsql_password=***", "--mysql-user=u", "run"]
    assert fingerprint(argv) == fingerprint([a.replace("s3cret", "other") for a in argv])
    assert fingerprint(argv) != fingerprint(argv[:-1] + ["--tables=2", "run"])


CONFIG_FILE_CAMPAIGN = """
[connection]
mysql-host = "127.0.0.1"
mysql-user = "from-campaign"
config-file = "sysb.conf"
[[workload]]
test = "oltp_point_select"
threads = [1]
"""
NO_CONFIG_FILE = CONFIG_FILE_CAMPAIGN.replace('config-file = "sysb.conf"\n', "")


@pytest.mark.parametrize(
    "text,overrides,user",
    [
        (CONFIG_FILE_CAMPAIGN, [], "from-campaign"),
        (CONFIG_FILE_CAMPAIGN, ["connection.mysql-user=alice"], "alice"),
        (CONFIG_FILE_CAMPAIGN, ["connection.mysql_user=alice"], "alice"),
        (NO_CONFIG_FILE, ["connection.mysql-user=alice", "connection.config-file=other.conf"], "alice"),
    ],
)
def test_campaign_options_and_set_win_over_the_config_file(tmp_path, text, overrides, user):
    # sysbench reads --config-file where it stands: an option before it is overridden by
    # the file.  A campaign puts the file first, so its own values and --set always win.
    from pysysbench.command.library import parse_request

    for name in ("sysb.conf", "other.conf"):
        (tmp_path / name).write_text("db-driver='mysql'\nmysql-user='from-file'\nmysql-db='campaign'\ntime='60'\n")
    c = load(tmp_path, text, overrides)
    planner = Planner(c, str(tmp_path / "R"), 10)
    request = planner.run(c.workloads[0], 1, 1, "list").request
    assert request.options[0].startswith("--config-file=")
    values = parse_request(request.test, request.command, request.options).values
    assert (values.mysql_user, values.mysql_db, values.time) == (user, "campaign", 10)
    conn = parse_request("oltp_common", "prepare", planner.connection_args()).values  # the [sql] hooks' session
    assert conn.mysql_user == user
