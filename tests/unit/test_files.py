"""pysysbench.files: the one save path of result files, manifests, reports and exports."""

from __future__ import annotations

import json
import os
import stat

import pytest

from pysysbench import results
from pysysbench.errors import UsageError
from pysysbench.files import check_writable, write_atomic


def mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def test_a_new_file_gets_the_mode_open_would_give(tmp_path):
    """mkstemp's 0600 must not leak into result files (reports and exports are shared)."""
    old = os.umask(0o022)
    try:
        results.save(str(tmp_path / "r.json"), {"format": results.FORMAT})
    finally:
        os.umask(old)
    assert mode(tmp_path / "r.json") == 0o644
    assert json.loads((tmp_path / "r.json").read_text()) == {"format": results.FORMAT}


def test_a_replaced_file_keeps_its_mode(tmp_path):
    path = tmp_path / "report.md"
    path.write_text("old")
    os.chmod(path, 0o640)
    write_atomic(str(path), "new", "report")
    assert path.read_text() == "new" and mode(path) == 0o640


def test_missing_directories_are_created(tmp_path):
    path = tmp_path / "a" / "b" / "r.json"
    check_writable(str(path))
    write_atomic(str(path), b"\x89PNG", "report")
    assert path.read_bytes() == b"\x89PNG"
    assert [p.name for p in (tmp_path / "a" / "b").iterdir()] == ["r.json"]   # the probe left nothing


@pytest.mark.parametrize("check", [check_writable, lambda p, what: write_atomic(p, "x", what)],
                         ids=["check", "write"])
def test_a_directory_is_one_line_and_leaves_nothing(tmp_path, check):
    with pytest.raises(UsageError) as ei:
        check(str(tmp_path), "export")
    assert str(ei.value) == f"cannot write export '{tmp_path}': it is a directory: give a file name"
    assert list(tmp_path.iterdir()) == []
