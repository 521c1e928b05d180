"""pysysbench.core.files: the one save path of result files, manifests, reports and exports."""

from __future__ import annotations

import json
import os
import stat

import pytest

from pysysbench.core.errors import UsageError
from pysysbench.core.files import check_writable, private_file, write_atomic
from pysysbench.stats import results


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
    assert [p.name for p in (tmp_path / "a" / "b").iterdir()] == ["r.json"]  # the probe left nothing


@pytest.mark.parametrize("check", [check_writable, lambda p, what: write_atomic(p, "x", what)], ids=["check", "write"])
def test_a_directory_is_one_line_and_leaves_nothing(tmp_path, check):
    with pytest.raises(UsageError) as ei:
        check(str(tmp_path), "export")
    assert str(ei.value) == f"cannot write export '{tmp_path}': it is a directory: give a file name"
    assert list(tmp_path.iterdir()) == []


def test_the_data_is_fsynced_before_the_rename_and_the_directory_after(tmp_path, monkeypatch):
    """Durable as well as atomic (issue 16 point 6): the temporary file's whole content
    reaches the disk before it takes the target's name, and the rename itself after."""
    calls = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd):
        st = os.fstat(fd)
        calls.append(("fsync", "directory" if stat.S_ISDIR(st.st_mode) else st.st_size))
        real_fsync(fd)

    def replace(src, dst):
        calls.append(("replace", os.path.basename(src).startswith(".pysysbench-"), str(dst)))
        real_replace(src, dst)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "replace", replace)
    path = tmp_path / "r.json"
    write_atomic(str(path), "x" * 5000)
    assert calls == [("fsync", 5000), ("replace", True, str(path)), ("fsync", "directory")]


def test_a_failed_fsync_keeps_the_old_file_and_leaves_no_temporary_file(tmp_path, monkeypatch):
    path = tmp_path / "r.json"
    path.write_text("old")

    def fsync(fd):
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(os, "fsync", fsync)
    with pytest.raises(UsageError) as ei:
        write_atomic(str(path), "new")
    assert str(ei.value) == f"cannot write result file '{path}': input/output error"
    assert path.read_text() == "old" and [p.name for p in tmp_path.iterdir()] == ["r.json"]


def test_private_file_is_new_and_the_users_alone_and_gives_up_after_100_names(tmp_path, monkeypatch):
    fd, path = private_file(str(tmp_path), "pysysbench-x-", "the test", ".luac")
    os.close(fd)
    name = os.path.basename(path)
    assert name.startswith("pysysbench-x-") and name.endswith(".luac") and os.path.dirname(path) == str(tmp_path)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    monkeypatch.setattr(os, "urandom", lambda n: b"\x00" * n)  # every name the same: taken
    (tmp_path / f"pysysbench-x-{'00' * 6}").write_text("")
    with pytest.raises(FileExistsError, match=f"cannot create a file for the test in {tmp_path}"):
        private_file(str(tmp_path), "pysysbench-x-", "the test")
