"""The sysbench command-line surface: general options, deprecated aliases,
help text, and the two-phase parse that turns argv into a :class:`Invocation`.
"""

from __future__ import annotations

import functools
import inspect
import os
import stat
import sys
from dataclasses import field, replace
from typing import Callable

from ..drivers import DB_OPTIONS, REGISTRY as DRIVERS
from ..drivers.base import by_option_prefix
from ..engine.options import ENGINE_OPTIONS, validate_engine
from ..engine.ray_options import RAY_OPTIONS
from ..core.errors import ConfigError, InvalidOption, UsageError, WorkloadError
from ..load.options import GROUP as LOAD_GROUP, LOAD_OPTIONS
from ..core.options import (PERCENT, Bounds, Option, OptType, RawOption, Registry, Values,
                       apply_options, canonical, check_bounds, help_block, option_text, split_argv)
from ..output.registry import OUTPUT_OPTIONS
from ..core.rand import DISTRIBUTIONS
from ..core.rand_compat import COMPAT_OPTIONS, compat_warnings
from ..core.record import record
from ..workloads import REGISTRY as WORKLOADS, find_workload
from ..workloads.base import Workload
from . import face
from .glued import known_options, test_name, unglue
from .sysbench_help import GENERAL_HELP as SYSBENCH_HELP

G = "General options"
R = "Pseudo-Random Numbers Generator options"
L = "Log options"



def c_ints(options: list[Option]) -> list[Option]:
    """sysbench's general integer options are C ints (``sb_get_value_int``): a value beyond
    one (``--time=10000000000``) is refused while parsing, with sysbench's message."""
    return [replace(o, c_int=True) if o.type is OptType.INT else o for o in options]


GENERAL_OPTIONS = c_ints(ENGINE_OPTIONS) + c_ints([   # the engine's first, in sysbench's order
    Option("debug", OptType.BOOL, False, "print more debugging info (and tracebacks)", G),
    Option("validate", OptType.BOOL, False, "perform validation checks where possible", G),
    Option("help", OptType.BOOL, False, "print help and exit", G),
    Option("version", OptType.BOOL, False, "print version and exit", G),
    Option("config-file", OptType.FILE, "", "File containing command line options", G),
    Option("result-file", OptType.STRING, "", "write a JSON document of the run to this file", G),
    Option("latency-log", OptType.STRING, "", "write one CSV line per transaction of the measured phase to this "
           "file: end time (Unix s), thread, latency (us), restarting error code", G),
    Option("latency-log-rate", OptType.DOUBLE, 1.0, "fraction of the transactions --latency-log keeps (random "
           "sample; 1 = all)", G, bounds=Bounds(0.0, 1.0, open_min=True)),
    Option("metrics-addr", OptType.STRING, "", "serve live Prometheus metrics of the run at HOST:PORT (needs "
           "pip install 'pysysbench[metrics]')", G),
    Option("server-context", OptType.BOOL, True, "with --result-file: store the server's key settings and its "
           "counters' deltas over the measured phase (hit ratio, lock waits, server CPU) in the result file", G),
    Option("lua-bundled", OptType.BOOL, False, "run the bundled test names (oltp_read_write, ...) through the Lua "
           "files of the sysbench package with the Lua engine instead of natively", G),
    Option("test", OptType.STRING, "", "deprecated: the test name or script path", G, show_default=False),
    Option("tx-rate", OptType.INT, 0, "deprecated alias for --rate", G, alias_for="rate"),
    Option("max-requests", OptType.INT, 0, "deprecated alias for --events", G, alias_for="events"),
    Option("max-time", OptType.INT, 0, "deprecated alias for --time", G, alias_for="time"),
    Option("num-threads", OptType.INT, 1, "deprecated alias for --threads", G, alias_for="threads"),
])

RAND_OPTIONS = c_ints([
    Option("rand-type", OptType.STRING, "special", "random numbers distribution {" + ",".join(DISTRIBUTIONS) + "}", R),
    Option("rand-spec-iter", OptType.INT, 12, "number of iterations used for numbers generation", R,
           bounds=Bounds(1)),
    Option("rand-spec-pct", OptType.DOUBLE, 1.0, "percentage of values to be treated as 'special' (for special "
           "distribution)", R, bounds=PERCENT),
    Option("rand-spec-res", OptType.DOUBLE, 75.0, "percentage of 'special' values to use (for special "
           "distribution)", R, bounds=PERCENT),
    Option("rand-seed", OptType.INT, 0, "seed for random number generator. When 0, the current time is used as "
           "a RNG seed.", R),
    Option("rand-pareto-h", OptType.DOUBLE, 0.2, "parameter h for pareto distribution", R,
           bounds=Bounds(1e-15, 1.0, open_max=True, why="below that 1 - h rounds to 1")),
    Option("rand-zipfian-exp", OptType.DOUBLE, 0.8, "shape parameter (exponent, theta) for the Zipfian "
           "distribution", R, bounds=Bounds(0.0)),
])

LOG_OPTIONS = c_ints([
    Option("verbosity", OptType.INT, 3, "verbosity level {5 - debug, 0 - only critical messages}", L,
           bounds=Bounds(0, 5)),
    Option("percentile", OptType.INT, 95, "percentile to calculate in latency statistics (1-100). Use the "
           "special value of 0 to disable percentile calculations", "", bounds=Bounds(0, 100)),
    Option("histogram", OptType.BOOL, False, "print latency histogram in report", ""),
])

# deprecated alias -> (new name, condition under which the alias is used) (spec 1.2)
ALIASES = {
    "num_threads": lambda v: v > 1,
    "max_requests": lambda v: v > 0,
    "max_time": lambda v: v > 0,
    "tx_rate": lambda v: v > 0,
}

COMMANDS = ("prepare", "run", "cleanup", "help", "prewarm", "check")


def base_registry() -> Registry:
    reg = Registry(GENERAL_OPTIONS + RAY_OPTIONS + OUTPUT_OPTIONS + RAND_OPTIONS + COMPAT_OPTIONS + LOG_OPTIONS
                   + DB_OPTIONS)
    for drv in DRIVERS.values():
        reg.extend(drv.options)
    reg.extend(LOAD_OPTIONS)        # the fast prepare (pysysbench.load)
    return reg


@record
class Invocation:
    """The parsed command line."""

    values: Values
    test: str | None
    command: str | None
    workload_cls: type[Workload] | None = None
    rest: list[RawOption] = field(default_factory=list)     # options left for a Lua script to declare
    warnings: list[str] = field(default_factory=list)       # stdout, before the header
    stderr_warnings: list[str] = field(default_factory=list)


def parse(argv: list[str]) -> Invocation:
    raw, words = split_argv(argv)
    values = Values(base_registry())
    raw, glue_warnings = _unglue(raw, words, values.registry)
    rest, deferred = _general_options(values, raw)
    inv = Invocation(values, None, None)
    inv.warnings.extend(glue_warnings)
    inv.warnings.extend(config_file_warnings(raw, values.registry))
    if values.test:
        inv.stderr_warnings.append("WARNING: the --test option is deprecated. You can pass a script name or "
                                   "path on the command line without any options.")
        words.insert(0, values.test)
    if len(words) > 2:
        raise UsageError(f"Unrecognized command line argument: {words[2]}")
    inv.test = words[0] if words else None
    inv.command = words[1] if len(words) > 1 else None
    _apply_aliases(inv)
    if (values.help or values.version) and face.active().strict:
        _raise_deferred(values, deferred)
        return inv                   # sysbench: the help whatever else is given, even a missing test
    if inv.test is None and not values.help and not values.version and stdin_has_script():
        inv.test = "-"               # sysbench runs a Lua script from standard input
    if inv.test is None:
        _raise_deferred(values, deferred)
        _reject_unknown(rest)
        return inv
    try:
        inv.workload_cls = find_workload(inv.test, lua_bundled=values.lua_bundled)
    except WorkloadError:
        _raise_deferred(values, deferred)
        if values.help or values.version:   # --help with a test that is not there: the help, as sysbench
            return inv
        raise
    if getattr(inv.workload_cls, "runs_own_commands", False):
        if inv.command is None or inv.test == "-":
            _raise_deferred(values, deferred)     # the chunk runs alone: no option is declared
        # a Lua script declares its options when its chunk has run; it may claim the names
        # of pysysbench's additions, never sysbench's own (lua/options.py apply)
        inv.rest = rest + [r for r in raw if canonical(r.name) not in sysbench_names()
                           and values.registry.get(r.name) is not None]
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
        try:
            rest.extend(apply_options(values, [item], strict=False))
        except InvalidOption as exc:
            if canonical(item.name) not in sysbench_names():
                deferred.append(item)
            elif face.active().strict and exc.sysbench_text:
                raise InvalidOption(exc.sysbench_text, exc.sysbench_text) from None
            else:
                raise
    return rest, deferred


def _raise_deferred(values: Values, deferred: list[RawOption]) -> None:
    """Not a Lua script's command line: the error of a deferred value, as phase 1 had it."""
    apply_options(values, deferred, strict=False)


# sysbench's options its --help does not list: the deprecated --test, and 1.1's general
# options that pysysbench has too (sysbench 1.1 parses them before the script runs)
SYSBENCH_UNLISTED = ("test", "warmup_time", "thread_init_timeout", "rand_zipfian_exp")


@functools.cache
def sysbench_names() -> frozenset[str]:
    """The keys of sysbench's own options (general, random, log, database and driver options:
    1.0.20's --help, and SYSBENCH_UNLISTED).  A Lua script declaring one of these names
    never gets its value from the command line (sysbench parses them before the script runs);
    pysysbench's additions (--workers, --result-file, ...) it can declare and get."""
    names = (line.split("=", 1)[0].split("[", 1)[0] for line in SYSBENCH_HELP.splitlines()
             if line.startswith("  --"))
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
    if test and test.endswith(".py"):   # a user's workload: its options are known once loaded
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
    lenient = getattr(cls, "accepts_unknown_options", False)
    try:
        unknown = apply_options(values, rest, strict=not lenient)
    except InvalidOption as exc:
        if face.active().strict:      # sysbench's text: no pointer to pysysbench's help
            raise InvalidOption(str(exc).split(" (see 'pysysbench", 1)[0]) from None
        raise
    for item in unknown:
        inv.warnings.append(f"WARNING: --{item.name} is not an option of {cls.name} nor a general option: ignored "
                            "(sysbench 0.5 accepted and ignored unknown options too)")
    hook = getattr(cls, "after_parse", None)
    if hook is not None:
        hook(values, rest, inv.warnings.append)
    if not face.active().strict:      # sysbench says nothing about these
        for name, why in getattr(cls, "inert_options", {}).items():
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
        secret = any(r.value and r.origin.startswith(marker) and getattr(registry.get(r.name), "secret", False)
                     for r in raw)
        try:
            mode = os.stat(item.value).st_mode
        except OSError:
            continue
        if secret and mode & (stat.S_IRGRP | stat.S_IROTH):
            out.append(f"WARNING: config file '{item.value}' contains a password and is readable by other "
                       f"users: chmod 600 {item.value}")
    return out


def _reject_unknown(rest: list[RawOption]) -> None:
    if rest:
        r = rest[0]
        if face.active().strict:     # sysbench's text: the argument as given
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
STORAGE_ENGINE_OPTIONS = ("mysql_storage_engine", "mysql_table_engine", "mysql_table_options", "mysql_create_options",
                  "mysql_engine_trx", "pgsql_variant")


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
    given = sorted({p for key in values.explicit if key not in STORAGE_ENGINE_OPTIONS
                    for p in prefixes if key.startswith(p.replace("-", "_") + "_")})
    if len(given) > 1:
        raise ConfigError(f"both --{given[0]}-* and --{given[1]}-* options were given: choose one with --db-driver")
    return prefixes[given[0]] if given else name


def validate(values: Values) -> None:
    """Checks sysbench makes after parsing, with its messages; every option's declared
    bounds (numbers in range) first."""
    check_bounds(values)
    if values.histogram and values.percentile == 0:
        raise ConfigError("--histogram cannot be used with --percentile=0")
    if values.rand_type not in DISTRIBUTIONS:
        raise ConfigError(f"Invalid random numbers distribution: {values.rand_type}.")
    validate_engine(values)
    if values.get("metrics_addr"):     # a bad address fails before anything runs
        from ..engine.metrics import parse_addr
        parse_addr(values.metrics_addr)


def general_help() -> str:
    if face.active().strict:
        return SYSBENCH_HELP
    reg = base_registry()
    groups = reg.groups()
    out = ["Usage:", "  pysysbench [options]... [testname] [command]", "",
           "Commands implemented by most tests: prepare run cleanup help prewarm check", ""]
    out.append(help_block("General options:", [o for o in groups[G] if o.name != "test"]))
    out.append(help_block(R + ":", groups[R]))
    out.append(help_block(L + ":", groups[L]))
    out.append(help_block(None, groups[""]))
    out.append(help_block("General database options:\n", groups["General database options"]) + "\n")
    out.append("Compiled-in database drivers:")
    out.extend(f"  {name} - {cls.description}" for name, cls in DRIVERS.items())
    out.append("")
    for name, cls in DRIVERS.items():
        out.append(help_block(f"{name} options:", cls.options))
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
    ("check", "(a test command: pysysbench TEST check) verify a prepared data set"),
)


def first_sentence(doc: str) -> str:
    """A docstring's first sentence, whole (its first paragraph joined; never cut at a line end)."""
    para = " ".join(inspect.cleandoc(doc).split("\n\n", 1)[0].split())
    for i, ch in enumerate(para):
        if ch == "." and (i + 1 == len(para) or para[i + 1] == " ") and para.count("(", 0, i) == para.count(")", 0, i):
            return para[:i + 1]
    return para


def header() -> str:
    return face.active().header()
