"""The engine's own options: how many threads, for how long, at what rate, in how
many worker processes, with which reports -- declared here, next to the code that
reads them, with their bounds; the CLI's general options (command/cmdline.py) list them
first, in sysbench's order.

Role: the declarations (:data:`ENGINE_OPTIONS`), the checks sysbench makes on them
after parsing (:func:`validate_engine`) and the values derived from them that more
than one place needs (:func:`checkpoints_s`, :func:`forced_shutdown_s`).
"""

from __future__ import annotations

from ..core.errors import ConfigError
from ..core.options import NON_NEGATIVE, THREADS, Option, OptType, Values
from .reconnects import RECONNECT_TIMEOUT_S

GROUP = "General options"

ENGINE_OPTIONS = [
    Option("threads", OptType.INT, 1, "number of threads to use", GROUP, bounds=THREADS),
    Option("events", OptType.INT, 0, "limit for total number of events", GROUP, bounds=NON_NEGATIVE),
    Option("time", OptType.INT, 10, "limit for total execution time in seconds", GROUP, bounds=NON_NEGATIVE),
    Option(
        "warmup-time",
        OptType.INT,
        0,
        "execute events for this many seconds with statistics disabled "
        "before the actual benchmark run with statistics enabled",
        GROUP,
        bounds=NON_NEGATIVE,
    ),
    Option(
        "forced-shutdown",
        OptType.STRING,
        "off",
        "number of seconds to wait after the --time limit before forcing shutdown, or 'off' to disable",
        GROUP,
    ),
    Option(
        "thread-stack-size",
        OptType.SIZE,
        64 * 1024,
        "size of stack per thread (accepted, unused)",
        GROUP,
        show_default=False,
    ),
    Option(
        "thread-init-timeout",
        OptType.INT,
        30,
        "wait time in seconds for worker threads to initialize",
        GROUP,
        bounds=NON_NEGATIVE,
    ),
    Option(
        "reconnect-timeout",
        OptType.INT,
        RECONNECT_TIMEOUT_S,
        "give up when re-opening lost connections "
        "(--mysql-ignore-errors / --pgsql-ignore-errors) has failed for this many seconds with no event "
        "completed; 0 = retry until the run ends",
        GROUP,
        bounds=NON_NEGATIVE,
    ),
    Option(
        "max-retries",
        OptType.INT,
        0,
        "retry a transaction that fails with a retryable error (deadlock, lock wait timeout, serialization "
        "failure: see --retry-errors) up to N times, rolled back and re-run with the same random draws; "
        "one still failing after N retries is counted as failed and the thread goes on. 0 = off",
        GROUP,
        bounds=NON_NEGATIVE,
        extra=True,
    ),
    Option(
        "retry-errors",
        OptType.LIST,
        [],
        "error codes retried with --max-retries besides the driver's own (MySQL 1213,1205,1020,1613,1614,"
        "8002,9007; PostgreSQL 40001,40P01)",
        GROUP,
        extra=True,
    ),
    Option("rate", OptType.INT, 0, "average transactions rate. 0 for unlimited rate", GROUP, bounds=NON_NEGATIVE),
    Option(
        "workers",
        OptType.INT,
        0,
        "client worker processes, each running one event loop that owns a share "
        "of the threads. 0 = two from 2 threads on, one more per 64 threads, at most one per CPU core "
        "(SQLite: 1)",
        GROUP,
        bounds=NON_NEGATIVE,
    ),
    Option(
        "worker-sessions",
        OptType.BOOL,
        True,
        "run each worker process in a session of its own, so that "
        "Linux's per-session CPU sharing (autogroup) does not starve the client behind a server on the "
        "same host",
        GROUP,
    ),
    Option(
        "report-interval",
        OptType.INT,
        0,
        "periodically report intermediate statistics with a specified "
        "interval in seconds. 0 disables intermediate reports",
        GROUP,
        bounds=NON_NEGATIVE,
    ),
    Option(
        "report-checkpoints",
        OptType.LIST,
        [],
        "dump full statistics and reset all counters at specified "
        "points in time. The argument is a list of comma-separated values representing the amount of time "
        "in seconds elapsed from start of test when report checkpoint(s) must be performed. Report "
        "checkpoints are off by default.",
        GROUP,
    ),
]


def checkpoints_s(raw: list[str]) -> tuple[float, ...]:
    """--report-checkpoints as seconds, in order (sysbench's message for a bad one)."""
    out = []
    for x in raw:
        try:
            at = float(x)
            if not 0 < at < 2**31:  # also NaN and infinity (sysbench: a positive int)
                raise ValueError
        except ValueError:
            raise ConfigError(f"Invalid value for --report-checkpoints: '{x}' (seconds > 0)") from None
        out.append(at)
    return tuple(sorted(out))


def forced_shutdown_s(raw: str | None, time_s: float) -> float | None:
    """--forced-shutdown: 'off', N seconds, N% of --time, or '' = 5% (spec 5.9)."""
    if raw in ("off", None) or not time_s:
        return None
    text = raw.strip()
    try:
        if text == "":
            return time_s * 0.05
        seconds = time_s * float(text[:-1]) / 100 if text.endswith("%") else float(text)
        if not 0 <= seconds < 2**31:  # NaN, infinity, a negative delay (sysbench: an unsigned int)
            raise ValueError
        return seconds
    except ValueError:
        raise ConfigError(f"Invalid value for --forced-shutdown: '{raw}'") from None


def validate_engine(values: Values) -> None:
    """The engine's checks after parsing (the bounds are checked with every option's);
    a bad --forced-shutdown is refused here, before anything runs, as sysbench does."""
    checkpoints_s(values.report_checkpoints)
    forced_shutdown_s(values.forced_shutdown, values.time)
    retry_codes(values, ())


def retry_codes(values: Values, retryable: tuple[str, ...]) -> tuple[str, ...]:
    """The error codes --max-retries retries: the driver's ``retryable`` and --retry-errors
    (upper case: SQLSTATEs are written either way); empty when --max-retries is 0."""
    if not values.get("max_retries", 0):
        return ()
    extra = [code.strip().upper() for code in values.get("retry_errors", []) or [] if code.strip()]
    bad = [code for code in extra if not code.isalnum()]
    if bad:
        raise ConfigError(f"Invalid value in --retry-errors: '{bad[0]}' (expected error numbers or SQLSTATEs)")
    return tuple(dict.fromkeys((*(code.upper() for code in retryable), *extra)))
