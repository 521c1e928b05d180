"""One exception tree for the whole program.

    PySysbenchError                 base; ``str(e)`` is the one line shown to the user
     +-- UsageError                 bad command line / config file (exit 1)
     |    +-- InvalidOption         unknown option or unparsable value
     |    +-- DamagedResultFile     a pysysbench result file whose fields cannot be read
     +-- ConfigError                inconsistent settings found after parsing (exit 1)
     +-- WorkloadError              a workload cannot be loaded or refuses a command
     +-- DatabaseError              anything a driver reports
     |    +-- ConnectError          server unreachable, authentication, missing database
     |    +-- SQLError              a statement failed; carries ``code`` and ``kind``
     |         +-- IgnorableError   the event is restarted (deadlock, lock wait, ...)
     |         +-- ReconnectError   the connection was lost; reconnect, then restart
     |         +-- FatalSQLError    the run stops
     |              +-- MissingTableError   "run prepare first"
     |              +-- TableExistsError    "run cleanup first"
     |              +-- BulkLoadRefused     the server refuses a bulk-load statement
     +-- DataCheckError             ``check`` found inconsistent data
     +-- RunAborted                 the run stopped early (init timeout, forced shutdown,
                                    queue overflow); carries the exit code

Library code raises; only the CLI prints and chooses exit codes.  A message that names
the items of a list (tables, database nodes) names them with :func:`listing`, so that it
stays one readable line whatever the list's length.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

LISTING_LIMIT = 10


def listing(items: Iterable[object], limit: int = LISTING_LIMIT, sep: str = ", ") -> str:
    """``items`` for a one-line message: the first ``limit`` of them, then how many more
    (``sbtest1, sbtest2, ... sbtest10 (and 99990 more)``)."""
    shown: list[str] = []
    more = 0
    for item in items:
        if len(shown) < limit:
            shown.append(str(item))
        else:
            more += 1
    return sep.join(shown) + (f" (and {more} more)" if more else "")


class PySysbenchError(Exception):
    """Base class; the message is a complete sentence for the user."""

    exit_code = 1


class UsageError(PySysbenchError):
    """The command line or a config file cannot be understood."""


class InvalidOption(UsageError):
    """Unknown option name or a value of the wrong type.  ``sysbench_text``: sysbench
    1.0.20's own line for a general option's bad value, which it prints before its first
    line (the sysbench face prints that line instead, and no first line)."""

    def __init__(self, message: str, sysbench_text: str = ""):
        super().__init__(message)
        self.sysbench_text = sysbench_text


class DamagedResultFile(UsageError):
    """A result file (its format says so) with a field of the wrong type: reported even
    where files that are not result files are skipped (a directory of results)."""


class NotAResultFile(UsageError):
    """A file that is no pysysbench result file at all (not JSON, not UTF-8, another JSON
    document): skipped where a directory is walked, unlike a damaged or newer one."""


class ConfigError(PySysbenchError):
    """Options parse, but their combination is not usable."""


class WorkloadError(PySysbenchError):
    """A workload cannot be found, loaded or does not support a command."""


class DatabaseError(PySysbenchError):
    """Raised by drivers."""


class ConnectError(DatabaseError):
    """A connection could not be established.  ``code`` is the server's or the
    client library's error code when there is one (MySQL errno, SQLSTATE);
    ``sysbench_lines`` what sysbench 1.0.20's driver logs (FATAL) instead of the
    message where the Lua API reports the failure, when the driver knows them (``told``
    makes them when asked: failed reconnects are many and need only the message)."""

    def __init__(self, message: str, code: str = "", told: Callable[[], tuple[str, ...]] | None = None):
        super().__init__(message)
        self.code = code
        self._told = told

    @property
    def sysbench_lines(self) -> tuple[str, ...]:
        return self._told() if self._told is not None else ()


class SQLError(DatabaseError):
    """A statement failed.  ``code`` is the server's error code as a string
    (MySQL errno, PostgreSQL SQLSTATE, SQLite result name)."""

    def __init__(
        self,
        message: str,
        code: str = "",
        sql: str = "",
        errmsg: str | None = None,
        sqlstate: str = "",
        client_text: str = "",
    ):
        super().__init__(message)
        self.code = code
        self.sql = sql
        # the server's own message and SQLSTATE (Lua's error descriptors show them as sent)
        self.errmsg = message if errmsg is None else errmsg
        self.sqlstate = sqlstate
        # the whole error as the C client library writes it, where sysbench prints that
        # (libpq's PQerrorMessage: severity, message, LINE and caret, DETAIL, ...)
        self.client_text = client_text


class IgnorableError(SQLError):
    """The event is restarted from its first statement."""


class ReconnectError(SQLError):
    """The connection is gone; the worker reconnects and restarts the event."""


class FatalSQLError(SQLError):
    """The run stops with exit code 1."""


class MissingTableError(FatalSQLError):
    """A benchmark table does not exist."""


class TableExistsError(FatalSQLError):
    """``prepare`` found a table that is already there."""


class BulkLoadRefused(FatalSQLError):
    """The server does not allow a bulk-load statement (MySQL ``LOAD DATA LOCAL``
    with ``local_infile=OFF``); prepare falls back to another method."""


class DataCheckError(PySysbenchError):
    """``check`` found inconsistent data (the details were reported per table)."""


class RunAborted(PySysbenchError):
    """The run ended abnormally; ``exit_code`` follows sysbench (1 or 2)."""

    def __init__(self, message: str, exit_code: int = 1):
        super().__init__(message)
        self.exit_code = exit_code
