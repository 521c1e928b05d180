/* The engine layer of pysysbench's C extension (the C layers: native_runtime.h).
 *
 *   engine/strand.c       the strand's driving half                          (engine/strand.py)
 *   engine/event_loop.c   the time-limited loop of the bundled OLTP events   (engine/worker.py)
 *                         and the --events counter in shared memory          (engine/budget.py)
 *   engine/arrivals.c     rate mode's Poisson arrivals                       (engine/worker.py) */

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

/* --------------------------------------------------------- engine/arrivals.c --- */

/* a thread's place in rate mode's arrivals: what strand.c parks a strand on */
extern PyTypeObject TicketType;
/* the next arrival for the ticket's thread at now: 1 (*stamp, its time), 0 (none due: the
 * current strand is parked on the ticket until resumed with True, an arrival, or None, the
 * end), 2 (no more: the end), -1 (an exception).  Ends the ticket's previous event.  The caller
 * has asked the rule (limits_admit) at now. */
int ticket_take(PyObject *ticket, long long now, long long *stamp);
/* the arrival handed to the ticket last (after a resume with True) */
long long ticket_stamp(PyObject *ticket);
/* the ticket's thread holds no arrival (it ended its event and leaves the loop) */
void ticket_idle(PyObject *ticket);
/* a throw or close reached the ticket's waiter: it waits no longer */
void ticket_forget(PyObject *ticket);
int arrivals_init(PyObject *module);

#endif
