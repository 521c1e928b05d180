"""The event-limit rule (runtime/limits.py): one table pins it for both twins, Limits.admit
and native_util.c's limits_admit, and the sources hold no other copy of it."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from pysysbench.engine.budget import EventBudget
from pysysbench.runtime import native
from pysysbench.runtime.limits import Limits, time_up

PKG = Path(__file__).resolve().parents[2] / "pysysbench"
D = 1_000  # the deadline of the rows that have one

# (stop, deadline_ns, now_ns, budget left (None: no --events), warming, n) -> (events that may start, left after)
RULE = [
    ((False, 0, 10**18, None, False, 1), (1, None)),  # no limit at all
    ((False, 0, 10**18, None, False, 7), (7, None)),
    ((True, 0, 0, None, False, 1), (0, None)),  # the stop
    ((False, D, D - 1, None, False, 1), (1, None)),  # before the deadline
    ((False, D, D, None, False, 1), (0, None)),  # the deadline itself: the time is up
    ((False, D, D + 1, None, False, 5), (0, None)),
    ((False, 0, 0, 5, False, 1), (1, 4)),  # --events: taken from the budget
    ((False, 0, 0, 3, False, 10), (3, 0)),  # what is left of it
    ((False, 0, 0, 0, False, 1), (0, 0)),  # none left
    ((False, 0, 0, 0, True, 4), (4, 0)),  # the warm-up is not counted
    ((False, D, D - 1, 2, True, 1), (1, 2)),
    ((True, 0, 0, 5, False, 1), (0, 5)),  # a stop takes nothing
    ((False, D, D, 5, False, 1), (0, 5)),  # nor does the time limit
    ((True, D, D - 1, 5, True, 1), (0, 5)),
]


def twins():
    out = [pytest.param(lambda lim, now, n: lim.admit(now, n), id="python")]
    if native.limits_admit is not None:
        out.append(pytest.param(native.limits_admit, id="c"))
    return out


def limits(stop, deadline, left, warming) -> Limits:
    budget = None
    if left is not None:
        budget = EventBudget(10)
        budget.take(10 - left)
    return Limits(deadline_ns=deadline, budget=budget, warming=warming, stop=stop)


@pytest.mark.parametrize("admit", twins())
@pytest.mark.parametrize("row,expected", RULE)
def test_the_rule(admit, row, expected):
    stop, deadline, now, left, warming, n = row
    lim = limits(stop, deadline, left, warming)
    may = admit(lim, now, n)
    assert (may, None if lim.budget is None else lim.budget.left()) == expected
    assert time_up(deadline, now) == (deadline != 0 and now >= deadline)


@pytest.mark.parametrize("row,expected", RULE)
def test_over_asks_the_rule_without_taking(row, expected):
    stop, deadline, now, left, warming, n = row
    lim = limits(stop, deadline, left, warming)
    assert lim.over(now) == (not expected[0] or (left == 0 and not warming))
    assert (None if lim.budget is None else lim.budget.left()) == left


@pytest.mark.parametrize("row,expected", RULE)
def test_ended_is_a_stop_or_the_time_not_the_budget(row, expected):
    stop, deadline, now, left, warming, n = row
    lim = limits(stop, deadline, left, warming)
    assert lim.ended(now) == (stop or time_up(deadline, now))
    assert (None if lim.budget is None else lim.budget.left()) == left


def test_a_batch_takes_from_the_budget_it_names():
    """A batch reads counted() once and gives back to that budget: the warm-up's end between
    its take and its give-back changes nothing."""
    lim = limits(False, 0, 10, True)
    assert lim.counted() is None and lim.admit(0, 4, lim.counted()) == 4 and lim.budget.left() == 10
    lim.warming = False
    budget = lim.counted()
    assert budget is lim.budget and lim.admit(0, 4, budget) == 4 and budget.left() == 6
    assert lim.admit(0, 4, None) == 4 and budget.left() == 6


@pytest.mark.skipif(native.limits_admit is None, reason="the C extension is not used")
def test_the_c_rule_reads_any_object_with_the_fields():
    class Plain:
        def __init__(self, **kw):
            self.__dict__.update(kw)

    assert native.limits_admit(Plain(stop=False, deadline_ns=0, budget=None, warming=False), 5) == 1
    assert native.limits_admit(Plain(stop=1, deadline_ns=0, budget=None, warming=False), 5) == 0
    with pytest.raises(AttributeError):
        native.limits_admit(Plain(stop=False), 5)
    with pytest.raises(ValueError):
        native.limits_admit(Limits(), 5, -1)


# --- one copy per language ----------------------------------------------------------------

# where the rule's deadline comparison is written: once per language
RULE_HOMES = {"runtime/limits.py": 1, "runtime/native_runtime.h": 1}


def _names(node: ast.AST) -> str:
    return " ".join(
        n.id if isinstance(n, ast.Name) else n.attr for n in ast.walk(node) if isinstance(n, (ast.Name, ast.Attribute))
    )


def python_deadline_comparisons(path: Path) -> int:
    """Comparisons with a deadline (``now >= deadline``, ``deadline <= now``, ...) in ``path``;
    the waits for a process to end, on time.monotonic(), are another clock and no limit of a run."""
    count = 0
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Compare) and any(isinstance(op, (ast.Lt, ast.LtE, ast.Gt, ast.GtE)) for op in node.ops):
            names = _names(node)
            count += "deadline" in names and "monotonic" not in names
    return count


def c_deadline_comparisons(path: Path) -> int:
    text = re.sub(r"/\*.*?\*/|//[^\n]*", " ", path.read_text(), flags=re.S)
    return len(re.findall(r"\s[<>]=?\s+[\w.>-]*deadline|deadline\w*\s+[<>]=?\s", text))


def test_the_deadline_comparison_is_written_once_per_language():
    found = {}
    for path in sorted(PKG.rglob("*.py")):
        if n := python_deadline_comparisons(path):
            found[path.relative_to(PKG).as_posix()] = n
    for path in sorted([*PKG.rglob("*.c"), *PKG.rglob("*.h")]):
        if n := c_deadline_comparisons(path):
            found[path.relative_to(PKG).as_posix()] = n
    assert found == RULE_HOMES, (
        "a loop compares with the run's deadline itself: ask the rule "
        "(runtime/limits.py's Limits.admit / time_up; limits_admit / limits_time_up in C)"
    )


def test_only_the_rule_takes_from_the_budget():
    takes = {
        p.relative_to(PKG).as_posix()
        for p in PKG.rglob("*.py")
        if re.search(r"budget\.(take|exhausted)\(", p.read_text())
    }
    assert takes == {"runtime/limits.py"}
