"""The SQLite driver (the default): everything of it lives in this folder.

``session.py``: the driver class (registered as ``sqlite``), its options, dialect and
sessions on the stdlib ``sqlite3``.  SQLite has no wire protocol, so there is no wire
client, scanner or C here.
"""

from .session import SQLiteConnection, SQLiteDriver

__all__ = ["SQLiteConnection", "SQLiteDriver"]
