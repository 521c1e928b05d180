"""The fast prepare: the sbtest data set loaded at the database's bulk-load rate.

Modules: ``options`` (the --load-method, --force, --data-size,
--create-secondary-at options), ``sizing`` (--data-size), ``rows`` (vectorised
row generation, numpy), ``source`` (row-generator processes and pipes),
``methods`` (COPY, LOAD DATA LOCAL, multi-row INSERT, SQLite batches),
``prepare`` (the orchestration and its progress snapshots), ``marker``
(existing and half-loaded tables).  Only ``rows``, ``source``, ``methods`` and
``prepare`` import numpy; they are imported when a prepare runs.
"""
