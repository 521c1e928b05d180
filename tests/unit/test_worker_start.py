"""How worker processes start (engine/procs.py start_method): forked where that is safe,
spawned where it is not or where the environment asks for it."""

from __future__ import annotations

import threading

from pysysbench.engine.procs import START_ENV, start_method


def test_fork_when_the_parent_runs_one_thread(monkeypatch):
    monkeypatch.delenv(START_ENV, raising=False)
    assert threading.active_count() == 1
    assert start_method() == "fork"


def test_spawn_when_another_thread_runs(monkeypatch):
    """A thread of the parent could hold a lock a forked child would wait for forever."""
    monkeypatch.delenv(START_ENV, raising=False)
    stop = threading.Event()
    t = threading.Thread(target=stop.wait)
    t.start()
    try:
        assert start_method() == "spawn"
    finally:
        stop.set()
        t.join()


def test_spawn_when_the_environment_asks(monkeypatch):
    monkeypatch.setenv(START_ENV, "spawn")
    assert start_method() == "spawn"
