"""``--config-file=FILE`` (spec 1.3) and the PolarDB-X seed's ``sysb.conf``.

Deliberate deviations from sysbench 1.0.20, tested as intended:
* workload options in the file (tables, table_size, ...) TAKE EFFECT;
* a boolean honours its value (``histogram=off`` is off);
* several ``name='value'`` pairs may share one line, and ``name = value`` is accepted.
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from pysysbench.command.cmdline import choose_driver, parse
from pysysbench.core.errors import InvalidOption, UsageError
from pysysbench.core.options import read_config_file

ROOT = Path(__file__).resolve().parents[2]

# sysb.conf from /work/shared/seeds/polardbx-sysbench-report.txt, with {HOST}/{PORT} ->
# 127.0.0.1/3306 and {USER}/{PASSWORD} -> sbtest/'' -- one pair per line ...
POLARDBX_CONF = """\
mysql-host='127.0.0.1'
mysql-port='3306'
mysql-user='sbtest'
mysql-password=''
mysql-db='sbtest'
db-driver='mysql'
percentile='95'
histogram='on'
report-interval='1'
time='60'
rand-type='uniform'
"""

# ... and in the flattened one-line form printed in the seed report.
POLARDBX_CONF_FLAT = (
    "mysql-host='127.0.0.1' mysql-port='3306' mysql-user='sbtest' mysql-password='' mysql-db='sbtest' "
    "db-driver='mysql' percentile='95' histogram='on' report-interval='1' time='60' rand-type='uniform'\n"
)


def write(tmp_path: Path, text: str, name: str = "sysb.conf") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


# --------------------------------------------------------------------------- the seed file


@pytest.mark.parametrize("text", [POLARDBX_CONF, POLARDBX_CONF_FLAT], ids=["per-line", "flattened"])
def test_polardbx_sysb_conf(tmp_path, text):
    conf = write(tmp_path, text)
    # the seed's run command line, minus the placeholders
    inv = parse(
        [
            f"--config-file={conf}",
            "--db-ps-mode=disable",
            "--mysql-ignore-errors=all",
            "--tables=16",
            "--table-size=10000000",
            "--range-size=5",
            "--threads=8",
            "oltp_read_write",
            "run",
        ]
    )
    v = inv.values
    assert (inv.test, inv.command) == ("oltp_read_write", "run")
    assert v.mysql_host == ["127.0.0.1"]
    assert v.mysql_port == ["3306"]
    assert v.mysql_user == "sbtest"
    assert v.mysql_password == ""
    assert v.mysql_db == "sbtest"
    assert v.db_driver == "mysql"
    assert choose_driver(v) == "mysql"
    assert v.percentile == 95
    assert v.histogram is True
    assert v.report_interval == 1
    assert v.time == 60
    assert v.rand_type == "uniform"
    # the command-line options after --config-file
    assert v.db_ps_mode == "disable"
    assert v.mysql_ignore_errors == ["all"]
    assert (v.tables, v.table_size, v.range_size, v.threads) == (16, 10000000, 5, 8)


def test_polardbx_prepare_command_line(tmp_path):
    # sysbench --config-file='sysb.conf' --create-table-options=... --tables='16'
    #   --table-size='10000000' --threads='16' --auto_inc='off' oltp_point_select prepare
    conf = write(tmp_path, POLARDBX_CONF_FLAT)
    inv = parse(
        [
            f"--config-file={conf}",
            '--create-table-options=single locality="balance_single_table=on"',
            "--tables=16",
            "--table-size=10000000",
            "--threads=16",
            "--auto_inc=off",
            "oltp_point_select",
            "prepare",
        ]
    )
    v = inv.values
    assert v.create_table_options == 'single locality="balance_single_table=on"'
    assert (v.tables, v.table_size, v.threads, v.auto_inc) == (16, 10000000, 16, False)
    assert choose_driver(v) == "mysql" and v.histogram is True


@pytest.mark.parametrize("text", [POLARDBX_CONF, POLARDBX_CONF_FLAT], ids=["per-line", "flattened"])
def test_both_forms_read_the_same_pairs(tmp_path, text):
    pairs = [(r.name, r.value) for r in read_config_file(write(tmp_path, text))]
    assert pairs == [
        ("mysql-host", "127.0.0.1"),
        ("mysql-port", "3306"),
        ("mysql-user", "sbtest"),
        ("mysql-password", ""),
        ("mysql-db", "sbtest"),
        ("db-driver", "mysql"),
        ("percentile", "95"),
        ("histogram", "on"),
        ("report-interval", "1"),
        ("time", "60"),
        ("rand-type", "uniform"),
    ]


# --------------------------------------------------------------------------- precedence


def test_options_before_config_file_are_overridden(tmp_path):
    conf = write(tmp_path, "threads=4\ntime=60\n")
    v = parse(["--threads=2", "--time=5", f"--config-file={conf}", "oltp_read_write", "run"]).values
    assert (v.threads, v.time) == (4, 60)


def test_options_after_config_file_win(tmp_path):
    conf = write(tmp_path, "threads=4\ntime=60\n")
    v = parse([f"--config-file={conf}", "--threads=2", "oltp_read_write", "--time=5", "run"]).values
    assert (v.threads, v.time) == (2, 5)


def test_precedence_for_workload_options(tmp_path):
    conf = write(tmp_path, "tables=3\ntable_size=20\n")
    v = parse(["--tables=5", f"--config-file={conf}", "oltp_read_write", "run"]).values
    assert (v.tables, v.table_size) == (3, 20)
    v = parse([f"--config-file={conf}", "oltp_read_write", "--tables=5", "run"]).values
    assert (v.tables, v.table_size) == (5, 20)


def test_defaults_when_file_is_silent(tmp_path):
    conf = write(tmp_path, "# nothing here\n\n")
    v = parse([f"--config-file={conf}", "oltp_read_write", "run"]).values
    assert (v.threads, v.time, v.tables, v.histogram) == (1, 10, 1, False)


def test_config_file_spelled_with_underscore(tmp_path):
    conf = write(tmp_path, "threads=3\n")
    assert parse([f"--config_file={conf}", "oltp_read_write", "run"]).values.threads == 3


def test_two_config_files_later_wins(tmp_path):
    a = write(tmp_path, "threads=3\ntime=7\n", "a.conf")
    b = write(tmp_path, "threads=5\n", "b.conf")
    v = parse([f"--config-file={a}", f"--config-file={b}", "oltp_read_write", "run"]).values
    assert (v.threads, v.time) == (5, 7)


# --------------------------------------------------------------------------- syntax


def test_comments_quotes_lists_and_spacing(tmp_path):
    conf = write(
        tmp_path,
        """\
# a comment line
   # an indented comment
threads=3   # trailing comment
mysql-db="my db"
mysql-user='sb test'
mysql-ignore-errors=1213,1205,1020
mysql-host='h1,h2'
rate = 7
events =9
time= 11
report-interval='2'  percentile="99"

this line has no equals sign and is ignored
""",
    )
    v = parse([f"--config-file={conf}", "oltp_read_write", "run"]).values
    assert v.threads == 3
    assert v.mysql_db == "my db"
    assert v.mysql_user == "sb test"
    assert v.mysql_ignore_errors == ["1213", "1205", "1020"]
    assert v.mysql_host == ["h1", "h2"]
    assert (v.rate, v.events, v.time) == (7, 9, 11)
    assert (v.report_interval, v.percentile) == (2, 99)


def test_hash_inside_quotes_is_not_a_comment(tmp_path):
    conf = write(tmp_path, "mysql-password='se#cret'\n")
    assert parse([f"--config-file={conf}", "oltp_read_write", "run"]).values.mysql_password == "se#cret"


def test_backslashes_are_literal(tmp_path):
    # sysbench does no escape processing: a password or path with a backslash is kept as is
    conf = write(tmp_path, "mysql-password=ab\\cd\nsqlite-db='C:\\tmp\\x.db'  # comment\n")
    v = parse([f"--config-file={conf}", "oltp_read_write", "run"]).values
    assert v.mysql_password == "ab\\cd"
    assert v.sqlite_db == "C:\\tmp\\x.db"


def test_lines_without_equals_are_ignored(tmp_path):
    conf = write(tmp_path, "verbose\nthreads\n[client]\nthreads=2\n")
    v = parse([f"--config-file={conf}", "oltp_read_write", "run"]).values
    assert v.threads == 2


def test_dashes_and_underscores_in_file(tmp_path):
    conf = write(tmp_path, "report_interval=3\ntable-size=50\n")
    v = parse([f"--config-file={conf}", "oltp_read_write", "run"]).values
    assert (v.report_interval, v.table_size) == (3, 50)


def test_unterminated_quote(tmp_path):
    conf = write(tmp_path, "threads=2\n# ok\nmysql-db='sbtest\ntime=5\n")
    with pytest.raises(UsageError) as ei:
        parse([f"--config-file={conf}", "oltp_read_write", "run"])
    msg = str(ei.value)
    assert "line 3" in msg
    assert "unexpected EOL" in msg or "unterminated" in msg
    assert "sysb.conf" in msg


def test_missing_file(tmp_path):
    missing = tmp_path / "nope.conf"
    with pytest.raises(UsageError) as ei:
        parse([f"--config-file={missing}", "oltp_read_write", "run"])
    msg = str(ei.value)
    assert str(missing) in msg
    assert "No such file" in msg


def test_config_file_without_name(tmp_path):
    with pytest.raises(InvalidOption):
        parse(["--config-file=", "oltp_read_write", "run"])


def test_unknown_option_in_file_names_file_and_line(tmp_path):
    conf = write(tmp_path, "threads=2\nno-such-option=1\n")
    with pytest.raises(InvalidOption) as ei:
        parse([f"--config-file={conf}", "oltp_read_write", "run"])
    msg = str(ei.value)
    assert msg.startswith("invalid option: --no-such-option")
    assert "sysb.conf line 2" in msg


def test_bad_value_in_file_names_file_and_line(tmp_path):
    conf = write(tmp_path, "threads=abc\n")
    with pytest.raises(InvalidOption) as ei:
        parse([f"--config-file={conf}", "oltp_read_write", "run"])
    msg = str(ei.value)
    assert msg.startswith("Invalid value for the 'threads' option: 'abc'")
    assert "sysb.conf line 1" in msg


# --------------------------------------------------------------------------- booleans (deviation)


@pytest.mark.parametrize(
    "raw,expected",
    [
        ("on", True),
        ("'on'", True),
        ("true", True),
        ("1", True),
        ("off", False),
        ("'off'", False),
        ("false", False),
        ("0", False),
    ],
)
def test_boolean_in_file_honours_value(tmp_path, raw, expected):
    conf = write(tmp_path, f"histogram={raw}\nskip_trx={raw}\n")
    v = parse([f"--config-file={conf}", "oltp_read_write", "run"]).values
    assert v.histogram is expected
    assert v.skip_trx is expected


def test_histogram_off_is_off(tmp_path):
    conf = write(tmp_path, "histogram=off\n")
    v = parse(["--histogram=on", f"--config-file={conf}", "oltp_read_write", "run"]).values
    assert v.histogram is False


# --------------------------------------------------------------------------- workload options take effect


def test_workload_options_in_file_take_effect(tmp_path):
    conf = write(tmp_path, "tables=3\ntable-size=20\npoint_selects=2\nrange_selects=off\n")
    v = parse([f"--config-file={conf}", "oltp_read_write", "run"]).values
    assert (v.tables, v.table_size, v.point_selects, v.range_selects) == (3, 20, 2, False)


def test_prepare_with_tables_in_file_creates_them(tmp_path):
    conf = write(tmp_path, "tables=3\ntable-size=20\n")
    proc = subprocess.run(
        [sys.executable, "-m", "pysysbench", f"--config-file={conf}", "oltp_read_write", "prepare"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Creating table 'sbtest3'..." in proc.stdout
    assert "Inserting 20 records into 'sbtest3'" in proc.stdout
    with sqlite3.connect(tmp_path / "sbtest.db") as con:
        names = sorted(r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'"))
        counts = [con.execute(f"SELECT COUNT(*) FROM sbtest{i}").fetchone()[0] for i in (1, 2, 3)]
    assert [n for n in names if n.startswith("sbtest")] == ["sbtest1", "sbtest2", "sbtest3"]
    assert counts == [20, 20, 20]
