"""pysysbench: a sysbench-compatible OLTP benchmark.

As a library: ``pysysbench.run(test, options, hooks=None)`` runs one benchmark
and returns its outcome (see :mod:`pysysbench.command.library`); ``Hooks`` says what
to do with its lines, intervals and checkpoints, ``RunSpec`` is the frozen run
specification the engine runs.  A custom workload declares its options with
``Option`` and ``OptType`` (docs/usage.md, "Custom workloads").
"""

from .runtime import native as _native  # noqa: F401 - decides on the C once, and hands core/rand.py its draws
from .version import __version__

__all__ = ["Hooks", "OptType", "Option", "RunOutcome", "RunSpec", "__version__", "run"]


def run(test, options=(), hooks=None):
    """Run ``test`` (a bundled name or a ``.py`` file) with ``options`` (a mapping
    or ``--name=value`` items); the run's :class:`RunOutcome`."""
    from .command.library import run as library_run

    return library_run(test, options, hooks)


def __getattr__(name):
    if name == "Hooks":
        from .engine.local import Hooks

        return Hooks
    if name == "RunSpec":
        from .engine.spec import RunSpec

        return RunSpec
    if name in ("Option", "OptType"):
        from .core import options

        return getattr(options, name)
    if name == "RunOutcome":
        from .stats.results import RunOutcome

        return RunOutcome
    raise AttributeError(f"module 'pysysbench' has no attribute {name!r}")
