"""Split options glued together by a copy from a web page.

Command lines pasted from reports often lost a space: ``--pgsql-db=sbtest--oltp_tables_count=20``,
``--max-time=300--test=tests/db/oltp.lua``, ``--oltp-read-only=off--init-rng=on``.
:func:`unglue` splits such an argument at a ``--`` when -- and only when --
every piece is a known option whose value parses for its type, trying the
earliest split first.  A value that legitimately contains ``--`` (``--mysql-db=a--b``)
stays whole because ``b`` is not an option.  The value of a secret option
(passwords) is never split: a WARNING says it looks glued, without showing it.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from ..core.errors import InvalidOption
from ..core.options import Option, RawOption, canonical, is_option_name, parse_value

GLUE = "--"
MAX_GLUED = 64  # more '--' in one argument than any pasted line has: left alone

Lookup = Callable[[str], "Option | None"]


def _piece(text: str, lookup: Lookup) -> tuple[Option, str | None] | None:
    """``name[=value]`` as a known option with a value valid for its type."""
    name, eq, value = text.partition("=")
    if not is_option_name(name):
        return None
    opt = lookup(name)
    if opt is None:
        return None
    raw = value if eq else None
    try:
        parse_value(opt, raw)
    except InvalidOption:
        return None
    return opt, raw


def split_body(body: str, lookup: Lookup, _memo: dict | None = None) -> list[tuple[str, str | None]] | None:
    """``body`` (an argument without its leading ``--``) as one or more options,
    or None when it cannot be read as known options throughout.  The earliest
    split wins; results per suffix are memoised, so the search stays polynomial
    even for an argument made of many ``--``."""
    memo = {} if _memo is None else _memo
    if body in memo:
        return memo[body]
    found = None
    cuts = [m.start() for m in re.finditer(re.escape(GLUE), body) if m.start() > 0]
    for cut in cuts + [len(body)]:
        piece = _piece(body[:cut], lookup)
        if piece is None:
            continue
        opt, raw = piece
        name = body[:cut].partition("=")[0]
        if cut == len(body):
            found = [(name, raw)]
            break
        if opt.secret:
            continue  # a secret takes the whole rest of the argument
        rest = split_body(body[cut + len(GLUE) :], lookup, memo)
        if rest is not None:
            found = [(name, raw)] + rest
            break
    memo[body] = found
    return found


def _show(name: str, raw: str | None, lookup: Lookup) -> str:
    """One option as typed, a secret's value masked."""
    opt = lookup(name)
    if raw is None:
        return f"--{name}"
    return f"--{name}=***" if opt is not None and opt.secret else f"--{name}={raw}"


def looks_glued(value: str, lookup: Lookup) -> bool:
    """Whether ``value`` contains ``--`` followed by nothing but known options."""
    return any(
        split_body(value[m.start() + len(GLUE) :], lookup) is not None for m in re.finditer(re.escape(GLUE), value)
    )


def unglue(raw: list[RawOption], lookup: Lookup) -> tuple[list[RawOption], list[str]]:
    """Split glued command-line options; return the options and WARNING lines."""
    out: list[RawOption] = []
    warnings: list[str] = []
    for item in raw:
        text = item.name if item.value is None else f"{item.name}={item.value}"
        if item.origin or GLUE not in text[1:] or text.count(GLUE) > MAX_GLUED:
            out.append(item)
            continue
        opt = lookup(item.name)
        if opt is not None and opt.secret:
            if item.value and looks_glued(item.value, lookup):
                warnings.append(
                    f"WARNING: the value of --{item.name} looks like it has another option glued to it "
                    "('--' followed by an option name); secret values are never split, so it is used "
                    "as given: put a space before the option if one was meant"
                )
            out.append(item)
            continue
        pieces = split_body(text, lookup)
        if pieces is None or len(pieces) == 1:
            out.append(item)
            continue
        out.extend(RawOption(name, value) for name, value in pieces)
        shown = [_show(n, v, lookup) for n, v in pieces]
        warnings.append(
            f"WARNING: split the glued argument '{''.join(shown)}' into {' '.join(shown)} "
            "(a space was missing between the options)"
        )
    return out, warnings


def known_options(registry, classes) -> Lookup:
    """A lookup of every option the command line could mean: the registry's
    (general, driver) and those of the given workload classes."""
    out: dict[str, Option] = {}
    for cls in classes:
        for opt in cls.options:
            out.setdefault(opt.key, opt)
    for opt in registry:
        out[opt.key] = opt
    return lambda name: out.get(canonical(name))


def test_name(raw: list[RawOption], words: list[str]) -> str | None:
    """The test name the command line gives (``--test=`` wins, as in parse())."""
    for item in reversed(raw):
        if canonical(item.name) == "test" and item.value:
            return item.value
    return words[0] if words else None
