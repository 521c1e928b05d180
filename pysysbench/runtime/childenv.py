"""How pysysbench's own Python processes start: with the parent's import path, never the
working directory's.

A multiprocessing child (a ``spawn`` worker of ``--workers``, the ``forkserver`` the row
generators of ``prepare`` fork from) is a fresh interpreter started with ``python -c``, so
its import path begins with the working directory. A folder named ``pysysbench`` there (a
source checkout, an old copy) or one that shadows the standard library (``multiprocessing/``)
was imported instead of the installed package, and the child died at start-up. Python's
fork server even ignores the parent's ``sys.path`` it is handed.

:func:`parent_import_path` is held while such processes start: the child ignores the working
directory (``PYTHONSAFEPATH``) and searches exactly the parent's ``sys.path``
(``PYTHONPATH``). :func:`restore_environment` is the child's first call: what it runs
afterwards (a workload's own subprocesses) sees the environment the user set.

:class:`PausedThreads` is held while the process group forks its workers: a helper thread
registered with :func:`pausable_for_fork` (the Lua main state's event loop) stops inside it.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ..core.switches import CHILD_SAVED_ENV

_KEYS = ("PYTHONSAFEPATH", "PYTHONPATH")
_SAVED = CHILD_SAVED_ENV  # the user's values of _KEYS, for restore_environment


def _parent_path() -> str:
    """The parent's import path as PYTHONPATH (``''`` is the working directory at start-up,
    as multiprocessing's spawn preparation resolves it)."""
    from multiprocessing import process

    entries = [
        process.ORIGINAL_DIR if entry == "" else entry  # type: ignore[attr-defined]  # undocumented
        for entry in sys.path
    ]
    return os.pathsep.join(e for e in entries if os.pathsep not in e)


@contextmanager
def parent_import_path() -> Iterator[None]:
    import json

    saved = {key: os.environ.get(key) for key in _KEYS}
    os.environ["PYTHONSAFEPATH"] = "1"
    os.environ["PYTHONPATH"] = _parent_path()
    _SAVED.put(json.dumps(saved))
    try:
        yield
    finally:
        _SAVED.take()
        _put_back(saved)


def restore_environment() -> None:
    """In a child started under :func:`parent_import_path`: the user's environment again."""
    raw = _SAVED.take()
    if raw is not None:
        import json

        _put_back(json.loads(raw))


def _put_back(saved: dict[str, str | None]) -> None:
    for key, value in saved.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value


# helper threads that stop for a fork and start again after it (pause() -> bool: stopped;
# resume()): a thread running at fork time could hold a lock the child then waits for
# forever, so the process group forks only when no other thread runs (procs.start_method)
_PAUSABLE: list[Any] = []


def pausable_for_fork(owner: Any) -> None:
    """Register ``owner`` (with ``pause() -> bool`` and ``resume()``, and its helper
    ``thread``) to be paused around the process group's forks; unregister with
    :func:`not_pausable`."""
    _PAUSABLE.append(owner)


def helpers_running() -> int:
    """How many registered helper threads run now.  They wait on their own event loops (the
    Lua main state's: report hooks, checkpoints), so a worker's poll that waits holding the
    GIL keeps one waiting only until its turn ends (engine/worker.py's WirePump): the GIL
    need not be given up and taken back around every wait for them."""
    return sum(1 for o in _PAUSABLE if (thread := getattr(o, "thread", None)) is not None and thread.is_alive())


def not_pausable(owner: Any) -> None:
    if owner in _PAUSABLE:
        _PAUSABLE.remove(owner)


class PausedThreads:
    """``with PausedThreads():`` every registered helper thread stopped inside (those that
    could not stop within their bound run on, and the group spawns instead of forking)."""

    def __enter__(self) -> PausedThreads:
        self.paused = [o for o in list(_PAUSABLE) if o.pause()]
        return self

    def __exit__(self, *exc: Any) -> None:
        for o in self.paused:
            o.resume()
