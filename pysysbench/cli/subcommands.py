"""Commands beyond sysbench's grammar (``pysysbench campaign ...``,
``pysysbench report ...``, ``pysysbench compare ...``): a name-keyed registry
that ``cli.main`` consults before parsing sysbench-style arguments.

A subcommand is ``fn(argv: list[str], out: Printer) -> int`` (argv after the
subcommand word) and raises ``PySysbenchError`` for user errors.
"""

from __future__ import annotations

from typing import Callable

SUBCOMMANDS: dict[str, Callable] = {}


def subcommand(name: str):
    def deco(fn: Callable) -> Callable:
        SUBCOMMANDS[name] = fn
        return fn
    return deco
