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
import string

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pysysbench import results
from pysysbench.cli.compat import base_registry, parse
from pysysbench.cli.main import main
from pysysbench.errors import PySysbenchError
from pysysbench.options import read_config_file
from pysysbench.workloads import REGISTRY

# everything except the network drivers' options (the property must not touch shared servers)
GENERAL_NAMES = sorted(o.name for o in base_registry() if not o.name.startswith(("mysql", "pgsql", "db-driver",
                                                                                   "config-file", "result-file",
                                                                                   "sqlite-db")))
WORKLOAD_NAMES = ["tables", "table_size", "range_size", "point_selects", "skip_trx", "auto_inc",
                  "create_secondary", "secondary", "delete_inserts", "random_points", "number_of_ranges"]
WORDS = sorted(REGISTRY) + ["prepare", "run", "cleanup", "help", "check", "prewarm", "bogus", "-", "x.py",
                            "oltp_common", "/usr/share/sysbench/oltp_read_only.lua"]
SAFE_LIMITS = ["--threads=1", "--workers=1", "--time=1", "--events=3", "--table-size=5", "--tables=1",
               "--rate=0", "--report-interval=0", "--warmup-time=0", "--thread-init-timeout=5", "--histogram=off",
               "--report-checkpoints=", "--forced-shutdown=off"]

values = st.one_of(st.none(), st.text(string.printable, max_size=12),
                   st.sampled_from(["on", "off", "0", "1", "-1", "1e3", "abc", "", "10G", "special", "zipfian",
                                    "99999999999999999999", "1.5", "auto", "disable"]))
option = st.builds(lambda n, v: f"--{n}" if v is None else f"--{n}={v}",
                   st.sampled_from(GENERAL_NAMES + WORKLOAD_NAMES + ["bogus-option"]), values)
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
    debug = any(a.split("=", 1)[0] == "--debug" and a.split("=", 1)[-1].lower() not in ("off", "0", "false")
                for a in args)
    if not debug:   # --debug deliberately adds a traceback to an error line
        assert "Traceback" not in output
    assert "internal error" not in output, output
    if code != 0:
        errors = [line for line in output.splitlines()
                  if line.startswith("FATAL:") or line.lower().startswith(("invalid", "unknown", "unrecognized",
                                                                          "cannot", "usage"))]
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
@given(content=st.one_of(st.binary(max_size=200), st.text(max_size=200).map(str.encode),
                         st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=5),
                                      lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=5), c,
                                                                                         max_size=3),
                                      max_leaves=8).map(lambda o: json.dumps(o).encode())))
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
    if os.geteuid() != 0:   # root reads anything
        p = tmp_path / "locked.conf"
        p.write_text("threads=2\n")
        p.chmod(0)
        with pytest.raises(PySysbenchError):
            read_config_file(str(p))
