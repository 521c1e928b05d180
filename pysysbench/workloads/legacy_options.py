"""The sysbench 0.5 command line: option declarations (0.5 and 0.4 names) and
what happens after parsing (spec 7.1).

Role: the options are declared here, next to the code that reads them, and
:class:`LegacyMixin.after_parse` (called by the CLI after phase 2) applies 0.5's
run limits, maps the 0.4 names 0.5 silently ignored onto their 1.0 equivalents
with a ``NOTE:`` line each, and runs the script's own checks.  The scripts are
in :mod:`pysysbench.workloads.legacy`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from ..core.errors import ConfigError
from ..core.options import COUNT, NON_NEGATIVE, PERCENT, Bounds, Option, OptType, RawOption, Values, canonical
from ..core.rand import DISTRIBUTIONS
from .oltp_common import TABLE_SIZE, TABLES
from .select_random import POINTS, RANGES

GROUP = "sysbench 0.5 script options"
OLD_GROUP = "sysbench 0.4 options (accepted for old command lines)"
LEGACY_EVENTS = 10_000  # 0.5's --max-requests default
READ_ONLY_BARE = ("oltp_read_only", "oltp_write_only", "oltp_skip_trx")


def _o(name: str, type_: OptType, default: Any, text: str, group: str = GROUP, bounds: Bounds | None = None) -> Option:
    return Option(name, type_, default, text, group, bounds=bounds)


COMMON_OPTIONS = [
    _o("oltp-tables-count", OptType.INT, 1, "number of tables (1.0: --tables)", bounds=TABLES),
    _o("oltp-table-size", OptType.INT, 10000, "rows per table (1.0: --table_size)", bounds=TABLE_SIZE),
    _o("oltp-auto-inc", OptType.BOOL, True, "AUTO_INCREMENT / SERIAL id; off: ids 1..N sent by the client"),
    _o("oltp-secondary", OptType.BOOL, False, "use a secondary key xid(id) instead of the PRIMARY KEY"),
    _o("oltp-create-secondary", OptType.BOOL, True, "create the k_N index after loading (0.5 always did)"),
    _o("mysql-table-engine", OptType.STRING, "innodb", "storage engine (MyISAM: LOCK TABLES instead of BEGIN/COMMIT)"),
    _o("myisam-max-rows", OptType.INT, 1000000, "MAX_ROWS of the MySQL tables", bounds=NON_NEGATIVE),
    _o("mysql-table-options", OptType.STRING, "", "appended to CREATE TABLE on MySQL"),
    _o(
        "mysql-engine-trx",
        OptType.STRING,
        "auto",
        "whether the engine is transactional (accepted, unused as in 0.5's scripts)",
    ),
    _o(
        "pgsql-variant",
        OptType.STRING,
        "",
        "'redshift': INTEGER IDENTITY(1,1) ids on PostgreSQL, no k_N "
        "index, --oltp-delete-inserts=0 (as 0.5's common.lua)",
    ),
    _o(
        "rand-init",
        OptType.BOOL,
        False,
        "seed the random numbers from the current time (what --rand-seed=0 does anyway)",
    ),
    _o(
        "reconnect",
        OptType.INT,
        0,
        "reconnect after every N events (sysbench 1.1; --oltp-reconnect-mode=transaction sets 1)",
        bounds=COUNT,
    ),
]

OLTP_OPTIONS = COMMON_OPTIONS + [
    _o("oltp-range-size", OptType.INT, 100, "width of the range selects", bounds=COUNT),
    _o("oltp-point-selects", OptType.INT, 10, "point selects per transaction", bounds=COUNT),
    _o("oltp-simple-ranges", OptType.INT, 1, "simple range selects per transaction", bounds=COUNT),
    _o("oltp-sum-ranges", OptType.INT, 1, "SELECT SUM(K) ranges per transaction", bounds=COUNT),
    _o("oltp-order-ranges", OptType.INT, 1, "ORDER BY ranges per transaction", bounds=COUNT),
    _o("oltp-distinct-ranges", OptType.INT, 1, "SELECT DISTINCT ranges per transaction", bounds=COUNT),
    _o("oltp-index-updates", OptType.INT, 1, "UPDATE ... SET k=k+1 per transaction", bounds=COUNT),
    _o("oltp-non-index-updates", OptType.INT, 1, "UPDATE ... SET c=... per transaction", bounds=COUNT),
    _o("oltp-delete-inserts", OptType.INT, 1, "DELETE + INSERT pairs per transaction", bounds=COUNT),
    _o("oltp-range-selects", OptType.BOOL, True, "run the range selects at all"),
    _o("oltp-read-only", OptType.BOOL, False, "no writes (give =on; 0.5 ignored a bare --oltp-read-only)"),
    _o("oltp-write-only", OptType.BOOL, False, "no reads"),
    _o(
        "oltp-skip-trx",
        OptType.BOOL,
        False,
        "no BEGIN/COMMIT (--output-format=0.5 then shows 0 transactions, as 0.5 did)",
    ),
]

XA_OPTIONS = [
    _o(
        "oltp_use_xa_pct",
        OptType.DOUBLE,
        0.0,
        "sysbench-xa fork: an event is an XA transaction when "
        "sb_rand(1,100) <= this (drawn with --rand-type, so not a plain percentage)",
        bounds=PERCENT,
    ),
    _o(
        "oltp_use_xa_2pc_pct",
        OptType.DOUBLE,
        100.0,
        "sysbench-xa fork: an XA transaction commits in two phases unless sb_rand(1,100) > this",
        bounds=PERCENT,
    ),
]

# 0.4 names: 0.5 accepted and ignored them; honoured where they mean something
OLD_OPTIONS = [
    _o("init-rng", OptType.BOOL, False, "0.4 name of --rand-init", OLD_GROUP),
    _o("seed-rng", OptType.INT, 0, "0.4 name of --rand-seed", OLD_GROUP),
    _o("oltp-dist-type", OptType.STRING, "", "0.4 name of --rand-type", OLD_GROUP),
    _o("oltp-dist-iter", OptType.INT, 12, "0.4 name of --rand-spec-iter", OLD_GROUP, Bounds(1)),
    _o("oltp-dist-pct", OptType.DOUBLE, 1.0, "0.4 name of --rand-spec-pct", OLD_GROUP, PERCENT),
    _o("oltp-dist-res", OptType.DOUBLE, 75.0, "0.4 name of --rand-spec-res", OLD_GROUP, PERCENT),
    _o(
        "oltp-test-mode",
        OptType.STRING,
        "complex",
        "0.4 mode {complex, simple, nontrx}: simple = one point "
        "select per event, nontrx = one --oltp-nontrx-mode statement per event",
        OLD_GROUP,
    ),
    _o(
        "oltp-nontrx-mode",
        OptType.STRING,
        "select",
        "0.4 statement of nontrx mode {select, update_key, update_nokey, insert, delete}",
        OLD_GROUP,
    ),
    _o(
        "oltp-reconnect-mode",
        OptType.STRING,
        "session",
        "0.4 {session, transaction}: transaction = reconnect after every event",
        OLD_GROUP,
    ),
    _o("oltp-table-name", OptType.STRING, "sbtest", "0.4 single table name (ignored: 0.5 uses sbtest1..N)", OLD_GROUP),
    _o("oltp-connect-delay", OptType.INT, 10000, "0.4 (ignored)", OLD_GROUP),
    _o("oltp-user-delay-min", OptType.INT, 0, "0.4 (ignored)", OLD_GROUP),
    _o("oltp-user-delay-max", OptType.INT, 0, "0.4 (ignored)", OLD_GROUP),
    _o("oltp-point-select-mysql-handler", OptType.BOOL, False, "0.4 (ignored)", OLD_GROUP),
    _o("oltp-point-select-all-cols", OptType.BOOL, False, "0.4 (ignored)", OLD_GROUP),
    _o("oltp-sp-name", OptType.STRING, "", "0.4 (ignored)", OLD_GROUP),
    _o("mysql-create-options", OptType.STRING, "", "0.4 name of --mysql-table-options", OLD_GROUP),
    _o("tx-jitter", OptType.INT, 0, "0.4 (ignored)", OLD_GROUP),
]

RANDOM_POINTS_OPTIONS = [_o("random-points", OptType.INT, 10, "values in the IN() list", bounds=POINTS)]
RANDOM_RANGES_OPTIONS = [
    _o("number-of-ranges", OptType.INT, 10, "BETWEEN ranges per SELECT", bounds=RANGES),
    _o("random-ranges-delta", OptType.INT, 5, "width of each BETWEEN range", bounds=COUNT),
]

IGNORED_OLD = (
    "oltp_table_name",
    "oltp_connect_delay",
    "oltp_user_delay_min",
    "oltp_user_delay_max",
    "oltp_point_select_mysql_handler",
    "oltp_point_select_all_cols",
    "oltp_sp_name",
    "tx_jitter",
    "mysql_engine_trx",
)
RAND_ALIASES = (
    ("oltp_dist_type", "rand_type"),
    ("oltp_dist_iter", "rand_spec_iter"),
    ("oltp_dist_pct", "rand_spec_pct"),
    ("oltp_dist_res", "rand_spec_res"),
    ("seed_rng", "rand_seed"),
)
NONTRX_MODES = ("select", "update_key", "update_nokey", "insert", "delete")


# --- command-line handling --------------------------------------------------------------------


def _set(values: Values, name: str, value: Any) -> None:
    opt = values.registry.get(name)
    if opt is not None:
        values.set(opt, value)


def legacy_limits(values: Values) -> None:
    """0.5's defaults: --max-requests=10000, --max-time=0; the old names, when
    given, win even with 0 (1.0 only honours them when > 0)."""
    for new, old, default in (("events", "max_requests", LEGACY_EVENTS), ("time", "max_time", 0)):
        if values.is_set(new):
            continue
        _set(values, new, values.get(old) if values.is_set(old) else default)


def _rand_notes(values: Values, say: Callable[[str], None]) -> None:
    for old, new in RAND_ALIASES:
        if not values.is_set(old):
            continue
        value = values.get(old)
        shown = (
            f"--{old.replace('_', '-')}={value:g}" if isinstance(value, float) else f"--{old.replace('_', '-')}={value}"
        )
        if values.is_set(new) and values.get(new) != value:
            say(f"NOTE: {shown} (sysbench 0.4) is ignored in favour of --{new.replace('_', '-')}={values.get(new)}")
            continue
        if new == "rand_type" and value not in DISTRIBUTIONS:
            raise ConfigError(
                f"Invalid value for --oltp-dist-type: '{value}' (choose one of: {', '.join(DISTRIBUTIONS)})"
            )
        _set(values, new, value)
        say(f"NOTE: {shown} (a sysbench 0.4 option that 0.5 ignored) is honoured as --{new.replace('_', '-')}={value}")
    if values.is_set("init_rng"):
        state = "on" if values.init_rng else "off"
        say(
            f"NOTE: --init-rng={state} (a sysbench 0.4 option that 0.5 ignored) is taken as --rand-init={state}: "
            + (
                "random numbers are seeded from the current time"
                if values.init_rng
                else "random numbers are still seeded from the current time unless --rand-seed is given"
            )
        )
        _set(values, "rand_init", values.init_rng)
    if values.rand_init and values.rand_seed:
        raise ConfigError(
            "--rand-init=on and --rand-seed cannot be used together (sysbench 0.5 refuses them "
            "too): --rand-init seeds from the current time, --rand-seed from the given number"
        )


def _old_option_notes(values: Values, say: Callable[[str], None]) -> None:
    for name in IGNORED_OLD:
        if values.is_set(name):
            say(
                f"NOTE: --{name.replace('_', '-')} (sysbench 0.4) has no equivalent in sysbench 0.5's scripts "
                "and is ignored"
            )
    if values.is_set("mysql_create_options"):
        say(
            "NOTE: --mysql-create-options (sysbench 0.4) is honoured: appended to CREATE TABLE on MySQL, as "
            "--mysql-table-options"
        )
    mode = values.oltp_reconnect_mode
    if values.is_set("oltp_reconnect_mode"):
        if mode == "transaction":
            _set(values, "reconnect", 1)
            say(
                "NOTE: --oltp-reconnect-mode=transaction (sysbench 0.4) is honoured: the connection is re-opened "
                "after every event (--reconnect=1)"
            )
        elif mode == "session":
            say("NOTE: --oltp-reconnect-mode=session (sysbench 0.4) is the default behaviour")
        else:
            say(
                f"NOTE: --oltp-reconnect-mode={mode} (sysbench 0.4) is not supported and is ignored "
                "(session and transaction are)"
            )


def _bare_notes(raw: Iterable[RawOption], say: Callable[[str], None]) -> None:
    for item in raw:
        if item.value is None and canonical(item.name) in READ_ONLY_BARE:
            say(
                f"NOTE: a bare --{item.name} is taken as --{item.name}=on (sysbench 0.5 ignored the option "
                "unless written with =on)"
            )


def _variant(values: Values, say: Callable[[str], None]) -> None:
    """0.5's common.lua: --pgsql-variant=redshift turns the k index and the DELETE/INSERT
    pairs off (whatever the driver; the IDENTITY id is PostgreSQL's DDL); it ignored other values."""
    variant = values.get("pgsql_variant", "")
    if variant == "redshift":
        _set(values, "oltp_create_secondary", False)
        _set(values, "oltp_delete_inserts", 0)
    elif variant:
        say(f"WARNING: --pgsql-variant={variant} is not a variant sysbench 0.5 knew (only 'redshift'): ignored")


class LegacyMixin:
    """What every 0.5 script shares on the command line."""

    script = ""  # the 0.5 file name
    accepts_unknown_options = True  # 0.5 accepted any option (a WARNING names the ones unused)
    tx_per_event = 0  # COMMITs per event: 0.5 counted transactions by COMMIT

    @classmethod
    def after_parse(cls, values: Values, raw: list[RawOption], say: Callable[[str], None]) -> None:
        legacy_limits(values)
        if values.registry.get("init_rng") is not None:
            _rand_notes(values, say)
            _old_option_notes(values, say)
        _bare_notes(raw, say)
        _variant(values, say)
        cls.check_options(values, say)

    @classmethod
    def check_options(cls, values: Values, say: Callable[[str], None]) -> None:
        """Script-specific checks and notes (subclasses)."""
