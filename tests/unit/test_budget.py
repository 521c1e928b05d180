"""The --events budget (engine/budget.py): one counter in shared memory, C twin (an atomic
compare-and-swap, engine/event_loop.c) and Python twin (under a lock), both exact when
threads of several processes take from it at once."""

from __future__ import annotations

import mmap
import os
import pickle
import threading

import pytest

from pysysbench.engine import budget as budget_mod
from pysysbench.engine.budget import EventBudget, PyBudgetCore
from pysysbench.engine.group import shares
from pysysbench.runtime import native

TWINS = ["python"] + (["c"] if native.Budget is not None else [])


@pytest.fixture(params=TWINS)
def twin(request, monkeypatch):
    """EventBudget on the C core or on the Python twin."""
    if request.param == "python":
        monkeypatch.setattr(budget_mod, "_CBudget", None)
    return request.param


def test_takes_never_pass_the_total_and_give_back_makes_events_available(twin):
    b = EventBudget(5)
    assert (b.take(), b.take(3), b.take(3), b.take()) == (1, 3, 1, 0)
    assert b.taken == 5 and b.exhausted() and b.left() == 0
    b.give_back(2)
    assert b.left() == 2 and b.take(10) == 2 and b.take() == 0


def test_a_budget_of_zero_gives_no_event(twin):
    """A Ray actor's share of --events below the actor count is 0: no event, never 'unlimited'."""
    b = EventBudget(0)
    assert b.take() == 0 and b.take(100) == 0 and b.exhausted()


def test_twins_share_one_layout():
    """The same region read by both: a native int64 at offset 0."""
    region = mmap.mmap(-1, budget_mod.SIZE)
    py = PyBudgetCore(region, 10)
    assert py.take(4) == 4
    if native.Budget is not None:
        c = native.Budget(region, 10)
        assert c.taken == 4 and c.take(100) == 6 and py.taken == 10


def _hammer(b: EventBudget, threads: int) -> int:
    got = [0] * threads

    def run(i: int) -> None:
        while b.take(1):
            got[i] += 1

    ts = [threading.Thread(target=run, args=(i,)) for i in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return sum(got)


@pytest.mark.parametrize("total", [1, 10, 20_000])
def test_exact_total_over_forked_processes_and_threads(twin, total):
    """Four processes of four threads each take one event at a time from the shared budget:
    together they get exactly ``total``."""
    b = EventBudget(total, shared=True)
    try:
        pipes, pids = [], []
        for _ in range(4):
            r, w = os.pipe()
            pid = os.fork()
            if pid == 0:  # pragma: no cover - the child
                os.close(r)
                code = 1
                try:
                    os.write(w, str(_hammer(b, 4)).encode())
                    code = 0
                finally:
                    os._exit(code)
            os.close(w)
            pipes.append(r)
            pids.append(pid)
        counts = []
        for r, pid in zip(pipes, pids):
            with os.fdopen(r) as fh:
                counts.append(int(fh.read() or -1))
            assert os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 0
        assert sum(counts) == total and b.taken == total
    finally:
        b.unlink()


def test_a_shared_budget_pickles_as_the_same_counter_and_a_private_one_as_a_fresh_one(twin):
    """Spawned worker processes map the parent's counter by its path; a Ray actor (another
    machine) gets a budget of its own of the same total."""
    shared = EventBudget(7, shared=True)
    try:
        assert shared.path and os.path.exists(shared.path)
        other = pickle.loads(pickle.dumps(shared))
        assert other.take(5) == 5 and shared.take(5) == 2 and other.taken == 7
        shared.unlink()
        assert not os.path.exists(shared.path) and other.take() == 0  # the mappings outlive the name
    finally:
        shared.unlink()
    private = EventBudget(3)
    private.take(2)
    copy = pickle.loads(pickle.dumps(private))
    assert copy.path is None and copy.take(10) == 3 and private.taken == 2


class _Spec:
    def __init__(self, threads: int, events: int):
        self.threads, self.events, self.rate = threads, events, 0


def test_shares_carry_one_shared_budget_or_exact_own_budgets():
    """Worker processes all take from the one budget; Ray actors get their own, which add up
    to --events even when it is below the actor count (some get 0)."""
    one = EventBudget(10)
    assert {id(s.budget) for s in shares(_Spec(32, 10), 16, one)} == {id(one)}
    own = shares(_Spec(32, 10), 16)
    assert sum(s.budget.total for s in own) == 10 and [s.budget.total for s in own].count(0) == 6
    assert all(s.budget is None for s in shares(_Spec(4, 0), 2))
