/* The time-limited loop of the bundled OLTP events in C (engine/worker.py runs it; the
 * Python events of workloads/oltp.py are its contract: tests/unit/test_event_loop.py and
 * tests/integration/test_statement_counts.py compare the statements both send). */

#include "native_runtime.h"
#include "native_stats.h"
#include "native_drivers.h"
#include "native_engine.h"
#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* --------------------------------------------------------------- EventLoop --- *
 * engine/worker.py's Python loop (Worker._python_loop) running an event without a
 * Python frame per statement.  The workload describes its event as steps (workloads/base.py,
 * native_step; workloads/oltp.py for the bundled OLTP events), each with the same draws in
 * the same order as the Python part it stands for, and this loop runs them, knowing draws
 * and calls but no workload:
 *   (statements, per_table, count, draws, calls)
 *   per_table: t = uniform(1, tables) first (even when count is 0), and each statement is
 *              statements[i][t]; else statements[i] itself
 *   count times: the draws, left to right, into values 0, 1, ...: "id" = default(1, size),
 *              ("string", template) = string(template), ("plus", i, k) = value i + k;
 *              then each call (statement index, value indices) is awaited in turn
 * then record(tid, latency).  Awaiting it runs events while the event-limit rule
 * (runtime/limits.py; limits_admit, native_runtime.h) lets another start: until limits.stop
 * is true, the clock reaches limits.deadline_ns, or limits.budget has no event left.  A statement's
 * exception ends the await with that exception and the event unrecorded: `start` tells
 * the caller when that event began (it restarts the event in Python and records it);
 * awaiting again goes on with the next event.  Inside a strand (engine/strand.py) it
 * offers itself each time it waits on a wire, so the responses come to it directly
 * (strand_offer, engine/strand.c).
 *
 * EventLoop(source, record, tid, limits, turn_ns) runs the events of an event
 * source (native_runtime.h; lua/bridge.c) the same way: the source hands out each event's statements,
 * and may end the await with what the workload's Python finishes (the event's start in
 * `start`, unrecorded), or with True (the event stopped its thread).  A source's event may
 * send no statement at all (a Lua event doing arithmetic), so the loop yields None (a turn
 * for the event loop: the reporter, signals, the worker's heartbeat) after an event every
 * turn_ns, as the Python loop does.
 *
 * In rate mode (arrive_by(ticket)) each event waits for an arrival (engine/arrivals.c) once the
 * rule lets it start: it starts at the arrival's stamp, and with none due the loop yields the
 * ticket, on which the strand parks until the timer hands it one (True) or the end (None). */

#define MAX_STMTS 4      /* statements of one step */
#define MAX_VALUES 8     /* draws of one repetition */
#define MAX_CALLS 4      /* calls of one repetition */

enum { DRAW_ID = 0, DRAW_STRING = 1, DRAW_PLUS = 2 };

typedef struct {
    int kind;
    int from;            /* DRAW_PLUS: the value added to */
    PyObject *arg;       /* DRAW_STRING: the template; DRAW_PLUS: the integer added */
} StepDraw;

typedef struct {
    int stmt;
    int nargs;
    int args[MAX_VALUES];
} Call;

typedef struct {
    PyObject *stmts[MAX_STMTS];
    int nstmts;
    int per_table;
    long count;
    StepDraw draws[MAX_VALUES];
    int ndraws;
    Call calls[MAX_CALLS];
    int ncalls;
} Step;

typedef struct {
    PyObject_HEAD
    Step *steps;
    Py_ssize_t nsteps;
    PyObject *uniform, *draw, *string;   /* rand.Rand's uniform, default, string */
    PyObject *one, *tables, *size;       /* 1, tables, table_size */
    PyObject *record;                    /* a Recorder, or a callable record(tid, lat_ns) */
    PyObject *tid_obj;
    PyObject *limits;                    /* runtime/limits.py's Limits: the rule reads it (limits_admit) */
    PyObject *cur[MAX_STMTS];            /* the current step's statements, its table drawn */
    PyObject *values[MAX_VALUES];        /* the current repetition's draws */
    int ncur, nvalues;                   /* how many of them are set */
    PyObject *sub;                       /* the statement being awaited */
    long long tid, start;
    long long turn_ns, turn;             /* source: a turn for the event loop every turn_ns of events that never wait;
                                          * turn 0: a statement waited (the loop had its turn) since the last window */
    Py_ssize_t pc;                       /* the current step */
    long left;                           /* its repetitions not yet begun */
    int call;                            /* the next call of the current repetition; -1: none begun */
    int in_event;
    PyObject *source;                    /* an EventSource (native_runtime.h) instead of steps, or NULL */
    int first;                           /* source: the event has not asked for a statement yet */
    int kept;                            /* 1: ended with kept_value; 2: with the kept exception (el_step) */
    PyObject *kept_value, *kept_type, *kept_exc, *kept_tb;
    PyObject *ticket;                    /* rate mode: the thread's Ticket (engine/arrivals.c), or NULL */
    int awaiting;                        /* parked on the ticket: the next send is its answer */
} EventLoop;

static PySendResult el_step(PyObject *self, PyObject *value, PyObject **yielded);

static long long
now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);     /* time.perf_counter_ns()'s clock on Linux */
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int
el_record(EventLoop *p, long long lat)
{
    PyObject *args[2], *r;
    if (Py_TYPE(p->record) == &RecorderType)
        return recorder_add((Recorder *)p->record, p->tid, lat);
    args[0] = p->tid_obj;
    args[1] = PyLong_FromLongLong(lat);
    if (args[1] == NULL)
        return -1;
    r = PyObject_Vectorcall(p->record, args, 2, NULL);
    Py_DECREF(args[1]);
    if (r == NULL)
        return -1;
    Py_DECREF(r);
    return 0;
}

/* the current repetition's values, released */
static void
el_drop_values(EventLoop *p)
{
    for (int i = 0; i < p->nvalues; i++)
        Py_CLEAR(p->values[i]);
    p->nvalues = 0;
}

/* the current step's statements, released */
static void
el_drop_statements(EventLoop *p)
{
    for (int i = 0; i < p->ncur; i++)
        Py_CLEAR(p->cur[i]);
    p->ncur = 0;
}

/* forget the event in progress (an error, close()) */
static void
el_drop_event(EventLoop *p)
{
    p->in_event = 0;
    p->call = -1;
    el_drop_statements(p);
    el_drop_values(p);
}

/* call stmt(*args) (args: new references, consumed) and take the first step of what it returns */
static int
el_issue(EventLoop *p, PyObject *stmt, PyObject **args, Py_ssize_t n, PySendResult *r, PyObject **res)
{
    PyObject *aw, *it;
    Py_ssize_t i;
    for (i = 0; i < n; i++)
        if (args[i] == NULL)
            break;
    aw = i == n ? PyObject_Vectorcall(stmt, args, n, NULL) : NULL;
    for (i = 0; i < n; i++)
        Py_XDECREF(args[i]);
    if (aw == NULL)
        return -1;
    if (PyCoro_CheckExact(aw) || (Py_TYPE(aw)->tp_as_async != NULL && Py_TYPE(aw)->tp_as_async->am_send != NULL
                                  && Py_TYPE(aw)->tp_as_async->am_await != NULL))
        it = aw;                                          /* its own iterator (a coroutine, a Pending) */
    else if (Py_TYPE(aw)->tp_as_async != NULL && Py_TYPE(aw)->tp_as_async->am_await != NULL) {
        it = Py_TYPE(aw)->tp_as_async->am_await(aw);
        Py_DECREF(aw);
        if (it == NULL)
            return -1;
    } else {
        PyErr_Format(PyExc_TypeError, "a statement returned %R, which cannot be awaited", aw);
        Py_DECREF(aw);
        return -1;
    }
    p->sub = it;
    if (!wire_is_pending(it) && handoff_ensure_task() < 0)   /* Python code: the strand is the current task */
        return -1;
    *r = PyIter_Send(it, Py_None, res);
    return 0;
}

static PyObject *
el_call2(PyObject *f, PyObject *a, PyObject *b)
{
    PyObject *args[2] = {a, b};
    return PyObject_Vectorcall(f, args, 2, NULL);
}

/* a repetition's draws, in order, into p->values: 0, or -1 (error) */
static int
el_draw(EventLoop *p, const Step *st)
{
    for (int i = 0; i < st->ndraws; i++) {
        const StepDraw *d = &st->draws[i];
        PyObject *v;
        if (d->kind == DRAW_ID)
            v = el_call2(p->draw, p->one, p->size);
        else if (d->kind == DRAW_STRING)
            v = PyObject_Vectorcall(p->string, (PyObject **)&d->arg, 1, NULL);
        else
            v = PyNumber_Add(p->values[d->from], d->arg);
        if (v == NULL)
            return -1;
        p->values[i] = v;
        p->nvalues = i + 1;
    }
    return 0;
}

/* the step's statements for this event: each statements[i][t] of one drawn table t, or itself */
static int
el_begin_step(EventLoop *p, const Step *st)
{
    PyObject *t = NULL;
    if (st->per_table) {
        PyObject *args[2] = {p->one, p->tables};
        t = PyObject_Vectorcall(p->uniform, args, 2, NULL);
        if (t == NULL)
            return -1;
    }
    for (int i = 0; i < st->nstmts; i++) {
        if (t != NULL)
            p->cur[i] = PyObject_GetItem(st->stmts[i], t);
        else {
            Py_INCREF(st->stmts[i]);
            p->cur[i] = st->stmts[i];
        }
        if (p->cur[i] == NULL) {
            Py_XDECREF(t);
            return -1;
        }
        p->ncur = i + 1;
    }
    Py_XDECREF(t);
    return 0;
}

/* send the event's next statement: 0 (sent: *r, *res its first step), 1 (the event has no more), -1 (error) */
static int
el_next(EventLoop *p, PySendResult *r, PyObject **res)
{
    for (;;) {
        const Step *st = p->pc >= 0 ? &p->steps[p->pc] : NULL;
        if (st != NULL && p->call >= 0 && p->call < st->ncalls) {
            const Call *c = &st->calls[p->call++];
            PyObject *args[MAX_VALUES];
            for (int i = 0; i < c->nargs; i++) {
                args[i] = p->values[c->args[i]];
                Py_INCREF(args[i]);
            }
            return el_issue(p, p->cur[c->stmt], args, c->nargs, r, res);
        }
        if (st != NULL && p->left > 0) {          /* the next repetition: its draws, then its calls */
            el_drop_values(p);
            p->left--;
            p->call = 0;
            if (el_draw(p, st) < 0)
                return -1;
            continue;
        }
        el_drop_statements(p);
        el_drop_values(p);
        p->call = -1;
        if (++p->pc >= p->nsteps)
            return 1;
        st = &p->steps[p->pc];
        p->left = st->count;
        if (el_begin_step(p, st) < 0)
            return -1;
    }
}

/* el_next for a source's event: 0 (sent), 1 (the event has ended), 2 (it stops its thread or
 * goes on in Python: *handover, what the await ends with), -1 (error) */
static int
el_source_next(EventLoop *p, PySendResult *r, PyObject **res, PyObject **handover)
{
    PyObject *stmt = NULL, *args[SOURCE_MAX_ARGS];
    Py_ssize_t n = 0;
    int first = p->first, rc;
    p->first = 0;
    rc = ((EventSource *)p->source)->ops->next(p->source, first, &stmt, args, &n, handover);
    if (rc == SOURCE_STATEMENT) {
        rc = el_issue(p, stmt, args, n, r, res);
        Py_DECREF(stmt);
        return rc;
    }
    if (rc == SOURCE_END)
        return 1;
    if (rc == SOURCE_STOP) {
        Py_INCREF(Py_True);
        *handover = Py_True;
        return 2;
    }
    return rc == SOURCE_PYTHON ? 2 : -1;
}

/* an event begins (its start set) */
static void
el_begin(EventLoop *p)
{
    p->in_event = 1;
    p->first = 1;
    p->pc = -1;
    p->left = 0;
    p->call = -1;
}

/* go on from the outcome `r` (`res`) of the awaited statement's last step; PYGEN_RETURN with res
 * NULL on entry between events */
static PySendResult
el_run(EventLoop *p, PySendResult r, PyObject *res, PyObject **out)
{
    for (;;) {
        if (r == PYGEN_NEXT) {
            *out = res;                                    /* the statement waits: pass its yield up */
            p->turn = 0;                                   /* and the event loop gets its turn */
            strand_offer((PyObject *)p, el_step);          /* and take the response directly */
            return PYGEN_NEXT;
        }
        Py_CLEAR(p->sub);
        if (r == PYGEN_ERROR) {                            /* unrecorded; `start` stays for the caller */
            el_drop_event(p);
            return PYGEN_ERROR;
        }
        Py_XDECREF(res);
        res = NULL;
        if (!p->in_event) {
            long long admitted;
            p->start = now_ns();                           /* the rule's clock is the event's start */
            if ((admitted = limits_admit(p->limits, p->start, 1)) < 0)
                return PYGEN_ERROR;
            if (admitted == 0) {
                if (p->ticket != NULL)
                    ticket_idle(p->ticket);
                Py_INCREF(Py_None);
                *out = Py_None;
                return PYGEN_RETURN;
            }
            if (p->ticket != NULL) {
                switch (ticket_take(p->ticket, p->start, &p->start)) {
                case 0:                                    /* none due: park on the ticket */
                    p->awaiting = 1;
                    p->turn = 0;
                    Py_INCREF(p->ticket);
                    *out = p->ticket;
                    strand_offer((PyObject *)p, el_step);
                    return PYGEN_NEXT;
                case 1:
                    break;
                case 2:
                    Py_INCREF(Py_None);
                    *out = Py_None;
                    return PYGEN_RETURN;
                default:
                    return PYGEN_ERROR;
                }
            }
            el_begin(p);
        }
        switch (p->source != NULL ? el_source_next(p, &r, &res, out) : el_next(p, &r, &res)) {
        case 0:
            continue;
        case 1: {
            long long end = now_ns();
            p->in_event = 0;
            if (el_record(p, end - p->start) < 0)
                return PYGEN_ERROR;
            /* the reporter's (and signals') turn, as asyncio.sleep(0), after turn_ns of events
             * that never waited; an event that waited gave the loop its turn and starts a new
             * window (at 1000 threads every event outlasts turn_ns: a turn each would be a
             * second trip through the loop per event) */
            if (p->turn_ns > 0 && p->turn == 0)
                p->turn = end + p->turn_ns;
            else if (p->turn_ns > 0 && end >= p->turn) {
                p->turn = end + p->turn_ns;
                Py_INCREF(Py_None);
                *out = Py_None;
                return PYGEN_NEXT;
            }
            r = PYGEN_RETURN;
            continue;
        }
        case 2:                                            /* unrecorded; `start` stays for the caller */
            p->in_event = 0;
            return PYGEN_RETURN;
        default:
            r = PYGEN_ERROR;
            continue;
        }
    }
}

static PySendResult
el_send(PyObject *self, PyObject *arg, PyObject **out)
{
    EventLoop *p = (EventLoop *)self;
    PyObject *res = NULL;
    PySendResult r = PYGEN_RETURN;
    if (p->kept) {                       /* the outcome of a step the strand gave us directly */
        int kept = p->kept;
        p->kept = 0;
        if (kept == 1) {
            *out = p->kept_value;
            p->kept_value = NULL;
            return PYGEN_RETURN;
        }
        PyErr_Restore(p->kept_type, p->kept_exc, p->kept_tb);
        p->kept_type = p->kept_exc = p->kept_tb = NULL;
        return PYGEN_ERROR;
    }
    if (p->awaiting) {                   /* the ticket's answer: an arrival (True), or the end */
        p->awaiting = 0;
        if (arg != Py_True) {
            Py_INCREF(Py_None);
            *out = Py_None;
            return PYGEN_RETURN;
        }
        p->start = ticket_stamp(p->ticket);
        el_begin(p);
    }
    else if (p->sub != NULL) {
        if (!wire_is_pending(p->sub) && handoff_ensure_task() < 0)
            r = PYGEN_ERROR;
        else
            r = PyIter_Send(p->sub, arg, &res);
    }
    return el_run(p, r, res, out);
}

/* strand_inner_step: a response given by the strand directly; an end is kept for the frames */
static PySendResult
el_step(PyObject *self, PyObject *value, PyObject **yielded)
{
    EventLoop *p = (EventLoop *)self;
    PyObject *res = NULL;
    PySendResult r = el_send(self, value, &res);
    if (r == PYGEN_NEXT) {
        *yielded = res;
        return PYGEN_NEXT;
    }
    if (r == PYGEN_RETURN) {
        p->kept = 1;
        p->kept_value = res;
    } else {
        p->kept = 2;
        PyErr_Fetch(&p->kept_type, &p->kept_exc, &p->kept_tb);
    }
    *yielded = NULL;
    return PYGEN_RETURN;
}

/* native_send_result, taking the value's address, read only here: in
 * el_result(el_send(.., &res), res) C leaves the order of the two arguments open, and a
 * compiler may read res before el_send has set it. */
static PyObject *
el_result(PySendResult r, PyObject **value)
{
    return native_send_result(r, *value);
}

static PyObject *
el_iternext(PyObject *self)
{
    PyObject *res = NULL;
    return el_result(el_send(self, Py_None, &res), &res);
}

static PyObject *
el_send_method(PyObject *self, PyObject *arg)
{
    PyObject *res = NULL;
    return el_result(el_send(self, arg, &res), &res);
}

/* throw(exc): into the statement being awaited (cancellation, a lost connection), which may
 * still finish it (then the loop goes on) or raise */
static PyObject *
el_throw(PyObject *self, PyObject *args)
{
    EventLoop *p = (EventLoop *)self;
    PyObject *y, *meth, *out = NULL, *value;
    if (p->awaiting) {                   /* parked on the ticket: it waits no longer */
        p->awaiting = 0;
        ticket_forget(p->ticket);
    }
    if (p->sub == NULL)
        return native_raise_thrown(args);
    meth = PyObject_GetAttrString(p->sub, "throw");
    if (meth == NULL)
        return el_result(el_run(p, PYGEN_ERROR, NULL, &out), &out);
    y = PyObject_Call(meth, args, NULL);
    Py_DECREF(meth);
    if (y != NULL)
        return el_result(el_run(p, PYGEN_NEXT, y, &out), &out);
    /* the sub-iterator returned: its StopIteration's value (as strand_run takes it) */
    if (!PyErr_ExceptionMatches(PyExc_StopIteration) || _PyGen_FetchStopIterationValue(&value) < 0)
        return el_result(el_run(p, PYGEN_ERROR, NULL, &out), &out);
    return el_result(el_run(p, PYGEN_RETURN, value, &out), &out);
}

static PyObject *
el_close(PyObject *self, PyObject *Py_UNUSED(unused))
{
    EventLoop *p = (EventLoop *)self;
    PyObject *sub = p->sub;
    p->sub = NULL;
    el_drop_event(p);
    if (p->awaiting) {
        p->awaiting = 0;
        ticket_forget(p->ticket);
    }
    if (sub != NULL) {
        PyObject *r = PyObject_CallMethod(sub, "close", NULL);
        Py_DECREF(sub);
        if (r == NULL) {
            if (!PyErr_ExceptionMatches(PyExc_AttributeError))
                return NULL;
            PyErr_Clear();
        } else
            Py_DECREF(r);
    }
    Py_RETURN_NONE;
}

static PyObject *
el_await(PyObject *self)
{
    Py_INCREF(self);
    return self;
}

static int
el_traverse(EventLoop *p, visitproc visit, void *arg)
{
    for (Py_ssize_t i = 0; i < p->nsteps; i++) {
        for (int k = 0; k < p->steps[i].nstmts; k++)
            Py_VISIT(p->steps[i].stmts[k]);
        for (int k = 0; k < p->steps[i].ndraws; k++)
            Py_VISIT(p->steps[i].draws[k].arg);
    }
    Py_VISIT(p->uniform);
    Py_VISIT(p->draw);
    Py_VISIT(p->string);
    Py_VISIT(p->one);
    Py_VISIT(p->tables);
    Py_VISIT(p->size);
    Py_VISIT(p->record);
    Py_VISIT(p->tid_obj);
    Py_VISIT(p->limits);
    for (int i = 0; i < MAX_STMTS; i++)
        Py_VISIT(p->cur[i]);
    for (int i = 0; i < MAX_VALUES; i++)
        Py_VISIT(p->values[i]);
    Py_VISIT(p->sub);
    Py_VISIT(p->source);
    Py_VISIT(p->kept_value);
    Py_VISIT(p->kept_type);
    Py_VISIT(p->kept_exc);
    Py_VISIT(p->kept_tb);
    Py_VISIT(p->ticket);
    return 0;
}

static int
el_clear(EventLoop *p)
{
    for (Py_ssize_t i = 0; i < p->nsteps; i++) {
        for (int k = 0; k < p->steps[i].nstmts; k++)
            Py_CLEAR(p->steps[i].stmts[k]);
        for (int k = 0; k < p->steps[i].ndraws; k++)
            Py_CLEAR(p->steps[i].draws[k].arg);
    }
    Py_CLEAR(p->uniform);
    Py_CLEAR(p->draw);
    Py_CLEAR(p->string);
    Py_CLEAR(p->one);
    Py_CLEAR(p->tables);
    Py_CLEAR(p->size);
    Py_CLEAR(p->record);
    Py_CLEAR(p->tid_obj);
    Py_CLEAR(p->limits);
    el_drop_event(p);
    Py_CLEAR(p->sub);
    Py_CLEAR(p->source);
    Py_CLEAR(p->kept_value);
    Py_CLEAR(p->kept_type);
    Py_CLEAR(p->kept_exc);
    Py_CLEAR(p->kept_tb);
    Py_CLEAR(p->ticket);
    return 0;
}

static void
el_dealloc(EventLoop *p)
{
    PyObject_GC_UnTrack(p);
    el_clear(p);
    PyMem_Free(p->steps);
    Py_TYPE(p)->tp_free((PyObject *)p);
}

/* one draw: "id", ("string", template) or ("plus", i, k) with i < n, the draws before it */
static int
el_parse_draw(PyObject *item, int n, StepDraw *d)
{
    PyObject *name = PyTuple_Check(item) && PyTuple_GET_SIZE(item) > 0 ? PyTuple_GET_ITEM(item, 0) : item;
    Py_ssize_t size = PyTuple_Check(item) ? PyTuple_GET_SIZE(item) : 1;
    if (!PyUnicode_Check(name))
        return -1;
    if (PyUnicode_CompareWithASCIIString(name, "id") == 0 && size == 1) {
        d->kind = DRAW_ID;
        return 0;
    }
    if (PyUnicode_CompareWithASCIIString(name, "string") == 0 && size == 2
            && PyUnicode_Check(PyTuple_GET_ITEM(item, 1))) {
        d->kind = DRAW_STRING;
        d->arg = PyTuple_GET_ITEM(item, 1);
        Py_INCREF(d->arg);
        return 0;
    }
    if (PyUnicode_CompareWithASCIIString(name, "plus") == 0 && size == 3 && PyLong_Check(PyTuple_GET_ITEM(item, 1))
            && PyLong_Check(PyTuple_GET_ITEM(item, 2))) {
        long from = PyLong_AsLong(PyTuple_GET_ITEM(item, 1));
        if (from < 0 || from >= n)
            return -1;
        d->kind = DRAW_PLUS;
        d->from = (int)from;
        d->arg = PyTuple_GET_ITEM(item, 2);
        Py_INCREF(d->arg);
        return 0;
    }
    return -1;
}

/* one call: (statement index < nstmts, (value indices < nvalues)) */
static int
el_parse_call(PyObject *item, int nstmts, int nvalues, Call *c)
{
    PyObject *args;
    long stmt;
    if (!PyTuple_Check(item) || PyTuple_GET_SIZE(item) != 2 || !PyLong_Check(PyTuple_GET_ITEM(item, 0)))
        return -1;
    stmt = PyLong_AsLong(PyTuple_GET_ITEM(item, 0));
    args = PyTuple_GET_ITEM(item, 1);
    if (stmt < 0 || stmt >= nstmts || !PyTuple_Check(args) || PyTuple_GET_SIZE(args) > MAX_VALUES)
        return -1;
    c->stmt = (int)stmt;
    c->nargs = (int)PyTuple_GET_SIZE(args);
    for (int i = 0; i < c->nargs; i++) {
        long v = PyLong_Check(PyTuple_GET_ITEM(args, i)) ? PyLong_AsLong(PyTuple_GET_ITEM(args, i)) : -1;
        if (v < 0 || v >= nvalues)
            return -1;
        c->args[i] = (int)v;
    }
    return 0;
}

/* one step from (statements, per_table, count, draws, calls) */
static int
el_parse_step(PyObject *item, Step *st)
{
    PyObject *stmts, *draws, *calls;
    int per_table;
    if (!PyTuple_Check(item) || !PyArg_ParseTuple(item, "O!plO!O!;a step is (statements, per_table, count, draws, calls)",
                                                  &PyTuple_Type, &stmts, &per_table, &st->count, &PyTuple_Type,
                                                  &draws, &PyTuple_Type, &calls))
        goto bad;
    st->per_table = per_table;
    if (st->count < 0 || PyTuple_GET_SIZE(stmts) > MAX_STMTS || PyTuple_GET_SIZE(draws) > MAX_VALUES
            || PyTuple_GET_SIZE(calls) > MAX_CALLS)
        goto bad;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(stmts); i++) {
        st->stmts[i] = PyTuple_GET_ITEM(stmts, i);
        Py_INCREF(st->stmts[i]);
        st->nstmts = (int)i + 1;
    }
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(draws); i++) {
        if (el_parse_draw(PyTuple_GET_ITEM(draws, i), (int)i, &st->draws[i]) < 0)
            goto bad;
        st->ndraws = (int)i + 1;
    }
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(calls); i++) {
        if (el_parse_call(PyTuple_GET_ITEM(calls, i), st->nstmts, st->ndraws, &st->calls[i]) < 0)
            goto bad;
        st->ncalls = (int)i + 1;
    }
    return 0;
bad:
    if (!PyErr_Occurred())
        PyErr_Format(PyExc_ValueError, "bad event step %R", item);
    return -1;
}

/* what every loop keeps: the recorder, the thread and the limits; 0, or -1 */
static int
el_keep_run(EventLoop *p, PyObject *record, long long tid, PyObject *limits)
{
    p->tid_obj = PyLong_FromLongLong(tid);
    if (p->tid_obj == NULL)
        return -1;
    Py_INCREF(record);
    p->record = record;
    Py_INCREF(limits);
    p->limits = limits;
    p->tid = tid;
    return 0;
}

/* EventLoop(source, record, tid, limits, turn_ns): the events of an EventSource
 * (native_runtime.h), with a turn for the event loop after an event every turn_ns (0: never) */
static PyObject *
el_new_source(PyTypeObject *type, PyObject *args)
{
    PyObject *source, *record, *limits;
    long long tid, turn_ns;
    EventLoop *p;
    if (!PyArg_ParseTuple(args, "O!OLOL", &EventSourceType, &source, &record, &tid, &limits, &turn_ns))
        return NULL;
    if (Py_TYPE(source) == &EventSourceType || ((EventSource *)source)->ops == NULL) {
        PyErr_SetString(PyExc_TypeError, "EventLoop needs a concrete event source");
        return NULL;
    }
    p = (EventLoop *)type->tp_alloc(type, 0);
    if (p == NULL)
        return NULL;
    Py_INCREF(source);
    p->source = source;
    p->turn_ns = turn_ns;
    p->turn = now_ns() + turn_ns;
    if (el_keep_run(p, record, tid, limits) < 0) {
        Py_DECREF(p);
        return NULL;
    }
    return (PyObject *)p;
}

/* EventLoop(steps, uniform, default, string, tables, table_size, record, tid, limits) */
static PyObject *
el_new(PyTypeObject *type, PyObject *args, PyObject *Py_UNUSED(kw))
{
    PyObject *steps, *uniform, *draw, *string, *tables, *size, *record, *limits, *seq;
    long long tid;
    Py_ssize_t n;
    EventLoop *p;
    if (PyTuple_GET_SIZE(args) == 5 && PyObject_TypeCheck(PyTuple_GET_ITEM(args, 0), &EventSourceType))
        return el_new_source(type, args);
    if (!PyArg_ParseTuple(args, "OOOOO!O!OLO", &steps, &uniform, &draw, &string, &PyLong_Type, &tables,
                          &PyLong_Type, &size, &record, &tid, &limits))
        return NULL;
    seq = PySequence_Fast(steps, "steps must be a sequence");
    if (seq == NULL)
        return NULL;
    n = PySequence_Fast_GET_SIZE(seq);
    p = (EventLoop *)type->tp_alloc(type, 0);
    if (p == NULL) {
        Py_DECREF(seq);
        return NULL;
    }
    p->steps = PyMem_Calloc(n ? n : 1, sizeof(Step));
    if (p->steps == NULL) {
        Py_DECREF(seq);
        Py_DECREF(p);
        return PyErr_NoMemory();
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        if (el_parse_step(PySequence_Fast_GET_ITEM(seq, i), &p->steps[i]) < 0) {
            Py_DECREF(seq);
            Py_DECREF(p);
            return NULL;
        }
        p->nsteps = i + 1;
    }
    Py_DECREF(seq);
    p->one = PyLong_FromLong(1);
    if (p->one == NULL || el_keep_run(p, record, tid, limits) < 0) {
        Py_DECREF(p);
        return NULL;
    }
#define KEEP(field, value) do { Py_INCREF(value); p->field = value; } while (0)
    KEEP(uniform, uniform);
    KEEP(draw, draw);
    KEEP(string, string);
    KEEP(tables, tables);
    KEEP(size, size);
#undef KEEP
    return (PyObject *)p;
}

/* arrive_by(ticket): rate mode, each event starting at an arrival of the ticket's Arrivals */
static PyObject *
el_arrive_by(PyObject *self, PyObject *ticket)
{
    EventLoop *p = (EventLoop *)self;
    if (!Py_IS_TYPE(ticket, &TicketType)) {
        PyErr_SetString(PyExc_TypeError, "arrive_by needs a Ticket (Arrivals.ticket())");
        return NULL;
    }
    Py_INCREF(ticket);
    Py_XSETREF(p->ticket, ticket);
    Py_RETURN_NONE;
}

static PyAsyncMethods el_async = {
    .am_await = el_await,
    .am_send = el_send,
};

static PyMethodDef el_methods[] = {
    {"send", el_send_method, METH_O, NULL},
    {"throw", el_throw, METH_VARARGS, NULL},
    {"close", el_close, METH_NOARGS, NULL},
    {"arrive_by", el_arrive_by, METH_O, "rate mode: each event waits for an arrival of this ticket"},
    {NULL, NULL, 0, NULL},
};

static PyMemberDef el_members[] = {
    {"start", T_LONGLONG, offsetof(EventLoop, start), READONLY, "the current (or failed) event's start, ns"},
    {NULL},
};

static PyTypeObject EventLoopType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "pysysbench._native.EventLoop",
    .tp_basicsize = sizeof(EventLoop),
#ifdef Py_TPFLAGS_HAVE_AM_SEND
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_AM_SEND,
#else
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
#endif
    .tp_doc = "A worker thread's time-limited loop of OLTP events given as steps (see engine/worker.py).",
    .tp_new = el_new,
    .tp_dealloc = (destructor)el_dealloc,
    .tp_traverse = (traverseproc)el_traverse,
    .tp_clear = (inquiry)el_clear,
    .tp_as_async = &el_async,
    .tp_iter = PyObject_SelfIter,
    .tp_iternext = el_iternext,
    .tp_methods = el_methods,
    .tp_members = el_members,
};

/* ------------------------------------------------------------------ Budget --- *
 * engine/budget.py's counter of --events (its Python twin, PyBudgetCore, is the contract):
 * Budget(region, total) over the first 8 bytes of a writable buffer (an mmap shared by the
 * worker processes), a native-order int64 counting the events handed out.  take(n) hands
 * out up to n of what is left (a compare-and-swap, so the counter never passes total and
 * the total is exact whatever the threads and processes), give_back(n) returns events
 * taken and not run; `taken` reads the counter. */

typedef struct {
    PyObject_HEAD
    Py_buffer view;
    int held;                 /* view is held */
    long long total;
} Budget;

static inline int64_t *
budget_cell(Budget *b)
{
    return (int64_t *)b->view.buf;
}

static PyObject *
budget_new(PyTypeObject *type, PyObject *args, PyObject *Py_UNUSED(kwds))
{
    PyObject *region;
    long long total;
    Budget *b;

    if (!PyArg_ParseTuple(args, "OL", &region, &total))
        return NULL;
    if (total < 0) {
        PyErr_SetString(PyExc_ValueError, "Budget: total must not be negative");
        return NULL;
    }
    b = (Budget *)type->tp_alloc(type, 0);
    if (b == NULL)
        return NULL;
    if (PyObject_GetBuffer(region, &b->view, PyBUF_WRITABLE | PyBUF_SIMPLE) < 0) {
        Py_DECREF(b);
        return NULL;
    }
    b->held = 1;
    if (b->view.len < (Py_ssize_t)sizeof(int64_t) || ((uintptr_t)b->view.buf % sizeof(int64_t)) != 0) {
        PyErr_SetString(PyExc_ValueError, "Budget: the region must hold an aligned 8-byte counter");
        Py_DECREF(b);
        return NULL;
    }
    b->total = total;
    return (PyObject *)b;
}

static void
budget_dealloc(Budget *b)
{
    if (b->held)
        PyBuffer_Release(&b->view);
    Py_TYPE(b)->tp_free((PyObject *)b);
}

static long long
budget_arg(PyObject *const *args, Py_ssize_t nargs)
{
    long long n;

    if (nargs == 0)
        return 1;
    if (nargs > 1) {
        PyErr_SetString(PyExc_TypeError, "expected at most one argument");
        return -1;
    }
    n = PyLong_AsLongLong(args[0]);
    if (n < 0 && !PyErr_Occurred())
        PyErr_SetString(PyExc_ValueError, "the count must not be negative");
    return n;
}

/* take(n=1): how many of n events this caller may start (0: none left) */
static PyObject *
budget_take(Budget *b, PyObject *const *args, Py_ssize_t nargs)
{
    long long n = budget_arg(args, nargs), grant;
    int64_t *cell = budget_cell(b);
    int64_t old = __atomic_load_n(cell, __ATOMIC_ACQUIRE);

    if (n < 0)
        return NULL;
    do {
        if (old >= b->total)
            return PyLong_FromLong(0);
        grant = b->total - old < n ? b->total - old : n;
    } while (!__atomic_compare_exchange_n(cell, &old, old + grant, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE));
    return PyLong_FromLongLong(grant);
}

/* give_back(n): n events taken and not run are left again */
static PyObject *
budget_give_back(Budget *b, PyObject *const *args, Py_ssize_t nargs)
{
    long long n = budget_arg(args, nargs);

    if (n < 0)
        return NULL;
    __atomic_fetch_sub(budget_cell(b), (int64_t)n, __ATOMIC_ACQ_REL);
    Py_RETURN_NONE;
}

static PyObject *
budget_taken(Budget *b, void *Py_UNUSED(closure))
{
    return PyLong_FromLongLong(__atomic_load_n(budget_cell(b), __ATOMIC_ACQUIRE));
}

static PyMethodDef budget_methods[] = {
    {"take", (PyCFunction)(void (*)(void))budget_take, METH_FASTCALL, "take(n=1): how many of n events may start"},
    {"give_back", (PyCFunction)(void (*)(void))budget_give_back, METH_FASTCALL, "give_back(n): events not run"},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef budget_getset[] = {
    {"taken", (getter)budget_taken, NULL, "the events handed out so far", NULL},
    {NULL},
};

static PyMemberDef budget_members[] = {
    {"total", T_LONGLONG, offsetof(Budget, total), READONLY, "the events of the whole run"},
    {NULL},
};

static PyTypeObject BudgetType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "pysysbench._native.Budget",
    .tp_basicsize = sizeof(Budget),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "The --events counter over shared memory (see engine/budget.py).",
    .tp_new = budget_new,
    .tp_dealloc = (destructor)budget_dealloc,
    .tp_methods = budget_methods,
    .tp_getset = budget_getset,
    .tp_members = budget_members,
};

int
event_loop_init(PyObject *m)
{
    if (PyType_Ready(&EventLoopType) < 0 || PyType_Ready(&BudgetType) < 0)
        return -1;
    Py_INCREF(&EventLoopType);
    if (PyModule_AddObject(m, "EventLoop", (PyObject *)&EventLoopType) < 0) {
        Py_DECREF(&EventLoopType);
        return -1;
    }
    Py_INCREF(&BudgetType);
    if (PyModule_AddObject(m, "Budget", (PyObject *)&BudgetType) < 0) {
        Py_DECREF(&BudgetType);
        return -1;
    }
    return 0;
}
