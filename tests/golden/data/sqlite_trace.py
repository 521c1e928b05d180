"""Run the pysysbench CLI in this process with every SQLite statement written, values
substituted, one a line, to the file named first (tests/golden/test_oltp_event_stream.py):
``python sqlite_trace.py OUT oltp_read_write --threads=1 ... run``."""

import sqlite3
import sys

_connect = sqlite3.connect
OUT = sys.argv[1]


def _traced(*args, **kwargs):
    db = _connect(*args, **kwargs)
    out = open(OUT, "a", buffering=1, encoding="utf-8")  # noqa: SIM115 - open while the connection lives
    db.set_trace_callback(lambda sql: out.write(sql.replace("\n", " ") + "\n"))
    return db


if __name__ == "__main__":
    sqlite3.connect = _traced
    sys.argv = ["pysysbench", *sys.argv[2:]]
    from pysysbench.cli.entry import console

    console()
