"""The run's limits and the one rule of whether a thread may start another event.

The rule (every loop that runs events asks it, in Python :meth:`Limits.admit`, in C its twin
``limits_admit`` of runtime/native_util.c, which reads the same fields of the same object):

    at ``now_ns`` -- the clock (``time.perf_counter_ns``) read when the event starts --
    ``n`` events may start unless ``stop`` is set or ``deadline_ns`` (0: no time limit) has
    come (``now_ns >= deadline_ns``); those that may are taken from the ``--events``
    budget, unless there is none or the run is warming up (then all ``n`` may): as many
    as it has left (0: none, the thread ends).

A loop that takes several events at once (a built-in test's batch) gives back what it did
not run to the budget it took them from (``EventBudget.give_back``).  :meth:`Limits.over`
asks the same without taking: whether the run's end has come; :meth:`Limits.ended` whether
an event already started must give up (a stop, the time limit -- not the budget).  The time part alone,
:func:`time_up` (``limits_time_up`` in native_runtime.h), is what a loop checks between
the events of a batch it runs without the GIL (workloads/builtin.c and its Python twin).
tests/unit/test_limits.py pins the rule against both twins and counts its copies.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..core.record import record

if TYPE_CHECKING:
    from ..engine.budget import EventBudget

COUNTED: Any = object()  # admit(): take from the budget the rule names (counted())


def time_up(deadline_ns: int, now_ns: int) -> bool:
    """The rule's time part: ``deadline_ns`` (0: no time limit) has come at ``now_ns``."""
    return bool(deadline_ns) and now_ns >= deadline_ns


@record(slots=True)  # slots: the C loops read the fields in place (runtime/native_util.c)
class Limits:
    """Run limits shared by a worker's threads (the rule: the module docstring)."""

    deadline_ns: int = 0  # 0 = no time limit
    budget: EventBudget | None = None  # --events, shared by every thread of the run (None: no limit)
    warming: bool = False  # events of the warm-up are not taken from the budget
    stop: bool = False

    def admit(self, now_ns: int, n: int = 1, budget: Any = COUNTED) -> int:
        """How many of ``n`` events may start at ``now_ns`` (the rule), taken from
        ``budget``: by default the one the rule names (:meth:`counted`); a batch passes the
        one it read with :meth:`counted` so that it gives back to the budget it took from."""
        if self.stop or time_up(self.deadline_ns, now_ns):
            return 0
        if budget is COUNTED:
            budget = None if self.warming else self.budget
        return n if budget is None else budget.take(n)

    def counted(self) -> EventBudget | None:
        """The budget events starting now are taken from: None without --events or while
        warming up."""
        return None if self.warming else self.budget

    def over(self, now_ns: int) -> bool:
        """The run's end has come at ``now_ns``: the rule lets no event start, and nothing is
        taken (an empty budget counts only outside the warm-up)."""
        budget = self.counted()
        return not self.admit(now_ns, budget=None) or (budget is not None and budget.exhausted())

    def ended(self, now_ns: int) -> bool:
        """The run is stopped or its time is up at ``now_ns``: what ends an event already
        started (its reconnect, its retries); every event of --events started does not --
        sysbench finishes the events it started."""
        return self.stop or time_up(self.deadline_ns, now_ns)
