/* The workloads layer of pysysbench's C extension (the C layers: native_runtime.h).
 *
 *   workloads/builtin.c   the built-in tests' inner loops (cpu, memory, ...)   (workloads/builtin_core.py)
 *   lua/bridge.c          a Lua state's events as an event source: lua_resume   (lua/state.py) */

#ifndef PYSYSBENCH_NATIVE_WORKLOADS_H
#define PYSYSBENCH_NATIVE_WORKLOADS_H

#ifndef PY_SSIZE_T_CLEAN
#define PY_SSIZE_T_CLEAN
#endif
#include <Python.h>

int builtin_init(PyObject *module);
int bridge_init(PyObject *module);

#endif
