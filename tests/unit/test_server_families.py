"""The registry of server families in the server context (engine/servercontext.py, issue 45):
each family is recognised from the answer to its protocol's version query, an unknown server
of a known protocol falls back to that protocol's standard set, a driver without a server
(SQLite, dry-run) has no server context.  Pure data: no server is asked."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from pysysbench.engine.servercontext import (
    FAMILIES,
    MYSQL_SETTINGS,
    MYSQL_STATUS,
    PG_DATABASE,
    PG_SETTINGS,
    PROTOCOLS,
    ServerContext,
    fallback,
    recognise,
)

# what each server's version query answers (mysql: @@version and @@version_comment, joined)
SAMPLES = [
    ("mysql", "10.11.6-MariaDB-0+deb12u1 Debian 12", "MariaDB"),
    ("mysql", "11.4.2-MariaDB mariadb.org binary distribution", "MariaDB"),
    ("mysql", "8.0.11-TiDB-v7.5.1 TiDB Server (Apache License 2.0) Community Edition, MySQL 8.0 compatible", "TiDB"),
    ("mysql", "8.0.36 MySQL Community Server - GPL", "MySQL"),
    ("mysql", "8.0.36-28 Percona Server (GPL), Release 28, Revision 47601f19", "MySQL"),
    ("postgresql", "PostgreSQL 15.5 (Debian 15.5-0+deb12u1) on x86_64-pc-linux-gnu, compiled by gcc", "PostgreSQL"),
    (
        "postgresql",
        "CockroachDB CCL v23.1.11 (x86_64-pc-linux-gnu, built 2023/09/27 01:53:43, go1.19.10)",
        "CockroachDB",
    ),
    (
        "postgresql",
        "PostgreSQL 8.0.2 on i686-pc-linux-gnu, compiled by GCC gcc (GCC) 3.4.2 20041017 "
        "(Red Hat 3.4.2-6.fc3), Redshift 1.0.62709",
        "Redshift",
    ),
]


@pytest.mark.parametrize("protocol, text, name", SAMPLES)
def test_each_known_family_is_recognised_from_its_version_text(protocol, text, name):
    assert recognise(protocol, text).name == name


@pytest.mark.parametrize(
    "protocol, text",
    [
        ("mysql", "5.7.99-FrobDB-v0.1 FrobDB distributed edition"),  # made up: nobody's marks
        ("postgresql", "FrobSQL 2.3 on riscv64"),
        ("mysql", ""),
    ],
)
def test_an_unknown_server_falls_back_to_its_protocols_standard_set(protocol, text):
    family = recognise(protocol, text)
    assert family is fallback(protocol) and family.name.startswith("unknown ")
    standard = {"mysql": (MYSQL_SETTINGS, MYSQL_STATUS), "postgresql": (PG_SETTINGS, PG_DATABASE)}[protocol]
    assert (family.settings, family.status) == standard


def test_a_family_of_one_protocol_is_never_recognised_for_another():
    # a MySQL-protocol server whose version says "PostgreSQL" is still read the MySQL way
    assert recognise("mysql", "5.7.1-compatible-with-PostgreSQL-too").protocol == "mysql"
    assert recognise("postgresql", "MariaDB-looking text").protocol == "postgresql"


def test_every_protocol_has_exactly_one_fallback_and_every_family_a_known_protocol():
    for protocol in PROTOCOLS:
        assert sum(1 for f in FAMILIES if f.protocol == protocol and not f.marks) == 1
    assert all(f.protocol in PROTOCOLS for f in FAMILIES)
    assert len({f.name for f in FAMILIES}) == len(FAMILIES)


@pytest.mark.parametrize("family", ["sqlite", "", "frobdb"])
def test_a_driver_without_a_known_protocol_has_no_server_context(family):
    assert recognise(family, "anything") is None
    ctx = ServerContext(SimpleNamespace(dialect=SimpleNamespace(family=family)))
    assert not ctx.supported
    assert ctx.result(events=10, queries=10)["server"] == ""


def test_the_hit_ratio_is_derived_per_protocol():
    my = ServerContext(SimpleNamespace(dialect=SimpleNamespace(family="mysql")))
    my.start = {"Innodb_buffer_pool_read_requests": 100, "Innodb_buffer_pool_reads": 10}
    my.end = {"Innodb_buffer_pool_read_requests": 300, "Innodb_buffer_pool_reads": 30}
    assert my.result(events=1, queries=1)["derived"]["hit_ratio"] == pytest.approx(0.9)
    pg = ServerContext(SimpleNamespace(dialect=SimpleNamespace(family="postgresql")))
    pg.start = {"blks_hit": 0, "blks_read": 0}
    pg.end = {"blks_hit": 75, "blks_read": 25}
    out = pg.result(events=1, queries=1)
    assert out["derived"]["hit_ratio"] == pytest.approx(0.75)
    assert out["server"] == "unknown PostgreSQL-protocol server"  # nothing asked yet: the fallback
