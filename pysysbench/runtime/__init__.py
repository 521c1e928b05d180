"""The native runtime: the C extension's wiring and the process-level helpers below every user.

``native`` decides once, at import, whether the C extension ``pysysbench._native`` is used
(its init, ``_native.c``, only wires the per-layer C pieces; ``native_util.c`` holds the C
helpers they share) and hands out its symbols, each ``None`` when the Python twins run.
``handoff`` is the strand hand-off the engine's strands and the drivers' wires share (with
``handoff.c``); ``memory`` pins glibc's heap behaviour (``memory.c``); ``childenv`` starts
pysysbench's own child processes on the parent's import path; ``aio`` holds the asyncio
helpers several layers need.  It imports only ``core``.
"""
