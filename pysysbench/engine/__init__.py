"""The engine: one run, from its frozen spec (``spec.RunSpec``) to its outcome (``run.run``).

Workers own event loops and the connections' share of threads (``worker``), strands resume a
benchmark thread straight from the protocol callback (``strand``, with the C event loop), and
the groups place the threads in-process, in worker processes (``procs``) or on Ray actors
(``raygroup``) behind one base (``group``).  The shared ``--events`` budget, reconnect watch,
live metrics and the server context around the measured phase live here too.  ``_native.c``
is the C extension's init, on the top C layer: it only wires every C file, lowest layer first.
"""
