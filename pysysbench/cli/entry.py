"""The command's entry point (``pysysbench``, ``python -m pysysbench``).

Importing the CLI creates some hundred thousand objects, every one of them alive until
the process ends; the cyclic garbage collector, triggered every 700 allocations, walked
them again and again for nothing (15 M instructions, 3 % of a dry run's start-up).  It is
off while they are imported, and what they made is then frozen (``gc.freeze``: moved out
of the collector's generations), so neither this process's later collections nor those
of the forked worker processes walk it -- a forked child's collection writes into every
object's header it visits, which copies the page it sits on.
"""

from __future__ import annotations

import gc


def console() -> None:
    gc.disable()
    try:
        from .main import console as run
    finally:
        gc.freeze()
        gc.enable()
    run()
