"""``--fault=NODE@SECONDS``: kill one node of a lab during a run and start it again.

A run's *companion* (``command.run.use``): built from the options before the run starts (a
bad value, a lab that is not up, a node it does not have: one line, nothing runs); started
with the run; a thread of its own waits for the measured phase, kills the node at
``--fault`` seconds (SIGKILL, ``api.kill``), waits ``--fault-down`` seconds, starts it
again with the lab's own start code (``api.start``: it returns once the node answers) and
notes the three times, in seconds since the measured phase began.  After the run it joins
that thread (a node killed is always started again, even after a run that ended early),
computes the time to recover from the interval series (``stats/recovery.py``) and gives the
result file its ``fault`` table and the report its two lines.
"""

from __future__ import annotations

import re
import threading
import time
from typing import Any

from ..core.errors import UsageError
from ..stats.recovery import recovery, recovery_text
from ..stats.results import interval_dict
from . import api, manifest
from .procs import LabError, alive

SPEC = re.compile(r"^([A-Za-z0-9_.-]+)@(\d+(?:\.\d+)?)s?$")
NS = 1_000_000_000


def companion(values: Any) -> Fault | None:
    """The fault the options ask for, checked; None without --fault."""
    spec = values.get("fault") or ""
    if not spec:
        return None
    match = SPEC.match(spec)
    if match is None:
        raise UsageError(
            f"--fault={spec}: give NODE@SECONDS, e.g. --fault=data1@10 (a node of 'pysysbench lab status')"
        )
    node, at_s = match[1], float(match[2])
    down_s = float(values.get("fault_down", 5.0))
    if not values.get("report_interval"):
        raise UsageError("--fault needs --report-interval (the time to recover is read from the interval series)")
    if values.get("time") and at_s >= values.time:
        raise UsageError(f"--fault={spec}: the kill at {at_s:g} s falls after the run's --time={values.time}")
    directory = values.get("fault_lab") or api.default_dir()
    try:
        m = manifest.read(directory)
        n = api.node_of(m, node)
    except LabError as exc:
        raise UsageError(f"--fault: {exc}") from None
    if not n.pid or not alive(n.pid, n.mark):
        raise UsageError(f"--fault: {node} of the lab in '{m.dir}' is not running: 'pysysbench lab start {node}'")
    return Fault(m.dir, m.lab, node, at_s, down_s)


class Fault:
    key = "fault"  # the result file's table

    def __init__(self, directory: str, lab: str, node: str, at_s: float, down_s: float) -> None:
        self.dir, self.lab, self.node, self.at_s, self.down_s = directory, lab, node, at_s, down_s
        self.times: dict[str, float | None] = {"killed_s": None, "restarted_s": None, "answered_s": None}
        self.error: str | None = None
        self.notes: list[str] = []  # what the lab said while starting the node again (XA branches settled, ...)
        self.ended = threading.Event()
        self.thread: threading.Thread | None = None
        self.t0 = 0

    def start(self, run: Any) -> None:
        """With the run (``run.t0``: the measured phase's start, 0 until then)."""
        self.thread = threading.Thread(target=self._go, args=(run,), name="pysysbench-fault", daemon=True)
        self.thread.start()

    def _since(self) -> float:
        return round((time.perf_counter_ns() - self.t0) / NS, 3)

    def _go(self, run: Any) -> None:
        while not run.t0:
            if self.ended.wait(0.01):
                return
        self.t0 = run.t0
        if self.ended.wait(max(0.0, self.at_s - self._since())):
            return  # the run ended before the kill: nothing done
        try:
            killed = self._since()  # when the signal goes (the process is gone a few ms later)
            api.kill(self.dir, self.node)
            self.times["killed_s"] = killed
            self.ended.wait(max(0.0, killed + self.down_s - self._since()))
            self.times["restarted_s"] = self._since()
            api.start(self.dir, self.node, self.notes.append)
            self.times["answered_s"] = self._since()
        except LabError as exc:
            self.error = str(exc)

    def finish(self) -> None:
        """After the run: wait for the node to be started again (its lab's own time limits)."""
        self.ended.set()
        if self.thread is not None:
            self.thread.join()

    def record(self, outcome: Any) -> dict[str, Any]:
        doc: dict[str, Any] = {"node": self.node, "lab": self.lab, "dir": self.dir, "at_s": self.at_s}
        doc.update(down_s=self.down_s, **self.times, error=self.error, notes=list(self.notes))
        if self.times["killed_s"] is not None and outcome is not None:
            ivs = [interval_dict(st) for st in outcome.intervals]
            doc["recovery"] = recovery(ivs, self.times["killed_s"], self.times.get("answered_s"))
        return doc

    def lines(self, outcome: Any) -> list[str]:
        doc = self.record(outcome)
        if doc["killed_s"] is None:
            why = f": {self.error}" if self.error else " (the run ended before it)"
            return [f"fault: {self.node} of lab {self.lab} was not killed{why}"]
        return recovery_text(doc)
