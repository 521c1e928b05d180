"""The dry-run session (``--mysql-dry-run``): every call succeeds, nothing is sent.

``session.py``: :class:`DryRunConnection`, which the MySQL driver hands out instead of
a real session; no wire client, scanner or C.
"""

from .session import DryRunConnection

__all__ = ["DryRunConnection"]
