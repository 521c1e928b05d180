"""pysysbench: a sysbench-compatible OLTP benchmark."""

from .version import __version__

__all__ = ["__version__"]
