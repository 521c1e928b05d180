"""Dry-run connection (``--mysql-dry-run``, ``--pgsql-dry-run``): nothing is sent anywhere.

Every call succeeds and every statement counts as *other*, as in sysbench [spec
5.11].  Also a test double: it measures the client's own cost per statement.
A statement gives the event loop one turn, as a real one does while it waits for
the server: otherwise the first thread would run every event and nothing else on
the loop (the other threads, the reporter, a worker process's replies to its
parent) would run until the time limit.

Injected errors (a test double for error handling): with ``PYSYSBENCH_DRY_RUN_ERRORS``
set to a list of error codes (``1213,8002`` for MySQL, SQLSTATEs such as ``40P01`` for
PostgreSQL), every session fails one statement in FAULT_EVERY with the next code of the
list until each has been raised once.  The driver classifies the code exactly as it
classifies a server's answer (``--mysql-ignore-errors`` / ``--pgsql-ignore-errors``):
the event restarts, the session reconnects, or the run ends with the driver's FATAL line.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from ...core.switches import DRY_RUN_ERRORS
from ..base import Connection, Counters, Dialect, Statement

FAULTS_ENV = DRY_RUN_ERRORS.name
FAULT_EVERY = 3  # statements per injected error: events in between still complete
FAULT_MESSAGE = f"error injected by the dry run ({FAULTS_ENV})"

# the driver's classification of an error: (counters, code, message, sql) -> the exception to raise
Failure = Callable[[Counters, str, str, str], Exception]


def planned_faults() -> tuple[str, ...]:
    """The codes every dry-run session fails with (none unless the environment asks)."""
    text = DRY_RUN_ERRORS.raw() or ""
    return tuple(code.strip() for code in text.split(",") if code.strip())


class DryRunConnection(Connection):
    def __init__(self, counters: Counters, dialect: Dialect, failure: Failure | None = None):
        self.counters = counters
        self.dialect = dialect
        self.failure = failure
        self.faults = list(planned_faults()) if failure is not None else []
        self.statements = 0

    async def prepare(self, sql: str) -> Statement:
        c = self.counters
        if self.faults:

            async def faulty(*args: Any) -> None:
                self._maybe_fail(sql)
                c.others += 1
                await asyncio.sleep(0)

            return faulty

        async def stmt(*args: Any) -> None:
            c.others += 1
            await asyncio.sleep(0)

        return stmt

    def _maybe_fail(self, sql: str) -> None:
        """Every FAULT_EVERY-th statement fails with the next planned code, each code once."""
        if not self.faults:
            return
        self.statements += 1
        if self.statements % FAULT_EVERY == 0:
            code = self.faults.pop(0)
            assert self.failure is not None
            raise self.failure(self.counters, code, FAULT_MESSAGE, sql)

    async def query(self, sql: str) -> None:
        self._maybe_fail(sql)
        self.counters.others += 1

    async def fetchall(self, sql: str) -> list[tuple[Any, ...]]:
        return []

    async def query_rows(self, sql: str) -> tuple[int, list[tuple[Any, ...]]] | None:
        self._maybe_fail(sql)
        self.counters.others += 1  # as sysbench's --mysql-dry-run: no result set, ever
        return None

    async def table_exists(self, table: str) -> bool:
        return True

    async def close(self) -> None:
        pass

    async def reconnect(self) -> None:
        pass
