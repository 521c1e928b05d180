/* Rate mode's arrivals in C: the twin of engine/worker.py's Python generator (Worker._generate
 * and its SharedQueue; tests/unit/test_arrivals.py holds both to the same queue).
 *
 * Arrivals(rate, seed, limits, on_full, slots): an open-loop Poisson stream of `rate` events
 * per second, generated as it is needed rather than by a task that sleeps between arrivals:
 * whoever looks (a thread asking for an event, the timer, the reporter reading the queue's
 * length) first puts every arrival whose time has come into the queue, each stamped with the
 * time it was due, so the time an event waits for a free thread is part of its latency.  A
 * thread asks through its Ticket: it takes the oldest arrival, or, with none due, parks its
 * strand on the ticket (engine/strand.c resumes a strand parked on a ticket as on a wire) and
 * the timer (a timerfd the event loop watches, armed at the next arrival's nanosecond) hands
 * it the next one.  Python's asyncio.sleep could not wait less than the loop's millisecond:
 * a thread woke, found nothing due and slept again many times per event.
 *
 * The queue holds at most `slots` arrivals (sysbench's ring): one more ends the stream and
 * calls on_full().  The stream ends with the run's rule (runtime/limits.py: the stop, the
 * time limit) and with stop(); a ticket then answers None.  inflight counts the tickets that
 * hold an arrival (the events running now: the report's concurrency). */

#include "native_runtime.h"
#include "native_engine.h"
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#define IDLE_CHECK_NS 10000000LL   /* with no thread waiting, the queue is still filled (and its
                                    * overflow found) every 10 ms */

typedef struct Arrivals Arrivals;

typedef struct {
    PyObject_HEAD
    Arrivals *arr;
    PyObject *strand;      /* the strand parked on this ticket, or None */
    long long stamp;       /* the arrival handed to it */
    int queued;            /* in arr's waiters */
    int waiting;           /* awaited from Python: it yielded itself and is not resumed yet */
    int busy;              /* holds an arrival: counted in arr->inflight */
} Ticket;

struct Arrivals {
    PyObject_HEAD
    long long *ring;
    Py_ssize_t cap, head, count, slots;
    Ticket **waiters;      /* strong references, FIFO */
    Py_ssize_t wcap, whead, wcount;
    uint64_t rng;
    double mean_ns;
    long long due;         /* the next arrival's time */
    long long armed;       /* the timer's time (0: disarmed) */
    int fd;
    int ended;             /* no arrival will come: the stop, the time limit, a full queue */
    PyObject *limits, *on_full;
    long long inflight;
};

static PyTypeObject ArrivalsType;
PyTypeObject TicketType;

static long long
now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);     /* time.perf_counter_ns()'s clock on Linux */
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* an exponential gap (mean 1) from splitmix64 */
static double
arr_expo(Arrivals *a)
{
    uint64_t z = (a->rng += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    z ^= z >> 31;
    return -log1p(-(double)(z >> 11) * (1.0 / 9007199254740992.0));
}

static int
arr_push(Arrivals *a, long long stamp)
{
    if (a->count == a->cap) {                    /* grow (up to slots): the ring unrolled */
        Py_ssize_t cap = a->cap * 2 > a->slots ? a->slots : a->cap * 2;
        long long *ring = PyMem_Malloc(cap * sizeof(long long));
        if (ring == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        for (Py_ssize_t i = 0; i < a->count; i++)
            ring[i] = a->ring[(a->head + i) % a->cap];
        PyMem_Free(a->ring);
        a->ring = ring;
        a->cap = cap;
        a->head = 0;
    }
    a->ring[(a->head + a->count) % a->cap] = stamp;
    a->count++;
    return 0;
}

static long long
arr_pop(Arrivals *a)
{
    long long stamp = a->ring[a->head];
    a->head = (a->head + 1) % a->cap;
    a->count--;
    return stamp;
}

/* the end of the stream; the waiting threads are answered by arr_dispatch */
static void
arr_end(Arrivals *a)
{
    a->ended = 1;
}

/* every arrival due by now into the queue (the rule asked once, then its time limit per
 * arrival); `asked`: the caller has just asked the rule at now (a thread's loop).  0, or -1
 * with an exception */
static int
arr_generate(Arrivals *a, long long now, int asked)
{
    long long deadline = 0;
    int asked_here = 0;
    while (!a->ended && a->due <= now) {
        int ended;
        if (!asked_here) {
            asked_here = 1;
            ended = limits_ended(a->limits, a->due);
            if (ended == 0 && (deadline = limits_deadline(a->limits)) == -1 && PyErr_Occurred())
                ended = -1;
        }
        else
            ended = limits_time_up(deadline, a->due);
        if (ended < 0)
            return -1;
        if (ended) {
            arr_end(a);
            break;
        }
        if (a->count >= a->slots) {              /* the threads cannot keep up: the run's error */
            PyObject *r;
            arr_end(a);
            r = PyObject_CallNoArgs(a->on_full);
            if (r == NULL)
                return -1;
            Py_DECREF(r);
            break;
        }
        if (arr_push(a, a->due) < 0)
            return -1;
        a->due += (long long)(arr_expo(a) * a->mean_ns) + 1;
    }
    if (!a->ended && !asked) {                   /* the time limit between two arrivals */
        int ended = limits_ended(a->limits, now);
        if (ended < 0)
            return -1;
        if (ended)
            arr_end(a);
    }
    return 0;
}

/* set the timer: the next arrival while a thread waits, else a check every IDLE_CHECK_NS;
 * never past the time limit; once the stream has ended, at once while a thread waits (fire
 * answers it: nothing is resumed from inside a take or a stop), else off.  0, or -1 with an
 * exception */
static int
arr_arm(Arrivals *a, long long now)
{
    long long at = a->wcount > 0 ? 1 : 0, deadline;     /* ended: at once, to answer the waiting */
    struct itimerspec its = {{0, 0}, {0, 0}};
    if (!a->ended) {
        at = a->wcount > 0 || a->due > now + IDLE_CHECK_NS ? a->due : now + IDLE_CHECK_NS;
        if ((deadline = limits_deadline(a->limits)) < 0 && PyErr_Occurred())
            return -1;
        if (limits_time_up(deadline, at))      /* the time limit comes first: wake for it */
            at = deadline;
        if (at <= 0)
            at = 1;
    }
    if (at == a->armed)
        return 0;
    its.it_value.tv_sec = at / 1000000000LL;
    its.it_value.tv_nsec = at % 1000000000LL;
    if (timerfd_settime(a->fd, TFD_TIMER_ABSTIME, &its, NULL) < 0) {
        PyErr_SetFromErrno(PyExc_OSError);
        return -1;
    }
    a->armed = at;
    return 0;
}

static void
ticket_hold(Ticket *t, long long stamp)
{
    t->stamp = stamp;
    t->busy = 1;
    t->arr->inflight++;
}

/* hand the queued arrivals (or, once the stream has ended, the end) to the waiting tickets'
 * strands, oldest first: 0, or -1 with an exception */
static int
arr_dispatch(Arrivals *a)
{
    while (a->wcount > 0 && (a->count > 0 || a->ended)) {
        Ticket *t = a->waiters[a->whead];        /* our reference moves to t */
        PyObject *strand = t->strand, *signal = Py_None, *r;
        a->whead = (a->whead + 1) % a->wcap;
        a->wcount--;
        t->queued = 0;
        if (strand == Py_None) {                 /* its strand was cancelled */
            Py_DECREF(t);
            continue;
        }
        Py_INCREF(Py_None);
        t->strand = Py_None;                     /* our reference to strand moves to the variable */
        if (a->count > 0) {
            ticket_hold(t, arr_pop(a));
            signal = Py_True;
        }
        r = handoff_strand_type != NULL && PyObject_TypeCheck(strand, handoff_strand_type)
            ? handoff_resume(strand, signal) : PyObject_CallMethod(strand, "resume", "O", signal);
        Py_DECREF(strand);
        Py_DECREF(t);
        if (r == NULL)
            return -1;
        Py_DECREF(r);
    }
    return 0;
}

static int
arr_wait(Arrivals *a, Ticket *t)
{
    if (t->queued)
        return 0;
    if (a->wcount == a->wcap) {
        Py_ssize_t cap = a->wcap ? a->wcap * 2 : 8;
        Ticket **w = PyMem_Malloc(cap * sizeof(Ticket *));
        if (w == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        for (Py_ssize_t i = 0; i < a->wcount; i++)
            w[i] = a->waiters[(a->whead + i) % a->wcap];
        PyMem_Free(a->waiters);
        a->waiters = w;
        a->wcap = cap;
        a->whead = 0;
    }
    Py_INCREF(t);
    a->waiters[(a->whead + a->wcount) % a->wcap] = t;
    a->wcount++;
    t->queued = 1;
    return 0;
}

/* ------------------------------------------------------------- the C side --- */

int
ticket_take(PyObject *ticket, long long now, long long *stamp)
{
    Ticket *t = (Ticket *)ticket;
    Arrivals *a = t->arr;
    PyObject *strand;
    ticket_idle(ticket);
    if (arr_generate(a, now, 1) < 0)
        return -1;
    if (a->count > 0) {
        ticket_hold(t, arr_pop(a));
        *stamp = t->stamp;
        return 1;
    }
    if (a->ended)
        return arr_arm(a, now) < 0 ? -1 : 2;
    strand = handoff_current();
    if (strand == NULL || strand == Py_None) {
        PyErr_SetString(PyExc_RuntimeError, "a rate-mode ticket is awaited outside a strand");
        return -1;
    }
    Py_INCREF(strand);
    Py_XSETREF(t->strand, strand);
    if (arr_wait(a, t) < 0 || arr_arm(a, now) < 0)
        return -1;
    return 0;
}

void
ticket_idle(PyObject *ticket)
{
    Ticket *t = (Ticket *)ticket;
    if (t->busy) {
        t->busy = 0;
        t->arr->inflight--;
    }
}

long long
ticket_stamp(PyObject *ticket)
{
    return ((Ticket *)ticket)->stamp;
}

/* a throw or close while parked: no longer waiting (a dispatch skips it) */
void
ticket_forget(PyObject *ticket)
{
    Ticket *t = (Ticket *)ticket;
    t->waiting = 0;
    Py_INCREF(Py_None);
    Py_XSETREF(t->strand, Py_None);
}

/* ------------------------------------------------------------ the Python side --- */

static PyObject *
arr_new(PyTypeObject *type, PyObject *args, PyObject *Py_UNUSED(kw))
{
    double rate;
    unsigned long long seed;
    long long slots = 131072;
    PyObject *limits, *on_full;
    Arrivals *a;
    if (!PyArg_ParseTuple(args, "dKOO|L", &rate, &seed, &limits, &on_full, &slots))
        return NULL;
    if (!(rate > 0) || slots < 1) {
        PyErr_SetString(PyExc_ValueError, "Arrivals: the rate and the slots must be positive");
        return NULL;
    }
    a = (Arrivals *)type->tp_alloc(type, 0);
    if (a == NULL)
        return NULL;
    a->fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    if (a->fd < 0) {
        PyErr_SetFromErrno(PyExc_OSError);
        Py_DECREF(a);
        return NULL;
    }
    a->slots = slots;
    a->cap = slots < 64 ? slots : 64;
    a->ring = PyMem_Malloc(a->cap * sizeof(long long));
    if (a->ring == NULL) {
        Py_DECREF(a);
        return PyErr_NoMemory();
    }
    a->rng = seed ? seed : (uint64_t)now_ns() ^ ((uint64_t)getpid() << 32);
    a->mean_ns = 1e9 / rate;
    a->due = now_ns();
    Py_INCREF(limits);
    a->limits = limits;
    Py_INCREF(on_full);
    a->on_full = on_full;
    return (PyObject *)a;
}

/* fire(): the timer's reader callback: fill the queue, hand arrivals to the waiting threads, re-arm */
static PyObject *
arr_fire(Arrivals *a, PyObject *Py_UNUSED(unused))
{
    uint64_t expirations;
    long long now = now_ns();
    if (a->fd >= 0 && read(a->fd, &expirations, sizeof expirations) < 0 && errno != EAGAIN) {
        PyErr_SetFromErrno(PyExc_OSError);
        return NULL;
    }
    a->armed = 0;                                /* a fired timer is off */
    if (arr_generate(a, now, 0) < 0 || arr_dispatch(a) < 0 || (a->fd >= 0 && arr_arm(a, now_ns()) < 0))
        return NULL;
    Py_RETURN_NONE;
}

/* stop(): no more arrivals; the waiting threads are answered None (by fire, at once) */
static PyObject *
arr_stop(Arrivals *a, PyObject *Py_UNUSED(unused))
{
    arr_end(a);
    if (a->fd >= 0 && arr_arm(a, now_ns()) < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *
arr_close(Arrivals *a, PyObject *Py_UNUSED(unused))
{
    arr_end(a);
    if (a->fd >= 0) {
        close(a->fd);
        a->fd = -1;
    }
    Py_RETURN_NONE;
}

static PyObject *
arr_fileno(Arrivals *a, PyObject *Py_UNUSED(unused))
{
    return PyLong_FromLong(a->fd);
}

static PyObject *
arr_ticket(Arrivals *a, PyObject *Py_UNUSED(unused))
{
    Ticket *t = PyObject_GC_New(Ticket, &TicketType);
    if (t == NULL)
        return NULL;
    Py_INCREF(a);
    t->arr = a;
    Py_INCREF(Py_None);
    t->strand = Py_None;
    t->stamp = 0;
    t->queued = t->waiting = t->busy = 0;
    PyObject_GC_Track(t);
    return (PyObject *)t;
}

static PyObject *
arr_queue_length(Arrivals *a, void *Py_UNUSED(closure))
{
    long long now = now_ns();
    if (arr_generate(a, now, 0) < 0 || (a->fd >= 0 && arr_arm(a, now) < 0))
        return NULL;
    return PyLong_FromSsize_t(a->count);
}

static int
arr_traverse(Arrivals *a, visitproc visit, void *arg)
{
    for (Py_ssize_t i = 0; i < a->wcount; i++)
        Py_VISIT(a->waiters[(a->whead + i) % a->wcap]);
    Py_VISIT(a->limits);
    Py_VISIT(a->on_full);
    return 0;
}

static int
arr_clear(Arrivals *a)
{
    while (a->wcount > 0) {
        Ticket *t = a->waiters[a->whead];
        a->whead = (a->whead + 1) % a->wcap;
        a->wcount--;
        t->queued = 0;
        Py_DECREF(t);
    }
    Py_CLEAR(a->limits);
    Py_CLEAR(a->on_full);
    return 0;
}

static void
arr_dealloc(Arrivals *a)
{
    PyObject_GC_UnTrack(a);
    arr_clear(a);
    if (a->fd >= 0)
        close(a->fd);
    PyMem_Free(a->ring);
    PyMem_Free(a->waiters);
    Py_TYPE(a)->tp_free((PyObject *)a);
}

static PyMethodDef arr_methods[] = {
    {"fire", (PyCFunction)arr_fire, METH_NOARGS, "the timer's reader callback"},
    {"stop", (PyCFunction)arr_stop, METH_NOARGS, "no more arrivals: the waiting threads get None"},
    {"close", (PyCFunction)arr_close, METH_NOARGS, "stop, and close the timer"},
    {"fileno", (PyCFunction)arr_fileno, METH_NOARGS, "the timer's file descriptor (for loop.add_reader)"},
    {"ticket", (PyCFunction)arr_ticket, METH_NOARGS, "a thread's ticket: `await ticket` is the next arrival's stamp, or None"},
    {NULL, NULL, 0, NULL},
};

/* the threads parked on their tickets (engine/worker.py's WirePump waits in C while every
 * live thread waits on a wire or here) */
static PyObject *
arr_waiting(Arrivals *a, void *Py_UNUSED(closure))
{
    Py_ssize_t n = 0;
    for (Py_ssize_t i = 0; i < a->wcount; i++)
        n += a->waiters[(a->whead + i) % a->wcap]->strand != Py_None;
    return PyLong_FromSsize_t(n);
}

static PyGetSetDef arr_getset[] = {
    {"queue_length", (getter)arr_queue_length, NULL, "arrivals due and not taken", NULL},
    {"waiting", (getter)arr_waiting, NULL, "threads parked on their tickets", NULL},
    {NULL},
};

static PyMemberDef arr_members[] = {
    {"inflight", T_LONGLONG, offsetof(Arrivals, inflight), READONLY, "tickets holding an arrival"},
    {"ended", T_INT, offsetof(Arrivals, ended), READONLY, "no arrival will come"},
    {"due", T_LONGLONG, offsetof(Arrivals, due), READONLY, "the next arrival's time, ns"},
    {NULL},
};

static PyTypeObject ArrivalsType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "pysysbench._native.Arrivals",
    .tp_basicsize = sizeof(Arrivals),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "Rate mode's Poisson arrivals (see engine/arrivals.c).",
    .tp_new = arr_new,
    .tp_dealloc = (destructor)arr_dealloc,
    .tp_traverse = (traverseproc)arr_traverse,
    .tp_clear = (inquiry)arr_clear,
    .tp_methods = arr_methods,
    .tp_getset = arr_getset,
    .tp_members = arr_members,
};

/* ------------------------------------------------------------------ Ticket --- */

static PySendResult
ticket_send(PyObject *self, PyObject *arg, PyObject **out)
{
    Ticket *t = (Ticket *)self;
    long long stamp;
    int rc;
    if (t->waiting) {                            /* resumed: True with an arrival, None at the end */
        t->waiting = 0;
        if (arg == Py_True) {
            *out = PyLong_FromLongLong(t->stamp);
            return *out == NULL ? PYGEN_ERROR : PYGEN_RETURN;
        }
        Py_INCREF(Py_None);
        *out = Py_None;
        return PYGEN_RETURN;
    }
    rc = ticket_take(self, now_ns(), &stamp);
    if (rc < 0)
        return PYGEN_ERROR;
    if (rc == 1) {
        *out = PyLong_FromLongLong(stamp);
        return *out == NULL ? PYGEN_ERROR : PYGEN_RETURN;
    }
    if (rc == 2) {
        Py_INCREF(Py_None);
        *out = Py_None;
        return PYGEN_RETURN;
    }
    t->waiting = 1;
    Py_INCREF(self);
    *out = self;
    return PYGEN_NEXT;
}

static PyObject *
ticket_iternext(PyObject *self)
{
    PyObject *res = NULL;
    PySendResult r = ticket_send(self, Py_None, &res);
    return native_send_result(r, res);
}

static PyObject *
ticket_send_method(PyObject *self, PyObject *arg)
{
    PyObject *res = NULL;
    PySendResult r = ticket_send(self, arg, &res);
    return native_send_result(r, res);
}

static PyObject *
ticket_throw(PyObject *self, PyObject *args)
{
    ticket_forget(self);
    return native_raise_thrown(args);
}

static PyObject *
ticket_close(PyObject *self, PyObject *Py_UNUSED(unused))
{
    ticket_forget(self);
    Py_RETURN_NONE;
}

static PyObject *
ticket_idle_method(PyObject *self, PyObject *Py_UNUSED(unused))
{
    ticket_idle(self);
    Py_RETURN_NONE;
}

static PyObject *
ticket_await(PyObject *self)
{
    Py_INCREF(self);
    return self;
}

static int
ticket_traverse(Ticket *t, visitproc visit, void *arg)
{
    Py_VISIT(t->arr);
    Py_VISIT(t->strand);
    return 0;
}

static int
ticket_clear(Ticket *t)
{
    if (t->arr != NULL)
        ticket_idle((PyObject *)t);
    Py_CLEAR(t->arr);
    Py_CLEAR(t->strand);
    return 0;
}

static void
ticket_dealloc(Ticket *t)
{
    PyObject_GC_UnTrack(t);
    ticket_clear(t);
    PyObject_GC_Del(t);
}

static PyAsyncMethods ticket_async = {
    .am_await = ticket_await,
    .am_send = ticket_send,
};

static PyMethodDef ticket_methods[] = {
    {"send", ticket_send_method, METH_O, NULL},
    {"throw", ticket_throw, METH_VARARGS, NULL},
    {"close", ticket_close, METH_NOARGS, NULL},
    {"idle", ticket_idle_method, METH_NOARGS, "the thread is done with its arrival (it leaves the loop)"},
    {NULL, NULL, 0, NULL},
};

static PyMemberDef ticket_members[] = {
    {"strand", T_OBJECT, offsetof(Ticket, strand), 0, "the strand parked on it (a cancel sets None)"},
    {"stamp", T_LONGLONG, offsetof(Ticket, stamp), READONLY, "the last arrival handed to it, ns"},
    {NULL},
};

PyTypeObject TicketType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "pysysbench._native.Ticket",
    .tp_basicsize = sizeof(Ticket),
#ifdef Py_TPFLAGS_HAVE_AM_SEND
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_AM_SEND,
#else
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
#endif
    .tp_doc = "A thread's place in rate mode's arrivals (see engine/arrivals.c).",
    .tp_dealloc = (destructor)ticket_dealloc,
    .tp_traverse = (traverseproc)ticket_traverse,
    .tp_clear = (inquiry)ticket_clear,
    .tp_as_async = &ticket_async,
    .tp_iter = PyObject_SelfIter,
    .tp_iternext = ticket_iternext,
    .tp_methods = ticket_methods,
    .tp_members = ticket_members,
};

int
arrivals_init(PyObject *m)
{
    if (PyType_Ready(&ArrivalsType) < 0 || PyType_Ready(&TicketType) < 0)
        return -1;
    Py_INCREF(&ArrivalsType);
    if (PyModule_AddObject(m, "Arrivals", (PyObject *)&ArrivalsType) < 0) {
        Py_DECREF(&ArrivalsType);
        return -1;
    }
    return 0;
}
