"""sysbench's logger as Lua scripts see it (spec 7, "Log de-duplication").

Levels FATAL=0, ALERT=1, WARNING=2, NOTICE=3, INFO=4, DEBUG=5; a line above
``--verbosity`` is dropped; a line identical to the previous one is counted, and
the next different line is preceded by ``(last message repeated N times)``.
Lines go to the CLI's printer (stdout), so they interleave with the script's own
``print`` output in program order.
"""

from __future__ import annotations

from typing import Callable

PREFIXES = ("FATAL: ", "ALERT: ", "WARNING: ", "", "", "DEBUG: ")
FATAL, ALERT, WARNING, NOTICE, INFO, DEBUG = range(6)


class Log:
    def __init__(self, out: Callable[[str], None], verbosity: int = 3):
        self.out = out
        self.verbosity = verbosity
        self.last: str | None = None
        self.repeated = 0

    def __call__(self, level: int, msg: str) -> None:
        level = int(level)
        if level > self.verbosity:
            return
        line = PREFIXES[min(max(level, 0), DEBUG)] + str(msg)
        if line == self.last:
            self.repeated += 1
            return
        if self.repeated:
            self.out(f"(last message repeated {self.repeated} times)")
            self.repeated = 0
        self.last = line
        self.out(line)
