"""``--data-size=SIZE``: the ``--table_size`` whose tables take about SIZE on disk.

The bytes a row takes depend on the database (page format, fill factor, the
index on k), so :data:`ROW_BYTES` holds measured figures per server family (the
dialect's ``family``): ``(table with its primary key, secondary index on k)``.  The
result depends only on the options, never on the live server, so ``run``
with the same ``--data-size`` arrives at the same table size as ``prepare``
(vendor reports size their data at 1.2 x the instance's memory).
"""

from __future__ import annotations

from ..core.errors import ConfigError
from ..core.options import Values

# on-disk bytes per sbtest row, measured with 1,000,000 rows loaded in id order and the index
# built afterwards: InnoDB on MariaDB 10.11 (data_length: the clustered primary key;
# index_length: k), PostgreSQL 15 (heap + primary key; the k index, rows COPYed), SQLite's file
ROW_BYTES = {"mysql": (225, 16), "postgresql": (244, 10), "sqlite": (205, 12)}


def bytes_per_row(values: Values, driver) -> int:
    table, k_index = ROW_BYTES.get(driver.dialect.family, (0, 0))
    if not table:
        raise ConfigError(
            f"--data-size is not available with the {driver.name} driver (no row size known): use --table-size"
        )
    return table + (k_index if values.get("create_secondary", True) else 0)


def table_size_for(values: Values, driver) -> int:
    """--table_size, or the size --data-size asks for.  It depends on the options
    only, so every process arrives at the same figure; :func:`derived_options` puts
    it into the frozen options once (for the banner and the result file)."""
    size = values.get("data_size", 0) or 0
    if not size:
        return values.table_size
    if values.is_set("table_size"):
        raise ConfigError("--data-size and --table-size were both given: use one of them")
    tables = max(1, values.tables)
    rows = max(1, size // (tables * bytes_per_row(values, driver)))
    bounds = values.registry.get("table_size").bounds
    if bounds is not None and not bounds.holds(rows):
        raise ConfigError(
            f"--data-size asks for {rows} rows per table, more than --table_size allows "
            f"({bounds.describe()}): use more --tables or a smaller --data-size"
        )
    return rows


def derived_options(values: Values, driver) -> dict[str, int]:
    """What the options imply beyond themselves, for :meth:`Values.freeze`: the
    table size --data-size asks for (when the test has --table-size)."""
    if not (values.get("data_size", 0) or 0) or values.registry.get("table_size") is None:
        return {}
    return {"table_size": table_size_for(values, driver)}


def describe(values: Values, driver) -> str:
    """One line for the prepare output: how the table size was chosen."""
    per_row = bytes_per_row(values, driver)
    return (
        f"--data-size={values.data_size}: {values.tables} table(s) x {values.table_size} rows x "
        f"{per_row} bytes per row on {driver.name}"
    )
