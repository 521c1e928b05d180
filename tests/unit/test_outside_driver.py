"""A driver registered from outside the package runs the bundled workloads through the
CLI (in worker processes too: engine/outside.py), is picked by its option prefix, passes its
password variable on, and cannot take a name already registered (drivers/base.py
``register``).

The driver here is written against the driver API (drivers/base.py) with the dry run's
session underneath, keeping every statement it is asked to run, so the test can see what
the workload sent it."""

from __future__ import annotations

import re
from typing import Any

import pytest

from pysysbench.cli.main import main
from pysysbench.command.cmdline import choose_driver, parse
from pysysbench.core.errors import ConfigError
from pysysbench.core.options import Option, OptType
from pysysbench.drivers import REGISTRY
from pysysbench.drivers.base import Connection, Counters, Dialect, Driver, DriverCaps, register
from pysysbench.drivers.dryrun import DryRunConnection
from pysysbench.engine.raygroup import pass_env

SENT: list[tuple[str, tuple]] = []  # (sql, parameters) of every execution, in order


class TallyConnection(DryRunConnection):
    """The dry run's session (every call succeeds), keeping what it runs."""

    async def prepare(self, sql: str):
        c = self.counters

        async def stmt(*args: Any) -> None:
            SENT.append((sql, args))
            if sql.startswith("SELECT"):
                c.reads += 1
            elif sql.startswith(("UPDATE", "DELETE", "INSERT")):
                c.writes += 1
            else:
                c.others += 1

        return stmt

    async def query(self, sql: str) -> None:
        SENT.append((sql, ()))
        self.counters.others += 1


class TallyDriver(Driver):
    name = "tally"
    description = "keeps what it is sent (a test's driver)"
    options = [Option("tally-label", OptType.STRING, "", "a label", "tally options")]
    option_prefix = "tally"
    password_env = "PYSYSBENCH_TALLY_PASSWORD"
    caps = DriverCaps(server_prepare=False)
    dialect = Dialect(id_auto_inc="INTEGER NOT NULL")

    def target(self) -> str:
        return "the tally"

    async def connect(self, counters: Counters | None = None, index: int = 0) -> Connection:
        return TallyConnection(counters or Counters(), self.dialect)

    async def _version(self, conn: Connection) -> str:
        return "tally 1"


@pytest.fixture(autouse=True)
def tally():
    """The driver is registered for each test only (other tests list the drivers)."""
    register(TallyDriver)
    SENT.clear()
    try:
        yield
    finally:
        REGISTRY.pop("tally", None)


def summary(text: str, what: str) -> int:
    return int(re.search(rf"{what}:\s+(\d+)", text).group(1))


def test_runs_a_workload_through_the_cli(capsys):
    rc = main(
        [
            "oltp_point_select",
            "--db-driver=tally",
            "--tables=2",
            "--table-size=500",
            "--threads=1",
            "--events=40",
            "--time=0",
            "run",
        ]
    )
    out = capsys.readouterr().out
    assert rc == 0, out
    points = [(sql, args) for sql, args in SENT if sql.startswith("SELECT c FROM sbtest")]
    assert len(points) == 40 and summary(out, "read") == 40, out
    assert all(
        re.fullmatch(r"SELECT c FROM sbtest[12] WHERE id=\?", sql) and 1 <= args[0] <= 500 for sql, args in points
    )


def test_a_time_limited_run_sends_the_bundled_event(capsys):
    rc = main(["oltp_read_write", "--db-driver=tally", "--threads=1", "--time=1", "run"])
    out = capsys.readouterr().out
    assert rc == 0, out
    events = summary(out, "transactions")
    assert events > 0 and summary(out, "read") == 14 * events and summary(out, "write") == 4 * events, out


def test_its_option_prefix_picks_it():
    assert choose_driver(parse(["oltp_point_select", "--tally-label=x", "run"]).values) == "tally"
    with pytest.raises(ConfigError, match=r"both --mysql-\* and --tally-\* options were given"):
        choose_driver(parse(["oltp_point_select", "--tally-label=x", "--mysql-host=h", "run"]).values)


def test_its_password_variable_goes_to_ray_actors():
    assert {
        "PYSYSBENCH_TALLY_PASSWORD",
        "PYSYSBENCH_MYSQL_PASSWORD",
        "PYSYSBENCH_PGSQL_PASSWORD",
        "PYSYSBENCH_NATIVE",
    } <= set(pass_env())


def test_a_taken_name_is_refused():
    class Impostor(TallyDriver):
        name = "mysql"

    before = dict(REGISTRY)
    with pytest.raises(ConfigError, match="a database driver named 'mysql' is already registered"):
        register(Impostor)
    with pytest.raises(ConfigError, match="named 'tally' is already registered"):
        register(TallyDriver)
    assert REGISTRY == before


# --- worker processes (and Ray actors) bring the outside classes in (engine/outside.py) ---


@pytest.mark.parametrize("start", ["spawn", "fork"])
def test_worker_processes_import_the_module_that_registered_it(capsys, monkeypatch, start):
    """--workers=2: a spawned worker is a fresh interpreter; it imports this module (named in
    the child's start) and registers the driver before looking it up (a forked one has it)."""
    monkeypatch.setenv("PYSYSBENCH_WORKER_START", start)
    rc = main(
        [
            "oltp_point_select",
            "--db-driver=tally",
            "--tables=2",
            "--table-size=500",
            "--threads=2",
            "--workers=2",
            "--events=40",
            "--time=0",
            "run",
        ]
    )
    out = capsys.readouterr().out
    assert rc == 0, out
    assert summary(out, "read") == 40 and summary(out, "transactions") == 40, out
    assert not SENT, "the statements were run in this process, not in the workers"


SCRIPT = '''
import sys
from pysysbench.cli.main import main
from pysysbench.drivers.base import Dialect, Driver, DriverCaps, register
from pysysbench.drivers.dryrun import DryRunConnection
from pysysbench.workloads import register as register_workload
from pysysbench.workloads.oltp import OltpPointSelect


class ScriptDriver(Driver):
    name = "script_tally"
    description = "a driver defined in a script"
    caps = DriverCaps(server_prepare=False)
    dialect = Dialect(id_auto_inc="INTEGER NOT NULL")

    def target(self):
        return "the script"

    async def connect(self, counters=None, index=0):
        return DryRunConnection(counters, self.dialect)

    async def _version(self, conn):
        return "script 1"


class ScriptPoints(OltpPointSelect):
    """point selects under another name"""
    name = "script_points"


if __name__ == "__main__":      # registered in the parent only: spawn's copy of the script skips this
    register(ScriptDriver)
    register_workload(ScriptPoints)
    sys.exit(main(sys.argv[1:]))
'''


def test_classes_of_the_main_script_reach_the_workers(tmp_path):
    """A driver and a workload defined in the user's script and registered under its
    ``__main__`` guard: the workers find them in their copy of the script."""
    import os
    import subprocess
    import sys

    script = tmp_path / "bench_it.py"
    script.write_text(SCRIPT)
    env = dict(os.environ, PYSYSBENCH_WORKER_START="spawn")  # a forked worker would inherit them
    proc = subprocess.run(
        [
            sys.executable,
            str(script),
            "script_points",
            "--db-driver=script_tally",
            "--tables=1",
            "--table-size=100",
            "--threads=2",
            "--workers=2",
            "--events=30",
            "--time=0",
            "run",
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert summary(proc.stdout, "transactions") == 30, proc.stdout


def test_a_class_that_cannot_be_brought_in_is_one_line():
    from pysysbench.engine.outside import Origin, bring_in

    lost = Origin("driver", "vanished", "no_such_module_here", "VanishedDriver", None)
    with pytest.raises(ConfigError) as info:
        bring_in((lost,))
    message = str(info.value)
    assert "\n" not in message and "'vanished' (no_such_module_here.VanishedDriver) cannot be loaded" in message
    assert "vanished" not in REGISTRY


def test_only_outside_classes_are_carried():
    from pysysbench.engine.outside import origins

    assert [(o.kind, o.name, o.qualname) for o in origins()] == [("driver", "tally", "TallyDriver")]
    assert origins()[0].path == __file__
