"""The core: what every other layer stands on and that needs nothing but Python.

The one exception tree (``errors``), the option registry whose values freeze once parsed
(``options``), the random numbers with their C twin and sysbench's bit-exact stream (``rand``,
``rand.c``, ``rand_compat``), the ``@record`` dataclasses the package's records are declared
with (``record``), the one module that reads the ``PYSYSBENCH_*`` environment switches
(``switches``) and the one way a produced file is written (``files``, atomic and durable).
Nothing here imports a higher layer, save that ``rand`` takes its C draws from
``runtime.native``, where the C-or-Python decision is taken once.
"""
