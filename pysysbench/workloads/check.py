"""Data-consistency check of the sbtest data set (``pysysbench TESTNAME check``).

For each table: the row count the workload leaves (read-write with transactions
keeps exactly table_size rows; oltp_insert only adds, oltp_delete only removes),
ids 1..N complete and unique, the secondary index consistent with the table
(rows reached through the index = rows reached through the primary key), and
the c / pad formats.  Every finding is reported; nothing is repaired.
"""

from __future__ import annotations

from dataclasses import field

from ..core.errors import DatabaseError
from ..core.record import record

C_PATTERN = "^([0-9]{11}-){9}[0-9]{11}$"
PAD_PATTERN = "^([0-9]{11}-){4}[0-9]{11}$"

EXACT, AT_LEAST, AT_MOST = "exact", "at_least", "at_most"


@record
class TableReport:
    """What ``check`` found in one table: its rows and its problems."""

    table: str
    rows: int = 0
    problems: list[str] = field(default_factory=list)

    def line(self) -> str:
        if not self.problems:
            return f"{self.table}: {self.rows} rows: OK"
        return f"{self.table}: {self.rows} rows: " + "; ".join(self.problems)


async def check_table(conn, dialect, table: int, table_size: int, rule: str, secondary_index: bool) -> TableReport:
    name = f"sbtest{table}"
    rep = TableReport(name)
    rows = await conn.fetchall(f"SELECT COUNT(*), MIN(id), MAX(id), COUNT(DISTINCT id) FROM {name}")
    count, lo, hi, distinct = (int(x) if x is not None else 0 for x in rows[0])
    rep.rows = count
    if distinct != count:
        rep.problems.append(f"{count - distinct} duplicated ids")
    if rule == EXACT and count != table_size:
        rep.problems.append(f"expected {table_size} rows")
    if rule == AT_LEAST and count < table_size:
        rep.problems.append(f"expected at least {table_size} rows")
    if rule == AT_MOST and count > table_size:
        rep.problems.append(f"expected at most {table_size} rows")
    if rule == EXACT and count and (lo != 1 or hi != table_size or distinct != table_size):
        rep.problems.append(f"ids are not exactly 1..{table_size} (found {lo}..{hi}, {distinct} distinct)")
    if secondary_index:
        await _check_index(conn, dialect, table, count, rep)
    for column, pattern in (("c", C_PATTERN), ("pad", PAD_PATTERN)):
        bad = await conn.fetchall(f"SELECT COUNT(*) FROM {name} WHERE {dialect.regex_mismatch(column, pattern)}")
        if bad and int(bad[0][0]):
            rep.problems.append(f"{int(bad[0][0])} rows with a malformed {column}")
    return rep


# statements counting the rows of sbtest{table} through index k_{table} (the last one that
# returns a row gives the count), per server family (Dialect.family); none: not checked
INDEX_COUNT_SQL = {
    "mysql": ("SELECT COUNT(*) FROM sbtest{table} FORCE INDEX (k_{table}) WHERE k IS NOT NULL",),
    # with sequential scans and sorts disabled the planner must walk k_N in order
    "postgresql": (
        "SELECT 1 / COUNT(*) FROM pg_indexes WHERE indexname = 'k_{table}'",
        "SET enable_seqscan = off",
        "SET enable_sort = off",
        "SET enable_bitmapscan = off",
        "SELECT COUNT(*) FROM (SELECT k FROM sbtest{table} ORDER BY k) s",
        "RESET enable_seqscan",
        "RESET enable_sort",
        "RESET enable_bitmapscan",
    ),
    "sqlite": ("SELECT COUNT(*) FROM sbtest{table} INDEXED BY k_{table} WHERE k IS NOT NULL",),
}


async def _check_index(conn, dialect, table: int, count: int, rep: TableReport) -> None:
    """Count the rows through the k index (the statements force the index)."""
    statements = INDEX_COUNT_SQL.get(dialect.family, ())
    if not statements:
        return
    n = -1
    try:
        for sql in statements:
            rows = await conn.fetchall(sql.format(table=table))
            if rows:
                n = int(rows[0][0])
    except DatabaseError:
        n = -1
    if n == -1:
        rep.problems.append(f"secondary index k_{table} is missing or unusable")
    elif n != count:
        rep.problems.append(f"secondary index k_{table} reaches {n} rows, the primary key {count}")
