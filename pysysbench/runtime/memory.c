/* memory.c: glibc's mallopt for memory.py's pin of the mmap threshold, and
 * transparent huge pages for the heap that holds many Lua states (memory.py's huge_heap,
 * which has no twin: without the extension the heap keeps 4 KiB pages).
 *
 * The Python twin calls the same function through ctypes; ctypes' import was 6 M
 * instructions of every run's start-up (bench/journal/2026-12-02.md, "Start-up") for one call.
 * Only where the C library is glibc: elsewhere the symbol is absent and memory.py's
 * ctypes path finds no mallopt either. */

#include "native_runtime.h"

#ifdef __GLIBC__
#include <errno.h>
#include <malloc.h>
#include <sys/mman.h>
#include <unistd.h>

/* mallopt(param, value): glibc's return value (1 done, 0 refused) */
static PyObject *
memory_mallopt(PyObject *Py_UNUSED(self), PyObject *args)
{
    int param, value;
    if (!PyArg_ParseTuple(args, "ii:mallopt", &param, &value))
        return NULL;
    return PyLong_FromLong(mallopt(param, value));
}

/* The heap's end up to which MADV_HUGEPAGE was asked (NULL: not yet) */
static uintptr_t heap_advised;
static long heap_advised_bytes;

/* heap_hugepages(pad) -> bytes of the heap advised so far, or -1 (the kernel refused: no
 * transparent huge pages).  The first call sets glibc's M_TOP_PAD to pad, so that the heap
 * grows in steps of at least pad bytes; every call asks for transparent huge pages
 * (madvise MADV_HUGEPAGE) on what the heap grew by since the last one.  sbrk(0) is glibc's
 * cached break: no system call unless the heap grew. */
static PyObject *
memory_heap_hugepages(PyObject *Py_UNUSED(self), PyObject *args)
{
    long pad;
    uintptr_t end, page = (uintptr_t)sysconf(_SC_PAGESIZE);
    if (!PyArg_ParseTuple(args, "l:heap_hugepages", &pad))
        return NULL;
    if (heap_advised_bytes < 0)
        return PyLong_FromLong(-1);
    end = (uintptr_t)sbrk(0) & ~(page - 1);
    if (heap_advised == 0) {
        if (pad > 0)
            mallopt(M_TOP_PAD, (int)pad);
        heap_advised = end;
        return PyLong_FromLong(0);
    }
    if (end > heap_advised) {
        if (madvise((void *)heap_advised, end - heap_advised, MADV_HUGEPAGE) != 0) {
            heap_advised_bytes = -1;
            return PyLong_FromLong(-1);
        }
        heap_advised_bytes += (long)(end - heap_advised);
        heap_advised = end;
    }
    return PyLong_FromLong(heap_advised_bytes);
}

static PyMethodDef memory_methods[] = {
    {"mallopt", memory_mallopt, METH_VARARGS, "glibc's mallopt(param, value)"},
    {"heap_hugepages", memory_heap_hugepages, METH_VARARGS,
     "heap_hugepages(pad): transparent huge pages for what the heap grew by since the last call"},
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
