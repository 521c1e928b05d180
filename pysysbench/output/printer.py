"""Where a command's text goes: sysbench's stdout, line by line, through its log levels.

Role: :class:`Printer` writes unbuffered lines (the banner, progress, the report) to a
stream -- the terminal for the command line, a run's log file for a campaign -- drops the
lines above ``--verbosity``, keeps a data-only format's documents alone on standard output,
and goes quiet when its reader goes away.  :func:`to_stderr` is the one way a warning meant
for standard error leaves the library.  It writes to the streams it is given; it decides
nothing about exit codes.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Callable

EXIT_STDOUT_CLOSED = 128 + signal.SIGPIPE  # what a shell shows for sysbench killed by SIGPIPE

# sysbench's log levels (spec 1.4); ALWAYS: what sysbench writes without its logger
# (help, --version, a Lua script's print(), the workloads' "Creating table ..." lines)
ALWAYS, FATAL, ALERT, WARNING, NOTICE, INFO, DEBUG = -1, 0, 1, 2, 3, 4, 5
PREFIX_LEVELS = (("FATAL: ", FATAL), ("ALERT: ", ALERT), ("WARNING: ", WARNING), ("DEBUG: ", DEBUG))
# lines a workload's messages carry that sysbench prints through its logger, not print()
LOGGED_LINES = ("Initializing worker threads...",)


def level_of(line: str) -> int:
    """A line's sysbench log level from its prefix (NOTICE, the level of the report, when it has none)."""
    for prefix, level in PREFIX_LEVELS:
        if line.startswith(prefix):
            return level
    return NOTICE


class Printer:
    """Unbuffered line output, like sysbench's stdout, through sysbench's log levels:
    a line above ``verbosity`` (--verbosity, default 3; --debug: 5) is not printed.

    When the reader goes away ("pysysbench ... | head -1") the printer goes quiet
    (``closed``; the stream's descriptor is pointed at /dev/null so no later
    flush fails) and calls ``on_closed``: a run then stops as if interrupted.

    For a data-only report format (``--output-format=json``, :meth:`data_only`) the
    report's documents (:meth:`data`) are all that goes to standard output; every
    other line (the first line, the banner, progress, warnings, errors) goes to
    standard error."""

    def __init__(self, stream=None, verbosity: int = NOTICE):
        self.stream = stream or sys.stdout
        self.data_mode = False  # data_only: the documents alone on standard output (data_stream)
        self.data_stream = None
        self.verbosity = verbosity
        self.closed = False
        self.failed: str | None = None  # why standard output could not be written (closed, a full disk)
        self.on_closed: Callable[[], None] | None = None

    def data_only(self) -> None:
        """The documents keep standard output (a duplicate of its descriptor); descriptor 1
        itself then points at standard error, so whatever else writes there -- a Lua
        script's print(), a library, a worker process -- lands on stderr too."""
        if self.data_mode or self.stream is not sys.stdout:  # (a campaign's log keeps every line)
            return
        self.data_mode = True
        stdout = self.stream
        try:
            stdout.flush()
            saved = os.dup(stdout.fileno())
            os.dup2(sys.stderr.fileno(), stdout.fileno())
            self.data_stream = os.fdopen(saved, "w", encoding=stdout.encoding, errors=stdout.errors)
        except (OSError, ValueError, AttributeError):  # not a descriptor (a test's StringIO), or closed
            self.data_stream = stdout
        self.stream = sys.stderr

    def __call__(self, line: str = "", level: int | None = None) -> None:
        if (level_of(line) if level is None else level) <= self.verbosity:
            self.raw(line + "\n", ALWAYS)

    def logged(self, line: str) -> None:
        """A line sysbench's logger let through (the Lua log, lua/log.py, applied
        --verbosity itself): printed as it is, as is its ``(last message repeated N
        times)``, which has no level of its own."""
        self(line, ALWAYS)

    def script(self, line: str = "") -> None:
        """A workload's own message (sysbench's scripts print() them): shown at every
        verbosity, except the lines sysbench logs."""
        logged = line.rstrip("\n") in LOGGED_LINES or level_of(line) != NOTICE
        self(line, None if logged else ALWAYS)

    def raw(self, chunk: str, level: int = NOTICE) -> None:
        if self.closed or level > self.verbosity:
            return
        self._write(self.stream, chunk)

    def data(self, chunk: str) -> None:
        """One document of the report (a data-only format): standard output, at every verbosity."""
        if not self.closed and chunk:
            self._write(
                self.data_stream if self.data_mode else self.stream, chunk if chunk.endswith("\n") else chunk + "\n"
            )

    def _write(self, stream, chunk: str) -> None:
        try:
            stream.write(chunk)
            stream.flush()
        except BrokenPipeError:
            self._reader_gone(stream)
        except (OSError, ValueError, AttributeError) as exc:  # closed (>&-: None), /dev/full, ...
            self.failed = getattr(exc, "strerror", None) or "it is closed"
            self._reader_gone(stream)

    def _reader_gone(self, stream) -> None:
        self.closed = True
        silence(stream)
        if self.on_closed is not None:
            self.on_closed()


def silence(stream) -> None:
    """Point a closed pipe's descriptor at /dev/null: the buffered rest is dropped quietly."""
    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), stream.fileno())
    except (OSError, ValueError, AttributeError):
        pass


def to_stderr(line: str) -> None:
    """``line`` on standard error (standard output when that is gone; nowhere when both are)."""
    stream = sys.stderr if sys.stderr is not None else sys.stdout
    if stream is not None:
        stream.write(line + "\n")
