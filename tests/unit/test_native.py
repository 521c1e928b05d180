"""The one native switch (pysysbench/runtime/native.py): ``PYSYSBENCH_NATIVE=off`` puts every
C twin out of use at once -- draws, recorder, event loop, wire core, statement,
scanners, Bind, strand core, the built-in tests' loops -- and nothing but native.py imports the C extension,
so no module can keep using C behind the switch's back."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parents[2] / "pysysbench"

# each twin as the module that uses it sees it: True = the C object is in use
IN_USE = """
import json
from pysysbench.runtime import native
from pysysbench.core.rand import Rand
from pysysbench.drivers import wire
from pysysbench.drivers.mysql import scan as myscan
from pysysbench.drivers.pgsql import scan as pgscan, wire as pgwire
from pysysbench.drivers.base import Counters
from pysysbench.engine import strand, worker
from pysysbench.stats import recorder
from pysysbench.workloads import builtin_core
print(json.dumps({
    "enabled": native.ENABLED,
    "draws": not hasattr(Rand(1).special, "__func__"),
    "recorder": isinstance(recorder.make_recorder(Counters(), range(0, 2)), recorder.CRecorder),
    "event loop": worker._CEventLoop is not None,
    "wire core": wire._WireCore is not wire._PyWireCore,
    "statement": wire._CStatement is not None,
    "mysql scan": myscan.mysql_scan_fast is not myscan.mysql_scan,
    "pg scan": pgscan.pg_scan_fast is not pgscan.pg_scan,
    "pg bind": pgwire.pg_bind_fast is not pgwire._py_pg_bind,
    "strand core": strand._StrandCore is not strand._PyStrandCore,
    "builtin tests": builtin_core.is_native(),
}))
"""


def twins_in_use(setting: str | None) -> dict[str, bool]:
    env = {k: v for k, v in os.environ.items() if k != "PYSYSBENCH_NATIVE"}
    if setting is not None:
        env["PYSYSBENCH_NATIVE"] = setting
    out = subprocess.run(
        [sys.executable, "-c", IN_USE], capture_output=True, text=True, env=env, cwd=PKG.parent, check=True
    ).stdout
    return json.loads(out)


@pytest.mark.parametrize("setting", ["off", "OFF", "0"])
def test_off_runs_every_twin_in_python(setting):
    used = twins_in_use(setting)
    assert not any(used.values()), used


def test_on_uses_every_c_twin_when_built():
    used = twins_in_use("on")
    if not used["enabled"]:
        pytest.skip("the C extension is not built")
    assert all(used.values()), used
    assert twins_in_use(None) == used


def test_a_bad_setting_is_one_line_and_exit_1():
    env = {**os.environ, "PYSYSBENCH_NATIVE": "maybe"}
    proc = subprocess.run(
        [sys.executable, "-m", "pysysbench", "oltp_point_select", "run"],
        capture_output=True,
        text=True,
        env=env,
        cwd=PKG.parent,
    )
    assert proc.returncode == 1
    assert proc.stdout.strip().splitlines() == [
        "FATAL: invalid value of the environment variable PYSYSBENCH_NATIVE: 'maybe' "
        "(use 'off' to run without the C extension, or 'on')"
    ], proc.stdout
    assert "Traceback" not in proc.stderr


# the package's C extension modules: built ones, and those a C source defines
_EXTENSIONS = {p.name.split(".")[0] for p in PKG.glob("_*.so")} | {
    p.stem for p in PKG.rglob("*.c") if "PyMODINIT_FUNC" in p.read_text()
}


def _imports_extension(path: Path) -> list[int]:
    """Lines of ``path`` that import one of the package's C extension modules."""
    lines = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            names = [node.module or ""] + [a.name for a in node.names]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        else:
            continue
        if any(n.split(".")[-1] in _EXTENSIONS for n in names):
            lines.append(node.lineno)
    return lines


def test_only_native_imports_the_c_extension():
    assert _EXTENSIONS, "no C extension source found"
    bad = {
        str(p.relative_to(PKG)): lines
        for p in PKG.rglob("*.py")
        if p.name != "native.py" and (lines := _imports_extension(p))
    }
    assert not bad, f"C extension imported outside pysysbench/runtime/native.py: {bad}"
