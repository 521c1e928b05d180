"""The library call: one benchmark run from Python, without a command line.

Role: ``pysysbench.run(test, options, hooks=None)`` parses ``options`` with the
command line's rules (a mapping ``{"threads": 4, "time": 10}`` or ``--name=value`` items;
config files, aliases and the driver's prefixed options work as on the command
line), freezes them into a :class:`~pysysbench.engine.spec.RunSpec` and runs it
through ``engine.run``; it returns the :class:`~pysysbench.stats.results.RunOutcome`
(``results.from_outcome`` makes the result document of it).  Nothing is printed
unless ``hooks.say`` prints; errors are raised as :class:`PySysbenchError`.
The campaign backend comes through :func:`parse_request` too.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ..core.errors import UsageError, WorkloadError
from ..core.options import format_value
from ..drivers import REGISTRY as DRIVERS
from ..engine import run as engine
from ..engine.local import Hooks
from ..engine.spec import RunSpec
from ..stats.results import RunOutcome
from ..workloads.base import user_code
from .cmdline import COMMANDS, Invocation, choose_driver, parse, validate


def option_items(options: Mapping[str, Any] | Iterable[str]) -> list[str]:
    """``--name=value`` items: a mapping's pairs (bools as on/off, lists joined by
    commas), or the given items as they are."""
    if isinstance(options, Mapping):
        return [f"--{name}={format_value(value)}" for name, value in options.items()]
    items = list(options)
    for item in items:
        if not (isinstance(item, str) and item.startswith("--")):
            raise UsageError(f"options: expected --name=value items or a mapping, got {item!r}")
    return items


def parse_request(test: str, command: str, options: Mapping[str, Any] | Iterable[str]) -> Invocation:
    """Parse one command's options with the command line's rules (both phases)."""
    return parse([test, *option_items(options), command])


def check_command(inv: Invocation) -> None:
    """The command is one the test has (sysbench's messages)."""
    cls = inv.workload_cls
    if inv.command is None:
        raise WorkloadError("Command is required. Supported commands: " + ", ".join(cls.commands))
    if inv.command not in COMMANDS and inv.command not in cls.commands:
        raise UsageError(f"Unknown command: {inv.command}")
    if inv.command not in cls.commands and inv.command != "help":
        raise WorkloadError(
            f"'{cls.name}' test does not implement the '{inv.command}' command (it supports: {', '.join(cls.commands)})"
        )


def configure(inv: Invocation):
    """After parsing: sysbench's checks, the driver, the options frozen (with what
    they imply derived once: ``--data-size``'s table size) and the workload."""
    v = inv.values
    validate(v)
    driver = DRIVERS[choose_driver(v)](v)
    driver.check()
    v.freeze(inv.workload_cls.derived_options(v, driver))
    with user_code(inv.workload_cls, "configure"):
        workload = inv.workload_cls(v, driver)
    return workload, driver


def run(test: str, options: Mapping[str, Any] | Iterable[str] = (), hooks: Hooks | None = None) -> RunOutcome:
    """Run ``test`` with ``options``; its :class:`RunOutcome` (``error`` and
    ``exit_code`` say how it ended)."""
    inv = parse_request(test, "run", options)
    if inv.workload_cls.runs_own_commands:
        raise WorkloadError(f"'{test}' is a Lua script: it runs through the command line only (pysysbench SCRIPT run)")
    check_command(inv)
    workload, driver = configure(inv)
    spec = RunSpec.build(inv.values, workload.source, driver, server_version=bool(inv.values.result_file))
    return engine.run(spec, hooks, workload=workload, driver=driver)
