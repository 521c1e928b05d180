"""sysbench's logger as Lua scripts see it (spec 7, "Log de-duplication").

Levels FATAL=0, ALERT=1, WARNING=2, NOTICE=3, INFO=4, DEBUG=5; a line above
``--verbosity`` is dropped; a message whose text (without the level's prefix) is
the previous shown message's is counted, and the next different one is preceded by
``(last message repeated N times)``, whatever the verbosity (sysbench 1.0.20's
``text_handler_process``).  ``out`` prints every line it is given (the level was
decided here): the CLI's printer (stdout), so the lines interleave with the script's
own ``print`` output in program order.  :func:`error_text` is how a Lua error value
reads in those lines.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

PREFIXES = ("FATAL: ", "ALERT: ", "WARNING: ", "", "", "DEBUG: ")
FATAL, ALERT, WARNING, NOTICE, INFO, DEBUG = range(6)


def init_failed(compat: str | None) -> str:
    """sysbench's last line when a thread's initialisation failed (1.1.0 says 'Threads')."""
    return f"FATAL: {'Threads' if compat == '1.1' else 'Thread'} initialization failed!"


def error_text(err: Any) -> str:
    """A Lua error value as sysbench prints it."""
    if isinstance(err, str):
        return err
    if isinstance(err, (int, float)) and not isinstance(err, bool):
        return str(err)
    return "(not a string)"


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
        msg = str(msg)
        if msg == self.last:
            self.repeated += 1
            return
        if self.repeated:
            self.out(f"(last message repeated {self.repeated} times)")
            self.repeated = 0
        self.last = msg
        self.out(PREFIXES[min(max(level, 0), DEBUG)] + msg)
