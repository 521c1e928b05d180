/* The ground floor of pysysbench's C extension (pysysbench._native): files that need Python
 * and nothing of the other C files (the C layers: native_runtime.h).
 *
 *   rand.c      sysbench's uniform / special / string draws                    (rand.py)
 *   memory.c    glibc's mallopt (the mmap threshold's pin), huge pages for the   (memory.py)
 *               Lua states' heap */

#ifndef PYSYSBENCH_NATIVE_CORE_H
#define PYSYSBENCH_NATIVE_CORE_H

#ifndef PY_SSIZE_T_CLEAN
#define PY_SSIZE_T_CLEAN
#endif
#include <Python.h>

int rand_init(PyObject *module);
/* adds mallopt and heap_hugepages (glibc only; absent elsewhere) */
int memory_init(PyObject *module);

#endif
