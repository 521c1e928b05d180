"""``python -m pysysbench``."""

from .cli.entry import console

console()
