"""Cluster look-alikes on one machine (``pysysbench lab up|status|down``, issue 42).

Each look-alike starts real servers from the distribution's packages, as the current user,
on free ports bound to 127.0.0.1, with its data under one folder, and records what it
started in a manifest (``manifest.py``) that ``status`` and ``down`` read.  Nothing here
prints: progress goes to the ``say`` callback the caller hands in.

    procs.py     ports, packages, detached processes (start, alive, stop)
    mariadb.py   one mariadbd: install the data dir, its arguments, SQL through the client
    postgres.py  one PostgreSQL server: initdb, its arguments, SQL through psql
    haproxy.py   the TCP proxy in front of a look-alike
    manifest.py  the JSON record of a running look-alike
    galera.py    HAProxy -> 3-node MariaDB Galera
    spider.py    HAProxy -> 2 Spider compute nodes -> N data nodes
    pgshard.py   HAProxy -> 2 PostgreSQL coordinators -> N shards (postgres_fdw partitions)
    sharded.py   the ``up`` spider and pgshard share (SQL nodes over shards behind one port)
    api.py       up / status / down / kill / start
    fault.py     --fault: a node killed and started again during a run (a run's companion)
"""
