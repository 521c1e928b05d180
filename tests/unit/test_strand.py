"""Strands (engine/strand.py) behave as asyncio Tasks do for everything that is
not a wire statement: results, exceptions, cancellation, Futures, bare yields,
``asyncio.current_task()`` and ``asyncio.timeout()``.  The wire path itself is
tested against the real servers in tests/integration/test_wire.py."""

from __future__ import annotations

import asyncio

import pytest
import uvloop

from pysysbench.engine import strand as strand_module
from pysysbench.runtime.handoff import here

_OWN = (
    "__slots__",
    "__dict__",
    "__weakref__",
    "__module__",
    "__qualname__",
    "__doc__",
    "name",
    "finished",
    "_cancelling",
)
# the same Strand on the Python core (what runs when the C extension is not built)
PyStrand = type(
    "PyStrand",
    (strand_module._PyStrandCore,),
    {
        **{k: v for k, v in vars(strand_module.Strand).items() if k not in _OWN},
        "__slots__": strand_module.Strand.__slots__,
    },
)


@pytest.fixture(params=["core", "python"], autouse=True)
def Strand(request, monkeypatch):
    cls = strand_module.Strand if request.param == "core" else PyStrand
    monkeypatch.setitem(globals(), "Strand", cls)
    return cls


def run(coro_fn):
    return uvloop.run(coro_fn())


def test_result_exception_and_current_task():
    async def main():
        loop = asyncio.get_running_loop()
        seen = []

        async def body(x):
            seen.append(asyncio.current_task())
            await asyncio.sleep(0)  # a bare yield
            await asyncio.sleep(0.001)  # an asyncio Future
            fut = loop.create_future()
            loop.call_later(0.001, fut.set_result, x * 2)
            return await fut

        async def boom():
            await asyncio.sleep(0)
            raise ValueError("bad")

        s = Strand(body(21), loop, "t1")
        assert not s.done()
        assert await s.finished == 42
        assert s.done() and seen == [s] and asyncio.current_task() is not s
        b = Strand(boom(), loop, "t2")
        with pytest.raises(ValueError, match="bad"):
            await b.finished

    run(main)


def test_cancel_while_waiting_on_a_future_runs_finally_blocks():
    async def main():
        loop = asyncio.get_running_loop()
        cleaned = []

        async def body():
            try:
                await asyncio.sleep(30)
            finally:
                cleaned.append(True)

        s = Strand(body(), loop, "t")
        await asyncio.sleep(0.01)
        assert s.cancel()
        await asyncio.wait([s.finished], timeout=2)
        assert s.finished.cancelled() and cleaned == [True]
        assert not s.cancel()  # already done

    run(main)


def test_cancel_before_first_step_and_caught_cancellation():
    async def main():
        loop = asyncio.get_running_loop()
        started = []

        async def body():
            started.append(True)

        s = Strand(body(), loop, "t")
        s.cancel()  # before it ever ran
        await asyncio.wait([s.finished], timeout=2)
        assert s.finished.cancelled() and started == []

        async def stubborn():
            try:
                await asyncio.sleep(30)
            except asyncio.CancelledError:
                return "caught"

        s = Strand(stubborn(), loop, "t")
        await asyncio.sleep(0.01)
        s.cancel()
        assert await s.finished == "caught"

    run(main)


def test_asyncio_timeout_works_inside_a_strand():
    async def main():
        loop = asyncio.get_running_loop()

        async def body():
            try:
                async with asyncio.timeout(0.02):
                    await asyncio.sleep(5)
            except TimeoutError:
                return "timed out", asyncio.current_task().cancelling()
            return "not timed out", 0

        s = Strand(body(), loop, "t")
        assert await asyncio.wait_for(s.finished, 2) == ("timed out", 0)

    run(main)


def test_a_timeout_that_fires_as_the_awaited_future_fails_is_a_timeout_not_a_later_cancel():
    """The PostgreSQL soak's silent thread ends (docs/reliability.md): asyncpg's connect
    timeout fired in the loop turn in which the connect itself failed (refused), so the
    strand's cancel() found its Future already done and kept the cancel for later; the
    failure was thrown in without it, the timeout block let the OSError out, and the
    cancel landed in the reconnect's back-off sleep: CancelledError, the thread gone
    with no message.  A Task turns the failure into the cancel (Task.__step): the
    block raises TimeoutError and nothing is left over."""

    async def main():
        loop = asyncio.get_running_loop()
        seen = []

        async def body():
            fut = loop.create_future()
            try:
                async with asyncio.timeout(None) as cm:

                    def same_turn():
                        cm.reschedule(loop.time())  # the timer's callback runs first ...
                        fut.set_exception(OSError("refused"))  # ... then the Future's done callback

                    loop.call_soon(same_turn)
                    await fut
            except TimeoutError:
                seen.append("timeout")
            except OSError:
                seen.append("OSError")
            await asyncio.sleep(0.001)  # the reconnect's back-off: no stale cancel here
            return "slept"

        task = asyncio.ensure_future(body())
        assert await asyncio.wait_for(task, 2) == "slept" and seen == ["timeout"]  # what a Task does
        seen.clear()
        s = Strand(body(), loop, "t")
        assert await asyncio.wait_for(s.finished, 2) == "slept"
        assert seen == ["timeout"]

    run(main)


def test_bad_yield_is_an_error_inside_the_coroutine():
    async def main():
        loop = asyncio.get_running_loop()

        class Odd:
            def __await__(self):
                yield "not a future"

        async def body():
            await Odd()

        s = Strand(body(), loop, "odd")
        with pytest.raises(RuntimeError, match="bad yield"):
            await asyncio.wait_for(s.finished, 2)

    run(main)


def test_a_strand_entered_inside_a_running_task_raises_as_asyncio_does():
    """The running-task table is asyncio's: resuming a strand while a Task runs is refused
    with asyncio's own RuntimeError (the C core's direct table path falls back to the
    function for it), and the Task stays the current one."""

    async def main():
        loop = asyncio.get_running_loop()
        me = asyncio.current_task()

        async def body():
            return 1

        s = Strand(body(), loop, "t")
        with pytest.raises(RuntimeError, match="Cannot enter into task"):
            s.step()
        assert asyncio.current_task() is me
        assert here.strand is None  # a refused entry leaves no strand behind for the wires
        assert await s.finished == 1  # its own scheduled step still runs
        assert asyncio.current_task() is me

    run(main)


def test_the_c_core_keeps_asyncio_s_task_table_directly():
    """On CPython 3.11-3.13 the C strand enters and leaves through asyncio's own dict
    (bench/journal/2026-12-01.md: a third of a resume was the two function calls); if a Python
    release changes asyncio's internals the check in engine/strand.py turns it off."""
    import sys

    if strand_module._CStrandCore is None:
        pytest.skip("the C extension is not built")
    if sys.version_info >= (3, 14):
        pytest.skip("asyncio keeps the running task elsewhere")
    assert strand_module._current_tasks() is asyncio.tasks._current_tasks
