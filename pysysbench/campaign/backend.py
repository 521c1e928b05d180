"""The in-process campaign backend: every campaign step runs through the library,
the code a typed command runs.

Role: ``command(request)`` parses the :class:`Request`'s options
(``command.library.parse_request``) and executes it (``command.execute``: driver ->
frozen options -> workload -> a frozen spec through ``engine.run`` -> result file), with its
sysbench-format text going to a per-run log file instead of the terminal;
``sql``/``rows`` open one connection of the configured driver
(``drivers.REGISTRY[name](values)``) for the campaign's SQL hooks.  Nothing is
ever parsed back from the human-readable output: figures come from result files.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Callable

from ..command.cmdline import choose_driver, header, validate
from ..command.execute import execute
from ..command.library import parse_request
from ..command.run import use
from ..core.errors import PySysbenchError, UsageError, WorkloadError
from ..drivers import REGISTRY as DRIVERS
from ..lab import fault
from ..output.printer import Printer, to_stderr
from ..runtime.aio import run_to_end
from .executor import CommandOutcome
from .plan import Request

# A test that accepts every data-set option, so a config file naming them parses.
CONNECTION_TEST = "oltp_common"
CONNECTION_COMMAND = "prepare"


class LogStream:
    """File-like sink for the benchmark's text output; each complete line is also
    passed to ``on_line`` (display only)."""

    def __init__(self, fh, on_line: Callable[[str], None] | None):
        self.fh = fh
        self.on_line = on_line
        self.partial = ""

    def write(self, chunk: str) -> int:
        self.fh.write(chunk)
        if self.on_line is not None:
            lines = (self.partial + chunk).split("\n")
            self.partial = lines.pop()
            for line in lines:
                if line.strip():
                    self.on_line(line)
        return len(chunk)

    def flush(self) -> None:
        self.fh.flush()


class InProcessBackend:
    """:class:`pysysbench.campaign.Backend` running everything in this process."""

    def __init__(self, on_line: Callable[[str], None] | None = None):
        self.on_line = on_line

    def check(self, request: Request) -> list[str]:
        inv = parse_request(request.test, request.command, request.options)
        if inv.test is None or inv.command is None:
            raise UsageError("a test name and a command are required")
        if inv.command not in inv.workload_cls.commands:
            raise WorkloadError(f"'{inv.workload_cls.name}' test does not implement the '{inv.command}' command")
        validate(inv.values)
        driver = DRIVERS[choose_driver(inv.values)](inv.values)
        driver.check()
        warning = driver.ignore_list_warning()
        return [warning] if warning else []

    def command(self, request: Request, log_path: str) -> CommandOutcome:
        os.makedirs(os.path.dirname(log_path) or ".", exist_ok=True)
        with open(log_path, "w", encoding="utf-8") as fh:
            fh.write(f"$ pysysbench {shlex.join(request.command_line)}\n")
            stream = LogStream(fh, self.on_line)
            out = Printer(stream)
            try:
                try:
                    inv = parse_request(request.test, request.command, request.options)
                except WorkloadError:
                    out(header())  # as the command line: the first line before the test is looked for
                    raise
                for line in inv.stderr_warnings:
                    to_stderr(line)
                if inv.values.get("fault"):  # a workload's options may kill a lab node during its runs
                    use(fault.companion)
                return CommandOutcome(execute(inv, out, request.words()))
            except PySysbenchError as exc:
                stream.write(f"FATAL: {exc}\n")
                return CommandOutcome(exc.exit_code, str(exc))

    def _driver(self, connection: list[str]):
        inv = parse_request(CONNECTION_TEST, CONNECTION_COMMAND, connection)
        validate(inv.values)
        driver = DRIVERS[choose_driver(inv.values)](inv.values)
        driver.check()
        return driver

    def sql(self, connection: list[str], statements: list[str]) -> None:
        driver = self._driver(connection)

        async def go() -> None:
            conn = await driver.connect()
            try:
                for statement in statements:
                    await conn.query(statement)
            finally:
                await conn.close()

        run_to_end(go())

    def rows(self, connection: list[str], query: str) -> list[tuple]:
        driver = self._driver(connection)

        async def go() -> list[tuple]:
            conn = await driver.connect()
            try:
                return await conn.fetchall(query)
            finally:
                await conn.close()

        return run_to_end(go())
