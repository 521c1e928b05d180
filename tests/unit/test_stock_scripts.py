"""A bundled or 0.5 test name runs natively only while the file sysbench would run there is
the stock script (workloads/stock.py): an edited copy -- the script, or the oltp_common.lua /
common.lua it loads -- runs through the Lua engine, as sysbench would run it."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from pysysbench.cli.main import main
from pysysbench.workloads import find_workload, legacy, oltp, stock

PKG = Path("/usr/share/sysbench")
needs_package = pytest.mark.skipif(
    not (PKG / "oltp_common.lua").is_file(), reason="the sysbench package's scripts are not installed"
)
# a 0.5-style oltp.lua with its common.lua (what a 0.5 tree has in tests/db/): stands in for
# an edited copy; the stock digests are of sysbench 1.0.20's own copies
LEGACY_OLTP = (
    'pathtest = string.match(test, "(.*/)") or ""\ndofile(pathtest .. "common.lua")\n'
    "function event(thread_id) print('edited oltp.lua') end\n"
)


def _is_lua(cls) -> bool:
    return cls.__name__ == "LuaScript"


def _edit(path: Path) -> None:
    path.write_text(path.read_text() + "\n-- edited by a user\n")


@needs_package
def test_a_stock_copy_runs_natively_an_edited_one_through_lua(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for name in ("oltp_read_write.lua", "oltp_common.lua"):
        shutil.copy(PKG / name, tmp_path / name)
    assert find_workload("./oltp_read_write.lua") is oltp.OltpReadWrite
    assert find_workload("oltp_read_write") is oltp.OltpReadWrite  # ./oltp_read_write.lua, stock
    _edit(tmp_path / "oltp_common.lua")  # what require("oltp_common") loads from here
    assert _is_lua(find_workload("oltp_read_write"))
    assert _is_lua(find_workload(str(PKG / "oltp_read_write.lua")))
    shutil.copy(PKG / "oltp_common.lua", tmp_path / "oltp_common.lua")
    _edit(tmp_path / "oltp_read_write.lua")
    cls = find_workload("./oltp_read_write.lua")
    assert _is_lua(cls) and cls.source == "lua:./oltp_read_write.lua"
    assert _is_lua(find_workload("oltp_read_write"))
    assert find_workload(str(PKG / "oltp_read_write.lua")) is oltp.OltpReadWrite
    assert find_workload("oltp_point_select") is oltp.OltpPointSelect


def test_names_without_a_script_keep_their_native_workload(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "cpu").write_text("not a script")
    assert find_workload("cpu").__name__ == "Cpu"
    assert find_workload("tests/db/oltp.lua") is legacy.Oltp  # no such file: the 0.5 workload
    assert stock.edited_bundled("cpu") is None and stock.edited_legacy("tests/db/oltp.lua") is None


def test_an_edited_legacy_script_or_its_common_runs_through_lua(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    db = tmp_path / "tests" / "db"
    db.mkdir(parents=True)
    (db / "oltp.lua").write_text(LEGACY_OLTP)
    (db / "common.lua").write_text("function set_vars() end\n")
    assert stock.edited_legacy("tests/db/oltp.lua") == "tests/db/oltp.lua"
    assert _is_lua(find_workload("tests/db/oltp.lua"))
    assert find_workload("tests/db/select.lua") is legacy.Select  # not on disk
    (db / "select.lua").write_text("-- stock?\n")
    assert _is_lua(find_workload("tests/db/select.lua"))


def test_the_stock_1_0_20_legacy_scripts_are_known():
    conformance = Path(
        os.environ.get("PYSYSBENCH_CONFORMANCE_DIR", Path(__file__).resolve().parents[3] / "shared" / "conformance")
    )
    folder = conformance / "sysbench-1.0.20-tests" / "include" / "oltp_legacy"
    if not folder.is_dir():
        pytest.skip("sysbench 1.0.20's tests/include/oltp_legacy is not beside the repository")
    scripts = sorted(folder.glob("*.lua"))
    assert len(scripts) == 12
    assert all(stock.digest(str(p)) in stock.STOCK_DIGESTS for p in scripts)
    assert stock.edited_legacy(str(folder / "oltp.lua")) is None


@needs_package
def test_the_package_scripts_are_known():
    scripts = sorted(p.name for p in PKG.glob("*.lua"))
    assert [s[:-4] for s in scripts] == sorted(stock.SCRIPT_NAMES)
    assert all(stock.digest(str(PKG / s)) in stock.STOCK_DIGESTS for s in scripts)


@needs_package
def test_an_edited_script_runs_with_its_edits(tmp_path, monkeypatch, capfd):
    # the edit is what runs: an extra statement counted and a line of its own each event
    db = ["--db-driver=sqlite", f"--sqlite-db={tmp_path / 'x.db'}", "--tables=1", "--table-size=100"]
    assert main(["oltp_point_select", *db, "prepare"]) == 0  # natively: the package's Lua knows no SQLite
    monkeypatch.chdir(tmp_path)
    for name in ("oltp_point_select.lua", "oltp_common.lua"):
        shutil.copy(PKG / name, tmp_path / name)
    script = tmp_path / "oltp_point_select.lua"
    script.write_text(
        script.read_text().replace(
            "function event()", "function event()\n   print('edited event')\n   con:query('SELECT 1')", 1
        )
    )
    capfd.readouterr()
    assert main(["oltp_point_select", *db, "--threads=1", "--workers=1", "--events=5", "run"]) == 0
    out = capfd.readouterr().out
    assert out.count("edited event") == 5
    assert "read:                            10" in out  # 5 point selects + 5 SELECT 1
