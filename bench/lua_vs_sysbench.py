#!/usr/bin/env python3
"""Side-by-side on the same .lua file: the real sysbench 1.0.20 against pysysbench's Lua engine.

Both tools run the sysbench package's own scripts (/usr/share/sysbench/oltp_point_select.lua
and oltp_read_write.lua; pysysbench with --lua-bundled=on), alternating, several rounds per
case, as bench/compare_sysbench.py does for the native workloads (same tables, options,
measurements: median QPS and its ratio, client CPU microseconds per query, peak client RSS
of the process tree, per-round ratios).  The issue's targets: QPS >= 0.8 at 8 threads and
>= 1.0 at 1000, CPU per query <= 1.5x at 8 threads, RSS with 1000 threads <= 400 MB.

    .venv/bin/python bench/lua_vs_sysbench.py                       # 8 cases
    .venv/bin/python bench/lua_vs_sysbench.py --rounds=1 --time=5 --cases=point_select:8:mysql

Run it on a quiet machine: timings on the shared 2-core machine are noisy.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import compare_sysbench  # noqa: E402  (the bench directory is not a package)

if __name__ == "__main__":
    sys.exit(compare_sysbench.main(lua=True, workloads=("point_select", "read_write"), doc=__doc__))
