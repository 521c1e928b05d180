"""Bulk-load methods, registered by name (``--load-method``).

A method loads one :class:`~.source.RowStream` into one table over one
connection, through the connection primitive its server offers.  Drivers list
the methods they implement in ``caps.bulk_methods``, fastest first; ``auto``
takes the first (MySQL falls back to the next when the server refuses LOAD DATA
LOCAL).  Each method states what it needs:

* ``fmt``: the record format it reads (``tsv`` or ``sql``, see :mod:`.rows`);
* ``parallel_ranges``: several connections may load id ranges of one table at
  once.  LOAD DATA cannot: InnoDB holds the table's AUTO-INC lock for the whole
  statement (observed: a second LOAD DATA into the table waits in LOCK WAIT);
  SQLite has one writer.
"""

from __future__ import annotations

from ..core.errors import ConfigError
from .layout import C_GROUPS, GROUP_DIGITS, PAD_GROUPS
from .source import RowStream

C_LEN = C_GROUPS * (GROUP_DIGITS + 1) - 1  # 119
PAD_LEN = PAD_GROUPS * (GROUP_DIGITS + 1) - 1  # 59

COLUMNS = ("id", "k", "c", "pad")
MULTI_INSERT_BYTES = 2 << 20  # per statement: below every default max_allowed_packet (MySQL 5.7: 4 MiB)
SQLITE_BATCH_ROWS = 16_384  # rows per statement / executemany call


class LoadMethod:
    name = ""
    fmt = "tsv"
    parallel_ranges = True

    def batch_rows(self, row_bytes: int) -> int:
        return SQLITE_BATCH_ROWS

    async def load(self, conn, table: str, stream: RowStream) -> int:
        """Load the stream; returns the rows the server reports."""
        raise NotImplementedError


class Copy(LoadMethod):
    """PostgreSQL COPY ... FROM STDIN, text format."""

    name = "copy"

    async def load(self, conn, table: str, stream: RowStream) -> int:
        return await conn.copy_in(table, COLUMNS, stream.chunks())


class LoadData(LoadMethod):
    """MySQL LOAD DATA LOCAL INFILE, the rows streamed from the generator (no file)."""

    name = "load-data"
    parallel_ranges = False

    async def load(self, conn, table: str, stream: RowStream) -> int:
        return await conn.load_data_local(table, COLUMNS, stream.chunks())


class MultiInsert(LoadMethod):
    """Multi-row INSERTs of about 2 MiB, literal values (any SQL server)."""

    name = "multi-insert"
    fmt = "sql"

    def batch_rows(self, row_bytes: int) -> int:
        return max(1, MULTI_INSERT_BYTES // row_bytes)

    async def load(self, conn, table: str, stream: RowStream) -> int:
        prefix = f"INSERT INTO {table}({', '.join(COLUMNS)}) VALUES"
        rows = 0
        async for block in stream.row_blocks(self.batch_rows(stream.row_bytes)):
            await conn.query(prefix + block[:-1].decode("ascii"))  # each record ends with a comma
            rows += len(block) // stream.row_bytes
        return rows


class BlobInsert(LoadMethod):
    """SQLite: one INSERT ... SELECT per batch that cuts the fixed-width records out
    of one BLOB parameter (no Python object per row: about 2x executemany's speed)."""

    name = "blob-insert"
    parallel_ranges = False

    async def load(self, conn, table: str, stream: RowStream) -> int:
        lay = stream.layout
        size, w, c, pad = lay.row_bytes, lay.width, lay.group_at[0], lay.group_at[C_GROUPS]
        # substr() is 1-based; on a BLOB it counts bytes (on TEXT it would walk characters)
        sql = (
            f"INSERT INTO {table}({', '.join(COLUMNS)}) "
            f"WITH RECURSIVE r(o) AS (SELECT 0 UNION ALL SELECT o + {size} FROM r WHERE o + {size} < ?2) "
            f"SELECT CAST(CAST(substr(?1, o + {lay.id_at + 1}, {w}) AS TEXT) AS INTEGER), "
            f"CAST(CAST(substr(?1, o + {lay.k_at + 1}, {w}) AS TEXT) AS INTEGER), "
            f"CAST(substr(?1, o + {c + 1}, {C_LEN}) AS TEXT), CAST(substr(?1, o + {pad + 1}, {PAD_LEN}) AS TEXT) "
            "FROM r"
        )
        rows = 0
        async for block in stream.row_blocks(self.batch_rows(size)):
            await conn.execute_params(sql, (block, len(block)))
            rows += len(block) // size
        return rows


class ExecuteMany(LoadMethod):
    """SQLite: executemany of (id, k, c, pad) tuples per batch."""

    name = "executemany"
    parallel_ranges = False

    async def load(self, conn, table: str, stream: RowStream) -> int:
        lay = stream.layout
        i, k, w, c, pad = lay.id_at, lay.k_at, lay.width, lay.group_at[0], lay.group_at[C_GROUPS]
        sql = f"INSERT INTO {table}({', '.join(COLUMNS)}) VALUES (?, ?, ?, ?)"
        rows = 0
        async for block in stream.row_blocks(self.batch_rows(lay.row_bytes)):
            lines = block.decode("ascii").split("\n")[:-1]
            await conn.execute_many(
                sql, [(int(x[i : i + w]), int(x[k : k + w]), x[c : c + C_LEN], x[pad : pad + PAD_LEN]) for x in lines]
            )
            rows += len(lines)
        return rows


METHODS: dict[str, LoadMethod] = {m.name: m for m in (Copy(), LoadData(), MultiInsert(), BlobInsert(), ExecuteMany())}


def choose(requested: str, driver) -> LoadMethod:
    """The method for ``--load-method=requested`` on ``driver`` (auto: its fastest)."""
    offered = driver.caps.bulk_methods
    if requested in ("auto", ""):
        return METHODS[offered[0]]
    if requested not in offered:
        raise ConfigError(
            f"--load-method={requested} is not available with the {driver.name} driver "
            f"(available: {', '.join(offered + ('insert',))})"
        )
    return METHODS[requested]
