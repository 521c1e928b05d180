"""sysbench 1.0.20's built-in tests ``cpu``, ``memory``, ``threads`` and ``mutex`` as
pysysbench workloads (``fileio`` is in workloads/fileio.py).

Each test is a :class:`BuiltinTest`: sysbench's options (help text byte for byte:
``help_text``), its checks and messages (``configure``), the lines it prints before
the threads start (``run_intro``), its own reports (``reports``: "CPU speed:",
"Total operations: ...", the memory test's "[ 1s ] N MiB/sec" lines) and its
events, whose inner loop is C (workloads/builtin.c, Python twin builtin_core.py).
The engine runs them as any workload -- threads, --time/--events, --rate, report
intervals, checkpoints, histograms, result files -- with two differences a test
declares: ``batched`` (in the usual run the worker hands a thread's events to
the C in batches, engine/worker.py ``_batch_loop``, which runs them with the GIL
released and records every latency) and ``os_threads`` (each benchmark thread is
an OS thread, as with a blocking driver, and the run stays in one process, where
the test's shared state lives).  No connection is opened (``connects = False``).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from typing import Any

from ..core.errors import ConfigError, UsageError
from ..core.options import Option, OptType
from . import builtin_core as core
from .base import Env, ThreadContext, Workload, register

Say = Callable[[str], None]
UNITS = ("B", "KiB", "MiB", "GiB", "TiB", "PiB")


def sysbench_size(raw: Any) -> int | None:
    """sysbench's SIZE option value (``4K``, ``1G``, ``100``) in bytes, None if it is none."""
    m = re.fullmatch(r"\s*(\d+)\s*([kKmMgGtT]?)\s*", str(raw))
    if not m:
        return None
    return int(m.group(1)) << (10 * " kmgt".index(m.group(2).lower() or " "))


def print_size(value: float) -> str:
    """sysbench's sb_print_value_size without the B suffix's base: ``8MiB``, ``4.001KiB``."""
    i = 0
    while i < len(UNITS) - 1 and value >= 1024:
        value /= 1024
        i += 1
    return f"{value:.5g}{UNITS[i]}"


def timestamp(time_s: float) -> str:
    """sysbench's log_timestamp() prefix: ``[ 3s ] ``."""
    return "[ %.0fs ] " % time_s


def thread_seed(values: Any, tid: int) -> int:
    seed = values.rand_seed
    if seed:
        return (seed * 1_000_003 + tid) & core.M64
    return int.from_bytes(os.urandom(8), "little")


class Reports:
    """A built-in test's report hooks (the CLI's ``workload.reports``: True = printed)."""

    def __init__(self, test: BuiltinTest):
        self.test = test
        self.say: Say = print

    def attach(self, say: Say, summary_block: Callable[..., str]) -> None:
        """The CLI's printer and its sysbench summary renderer (output/text.py, a layer above)."""
        self.say = say
        self.test.summary_block = summary_block

    def sql(self, counts: Any) -> bool:
        return False  # sysbench's generic reports: events per second, no "SQL statistics"

    def intermediate(self, st: Any) -> bool:
        return self.test.report_intermediate(st, self.say)

    def checkpoint(self, summary: Any) -> bool:
        self.test.report_cumulative(summary, self.say)
        return True

    def cumulative(self, summary: Any) -> bool:
        self.test.report_cumulative(summary, self.say)
        self.test.finish()
        return True

    def close(self) -> None:
        pass


class BuiltinTest(Workload):
    """What the four (five with fileio) built-in tests share."""

    kind = core.CPU
    connects = False
    batched = True  # engine/worker.py: _batch_loop
    os_threads = True  # an OS thread per benchmark thread, one process
    own_event_limit = False  # True: --events does not apply (the test counts its own)
    logs_messages = True  # prepare/cleanup lines are sysbench log lines (the sysbench face: --verbosity applies)
    measures_the_client = True  # the machine is the subject: a busy client is the point, not a warning
    help_text = ""
    summary_block: Callable[..., str] | None = None  # output/text.py's, given by the CLI (Reports.attach)

    def __init__(self, values, driver):
        super().__init__(values, driver)
        self.reports = Reports(self)
        self.shared: Any = None

    # --- sysbench's commands -----------------------------------------------------------

    async def prepare(self, env: Env) -> None:
        raise UsageError(f"'{self.name}' test does not implement the 'prepare' command.")

    async def cleanup(self, env: Env) -> None:
        raise UsageError(f"'{self.name}' test does not implement the 'cleanup' command.")

    async def prewarm(self, env: Env) -> None:
        raise UsageError(f"'{self.name}' test does not implement the 'prewarm' command.")

    # --- the run -------------------------------------------------------------------------

    def params(self) -> dict[str, int]:
        raise NotImplementedError

    def run_intro(self, say: Say) -> None:
        """The lines sysbench's test prints before "Initializing worker threads..."
        (its print_mode), and the test's shared state."""
        self.shared = core.make(self.kind, self.params())

    async def thread_init(self, ctx: ThreadContext) -> None:
        if self.shared is None:  # a run not started by the CLI (a library call)
            self.shared = core.make(self.kind, self.params())
        ctx.state["runner"] = self.shared.runner(ctx.tid, thread_seed(self.values, ctx.tid))

    async def event(self, ctx: ThreadContext) -> Any:
        """One event (rate mode and the other general runs); True: the test has no more."""
        try:
            return ctx.state["runner"].step()
        except OSError as exc:
            raise self.io_error(exc) from None

    def io_error(self, exc: OSError) -> Exception:
        from ..core.errors import RunAborted

        return RunAborted(f"{exc.strerror} errno = {exc.errno} ({os.strerror(exc.errno)})")

    def finish(self) -> None:
        """After the final report: release what the run held (fileio: its files)."""

    def report_intermediate(self, st: Any, say: Say) -> bool:
        return False  # the generic "[ 1s ] thds: 1 eps: ... lat (ms,95%): ..." line

    def report_cumulative(self, s: Any, say: Say) -> None:
        if self.summary_block is not None:
            say(self.summary_block(s, False).rstrip("\n") + "\n")


@register
class Cpu(BuiltinTest):
    """sysbench's CPU test: each event counts the primes below --cpu-max-prime by trial division."""

    name = "cpu"
    kind = core.CPU
    options = [Option("cpu-max-prime", OptType.INT, 10000, "upper limit for primes generator", "cpu options")]
    help_text = "cpu options:\n  --cpu-max-prime=N upper limit for primes generator [10000]\n"

    def configure(self) -> None:
        self.max_prime = self.values.cpu_max_prime
        if self.max_prime <= 0:
            raise ConfigError(f"Invalid value of cpu-max-prime: {self.max_prime}.")

    def params(self) -> dict[str, int]:
        return {"max_prime": self.max_prime}

    def run_intro(self, say: Say) -> None:
        say(f"Prime numbers limit: {self.max_prime}\n")
        super().run_intro(say)

    def report_cumulative(self, s: Any, say: Say) -> None:
        say("CPU speed:")
        say(f"    events per second: {s.events / s.elapsed_s if s.elapsed_s else 0.0:8.2f}")
        super().report_cumulative(s, say)


MEMORY_HELP = """memory options:
  --memory-block-size=SIZE    size of memory block for test [1K]
  --memory-total-size=SIZE    total size of data to transfer [100G]
  --memory-scope=STRING       memory access scope {global,local} [global]
  --memory-hugetlb[=on|off]   allocate memory from HugeTLB pool [off]
  --memory-oper=STRING        type of memory operations {read, write, none} [write]
  --memory-access-mode=STRING memory access mode {seq,rnd} [seq]
"""


@register
class Memory(BuiltinTest):
    """sysbench's memory test: each event reads or writes one block, until --memory-total-size is transferred."""

    name = "memory"
    kind = core.MEMORY
    own_event_limit = True  # sysbench: "use our own limit on the number of events"
    G = "memory options"
    options = [
        Option("memory-block-size", OptType.STRING, "1K", "size of memory block for test", G),
        Option("memory-total-size", OptType.STRING, "100G", "total size of data to transfer", G),
        Option("memory-scope", OptType.STRING, "global", "memory access scope {global,local}", G),
        Option("memory-hugetlb", OptType.BOOL, False, "allocate memory from HugeTLB pool", G),
        Option("memory-oper", OptType.STRING, "write", "type of memory operations {read, write, none}", G),
        Option("memory-access-mode", OptType.STRING, "seq", "memory access mode {seq,rnd}", G),
    ]
    help_text = MEMORY_HELP
    OPERS = {"none": core.MEM_NONE, "read": core.MEM_READ, "write": core.MEM_WRITE}

    def configure(self) -> None:
        v = self.values
        raw = v.memory_block_size
        block = sysbench_size(raw)
        if block is None or block < core.WORD or block & (block - 1):
            raise ConfigError(f"Invalid value for memory-block-size: {raw}")
        total = sysbench_size(v.memory_total_size)
        if total is None:
            raise ConfigError(f"Invalid value for memory-total-size: {v.memory_total_size}")
        if v.memory_scope not in ("global", "local"):
            raise ConfigError(f"Invalid value for memory-scope: {v.memory_scope}")
        if v.memory_oper not in self.OPERS:
            raise ConfigError(f"Invalid value for memory-oper: {v.memory_oper}")
        if v.memory_access_mode not in ("seq", "rnd"):
            raise ConfigError(f"Invalid value for memory-access-mode: {v.memory_access_mode}")
        if v.memory_hugetlb:
            raise ConfigError("--memory-hugetlb is not supported by pysysbench (the blocks are ordinary memory)")
        self.block, self.total = block, total
        self.last_bytes = 0

    def params(self) -> dict[str, int]:
        v = self.values
        return {
            "block_size": self.block,
            "total_size": self.total,
            "local": v.memory_scope == "local",
            "oper": self.OPERS[v.memory_oper],
            "rnd": v.memory_access_mode == "rnd",
            "threads": v.threads,
        }

    def run_intro(self, say: Say) -> None:
        v = self.values
        say("Running memory speed test with the following options:")
        say(f"  block size: {self.block // 1024}KiB")
        say(f"  total size: {self.total // (1024 * 1024)}MiB")
        say(f"  operation: {v.memory_oper}")
        say(f"  scope: {v.memory_scope}")
        if v.memory_access_mode == "rnd":
            say("  access mode: rnd")  # not printed by 1.0.20 for seq
        say("")
        super().run_intro(say)

    def _bytes(self, events: int) -> int:
        return events * self.block

    def report_intermediate(self, st: Any, say: Say) -> bool:
        done = self._bytes(st.events)
        say(f"{timestamp(st.time_s)}{done / 1048576 / st.interval_s if st.interval_s else 0.0:4.2f} MiB/sec")
        return True

    def report_cumulative(self, s: Any, say: Say) -> None:
        secs = s.elapsed_s or float("nan")
        say(f"Total operations: {s.events} ({s.events / secs:8.2f} per second)\n")
        if self.values.memory_oper != "none":
            mib = self._bytes(s.events) / 1048576
            say(f"{mib:4.2f} MiB transferred ({mib / secs:4.2f} MiB/sec)\n")
        super().report_cumulative(s, say)


@register
class Threads(BuiltinTest):
    """sysbench's threads test: each event takes the thread's lock and yields, --thread-yields times."""

    name = "threads"
    kind = core.THREADS
    G = "threads options"
    options = [
        Option("thread-yields", OptType.INT, 1000, "number of yields to do per request", G),
        Option("thread-locks", OptType.INT, 8, "number of locks per thread", G),
    ]
    help_text = (
        "threads options:\n  --thread-yields=N number of yields to do per request [1000]\n"
        "  --thread-locks=N  number of locks per thread [8]\n"
    )

    def configure(self) -> None:
        v = self.values
        if v.thread_locks <= 0:
            raise ConfigError(f"Invalid value of thread-locks: {v.thread_locks}")
        if v.thread_yields < 0:
            raise ConfigError(f"Invalid value of thread-yields: {v.thread_yields}")

    def params(self) -> dict[str, int]:
        return {"yields": self.values.thread_yields, "locks": self.values.thread_locks}


@register
class Mutex(BuiltinTest):
    """sysbench's mutex test: one event per thread, --mutex-locks random locks of --mutex-num mutexes."""

    name = "mutex"
    kind = core.MUTEX
    own_event_limit = True  # one event per thread
    G = "mutex options"
    options = [
        Option("mutex-num", OptType.INT, 4096, "total size of mutex array", G),
        Option("mutex-locks", OptType.INT, 50000, "number of mutex locks to do per thread", G),
        Option("mutex-loops", OptType.INT, 10000, "number of empty loops to do outside mutex lock", G),
    ]
    help_text = (
        "mutex options:\n  --mutex-num=N   total size of mutex array [4096]\n"
        "  --mutex-locks=N number of mutex locks to do per thread [50000]\n"
        "  --mutex-loops=N number of empty loops to do outside mutex lock [10000]\n"
    )

    def configure(self) -> None:
        v = self.values
        if v.mutex_num <= 0:
            raise ConfigError(f"Invalid value of mutex-num: {v.mutex_num}")
        if v.mutex_locks < 0 or v.mutex_loops < 0:
            raise ConfigError("Invalid value of mutex-locks or mutex-loops: must be >= 0")

    def params(self) -> dict[str, int]:
        v = self.values
        return {"num": v.mutex_num, "locks": v.mutex_locks, "loops": v.mutex_loops}
