"""Option parsing (spec 1.1, 1.2): ``pysysbench.core.options`` and ``pysysbench.command.cmdline.parse``.

Deliberate deviation tested as intended: numeric options reject garbage with
``Invalid value for the 'X' option: 'v' (...)`` instead of silently reading 0.
"""

from __future__ import annotations

import pytest

from pysysbench.command.cmdline import base_registry, choose_driver, parse
from pysysbench.core.errors import ConfigError, InvalidOption, PySysbenchError, UsageError, WorkloadError
from pysysbench.core.options import (
    Option,
    OptType,
    Registry,
    Values,
    apply_options,
    canonical,
    parse_value,
    split_argv,
)
from pysysbench.workloads import REGISTRY, find_workload

RW = REGISTRY["oltp_read_write"]


def values_of(*argv: str, test: str = "oltp_read_write", command: str = "run") -> Values:
    return parse([*argv, test, command]).values


# --------------------------------------------------------------------------- names


@pytest.mark.parametrize(
    "a,b",
    [
        ("--table-size=123", "--table_size=123"),
        ("--report_interval=3", "--report-interval=3"),
        ("--mysql_host=h1", "--mysql-host=h1"),
        ("--rand_type=uniform", "--rand-type=uniform"),
        ("--point-selects=7", "--point_selects=7"),
        ("--db_driver=sqlite", "--db-driver=sqlite"),
    ],
)
def test_dash_and_underscore_are_interchangeable(a, b):
    assert values_of(a).data == values_of(b).data


def test_canonical_name():
    assert canonical("report-interval") == canonical("report_interval") == "report_interval"
    reg = base_registry()
    assert reg.get("mysql_ignore_errors") is reg.get("mysql-ignore-errors") is not None


def test_mixed_spellings_are_one_option_last_wins():
    v = values_of("--table-size=5", "--table_size=6")
    assert v.table_size == 6
    v = values_of("--report_interval=2", "--report-interval=4")
    assert v.report_interval == 4


# --------------------------------------------------------------------------- BOOL

BOOL = Option("histogram", OptType.BOOL, False, "h")


@pytest.mark.parametrize(
    "raw,expected",
    [
        (None, True),  # bare --histogram
        ("on", True),
        ("true", True),
        ("1", True),
        ("ON", True),
        ("True", True),
        ("off", False),
        ("false", False),
        ("0", False),
        ("OFF", False),
    ],
)
def test_bool_forms(raw, expected):
    assert parse_value(BOOL, raw) is expected


def test_bool_forms_on_the_command_line():
    assert values_of("--histogram").histogram is True
    assert values_of("--histogram=on").histogram is True
    assert values_of("--histogram=off").histogram is False
    assert values_of("--histogram=1").histogram is True
    assert values_of("--histogram=0").histogram is False
    assert values_of("--skip_trx").skip_trx is True
    assert values_of("--skip-trx=false").skip_trx is False
    assert values_of("--range_selects=off").range_selects is False


@pytest.mark.parametrize("raw", ["maybe", "2", "onn", "y e s"])
def test_bool_bad_value(raw):
    with pytest.raises(InvalidOption) as ei:
        parse([f"--histogram={raw}", "oltp_read_write", "run"])
    assert str(ei.value).startswith(f"invalid option: --histogram={raw}")


def test_bool_bad_value_for_workload_option():
    with pytest.raises(InvalidOption) as ei:
        parse(["oltp_read_write", "--skip_trx=perhaps", "run"])
    assert str(ei.value).startswith("invalid option: --skip_trx=perhaps")


# --------------------------------------------------------------------------- INT


def test_int_values():
    v = values_of("--threads=4", "--events=100", "--time=0", "--rate=7", "--report-interval=2")
    assert (v.threads, v.events, v.time, v.rate, v.report_interval) == (4, 100, 0, 7, 2)
    assert isinstance(v.threads, int)


@pytest.mark.parametrize("raw", ["abc", "", "1.5", "4x", "0x10", "inf", "nan"])
def test_int_bad_value(raw):
    with pytest.raises(InvalidOption) as ei:
        parse([f"--threads={raw}", "oltp_read_write", "run"])
    assert str(ei.value).startswith(f"Invalid value for the 'threads' option: '{raw}'")


def test_int_bad_value_message_exact_prefix():
    with pytest.raises(InvalidOption) as ei:
        parse(["--threads=abc", "oltp_read_write", "run"])
    assert str(ei.value).startswith("Invalid value for the 'threads' option: 'abc'")


def test_int_bare_needs_a_value():
    with pytest.raises(InvalidOption) as ei:
        parse(["--threads", "oltp_read_write", "run"])
    assert str(ei.value).startswith("Invalid value for the 'threads' option: ''")


def test_workload_numeric_option_accepts_exponent():
    v = values_of("--table-size=1e3")
    assert v.table_size == 1000 and isinstance(v.table_size, int)
    assert values_of("--table_size=2E4").table_size == 20000
    assert values_of("--tables=3").tables == 3


@pytest.mark.parametrize("raw", ["abc", "1e", "ten"])
def test_workload_numeric_option_rejects_garbage(raw):
    # deliberate deviation: sysbench would silently read 0
    with pytest.raises(InvalidOption) as ei:
        parse(["oltp_read_write", f"--table-size={raw}", "run"])
    assert str(ei.value).startswith(f"Invalid value for the 'table_size' option: '{raw}'")


def test_double_option():
    v = values_of("--rand-pareto-h=0.5", "--rand-spec-pct=2")
    assert v.rand_pareto_h == 0.5 and v.rand_spec_pct == 2.0
    with pytest.raises(InvalidOption) as ei:
        parse(["--rand-pareto-h=abc", "oltp_read_write", "run"])
    assert str(ei.value).startswith("Invalid value for the 'rand-pareto-h' option: 'abc'")


# --------------------------------------------------------------------------- SIZE

SIZE = Option("thread-stack-size", OptType.SIZE, 65536, "s")


@pytest.mark.parametrize(
    "raw,expected",
    [
        ("0", 0),
        ("100", 100),
        ("64K", 64 * 1024),
        ("64k", 64 * 1024),
        ("1M", 1 << 20),
        ("1m", 1 << 20),
        ("2G", 2 << 30),
        ("1T", 1 << 40),
        ("1t", 1 << 40),
    ],
)
def test_size_values(raw, expected):
    assert parse_value(SIZE, raw) == expected


def test_size_on_command_line():
    assert values_of("--thread-stack-size=32K").thread_stack_size == 32768
    assert values_of().thread_stack_size == 65536


@pytest.mark.parametrize("raw", ["12Q", "abc", "K", "-1K"])
def test_size_bad_value(raw):
    with pytest.raises(InvalidOption) as ei:
        parse([f"--thread-stack-size={raw}", "oltp_read_write", "run"])
    assert str(ei.value).startswith(f"Invalid value for the 'thread-stack-size' option: '{raw}'")


# --------------------------------------------------------------------------- LIST / STRING

LIST = Option("mysql-host", OptType.LIST, ["localhost"], "l")


def test_list_values():
    assert parse_value(LIST, "a,b,c") == ["a", "b", "c"]
    assert parse_value(LIST, "one") == ["one"]
    assert parse_value(LIST, "") == []
    assert parse_value(LIST, None) == []


def test_list_on_command_line():
    v = values_of("--mysql-host=h1,h2", "--mysql-port=3306,3307")
    assert v.mysql_host == ["h1", "h2"]
    assert v.mysql_port == ["3306", "3307"]
    assert values_of("--mysql-ignore-errors=all").mysql_ignore_errors == ["all"]
    assert values_of("--mysql-ignore-errors=").mysql_ignore_errors == []
    assert values_of().mysql_ignore_errors == ["1213", "1020", "1205"]
    assert values_of("--report-checkpoints=1,2").report_checkpoints == ["1", "2"]


def test_string_values():
    v = values_of("--rand-type=uniform", "--mysql-db=other", "--mysql-password=")
    assert v.rand_type == "uniform" and v.mysql_db == "other" and v.mysql_password == ""
    assert values_of("--mysql-password=a=b").mysql_password == "a=b"


# --------------------------------------------------------------------------- repeats


def test_repeated_option_last_wins():
    v = values_of("--threads=2", "--threads=3", "--threads=5")
    assert v.threads == 5
    v = values_of("--histogram=on", "--histogram=off")
    assert v.histogram is False
    v = values_of("--mysql-host=a,b", "--mysql-host=c")
    assert v.mysql_host == ["c"]


def test_options_may_appear_anywhere():
    a = parse(["--threads=2", "oltp_read_write", "--tables=3", "run", "--time=4"])
    assert (a.test, a.command) == ("oltp_read_write", "run")
    assert (a.values.threads, a.values.tables, a.values.time) == (2, 3, 4)
    b = parse(["oltp_read_write", "run", "--tables=3", "--threads=2", "--time=4"])
    assert (b.values.threads, b.values.tables, b.values.time) == (2, 3, 4)


def test_defaults():
    v = values_of()
    assert (v.threads, v.events, v.time, v.rate, v.report_interval) == (1, 0, 10, 0, 0)
    assert (v.percentile, v.histogram, v.rand_type, v.rand_seed) == (95, False, "special", 0)
    assert (v.tables, v.table_size, v.range_size, v.point_selects) == (1, 10000, 100, 10)
    assert v.explicit == set()


def test_explicit_tracks_user_options():
    v = values_of("--threads=1", "--mysql_db=x")
    assert v.is_set("threads") and v.is_set("mysql-db")
    assert not v.is_set("time")


# --------------------------------------------------------------------------- deprecated aliases


def test_num_threads_alias():
    inv = parse(["--num-threads=4", "oltp_read_write", "run"])
    assert inv.values.threads == 4
    assert inv.warnings == ["WARNING: --num-threads is deprecated, use --threads instead"]
    assert inv.stderr_warnings == []


def test_num_threads_1_is_not_used_and_does_not_warn():
    inv = parse(["--num-threads=1", "oltp_read_write", "run"])
    assert inv.values.threads == 1
    assert inv.warnings == []
    inv = parse(["--threads=3", "--num-threads=1", "oltp_read_write", "run"])
    assert inv.values.threads == 3
    assert inv.warnings == []


def test_alias_value_overrides_new_option():
    inv = parse(["--num-threads=4", "--threads=8", "oltp_read_write", "run"])
    assert inv.values.threads == 4
    inv = parse(["--time=30", "--max-time=3", "oltp_read_write", "run"])
    assert inv.values.time == 3


def test_max_time_alias():
    inv = parse(["--max-time=7", "oltp_read_write", "run"])
    assert inv.values.time == 7
    assert inv.warnings == ["WARNING: --max-time is deprecated, use --time instead"]
    inv = parse(["--max-time=0", "oltp_read_write", "run"])
    assert inv.values.time == 10 and inv.warnings == []


def test_max_requests_alias():
    inv = parse(["--max-requests=500", "oltp_read_write", "run"])
    assert inv.values.events == 500
    assert inv.warnings == ["WARNING: --max-requests is deprecated, use --events instead"]
    inv = parse(["--max-requests=0", "oltp_read_write", "run"])
    assert inv.values.events == 0 and inv.warnings == []


def test_tx_rate_alias():
    inv = parse(["--tx-rate=100", "oltp_read_write", "run"])
    assert inv.values.rate == 100
    assert inv.warnings == ["WARNING: --tx-rate is deprecated, use --rate instead"]
    inv = parse(["--tx_rate=0", "oltp_read_write", "run"])
    assert inv.values.rate == 0 and inv.warnings == []


def test_several_aliases_warn_once_each():
    inv = parse(["--num-threads=2", "--max-requests=0", "--max-time=3", "oltp_read_write", "run"])
    assert sorted(inv.warnings) == [
        "WARNING: --max-time is deprecated, use --time instead",
        "WARNING: --num-threads is deprecated, use --threads instead",
    ]
    assert (inv.values.threads, inv.values.time, inv.values.events) == (2, 3, 0)


def test_alias_bad_value():
    with pytest.raises(InvalidOption) as ei:
        parse(["--num-threads=x", "oltp_read_write", "run"])
    assert str(ei.value).startswith("Invalid value for the 'num-threads' option: 'x'")


# --------------------------------------------------------------------------- --test / positional words

TEST_WARNING = (
    "WARNING: the --test option is deprecated. You can pass a script name or path on the "
    "command line without any options."
)


def test_test_option_works_and_warns_on_stderr():
    inv = parse(["--test=oltp_read_write", "run"])
    assert inv.test == "oltp_read_write" and inv.command == "run"
    assert inv.workload_cls is RW
    assert inv.stderr_warnings == [TEST_WARNING]
    assert inv.warnings == []


def test_test_option_accepts_workload_options_and_paths():
    inv = parse(["--test=/usr/share/sysbench/oltp_read_write.lua", "--tables=2", "prepare"])
    assert inv.workload_cls is RW and inv.command == "prepare" and inv.values.tables == 2


def test_third_positional_word_is_an_error():
    with pytest.raises(UsageError) as ei:
        parse(["oltp_read_write", "run", "extra"])
    assert str(ei.value) == "Unrecognized command line argument: extra"
    with pytest.raises(UsageError) as ei:
        parse(["--test=oltp_read_write", "run", "again"])
    assert str(ei.value) == "Unrecognized command line argument: again"


def test_test_and_command_words():
    inv = parse(["oltp_point_select", "prepare"])
    assert (inv.test, inv.command) == ("oltp_point_select", "prepare")
    inv = parse(["oltp_point_select"])
    assert (inv.test, inv.command) == ("oltp_point_select", None)
    inv = parse([])
    assert (inv.test, inv.command, inv.workload_cls) == (None, None, None)


# --------------------------------------------------------------------------- unknown options


def test_unknown_option_general_phase():
    with pytest.raises(InvalidOption) as ei:
        parse(["--x=1"])
    assert str(ei.value).startswith("invalid option: --x=1 ")


def test_unknown_option_with_workload():
    with pytest.raises(InvalidOption) as ei:
        parse(["oltp_read_write", "--x", "run"])
    assert str(ei.value).startswith("invalid option: --x ")
    with pytest.raises(InvalidOption) as ei:
        parse(["--nosuch-option=5", "oltp_read_write", "run"])
    assert str(ei.value).startswith("invalid option: --nosuch-option=5 ")


def test_master_only_option_of_another_workload_is_unknown():
    # select_random_points' own option is not an oltp_read_write option
    with pytest.raises(InvalidOption):
        parse(["oltp_read_write", "--random_points=3", "run"])
    assert parse(["select_random_points", "--random_points=3", "run"]).values.random_points == 3


def test_single_dash_and_malformed_options():
    for bad in ("-x", "--", "--=5"):
        with pytest.raises(InvalidOption) as ei:
            split_argv([bad])
        assert str(ei.value).startswith("invalid option: ")


def test_apply_options_strict_and_lenient():
    reg = Registry([Option("a", OptType.INT, 0, "a")])
    v = Values(reg)
    rest = apply_options(v, split_argv(["--a=2", "--b=3"])[0], strict=False)
    assert v.a == 2 and [r.name for r in rest] == ["b"]
    with pytest.raises(InvalidOption):
        apply_options(v, rest, strict=True)


# --------------------------------------------------------------------------- test names


@pytest.mark.parametrize(
    "name",
    [
        "/usr/share/sysbench/oltp_read_write.lua",
        "/usr/local/share/sysbench/oltp_read_write.lua",
        "oltp_read_write.lua",
        "./oltp_read_write.lua",
        "oltp_read_write",
    ],
)
def test_sysbench_script_path_resolves_to_bundled_workload(name):
    assert find_workload(name) is RW
    assert parse([name, "run"]).workload_cls is RW


def test_other_script_paths():
    assert find_workload("/usr/share/sysbench/oltp_point_select.lua") is REGISTRY["oltp_point_select"]
    assert find_workload("/usr/share/sysbench/select_random_ranges.lua") is REGISTRY["select_random_ranges"]


@pytest.mark.parametrize("name", ["oltp_common", "/usr/share/sysbench/oltp_common.lua"])
def test_oltp_common_cannot_run(name):
    # sysbench refuses oltp_common outright; pysysbench lets it prepare/cleanup the data set
    # (the TiDB report prepares with "sysbench oltp_common prepare") but it has no events
    # to run: "oltp_common run" is an error (exit 1, see the CLI transcripts).
    cls = parse([name, "run"]).workload_cls
    assert cls.name == "oltp_common"
    assert "run" not in cls.commands
    assert "prepare" in cls.commands and "cleanup" in cls.commands


def test_unknown_test_name():
    with pytest.raises(WorkloadError) as ei:
        parse(["nosuchtest", "run"])
    assert str(ei.value).startswith("Cannot find benchmark 'nosuchtest'")


# --------------------------------------------------------------------------- driver auto-selection


def driver_for(*argv: str) -> str:
    return choose_driver(parse([*argv, "oltp_read_write", "run"]).values)


def test_driver_default_is_sqlite():
    assert driver_for() == "sqlite"
    assert driver_for("--sqlite-db=x.db") == "sqlite"
    assert driver_for("--threads=4", "--tables=2") == "sqlite"


@pytest.mark.parametrize(
    "opt",
    [
        "--mysql-host=127.0.0.1",
        "--mysql_port=3307",
        "--mysql-user=u",
        "--mysql-password=p",
        "--mysql-db=d",
        "--mysql-ignore-errors=all",
        "--mysql-dry-run",
        "--mysql-socket=/tmp/m.sock",
    ],
)
def test_any_mysql_option_selects_mysql(opt):
    assert driver_for(opt) == "mysql"


@pytest.mark.parametrize(
    "opt", ["--pgsql-host=127.0.0.1", "--pgsql_port=5433", "--pgsql-user=u", "--pgsql-password=p", "--pgsql-db=d"]
)
def test_any_pgsql_option_selects_pgsql(opt):
    assert driver_for(opt) == "pgsql"


def test_mysql_storage_engine_is_a_workload_option_not_a_driver_hint():
    assert driver_for("--mysql_storage_engine=myisam") == "sqlite"


def test_both_families_is_an_error():
    with pytest.raises(ConfigError) as ei:
        driver_for("--mysql-host=a", "--pgsql-host=b")
    assert "--db-driver" in str(ei.value)


def test_explicit_db_driver_wins():
    assert driver_for("--db-driver=sqlite", "--mysql-host=a") == "sqlite"
    assert driver_for("--db-driver=pgsql", "--mysql-host=a") == "pgsql"
    assert driver_for("--db-driver=mysql", "--mysql-host=a", "--pgsql-host=b") == "mysql"
    assert driver_for("--db-driver=mysql") == "mysql"
    assert driver_for("--db_driver=pgsql") == "pgsql"


def test_invalid_driver_name():
    with pytest.raises(PySysbenchError) as ei:
        driver_for("--db-driver=oracle")
    assert "invalid database driver name: 'oracle'" in str(ei.value)


# the pattern option_word / is_option_name replaced (a compiled pattern cost 0.8 M instructions of
# every run's start-up): the same answer for every word
_OPTION_PATTERN = r"^--([A-Za-z0-9][A-Za-z0-9_\-.]*)(?:=(.*))?$"


@pytest.mark.parametrize(
    "arg",
    [
        "--threads=8",
        "--threads",
        "--threads=",
        "--a",
        "--9x=1",
        "--_x=1",
        "---x",
        "--",
        "-",
        "--=1",
        "run",
        "",
        "--mysql-host=a=b",
        "--x.y-z_w=v",
        "--x\n",
        "--x\n\n",
        "--x=\n",
        "--x=a\nb",
        "--x\n=1",
        "--x y=1",
        "--é=1",
        "--xé",
        "--x\t",
        " --x",
        "--x==",
        "--X1=on",
    ],
)
def test_option_words_read_as_the_pattern_did(arg):
    import re

    from pysysbench.core.options import is_option_name, option_word

    m = re.match(_OPTION_PATTERN, arg, re.S)
    assert option_word(arg) == (None if m is None else (m.group(1), m.group(2)))
    name = arg[2:].partition("=")[0]
    assert is_option_name(name) == bool(re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_\-.]*", name))
