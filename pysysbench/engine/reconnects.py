"""Watching failed reconnects: warn while they keep failing, give up when the run
does nothing else.

A lost connection is re-opened by its thread (``Worker._reconnect``), retrying
with back-off; every failed attempt is counted by error code in the worker's
counters and reaches the parent in the merged :class:`Snapshot`.  sysbench
retries silently forever, so a changed password (1045, 28P01) or a pg_hba
rule made a run report 0 tps until its end and exit 0.  :class:`ReconnectWatch`
reads one merged snapshot a second (``LocalRun``) and answers a ``WARNING:``
line after ``WARN_AFTER_S`` of failures, then every ``WARN_EVERY_S`` while they go
on, and a fatal error once reconnects have failed for ``--reconnect-timeout``
seconds (default ``RECONNECT_TIMEOUT_S``; 0 = retry until the run ends) with no
event completed and no connection re-opened.  A failure episode ends when events
complete again (or connections are re-opened) and no attempt failed since the
previous look.
"""

from __future__ import annotations

from ..core.record import record
from ..stats.records import Snapshot

RECONNECT_TIMEOUT_S = 60  # --reconnect-timeout's default: a server restart, a fail-over fit in it
CHECK_EVERY_S = 1.0  # how often LocalRun looks
WARN_AFTER_S = 5.0  # first WARNING after this long of failed reconnects
WARN_EVERY_S = 10.0  # then one per this while they keep failing
MAX_CODES_SHOWN = 5


def codes_text(by_code: dict[str, int]) -> str:
    """``1045: 212, 2003: 4`` (most frequent first, a few at most)."""
    top = sorted(((n, code) for code, n in by_code.items() if n), reverse=True)
    text = ", ".join(f"{code}: {n}" for n, code in top[:MAX_CODES_SHOWN])
    return text + (f", {len(top) - MAX_CODES_SHOWN} more codes" if len(top) > MAX_CODES_SHOWN else "")


def _minus(new: dict[str, int], old: dict[str, int]) -> dict[str, int]:
    return {code: n - old.get(code, 0) for code, n in new.items() if n - old.get(code, 0)}


@record
class Verdict:
    """What the failed reconnects seen so far call for: a warning, the run's end, or nothing."""

    warning: str | None = None  # a line to print
    fatal: str | None = None  # the run must stop with this error


class ReconnectWatch:
    """Successive merged snapshots in, warnings and a give-up out (see the module docstring)."""

    def __init__(self, timeout_s: float, start_s: float, start: Snapshot | None = None):
        self.timeout_s = timeout_s
        self.prev = start or Snapshot()
        self.prev_t = start_s
        self.progress_t = start_s  # the last time an event completed
        self.since: float | None = None  # start of the current failure episode
        self.warned_t: float | None = None
        self.warned: dict[str, int] = {}  # failures by code at the episode's start / last warning
        self.episode: dict[str, int] = {}  # failures by code at the episode's start

    def observe(self, t: float, snap: Snapshot) -> Verdict:
        failed = snap.failed_reconnects > self.prev.failed_reconnects
        # a connection re-opened is progress too: after a server restart at 2,000 threads the
        # re-opened sessions re-prepare their statements and queue on row locks for longer
        # than --reconnect-timeout before the first event completes; giving up then said
        # "no connection could be re-opened" of a run whose connections all were
        progress = snap.events > self.prev.events or snap.reopened > self.prev.reopened
        if progress:
            self.progress_t = t
        if failed and self.since is None:
            self.since, self.warned_t = self.prev_t, None
            self.warned = self.episode = dict(self.prev.reconnect_failures)
        elif progress and not failed:
            self.since = None
        self.prev, self.prev_t = snap, t
        since = self.since
        if since is None:
            return Verdict()
        stalled = t - max(since, self.progress_t)
        if self.timeout_s and stalled >= self.timeout_s:
            return Verdict(fatal=self._fatal(t, snap, since))
        due = WARN_AFTER_S if self.warned_t is None else WARN_EVERY_S
        if t - (self.warned_t or since) >= due:
            return Verdict(warning=self._warning(t, snap, stalled, since))
        return Verdict()

    def _warning(self, t: float, snap: Snapshot, stalled: float, since: float) -> str:
        recent = _minus(snap.reconnect_failures, self.warned)
        window = t - (self.warned_t or since)
        self.warned_t, self.warned = t, dict(snap.reconnect_failures)
        if stalled > 1.5 * CHECK_EVERY_S:  # nothing completed since the previous look
            state = f"no event completed for {stalled:.0f} s"
            state += (
                f"; giving up after {self.timeout_s:g} s (--reconnect-timeout)"
                if self.timeout_s
                else "; retrying until the run ends (--reconnect-timeout=0)"
            )
        else:
            state = "events still complete on the other connections"
        return (
            f"WARNING: reconnecting keeps failing for {t - since:.0f} s ({sum(recent.values())} failed "
            f"attempts in the last {window:.0f} s, by code {codes_text(recent)}); {state}; last error: "
            f"{snap.reconnect_error}"
        )

    def _fatal(self, t: float, snap: Snapshot, since: float) -> str:
        failures = _minus(snap.reconnect_failures, self.episode)
        return (
            f"gave up reconnecting: no connection could be re-opened and no event completed for "
            f"{t - max(since, self.progress_t):.0f} s (--reconnect-timeout={self.timeout_s:g}); "
            f"{sum(failures.values())} failed attempts by code {codes_text(failures)}; last error: "
            f"{snap.reconnect_error}"
        )


__all__ = ["ReconnectWatch", "Verdict", "RECONNECT_TIMEOUT_S", "CHECK_EVERY_S", "codes_text"]
