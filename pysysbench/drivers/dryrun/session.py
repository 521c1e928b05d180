"""Dry-run connection (``--mysql-dry-run``): nothing is sent anywhere.

Every call succeeds and every statement counts as *other*, as in sysbench [spec
5.11].  Also a test double: it measures the client's own cost per statement.
"""

from __future__ import annotations

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
        return stmt

    async def query(self, sql: str) -> None:
        self.counters.others += 1

    async def fetchall(self, sql: str) -> list[tuple]:
        return []

    async def table_exists(self, table: str) -> bool:
        return True

    async def close(self) -> None:
        pass

    async def reconnect(self) -> None:
        pass
