"""The Lua engine: sysbench 1.0.20's Lua scripts, unchanged, as pysysbench workloads.

Embedded LuaJIT through ``lupa`` (runtime.py); one Lua state per benchmark thread
with sysbench's API (sysbench.lua, state.py); a script is a
:class:`~pysysbench.workloads.base.Workload` subclass (script.py) whose statements
go through the ordinary drivers; sysbench's command dispatch (commands.py), script
options (options.py), report hooks (reports.py) and logger (log.py).  docs/lua.md
says how scripts are found, what is supported and where it deviates.
"""

from __future__ import annotations

from .script import PREFIX, LuaWorkload, script_class

__all__ = ["PREFIX", "LuaWorkload", "script_class"]
