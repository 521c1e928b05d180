"""The SQLite driver's WriteQueue: this process's writers get SQLite's write lock
in arrival order, a waiter gives up after its timeout, and a release with nobody
waiting frees it (drivers/sqlite/session.py)."""

from __future__ import annotations

import threading
import time

from pysysbench.drivers.sqlite.session import WriteQueue


def _wait_for(cond, timeout_s: float = 5.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not cond():
        assert time.monotonic() < deadline
        time.sleep(0.001)


def test_waiters_get_the_lock_in_arrival_order():
    q, order = WriteQueue(), []
    assert q.acquire(timeout=1)

    def writer(n: int) -> None:
        assert q.acquire(timeout=5)
        order.append(n)
        q.release()

    threads = []
    for n in range(5):
        t = threading.Thread(target=writer, args=(n,))
        t.start()
        threads.append(t)
        _wait_for(lambda n=n: len(q._waiters) == n + 1)
    q.release()
    for t in threads:
        t.join(5)
    assert order == [0, 1, 2, 3, 4]
    assert q.acquire(timeout=0.1)  # free again
    q.release()


def test_a_waiter_gives_up_after_its_timeout_and_leaves_the_queue():
    q = WriteQueue()
    assert q.acquire(timeout=1)
    t0 = time.monotonic()
    got = []
    t = threading.Thread(target=lambda: got.append(q.acquire(timeout=0.1)))
    t.start()
    t.join(5)
    assert got == [False] and time.monotonic() - t0 >= 0.1
    assert not q._waiters
    q.release()
    assert q.acquire(timeout=0.1)
