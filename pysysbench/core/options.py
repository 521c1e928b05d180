"""Option registry and the sysbench command-line grammar.

Every option is declared once, next to the code that owns it (general options
here, driver options in ``drivers/``, workload options in ``workloads/``), as an
:class:`Option` with a name, type, default, help text and group.  Parsing runs in
two phases like sysbench: the general and driver options first, then -- once the
test name is known and the workload has registered its own options -- the rest.

Precedence: defaults < config file < command line, where a config file counts at
the position of ``--config-file`` on the command line (later options win).

Deliberate deviations from sysbench 1.0.20, documented in docs/deviations.md:
* workload options given in a config file take effect (sysbench silently resets them);
* a boolean option in a config file honours its value (``histogram=off`` is off);
* numeric workload options reject garbage instead of silently reading 0.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import field
from enum import Enum
from types import MappingProxyType
from typing import Any

from .errors import ConfigError, InvalidOption, UsageError
from .record import record

BOOL_TRUE = ("on", "true", "yes", "1")
BOOL_FALSE = ("off", "false", "no", "0")
FLAG_OFF = (*BOOL_FALSE, "disabled")  # a mode option's words that leave its sysbench flag off
SIZE_SUFFIXES = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}
INT_MAX = 2**63 - 1
INT32_MAX = 2**31 - 1  # C int: sysbench's integer options, the sbtest id and k columns (INTEGER)
INT32_MIN = -(2**31)
MAX_THREADS = 1_000_000  # --threads (and a campaign's thread counts); servers cap sessions far lower


class OptType(Enum):
    # (kind, help format); the kind keeps INT and DOUBLE distinct members
    # (equal plain values would make DOUBLE an alias of INT)
    BOOL = ("bool", "[=on|off]")
    INT = ("int", "=N")
    DOUBLE = ("double", "=N")
    SIZE = ("size", "=SIZE")
    STRING = ("string", "=STRING")
    LIST = ("list", "=[LIST,...]")
    FILE = ("file", "=FILENAME")

    def __init__(self, kind: str, fmt: str) -> None:
        self.fmt = fmt


@record(frozen=True)
class Bounds:
    """The range of a numeric option, or of each number of a list option (ports).

    Inclusive unless ``open_min``/``open_max``; None = no limit on that side; ``why``
    is appended to the message (what the limit comes from)."""

    min: float | None = None
    max: float | None = None
    open_min: bool = False
    open_max: bool = False
    why: str = ""

    def holds(self, value: float) -> bool:
        lo, hi = self.min, self.max
        return (lo is None or (value > lo if self.open_min else value >= lo)) and (
            hi is None or (value < hi if self.open_max else value <= hi)
        )

    def describe(self) -> str:
        lo, hi = _number_text(self.min), _number_text(self.max)
        if self.min is not None and self.max is not None:
            text = (
                f"between {lo} and {hi}"
                if not (self.open_min or self.open_max)
                else f"{'>' if self.open_min else '>='} {lo} and {'<' if self.open_max else '<='} {hi}"
            )
        elif self.min is not None:
            text = f"{'>' if self.open_min else '>='} {lo}"
        else:
            text = f"{'<' if self.open_max else '<='} {hi}"
        return f"{text}, {self.why}" if self.why else text


def _number_text(value: float | None) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


THREADS = Bounds(1, MAX_THREADS)
NON_NEGATIVE = Bounds(0)
COUNT = Bounds(0, INT32_MAX)  # statements per transaction and other counts
PERCENT = Bounds(0.0, 100.0)
PORT = Bounds(1, 65535)


@record(frozen=True)
class Option:
    """One declared option.  ``name`` is the spelling shown in help."""

    name: str
    type: OptType
    default: Any
    help: str
    group: str = "General options"
    secret: bool = False  # never printed, logged or written to result files
    show_default: bool = True
    alias_for: str | None = None  # deprecated alias: value goes to this option
    choices: tuple[str, ...] | None = None
    bounds: Bounds | None = None  # checked after parsing (check_bounds)
    extra: bool = False  # not sysbench 1.0.20's: works, but unlisted in the sysbench face's help
    # an extra option of a later sysbench release ("1.1"): a workload's is listed in that face's
    # help; a general or driver option exists only under that release
    since: str = ""
    gone_in: str = ""  # the sysbench release without it ("1.1"): read, but not an option given under it
    c_int: bool = False  # sysbench reads it as a C int: a value beyond one is refused while parsing
    fold_case: bool = False  # ``choices`` match in any case (a client's REQUIRED for required)
    # the type sysbench declares it with where pysysbench's is wider (a LIST of hosts for its
    # STRING, a mode for its BOOL): what a Lua script sees (sysbench_value), and a BOOL's words
    sysbench_type: OptType | None = None
    # the sysbench release whose face takes any value, as it does: ``choices`` unchecked (its
    # client library refuses a bad one when it connects, in its words: the driver's connect)
    unchecked_in: str = ""

    @property
    def key(self) -> str:
        return canonical(self.name)


def canonical(name: str) -> str:
    """sysbench treats '-' and '_' in option names as the same character."""
    return name.replace("-", "_").lower()


def format_default(opt: Option) -> str:
    value = opt.default
    if opt.type is OptType.BOOL:
        return "on" if value else "off"
    if opt.type is OptType.LIST:
        return ",".join(str(v) for v in value or ())
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:g}"  # sysbench prints doubles with %g: [1], [75], [0.2]
    return str(value)


# --- value parsing ----------------------------------------------------------------


def shown(text: str) -> str:
    """``text`` for an error line: control characters (a binary config file's bytes, a newline
    in a value) escaped, so the message stays one line and a terminal shows what was there."""
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() else ch.encode("unicode_escape").decode("ascii") for ch in text)


def format_value(value: Any) -> str:
    """A value as an option's word on a command line (bools as on/off, lists joined by commas)."""
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, list):
        return ",".join(format_value(v) for v in value)
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def option_text(name: str, value: str | None) -> str:
    """``--name=value`` (``--name`` when bare), as sysbench echoes an argument it refuses."""
    return shown(f"--{name}" if value is None else f"--{name}={value}")


def parse_value(opt: Option, raw: str | None, *, origin: str = "") -> Any:
    """Convert ``raw`` (None = bare ``--name``) to the option's type.

    Messages follow sysbench's wording so existing wrappers see familiar text.
    """
    t = opt.type
    flag = opt.sysbench_type is OptType.BOOL and t is OptType.STRING
    if flag and raw is None:
        return "on"  # sysbench's bare flag
    if t is OptType.BOOL:
        if raw is None or raw == "":
            return True
        low = raw.lower()
        if low in BOOL_TRUE:
            return True
        if low in BOOL_FALSE:
            return False
        raise InvalidOption(
            f"invalid option: {option_text(opt.name, raw)}{origin} (expected on/off, true/false or 1/0)"
        )
    if raw is None:
        if t is OptType.STRING or t is OptType.LIST:
            return "" if t is OptType.STRING else []
        raise InvalidOption(f"Invalid value for the '{opt.name}' option: '' (a value is required){origin}")
    if t is OptType.INT:
        return _parse_int(opt, raw, origin)
    if t is OptType.DOUBLE:
        return _parse_double(opt, raw, origin)
    if t is OptType.SIZE:
        return _parse_size(opt, raw, origin)
    if t is OptType.LIST:
        return [v.strip() for v in raw.split(",") if v.strip() != ""]
    if opt.choices is not None and raw not in opt.choices and (raw != "" or flag):
        if opt.fold_case and raw.lower() in opt.choices:
            return raw.lower()
        raise InvalidOption(
            f"Invalid value for the '{opt.name}' option: '{shown(raw)}'"
            f" (choose one of: {', '.join(opt.choices)}){origin}"
        )
    return raw


def sysbench_value(opt: Option, value: Any) -> Any:
    """``value`` as sysbench's type of the option (``sysbench_type``) has it, for a Lua script:
    a mode as its flag (on unless :data:`FLAG_OFF`), a list of one item as that string or
    number; a list of several stays a list (pysysbench's extension)."""
    kind = opt.sysbench_type
    if kind is OptType.BOOL:
        return str(value).lower() not in FLAG_OFF
    if kind in (OptType.STRING, OptType.INT) and isinstance(value, list) and len(value) == 1:
        item = str(value[0])
        return int(item) if kind is OptType.INT and item.isdigit() else item
    return value


def _bad(opt: Option, raw: str, origin: str, what: str) -> InvalidOption:
    # sysbench names the option by its key (report_interval) and says no more
    return InvalidOption(
        f"Invalid value for the '{opt.name}' option: '{shown(raw)}' ({what}){origin}",
        f"Invalid value for the '{canonical(opt.name)}' option: '{shown(raw)}'",
    )


def _parse_int(opt: Option, raw: str, origin: str) -> int:
    value = _int_value(opt, raw, origin)
    if opt.c_int and not INT32_MIN <= value <= INT32_MAX:  # sysbench: strtol, then "fits an int"
        raise _bad(opt, raw, origin, f"expected an integer between {INT32_MIN} and {INT32_MAX}")
    return value


def _int_value(opt: Option, raw: str, origin: str) -> int:
    text = raw.strip()
    try:
        return int(text, 10)
    except ValueError:
        pass
    # sysbench declares script options as doubles, so "1e6" is a valid table size
    try:
        value = float(text)
    except ValueError:
        raise _bad(opt, raw, origin, "expected an integer") from None
    if not math.isfinite(value) or not value.is_integer() or abs(value) > INT_MAX:
        raise _bad(opt, raw, origin, "expected an integer")
    return int(value)


def _parse_double(opt: Option, raw: str, origin: str) -> float:
    try:
        value = float(raw.strip())
    except ValueError:
        raise _bad(opt, raw, origin, "expected a number") from None
    if not math.isfinite(value):
        raise _bad(opt, raw, origin, "expected a finite number")
    return value


def _parse_size(opt: Option, raw: str, origin: str) -> int:
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kKmMgGtT]?)[bB]?\s*", raw)
    if not m:
        raise _bad(opt, raw, origin, "expected a size such as 64K, 500M or 10G")
    return int(float(m.group(1)) * SIZE_SUFFIXES[m.group(2).lower()])


def check_bounds(values: Values) -> None:
    """Every option declaring :class:`Bounds` holds a value inside them; otherwise
    sysbench's post-parse wording (``Invalid value for --threads: 0``) and the range.
    Deprecated aliases are checked through the option they set."""
    for opt in values.registry:
        if opt.bounds is None or opt.alias_for:
            continue
        value = values.get(opt.key)
        for item in value if opt.type is OptType.LIST else [value]:
            number = _list_number(item) if opt.type is OptType.LIST else item
            if number is None or not opt.bounds.holds(number):
                text = f"'{shown(str(item))}'" if number is None else _number_text(number)
                kind = "an integer " if number is None else ""
                raise ConfigError(f"Invalid value for --{opt.name}: {text} (must be {kind}{opt.bounds.describe()})")


def _list_number(item: str) -> int | None:
    text = str(item).strip()
    return int(text) if text.lstrip("-").isdigit() else None


# --- registry ---------------------------------------------------------------------


class Registry:
    """Name-keyed options in declaration order, grouped for help output."""

    def __init__(self, options: Iterable[Option] = ()):
        self._by_key: dict[str, Option] = {}
        for opt in options:
            self.add(opt)

    def add(self, opt: Option) -> None:
        # a later declaration (e.g. a workload re-declaring a general option) wins
        self._by_key[opt.key] = opt

    def extend(self, options: Iterable[Option]) -> None:
        for opt in options:
            self.add(opt)

    def get(self, name: str) -> Option | None:
        return self._by_key.get(canonical(name))

    def __iter__(self) -> Iterator[Option]:
        return iter(self._by_key.values())

    def groups(self) -> dict[str, list[Option]]:
        out: dict[str, list[Option]] = {}
        for opt in self._by_key.values():
            out.setdefault(opt.group, []).append(opt)
        return out


def help_block(title: str | None, options: list[Option], *, sort: bool = False) -> str:
    """Render one group the way sysbench does (Appendix B layout rule)."""
    rows = sorted(options, key=lambda o: o.name) if sort else options
    lefts = [f"  --{o.name}{o.type.fmt}" for o in rows]
    width = max((len(s) for s in lefts), default=0) + 1
    lines = [title] if title else []
    for left, opt in zip(lefts, rows):
        text = f"{left.ljust(width)}{opt.help}"
        if opt.show_default and opt.type is not OptType.FILE:
            text += f" [{format_default(opt)}]"
        lines.append(text)
    return "\n".join(lines) + "\n"


# --- values -----------------------------------------------------------------------


class FrozenOptionsError(TypeError):
    """Something tried to change options after parsing (a bug: the run's options are
    fixed once parsed, and values derived from them are derived once, at freeze time)."""


def _new_unique_seed() -> int:
    """The run's random.unique() seed: picked once per parsed command line, so worker
    processes and Ray actors (which get these values) draw from one permutation.
    From the OS, like Debian's sysbench: a second run without a new prepare does not
    repeat the first run's ids."""
    return int.from_bytes(os.urandom(8), "little")


@record
class Values:
    """Parsed option values with attribute access (``values.table_size``).

    ``explicit`` records which keys the user set (command line or config file),
    which the driver auto-selection and the deprecated-alias warnings need.
    ``script`` holds a Lua script's own options by key (what it declares in
    ``sysbench.cmdline.options``): the script's ``sysbench.opt`` sees them, the run never
    does, so a declared ``threads`` or ``result-file`` does not change the run (sysbench).
    :meth:`freeze` ends the parse: from then on nothing can change them.
    """

    registry: Registry
    data: dict[str, Any] = field(default_factory=dict)
    explicit: set[str] = field(default_factory=set)
    unique_seed: int = field(default_factory=_new_unique_seed)
    frozen: bool = False
    script: Mapping[str, Any] = field(default_factory=dict)

    def __getattr__(self, name: str) -> Any:
        if name in ("registry", "data", "explicit", "unique_seed", "frozen", "script"):
            raise AttributeError(name)
        key = canonical(name)
        if key in self.data:
            return self.data[key]
        opt = self.registry.get(key)
        if opt is None:
            raise AttributeError(f"no option named {name!r}")
        return opt.default

    def __setattr__(self, name: str, value: Any) -> None:
        if self.__dict__.get("frozen"):
            raise FrozenOptionsError(f"options are frozen once parsed: cannot set {name!r}")
        object.__setattr__(self, name, value)

    def get(self, name: str, default: Any = None) -> Any:
        try:
            return getattr(self, name)
        except AttributeError:
            return default

    def set(self, opt: Option, value: Any) -> None:
        if self.frozen:
            raise FrozenOptionsError(f"options are frozen once parsed: cannot set --{opt.name}")
        self.data[opt.key] = value
        self.explicit.add(opt.key)

    def is_set(self, name: str) -> bool:
        return canonical(name) in self.explicit

    def unset(self, name: str) -> None:
        """Back to the default, as if never given (a Lua script claimed the option's name)."""
        if self.frozen:
            raise FrozenOptionsError(f"options are frozen once parsed: cannot unset --{name}")
        self.data.pop(canonical(name), None)
        self.explicit.discard(canonical(name))

    def freeze(self, derived: Mapping[str, Any] | None = None) -> Values:
        """End of parsing: the values become read-only (``data`` a read-only mapping,
        ``explicit`` a frozenset, :meth:`set` and attribute writes raise
        :class:`FrozenOptionsError`).  ``derived`` are values computed once from the
        options (``--data-size``'s table size): visible as those options, not marked
        as given.  Freezing twice is harmless when nothing new is derived."""
        if self.frozen:
            if derived and any(self.data.get(canonical(k)) != v for k, v in derived.items()):
                raise FrozenOptionsError("options are frozen once parsed: cannot derive new values")
            return self
        data = dict(self.data)
        data.update((canonical(k), v) for k, v in (derived or {}).items())
        object.__setattr__(self, "data", MappingProxyType(data))
        object.__setattr__(self, "explicit", frozenset(self.explicit))
        object.__setattr__(self, "script", MappingProxyType(dict(self.script)))
        object.__setattr__(self, "frozen", True)
        return self

    def __reduce__(self):
        """Pickled as plain state (worker processes, Ray actors) and frozen again there."""
        return (
            _rebuild_values,
            (self.registry, dict(self.data), set(self.explicit), self.unique_seed, self.frozen, dict(self.script)),
        )

    def public(self) -> dict[str, Any]:
        """Effective options with secrets removed, for result files."""
        out = {}
        for opt in self.registry:
            if opt.secret or opt.alias_for:
                continue
            out[opt.name] = self.get(opt.key)
        for key, value in self.script.items():  # a Lua script's own options, where no built-in has the name
            if self.registry.get(key) is None:
                out[key] = value
        return out


def _rebuild_values(
    registry: Registry, data: dict, explicit: set, unique_seed: int, frozen: bool, script: dict | None = None
) -> Values:
    values = Values(registry, data, explicit, unique_seed, script=script or {})
    return values.freeze() if frozen else values


# --- command line -------------------------------------------------------------------

_NAME_START = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
_NAME_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-."


def is_option_name(name: str) -> bool:
    """Whether ``name`` is spelled as an option's name: an ASCII letter or digit, then letters,
    digits, ``_``, ``-`` and ``.`` (a regular expression said so before; compiling one costs
    0.8 M instructions of every run's start-up, bench/journal/2026-12-02.md "Start-up")."""
    return name[:1] in _NAME_START and not name.strip(_NAME_CHARS)


def option_word(arg: str) -> tuple[str, str | None] | None:
    """``--name[=value]`` as (name, value or None), or None when ``arg`` is not one.  The
    value is everything after the first ``=``, newlines included; without one, a single
    final newline is not part of the name (the ``$`` of the pattern this replaced)."""
    if not arg.startswith("--"):
        return None
    name, eq, value = arg[2:].partition("=")
    if not eq and name.endswith("\n"):
        name = name[:-1]
    return (name, value if eq else None) if is_option_name(name) else None


@record
class RawOption:
    """One ``--name[=value]`` as given (command line or config file), before it is parsed."""

    name: str
    value: str | None
    origin: str = ""  # " (in FILE line N)" for config-file entries


def split_argv(argv: list[str]) -> tuple[list[RawOption], list[str]]:
    """Separate ``--name[=value]`` options from positional words, keeping order.

    Config files are expanded in place, so precedence follows position.
    """
    options: list[RawOption] = []
    words: list[str] = []
    for arg in argv:
        word = option_word(arg)
        if word is None:
            if arg.startswith("--") or (arg.startswith("-") and len(arg) > 1):
                raise InvalidOption(f"invalid option: {shown(arg)}")
            words.append(arg)
            continue
        name, value = word
        if canonical(name) == "config_file":
            if not value:
                raise InvalidOption("invalid option: --config-file needs a file name (--config-file=FILE)")
            options.append(RawOption(name, value))
            options.extend(read_config_file(value))
        else:
            options.append(RawOption(name, value))
    return options, words


def read_config_file(path: str) -> list[RawOption]:
    """Parse a sysbench config file: ``name=value`` per line, ``#`` comments,
    quoted values, comma-separated lists.  Several ``name=value`` pairs on one
    line and spaces around ``=`` are accepted too (reports often flatten files)."""
    try:
        with open(path, encoding="utf-8") as fh:
            lines = fh.read().splitlines()
    except OSError as exc:
        raise UsageError(f"cannot read config file '{path}': {exc.strerror}") from None
    except UnicodeDecodeError:
        raise UsageError(f"cannot read config file '{path}': it is not UTF-8 text") from None
    import shlex  # config files only: with the regular expression it compiles, 1.5 M instructions of a run

    out: list[RawOption] = []
    for lineno, line in enumerate(lines, 1):
        origin = f" (in {os.path.basename(path)} line {lineno})"
        lexer = shlex.shlex(line, posix=True)
        lexer.whitespace_split = True
        lexer.escape = ""  # values are literal, as in sysbench: a backslash in a password stays
        try:
            tokens = list(lexer)
        except ValueError:
            raise UsageError(f"config file '{path}': unexpected EOL on line {lineno} (unterminated quote)") from None
        out.extend(_pairs(tokens, origin))
    return out


def _pairs(tokens: list[str], origin: str) -> Iterator[RawOption]:
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if tok.startswith("--"):
            tok = tok[2:]  # tolerate "--name=value" lines (sysbench issue 228)
        if "=" not in tok:
            if i + 1 < len(tokens) and tokens[i + 1].startswith("="):
                # "name = value" or "name =value"
                rest = tokens[i + 1][1:]
                if rest == "" and i + 2 < len(tokens):
                    yield RawOption(tok, tokens[i + 2], origin)
                    i += 3
                else:
                    yield RawOption(tok, rest, origin)
                    i += 2
                continue
            i += 1  # sysbench skips lines without '='
            continue
        name, value = tok.split("=", 1)
        if value == "" and i + 1 < len(tokens) and "=" not in tokens[i + 1]:
            value = tokens[i + 1]  # "name= value"
            i += 1
        yield RawOption(name.strip(), value, origin)
        i += 1


def apply_options(values: Values, raw: list[RawOption], *, strict: bool) -> list[RawOption]:
    """Parse the options the registry knows; return the ones it does not.

    With ``strict`` an unknown option is an error (second phase)."""
    unknown: list[RawOption] = []
    for item in raw:
        opt = values.registry.get(item.name)
        if opt is None:
            if strict:
                raise InvalidOption(
                    f"invalid option: {option_text(item.name, item.value)}{item.origin}"
                    " (see 'pysysbench --help' and 'pysysbench TESTNAME help')"
                )
            unknown.append(item)
            continue
        values.set(opt, parse_value(opt, item.value, origin=item.origin))
    return unknown
