"""The result file says which implementation ran the hot path (issue 45): the C extension or
the Python twins, and for a Lua script which Lua and who ran its events; reports show it
beside the tool and the server.  Runs end to end: tests/integration/test_result_file.py."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from pysysbench.core.errors import DamagedResultFile
from pysysbench.report.model import load_runs
from pysysbench.report.tables import environment_rows
from pysysbench.runtime import native
from pysysbench.stats import results

RESULTS = Path(__file__).resolve().parents[1] / "golden" / "data" / "campaign-results"


def test_the_document_names_this_process_s_implementation():
    impl = results.implementation_dict({"lua": "luajit21 (LuaJIT 2.1)", "lua_events": "Python (lupa)"})
    assert impl == {
        "c_extension": native.ENABLED,
        "hot_path": native.describe(),
        "lua": "luajit21 (LuaJIT 2.1)",
        "lua_events": "Python (lupa)",
    }


def _copy(tmp_path: Path, impls: list[dict]) -> Path:
    out = tmp_path / "runs"
    shutil.copytree(RESULTS, out)
    files = sorted(p for p in out.rglob("*.json") if p.name != "manifest.json")
    for path, impl in zip(files, impls * len(files)):
        doc = json.loads(path.read_text())
        doc["implementation"] = impl
        path.write_text(json.dumps(doc))
    return out


def test_reports_show_the_implementation_beside_the_tool(tmp_path):
    c = {"c_extension": True, "hot_path": "C extension"}
    py = {
        "c_extension": False,
        "hot_path": "Python (PYSYSBENCH_NATIVE=off)",
        "lua": "luajit21 (LuaJIT 2.1)",
        "lua_events": "Python (lupa)",
    }
    rows = environment_rows(load_runs([str(_copy(tmp_path, [c, py]))]))
    assert rows[1] == (
        "Implementation",
        "C extension / Python (PYSYSBENCH_NATIVE=off); Lua luajit21 (LuaJIT 2.1), events in Python (lupa)",
    )


def test_older_files_without_it_have_no_row():
    assert "Implementation" not in dict(environment_rows(load_runs([str(RESULTS)])))


def test_a_damaged_implementation_is_named(tmp_path):
    out = _copy(tmp_path, [{"c_extension": "yes", "hot_path": "C extension"}])
    with pytest.raises(DamagedResultFile, match="implementation.c_extension"):
        load_runs([str(out)])
