"""Spider's two-phase commit after a crash: what ``lab start`` settles that Spider does not.

Spider (``spider_internal_xa=ON``) records a transaction it commits in two phases on its
compute node (``mysql.spider_xa``: the XA id and NOT YET, then COMMIT once every data node
has prepared; ``mysql.spider_xa_member``: the data nodes), sends ``XA PREPARE`` then ``XA
COMMIT`` to each data node, and deletes the record.  A crash between the two phases leaves:

* a data node killed: its branch prepared when it comes back, row locks held (later writers
  wait, then fail with 1205), and the compute node's record kept; Spider's XA id is the
  session's id, so every later transaction of that session fails ('xid already exists', 12605);
* a compute node killed: branches prepared on the data nodes, their locks held, and its records.

Nothing in Spider settles them (MariaDB 10.11), so after starting the node again the lab
does what a two-phase-commit coordinator's recovery does: a branch whose record says COMMIT
is committed, any other rolled back (presumed abort), and the records of the transactions
settled are forgotten.  A transaction that reaches the restarted node in the instant this
runs can be caught by it (it then fails, and is retried as any error the run ignores).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from . import mariadb
from .manifest import Manifest, Node
from .procs import LabError

Say = Callable[[str], None]
XID_PART = re.compile(r"X'([0-9A-Fa-f]*)'|'((?:[^'\\]|\\.)*)'")
RECORDS = "SELECT format_id, HEX(LEFT(data, gtrid_length + bqual_length)), status FROM mysql.spider_xa"
KEY = "format_id = {fmt} AND HEX(LEFT(data, gtrid_length + bqual_length)) = '{raw}'"
FORGET_MEMBER = """CREATE TEMPORARY TABLE stale AS SELECT DISTINCT format_id, gtrid_length, bqual_length, data
  FROM mysql.spider_xa_member WHERE port = {port};
DELETE m FROM mysql.spider_xa_member m JOIN stale USING (format_id, gtrid_length, bqual_length, data);
DELETE x FROM mysql.spider_xa x JOIN stale USING (format_id, gtrid_length, bqual_length, data)"""


def branches(data: Node) -> list[tuple[str, str, str]]:
    """The data node's prepared branches: (format id, hex of gtrid + bqual, the xid as SQL)."""
    out = []
    for line in mariadb.sql(data.port, "XA RECOVER FORMAT='SQL'").splitlines():
        if line:
            fmt, _, _, xid = line.split("\t")
            parts = XID_PART.findall(xid)[:2]
            out.append((fmt, "".join(h.upper() if h else t.encode().hex().upper() for h, t in parts), xid))
    return out


def records(compute: Node) -> dict[tuple[str, str], str]:
    """The compute node's records: (format id, hex of gtrid + bqual) -> NOT YET / COMMIT ({} when it is down)."""
    try:
        rows = [line.split("\t") for line in mariadb.sql(compute.port, RECORDS).splitlines() if line]
    except LabError:
        return {}
    return {(f, h): status for f, h, status in rows}


def _settle(data: Node, todo: list[tuple[str, str, str, bool]], say: Say, whose: str) -> None:
    """``todo``: (fmt, raw, xid, commit?) of ``data``'s branches to settle."""
    for _, _, xid, commit in todo:
        mariadb.sql(data.port, f"XA {'COMMIT' if commit else 'ROLLBACK'} {xid}")
    if todo:
        done = sum(1 for *_, commit in todo if commit)
        say(
            f"{data.name}: {len(todo)} XA branch(es) of {whose} settled: {done} committed, {len(todo) - done} rolled back"
        )


def after_data_node(m: Manifest, n: Node, say: Say) -> None:
    """Data node ``n`` started again: its prepared branches settled by the compute nodes'
    records, then the records of transactions that had a branch on it forgotten."""
    decided = {key for c in m.by_role("compute") for key, status in records(c).items() if status == "COMMIT"}
    _settle(n, [(f, raw, xid, (f, raw) in decided) for f, raw, xid in branches(n)], say, "its crash")
    for c in m.by_role("compute"):
        try:
            mariadb.sql(c.port, FORGET_MEMBER.format(port=n.port))
        except LabError:
            continue


def after_compute_node(m: Manifest, n: Node, say: Say) -> None:
    """Compute node ``n`` started again: the data nodes' prepared branches that its records
    name (and no other compute node's: those may be in flight) settled by them, and forgotten."""
    mine = records(n)
    others = {key for c in m.by_role("compute") if c is not n for key in records(c)}
    settled = []
    for data in m.by_role("data"):
        todo = [(f, r, x, mine[(f, r)] == "COMMIT") for f, r, x in branches(data) if (f, r) in mine]
        todo = [t for t in todo if (t[0], t[1]) not in others]
        _settle(data, todo, say, n.name)
        settled += [(f, r) for f, r, _, _ in todo]
    for fmt, raw in set(settled):
        where = KEY.format(fmt=int(fmt), raw=re.sub("[^0-9A-F]", "", raw))
        mariadb.sql(
            n.port, f"DELETE FROM mysql.spider_xa_member WHERE {where}; DELETE FROM mysql.spider_xa WHERE {where}"
        )
