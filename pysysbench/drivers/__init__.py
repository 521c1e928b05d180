"""Database drivers, registered by name (``--db-driver``)."""

from .base import DB_OPTIONS, REGISTRY, Connection, Counters, Driver, DriverCaps, Dialect
from . import mysql, pgsql, sqlite  # noqa: F401  (registration side effect)

__all__ = ["DB_OPTIONS", "REGISTRY", "Connection", "Counters", "Driver", "DriverCaps", "Dialect"]
