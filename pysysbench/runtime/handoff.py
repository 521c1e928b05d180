"""The strand hand-off: which strand (engine/strand.py) is running right now.

Role: the one piece of state the engine's strands and the drivers' lean wires
(drivers/wire.py) share.  A strand's core sets ``here.strand`` while it runs its
thread's coroutine; a wire statement awaited inside reads it to park that strand on
the wire, which resumes it with the response (``strand.resume``).  It sits below both
layers so that neither writes into the other's module; the C twins use the same
object (engine/strand.c hands it to handoff.c through ``strand_setup``).
"""

from __future__ import annotations

from typing import Any


class Here:
    """The strand running now, or None (one slot: the C reads it in place)."""

    __slots__ = ("strand",)

    def __init__(self) -> None:
        self.strand: Any = None


here = Here()
