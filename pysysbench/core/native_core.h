/* The ground floor of pysysbench's C extension (pysysbench._native): files that need Python
 * and nothing of the other C files (the C layers: native_runtime.h).
 *
 *   rand.c      sysbench's uniform / special / string draws                    (rand.py) */

#ifndef PYSYSBENCH_NATIVE_CORE_H
#define PYSYSBENCH_NATIVE_CORE_H

#ifndef PY_SSIZE_T_CLEAN
#define PY_SSIZE_T_CLEAN
#endif
#include <Python.h>

int rand_init(PyObject *module);

#endif
