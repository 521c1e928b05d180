"""Build hook for the optional C extension (everything else is in pyproject.toml).

``pysysbench._native`` holds the C twins of the hot path -- the random draws, the
latency recorder, the event loop of the bundled OLTP events, the lean wire's core,
each protocol's scanner and requests, the strand's core -- built from one source per
layer, each beside the Python twin it stands for (pysysbench/runtime/native_runtime.h lists the
C layers and their headers; _native.c, the module init, only wires).
When no compiler is available the build goes on and pysysbench runs the Python twins,
only slower; ``PYSYSBENCH_NATIVE=off`` does the same where it is built
(pysysbench/runtime/native.py decides).
"""

from setuptools import Extension, setup

# -ffp-contract=off: no fused multiply-add, so the draws round exactly as Python's floats;
# -fvisibility=hidden: the pieces' shared functions stay inside the extension;
# -flto: calls between the pieces are inlined as within one file (the hot path's cost per
# event is that of one source file, bench/replay_wire.py under callgrind)
FLAGS = ["-O2", "-ffp-contract=off", "-fvisibility=hidden", "-flto"]
LINK_FLAGS = ["-flto", "-O2"]

SOURCES = [
    "pysysbench/engine/_native.c",
    "pysysbench/runtime/native_util.c",
    "pysysbench/runtime/handoff.c",
    "pysysbench/core/rand.c",
    "pysysbench/stats/recorder.c",
    "pysysbench/drivers/wire.c",
    "pysysbench/drivers/mysql/wire.c",
    "pysysbench/drivers/pgsql/wire.c",
    "pysysbench/engine/strand.c",
    "pysysbench/engine/event_loop.c",
    "pysysbench/engine/arrivals.c",
    "pysysbench/lua/bridge.c",
    "pysysbench/runtime/memory.c",
    "pysysbench/workloads/builtin.c",
]
# the private interface between the pieces: one header per C layer, lowest first
HEADERS = ["pysysbench/core/native_core.h", "pysysbench/runtime/native_runtime.h", "pysysbench/stats/native_stats.h",
           "pysysbench/drivers/native_drivers.h", "pysysbench/workloads/native_workloads.h", "pysysbench/engine/native_engine.h"]

# each header lives in its layer's folder; the pieces include it by name
INCLUDE_DIRS = sorted({h.rpartition("/")[0] for h in HEADERS})

setup(ext_modules=[Extension("pysysbench._native", SOURCES, include_dirs=INCLUDE_DIRS, depends=HEADERS,
                             optional=True, extra_compile_args=FLAGS, extra_link_args=LINK_FLAGS)])
