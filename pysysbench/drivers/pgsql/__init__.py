"""The PostgreSQL driver: everything of it lives in this folder.

``session.py``: the driver class (registered as ``pgsql``), its options, dialect and
sessions on asyncpg; ``wire.py``: the lean wire client (``PgWire``: Parse, then Bind /
Execute / Sync); ``scan.py``: where a response ends (``pg_scan``); ``wire.c``: the C
twin of both, with the Bind message (built into ``pysysbench._native``,
pysysbench/drivers/native_drivers.h).  The wire machinery every protocol shares is drivers/wire.py.
"""

from .session import PgConnection, PgDriver

__all__ = ["PgConnection", "PgDriver"]
