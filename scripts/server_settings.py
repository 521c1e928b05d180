#!/usr/bin/env python3
"""Snapshot the machine's database servers' settings, and compare two snapshots.

CI (.ci/run) takes a snapshot before it does anything and another at the end, and
fails when they differ: the test suite must leave the servers as it found them.

    python3 scripts/server_settings.py snapshot FILE [--my-port=3306] [--pg-port=5432]
    python3 scripts/server_settings.py compare BEFORE AFTER

A snapshot holds, one ``server<TAB>name<TAB>value`` line each:

* MariaDB: ``SHOW GLOBAL VARIABLES`` (as root over TCP);
* PostgreSQL: ``pg_settings`` name and setting (as postgres over TCP), plus the
  per-role / per-database settings (``ALTER ROLE ... SET``, ``ALTER DATABASE ... SET``)
  as ``[role R, database D]`` lines;
* when each server started (``(started)``): a restart shows even when it brought the
  same settings back.

``compare`` prints every difference and exits 1 when there is one, 0 otherwise
(2: a snapshot is unreadable).  Standard library only: it runs before the venv exists.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

# Values that change by themselves while the server runs, never because a test changed a
# setting: ignored by compare.  PostgreSQL's pg_settings has none (its session-level rows
# are the same each time because the snapshot always connects the same way: same user,
# database and client, PGOPTIONS/PGTZ/PGAPPNAME cleared).
IGNORED: dict[tuple[str, str], str] = {
    ("mariadb", "gtid_binlog_pos"): "advances with every transaction written to the binary log",
    ("mariadb", "gtid_binlog_state"): "advances with every transaction written to the binary log",
    ("mariadb", "gtid_current_pos"): "advances with every transaction written to the binary log or replicated",
    ("mariadb", "gtid_slave_pos"): "advances as a replica applies its primary's transactions",
}
STARTED = "(started)"
# MariaDB's start time is now - Uptime, both in whole seconds: two readings of one
# server's start can differ by a second
MARIADB_START_SLACK_S = 2

PREFIX = "server-settings"


class SnapshotError(Exception):
    pass


def _run(cmd: list[str], what: str) -> str:
    env = {k: v for k, v in os.environ.items() if k not in ("PGOPTIONS", "PGTZ", "PGAPPNAME", "PGDATESTYLE")}
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60, env=env)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise SnapshotError(f"{what}: {exc}") from None
    if proc.returncode != 0:
        raise SnapshotError(f"{what}: {' '.join(cmd[:1])} exited with {proc.returncode}: {proc.stderr.strip()}")
    return proc.stdout


def _pairs(text: str, sep: str) -> list[tuple[str, str]]:
    out = []
    for line in text.splitlines():
        name, _, value = line.partition(sep)
        out.append((name, value))
    return out


def mariadb_lines(host: str, port: int) -> list[str]:
    base = ["mysql", "--protocol=TCP", f"-h{host}", f"-P{port}", "-uroot", "--batch", "--skip-column-names"]
    what = f"MariaDB on {host}:{port}"
    # --batch escapes tabs and newlines inside values (\t, \n): one line per variable
    rows = _pairs(_run([*base, "-e", "SHOW GLOBAL VARIABLES"], what), "\t")
    started = _run(
        [
            *base,
            "-e",
            "SELECT UNIX_TIMESTAMP() - VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS "
            "WHERE VARIABLE_NAME = 'UPTIME'",
        ],
        what,
    ).strip()
    return [f"mariadb\t{n}\t{v}" for n, v in rows] + [f"mariadb\t{STARTED}\t{started}"]


_PG_SQL = r"""
SELECT name, setting FROM pg_settings
UNION ALL
SELECT format('[role %s, database %s]', coalesce(r.rolname, '*'), coalesce(d.datname, '*')),
       array_to_string(s.setconfig, ', ')
  FROM pg_db_role_setting s
  LEFT JOIN pg_roles r ON r.oid = s.setrole
  LEFT JOIN pg_database d ON d.oid = s.setdatabase
UNION ALL
SELECT '(started)', pg_postmaster_start_time()::text
"""


def postgresql_lines(host: str, port: int) -> list[str]:
    sql = f"SELECT name, replace(replace(setting, E'\\t', '\\t'), E'\\n', '\\n') FROM ({_PG_SQL}) s ORDER BY 1"
    out = _run(
        [
            "psql",
            "-X",
            "-w",
            "-At",
            "-F",
            "\t",
            "-v",
            "ON_ERROR_STOP=1",
            "-h",
            host,
            "-p",
            str(port),
            "-U",
            "postgres",
            "-d",
            "postgres",
            "-c",
            sql,
        ],
        f"PostgreSQL on {host}:{port}",
    )
    return [f"postgresql\t{n}\t{v}" for n, v in _pairs(out, "\t")]


def snapshot(host: str, my_port: int, pg_port: int) -> str:
    return "\n".join(mariadb_lines(host, my_port) + postgresql_lines(host, pg_port)) + "\n"


def parse(text: str, source: str) -> dict[tuple[str, str], str]:
    values: dict[tuple[str, str], str] = {}
    for number, line in enumerate(text.splitlines(), 1):
        parts = line.split("\t", 2)
        if len(parts) != 3 or parts[0] not in ("mariadb", "postgresql"):
            raise SnapshotError(f"{source}:{number}: not a 'server<TAB>name<TAB>value' line: {line!r}")
        values[(parts[0], parts[1])] = parts[2]
    for server in ("mariadb", "postgresql"):
        if not any(s == server for s, _ in values):
            raise SnapshotError(f"{source}: no {server} settings in it")
    return values


def _show(value: str | None) -> str:
    return "(absent)" if value is None else repr(value)


def differences(before: dict[tuple[str, str], str], after: dict[tuple[str, str], str]) -> list[str]:
    """One line per setting that changed, appeared or disappeared (IGNORED left out)."""
    out = []
    for key in sorted(before.keys() | after.keys()):
        if key in IGNORED:
            continue
        server, name = key
        a, b = before.get(key), after.get(key)
        if a == b:
            continue
        if name == STARTED:
            if server == "mariadb" and a is not None and b is not None:
                try:
                    if abs(int(float(a)) - int(float(b))) <= MARIADB_START_SLACK_S:
                        continue
                except ValueError:
                    pass
            out.append(f"  {server} was restarted: started {_show(a)}, now {_show(b)}")
            continue
        out.append(f"  {server} {name}: {_show(a)} -> {_show(b)}")
    return out


def compare(before_path: Path, after_path: Path) -> int:
    try:
        before = parse(before_path.read_text(), str(before_path))
        after = parse(after_path.read_text(), str(after_path))
    except (OSError, SnapshotError) as exc:
        print(f"{PREFIX}: ERROR: {exc}", file=sys.stderr)
        return 2
    diff = differences(before, after)
    if diff:
        print(
            f"{PREFIX}: ERROR: the database servers are not as they were found ({before_path} -> {after_path}):",
            file=sys.stderr,
        )
        print("\n".join(diff), file=sys.stderr)
        print(
            f"{PREFIX}: tests and CI must restore every global setting they change and never restart "
            "these servers (use a private server: tests/integration/private_servers.py)",
            file=sys.stderr,
        )
        return 1
    counts = {s: sum(1 for k in before if k[0] == s and k[1] != STARTED) for s in ("mariadb", "postgresql")}
    ignored = sorted({n for s, n in IGNORED})
    print(
        f"{PREFIX}: the servers are as they were found: MariaDB {counts['mariadb']} variables, "
        f"PostgreSQL {counts['postgresql']} settings, neither restarted (ignored, they move by themselves: "
        f"{', '.join(ignored)})"
    )
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="server_settings.py", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    s = sub.add_parser("snapshot", help="write the servers' settings to FILE")
    s.add_argument("file", type=Path)
    s.add_argument("--host", default="127.0.0.1")
    s.add_argument("--my-port", type=int, default=3306)
    s.add_argument("--pg-port", type=int, default=5432)
    c = sub.add_parser("compare", help="exit 1 and print the differences if the snapshots differ")
    c.add_argument("before", type=Path)
    c.add_argument("after", type=Path)
    a = p.parse_args(argv)
    if a.command == "compare":
        return compare(a.before, a.after)
    try:
        text = snapshot(a.host, a.my_port, a.pg_port)
    except SnapshotError as exc:
        print(f"{PREFIX}: ERROR: cannot read the settings of {exc}", file=sys.stderr)
        return 2
    a.file.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
