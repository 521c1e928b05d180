"""scripts/server_settings.py: CI's check that the machine's database servers end the
run with the settings they had at its start (and were not restarted), fed with two
snapshots written here."""

import importlib.util
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "server_settings.py"

BEFORE = {
    ("mariadb", "max_connections"): "151",
    ("mariadb", "general_log"): "OFF",
    ("mariadb", "log_output"): "FILE",
    ("mariadb", "gtid_binlog_pos"): "0-1-10",
    ("mariadb", "gtid_current_pos"): "0-1-10",
    ("mariadb", "(started)"): "1796522606",
    ("postgresql", "max_connections"): "100",
    ("postgresql", "shared_preload_libraries"): "",
    ("postgresql", "log_line_prefix"): "%m [%p] %q%u@%d ",
    ("postgresql", "(started)"): "2026-12-06 02:03:02.964702+00",
}


@pytest.fixture(scope="module")
def script():
    spec = importlib.util.spec_from_file_location("server_settings_under_test", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    try:
        spec.loader.exec_module(module)
        yield module
    finally:
        sys.modules.pop(spec.name, None)


def write(path: Path, values: dict) -> Path:
    path.write_text("".join(f"{s}\t{n}\t{v}\n" for (s, n), v in values.items()))
    return path


def check(script, tmp_path, capsys, after: dict) -> tuple[int, str, str]:
    rc = script.main(["compare", str(write(tmp_path / "before", BEFORE)), str(write(tmp_path / "after", after))])
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_the_same_settings_pass(script, tmp_path, capsys):
    rc, out, err = check(script, tmp_path, capsys, dict(BEFORE))
    assert rc == 0 and err == ""
    assert "the servers are as they were found: MariaDB 5 variables, PostgreSQL 3 settings, neither restarted" in out


def test_a_changed_global_fails_with_before_and_after(script, tmp_path, capsys):
    rc, out, err = check(
        script,
        tmp_path,
        capsys,
        {
            **BEFORE,
            ("mariadb", "max_connections"): "2000",
            ("postgresql", "shared_preload_libraries"): "pg_stat_statements",
        },
    )
    assert rc == 1 and out == ""
    assert "the database servers are not as they were found" in err
    assert "  mariadb max_connections: '151' -> '2000'\n" in err
    assert "  postgresql shared_preload_libraries: '' -> 'pg_stat_statements'\n" in err


def test_a_general_log_left_on_fails(script, tmp_path, capsys):
    rc, _, err = check(
        script, tmp_path, capsys, {**BEFORE, ("mariadb", "general_log"): "ON", ("mariadb", "log_output"): "TABLE"}
    )
    assert rc == 1
    assert "  mariadb general_log: 'OFF' -> 'ON'\n" in err and "  mariadb log_output: 'FILE' -> 'TABLE'\n" in err


def test_a_setting_that_appears_or_disappears_fails(script, tmp_path, capsys):
    after = {**BEFORE, ("postgresql", "[role sbtest, database sbtest]"): "log_statement=all"}
    del after[("postgresql", "log_line_prefix")]
    rc, _, err = check(script, tmp_path, capsys, after)
    assert rc == 1
    assert "  postgresql [role sbtest, database sbtest]: (absent) -> 'log_statement=all'\n" in err
    assert "  postgresql log_line_prefix: '%m [%p] %q%u@%d ' -> (absent)\n" in err


def test_gtid_positions_move_by_themselves(script, tmp_path, capsys):
    rc, out, _ = check(
        script,
        tmp_path,
        capsys,
        {**BEFORE, ("mariadb", "gtid_binlog_pos"): "0-1-99", ("mariadb", "gtid_current_pos"): "0-1-99"},
    )
    assert rc == 0 and "ignored, they move by themselves: gtid_binlog_pos, gtid_binlog_state" in out
    assert all(reason for reason in script.IGNORED.values())


def test_a_restart_fails_even_with_the_same_settings(script, tmp_path, capsys):
    rc, _, err = check(script, tmp_path, capsys, {**BEFORE, ("postgresql", "(started)"): "2026-12-06 02:40:00+00"})
    assert rc == 1
    assert "  postgresql was restarted: started '2026-12-06 02:03:02.964702+00', now '2026-12-06 02:40:00+00'" in err


def test_mariadb_start_time_within_a_second_or_two_is_the_same_start(script, tmp_path, capsys):
    # now - Uptime, in whole seconds: two readings of one start may differ by one
    assert check(script, tmp_path, capsys, {**BEFORE, ("mariadb", "(started)"): "1796522607"})[0] == 0
    rc, _, err = check(script, tmp_path, capsys, {**BEFORE, ("mariadb", "(started)"): "1796526000"})
    assert rc == 1 and "  mariadb was restarted: started '1796522606', now '1796526000'" in err


def test_an_unreadable_snapshot_is_an_error_not_a_pass(script, tmp_path, capsys):
    (tmp_path / "empty").write_text("")
    rc = script.main(["compare", str(write(tmp_path / "before", BEFORE)), str(tmp_path / "empty")])
    assert rc == 2 and "no mariadb settings in it" in capsys.readouterr().err
    (tmp_path / "bad").write_text("max_connections 151\n")
    rc = script.main(["compare", str(tmp_path / "bad"), str(write(tmp_path / "after", BEFORE))])
    assert rc == 2 and "not a 'server<TAB>name<TAB>value' line" in capsys.readouterr().err


def test_snapshot_of_an_unreachable_server_is_one_error_line(script, tmp_path, capsys):
    # port 1: nothing listens there
    rc = script.main(["snapshot", str(tmp_path / "snap"), "--my-port=1", "--pg-port=1"])
    err = capsys.readouterr().err
    assert rc == 2 and err.startswith("server-settings: ERROR: cannot read the settings of MariaDB on 127.0.0.1:1")
    assert "Traceback" not in err and not (tmp_path / "snap").exists()
