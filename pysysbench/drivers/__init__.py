"""Database drivers, registered by name (``--db-driver``)."""

from . import mysql, pgsql, sqlite  # noqa: F401  (registration side effect)
from .base import DB_OPTIONS, REGISTRY, Connection, Counters, Dialect, Driver, DriverCaps

__all__ = ["DB_OPTIONS", "REGISTRY", "Connection", "Counters", "Driver", "DriverCaps", "Dialect"]
