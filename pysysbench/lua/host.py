"""What the Lua engine's states share outside the engine: the process's services,
loading a script's chunk, and the main state's own event loop
(:class:`MainHost`, a helper thread: sysbench's main state lives from the command
line's parse to the end, around the benchmark's own event loop)."""

from __future__ import annotations

import asyncio
import os
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

from ..core.options import Values
from ..core.rand_compat import background_threads
from ..drivers import REGISTRY as DRIVERS
from ..runtime.childenv import not_pausable, pausable_for_fork
from .log import Log
from .runtime import Seeds, Unique, process_seed, unique_11
from .state import LuaState, Services


def program_argv() -> list[str]:
    """``sysbench.cmdline.argv``: the program name as invoked, then the arguments."""
    name = os.path.basename(sys.argv[0]) if sys.argv else "pysysbench"
    if name in ("__main__.py", "-c", ""):
        name = "pysysbench"
    return [name] + list(sys.argv[1:])


def stdout_line(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def make_services(values: Values, out: Callable[[str], None], driver_name: str) -> Services:
    seed = values.get("rand_seed", 0) or (time.time_ns() & 0xFFFFFFFF)
    seeds = Seeds(seed, background_threads(values), values.threads)
    unique = unique_11() if values.get("sysbench_compat") == "1.1" else Unique(process_seed())
    return Services(values, Log(out, values.get("verbosity", 3)), driver_name, DRIVERS, unique, seeds)


async def load(state: LuaState, path: str | None, modname: str | None) -> tuple[bool, Any]:
    """Run the script's chunk in ``state``: (ok, error value).  ``path`` None: standard
    input; ``modname``: the name it was found by on the Lua path (script.ScriptRef)."""
    chunk, err = state.loader(path, modname)
    if chunk is None:
        return False, err
    return await state.call(chunk)


class MainHost:
    """An event loop in a helper thread for the main state and the other states
    sysbench runs outside the benchmark threads (commands, reporter, checkpoints).
    The thread stops while the process group forks its workers (childenv's
    PausedThreads; between two ``run`` calls nothing runs on it) and starts again after:
    with it running, the workers were spawned, which re-imports everything in each
    (about 0.5 s of client CPU per run)."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = self._start()
        pausable_for_fork(self)

    def _start(self) -> threading.Thread:
        thread = threading.Thread(target=self.loop.run_forever, name="lua-main", daemon=True)
        thread.start()
        return thread

    def run(self, coro: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result()

    def pause(self) -> bool:
        """Stop the loop's thread: whether it has ended (within 5 s)."""
        if self.thread.is_alive():
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(5)
        return not self.thread.is_alive()

    def resume(self) -> None:
        if not self.loop.is_closed() and not self.thread.is_alive():
            self.thread = self._start()

    def close(self) -> None:
        not_pausable(self)
        if self.pause():
            # closed here, not by the garbage collector at the interpreter's teardown, where
            # its self-pipe socket may be finalized first: "Exception ignored in
            # BaseEventLoop.__del__ ... Invalid file descriptor: -1" after the script's output
            self.loop.close()
