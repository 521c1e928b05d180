/* The C interface _wirescan.c's strands give other extensions (_hotpath.c's EventLoop):
 * an awaitable that yields many times inside one await offers itself to the running
 * strand, which may then give it the wire's responses directly (see strand_offer). */

#ifndef PYSYSBENCH_STRAND_API_H
#define PYSYSBENCH_STRAND_API_H

#include <Python.h>

#define STRAND_API_CAPSULE "pysysbench._wirescan._strand_api"
#define STRAND_API_VERSION 1

/* Give `value` to the awaitable.  PYGEN_NEXT: it waits again, *yielded is what it yields.
 * PYGEN_RETURN: it has ended (returned or raised) and keeps that outcome for the next send()
 * the Python frames above it make; *yielded is left NULL.  Never PYGEN_ERROR. */
typedef PySendResult (*strand_inner_step)(PyObject *inner, PyObject *value, PyObject **yielded);

typedef struct {
    int version;
    void (*offer)(PyObject *inner, strand_inner_step step);
} StrandApi;

#endif
