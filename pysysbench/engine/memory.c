/* engine/memory.c: glibc's mallopt for engine/memory.py's pin of the mmap threshold.
 *
 * The Python twin calls the same function through ctypes; ctypes' import was 6 M
 * instructions of every run's start-up (docs/performance.md, "Start-up") for one call.
 * Only where the C library is glibc: elsewhere the symbol is absent and memory.py's
 * ctypes path finds no mallopt either. */

#include "native.h"

#ifdef __GLIBC__
#include <malloc.h>

/* mallopt(param, value): glibc's return value (1 done, 0 refused) */
static PyObject *
memory_mallopt(PyObject *self, PyObject *args)
{
    int param, value;
    if (!PyArg_ParseTuple(args, "ii:mallopt", &param, &value))
        return NULL;
    return PyLong_FromLong(mallopt(param, value));
}

static PyMethodDef memory_methods[] = {
    {"mallopt", memory_mallopt, METH_VARARGS, "glibc's mallopt(param, value)"},
    {NULL, NULL, 0, NULL},
};

int
memory_init(PyObject *module)
{
    return PyModule_AddFunctions(module, memory_methods);
}
#else
int
memory_init(PyObject *module)
{
    return 0;
}
#endif
