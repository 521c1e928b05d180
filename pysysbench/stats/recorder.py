"""A worker's latency and event accounting: the recorder the run loop files each event in.

Role: the hot path's one write per event (``record(tid, lat_ns)``): events and latency
per thread, min / max, sysbench's 1024-bucket histogram (spec 5.7).  ``snapshot()``
copies it, with the worker's statement counters (drivers' ``Counters``), into a
:class:`.records.Snapshot`; the engine never reads live figures.  :class:`PyRecorder` is
the contract; :class:`CRecorder` keeps the same state in C (stats/recorder.c) when
:mod:`..native` says the C is used.
"""

from __future__ import annotations

import math
from typing import Any

from ..runtime.native import Recorder as _CRecorderCore
from .histogram import LN_MIN_MS, N_BUCKETS, M
from .records import Snapshot

LN_NS_PER_MS = math.log(1e6)
_log = math.log
_LAST_BUCKET = N_BUCKETS - 1


class PyRecorder:
    """Latency and event accounting of one worker (hot path: ``record``).

    Events and latency sums are kept per thread only (``[events, latency]`` lists
    reached by one dict lookup); the worker's totals are their sums, taken when a
    snapshot is (once per report interval), not on every event.  This is the
    fallback and the contract of the C recorder (:class:`CRecorder`)."""

    __slots__ = ("counters", "lat_min", "lat_max", "hist", "threads")

    def __init__(self, counters: Any, tids: range = range(0)):
        self.counters = counters
        self.lat_min = 0
        self.lat_max = 0
        self.hist = [0] * N_BUCKETS
        self.threads: dict[int, list[int]] = {}

    @property
    def events(self) -> int:
        return sum(t[0] for t in self.threads.values())

    @property
    def lat_sum(self) -> int:
        return sum(t[1] for t in self.threads.values())

    def record(self, tid: int, lat_ns: int) -> None:
        try:
            t = self.threads[tid]
            t[0] += 1
            t[1] += lat_ns
        except KeyError:
            self.threads[tid] = [1, lat_ns]
        if lat_ns > self.lat_max:
            self.lat_max = lat_ns
        if lat_ns < self.lat_min or not self.lat_min:
            self.lat_min = lat_ns
        # sysbench's 1024-bucket log histogram index, inlined (spec 5.7)
        if lat_ns > 0:
            i = int((_log(lat_ns) - LN_NS_PER_MS - LN_MIN_MS) * M + 0.5)
            self.hist[0 if i < 0 else _LAST_BUCKET if i > _LAST_BUCKET else i] += 1
        else:
            self.hist[0] += 1

    def reset_minmax(self) -> None:
        self.lat_min = self.lat_max = 0

    def state(self) -> tuple[Any, ...]:
        """(events, lat_sum, lat_min, lat_max, hist, thread_events, thread_lat), as the C core's."""
        threads = self.threads
        return (
            sum(t[0] for t in threads.values()),
            sum(t[1] for t in threads.values()),
            self.lat_min,
            self.lat_max,
            list(self.hist),
            {tid: t[0] for tid, t in threads.items()},
            {tid: t[1] for tid, t in threads.items()},
        )

    def snapshot(self) -> Snapshot:
        return _snapshot(self.counters, self.state())


class CRecorder:
    """:class:`PyRecorder` with its state in C (stats/recorder.c's ``Recorder``)
    (threads ``tids``, a contiguous range): ``record`` is the C method itself."""

    __slots__ = ("counters", "core", "record", "reset_minmax")

    def __init__(self, counters: Any, tids: range):
        self.counters = counters
        assert _CRecorderCore is not None  # this class is chosen only when the C is used
        self.core = _CRecorderCore(tids.start, len(tids), LN_NS_PER_MS, LN_MIN_MS, M)
        self.record = self.core.record
        self.reset_minmax = self.core.reset_minmax

    def snapshot(self) -> Snapshot:
        return _snapshot(self.counters, self.core.state())


def _snapshot(c: Any, state: tuple[Any, ...]) -> Snapshot:
    """A recorder's state and its counters as one Snapshot."""
    events, lat_sum, lat_min, lat_max, hist, thread_events, thread_lat = state
    return Snapshot(
        events=events,
        reads=c.reads,
        writes=c.writes,
        others=c.others,
        errors=c.errors,
        reconnects=c.reconnects,
        lat_sum_ns=lat_sum,
        lat_min_ns=lat_min,
        lat_max_ns=lat_max,
        hist=hist,
        thread_events=thread_events,
        thread_lat_ns=thread_lat,
        error_codes=dict(c.errors_by_code),
        reconnect_failures=dict(c.reconnect_failures),
        reconnect_error=c.reconnect_error,
        reopened=c.reopened,
        retried=c.retried,
        failed=c.failed,
        write_trx=c.write_trx,
        spanning_trx=c.spanning_trx,
    )


def make_recorder(counters: Any, tids: range) -> PyRecorder | CRecorder:
    if _CRecorderCore is not None and tids.step == 1:
        return CRecorder(counters, tids)
    return PyRecorder(counters, tids)
