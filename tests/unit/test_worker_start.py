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


def test_a_ready_after_the_start_up_failed_is_ignored(tmp_path):
    """The soak (bench/soak.py, 2,000 threads): one worker's thread start-up timed out, the wait
    for the others was cancelled, and the next worker's late "ready" raised InvalidStateError in
    the channel's callback: a traceback printed over the one-line FATAL."""
    import asyncio

    from pysysbench.command.cmdline import parse
    from pysysbench.command.library import configure
    from pysysbench.engine.procs import ProcessGroup, _Child
    from pysysbench.engine.spec import RunSpec

    inv = parse(["oltp_read_write", f"--sqlite-db={tmp_path / 'w.db'}", "--threads=4", "--workers=2", "run"])
    workload, driver = configure(inv)
    spec = RunSpec.build(inv.values, workload.source, driver)

    async def main() -> None:
        group = ProcessGroup(spec)
        late = _Child(1, proc=None, tids=range(2, 4), ready=asyncio.get_running_loop().create_future())
        late.ready.cancel()
        group._on_message(late, ("ready",))
        assert late.ready.cancelled()

    asyncio.run(main())
