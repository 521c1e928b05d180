"""The native runtime: the C extension's wiring and the process-level helpers below every user.

``native`` decides once, at import, whether the C extension ``pysysbench._native`` is used
(its init, ``engine/_native.c`` at the top of the C layers, only wires the per-layer C pieces;
``native_util.c`` holds the C helpers they share) and hands out its symbols, each ``None`` when
the Python twins run; the random draws' C twins it hands down to ``core.rand`` (``use_c``).
``handoff`` is the strand hand-off the engine's strands and the drivers' wires share (with
``handoff.c``); ``memory`` pins glibc's heap behaviour (``memory.c``); ``childenv`` starts
pysysbench's own child processes on the parent's import path; ``aio`` holds the asyncio
helpers several layers need; ``limits`` the run's limits and the one rule of whether a
thread may start another event (its C twin in ``native_util.c``).  It imports only ``core``.
"""
