"""Options a Lua script declares (``sysbench.cmdline.options``) and ``sysbench.opt``.

sysbench's rules, not pysysbench's stricter ones (spec 1.9): a number default makes
a DOUBLE option read with ``strtod`` (no error), only an explicit ``ARG_INT``
validates; a BOOL with no default is on; unknown options are fatal once a script
declares options (even ``{}``), and accepted as strings -- also exported as globals
-- when it declares none (the 0.5 scripts).  Help lists the options in sorted
order with sysbench's layout.

The declared options are the script's alone (``Values.script``): the run keeps its
built-ins, defaults included.  As in sysbench, where the general options are parsed and
read before the script declares its own: a declared ``threads`` is the script's
``sysbench.opt.threads`` (its default: ``--threads=3`` is the run's), never the run's.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any

from ..core.errors import UsageError
from ..core.options import Option, OptType, RawOption, Values, canonical, parse_value, sysbench_value
from ..core.record import record

GROUP = "Lua script options"
ARG_TYPES = {
    1: OptType.BOOL,
    2: OptType.INT,
    3: OptType.SIZE,
    4: OptType.DOUBLE,
    5: OptType.STRING,
    6: OptType.LIST,
    7: OptType.FILE,
}
INT32 = 2**31
_STRTOD = re.compile(r"\s*[+-]?(0[xX][0-9a-fA-F]+|(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?|inf(inity)?|nan)", re.I)
_SIZE = re.compile(r"\s*(\d+)([A-Za-z]?)")
_SIZE_MULT = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}


class SilentExit(Exception):
    """sysbench exits 1 without a word (an invalid default of a script option)."""


@record(frozen=True)
class Declared:
    """One entry of ``sysbench.cmdline.options``, as read in sorted order."""

    name: str
    desc: str
    default: str | None
    arg_type: int

    @property
    def opt_type(self) -> OptType:
        return ARG_TYPES.get(self.arg_type, OptType.STRING)


def declared(rows: Any) -> list[Declared] | None:
    """The rows of ``read_cmdline_options()`` (None: the script declares no options)."""
    if rows is None:
        return None
    out = []
    for i in range(1, len(rows) + 1):
        r = rows[i]
        out.append(Declared(str(r[1]), str(r[2]), None if r[3] is None else str(r[3]), int(r[4])))
    return out


def strtod(text: str) -> float:
    m = _STRTOD.match(text)
    if not m:
        return 0.0
    s = m.group(0).strip()
    if s.lower().lstrip("+-").startswith("0x"):
        return float(int(s, 16))
    return float(s)


def convert(opt_type: OptType, name: str, raw: str | None, shown: str) -> Any:
    """A value as sysbench reads it; ``shown`` is the option as typed, for messages."""
    if opt_type is OptType.BOOL:
        if raw is None or raw.lower() in ("on", "true", "1", ""):
            return True
        if raw.lower() in ("off", "false", "0"):
            return False
        raise UsageError(f"invalid option: {shown}")
    text = "" if raw is None else raw
    if opt_type is OptType.INT:
        if text == "":
            return 0
        try:
            value = int(text, 10)
        except ValueError:
            value = None
        if value is None or not -INT32 <= value < INT32 or text.strip() != text:
            raise UsageError(f"Invalid value for the '{name}' option: '{text}'")
        return value
    if opt_type is OptType.DOUBLE:
        return strtod(text)
    if opt_type is OptType.SIZE:
        m = _SIZE.match(text)
        if not m:
            return 0
        return int(m.group(1)) * _SIZE_MULT.get(m.group(2).lower(), 0)
    if opt_type is OptType.LIST:
        return [v for v in text.split(",") if v != ""]
    if opt_type is OptType.FILE:
        return None
    return text


def register(values: Values, decls: list[Declared]) -> list[Option]:
    """Add the declared options to the registry of the script's own ``values`` (never the
    run's) with their converted defaults."""
    opts = []
    for d in decls:
        if d.default is None:
            default = True if d.opt_type is OptType.BOOL else convert(d.opt_type, d.name, None, "")
        else:
            try:
                default = convert(d.opt_type, d.name, d.default, f"--{d.name}={d.default}")
            except UsageError:
                raise SilentExit() from None
        opt = Option(d.name, d.opt_type, default, d.desc, GROUP)
        values.registry.add(opt)
        opts.append(opt)
    return opts


def apply(
    values: Values,
    decls: list[Declared] | None,
    rest: Iterable[RawOption],
    validate: Callable[[str, str | None], bool] | None = None,
    run: Values | None = None,
) -> None:
    """Parse the options phase 1 left over against the script's declarations, into the
    script's own ``values``.  ``rest`` may also hold pysysbench's own additions as given
    (``--workers``, ``--result-file``, ...: sysbench has no such options): in ``run``'s
    registry, they are the run's unless the script declares the name, which makes it the
    script's alone (the run's goes back to its default)."""
    by_key = {canonical(d.name): d for d in decls or ()}
    for item in rest:
        shown = f"--{item.name}" + (f"={item.value}" if item.value is not None else "")
        d = by_key.get(canonical(item.name))
        opt = run.registry.get(item.name) if run is not None else None
        if opt is not None and opt.gone_in and opt.gone_in == (run.get("sysbench_compat") or "1.0"):
            if d is None:  # not an option of the release the face copies, nor the script's
                raise UsageError(f"invalid option: {shown}")
            opt = None
        if opt is not None:
            if d is None:  # not the script's: the run's (parsed again: a bad value waited for this)
                run.set(opt, parse_value(opt, item.value, origin=item.origin))
                continue
            run.unset(item.name)
        if decls is None:  # legacy mode: any option, as a string
            opt = Option(item.name, OptType.STRING, "", "", GROUP)
            values.registry.add(opt)
            values.set(opt, item.value or "")
            continue
        if d is None:
            raise UsageError(f"invalid option: {shown}")
        if validate is not None and not validate(item.name, item.value):
            raise UsageError(f"invalid option: {shown}")
        values.set(values.registry.get(d.name), convert(d.opt_type, d.name, item.value, shown))


def option_lines(decls: list[Declared]) -> str:
    """One line per option, then an empty line (``sysbench.cmdline.print_test_options()``, spec 1.9)."""
    width = max((len(d.name) + len(d.opt_type.fmt) for d in decls), default=0)
    lines = []
    for d in decls:
        line = f"  --{d.name}{d.opt_type.fmt.ljust(width - len(d.name) + 1)}{d.desc}"
        if d.default is not None:
            line += f" [{d.default}]"
        lines.append(line + "\n")
    return "".join(lines) + "\n"


def help_text(sname: str, decls: list[Declared]) -> str:
    """``help`` of a script without a ``help()`` function: ``<sname> options:`` and the lines."""
    return f"{sname} options:\n" + option_lines(decls)


def exported(values: Values) -> dict[str, Any]:
    """``sysbench.opt``: every option of the run under its underscored name, then the
    script's own (``values.script``), which win (sysbench: a declaration replaces the value)."""
    out = own(values)
    out.update(values.script)
    return out


def own(values: Values) -> dict[str, Any]:
    """Every registered option of ``values`` under its underscored name, as Lua sees it."""
    out: dict[str, Any] = {}
    for opt in values.registry:
        if opt.type is OptType.FILE:
            continue
        value = values.get(opt.key)
        if value is None:
            value = "" if opt.type is OptType.STRING else value
        if isinstance(value, tuple):
            value = list(value)
        out[opt.key] = value if opt.sysbench_type is None else sysbench_value(opt, value)
    return out
