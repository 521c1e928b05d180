"""Results over time: the history store, its queries and views, and regression detection.

A store (an SQLite file by default, a PostgreSQL URL for a team) keeps one row per run with
everything a result file holds; runs come in from result files, campaign folders and the
plain-text output of the real sysbench.  ``detect`` finds change points in a series of runs
beyond noise, and the gate for pipelines (``history check``) exits on what it finds.  It
sits above ``report`` (its trend pages reuse the report's charts) and below ``cli``.
"""
