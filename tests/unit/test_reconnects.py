"""Failed reconnects: counted by code across workers, warned about while they go
on, and a give-up after --reconnect-timeout seconds of nothing else."""

from __future__ import annotations

from pysysbench.engine.reconnects import WARN_AFTER_S, WARN_EVERY_S, ReconnectWatch, codes_text
from pysysbench.stats.records import Snapshot, interval_from, summary_from

DENIED = "unable to connect to MySQL server on host '127.0.0.1', port 3306: error 1045: Access denied"


def snap(events: int, failures: dict[str, int] | None = None, error: str = "") -> Snapshot:
    return Snapshot(events=events, reconnect_failures=dict(failures or {}), reconnect_error=error)


def test_failures_merge_and_subtract_by_code():
    a, b = snap(1, {"1045": 3}, DENIED), snap(2, {"1045": 2, "2003": 1}, "")
    merged = Snapshot.merge([a, b])
    assert merged.reconnect_failures == {"1045": 5, "2003": 1} and merged.reconnect_error == DENIED
    later = snap(3, {"1045": 9, "2003": 1}, DENIED)
    assert (
        interval_from(later, merged, time_s=1, interval_s=1, threads_running=1, percentile=95).reconnect_failures == 4
    )
    s = summary_from(later, merged, total_time_s=1, elapsed_s=1, threads=1, percentile=95)
    assert s.reconnect_failures == {"1045": 4} and s.reconnect_error == DENIED
    assert summary_from(merged, merged, total_time_s=1, elapsed_s=1, threads=1, percentile=95).reconnect_error == ""


def feed(watch: ReconnectWatch, seconds: range, events=lambda t: 100, per_s: int = 8):
    """One observation a second; ``per_s`` failed attempts a second (1045)."""
    out = []
    for t in seconds:
        out.append((t, watch.observe(float(t), snap(events(t), {"1045": per_s * t}, DENIED))))
    return out


def test_warns_then_gives_up_when_nothing_but_failed_reconnects_happens():
    watch = ReconnectWatch(timeout_s=20, start_s=0.0, start=snap(100))
    verdicts = feed(watch, range(1, 40))
    warned = [t for t, v in verdicts if v.warning]
    fatal = [(t, v.fatal) for t, v in verdicts if v.fatal]
    assert warned[0] == WARN_AFTER_S and warned[1] - warned[0] == WARN_EVERY_S
    assert fatal[0][0] == 20
    assert "no event completed for 20 s (--reconnect-timeout=20)" in fatal[0][1]
    assert "160 failed attempts by code 1045: 160" in fatal[0][1] and fatal[0][1].endswith(DENIED)
    first = verdicts[warned[0] - 1][1].warning
    assert first.startswith(
        "WARNING: reconnecting keeps failing for 5 s (40 failed attempts in the last 5 s, "
        "by code 1045: 40); no event completed for 5 s; giving up after 20 s"
    )


def test_no_give_up_while_other_connections_complete_events():
    watch = ReconnectWatch(timeout_s=10, start_s=0.0)
    verdicts = feed(watch, range(1, 60), events=lambda t: 100 * t)
    assert not any(v.fatal for _, v in verdicts)
    warnings = [v.warning for _, v in verdicts if v.warning]
    assert warnings and "events still complete on the other connections" in warnings[0]


def test_an_outage_that_ends_resets_the_clock():
    """Failures for 8 s, events again, then failures again: each episode is timed alone."""
    watch = ReconnectWatch(timeout_s=10, start_s=0.0)
    failures, events, fatal = 0, 0, []
    for t in range(1, 40):
        down = t % 15 < 8
        failures += 8 if down else 0
        events += 0 if down else 100
        fatal.append(watch.observe(float(t), snap(events, {"2003": failures}, "refused")).fatal)
    assert not any(fatal)


def test_timeout_zero_retries_until_the_run_ends():
    watch = ReconnectWatch(timeout_s=0, start_s=0.0)
    verdicts = feed(watch, range(1, 200), events=lambda t: 0)
    assert not any(v.fatal for _, v in verdicts)
    assert "retrying until the run ends (--reconnect-timeout=0)" in next(v.warning for _, v in verdicts if v.warning)


def test_codes_text_shows_the_most_frequent_first():
    assert codes_text({"2003": 4, "1045": 212, "2013": 0}) == "1045: 212, 2003: 4"


def test_no_give_up_once_the_lost_connections_are_reopened():
    """A server restart at 2,000 threads (the soak, bench/soak.py): the server is away for 8 s
    (failed attempts), then every connection is re-opened, but re-preparing the statements and
    the row-lock queue keep the first event from completing for longer than the timeout. The
    connections were re-opened: no give-up (it said "no connection could be re-opened")."""
    watch = ReconnectWatch(timeout_s=20, start_s=0.0, start=snap(100))
    verdicts = []
    for t in range(1, 60):
        s = snap(100 if t < 50 else 100 + t, {"1045": 8 * min(t, 8)}, DENIED)
        s.reopened = 0 if t < 9 else 2000
        verdicts.append(watch.observe(float(t), s))
    assert not any(v.fatal for v in verdicts)
    assert [
        Snapshot.merge([Snapshot(reopened=2), Snapshot(reopened=3)]).reopened,
        Snapshot(reopened=7).minus(Snapshot(reopened=2)).reopened,
    ] == [5, 5]


def test_reopened_connections_that_fail_again_still_give_up():
    """Re-opened, then nothing but failures again for the timeout: the give-up still comes."""
    watch = ReconnectWatch(timeout_s=10, start_s=0.0, start=snap(100))
    fatal = []
    for t in range(1, 40):
        s = snap(100, {"2003": 8 * t}, "refused")
        s.reopened = 5 if t >= 3 else 0
        if watch.observe(float(t), s).fatal:
            fatal.append(t)
    assert fatal and fatal[0] == 13
