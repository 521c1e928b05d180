"""Options the 1.1 face takes as sysbench 1.1.0 does (issue 41, points 1 and 2): the bundled
scripts' help lists 1.1's script options, ``--mysql-compression-algorithms`` is an option,
``--thread-init-timeout`` takes any integer, and the ``--rand-spec-*`` options 1.1 removed
are invalid options.  The expected texts are the sysbench 1.1.0 binary's (3ceba0b); where
that binary is built (/root/.cache/sysbench-1.1.0) they are compared with it too."""

from __future__ import annotations

import contextlib
import io
import subprocess
from pathlib import Path

import pytest

from pysysbench.cli.main import main
from pysysbench.core.switches import COMPAT
from pysysbench.output import face

REF_11 = Path("/root/.cache/sysbench-1.1.0/bin/sysbench")
needs_ref = pytest.mark.skipif(not REF_11.exists(), reason="sysbench 1.1.0 is not built here: nothing to compare with")

# `sysbench oltp_read_write help` of 1.1.0, after its first line and the empty line
OLTP_HELP_11 = """\
oltp_read_write options:
  --auto_inc[=on|off]           Use AUTO_INCREMENT column as Primary Key (for MySQL), or its alternatives in other DBMS. When disabled, use client-generated IDs [on]
  --create_secondary[=on|off]   Create a secondary index in addition to the PRIMARY KEY [on]
  --create_table_options=STRING Extra CREATE TABLE options []
  --delete_inserts=N            Number of DELETE/INSERT combinations per transaction [1]
  --distinct_ranges=N           Number of SELECT DISTINCT queries per transaction [1]
  --index_updates=N             Number of UPDATE index queries per transaction [1]
  --mysql_storage_engine=STRING Storage engine, if MySQL is used [innodb]
  --non_index_updates=N         Number of UPDATE non-index queries per transaction [1]
  --order_ranges=N              Number of SELECT ORDER BY queries per transaction [1]
  --pgsql_variant=STRING        Use this PostgreSQL variant when running with the PostgreSQL driver. The only currently supported variant is 'redshift'. When enabled, create_secondary is automatically disabled, and delete_inserts is set to 0
  --point_selects=N             Number of point SELECT queries per transaction [10]
  --range_selects[=on|off]      Enable/disable all range SELECT queries [on]
  --range_size=N                Range size for range SELECT queries [100]
  --reconnect=N                 Reconnect after every N events. The default (0) is to not reconnect [0]
  --secondary[=on|off]          Use a secondary index in place of the PRIMARY KEY [off]
  --simple_ranges=N             Number of simple range SELECT queries per transaction [1]
  --skip_trx[=on|off]           Don't start explicit transactions and execute all queries in the AUTOCOMMIT mode [off]
  --sum_ranges=N                Number of SELECT SUM() queries per transaction [1]
  --table_size=N                Number of rows per table [10000]
  --tables=N                    Number of tables [1]

"""  # noqa: E501 (sysbench's lines)


@pytest.fixture(autouse=True)
def clean_face(monkeypatch):
    monkeypatch.delenv(COMPAT.name, raising=False)
    monkeypatch.delenv(face.ENV, raising=False)
    before = face.active()
    yield
    face.use(before)


def run_main(args: list[str], monkeypatch, compat: str | None = "1.1") -> tuple[int, str, str]:
    monkeypatch.setenv(face.ENV, "sysbench")
    if compat is None:
        monkeypatch.delenv(COMPAT.name, raising=False)
    else:
        monkeypatch.setenv(COMPAT.name, compat)
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(args)
    return code, out.getvalue(), err.getvalue()


def body(text: str) -> str:
    """A help's lines after the first (the runtime's name differs) and the empty one."""
    return text.split("\n", 2)[2]


def test_bundled_script_help_lists_11s_options(monkeypatch):
    code, out, _ = run_main(["oltp_read_write", "help"], monkeypatch)
    assert (code, body(out)) == (0, OLTP_HELP_11)


def test_bundled_script_help_of_10_is_unchanged(monkeypatch):
    code, out, _ = run_main(["oltp_read_write", "help"], monkeypatch, compat=None)
    assert code == 0 and "--reconnect" not in out and "--create_table_options" not in out
    assert body(out).splitlines()[1:3] == OLTP_HELP_11.splitlines()[1:3]


@needs_ref
@pytest.mark.parametrize("script", ["oltp_read_write", "oltp_point_select", "select_random_ranges", "oltp_insert"])
def test_bundled_script_help_matches_the_11_binary(script, monkeypatch, tmp_path):
    ref = subprocess.run([str(REF_11), script, "help"], capture_output=True, text=True, cwd=tmp_path, timeout=60)
    code, out, _ = run_main([script, "help"], monkeypatch)
    assert (code, body(out)) == (ref.returncode, body(ref.stdout))


# --- --rand-spec-*: 1.1.0 dropped the special distribution and its options ------------------

SPECIAL = ["--rand-spec-iter=5", "--rand-spec-pct=5", "--rand-spec-res=50"]


@pytest.mark.parametrize("option", SPECIAL)
@pytest.mark.parametrize("test", [["cpu", "run"], ["oltp_read_write", "run"], ["oltp_read_write", "help"]])
def test_rand_spec_options_are_invalid_under_11(option, test, monkeypatch):
    code, out, err = run_main([option, *test], monkeypatch)
    assert (code, err) == (1, f"invalid option: {option}\n")
    assert out.startswith("sysbench 1.1.0 (using ")


def test_rand_spec_options_stay_10s(monkeypatch):
    code, out, err = run_main(["--rand-spec-iter=5", "--events=1", "cpu", "run"], monkeypatch, compat=None)
    assert code == 0 and "invalid option" not in out + err


def test_rand_spec_of_a_lua_script_under_11(monkeypatch, tmp_path, capfd):
    """As in 1.1.0: a script without the name refuses it; one declaring it gets its value."""
    plain = tmp_path / "plain.lua"
    plain.write_text("function event() end\n")
    code, _, err = run_main(["--rand-spec-iter=5", str(plain), "run"], monkeypatch)
    assert (code, err) == (1, "invalid option: --rand-spec-iter=5\n")
    mine = tmp_path / "mine.lua"
    mine.write_text(
        'sysbench.cmdline.options = {rand_spec_iter = {"mine", 3}}\n'
        'function event() print("iter " .. sysbench.opt.rand_spec_iter) end\n'
    )
    capfd.readouterr()
    code, _, _ = run_main(["--rand-spec-iter=5", "--events=1", "--verbosity=1", str(mine), "run"], monkeypatch)
    assert (code, capfd.readouterr().out) == (0, "iter 5\n")  # (Lua prints to the process's stdout)


@needs_ref
@pytest.mark.parametrize("option", SPECIAL)
def test_rand_spec_matches_the_11_binary(option, monkeypatch, tmp_path):
    ref = subprocess.run([str(REF_11), option, "cpu", "run"], capture_output=True, text=True, cwd=tmp_path, timeout=60)
    code, out, err = run_main([option, "cpu", "run"], monkeypatch)
    assert (code, body(out), err) == (ref.returncode, body(ref.stdout), ref.stderr)


# --- --thread-init-timeout: 1.1.0 takes any int (alarm()'s unsigned: a negative one never fires) ---


@pytest.mark.parametrize("value", ["-5", "-1", "0"])
def test_thread_init_timeout_takes_any_int_under_11(value, monkeypatch):
    code, out, err = run_main([f"--thread-init-timeout={value}", "--events=1", "cpu", "run"], monkeypatch)
    assert (code, err) == (0, ""), out
    assert "total number of events:              1" in out


def test_thread_init_timeout_keeps_its_bound_under_10(monkeypatch):
    code, out, err = run_main(["--thread-init-timeout=-5", "--events=1", "cpu", "run"], monkeypatch, compat=None)
    assert code == 1 and "Invalid value for --thread-init-timeout: -5 (must be >= 0)" in out + err


@needs_ref
@pytest.mark.parametrize("value", ["-5", "abc", "1.5", "99999999999"])
def test_thread_init_timeout_matches_the_11_binary(value, monkeypatch, tmp_path):
    args = [f"--thread-init-timeout={value}", "--events=1", "cpu", "run"]
    ref = subprocess.run([str(REF_11), *args], capture_output=True, text=True, cwd=tmp_path, timeout=60)
    code, out, err = run_main(args, monkeypatch)
    assert (code, err.strip() or None) == (ref.returncode, ref.stderr.strip() or None)
    if ref.returncode:
        assert out.strip() == ref.stdout.strip()


# --- --mysql-compression-algorithms: 1.1's; 1.1.0 on MariaDB's client takes any value unused ---


@pytest.mark.parametrize("given", ["--mysql-compression-algorithms=zstd", "--mysql-compression-algorithms=zlib,zstd"])
def test_mysql_compression_algorithms_is_an_option_under_11(given, monkeypatch):
    code, out, err = run_main([given, "--events=1", "cpu", "run"], monkeypatch)
    assert (code, err) == (0, ""), out
    assert "invalid option" not in out


def test_mysql_compression_algorithms_is_not_10s(monkeypatch):
    code, _, err = run_main(["--mysql-compression-algorithms=zstd", "cpu", "run"], monkeypatch, compat=None)
    assert (code, err) == (1, "invalid option: --mysql-compression-algorithms=zstd\n")


@needs_ref
def test_mysql_compression_algorithms_matches_the_11_binary(monkeypatch, tmp_path):
    args = ["--mysql-compression-algorithms=bogus", "--events=1", "--verbosity=1", "cpu", "run"]
    ref = subprocess.run([str(REF_11), *args], capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert run_main(args, monkeypatch)[0] == ref.returncode == 0
