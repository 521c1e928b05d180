"""LOAD DATA LOCAL refused by the server (local_infile=OFF): with --load-method=auto the
prepare goes on with multi-row INSERTs and says so once; asked for explicitly, it stops
with a hint.  (The refusal cannot be provoked on the shared MariaDB without changing a
global setting other tests rely on, so a connection double stands in for it.)"""

from __future__ import annotations

import asyncio
import re

import pytest

from pysysbench.core.errors import BulkLoadRefused, ConfigError
from pysysbench.drivers.base import Dialect, DriverCaps
from pysysbench.load.prepare import Loader
from pysysbench.workloads.base import Env

SIZE = 500
ROW = re.compile(r"\(\d{3},\d{3},'(\d{11}-){9}\d{11}','(\d{11}-){4}\d{11}'\)")


class RefusingConnection:
    """LOAD DATA LOCAL is refused as MariaDB does with local_infile=OFF; INSERTs are kept."""

    def __init__(self) -> None:
        self.statements: list[str] = []
        self.refused = 0

    async def load_data_local(self, table, columns, chunks) -> int:
        self.refused += 1
        raise BulkLoadRefused(
            "MySQL error 1148 (The used command is not allowed with this MariaDB version)",
            "1148",
            "LOAD DATA LOCAL INFILE ...",
        )

    async def query(self, sql: str) -> None:
        self.statements.append(sql)


class Driver:
    name = "mysql-double"
    caps = DriverCaps(server_prepare=False, bulk_methods=("load-data", "multi-insert"))
    dialect = Dialect(id_auto_inc="INTEGER NOT NULL AUTO_INCREMENT")


def make_env(method: str, said: list[str]) -> Env:
    from pysysbench.command.cmdline import base_registry
    from pysysbench.core.options import Values
    from pysysbench.workloads.oltp_common import OLTP_OPTIONS

    reg = base_registry()
    reg.extend(OLTP_OPTIONS)
    v = Values(reg)
    v.set(reg.get("load_method"), method)
    return Env(driver=Driver(), values=v, say=said.append, seed=5)


def load_one_range(method: str) -> tuple[RefusingConnection, list[str]]:
    said: list[str] = []
    loader = Loader(make_env(method, said), tables=1, size=SIZE, create_sql=lambda t: f"CREATE TABLE sbtest{t}(id INT)")
    stream = loader.streams[0]
    stream.conn = RefusingConnection()
    asyncio.run(stream.load_range(1, 1, SIZE))
    return stream.conn, said


def test_auto_falls_back_to_multi_row_inserts():
    conn, said = load_one_range("auto")
    assert conn.refused == 1
    assert len(said) == 1 and said[0].startswith("WARNING: the server refuses load-data (MySQL error 1148")
    assert "SET GLOBAL local_infile=1" in said[0]
    rows = []
    for sql in conn.statements:
        assert sql.startswith("INSERT INTO sbtest1(id, k, c, pad) VALUES(")
        rows += re.findall(r"\(\d+,\d+,'[^']*','[^']*'\)", sql)
    assert len(rows) == SIZE and all(ROW.fullmatch(r) for r in rows)
    assert [int(r[1:4]) for r in rows] == list(range(1, SIZE + 1))


def test_explicit_load_data_stops_with_a_hint():
    with pytest.raises(ConfigError, match=r"--load-method=load-data: the server refuses it .*local_infile=1"):
        load_one_range("load-data")
