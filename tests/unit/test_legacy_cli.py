"""The sysbench 0.5 interface: script paths, every legacy option parsed and
mapped, 0.4 names, glued options, 0.5 schema/statements and the 0.5 report."""

from __future__ import annotations

import collections

import pytest

from pysysbench.command.cmdline import choose_driver, parse
from pysysbench.command.glued import known_options, split_body, unglue
from pysysbench.core.errors import ConfigError, InvalidOption, WorkloadError
from pysysbench.core.options import RawOption
from pysysbench.core.rand import Rand
from pysysbench.drivers import REGISTRY as DRIVERS
from pysysbench.output.legacy_text import Format05, report_format
from pysysbench.stats.records import IntervalStat, Summary
from pysysbench.workloads import REGISTRY, find_workload, legacy
from pysysbench.workloads.legacy import (
    DIALECTS,
    LegacyRand,
    check_prepared_transactions,
    create_table_sql,
    keyword_kind,
)

MY = ["--mysql-host=127.0.0.1", "--mysql-user=sbtest"]
PG = ["--db-driver=pgsql", "--pgsql-host=127.0.0.1"]


def inv(*args: str):
    return parse(list(args))


# --- script paths ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "path, cls",
    [
        ("tests/db/oltp.lua", legacy.Oltp),
        ("/root/sysbench_for_z3/sysbench/tests/db/oltp.lua", legacy.Oltp),
        ("oltp.lua", legacy.Oltp),
        ("legacy/oltp.lua", legacy.Oltp),
        ("tests/db/select.lua", legacy.Select),
        ("tests/db/insert.lua", legacy.Insert),
        ("tests/db/delete.lua", legacy.Delete),
        ("tests/db/update_index.lua", legacy.UpdateIndex),
        ("tests/db/update_non_index.lua", legacy.UpdateNonIndex),
        ("tests/db/oltp_simple.lua", legacy.OltpSimple),
        ("tests/db/parallel_prepare.lua", legacy.ParallelPrepare),
        ("tests/db/select_random_points.lua", legacy.SelectRandomPoints),
        ("tests/db/select_random_ranges.lua", legacy.SelectRandomRanges),
        ("../sysbench/tests/db/bulk_insert.lua", legacy.LegacyBulkInsert),
        ("tests/db/oltp-xa.lua", legacy.OltpXa),
        ("tests/db/update_non_index_xa.lua", legacy.UpdateNonIndexXa),
        ("tests/db/oltp-randtabs.lua", legacy.OltpRandTabs),
        ("tests/db/our_oltp.lua", legacy.TencentOltp),
        ("tests/include/oltp_legacy/select_random_ranges.lua", legacy.SelectRandomRanges),
    ],
)
def test_script_paths(path, cls):
    assert find_workload(path) is cls
    assert cls.source == path


@pytest.mark.parametrize(
    "path, name",
    [
        ("/usr/share/sysbench/select_random_points.lua", "select_random_points"),
        ("select_random_ranges.lua", "select_random_ranges"),
        ("bulk_insert", "bulk_insert"),
        ("/usr/share/sysbench/oltp_read_write.lua", "oltp_read_write"),
    ],
)
def test_names_shared_with_1_0_stay_1_0_outside_tests_db(path, name):
    assert find_workload(path) is REGISTRY[name]


def test_olap_workloads_registered():
    for name in ("olap_point_select", "olap_simple_range", "olap_sum_range", "olap_order_range", "olap_distinct_range"):
        assert name in REGISTRY


# --- every legacy option parsed and mapped --------------------------------------------------


def test_oltp_counts_and_switches():
    i = inv(
        "--test=tests/db/oltp.lua",
        "--oltp-tables-count=3",
        "--oltp_table_size=500",
        "--oltp-range-size=7",
        "--oltp-point-selects=4",
        "--oltp-simple-ranges=2",
        "--oltp-sum-ranges=0",
        "--oltp-order-ranges=3",
        "--oltp-distinct-ranges=0",
        "--oltp-index-updates=2",
        "--oltp-non-index-updates=0",
        "--oltp-delete-inserts=2",
        "--oltp-range-selects=off",
        "--oltp-read-only=on",
        "--oltp-skip-trx=on",
        "--oltp-auto-inc=off",
        "--oltp-secondary=on",
        "--oltp-create-secondary=off",
        "--mysql-table-engine=myisam",
        "--myisam-max-rows=5000",
        "--mysql-table-options=COMMENT 'x'",
        "--mysql-engine-trx=yes",
        *MY,
        "run",
    )
    v = i.values
    assert (v.oltp_tables_count, v.oltp_table_size, v.oltp_range_size) == (3, 500, 7)
    assert (
        v.oltp_point_selects,
        v.oltp_simple_ranges,
        v.oltp_sum_ranges,
        v.oltp_order_ranges,
        v.oltp_distinct_ranges,
        v.oltp_index_updates,
        v.oltp_non_index_updates,
        v.oltp_delete_inserts,
    ) == (4, 2, 0, 3, 0, 2, 0, 2)
    assert (
        v.oltp_range_selects,
        v.oltp_read_only,
        v.oltp_skip_trx,
        v.oltp_auto_inc,
        v.oltp_secondary,
        v.oltp_create_secondary,
    ) == (False, True, True, False, True, False)
    assert (v.mysql_table_engine, v.myisam_max_rows, v.mysql_table_options) == ("myisam", 5000, "COMMENT 'x'")
    assert choose_driver(v) == "mysql"
    w = i.workload_cls(v, DRIVERS["mysql"](v))
    assert w.counts == {
        "oltp_point_selects": 4,
        "oltp_simple_ranges": 2,
        "oltp_sum_ranges": 0,
        "oltp_order_ranges": 3,
        "oltp_distinct_ranges": 0,
        "oltp_index_updates": 2,
        "oltp_non_index_updates": 0,
        "oltp_delete_inserts": 2,
    }
    assert (w.tables, w.table_size, w.width, w.reads, w.writes, w.trx) == (3, 500, 6, True, False, False)
    assert w.tx_per_event == 0  # --oltp-skip-trx: 0.5 reports 0 transactions


def test_myisam_uses_lock_tables_on_mysql_only():
    v = inv("tests/db/oltp.lua", "--oltp-tables-count=3", "--mysql-table-engine=MyISAM", *MY, "run").values
    w = legacy.Oltp(v, DRIVERS["mysql"](v))
    assert w.begin_sql == "LOCK TABLES sbtest1 WRITE ,sbtest2 WRITE ,sbtest3 WRITE"
    assert w.commit_sql == "UNLOCK TABLES"
    v = inv("tests/db/oltp.lua", "--mysql-table-engine=myisam", *PG, "run").values
    assert choose_driver(v) == "pgsql"  # --mysql-table-engine does not pick the MySQL driver
    w = legacy.Oltp(v, DRIVERS["pgsql"](v))
    assert (w.begin_sql, w.commit_sql) == ("BEGIN", "COMMIT")


def test_general_legacy_options():
    i = inv(
        "--test=tests/db/oltp.lua",
        "--num-threads=8",
        "--max-time=30",
        "--max-requests=0",
        "--tx-rate=5",
        "--rand-init=on",
        "--rand-type=pareto",
        "--rand-spec-iter=6",
        "--rand-spec-pct=2",
        "--rand-spec-res=50",
        "--rand-pareto-h=0.3",
        "--percentile=99",
        "--report-interval=10",
        "run",
    )
    v = i.values
    assert (v.threads, v.time, v.events, v.rate, v.rand_init, v.rand_type) == (8, 30, 0, 5, True, "pareto")
    assert (v.rand_spec_iter, v.rand_spec_pct, v.rand_spec_res, v.rand_pareto_h) == (6, 2.0, 50.0, 0.3)
    assert v.percentile == 99
    assert "WARNING: --num-threads is deprecated, use --threads instead" in i.warnings


def test_legacy_limits_default_to_10000_requests_no_time():
    v = inv("tests/db/oltp.lua", "run").values
    assert (v.events, v.time) == (10000, 0)
    v = inv("tests/db/oltp.lua", "--max-requests=0", "--max-time=0", "run").values
    assert (v.events, v.time) == (0, 0)
    v = inv("tests/db/oltp.lua", "--max-time=5", "run").values
    assert (v.events, v.time) == (10000, 5)
    v = inv("tests/db/oltp.lua", "--events=7", "--time=3", "run").values
    assert (v.events, v.time) == (7, 3)
    v = inv("oltp_read_write", "run").values  # 1.0 scripts keep 1.0's defaults
    assert (v.events, v.time) == (0, 10)


def test_04_names_are_honoured_with_a_note():
    i = inv(
        "tests/db/oltp.lua",
        "--oltp-dist-type=uniform",
        "--oltp-dist-iter=4",
        "--oltp-dist-pct=3",
        "--oltp-dist-res=60",
        "--seed-rng=11",
        "run",
    )
    v = i.values
    assert (v.rand_type, v.rand_spec_iter, v.rand_spec_pct, v.rand_spec_res, v.rand_seed) == (
        "uniform",
        4,
        3.0,
        60.0,
        11,
    )
    notes = [w for w in i.warnings if w.startswith("NOTE:")]
    assert len(notes) == 5 and all("sysbench 0.4" in n for n in notes)


def test_init_rng_maps_to_rand_init():
    i = inv("tests/db/oltp.lua", "--init-rng=on", "run")
    assert i.values.rand_init is True
    assert any(w.startswith("NOTE: --init-rng=on") for w in i.warnings)


def test_explicit_rand_type_wins_over_dist_type():
    i = inv("tests/db/oltp.lua", "--rand-type=special", "--oltp-dist-type=uniform", "run")
    assert i.values.rand_type == "special"
    assert any("ignored in favour of --rand-type=special" in w for w in i.warnings)


def test_bad_dist_type():
    with pytest.raises(ConfigError, match="oltp-dist-type"):
        inv("tests/db/oltp.lua", "--oltp-dist-type=normal", "run")


def test_rand_init_with_seed_is_an_error():
    with pytest.raises(ConfigError, match="cannot be used together"):
        inv("tests/db/oltp.lua", "--rand-init=on", "--rand-seed=3", "run")


def test_ignored_04_names_get_a_note():
    i = inv(
        "tests/db/oltp.lua",
        "--oltp-table-name=t",
        "--oltp-connect-delay=5",
        "--oltp-user-delay-min=1",
        "--oltp-user-delay-max=2",
        "--oltp-point-select-mysql-handler=on",
        "--oltp-point-select-all-cols=on",
        "--oltp-sp-name=p",
        "--tx-jitter=3",
        "run",
    )
    ignored = [w for w in i.warnings if w.endswith("and is ignored")]
    assert len(ignored) == 8


def test_reconnect_mode_transaction():
    i = inv("tests/db/oltp.lua", "--oltp-reconnect-mode=transaction", "run")
    assert i.values.reconnect == 1
    assert any("--oltp-reconnect-mode=transaction" in w for w in i.warnings)


def test_mysql_create_options_appended():
    v = inv("tests/db/oltp.lua", "--mysql-create-options=ROW_FORMAT=COMPRESSED", *MY, "run").values
    assert "ROW_FORMAT=COMPRESSED" in create_table_sql(DIALECTS["mysql"], v, 1)


@pytest.mark.parametrize("mode, step", [("simple", "point_select"), ("nontrx", "index_update")])
def test_test_mode(mode, step):
    i = inv("tests/db/oltp.lua", f"--oltp-test-mode={mode}", "--oltp-nontrx-mode=update_key", "run")
    w = legacy.Oltp(i.values, DRIVERS["sqlite"](i.values))
    assert w.single == step and w.tx_per_event == 0
    assert any(f"--oltp-test-mode={mode}" in x for x in i.warnings)


def test_test_mode_sp_refused():
    with pytest.raises(ConfigError, match="sp"):
        inv("tests/db/oltp.lua", "--oltp-test-mode=sp", "run")


def test_read_and_write_only_exclusive():
    with pytest.raises(ConfigError, match="mutually exclusive"):
        inv("tests/db/oltp.lua", "--oltp-read-only=on", "--oltp-write-only=on", "run")


def test_bare_read_only_is_on_with_a_note():
    i = inv("tests/db/oltp.lua", "--oltp-read-only", "run")
    assert i.values.oltp_read_only is True
    assert any(w.startswith("NOTE: a bare --oltp-read-only") for w in i.warnings)


def test_xa_options_warn_on_plain_oltp_only():
    i = inv("tests/db/oltp.lua", "--oltp_use_xa_pct=0", "--oltp_use_xa_2pc_pct=80", "run")
    warn = [w for w in i.warnings if "oltp_use_xa" in w]
    assert len(warn) == 1 and "ignores them" in warn[0] and warn[0].startswith("WARNING:")
    i = inv("tests/db/oltp-xa.lua", "--oltp_use_xa_pct=50", "--oltp_use_xa_2pc_pct=80", "run")
    assert not [w for w in i.warnings if "oltp_use_xa" in w]
    assert (i.values.oltp_use_xa_pct, i.values.oltp_use_xa_2pc_pct) == (50.0, 80.0)


def test_unknown_options_accepted_with_a_warning_by_legacy_scripts_only():
    i = inv("tests/db/oltp.lua", "--oltp-foo=1", "run")
    assert any(w.startswith("WARNING: --oltp-foo is not an option of oltp.lua") for w in i.warnings)
    with pytest.raises(InvalidOption):
        inv("oltp_read_write", "--oltp-foo=1", "run")


def test_select_random_options():
    v = inv("tests/db/select_random_points.lua", "--random-points=3", "run").values
    assert v.random_points == 3
    v = inv("tests/db/select_random_ranges.lua", "--number-of-ranges=4", "--random-ranges-delta=9", "run").values
    assert (v.number_of_ranges, v.random_ranges_delta) == (4, 9)


def test_tencent_variant_defaults():
    v = inv("tests/db/our_oltp.lua", "run").values
    w = legacy.TencentOltp(v, DRIVERS["sqlite"](v))
    assert [n for n, c in w.counts.items() if c] == ["oltp_point_selects", "oltp_index_updates"]
    assert (w.counts["oltp_point_selects"], w.counts["oltp_index_updates"]) == (4, 1)


def test_help_lists_legacy_options():
    names = {o.name for o in legacy.Oltp.options}
    assert {
        "oltp-tables-count",
        "oltp-table-size",
        "oltp-point-selects",
        "oltp-delete-inserts",
        "oltp-read-only",
        "oltp-write-only",
        "oltp-skip-trx",
        "oltp-auto-inc",
        "oltp-dist-type",
        "oltp-test-mode",
        "init-rng",
        "rand-init",
        "mysql-table-engine",
        "oltp_use_xa_pct",
    } <= names


# --- glued options ------------------------------------------------------------------------


KUNLUN_RW = (
    "--max-time=300 --test=tests/db/oltp.lua  --pgsql-host=h  --pgsql-port=5432 "
    "--pgsql-db=legacy--oltp_tables_count=3 --oltp-table-size=100  --oltp-write-only=off "
    "--oltp-read-only=off--init-rng=on --num-threads=4 --max-requests=0 --oltp-dist-type=uniform "
    "--pgsql-user=sbtest--pgsql-password=pw --oltp_auto_inc=off --db-driver=pgsql --oltp_use_xa_pct=0 "
    "--oltp_use_xa_2pc_pct=80--report-interval=10 run"
).split()
KUNLUN_WO = (
    "--max-time=300--test=tests/db/oltp.lua --pgsql-host=h --pgsql-port=5432 --pgsql-db=legacy "
    "--oltp_tables_count=3--oltp-table-size=100 --oltp-write-only=on --oltp-read-only=off "
    "--init-rng=on--num-threads=4  --max-requests=0--oltp-dist-type=uniform --pgsql-user=sbtest "
    "--pgsql-password=--oltp_auto_inc=off --db-driver=pgsql --oltp_use_xa_pct=0--oltp_use_xa_2pc_pct=80 "
    "--report-interval=10 run"
).split()


def test_kunlunbase_read_write_line_is_unglued():
    i = inv(*KUNLUN_RW)
    v = i.values
    assert i.workload_cls is legacy.Oltp
    assert (
        v.pgsql_db,
        v.oltp_tables_count,
        v.oltp_read_only,
        v.init_rng,
        v.pgsql_user,
        v.pgsql_password,
        v.oltp_use_xa_2pc_pct,
        v.report_interval,
    ) == ("legacy", 3, False, True, "sbtest", "pw", 80.0, 10)
    split = [w for w in i.warnings if w.startswith("WARNING: split the glued argument")]
    assert len(split) == 4
    assert not any("pw" in w for w in i.warnings)  # the password is masked


def test_kunlunbase_write_only_line_is_unglued_but_never_a_password():
    i = inv(*KUNLUN_WO)
    v = i.values
    assert i.workload_cls is legacy.Oltp and i.test == "tests/db/oltp.lua"
    assert (v.time, v.oltp_tables_count, v.oltp_table_size, v.threads, v.events, v.rand_type) == (
        300,
        3,
        100,
        4,
        0,
        "uniform",
    )
    assert (v.oltp_use_xa_pct, v.oltp_use_xa_2pc_pct) == (0.0, 80.0)
    assert v.pgsql_password == "--oltp_auto_inc=off"  # a secret's value is never split ...
    assert v.oltp_auto_inc is True
    assert any("value of --pgsql-password looks like it has another option glued" in w for w in i.warnings)
    assert not any("oltp_auto_inc=off" in w for w in i.warnings)  # ... nor shown


def _lookup():
    return known_options(parse([]).values.registry, list(REGISTRY.values()) + list(legacy.LEGACY_SCRIPTS.values()))


@pytest.mark.parametrize(
    "arg, expected",
    [
        ("mysql-db=a--b", [("mysql-db", "a--b")]),  # 'b' is not an option
        ("mysql-db=a--threads", [("mysql-db", "a--threads")]),  # bare INT is not valid
        ("mysql-db=a--b--threads=2", [("mysql-db", "a--b"), ("threads", "2")]),
        ("debug--threads=2", [("debug", None), ("threads", "2")]),  # a bare flag glued to the next
        ("oltp-read-only=off--init-rng=on", [("oltp-read-only", "off"), ("init-rng", "on")]),
        ("db-ps-mode=x--threads=2", None),  # 'x' is not a ps mode
        ("threads=4", [("threads", "4")]),
    ],
)
def test_split_body(arg, expected):
    assert split_body(arg, _lookup()) == expected


def test_config_file_values_are_not_split():
    out, warnings = unglue([RawOption("mysql-db", "a--threads=2", " (in f line 1)")], _lookup())
    assert out == [RawOption("mysql-db", "a--threads=2", " (in f line 1)")] and warnings == []


def test_secret_first_piece_is_never_split():
    out, warnings = unglue([RawOption("mysql-password", "x--threads=2")], _lookup())
    assert out == [RawOption("mysql-password", "x--threads=2")]
    assert len(warnings) == 1 and "x--" not in warnings[0]


def test_glued_options_with_1_0_tests():
    i = inv("oltp_read_write", "--tables=2--table-size=50", "run")
    assert (i.values.tables, i.values.table_size) == (2, 50)


# --- 0.5 statements, schema and random numbers -----------------------------------------------


def test_keyword_classification():
    assert [
        keyword_kind(s)
        for s in (
            "SELECT 1",
            "  select c",
            "INSERT x",
            "update y",
            "DELETE z",
            "BEGIN",
            "COMMIT",
            "UNLOCK TABLES",
            "XA COMMIT 'x'",
        )
    ] == ["reads", "reads", "writes", "writes", "writes", "others", "others", "others", "others"]


def test_mysql_schema_05():
    v = inv("tests/db/oltp.lua", *MY, "prepare").values
    assert create_table_sql(DIALECTS["mysql"], v, 3) == (
        "CREATE TABLE sbtest3 (\nid INTEGER UNSIGNED NOT NULL AUTO_INCREMENT,\n"
        "k INTEGER UNSIGNED DEFAULT '0' NOT NULL,\nc CHAR(120) DEFAULT '' NOT NULL,\n"
        "pad CHAR(60) DEFAULT '' NOT NULL,\nPRIMARY KEY (id)\n) /*! ENGINE = innodb MAX_ROWS = 1000000 */ "
    )


def test_pgsql_schema_05_serial_even_without_auto_inc():
    v = inv("tests/db/oltp.lua", "--oltp-auto-inc=off", *PG, "prepare").values
    sql = create_table_sql(DIALECTS["postgresql"], v, 1)
    assert sql.startswith("CREATE TABLE sbtest1 (\nid SERIAL NOT NULL,\nk INTEGER DEFAULT '0' NOT NULL,")


def _lrand(*args: str) -> LegacyRand:
    v = inv("tests/db/oltp.lua", *args, "run").values
    return LegacyRand(Rand(123, rand_type=v.rand_type), v)


def test_legacy_special_band():
    r = _lrand()
    draws = [r.default(1, 10000) for _ in range(20000)]
    band = sum(4951 <= d <= 5050 for d in draws) / len(draws)
    assert 0.74 < band < 0.80  # 75 % in a 1 % band (plus the gaussian's share of it)
    assert min(draws) >= 1 and max(draws) <= 10000


def test_legacy_uniform_and_gaussian():
    r = _lrand("--rand-type=uniform")
    draws = [r.default(1, 10) for _ in range(5000)]
    assert set(draws) == set(range(1, 11))
    counts = collections.Counter(draws)
    assert min(counts.values()) > 400
    g = _lrand("--rand-type=gaussian")
    draws = [g.default(1, 1000) for _ in range(5000)]
    assert 470 < sum(draws) / len(draws) < 530


def test_prepared_transactions_check():
    with pytest.raises(WorkloadError, match="max_prepared_transactions = 0"):
        check_prepared_transactions(0, 4)
    with pytest.raises(WorkloadError, match="below --num-threads"):
        check_prepared_transactions(2, 4)
    check_prepared_transactions(100, 4)


# --- the 0.5 report format -----------------------------------------------------------------


def _summary(**kw) -> Summary:
    base = dict(
        total_time_s=51.0021,
        elapsed_s=51.0021,
        threads=2,
        events=1000,
        reads=14000,
        writes=4000,
        others=2000,
        errors=0,
        reconnects=0,
        lat_min_ns=1_580_000,
        lat_max_ns=25_680_000,
        lat_sum_ns=2_230_000_000,
        percentile=95,
        latency_pct_ms=2.35,
        hist=(0,) * 1024,
        thread_events=(500, 500),
        thread_lat_ns=(1_115_000_000, 1_115_000_000),
    )
    base.update(kw)
    return Summary(**base)


def test_summary_05_layout():
    text = Format05(tx_per_event=1).summary_block(_summary())
    assert text.splitlines() == [
        "OLTP test statistics:",
        "    queries performed:",
        "        read:                            14000",
        "        write:                           4000",
        "        other:                           2000",
        "        total:                           20000",
        "    transactions:                        1000   (19.61 per sec.)",
        "    read/write requests:                 18000  (352.93 per sec.)",
        "    other operations:                    2000   (39.21 per sec.)",
        "    ignored errors:                      0      (0.00 per sec.)",
        "    reconnects:                          0      (0.00 per sec.)",
        "",
        "General statistics:",
        "    total time:                          51.0021s",
        "    total number of events:              1000",
        "    total time taken by event execution: 2.2300s",
        "    response time:",
        "         min:                                  1.58ms",
        "         avg:                                  2.23ms",
        "         max:                                 25.68ms",
        "         approx.  95 percentile:               2.35ms",
        "",
        "Threads fairness:",
        "    events (avg/stddev):           500.0000/0.00",
        "    execution time (avg/stddev):   1.1150/0.00",
        "",
    ]


def test_summary_05_counts_transactions_by_commit():
    text = Format05(tx_per_event=0).summary_block(_summary())
    assert "    transactions:                        0      (0.00 per sec.)" in text
    assert "    total number of events:              1000" in text


def test_interval_05_layout():
    st = IntervalStat(
        time_s=10.0,
        interval_s=10.0,
        threads_running=8,
        events=16088,
        reads=160884,
        writes=0,
        others=32176,
        errors=0,
        reconnects=0,
        percentile=95,
        latency_pct_ms=5.93,
    )
    assert Format05(1).interval_line(st) == (
        "[  10s] threads: 8, tps: 1608.80, reads: 16088.40, writes: 0.00, "
        "response time: 5.93ms (95%), errors: 0.00, reconnects:  0.00"
    )


def test_banner_05():
    v = inv("tests/db/oltp.lua", "--num-threads=8", "--report-interval=10", "--rand-init=on", "run").values
    assert Format05(1).banner(v) == [
        "Running the test with following options:",
        "Number of threads: 8",
        "Report intermediate results every 10 second(s)",
        "Initializing random number generator from timer.\n",
        "Random number generator seed is 0 and will be ignored\n",
        "",
    ]


def test_output_format_option():
    v = inv("tests/db/oltp.lua", "--output-format=0.5", "run").values
    assert report_format(v, legacy.Oltp).tx_per_event == 0  # the class default; instances set their own
    assert report_format(inv("oltp_read_write", "run").values, None) is None
    with pytest.raises(InvalidOption):
        inv("oltp_read_write", "--output-format=0.4", "run")


def test_many_dashes_stay_fast():
    import time

    arg = "mysql-db=" + "a--mysql-db=" * 60 + "x--zzz"
    t0 = time.perf_counter()
    pieces = split_body(arg, _lookup())
    assert time.perf_counter() - t0 < 2.0
    assert len(pieces) == 61 and pieces[-1] == ("mysql-db", "x--zzz")
    huge = [RawOption("mysql-db", "a" + "--threads=1" * 1000)]  # beyond MAX_GLUED: not split
    assert unglue(huge, _lookup()) == (huge, [])
