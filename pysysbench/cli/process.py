"""The process around the command: its standard descriptors at the start, its end.

Role: :func:`fill_closed_descriptors` points a standard descriptor the caller closed at
/dev/null before anything opens a file; :func:`end_process` exits, skipping the
interpreter's teardown when only the package's own code ran.
"""

from __future__ import annotations

import os
import sys


def end_process(code: int) -> None:
    """Exit with ``code``.  Where nothing but the package's own code ran, in one thread,
    the process ends after the exit handlers without the interpreter's teardown (freeing
    every module and object one by one: about 37 M instructions, 7 % of a start-up);
    a Lua script (its C stdio buffers), a user's workload or driver module (files it left
    open are flushed when collected) or another thread still alive get the ordinary exit."""
    import atexit
    import threading

    if threading.active_count() == 1 and _only_own_code():
        atexit._run_exitfuncs()
        atexit._clear()
        if _flushed(sys.stdout) and _flushed(sys.stderr):
            os._exit(code)
    sys.exit(code)


def _only_own_code() -> bool:
    from ..engine.outside import origins

    return not origins() and not any(name.startswith(("lupa", "pysysbench_user_")) for name in sys.modules)


def _flushed(stream) -> bool:
    try:
        stream.flush()
    except (OSError, ValueError, AttributeError):  # what the interpreter's own exit would report: let it
        return False
    return True


def fill_closed_descriptors() -> None:
    """A standard descriptor closed by the caller (``>&-``) is pointed at /dev/null, so no file,
    socket or pipe opened later takes its number (the event loop's library aborts when it
    closes one numbered 0-2, and a database socket on 1 would receive the report).  Python
    has set ``sys.stdout`` to None already: the report still finds standard output closed."""
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            try:
                got = os.open(os.devnull, os.O_RDWR)
                if got != fd:
                    os.dup2(got, fd)
                    os.close(got)
            except OSError:
                pass
