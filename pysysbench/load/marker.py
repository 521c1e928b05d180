"""Table state around a prepare: existing tables (``--force``) and half-loaded ones.

The fast prepare flags a table while it loads (the dialect's
``mark_loading_sql``: a table comment on MySQL and PostgreSQL) and clears the
flag once its rows and index are in; SQLite loads a table in one transaction,
so it never shows a half-loaded table.  ``run`` calls :func:`check_complete`
in its pre-flight, so a prepare that was killed half-way is reported instead of
being benchmarked silently.  (``--load-method=insert`` sends sysbench's
statements only, so its tables carry no flag, as with sysbench.)
"""

from __future__ import annotations

from ..core.errors import MissingTableError
from ..drivers.base import literal


async def incomplete_tables(conn, tables: list[str]) -> list[str]:
    sql = conn.dialect.loading_check_sql
    if not sql:
        return []
    out = []
    for table in tables:
        rows = await conn.fetchall(sql.replace("?", literal(table)))
        if rows and rows[0][0]:
            out.append(table)
    return out


async def check_complete(conn, tables: list[str], target: str) -> None:
    """Raise when a table still carries the flag of an unfinished prepare."""
    bad = await incomplete_tables(conn, tables)
    if bad:
        more = f" (and {len(bad) - 1} more)" if len(bad) > 1 else ""
        raise MissingTableError(
            f"table '{bad[0]}' in {target} is incomplete{more}: the prepare that created it "
            "was interrupted or failed before it finished loading; run prepare again with "
            "--force (or cleanup, then prepare)"
        )


async def existing_tables(conn, tables: int) -> list[int]:
    """The numbers of the sbtest1..``tables`` tables that exist on ``conn``."""
    return [t for t in range(1, tables + 1) if await conn.table_exists(f"sbtest{t}")]


async def drop_existing(env, tables: int, conn=None) -> list[int]:
    """Drop the sbtest tables that exist (``--force``); returns their numbers."""
    own = conn is None
    conn = conn or await env.driver.connect()
    say = getattr(env, "observer", None).say if getattr(env, "observer", None) else env.say
    try:
        existing = await existing_tables(conn, tables)
        for t in existing:
            say(f"Dropping table 'sbtest{t}'...")
            await conn.query(f"DROP TABLE IF EXISTS sbtest{t}")
        return existing
    finally:
        if own:
            await conn.close()
