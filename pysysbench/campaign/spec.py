"""Campaign files: TOML in, a frozen :class:`Campaign` out.

Role: read and validate a campaign file (``examples/campaign-example.toml``
documents every key) so that a bad file fails at once with one clear line that
names the file, the place and what to do, never after an hour of runs.  Key
names accept ``-`` or ``_`` like sysbench options.  Benchmark options are kept
as ``name -> value`` maps; whether a name is a real sysbench option is checked
later by the CLI grammar (``campaign check`` / the start of ``campaign run``).
"""

from __future__ import annotations

import difflib
import hashlib
import os
import re
import tomllib
from collections.abc import Mapping
from dataclasses import field
from typing import Any, Literal, overload

from ..core.errors import UsageError, listing
from ..core.options import THREADS
from ..core.record import record

AUTO = "auto"
METRICS = ("tps", "qps")
ON_ERROR = ("stop", "continue")
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+-]*$")
SIZE_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kKmMgGtT]?)[bB]?\s*$")
SIZE_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}
# Options a campaign sets itself: giving them in an options table is a mistake.
RESERVED_OPTIONS = {
    "threads": "use the workload's 'threads' list",
    "num_threads": "use the workload's 'threads' list",
    "result_file": "the campaign names the result files",
    "time": "use 'time' in [run] or in the workload",
    "max_time": "use 'time' in [run] or in the workload",
    "warmup_time": "use 'warmup' in [run] or in the workload",
    "report_interval": "use 'report-interval' in [run]",
    "test": "use the workload's 'test'",
    "help": "not a benchmark option",
    "version": "not a benchmark option",
}
TOP_KEYS = ("name", "description", "labels", "connection", "data", "prepare", "run", "sql", "workload", "variant")
VARIANT_KEYS = ("name", "labels", "connection", "options", "sql")
WORKLOAD_KEYS = ("test", "name", "threads", "auto", "options", "time", "warmup", "repeats")
DEFAULT_ROW_BYTES = 250  # one sbtest row on disk incl. primary and secondary index (InnoDB, approx.)
MAX_REPEATS = 1000  # runs of one thread count (each at least a second)


# --- the model ----------------------------------------------------------------------


@record(frozen=True)
class AutoThreads:
    """Peak finding: raise threads (x ``factor``) until ``metric`` stops improving."""

    start: int = 1
    factor: float = 2.0
    max: int = 256
    min_gain: float = 0.05  # an improvement must exceed this fraction (and the noise)
    patience: int = 1  # non-improving steps in a row before the search stops
    refine: int = 1  # rounds of midpoints tested around the best point
    metric: str = "tps"


@record(frozen=True)
class WorkloadSpec:
    name: str  # unique id: file names, report sections
    test: str
    threads: tuple[int, ...]  # empty when auto
    auto: AutoThreads | None
    options: dict[str, Any]
    time_s: int
    warmup_s: int
    repeats: int


@record(frozen=True)
class MemorySizing:
    """table_size = memory x factor / (tables x row_bytes): a data set sized from RAM."""

    memory_bytes: int | None
    memory_query: str | None
    factor: float
    row_bytes: int


@record(frozen=True)
class PrepareSpec:
    test: str = "oltp_common"
    threads: int = 1
    cleanup: bool = True
    prewarm: bool = False
    options: dict[str, Any] = field(default_factory=dict)


@record(frozen=True)
class RunDefaults:
    time_s: int = 10
    warmup_s: int = 0
    repeats: int = 1
    pause_s: float = 0.0
    report_interval_s: int = 1
    on_error: str = "stop"
    options: dict[str, Any] = field(default_factory=dict)


@record(frozen=True)
class SqlHooks:
    before_campaign: tuple[str, ...] = ()
    after_prepare: tuple[str, ...] = ()
    before_run: tuple[str, ...] = ()
    capture: tuple[str, ...] = ()  # queries returning (name, value) rows: server settings


@record(frozen=True)
class Variant:
    """One configuration of an interleaved comparison: its runs alternate with the other
    variants' round by round, after its ``sql`` switched the server to it."""

    name: str
    labels: dict[str, str]
    connection: dict[str, Any]
    options: dict[str, Any]
    sql: tuple[str, ...]


@record(frozen=True)
class Campaign:
    name: str
    description: str
    path: str
    directory: str
    sha256: str
    labels: dict[str, str]
    connection: dict[str, Any]
    data: dict[str, Any]
    table_size: int | MemorySizing | None
    prepare: PrepareSpec | None
    run: RunDefaults
    sql: SqlHooks
    workloads: tuple[WorkloadSpec, ...]
    variants: tuple[Variant, ...] = ()


# --- reading ----------------------------------------------------------------------


def canonical(key: str) -> str:
    return key.replace("_", "-").lower()


def option_key(name: str) -> str:
    """sysbench's spelling-insensitive option key."""
    return name.replace("-", "_").lower()


class Table:
    """One TOML table being validated: take keys, then complain about leftovers."""

    def __init__(self, data: Any, where: str, ctx: Reader, keys: tuple[str, ...] | None = None):
        self.ctx = ctx
        self.where = where
        if not isinstance(data, dict):
            raise ctx.error(f"{where} must be a table")
        self.items: dict[str, Any] = {}
        for key, value in data.items():
            ck = canonical(key)
            if ck in self.items:
                raise ctx.error(f"{where}: key '{key}' is given twice (spelled with '-' and '_')")
            self.items[ck] = value
        self.taken: set[str] = set()
        if keys is not None:  # typos first: a misspelt key explains the errors that follow
            self._unknown(set(keys))

    def has(self, key: str) -> bool:
        return key in self.items

    def raw(self, key: str, default: Any = None) -> Any:
        self.taken.add(key)
        return self.items.get(key, default)

    def fail(self, key: str, what: str) -> UsageError:
        return self.ctx.error(f"{self.where}: '{key}' {what}")

    @overload
    def text(self, key: str, default: str, *, required: bool = False) -> str: ...
    @overload
    def text(self, key: str, default: None = None, *, required: Literal[True]) -> str: ...
    @overload
    def text(self, key: str, default: None = None, *, required: bool = False) -> str | None: ...

    def text(self, key: str, default: str | None = None, *, required: bool = False) -> str | None:
        value = self.raw(key, default)
        if value is None and required:
            raise self.ctx.error(f"{self.where}: '{key}' is required")
        if value is not None and not isinstance(value, str):
            raise self.fail(key, f"must be a string, got {_show(value)}")
        return value

    def integer(self, key: str, default: int, *, minimum: int = 0, maximum: int | None = None) -> int:
        value = self.raw(key, default)
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.fail(key, f"must be an integer, got {_show(value)}")
        if value < minimum:
            raise self.fail(key, f"must be >= {minimum}, got {value}")
        if maximum is not None and value > maximum:
            raise self.fail(key, f"must be <= {maximum}, got {value}")
        return value

    def thread_count(self, key: str, default: int) -> int:
        return self.integer(key, default, minimum=int(THREADS.min), maximum=int(THREADS.max))  # type: ignore[arg-type]  # THREADS has both bounds

    def number(self, key: str, default: float, *, minimum: float = 0.0) -> float:
        value = self.raw(key, default)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise self.fail(key, f"must be a number, got {_show(value)}")
        if value < minimum:
            raise self.fail(key, f"must be >= {minimum:g}, got {value}")
        return float(value)

    def flag(self, key: str, default: bool) -> bool:
        value = self.raw(key, default)
        if not isinstance(value, bool):
            raise self.fail(key, f"must be true or false, got {_show(value)}")
        return value

    def strings(self, key: str) -> tuple[str, ...]:
        value = self.raw(key, [])
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise self.fail(key, "must be a string or a list of strings (SQL statements)")
        return tuple(value)

    def choice(self, key: str, default: str, choices: tuple[str, ...]) -> str:
        value = self.text(key, default)
        if value not in choices:
            raise self.fail(key, f"must be one of {', '.join(choices)}, got {_show(value)}")
        return value

    def table(self, key: str) -> Table | None:
        value = self.raw(key)
        if value is None:
            return None
        return Table(value, f"{self.where}.{key}" if self.where != "top level" else f"[{key}]", self.ctx)

    def options(self, key: str) -> dict[str, Any]:
        value = self.raw(key, {})
        return self.ctx.options(value, f"{self.where}: '{key}'")

    def done(self) -> None:
        """Unknown keys are errors (a typo must not silently fall back to a default)."""
        self._unknown(self.taken)

    def _unknown(self, known: set[str]) -> None:
        for key in self.items:
            if key not in known:
                hint = difflib.get_close_matches(key, sorted(known), n=1)
                more = f" (did you mean '{hint[0]}'?)" if hint else f" (known: {listing(sorted(known), 20)})"
                raise self.ctx.error(f"{self.where}: unknown key '{key}'{more}")


def _show(value: Any) -> str:
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, list):
        return "a list"
    return repr(value).lower() if isinstance(value, bool) else repr(value)


class Reader:
    """Context of one file: error messages name it."""

    def __init__(self, path: str):
        self.path = path

    def error(self, message: str) -> UsageError:
        return UsageError(f"campaign file '{self.path}': {message}")

    def options(self, value: Any, where: str) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.error(f"{where} must be a table of sysbench options (name = value)")
        out: dict[str, Any] = {}
        seen: dict[str, str] = {}
        for name, v in value.items():
            key = option_key(name)
            if key in seen:
                raise self.error(f"{where}: option '{name}' is also given as '{seen[key]}'")
            seen[key] = name
            if isinstance(v, dict) or (isinstance(v, list) and any(isinstance(x, (dict, list)) for x in v)):
                raise self.error(f"{where}: option '{name}' must be a string, number, boolean or list")
            out[name] = v
        return out


def parse_size(text: str) -> int | None:
    m = SIZE_RE.match(text)
    if not m:
        return None
    return int(float(m.group(1)) * SIZE_UNITS[m.group(2).lower()])


def load(path: str, overrides: list[str] | None = None) -> Campaign:
    """Read, apply ``--set key.path=value`` overrides, validate."""
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
    except OSError as exc:
        raise UsageError(f"cannot read campaign file '{path}': {exc.strerror}") from None
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise UsageError(f"campaign file '{path}' is not UTF-8 text") from None
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"campaign file '{path}' is not valid TOML: {exc}") from None
    for item in overrides or []:
        apply_override(data, item, path)
    return parse(data, path, hashlib.sha256(raw).hexdigest())


def apply_override(data: dict, item: str, path: str) -> None:
    """``a.b=value``: value is TOML (number, bool, "string", [list], {table}), else a bare string."""
    if "=" not in item:
        raise UsageError(f"--set '{item}': expected KEY.PATH=VALUE (e.g. run.time=5)")
    dotted, text = item.split("=", 1)
    keys = [k.strip() for k in dotted.split(".") if k.strip()]
    if not keys:
        raise UsageError(f"--set '{item}': empty key")
    try:
        value = tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        value = text
    node = data
    for key in keys[:-1]:
        if key.isdigit() and isinstance(node, list):
            index = int(key)
            if not 1 <= index <= len(node):
                raise UsageError(f"--set '{item}': there is no element #{index} of '{key}' in '{path}'")
            node = node[index - 1]
            continue
        node = node.setdefault(_spelled_as_in(node, key), {})
        if not isinstance(node, (dict, list)):
            raise UsageError(f"--set '{item}': '{key}' is not a table in '{path}'")
    if isinstance(node, list):
        raise UsageError(f"--set '{item}': give the element number, e.g. workload.1.time=5")
    node[_spelled_as_in(node, keys[-1])] = value


def _spelled_as_in(table: dict, key: str) -> str:
    """The file's spelling of ``key`` ('-' and '_' alike): ``--set connection.mysql_user=x``
    replaces the file's ``mysql-user`` instead of adding a second spelling of it."""
    return next((k for k in table if canonical(k) == canonical(key)), key)


def parse(data: dict, path: str, sha256: str = "") -> Campaign:
    ctx = Reader(path)
    top = Table(data, "top level", ctx, TOP_KEYS)
    directory = os.path.dirname(os.path.abspath(path))
    name = top.text("name") or os.path.splitext(os.path.basename(path))[0]
    if not NAME_RE.match(name):
        raise top.fail("name", f"must be letters, digits, '.', '_', '+' or '-' (it names files), got {_show(name)}")
    description = top.text("description", "")
    labels = _labels(top.table("labels"), ctx)
    connection = top.options("connection")
    data_opts, table_size = _data(top.table("data"), ctx)
    prepare = _prepare(top, ctx)
    run = _run_defaults(top.table("run"), ctx)
    sql = _sql(top.table("sql"), ctx)
    workloads = _workloads(top.raw("workload"), run, ctx)
    variants = _variants(top.raw("variant"), ctx)
    top.done()
    if variants:
        auto = next((w for w in workloads if w.auto is not None), None)
        if auto is not None:
            raise ctx.error(
                f"[[workload]] '{auto.name}': threads = \"auto\" cannot be combined with [[variant]]s "
                "(interleaved rounds need the same thread counts for every variant): give a list"
            )
    for where, opts in (("[connection]", connection), ("[data]", data_opts)):
        _check_reserved(opts, where, ctx)
    return Campaign(
        name=name,
        description=description,
        path=os.path.abspath(path),
        directory=directory,
        sha256=sha256,
        labels=labels,
        connection=connection,
        data=data_opts,
        table_size=table_size,
        prepare=prepare,
        run=run,
        sql=sql,
        workloads=workloads,
        variants=variants,
    )


def _check_reserved(options: Mapping[str, Any], where: str, ctx: Reader) -> None:
    for name in options:
        why = RESERVED_OPTIONS.get(option_key(name))
        if why:
            raise ctx.error(f"{where}: option '{name}' cannot be set here: {why}")


def _labels(t: Table | None, ctx: Reader) -> dict[str, str]:
    if t is None:
        return {}
    out = {}
    for key, value in t.items.items():
        t.taken.add(key)
        if isinstance(value, (dict, list)):
            raise t.fail(key, "must be a string or a number (labels are stored with every result)")
        out[key] = str(value).lower() if isinstance(value, bool) else str(value)
    return out


def _data(t: Table | None, ctx: Reader) -> tuple[dict[str, Any], int | MemorySizing | None]:
    if t is None:
        return {}, None
    opts: dict[str, Any] = {}
    size: int | MemorySizing | None = None
    for key, value in t.items.items():
        t.taken.add(key)
        if key == "table-size" and isinstance(value, dict):
            size = _memory_sizing(Table(value, "[data] table-size", ctx))
        elif key == "table-size":
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise t.fail(
                    key, f'must be a positive integer or a table {{memory = "256M", factor = 1.2}}, got {_show(value)}'
                )
            size = value
        else:
            opts.update(ctx.options({key: value}, "[data]"))
    if "tables" in t.items and (
        isinstance(t.items["tables"], bool) or not isinstance(t.items["tables"], int) or t.items["tables"] < 1
    ):
        raise t.fail("tables", f"must be a positive integer, got {_show(t.items['tables'])}")
    return opts, size


def _memory_sizing(t: Table) -> MemorySizing:
    memory = t.raw("memory")
    query = t.text("memory-query")
    factor = t.number("factor", 1.0)
    row_bytes = t.integer("row-bytes", DEFAULT_ROW_BYTES, minimum=1)
    t.done()
    if (memory is None) == (query is None):
        raise t.ctx.error(
            f"{t.where}: give exactly one of 'memory' (e.g. \"256M\") or 'memory-query' "
            '(SQL returning bytes, e.g. "SELECT @@innodb_buffer_pool_size")'
        )
    memory_bytes = None
    if memory is not None:
        memory_bytes = (
            memory
            if isinstance(memory, int) and not isinstance(memory, bool)
            else parse_size(memory)
            if isinstance(memory, str)
            else None
        )
        if not memory_bytes:
            raise t.fail("memory", f'must be a size such as "256M" or "4G", got {_show(memory)}')
    if factor <= 0:
        raise t.fail("factor", "must be > 0")
    return MemorySizing(memory_bytes, query, factor, row_bytes)


def _prepare(top: Table, ctx: Reader) -> PrepareSpec | None:
    value = top.raw("prepare")
    if value is None or value is False:
        return None
    if value is True:
        return PrepareSpec()
    t = Table(value, "[prepare]", ctx)
    if not t.flag("enabled", True):
        t.taken.update(t.items)
        return None
    spec = PrepareSpec(
        test=t.text("test", "oltp_common"),
        threads=t.thread_count("threads", 1),
        cleanup=t.flag("cleanup", True),
        prewarm=t.flag("prewarm", False),
        options=t.options("options"),
    )
    t.done()
    _check_reserved(spec.options, "[prepare] options", ctx)
    return spec


def _run_defaults(t: Table | None, ctx: Reader) -> RunDefaults:
    if t is None:
        return RunDefaults()
    run = RunDefaults(
        time_s=t.integer("time", 10, minimum=1),
        warmup_s=t.integer("warmup", 0),
        repeats=t.integer("repeats", 1, minimum=1, maximum=MAX_REPEATS),
        pause_s=t.number("pause", 0.0),
        report_interval_s=t.integer("report-interval", 1, minimum=1),
        on_error=t.choice("on-error", "stop", ON_ERROR),
        options=t.options("options"),
    )
    t.done()
    _check_reserved(run.options, "[run] options", ctx)
    return run


def _sql(t: Table | None, ctx: Reader) -> SqlHooks:
    if t is None:
        return SqlHooks()
    hooks = SqlHooks(
        before_campaign=t.strings("before-campaign"),
        after_prepare=t.strings("after-prepare"),
        before_run=t.strings("before-run"),
        capture=t.strings("capture"),
    )
    t.done()
    return hooks


def _variants(value: Any, ctx: Reader) -> tuple[Variant, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        raise ctx.error("'variant' must be an array of tables: write [[variant]], not [variant]")
    out: list[Variant] = []
    for i, item in enumerate(value, 1):
        t = Table(item, f"[[variant]] #{i}", ctx, VARIANT_KEYS)
        name = t.text("name", required=True)
        if not NAME_RE.match(name):
            raise t.fail("name", f"must be letters, digits, '.', '_', '+' or '-' (it names files), got {_show(name)}")
        if any(v.name == name for v in out):
            raise ctx.error(f"[[variant]] #{i}: name '{name}' is used twice")
        labels = _labels(t.table("labels"), ctx)
        v = Variant(
            name=name,
            labels=labels,
            connection=t.options("connection"),
            options=t.options("options"),
            sql=t.strings("sql"),
        )
        t.done()
        for where, opts in (("connection", v.connection), ("options", v.options)):
            _check_reserved(opts, f"[[variant]] '{name}' {where}", ctx)
        out.append(v)
    return tuple(out)


def _workloads(value: Any, run: RunDefaults, ctx: Reader) -> tuple[WorkloadSpec, ...]:
    if value is None:
        raise ctx.error("no [[workload]] tables: a campaign needs at least one workload")
    if not isinstance(value, list):
        raise ctx.error("'workload' must be an array of tables: write [[workload]], not [workload]")
    out: list[WorkloadSpec] = []
    for i, item in enumerate(value, 1):
        w = _workload(Table(item, f"[[workload]] #{i}", ctx, WORKLOAD_KEYS), run, ctx)
        if any(o.name == w.name for o in out):
            raise ctx.error(
                f"[[workload]] #{i}: name '{w.name}' is used twice; give each workload of the "
                "same test a distinct 'name'"
            )
        out.append(w)
    return tuple(out)


def _workload(t: Table, run: RunDefaults, ctx: Reader) -> WorkloadSpec:
    test = t.text("test", required=True)
    t.where = f"{t.where} ({test})"
    name = t.text("name") or os.path.splitext(os.path.basename(test))[0]
    if not NAME_RE.match(name):
        raise t.fail("name", f"must be letters, digits, '.', '_', '+' or '-' (it names files), got {_show(name)}")
    threads, auto = _threads(t, ctx)
    spec = WorkloadSpec(
        name=name,
        test=test,
        threads=threads,
        auto=auto,
        options=t.options("options"),
        time_s=t.integer("time", run.time_s, minimum=1),
        warmup_s=t.integer("warmup", run.warmup_s),
        repeats=t.integer("repeats", run.repeats, minimum=1, maximum=MAX_REPEATS),
    )
    t.done()
    _check_reserved(spec.options, f"{t.where} options", ctx)
    return spec


def _threads(t: Table, ctx: Reader) -> tuple[tuple[int, ...], AutoThreads | None]:
    value = t.raw("threads")
    auto_table = t.table("auto")
    if value == AUTO:
        return (), _auto(auto_table) if auto_table else AutoThreads()
    if auto_table is not None:
        raise t.fail("auto", 'is only used with threads = "auto"')
    if isinstance(value, int) and not isinstance(value, bool):
        value = [value]
    if not isinstance(value, list) or not value:
        raise t.fail(
            "threads",
            f'must be a list of thread counts or "auto", got {_show(value) if value is not None else "nothing"}',
        )
    for i, v in enumerate(value, 1):
        if isinstance(v, bool) or not isinstance(v, int) or not THREADS.holds(v):
            raise t.fail("threads", f"element {i} is {_show(v)}: a thread count is an integer {THREADS.describe()}")
    if len(set(value)) != len(value):
        raise t.fail("threads", "lists a thread count twice (use repeats for repeated runs)")
    return tuple(value), None


def _auto(t: Table) -> AutoThreads:
    a = AutoThreads(
        start=t.thread_count("start", 1),
        factor=t.number("factor", 2.0, minimum=1.0),
        max=t.thread_count("max", 256),
        min_gain=t.number("min-gain", 0.05),
        patience=t.integer("patience", 1, minimum=1),
        refine=t.integer("refine", 1),
        metric=t.choice("metric", "tps", METRICS),
    )
    t.done()
    if a.factor <= 1.0:
        raise t.fail("factor", "must be > 1 (the thread count is multiplied by it)")
    if a.max < a.start:
        raise t.fail("max", f"must be >= start ({a.start})")
    return a
