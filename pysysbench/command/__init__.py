"""One sysbench-style command (a test, its options, a command word) as a library call.

``cmdline`` parses the words in sysbench's two phases into an :class:`~.cmdline.Invocation`
(general options, then the driver's and the test's), ``library`` checks it and makes the
driver and the workload, ``execute`` runs the command -- ``prepare``, ``run`` (a frozen
:class:`~pysysbench.engine.spec.RunSpec` through ``engine.run``), ``cleanup``, ``help``, a
Lua script's own dispatch -- writing its text through an output
:class:`~pysysbench.output.printer.Printer`.  The command line and the campaigns both come
here; nothing in it prints or exits.
"""
