/* The runtime layer of pysysbench's C extension: what the files above share, below every user.
 *
 *   native_util.c   the shared helpers (slot offsets, tuples), the base type of event sources and
 *                   the event-limit rule (runtime/limits.py)
 *   handoff.c       the strand running now (handoff.py's `here`), shared by wire and strand
 *   memory.c        glibc's mallopt (the mmap threshold's pin), huge pages for the Lua states' heap
 *
 * The C layers, lowest first (a file includes and calls only its own layer or below; the module
 * init, engine/_native.c, is the top and only wires):  native_core.h (rand.c)  <
 * native_runtime.h  <  native_stats.h  <  native_drivers.h  <  native_workloads.h  <
 * native_engine.h  <  _native.c.  tests/unit/test_layers.py (C_LAYERS) holds the same order.
 * Everything is one shared object, so the calls between files stay direct C calls; the one call
 * that would go up -- a wire resuming the strand that waits on it -- goes through the hand-off,
 * where the strand core registers itself. */

#ifndef PYSYSBENCH_NATIVE_RUNTIME_H
#define PYSYSBENCH_NATIVE_RUNTIME_H

#ifndef PY_SSIZE_T_CLEAN
#define PY_SSIZE_T_CLEAN
#endif
#include <Python.h>
#include <structmember.h>

#define IS_NONE(x) ((x) == NULL || (x) == Py_None)
#define SLOT(obj, offset) (*(PyObject **)((char *)(obj) + (offset)))

/* -------------------------------------------------------------- native_util.c --- */

/* readies EventSourceType: before any file that subclasses it */
int native_util_init(PyObject *module);
/* the offset of a writable __slots__ member `name` of obj's type, or -1 */
Py_ssize_t native_slot_offset(PyObject *obj, PyObject *name);
/* a tuple of n new references; NULL (and every item released) if one is NULL */
PyObject *native_tuple_of(Py_ssize_t n, PyObject **items);
/* a C awaitable's am_send outcome as its iterator's answer (send, __next__): the value
 * yielded (PYGEN_NEXT), or NULL with StopIteration(value) (PYGEN_RETURN: value consumed) or
 * the error already set (PYGEN_ERROR) */
PyObject *native_send_result(PySendResult r, PyObject *value);
/* throw(type[, value[, tb]]) of a C awaitable with nothing inside to throw into: raises it */
PyObject *native_raise_thrown(PyObject *args);

/* An event source: what an EventLoop (engine/event_loop.c) runs instead of steps -- a
 * workload that draws its statements itself (lua/bridge.c: a Lua state's event).  Its
 * objects are of a subtype of EventSourceType (defined in native_util.c, so that a workload's
 * source and the engine's loop meet below both) and start with EVENT_SOURCE_HEAD. */
enum {
    SOURCE_STATEMENT = 0,   /* *stmt and args[0 .. *nargs) (new references) are the next statement to await */
    SOURCE_END = 1,         /* the event has ended: record it */
    SOURCE_STOP = 2,        /* the event asks its thread to stop (not recorded) */
    SOURCE_PYTHON = 3,      /* the rest of the event is the workload's Python: *handover (a new reference) */
};
#define SOURCE_MAX_ARGS 16
typedef struct {
    /* the event's next step: first = 1 when it begins, else after its last statement ended;
     * SOURCE_*, or -1 with an exception */
    int (*next)(PyObject *source, int first, PyObject **stmt, PyObject **args, Py_ssize_t *nargs,
                PyObject **handover);
} EventSourceOps;
#define EVENT_SOURCE_HEAD PyObject_HEAD const EventSourceOps *ops;
typedef struct {
    EVENT_SOURCE_HEAD
} EventSource;
extern PyTypeObject EventSourceType;

/* --------------------------------------------- native_util.c: the event-limit rule --- */

/* Whether a thread may start another event: the rule is stated once, in runtime/limits.py
 * (Limits.admit is its Python twin); every C loop asks it here.  The time part alone, for a
 * loop that runs a batch of events without the GIL (workloads/builtin.c): deadline_ns (0: no
 * time limit) has come at now_ns (time.perf_counter_ns()'s clock, read as the event starts). */
static inline int
limits_time_up(long long deadline_ns, long long now_ns)
{
    return deadline_ns != 0 && now_ns >= deadline_ns;
}
/* the whole rule on a runtime/limits.py Limits (its stop, deadline_ns, budget, warming): how
 * many of n events may start at now_ns, taken from its --events budget; -1 with an exception */
long long limits_admit(PyObject *limits, long long now_ns, long long n);
/* the rule's end alone (the stop, the time limit) at now_ns: 0, 1, or -1 with an exception */
int limits_ended(PyObject *limits, long long now_ns);
/* its deadline_ns (0: no time limit), or -1 with an exception */
long long limits_deadline(PyObject *limits);

/* ------------------------------------------------------------------ handoff.c --- */

int handoff_init(PyObject *module);

/* ------------------------------------------------------------------- memory.c --- */

/* adds mallopt and heap_hugepages (glibc only; absent elsewhere) */
int memory_init(PyObject *module);
/* handoff_setup(here): the object whose `strand` slot says which strand runs now */
int handoff_setup(PyObject *here);
/* here.strand of the hand-off object `here` (a new reference; None when none runs) */
PyObject *handoff_get(PyObject *here);
int handoff_set(PyObject *here, PyObject *value);
/* the strand running now, borrowed (NULL: none, or the hand-off is not set up) */
PyObject *handoff_current(void);
/* the hand-off object given to handoff_setup, borrowed (NULL before) */
PyObject *handoff_here(void);
/* the strand core, registered by engine/strand.c: its type and its resume(response) */
extern PyTypeObject *handoff_strand_type;
extern PyObject *(*handoff_resume)(PyObject *strand, PyObject *response);
/* make the running strand the loop's current asyncio task if it deferred that (a strand
 * handing a response straight to a C awaitable registers itself only when Python code
 * that may ask asyncio for its task is about to run): 0, or -1 with an exception.  NULL
 * until engine/strand.c sets it. */
extern int (*handoff_as_task)(void);
/* 0, or what handoff_as_task returns: call before running code of unknown kind */
static inline int
handoff_ensure_task(void)
{
    return handoff_as_task == NULL ? 0 : handoff_as_task();
}

#endif
