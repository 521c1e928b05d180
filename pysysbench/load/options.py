"""Options of the fast prepare (``--load-method``, ``--force``, ``--data-size``,
``--create-secondary-at``, ``--load-nodes``).

They are general options (registered by the CLI next to the random-number and
database options) rather than workload options: ``oltp_read_write help`` keeps
sysbench's exact option block, and ``--data-size`` has to be understood by
``run`` too (it decides ``--table_size``).
"""

from __future__ import annotations

from ..core.options import Option, OptType

GROUP = "Prepare options (pysysbench)"

AUTO = "auto"
INSERT = "insert"  # sysbench's own prepare (oltp_common.lua), statement for statement
METHODS = ("copy", "load-data", "multi-insert", "blob-insert", "executemany")
LOAD_METHODS = (AUTO, INSERT) + METHODS
INDEX_AT = ("after", "before")

LOAD_OPTIONS = [
    Option(
        "load-method",
        OptType.STRING,
        AUTO,
        "how prepare loads rows: auto (the database's fastest bulk path: PostgreSQL COPY, MySQL LOAD DATA "
        "LOCAL INFILE streamed from generator processes, SQLite one INSERT ... SELECT per batch), insert "
        "(sysbench's own 512 KiB multi-row INSERTs, statement for statement), copy, load-data, multi-insert "
        "(large multi-row INSERTs, one in flight per thread), blob-insert, executemany (SQLite)",
        GROUP,
        choices=LOAD_METHODS,
    ),
    Option("force", OptType.BOOL, False, "prepare: drop the tables first when they exist (instead of stopping)", GROUP),
    Option(
        "data-size",
        OptType.SIZE,
        0,
        "choose --table-size so that the tables take about SIZE on the target database (e.g. 500M, 10G; "
        "the same value must be given to run); 0 = use --table-size",
        GROUP,
    ),
    Option(
        "create-secondary-at",
        OptType.STRING,
        "after",
        "prepare: build the secondary index on k after the load (as sysbench; fastest) or before it "
        "(distributed databases such as TiDB prefer that)",
        GROUP,
        choices=INDEX_AT,
    ),
    Option(
        "load-nodes",
        OptType.STRING,
        "",
        "prepare: load each row straight into its node, all nodes at once: the N nodes listed (lab:DIR "
        "for a lab's data nodes, or HOST:PORT,... in partition order) hold the N partitions of PARTITION BY "
        "HASH(id) (MySQL/MariaDB: id mod N, as a Spider table's; PostgreSQL: its hash, as postgres_fdw "
        "partitions'); the front (the host given) gets its tables after their rows are in, unless it has them",
        GROUP,
    ),
]
