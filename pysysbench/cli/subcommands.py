"""Commands beyond sysbench's grammar (``pysysbench campaign ...``,
``pysysbench report ...``, ``pysysbench compare ...``, ``pysysbench history ...``): a name-keyed registry
that ``cli.main`` consults before parsing sysbench-style arguments.

A subcommand is ``fn(argv: list[str], out: Printer) -> int`` (argv after the
subcommand word) and raises ``PySysbenchError`` for user errors.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

SUBCOMMANDS: dict[str, Callable] = {}
# the modules defining subcommands, imported on first use: a benchmark run does not pay
# for loading the campaign / report / compare code (0.14 s of start-up CPU)
PROVIDERS: dict[str, str] = {
    **{name: "pysysbench.cli.tools" for name in ("campaign", "report", "compare", "export")},
    "history": "pysysbench.cli.history",
    "lab": "pysysbench.cli.lab",
}


def find(name: str) -> Callable | None:
    """The subcommand called ``name``, or None for a sysbench-style command line."""
    if name not in SUBCOMMANDS and name in PROVIDERS:
        importlib.import_module(PROVIDERS[name])
    return SUBCOMMANDS.get(name)


def subcommand(name: str):
    def deco(fn: Callable) -> Callable:
        SUBCOMMANDS[name] = fn
        return fn

    return deco
