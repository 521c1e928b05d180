"""``python -m pysysbench``."""

from .cli.main import console

console()
