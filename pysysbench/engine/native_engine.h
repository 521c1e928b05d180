/* The engine layer of pysysbench's C extension (the C layers: native_runtime.h).
 *
 *   engine/strand.c       the strand's driving half                          (engine/strand.py)
 *   engine/event_loop.c   the time-limited loop of the bundled OLTP events   (engine/worker.py)
 *                         and the --events counter in shared memory          (engine/budget.py) */

#ifndef PYSYSBENCH_NATIVE_ENGINE_H
#define PYSYSBENCH_NATIVE_ENGINE_H

#ifndef PY_SSIZE_T_CLEAN
#define PY_SSIZE_T_CLEAN
#endif
#include <Python.h>

/* ------------------------------------------------------------ engine/strand.c --- */

/* Give `value` to an awaitable that offered itself.  PYGEN_NEXT: it waits again, *yielded is
 * what it yields.  PYGEN_RETURN: it has ended (returned or raised) and keeps that outcome for
 * the next send() the Python frames above it make; *yielded is left NULL.  Never PYGEN_ERROR. */
typedef PySendResult (*strand_inner_step)(PyObject *inner, PyObject *value, PyObject **yielded);
/* an awaitable that yields many times inside one await offers itself to the running strand,
 * which may then give it the wire's responses directly */
void strand_offer(PyObject *inner, strand_inner_step step);
int strand_init(PyObject *module);

/* ------------------------------------------------------- engine/event_loop.c --- */

int event_loop_init(PyObject *module);

#endif
