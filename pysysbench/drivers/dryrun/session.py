"""Dry-run connection (``--mysql-dry-run``): nothing is sent anywhere.

Every call succeeds and every statement counts as *other*, as in sysbench [spec
5.11].  Also a test double: it measures the client's own cost per statement.
A statement gives the event loop one turn, as a real one does while it waits for
the server: otherwise the first thread would run every event and nothing else on
the loop (the other threads, the reporter, a worker process's replies to its
parent) would run until the time limit.
"""

from __future__ import annotations

import asyncio
from typing import Any

from ..base import Connection, Counters, Dialect


class DryRunConnection(Connection):
    def __init__(self, counters: Counters, dialect: Dialect):
        self.counters = counters
        self.dialect = dialect

    async def prepare(self, sql: str):
        c = self.counters

        async def stmt(*args: Any) -> None:
            c.others += 1
            await asyncio.sleep(0)
        return stmt

    async def query(self, sql: str) -> None:
        self.counters.others += 1

    async def fetchall(self, sql: str) -> list[tuple]:
        return []

    async def query_rows(self, sql: str) -> tuple[int, list[tuple]] | None:
        self.counters.others += 1    # as sysbench's --mysql-dry-run: no result set, ever
        return None

    async def table_exists(self, table: str) -> bool:
        return True

    async def close(self) -> None:
        pass

    async def reconnect(self) -> None:
        pass
