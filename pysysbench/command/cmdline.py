"""The sysbench command-line surface: general options, deprecated aliases,
help text, and the two-phase parse that turns argv into a :class:`Invocation`.
"""

from __future__ import annotations

import functools
import inspect
import os
import stat
import sys
from collections.abc import Callable
from dataclasses import field, replace

from ..core.errors import ConfigError, InvalidOption, UsageError, WorkloadError
from ..core.options import (
    PERCENT,
    Bounds,
    Option,
    OptType,
    RawOption,
    Registry,
    Values,
    apply_options,
    canonical,
    check_bounds,
    help_block,
    option_text,
    split_argv,
)
from ..core.rand import DISTRIBUTIONS
from ..core.rand_compat import COMPAT_OPTIONS, compat_warnings
from ..core.record import record
from ..drivers import DB_OPTIONS
from ..drivers import REGISTRY as DRIVERS
from ..drivers.base import by_option_prefix
from ..engine.options import ENGINE_OPTIONS, forced_shutdown_s, validate_engine
from ..engine.ray_options import RAY_OPTIONS
from ..load.options import GROUP as LOAD_GROUP
from ..load.options import LOAD_OPTIONS
from ..output import face
from ..output.registry import OUTPUT_OPTIONS
from ..output.sysbench_help import GENERAL_HELP as SYSBENCH_HELP
from ..output.sysbench_help import GENERAL_HELP_11 as SYSBENCH_HELP_11
from ..workloads import REGISTRY as WORKLOADS
from ..workloads import find_workload
from ..workloads.base import Workload
from .glued import known_options, test_name, unglue

G = "General options"
R = "Pseudo-Random Numbers Generator options"
L = "Log options"


def c_ints(options: list[Option]) -> list[Option]:
    """sysbench's general integer options are C ints (``sb_get_value_int``): a value beyond
    one (``--time=10000000000``) is refused while parsing, with sysbench's message."""
    return [replace(o, c_int=True) if o.type is OptType.INT else o for o in options]


GENERAL_OPTIONS = c_ints(ENGINE_OPTIONS) + c_ints(
    [  # the engine's first, in sysbench's order
        Option("debug", OptType.BOOL, False, "print more debugging info (and tracebacks)", G),
        Option("validate", OptType.BOOL, False, "perform validation checks where possible", G),
        Option("help", OptType.BOOL, False, "print help and exit", G),
        Option("version", OptType.BOOL, False, "print version and exit", G),
        Option("config-file", OptType.FILE, "", "File containing command line options", G),
        Option("result-file", OptType.STRING, "", "write a JSON document of the run to this file", G),
        Option(
            "latency-log",
            OptType.STRING,
            "",
            "write one CSV line per transaction of the measured phase to this "
            "file: end time (Unix s), thread, latency (us), restarting error code",
            G,
        ),
        Option(
            "latency-log-rate",
            OptType.DOUBLE,
            1.0,
            "fraction of the transactions --latency-log keeps (random sample; 1 = all)",
            G,
            bounds=Bounds(0.0, 1.0, open_min=True),
        ),
        Option(
            "metrics-addr",
            OptType.STRING,
            "",
            "serve live Prometheus metrics of the run at HOST:PORT (needs pip install 'pysysbench[metrics]')",
            G,
        ),
        Option(
            "server-context",
            OptType.BOOL,
            True,
            "with --result-file: store the server's key settings and its "
            "counters' deltas over the measured phase (hit ratio, lock waits, server CPU) in the result file",
            G,
        ),
        Option(
            "server-nodes",
            OptType.STRING,
            "",
            "sample every database node once per report interval on a session of its own: lab:DIR (the SQL "
            "nodes of a 'pysysbench lab' manifest) or HOST:PORT,HOST:PORT; per-node queries, commits, errors, "
            "CPU and up/down in the result file, one line per node after the report, skew flagged",
            G,
            extra=True,
        ),
        Option(
            "shard-nodes",
            OptType.STRING,
            "",
            "the nodes the sbtest tables are hash-partitioned over: lab:DIR (a lab's data nodes or shards) or "
            "HOST:PORT,...; count the write transactions whose rows are on more than one of them (those a "
            "distributed database commits with two-phase commit); bundled OLTP workloads",
            G,
            extra=True,
        ),
        Option(
            "fault",
            OptType.STRING,
            "",
            "NODE@SECONDS: kill NODE of the lab --fault-lab at that second of the run, start it again "
            "after --fault-down; report the time to recover (needs --report-interval; docs/lab.md)",
            G,
        ),
        Option("fault-lab", OptType.STRING, "", "the folder of the lab --fault acts on (that of 'lab up --dir')", G),
        Option(
            "fault-down",
            OptType.DOUBLE,
            5.0,
            "seconds the node --fault kills stays down before it is started again",
            G,
            bounds=Bounds(0.0),
        ),
        Option(
            "lua-bundled",
            OptType.BOOL,
            False,
            "run the bundled test names (oltp_read_write, ...) through the Lua "
            "files of the sysbench package with the Lua engine instead of natively",
            G,
        ),
        Option(
            "sysbench-compat",
            OptType.STRING,
            face.DEFAULT_COMPAT,
            "the sysbench release to copy: its options, "
            "defaults, help and report ('1.0': 1.0.20, '1.1': 1.1.0; also PYSYSBENCH_COMPAT)",
            G,
            choices=tuple(face.SYSBENCH_VERSIONS),
            extra=True,
        ),
        Option(
            "luajit-cmd",
            OptType.STRING,
            "",
            "perform LuaJIT control command. This option is equivalent to 'luajit -j'. "
            "See LuaJIT documentation for more information",
            G,
            show_default=False,
        ),
        Option("test", OptType.STRING, "", "deprecated: the test name or script path", G, show_default=False),
        Option("tx-rate", OptType.INT, 0, "deprecated alias for --rate", G, alias_for="rate"),
        Option("max-requests", OptType.INT, 0, "deprecated alias for --events", G, alias_for="events"),
        Option("max-time", OptType.INT, 0, "deprecated alias for --time", G, alias_for="time"),
        Option("num-threads", OptType.INT, 1, "deprecated alias for --threads", G, alias_for="threads"),
    ]
)

RAND_OPTIONS = c_ints(
    [
        Option(
            "rand-type", OptType.STRING, "special", "random numbers distribution {" + ",".join(DISTRIBUTIONS) + "}", R
        ),
        Option(
            "rand-spec-iter",
            OptType.INT,
            12,
            "number of iterations used for numbers generation",
            R,
            bounds=Bounds(1),
            gone_in="1.1",
        ),
        Option(
            "rand-spec-pct",
            OptType.DOUBLE,
            1.0,
            "percentage of values to be treated as 'special' (for special distribution)",
            R,
            bounds=PERCENT,
            gone_in="1.1",
        ),
        Option(
            "rand-spec-res",
            OptType.DOUBLE,
            75.0,
            "percentage of 'special' values to use (for special distribution)",
            R,
            bounds=PERCENT,
            gone_in="1.1",
        ),
        Option(
            "rand-seed",
            OptType.INT,
            0,
            "seed for random number generator. When 0, the current time is used as a RNG seed.",
            R,
        ),
        Option(
            "rand-pareto-h",
            OptType.DOUBLE,
            0.2,
            "parameter h for pareto distribution",
            R,
            bounds=Bounds(1e-15, 1.0, open_max=True, why="below that 1 - h rounds to 1"),
        ),
        Option(
            "rand-zipfian-exp",
            OptType.DOUBLE,
            0.8,
            "shape parameter (exponent, theta) for the Zipfian distribution",
            R,
            bounds=Bounds(0.0),
        ),
    ]
)

LOG_OPTIONS = c_ints(
    [
        Option(
            "verbosity",
            OptType.INT,
            3,
            "verbosity level {5 - debug, 0 - only critical messages}",
            L,
            bounds=Bounds(0, 5),
        ),
        Option(
            "percentile",
            OptType.INT,
            95,
            "percentile to calculate in latency statistics (1-100). Use the "
            "special value of 0 to disable percentile calculations",
            "",
            bounds=Bounds(0, 100),
        ),
        Option("histogram", OptType.BOOL, False, "print latency histogram in report", ""),
    ]
)

# deprecated alias -> (new name, condition under which the alias is used) (spec 1.2)
ALIASES = {
    "num_threads": lambda v: v > 1,
    "max_requests": lambda v: v > 0,
    "max_time": lambda v: v > 0,
    "tx_rate": lambda v: v > 0,
}

GONE_IN_11 = ("special",)  # distributions sysbench 1.1.0 no longer has

COMMANDS = ("prepare", "run", "cleanup", "help", "prewarm", "check")


# sysbench 1.1.0's general options where they differ from 1.0.20's: name -> the 1.1 form's
# changed fields (None: gone in 1.1, "invalid option")
CHANGES_11: dict[str, dict | None] = {
    "tx-rate": None,
    "max-requests": None,
    "max-time": None,
    "num-threads": None,
    "rand-type": {
        "default": "uniform",
        "help": "random numbers distribution {uniform, gaussian, pareto, zipfian} to use by default",
    },
    "rand-seed": {"help": "seed for random number generator. When 0, the current time is used as an RNG seed."},
    "rand-pareto-h": {"help": "shape parameter for the Pareto distribution"},
    "output-format": {"default": "1.1"},
    "thread-init-timeout": {"bounds": None},  # any int: 1.1.0 hands it to alarm() as unsigned
}


# sysbench 1.1.0's general options that 1.0.20 has not (invalid options under 1.0)
ONLY_11 = ("luajit-cmd",)


def for_face(options: list[Option], changes_11: dict[str, dict] | None = None) -> list[Option]:
    """``options`` as the active face's sysbench release has them (:data:`CHANGES_11`, a
    driver's ``options_11`` as ``changes_11``, and an option ``since`` another release left
    out); the default of --sysbench-compat is the face's own (PYSYSBENCH_COMPAT).  The sysbench
    face of the release an option is ``unchecked_in`` takes any value of it (its choices are
    the driver's to refuse when it connects)."""
    current = face.active()
    compat = current.compat
    changes: dict[str, dict | None] = (
        {**CHANGES_11, **(changes_11 or {})} if compat == "1.1" else dict.fromkeys(ONLY_11)
    )
    changes = {**changes, "sysbench-compat": {"default": compat}}
    out = [
        replace(o, **changes[o.name]) if changes.get(o.name) else o
        for o in options
        if (o.name not in changes or changes[o.name] is not None) and o.since in ("", compat)
    ]
    return [replace(o, choices=None) if current.strict and o.unchecked_in == compat else o for o in out]


def base_registry() -> Registry:
    reg = Registry(
        for_face(
            GENERAL_OPTIONS + RAY_OPTIONS + OUTPUT_OPTIONS + RAND_OPTIONS + COMPAT_OPTIONS + LOG_OPTIONS + DB_OPTIONS
        )
    )
    for drv in DRIVERS.values():
        reg.extend(for_face(drv.options, drv.options_11))  # (a driver option of a later release only under it)
    reg.extend(LOAD_OPTIONS)  # the fast prepare (pysysbench.load)
    return reg


@record
class Invocation:
    """The parsed command line."""

    values: Values
    test: str | None
    command: str | None
    workload_cls: type[Workload] | None = None
    rest: list[RawOption] = field(default_factory=list)  # options left for a Lua script to declare
    warnings: list[str] = field(default_factory=list)  # stdout, before the header
    stderr_warnings: list[str] = field(default_factory=list)


def parse(argv: list[str]) -> Invocation:
    raw, words = split_argv(argv)
    before = face.active()
    face.copying(next((r.value or "" for r in reversed(raw) if canonical(r.name) == "sysbench_compat"), None))
    if face.active() != before:  # that release's options and defaults
        return parse(argv)
    values = Values(base_registry())
    raw, glue_warnings = _unglue(raw, words, values.registry)
    rest, deferred = _general_options(values, raw)
    inv = Invocation(values, None, None)
    inv.warnings.extend(glue_warnings)
    inv.warnings.extend(config_file_warnings(raw, values.registry))
    if values.test:
        inv.stderr_warnings.append(
            "WARNING: the --test option is deprecated. You can pass a script name or "
            "path on the command line without any options."
        )
        words.insert(0, values.test)
    if len(words) > 2:
        raise UsageError(f"Unrecognized command line argument: {words[2]}")
    inv.test = words[0] if words else None
    inv.command = words[1] if len(words) > 1 else None
    _apply_aliases(inv)
    if (values.help or values.version) and face.active().strict:
        _raise_deferred(values, deferred)
        return inv  # sysbench: the help whatever else is given, even a missing test
    if inv.test is None and not values.help and not values.version and stdin_has_script():
        inv.test = "-"  # sysbench runs a Lua script from standard input
    if inv.test is None:
        _raise_deferred(values, deferred)
        _reject_unknown(rest)
        return inv
    try:
        inv.workload_cls = find_workload(inv.test, lua_bundled=values.lua_bundled)
    except WorkloadError:
        _raise_deferred(values, deferred)
        if values.help or values.version:  # --help with a test that is not there: the help, as sysbench
            return inv
        raise
    if inv.workload_cls.runs_own_commands:
        if inv.command is None or inv.test == "-":
            _raise_deferred(values, deferred)  # the chunk runs alone: no option is declared
        # a Lua script declares its options when its chunk has run; it may claim the names
        # of pysysbench's additions, never sysbench's own (lua/options.py apply)
        inv.rest = rest + [
            r for r in raw if canonical(r.name) not in sysbench_names() and values.registry.get(r.name) is not None
        ]
        return inv
    _raise_deferred(values, deferred)
    values.registry.extend(inv.workload_cls.options)
    _workload_options(inv, rest)
    inv.warnings.extend(compat_warnings(values))
    return inv


def _general_options(values: Values, raw: list[RawOption]) -> tuple[list[RawOption], list[RawOption]]:
    """Phase 1: the options the registry knows; (the others, the deferred).  A bad value of one
    of pysysbench's additions is deferred: a Lua script may declare that name with a type of
    its own (lua/options.py apply parses it once the script has declared its options)."""
    rest: list[RawOption] = []
    deferred: list[RawOption] = []
    for item in raw:
        if _gone(values.registry.get(item.name)):  # not that release's: the script's, or invalid
            rest.append(item)
            continue
        try:
            rest.extend(apply_options(values, [item], strict=False))
        except InvalidOption as exc:
            opt = values.registry.get(item.name)
            if canonical(item.name) not in sysbench_names():
                deferred.append(item)
            elif face.active().strict and opt is not None and opt.sysbench_type is OptType.BOOL:
                # a flag of sysbench's (--mysql-ssl under 1.1): its words, after the first line
                raise InvalidOption(f"invalid option: {option_text(item.name, item.value)}") from None
            elif face.active().strict and exc.sysbench_text:
                raise InvalidOption(exc.sysbench_text, exc.sysbench_text) from None
            else:
                raise
    return rest, deferred


def _gone(opt: Option | None) -> bool:
    """An option the sysbench release the face copies no longer has (the --rand-spec-* of
    1.1.0, which dropped the special distribution): pysysbench still reads its default, but
    given, it is not a general option (invalid, unless a Lua script declares the name)."""
    return opt is not None and bool(opt.gone_in) and opt.gone_in == face.active().compat


def _raise_deferred(values: Values, deferred: list[RawOption]) -> None:
    """Not a Lua script's command line: the error of a deferred value, as phase 1 had it."""
    apply_options(values, deferred, strict=False)


# sysbench's options its --help does not list: the deprecated --test, and 1.1's general
# options that pysysbench has too (sysbench 1.1 parses them before the script runs)
SYSBENCH_UNLISTED = ("test", "warmup_time", "thread_init_timeout", "rand_zipfian_exp")


def sysbench_names() -> frozenset[str]:
    """The keys of sysbench's own options (general, random, log, database and driver options:
    the --help of the release the face copies, and SYSBENCH_UNLISTED).  A Lua script declaring
    one of these names never gets its value from the command line (sysbench parses them before
    the script runs); pysysbench's additions (--workers, --result-file, ...) it can declare and get."""
    return _names_in(SYSBENCH_HELP_11 if face.active().compat == "1.1" else SYSBENCH_HELP)


@functools.cache
def _names_in(help_text: str) -> frozenset[str]:
    names = (line.split("=", 1)[0].split("[", 1)[0] for line in help_text.splitlines() if line.startswith("  --"))
    return frozenset([canonical(n.strip()[2:]) for n in names] + list(SYSBENCH_UNLISTED))


def stdin_has_script() -> bool:
    """Without a test name sysbench reads a Lua script from standard input; so does
    pysysbench unless stdin is a terminal (which gets the help): a pipe, a file, or
    /dev/null (bash hands an empty here-document over as a character device)."""
    try:
        return not os.isatty(sys.stdin.fileno())
    except (AttributeError, OSError, ValueError):
        return False


def _unglue(raw: list[RawOption], words: list[str], registry: Registry) -> tuple[list[RawOption], list[str]]:
    """Split options a web page glued together (``--pgsql-db=x--oltp_tables_count=4``)
    at the names of every option a test could declare."""

    def classes() -> list[type[Workload]]:
        from ..workloads.legacy import LEGACY_SCRIPTS

        return list(WORKLOADS.values()) + list(LEGACY_SCRIPTS.values())

    split, warnings = unglue(raw, _when_asked(lambda: known_options(registry, classes())))
    test = test_name(split, words)
    if test and test.endswith(".py"):  # a user's workload: its options are known once loaded
        split, warnings = unglue(raw, _when_asked(lambda: known_options(registry, classes() + [find_workload(test)])))
    return split, warnings


def _when_asked(make: Callable[[], Callable[[str], Option | None]]) -> Callable[[str], Option | None]:
    """A lookup made on its first use: only a glued argument asks for one, and most command
    lines have none (making it imports the sysbench 0.5 scripts' classes for their options)."""
    made: list[Callable[[str], Option | None]] = []

    def lookup(name: str) -> Option | None:
        if not made:
            made.append(make())
        return made[0](name)

    return lookup


def _workload_options(inv: Invocation, rest: list[RawOption]) -> None:
    """Phase 2.  sysbench 0.5 scripts accept unknown options (0.5 did, silently;
    here each gets a WARNING) and adjust defaults and old names (``after_parse``)."""
    cls, values = inv.workload_cls, inv.values
    lenient = cls.accepts_unknown_options
    if not lenient:
        own = {o.key for o in cls.options}
        _reject_unknown([r for r in rest if _gone(values.registry.get(r.name)) and canonical(r.name) not in own])
    try:
        unknown = apply_options(values, rest, strict=not lenient)
    except InvalidOption as exc:
        if face.active().strict:  # sysbench's text: no pointer to pysysbench's help
            raise InvalidOption(str(exc).split(" (see 'pysysbench", 1)[0]) from None
        raise
    for item in unknown:
        inv.warnings.append(
            f"WARNING: --{item.name} is not an option of {cls.name} nor a general option: ignored "
            "(sysbench 0.5 accepted and ignored unknown options too)"
        )
    cls.after_parse(values, rest, inv.warnings.append)
    if not face.active().strict:  # sysbench says nothing about these
        for name, why in cls.inert_options.items():
            given = values.get(name)
            if given:
                inv.warnings.append(f"WARNING: --{name}={given} has no effect: {why}")


def config_file_warnings(raw: list[RawOption], registry: Registry) -> list[str]:
    """A config file holding a password must not be readable by other users."""
    out = []
    for item in raw:
        if canonical(item.name) != "config_file" or not item.value:
            continue
        marker = f" (in {os.path.basename(item.value)} "
        secret = any(
            r.value and r.origin.startswith(marker) and getattr(registry.get(r.name), "secret", False) for r in raw
        )
        try:
            mode = os.stat(item.value).st_mode
        except OSError:
            continue
        if secret and mode & (stat.S_IRGRP | stat.S_IROTH):
            out.append(
                f"WARNING: config file '{item.value}' contains a password and is readable by other "
                f"users: chmod 600 {item.value}"
            )
    return out


def _reject_unknown(rest: list[RawOption]) -> None:
    if rest:
        r = rest[0]
        if face.active().strict:  # sysbench's text: the argument as given
            raise InvalidOption(f"invalid option: {option_text(r.name, r.value)}")
        raise InvalidOption(f"invalid option: {option_text(r.name, r.value)}{r.origin} (see 'pysysbench --help')")


def _apply_aliases(inv: Invocation) -> None:
    v = inv.values
    for alias, used in ALIASES.items():
        if not v.is_set(alias):
            continue
        value = getattr(v, alias)
        if not used(value):
            continue
        opt = v.registry.get(alias)
        target = v.registry.get(opt.alias_for)
        v.set(target, value)
        inv.warnings.append(f"WARNING: --{opt.name} is deprecated, use --{target.name} instead")


# workload options named mysql_* / pgsql_* that do not imply the MySQL / PostgreSQL driver
STORAGE_ENGINE_OPTIONS = (
    "mysql_storage_engine",
    "mysql_table_engine",
    "mysql_table_options",
    "mysql_create_options",
    "mysql_engine_trx",
    "pgsql_variant",
)


def choose_driver(values: Values) -> str:
    """--db-driver, else the driver whose options were given (its ``option_prefix``:
    --mysql-*, --pgsql-*, ...), else the default (sqlite, whose own options need no sniffing;
    mysql in the sysbench face, as 1.0.20)."""
    name = values.db_driver
    if not values.is_set("db_driver") and face.active().default_driver:
        return face.active().default_driver
    if values.is_set("db_driver"):
        if name not in DRIVERS:
            raise ConfigError(f"invalid database driver name: '{name}' (available: {', '.join(DRIVERS)})")
        return name
    prefixes = {p: n for p, n in by_option_prefix().items() if n != name}
    given = sorted(
        {
            p
            for key in values.explicit
            if key not in STORAGE_ENGINE_OPTIONS
            for p in prefixes
            if key.startswith(p.replace("-", "_") + "_")
        }
    )
    if len(given) > 1:
        raise ConfigError(f"both --{given[0]}-* and --{given[1]}-* options were given: choose one with --db-driver")
    return prefixes[given[0]] if given else name


def validate(values: Values) -> None:
    """Checks sysbench makes after parsing, with its messages; every option's declared
    bounds (numbers in range) first."""
    check_bounds(values)
    if values.histogram and values.percentile == 0:
        raise ConfigError("--histogram cannot be used with --percentile=0")
    if values.rand_type not in DISTRIBUTIONS or (values.rand_type in GONE_IN_11 and face.active().compat == "1.1"):
        raise ConfigError(f"Invalid random numbers distribution: {values.rand_type}.")
    validate_engine(values)
    if values.get("metrics_addr"):  # a bad address fails before anything runs
        from ..engine.metrics import parse_addr

        parse_addr(values.metrics_addr)


def check_before_header_11(values: Values) -> None:
    """sysbench 1.1.0 checks these general options before its first line (its ``init()``),
    in its order and words; the rest of :func:`validate` follows the first line."""
    if values.threads <= 0:
        raise ConfigError(f"Invalid value for --threads: {values.threads}.\n")
    if values.warmup_time < 0:
        raise ConfigError(f"Invalid value for --warmup-time: {values.warmup_time}.\n")
    forced_shutdown_s(values.forced_shutdown, values.time)
    if values.rand_type not in DISTRIBUTIONS or values.rand_type in GONE_IN_11:
        raise ConfigError(f"Invalid random numbers distribution: {values.rand_type}.")
    if values.rand_zipfian_exp < 0:
        raise ConfigError("--rand-zipfian-exp must be >= 0")


def general_help() -> str:
    if face.active().strict:
        return SYSBENCH_HELP_11 if face.active().compat == "1.1" else SYSBENCH_HELP
    reg = base_registry()
    groups = reg.groups()
    out = [
        "Usage:",
        "  pysysbench [options]... [testname] [command]",
        "",
        "Commands implemented by most tests: prepare run cleanup help prewarm check",
        "",
    ]
    out.append(help_block("General options:", [o for o in groups[G] if o.name != "test"]))
    out.append(help_block(R + ":", groups[R]))
    out.append(help_block(L + ":", groups[L]))
    out.append(help_block(None, groups[""]))
    out.append(help_block("General database options:\n", groups["General database options"]) + "\n")
    out.append("Compiled-in database drivers:")
    out.extend(f"  {name} - {cls.description}" for name, cls in DRIVERS.items())
    out.append("")
    for name, cls in DRIVERS.items():
        out.append(help_block(f"{name} options:", for_face(cls.options, cls.options_11)))
    out.append(help_block(LOAD_GROUP + ":", groups[LOAD_GROUP]))
    from ..workloads import REGISTRY

    out.append("Built-in tests:")
    out.extend(f"  {name} - {first_sentence(cls.__doc__ or '')}" for name, cls in sorted(REGISTRY.items()))
    out.append("")
    out.append("pysysbench commands (see 'pysysbench <command> --help'):")
    out.extend(f"  {name} - {text}" for name, text in TOOL_COMMANDS)
    out.append("")
    out.append("See 'pysysbench <testname> help' for a list of options for each test.")
    return "\n".join(out) + "\n"


TOOL_COMMANDS = (
    ("campaign", "run a matrix of benchmarks from a campaign file and keep every result"),
    ("report", "render result files or a campaign's results as Markdown with PNG charts and one HTML file"),
    ("compare", "compare groups of runs (result files, directories, label selectors) per workload and threads"),
    ("export", "write result files as CSV or JSON lines for other tools"),
    ("history", "keep runs over time: import result files and campaigns into a store, list and show them"),
    ("check", "(a test command: pysysbench TEST check) verify a prepared data set"),
)


def first_sentence(doc: str) -> str:
    """A docstring's first sentence, whole (its first paragraph joined; never cut at a line end)."""
    para = " ".join(inspect.cleandoc(doc).split("\n\n", 1)[0].split())
    for i, ch in enumerate(para):
        if ch == "." and (i + 1 == len(para) or para[i + 1] == " ") and para.count("(", 0, i) == para.count(")", 0, i):
            return para[: i + 1]
    return para


def header() -> str:
    return face.active().header()
