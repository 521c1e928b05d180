"""The command line, kept thin: parse argv (sysbench's grammar or a subcommand's), pick the face
(pysysbench's own or sysbench 1.0.20's), call the library (``command``: one test command; the
campaign or the report code), render, and map exceptions to exit codes.  Only this layer prints
or exits.
"""
