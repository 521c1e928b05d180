"""A script's report hooks (``sysbench.hooks.report_intermediate`` /
``report_cumulative``, spec 4.1-4.2) in place of the text reports.

Hooks are detected once, in the main state right after loading; the intermediate
hook runs in a reporter state (``sysbench.tid`` = ``--threads``), the final
cumulative one in the main state (with ``threads_running = 0``), checkpoints in a
checkpointer state.  Each call gets sysbench's ``stat`` table (seconds).  Without
hooks, the CLI prints the reports, in sysbench's generic formats (events per
second, no "SQL statistics") when :meth:`Reports.sql` says no driver was used.
"""

from __future__ import annotations

from typing import Any

from ..stats.records import IntervalStat, Summary
from .log import FATAL, error_text


def interval_stat(st: IntervalStat) -> dict[str, Any]:
    return {
        "threads_running": st.threads_running,
        "time_interval": st.interval_s,
        "time_total": st.time_s,
        "latency_pct": st.latency_pct_ms / 1000.0,
        "events": st.events,
        "reads": st.reads,
        "writes": st.writes,
        "other": st.others,
        "errors": st.errors,
        "reconnects": st.reconnects,
        "queue_length": st.queue_length or 0,
        "concurrency": st.concurrency or 0,
    }


def summary_stat(s: Summary, running: int) -> dict[str, Any]:
    return {
        "threads_running": running,
        "time_interval": s.elapsed_s,
        "time_total": s.total_time_s,
        "latency_pct": s.latency_pct_ms / 1000.0,
        "events": s.events,
        "reads": s.reads,
        "writes": s.writes,
        "other": s.others,
        "errors": s.errors,
        "reconnects": s.reconnects,
        "latency_min": s.lat_min_ns / 1e9,
        "latency_max": s.lat_max_ns / 1e9,
        "latency_avg": s.lat_avg_ns / 1e9,
        "latency_sum": s.lat_sum_ns / 1e9,
    }


class Reports:
    """What the CLI asks before printing a report: True when the script printed it."""

    def __init__(self, dispatcher: Any, main: Any):
        self.d = dispatcher
        self.main = main
        hooks = main.sysbench.hooks
        typ = main.rt.eval("type")
        self.has_intermediate = typ(hooks.report_intermediate) == "function"
        self.has_cumulative = typ(hooks.report_cumulative) == "function"
        self._reporter = None
        self._checkpointer = None

    def _state(self, attr: str) -> Any:
        st = getattr(self, attr)
        if st is None:
            st = self.d.host.run(self.d._new_loaded(self.d.values.threads))
            setattr(self, attr, st)
        return st

    def _hook(self, st: Any, kind: str, stat: dict[str, Any]) -> None:
        if st is None:
            return
        self.d.export(st)
        fn = st.sysbench.hooks["report_" + kind]
        if fn is None:
            return
        ok, err = self.d.host.run(st.call(fn, st.table(stat)))
        if not ok:
            self.d.log(FATAL, f"`report_{kind}' function failed: {error_text(err)}")

    def attach(self, say: Any, summary_block: Any) -> None:
        """The CLI's printer and summary renderer: a script's hooks print their own lines."""

    def sql(self, counts: Any) -> bool:
        """Whether the run used a database driver (else sysbench prints its generic
        reports: events per second, no "SQL statistics")."""
        return self.d.services.used_driver or any(
            (counts.reads, counts.writes, counts.others, counts.errors, counts.reconnects)
        )

    def intermediate(self, st: IntervalStat) -> bool:
        if not self.has_intermediate:
            return False
        self._hook(self._state("_reporter"), "intermediate", interval_stat(st))
        return True

    def checkpoint(self, summary: Summary) -> bool:
        if not self.has_cumulative:
            return False
        self._hook(self._state("_checkpointer"), "cumulative", summary_stat(summary, summary.threads))
        return True

    def cumulative(self, summary: Summary) -> bool:
        self.close()  # the reporter's state ends with the run (report_json closes its array)
        if not self.has_cumulative:
            return False
        self._hook(self.main, "cumulative", summary_stat(summary, 0))
        return True

    def close(self) -> None:
        for st in (self._reporter, self._checkpointer):
            if st is not None:
                self.d.host.run(st.close())
        self._reporter = self._checkpointer = None
