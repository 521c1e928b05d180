"""The server's CPU per query in the server context (engine/servercontext.py): /proc counts a
process's CPU in clock ticks, so a short run's few ticks are mostly rounding -- 0 ticks over
700 point selects is not "no CPU" (a flaky 0.0 in CI once).  Under MIN_CPU_TICKS the figure
is left out with one note; from there on it is derived."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from pysysbench.engine.servercontext import MIN_CPU_TICKS, TICKS, ServerContext


def _context(cpu_s: float) -> ServerContext:
    # result() is arithmetic over the two snapshots: no server is asked
    ctx = ServerContext(SimpleNamespace(dialect=SimpleNamespace(family="mysql")))
    ctx.cpu_start, ctx.cpu_end = 100.0, 100.0 + cpu_s
    return ctx


@pytest.mark.parametrize("ticks", [0, 1, MIN_CPU_TICKS - 1])
def test_a_few_ticks_give_a_note_not_a_figure(ticks):
    out = _context(ticks / TICKS).result(events=700, queries=700)
    assert out["server_cpu_s"] == pytest.approx(ticks / TICKS)
    assert "server_cpu_us_per_query" not in out["derived"]
    assert len(out["notes"]) == 1 and "no server CPU per query" in out["notes"][0]


@pytest.mark.parametrize("ticks", [MIN_CPU_TICKS, 250])
def test_enough_ticks_give_the_figure(ticks):
    out = _context(ticks / TICKS).result(events=700, queries=700)
    assert out["derived"]["server_cpu_us_per_query"] == pytest.approx(ticks / TICKS / 700 * 1e6)
    assert out["notes"] == []


def test_no_queries_no_figure_and_no_note():
    out = _context(0.0).result(events=0, queries=0)
    assert "server_cpu_us_per_query" not in out["derived"] and out["notes"] == []


@pytest.mark.parametrize(
    "identity,kept",
    [
        ([("db1", "3306", "1"), ("db1", "3306", "1")], True),
        ([("db1", "3306", "1"), None], True),  # the end's server would not say: kept
        ([("lab", "41001", "101"), ("lab", "41002", "102")], False),  # a proxy sent them to two nodes
    ],
)
def test_snapshots_of_two_servers_are_left_out(identity, kept):
    """Behind a proxy the start and end sessions can reach different nodes: their counters'
    difference is noise (a hit ratio of 100.05 %, negative fsyncs), so it is left out, with
    one note naming both servers."""
    ctx = _context(250 / TICKS)
    ctx.start = {"Innodb_data_fsyncs": 500.0, "Questions": 10.0}
    ctx.end = {"Innodb_data_fsyncs": 480.0 if not kept else 520.0, "Questions": 900.0}
    ctx.identity = identity
    out = ctx.result(events=100, queries=800)
    assert bool(out["metrics"]) == kept and ("server_cpu_us_per_query" in out["derived"]) == kept
    assert out["server_cpu_s"] is None or kept
    if not kept:
        assert len(out["notes"]) == 1 and "lab:41001, then lab:41002" in out["notes"][0]
