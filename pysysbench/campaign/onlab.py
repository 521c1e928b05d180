"""``campaign run FILE --lab D``: a campaign against the look-alike running in ``D``
(``pysysbench lab up``), without editing the file.

The lab's manifest replaces the file's connection (driver, proxy address, user, database,
the lab's ignore list); the campaign's other connection options stay.  A look-alike that
loaded its tables itself (spider, pgshard: pysysbench's prepare cannot make sharded tables)
replaces the prepare step, so it must hold at least the tables and rows the campaign asks
for; one whose tables prepare can make through the proxy (galera) keeps the step.  On a
sharded look-alike the bundled OLTP workloads count their write transactions that span
nodes (``--shard-nodes``).  Every
result is labelled with the look-alike (``lab``), and the results go to their own folder.
"""

from __future__ import annotations

import dataclasses

from ..core.errors import UsageError
from ..drivers.targets import DATA_ROLES
from ..lab import manifest
from ..lab.procs import LabError
from ..workloads import REGISTRY
from .spec import Campaign, canonical

# the connection options a lab decides: the file's own are dropped
ADDRESS = ("db-driver", "host", "port", "socket", "user", "password", "db", "ignore-errors")


def attach(c: Campaign, directory: str) -> Campaign:
    """``c`` pointed at the lab in ``directory`` (one UsageError line when it cannot be)."""
    try:
        m = manifest.read(directory)
    except LabError as exc:
        raise UsageError(f"--lab: {exc}") from None
    if m.state != "up":
        raise UsageError(f"--lab: the lab in '{directory}' is not up (state: {m.state}): see 'pysysbench lab status'")
    lab = _options(m.options)
    driver = str(c.connection.get("db-driver", lab["db-driver"]))
    if driver != lab["db-driver"]:
        raise UsageError(
            f"--lab: campaign '{c.name}' runs --db-driver={driver}, the lab {m.lab} in '{directory}' "
            f"speaks {lab['db-driver']}: use a lab of its protocol"
        )
    kept = {k: v for k, v in c.connection.items() if not _decided_by_lab(k)}
    labels = {**c.labels, "lab": m.lab, "lab-nodes": str(sum(1 for n in m.nodes if n.role != "proxy"))}
    prepare = c.prepare
    if m.tables:
        _check_data(c, m, directory)
        prepare = None
    workloads = _count_spans(c, m, directory)
    return dataclasses.replace(c, connection={**kept, **lab}, labels=labels, prepare=prepare, workloads=workloads)


def _count_spans(c: Campaign, m: manifest.Manifest, directory: str) -> tuple:
    """On a sharded lab, each bundled OLTP workload counts its write transactions that span
    nodes (--shard-nodes, engine/spans.py: those a distributed database commits in two phases)."""
    if not any(n.role in DATA_ROLES for n in m.nodes):
        return c.workloads
    out = []
    for w in c.workloads:
        cls = REGISTRY.get(w.test)
        counts = cls is not None and cls.write_ids is not None and "run" in cls.commands
        if counts and not any(canonical(k) == "shard-nodes" for k in w.options):
            w = dataclasses.replace(w, options={**w.options, "shard-nodes": f"lab:{directory}"})
        out.append(w)
    return tuple(out)


def results_name(c: Campaign, directory: str) -> str:
    """The default results folder's name of ``c`` run on the lab in ``directory``."""
    try:
        return f"{c.name}-lab-{manifest.read(directory).lab}"
    except LabError:
        return c.name


def _options(words: list[str]) -> dict[str, str]:
    """``--key=value`` words of a manifest as a connection table."""
    out = {}
    for word in words:
        key, _, value = word.removeprefix("--").partition("=")
        out[canonical(key)] = value
    return out


def _decided_by_lab(key: str) -> bool:
    key = canonical(key)
    return key == "db-driver" or any(key.endswith("-" + part) for part in ADDRESS if part != "db-driver")


def _check_data(c: Campaign, m: manifest.Manifest, directory: str) -> None:
    """The lab's loaded tables cover the campaign's data (its prepare is skipped)."""
    have_tables, have_rows = m.tables
    want_tables = int(c.data.get("tables", 1))
    want_rows = c.table_size if isinstance(c.table_size, int) else have_rows
    if want_tables > have_tables or want_rows > have_rows:
        raise UsageError(
            f"--lab: campaign '{c.name}' needs {want_tables} tables x {want_rows} rows; the lab {m.lab} in "
            f"'{directory}' loaded {have_tables} x {have_rows}: start it with 'pysysbench lab up {m.lab} "
            f"--dir {directory} --tables {want_tables} --table-size {want_rows}'"
        )
