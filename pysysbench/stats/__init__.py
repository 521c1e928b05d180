"""Measurement: what a run counted and how it is kept.

The latency histogram (sysbench's 1024 logarithmic buckets), the recorder each worker files
its events in (with its C twin, ``recorder.c``), the frozen records every output reads
(``IntervalStat``, ``Summary``), the raw per-transaction log, the client machine's state, the
noise and steadiness statistics, and the versioned result file built from a run's outcome
(``results``; secrets never written).  It sits above ``core`` and ``runtime`` and below every
driver, workload and engine module.
"""
