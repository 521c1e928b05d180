"""The MySQL / MariaDB driver: everything of it lives in this folder.

``session.py``: the driver class (registered as ``mysql``), its options, dialect and
sessions on asyncmy; ``wire.py``: the lean wire client (``MySQLWire``: COM_STMT_PREPARE /
COM_STMT_EXECUTE); ``scan.py``: where a response ends (``mysql_scan``); ``wire.c``: the
C twin of both (built into ``pysysbench._native``, pysysbench/drivers/native_drivers.h).  The wire
machinery every protocol shares is drivers/wire.py.
"""

from .session import MySQLConnection, MySQLDriver

__all__ = ["MySQLConnection", "MySQLDriver"]
