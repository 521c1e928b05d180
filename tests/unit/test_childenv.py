"""Child processes start with the parent's import path and hand the user's environment
on (pysysbench.runtime.childenv, issue 16 point 8)."""

from __future__ import annotations

import multiprocessing as mp
import os

from pysysbench.runtime.childenv import parent_import_path, restore_environment


def _child(conn) -> None:
    before = os.environ.get("PYTHONSAFEPATH")
    restore_environment()
    conn.send((before, os.environ.get("PYTHONSAFEPATH"), os.environ.get("PYTHONPATH")))


def test_child_ignores_cwd_then_sees_the_users_environment(monkeypatch):
    monkeypatch.delenv("PYTHONSAFEPATH", raising=False)
    monkeypatch.setenv("PYTHONPATH", "/the/users/path")
    ctx = mp.get_context("spawn")
    parent, child = ctx.Pipe()
    proc = ctx.Process(target=_child, args=(child,))
    with parent_import_path():
        assert os.environ["PYTHONSAFEPATH"] == "1"
        proc.start()
    assert os.environ.get("PYTHONSAFEPATH") is None and os.environ["PYTHONPATH"] == "/the/users/path"
    assert parent.poll(60)
    assert parent.recv() == ("1", None, "/the/users/path")
    proc.join(10)
