/* The per-event arithmetic of the run loop in C: sysbench's 'uniform' and
 * 'special' draws (pysysbench/rand.py) and the worker's latency recorder
 * (pysysbench/engine/worker.py, PyRecorder).  The Python code is the contract:
 * the same double operations in the same order, so a seeded run draws the same
 * numbers and files the same histogram with or without this extension
 * (tests/unit/test_hotpath.py runs both side by side).  Optional: without a
 * compiler pysysbench uses the Python versions. */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include "structmember.h"
#include "pysysbench_strand_api.h"

#define N_BUCKETS 1024
#define SMALL (1LL << 52)   /* integers that convert to double exactly, with room */

/* ------------------------------------------------------- Mersenne Twister --- *
 * random.Random().random() without a Python call per draw: the MT19937 state
 * lives in the instance (CPython's _random.Random: index, then 624 words), and a
 * double is built from two 32-bit outputs as random() builds it.  Only used when
 * mt_selftest() found this layout and arithmetic to give random()'s exact
 * sequence on this interpreter (rand.py checks at import); otherwise the draws
 * call the source. */

#define MT_N 624
#define MT_M 397

typedef struct {
    PyObject_HEAD
    int index;
    uint32_t state[MT_N];
} MTObject;

static uint32_t
mt_next(MTObject *o)
{
    static const uint32_t mag01[2] = {0x0u, 0x9908b0dfu};
    uint32_t y, *mt = o->state;
    if (o->index >= MT_N) {
        int k;
        for (k = 0; k < MT_N - MT_M; k++) {
            y = (mt[k] & 0x80000000u) | (mt[k + 1] & 0x7fffffffu);
            mt[k] = mt[k + MT_M] ^ (y >> 1) ^ mag01[y & 1u];
        }
        for (; k < MT_N - 1; k++) {
            y = (mt[k] & 0x80000000u) | (mt[k + 1] & 0x7fffffffu);
            mt[k] = mt[k + (MT_M - MT_N)] ^ (y >> 1) ^ mag01[y & 1u];
        }
        y = (mt[MT_N - 1] & 0x80000000u) | (mt[0] & 0x7fffffffu);
        mt[MT_N - 1] = mt[MT_M - 1] ^ (y >> 1) ^ mag01[y & 1u];
        o->index = 0;
    }
    y = mt[o->index++];
    y ^= y >> 11;
    y ^= (y << 7) & 0x9d2c5680u;
    y ^= (y << 15) & 0xefc60000u;
    y ^= y >> 18;
    return y;
}

static double
mt_double(MTObject *o)
{
    uint32_t a = mt_next(o) >> 5, b = mt_next(o) >> 6;
    return (a * 67108864.0 + b) * (1.0 / 9007199254740992.0);
}

/* mt_selftest(rng_a, rng_b, n): draw n doubles from rng_a's state directly and n from
 * rng_b.random() (two generators seeded alike); True when all are equal */
static PyObject *
mt_selftest(PyObject *self, PyObject *args)
{
    PyObject *a, *b, *random_b;
    Py_ssize_t n;
    if (!PyArg_ParseTuple(args, "OOn", &a, &b, &n))
        return NULL;
    if (Py_TYPE(a)->tp_basicsize < (Py_ssize_t)sizeof(MTObject) || Py_TYPE(a) != Py_TYPE(b))
        Py_RETURN_FALSE;
    random_b = PyObject_GetAttrString(b, "random");
    if (random_b == NULL)
        return NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *r = PyObject_CallNoArgs(random_b);
        double x;
        if (r == NULL) {
            Py_DECREF(random_b);
            return NULL;
        }
        x = PyFloat_AsDouble(r);
        Py_DECREF(r);
        if (mt_double((MTObject *)a) != x) {
            Py_DECREF(random_b);
            Py_RETURN_FALSE;
        }
    }
    Py_DECREF(random_b);
    Py_RETURN_TRUE;
}

/* ------------------------------------------------------------------ draws --- */

enum { KIND_UNIFORM = 0, KIND_SPECIAL = 1, KIND_STRING = 2 };

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    int kind;
    PyObject *u;          /* zero-argument callable: uniform double in [0, 1) */
    PyObject *rng;        /* the random.Random behind u when its state can be read directly, else NULL */
    PyObject *fallback;   /* the Python method, for arguments out of SMALL range */
    long spec_iter;
    double iter_mult, pct_mult, pct_2_mult, res_mult;
} Draw;

static int
draw_u(Draw *d, double *out)
{
    if (d->rng != NULL) {
        *out = mt_double((MTObject *)d->rng);
        return 0;
    }
    PyObject *r = PyObject_Vectorcall(d->u, NULL, 0, NULL);
    if (r == NULL)
        return -1;
    *out = PyFloat_AsDouble(r);
    Py_DECREF(r);
    if (*out == -1.0 && PyErr_Occurred())
        return -1;
    return 0;
}

/* a + int(x) */
static PyObject *
trunc_plus(long long a, double x)
{
    if (fabs(x) < (double)SMALL)
        return PyLong_FromLongLong(a + (long long)x);
    PyObject *pa = PyLong_FromLongLong(a), *px = PyLong_FromDouble(x), *sum = NULL;   /* never on sysbench's ranges */
    if (pa != NULL && px != NULL)
        sum = PyNumber_Add(pa, px);
    Py_XDECREF(pa);
    Py_XDECREF(px);
    return sum;
}

/* rand.string(template): '#' -> int(48.0 + u() * 10.0), '@' -> int(97.0 + u() * 26.0), the rest copied;
 * one draw per '#'/'@', left to right (Latin-1 templates; others go to the Python method) */
static PyObject *
draw_string(Draw *d, PyObject *template)
{
    Py_ssize_t n = PyUnicode_GET_LENGTH(template), i;
    const Py_UCS1 *t = PyUnicode_1BYTE_DATA(template);
    PyObject *out = PyUnicode_New(n, PyUnicode_MAX_CHAR_VALUE(template));
    Py_UCS1 *w;
    double r;
    if (out == NULL)
        return NULL;
    w = PyUnicode_1BYTE_DATA(out);
    for (i = 0; i < n; i++) {
        if (t[i] == '#') {
            if (draw_u(d, &r) < 0)
                goto fail;
            w[i] = (Py_UCS1)(long)(48.0 + r * 10.0);
        } else if (t[i] == '@') {
            if (draw_u(d, &r) < 0)
                goto fail;
            w[i] = (Py_UCS1)(long)(97.0 + r * 26.0);
        } else
            w[i] = t[i];
    }
    return out;
fail:
    Py_DECREF(out);
    return NULL;
}

static PyObject *
draw_call(PyObject *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    Draw *d = (Draw *)self;
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    long long a, b;
    double r;
    int overflow = 0;
    if (d->kind == KIND_STRING) {
        if (nargs != 1 || kwnames != NULL || !PyUnicode_Check(args[0]) || PyUnicode_KIND(args[0]) != PyUnicode_1BYTE_KIND)
            return PyObject_Vectorcall(d->fallback, args, nargsf, kwnames);
        return draw_string(d, args[0]);
    }
    if (nargs != 2 || kwnames != NULL || !PyLong_CheckExact(args[0]) || !PyLong_CheckExact(args[1]))
        return PyObject_Vectorcall(d->fallback, args, nargsf, kwnames);
    a = PyLong_AsLongLongAndOverflow(args[0], &overflow);
    if (!overflow)
        b = PyLong_AsLongLongAndOverflow(args[1], &overflow);
    if (overflow || a <= -SMALL || a >= SMALL || b <= -SMALL || b >= SMALL)
        return PyObject_Vectorcall(d->fallback, args, nargsf, kwnames);
    if (d->kind == KIND_UNIFORM) {
        /* int(a + u() * (b - a + 1)) */
        if (draw_u(d, &r) < 0)
            return NULL;
        double x = (double)a + r * (double)(b - a + 1);
        if (!(fabs(x) < (double)SMALL))
            return PyLong_FromDouble(x);
        return PyLong_FromLongLong((long long)x);
    }
    /* special: t = b - a; rnd = u(); if rnd * (t * res_mult) < t: int(a + sum * t * iter_mult)
       else a + int(rnd * (t * pct_mult + 1) + (t / 2 - t * pct_2_mult)) */
    {
        long long t = b - a;
        double td = (double)t;
        if (draw_u(d, &r) < 0)
            return NULL;
        if (r * (td * d->res_mult) < td) {
            double total = 0.0, x;
            for (long i = 0; i < d->spec_iter; i++) {
                if (draw_u(d, &x) < 0)
                    return NULL;
                total += x;
            }
            double v = (double)a + total * td * d->iter_mult;
            if (!(fabs(v) < (double)SMALL))
                return PyLong_FromDouble(v);
            return PyLong_FromLongLong((long long)v);
        }
        return trunc_plus(a, r * (td * d->pct_mult + 1.0) + (td / 2.0 - td * d->pct_2_mult));
    }
}

static int
draw_traverse(Draw *d, visitproc visit, void *arg)
{
    Py_VISIT(d->u);
    Py_VISIT(d->rng);
    Py_VISIT(d->fallback);
    return 0;
}

static int
draw_clear(Draw *d)
{
    Py_CLEAR(d->u);
    Py_CLEAR(d->rng);
    Py_CLEAR(d->fallback);
    return 0;
}

static void
draw_dealloc(Draw *d)
{
    PyObject_GC_UnTrack(d);
    draw_clear(d);
    Py_TYPE(d)->tp_free((PyObject *)d);
}

/* Draw(kind, u, fallback, spec_iter=1, iter_mult=1.0, pct_mult=0.0, pct_2_mult=0.0, res_mult=0.0, rng=None):
 * rng, when given, is the random.Random whose random() is u, read directly (see mt_selftest) */
static PyObject *
draw_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    static char *names[] = {"kind", "u", "fallback", "spec_iter", "iter_mult", "pct_mult", "pct_2_mult",
                            "res_mult", "rng", NULL};
    int kind;
    PyObject *u, *fallback, *rng = Py_None;
    long spec_iter = 1;
    double iter_mult = 1.0, pct_mult = 0.0, pct_2_mult = 0.0, res_mult = 0.0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "iOO|ldddd$O", names, &kind, &u, &fallback, &spec_iter, &iter_mult,
                                     &pct_mult, &pct_2_mult, &res_mult, &rng))
        return NULL;
    if (kind != KIND_UNIFORM && kind != KIND_SPECIAL && kind != KIND_STRING) {
        PyErr_SetString(PyExc_ValueError, "kind must be 0 (uniform), 1 (special) or 2 (string)");
        return NULL;
    }
    if (rng != Py_None && Py_TYPE(rng)->tp_basicsize < (Py_ssize_t)sizeof(MTObject)) {
        PyErr_SetString(PyExc_TypeError, "rng must be a random.Random");
        return NULL;
    }
    Draw *d = (Draw *)type->tp_alloc(type, 0);
    if (d == NULL)
        return NULL;
    d->vectorcall = draw_call;
    d->kind = kind;
    Py_INCREF(u);
    d->u = u;
    Py_INCREF(fallback);
    d->fallback = fallback;
    if (rng != Py_None) {
        Py_INCREF(rng);
        d->rng = rng;
    }
    d->spec_iter = spec_iter;
    d->iter_mult = iter_mult;
    d->pct_mult = pct_mult;
    d->pct_2_mult = pct_2_mult;
    d->res_mult = res_mult;
    return (PyObject *)d;
}

static PyTypeObject DrawType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "pysysbench._hotpath.Draw",
    .tp_basicsize = sizeof(Draw),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_doc = "One of rand.Rand's integer draws (uniform, special) over a uniform-double source.",
    .tp_new = draw_new,
    .tp_dealloc = (destructor)draw_dealloc,
    .tp_traverse = (traverseproc)draw_traverse,
    .tp_clear = (inquiry)draw_clear,
    .tp_call = PyVectorcall_Call,
    .tp_vectorcall_offset = offsetof(Draw, vectorcall),
};

/* ---------------------------------------------------------------- recorder --- */

typedef struct {
    PyObject_HEAD
    long long tid0;
    Py_ssize_t n;
    long long *events;   /* per thread tid0 + i */
    long long *lat;      /* latency sum per thread, ns */
    long long lat_min, lat_max;
    long long hist[N_BUCKETS];
    double ln_ns_per_ms, ln_min_ms;   /* subtracted one after the other, as in Python */
    double m;
} Recorder;

static int
recorder_add(Recorder *r, long long tid, long long lat)
{
    Py_ssize_t i = (Py_ssize_t)(tid - r->tid0);
    if (tid < r->tid0 || i >= r->n) {
        PyErr_Format(PyExc_ValueError, "thread %lld is not one of this recorder's", tid);
        return -1;
    }
    r->events[i] += 1;
    r->lat[i] += lat;
    if (lat > r->lat_max)
        r->lat_max = lat;
    if (lat < r->lat_min || !r->lat_min)
        r->lat_min = lat;
    if (lat > 0) {
        double x = (log((double)lat) - r->ln_ns_per_ms - r->ln_min_ms) * r->m + 0.5;
        long long b = (long long)x;     /* int(): truncation toward zero, as Python */
        r->hist[b < 0 ? 0 : b > N_BUCKETS - 1 ? N_BUCKETS - 1 : b] += 1;
    }
    else
        r->hist[0] += 1;
    return 0;
}

static PyObject *
recorder_record(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    long long tid, lat;
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "record(tid, lat_ns)");
        return NULL;
    }
    tid = PyLong_AsLongLong(args[0]);
    if (tid == -1 && PyErr_Occurred())
        return NULL;
    lat = PyLong_AsLongLong(args[1]);
    if (lat == -1 && PyErr_Occurred())
        return NULL;
    if (recorder_add((Recorder *)self, tid, lat) < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *
recorder_reset_minmax(PyObject *self, PyObject *unused)
{
    Recorder *r = (Recorder *)self;
    r->lat_min = r->lat_max = 0;
    Py_RETURN_NONE;
}

/* (events, lat_sum, lat_min, lat_max, hist list, {tid: events}, {tid: lat}) of threads that recorded */
static PyObject *
recorder_state(PyObject *self, PyObject *unused)
{
    Recorder *r = (Recorder *)self;
    long long events = 0, lat_sum = 0;
    PyObject *hist = NULL, *te = NULL, *tl = NULL;
    hist = PyList_New(N_BUCKETS);
    te = PyDict_New();
    tl = PyDict_New();
    if (hist == NULL || te == NULL || tl == NULL)
        goto fail;
    for (Py_ssize_t i = 0; i < N_BUCKETS; i++) {
        PyObject *v = PyLong_FromLongLong(r->hist[i]);
        if (v == NULL)
            goto fail;
        PyList_SET_ITEM(hist, i, v);
    }
    for (Py_ssize_t i = 0; i < r->n; i++) {
        if (!r->events[i])
            continue;
        events += r->events[i];
        lat_sum += r->lat[i];
        PyObject *k = PyLong_FromLongLong(r->tid0 + i);
        PyObject *e = PyLong_FromLongLong(r->events[i]);
        PyObject *l = PyLong_FromLongLong(r->lat[i]);
        int bad = k == NULL || e == NULL || l == NULL || PyDict_SetItem(te, k, e) < 0 || PyDict_SetItem(tl, k, l) < 0;
        Py_XDECREF(k);
        Py_XDECREF(e);
        Py_XDECREF(l);
        if (bad)
            goto fail;
    }
    return Py_BuildValue("(LLLLNNN)", events, lat_sum, r->lat_min, r->lat_max, hist, te, tl);
fail:
    Py_XDECREF(hist);
    Py_XDECREF(te);
    Py_XDECREF(tl);
    return NULL;
}

static void
recorder_dealloc(Recorder *r)
{
    PyMem_Free(r->events);
    PyMem_Free(r->lat);
    Py_TYPE(r)->tp_free((PyObject *)r);
}

/* Recorder(tid0, n, ln_ns_per_ms, ln_min_ms, m) */
static PyObject *
recorder_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    long long tid0;
    Py_ssize_t n;
    double ln_ns_per_ms, ln_min_ms, m;
    if (!PyArg_ParseTuple(args, "Lnddd", &tid0, &n, &ln_ns_per_ms, &ln_min_ms, &m))
        return NULL;
    if (n < 0) {
        PyErr_SetString(PyExc_ValueError, "n must be >= 0");
        return NULL;
    }
    Recorder *r = (Recorder *)type->tp_alloc(type, 0);
    if (r == NULL)
        return NULL;
    r->tid0 = tid0;
    r->n = n;
    r->events = PyMem_Calloc(n ? n : 1, sizeof(long long));
    r->lat = PyMem_Calloc(n ? n : 1, sizeof(long long));
    if (r->events == NULL || r->lat == NULL) {
        Py_DECREF(r);
        return PyErr_NoMemory();
    }
    r->ln_ns_per_ms = ln_ns_per_ms;
    r->ln_min_ms = ln_min_ms;
    r->m = m;
    return (PyObject *)r;
}

static PyMethodDef recorder_methods[] = {
    {"record", (PyCFunction)(void (*)(void))recorder_record, METH_FASTCALL, "record(tid, lat_ns): one event"},
    {"reset_minmax", recorder_reset_minmax, METH_NOARGS, "forget min/max latency (new interval)"},
    {"state", recorder_state, METH_NOARGS,
     "(events, lat_sum, lat_min, lat_max, hist, thread_events, thread_lat) of the threads that recorded"},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject RecorderType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "pysysbench._hotpath.Recorder",
    .tp_basicsize = sizeof(Recorder),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Latency and event accounting of threads tid0 .. tid0 + n - 1 (see engine/worker.py).",
    .tp_new = recorder_new,
    .tp_dealloc = (destructor)recorder_dealloc,
    .tp_methods = recorder_methods,
};

/* --------------------------------------------------------------- EventLoop --- *
 * engine/worker.py's time-limited loop (Worker._timed_loop) running an OLTP event
 * (workloads/oltp.py) without a Python frame per statement.  The event is given as
 * steps, each the C form of one of Oltp's event parts, with the same draws in the
 * same order:
 *   OP_CALL          await a()                                   (BEGIN, COMMIT)
 *   OP_POINTS        t = uniform(1, tables); count x await a[t](default(1, size))
 *   OP_RANGE         t = uniform(...); count x lo = default(1, size); await a[t](lo, lo + extra)
 *   OP_NON_INDEX     t = uniform(...); count x c = string(extra); await a[t](c, default(1, size))
 *   OP_DELETE_INSERT t = uniform(...); count x id, k = default(...), default(...);
 *                    c, pad = string(extra), string(extra2); await a[t](id); await b[t](id, k, c, pad)
 * then record(tid, latency).  Awaiting it runs events until limits.stop is true or the
 * clock reaches the deadline (the clock of time.perf_counter_ns).  A statement's
 * exception ends the await with that exception and the event unrecorded: `start` tells
 * the caller when that event began (it restarts the event in Python and records it);
 * awaiting again goes on with the next event.  Inside a strand (engine/strand.py) it
 * offers itself each time it waits on a wire, so the responses come to it directly
 * (pysysbench_strand_api.h). */

static PyObject *s_stop;
static StrandApi *strand_api;     /* _wirescan's strands, when that extension is built */

enum { OP_CALL = 0, OP_POINTS = 1, OP_RANGE = 2, OP_NON_INDEX = 3, OP_DELETE_INSERT = 4 };

typedef struct {
    int op;
    long count;
    PyObject *a, *b, *extra, *extra2;
} Step;

typedef struct {
    PyObject_HEAD
    Step *steps;
    Py_ssize_t nsteps;
    PyObject *uniform, *draw, *string;   /* rand.Rand's uniform, default, string */
    PyObject *one, *tables, *size;       /* 1, tables, table_size */
    PyObject *record;                    /* a Recorder, or a callable record(tid, lat_ns) */
    PyObject *tid_obj;
    PyObject *limits;                    /* .stop */
    PyObject *stmt, *stmt2;              /* the current step's statements, its table drawn */
    PyObject *held[4];                   /* OP_DELETE_INSERT: the insert's parameters while the delete runs */
    PyObject *sub;                       /* the statement being awaited */
    long long tid, deadline, start;
    Py_ssize_t pc;                       /* the current step */
    long left;                           /* its statements (pairs) not yet sent */
    int insert_next;                     /* OP_DELETE_INSERT: the delete is done, the insert is next */
    int in_event;
    int kept;                            /* 1: ended with kept_value; 2: with the kept exception (el_step) */
    PyObject *kept_value, *kept_type, *kept_exc, *kept_tb;
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

/* forget the event in progress (an error, close()) */
static void
el_drop_event(EventLoop *p)
{
    p->in_event = 0;
    p->insert_next = 0;
    Py_CLEAR(p->stmt);
    Py_CLEAR(p->stmt2);
    for (int i = 0; i < 4; i++)
        Py_CLEAR(p->held[i]);
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
    *r = PyIter_Send(it, Py_None, res);
    return 0;
}

static PyObject *
el_call2(PyObject *f, PyObject *a, PyObject *b)
{
    PyObject *args[2] = {a, b};
    return PyObject_Vectorcall(f, args, 2, NULL);
}

/* send the event's next statement: 0 (sent: *r, *res its first step), 1 (the event has no more), -1 (error) */
static int
el_next(EventLoop *p, PySendResult *r, PyObject **res)
{
    for (;;) {
        Step *st = p->pc >= 0 ? &p->steps[p->pc] : NULL;
        if (p->insert_next) {
            PyObject *args[4];
            p->insert_next = 0;
            p->left--;
            for (int i = 0; i < 4; i++) {
                args[i] = p->held[i];
                p->held[i] = NULL;
            }
            return el_issue(p, p->stmt2, args, 4, r, res);
        }
        if (st != NULL && p->left > 0) {
            PyObject *args[4];
            switch (st->op) {
            case OP_CALL:
                p->left--;
                return el_issue(p, p->stmt, args, 0, r, res);
            case OP_POINTS:
                p->left--;
                args[0] = el_call2(p->draw, p->one, p->size);
                return el_issue(p, p->stmt, args, 1, r, res);
            case OP_RANGE:
                p->left--;
                args[0] = el_call2(p->draw, p->one, p->size);
                args[1] = args[0] == NULL ? NULL : PyNumber_Add(args[0], st->extra);
                return el_issue(p, p->stmt, args, 2, r, res);
            case OP_NON_INDEX:
                p->left--;
                args[0] = PyObject_Vectorcall(p->string, &st->extra, 1, NULL);
                args[1] = args[0] == NULL ? NULL : el_call2(p->draw, p->one, p->size);
                return el_issue(p, p->stmt, args, 2, r, res);
            default:    /* OP_DELETE_INSERT: the delete now, the insert with the same draws next */
                p->held[0] = el_call2(p->draw, p->one, p->size);
                p->held[1] = p->held[0] == NULL ? NULL : el_call2(p->draw, p->one, p->size);
                p->held[2] = p->held[1] == NULL ? NULL : PyObject_Vectorcall(p->string, &st->extra, 1, NULL);
                p->held[3] = p->held[2] == NULL ? NULL : PyObject_Vectorcall(p->string, &st->extra2, 1, NULL);
                if (p->held[3] == NULL)
                    return -1;
                p->insert_next = 1;
                Py_INCREF(p->held[0]);
                args[0] = p->held[0];
                return el_issue(p, p->stmt, args, 1, r, res);
            }
        }
        Py_CLEAR(p->stmt);
        Py_CLEAR(p->stmt2);
        if (++p->pc >= p->nsteps)
            return 1;
        st = &p->steps[p->pc];
        p->left = st->count;
        if (st->op == OP_CALL) {
            Py_INCREF(st->a);
            p->stmt = st->a;
        } else {
            PyObject *args[2] = {p->one, p->tables}, *t = PyObject_Vectorcall(p->uniform, args, 2, NULL);
            if (t == NULL)
                return -1;
            p->stmt = PyObject_GetItem(st->a, t);
            if (p->stmt != NULL && st->op == OP_DELETE_INSERT)
                p->stmt2 = PyObject_GetItem(st->b, t);
            Py_DECREF(t);
            if (p->stmt == NULL || (st->op == OP_DELETE_INSERT && p->stmt2 == NULL))
                return -1;
        }
    }
}

/* go on from the outcome `r` (`res`) of the awaited statement's last step; PYGEN_RETURN with res
 * NULL on entry between events */
static PySendResult
el_run(EventLoop *p, PySendResult r, PyObject *res, PyObject **out)
{
    for (;;) {
        if (r == PYGEN_NEXT) {
            *out = res;                                    /* the statement waits: pass its yield up */
            if (strand_api != NULL)
                strand_api->offer((PyObject *)p, el_step);   /* and take the response directly */
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
            PyObject *stop = PyObject_GetAttr(p->limits, s_stop);
            int stopped = stop == NULL ? -1 : PyObject_IsTrue(stop);
            Py_XDECREF(stop);
            if (stopped < 0)
                return PYGEN_ERROR;
            p->start = now_ns();                           /* the deadline check's clock is the event's start */
            if (stopped || (p->deadline && p->start >= p->deadline)) {
                Py_INCREF(Py_None);
                *out = Py_None;
                return PYGEN_RETURN;
            }
            p->in_event = 1;
            p->pc = -1;
            p->left = 0;
        }
        switch (el_next(p, &r, &res)) {
        case 0:
            continue;
        case 1:
            p->in_event = 0;
            if (el_record(p, now_ns() - p->start) < 0)
                return PYGEN_ERROR;
            r = PYGEN_RETURN;
            continue;
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
    if (p->sub != NULL)
        r = PyIter_Send(p->sub, arg, &res);
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

/* a PySendResult as an iterator's return: the value yielded, or NULL with StopIteration / the error */
static PyObject *
el_result(PySendResult r, PyObject *res)
{
    if (r == PYGEN_NEXT)
        return res;
    if (r == PYGEN_RETURN) {
        if (res == Py_None)
            PyErr_SetNone(PyExc_StopIteration);
        else
            _PyGen_SetStopIterationValue(res);
        Py_DECREF(res);
    }
    return NULL;
}

static PyObject *
el_iternext(PyObject *self)
{
    PyObject *res = NULL;
    return el_result(el_send(self, Py_None, &res), res);
}

static PyObject *
el_send_method(PyObject *self, PyObject *arg)
{
    PyObject *res = NULL;
    return el_result(el_send(self, arg, &res), res);
}

/* throw(exc): into the statement being awaited (cancellation, a lost connection), which may
 * still finish it (then the loop goes on) or raise */
static PyObject *
el_throw(PyObject *self, PyObject *args)
{
    EventLoop *p = (EventLoop *)self;
    PyObject *y, *meth, *out = NULL, *value;
    if (p->sub == NULL) {
        PyObject *typ, *val = NULL, *tb = NULL;
        if (!PyArg_ParseTuple(args, "O|OO", &typ, &val, &tb))
            return NULL;
        if (PyExceptionInstance_Check(typ))
            PyErr_SetObject((PyObject *)Py_TYPE(typ), typ);
        else
            PyErr_SetObject(typ, val == NULL ? Py_None : val);
        return NULL;
    }
    meth = PyObject_GetAttrString(p->sub, "throw");
    if (meth == NULL)
        return el_result(el_run(p, PYGEN_ERROR, NULL, &out), out);
    y = PyObject_Call(meth, args, NULL);
    Py_DECREF(meth);
    if (y != NULL)
        return el_result(el_run(p, PYGEN_NEXT, y, &out), out);
    /* the sub-iterator returned: its StopIteration's value (as strand_run takes it) */
    if (!PyErr_ExceptionMatches(PyExc_StopIteration) || _PyGen_FetchStopIterationValue(&value) < 0)
        return el_result(el_run(p, PYGEN_ERROR, NULL, &out), out);
    return el_result(el_run(p, PYGEN_RETURN, value, &out), out);
}

static PyObject *
el_close(PyObject *self, PyObject *unused)
{
    EventLoop *p = (EventLoop *)self;
    PyObject *sub = p->sub;
    p->sub = NULL;
    el_drop_event(p);
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
        Py_VISIT(p->steps[i].a);
        Py_VISIT(p->steps[i].b);
        Py_VISIT(p->steps[i].extra);
        Py_VISIT(p->steps[i].extra2);
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
    Py_VISIT(p->stmt);
    Py_VISIT(p->stmt2);
    for (int i = 0; i < 4; i++)
        Py_VISIT(p->held[i]);
    Py_VISIT(p->sub);
    Py_VISIT(p->kept_value);
    Py_VISIT(p->kept_type);
    Py_VISIT(p->kept_exc);
    Py_VISIT(p->kept_tb);
    return 0;
}

static int
el_clear(EventLoop *p)
{
    for (Py_ssize_t i = 0; i < p->nsteps; i++) {
        Py_CLEAR(p->steps[i].a);
        Py_CLEAR(p->steps[i].b);
        Py_CLEAR(p->steps[i].extra);
        Py_CLEAR(p->steps[i].extra2);
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
    Py_CLEAR(p->kept_value);
    Py_CLEAR(p->kept_type);
    Py_CLEAR(p->kept_exc);
    Py_CLEAR(p->kept_tb);
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

/* one step from (op, a, b, count, extra, extra2) */
static int
el_parse_step(PyObject *item, Step *st)
{
    PyObject *a, *b, *extra, *extra2;
    if (!PyTuple_Check(item) || !PyArg_ParseTuple(item, "iOOlOO;a step is (op, a, b, count, extra, extra2)",
                                                  &st->op, &a, &b, &st->count, &extra, &extra2))
        goto bad;
    if (st->op < OP_CALL || st->op > OP_DELETE_INSERT || st->count < 0)
        goto bad;
    if (st->op == OP_CALL && st->count != 1)
        goto bad;
    if (st->op == OP_RANGE && !PyLong_Check(extra))
        goto bad;
    if ((st->op == OP_NON_INDEX || st->op == OP_DELETE_INSERT) && !PyUnicode_Check(extra))
        goto bad;
    if (st->op == OP_DELETE_INSERT && !PyUnicode_Check(extra2))
        goto bad;
    Py_INCREF(a);
    st->a = a;
    Py_INCREF(b);
    st->b = b;
    Py_INCREF(extra);
    st->extra = extra;
    Py_INCREF(extra2);
    st->extra2 = extra2;
    return 0;
bad:
    if (!PyErr_Occurred())
        PyErr_Format(PyExc_ValueError, "bad event step %R", item);
    return -1;
}

/* EventLoop(steps, uniform, default, string, tables, table_size, record, tid, limits, deadline_ns) */
static PyObject *
el_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    PyObject *steps, *uniform, *draw, *string, *tables, *size, *record, *limits, *seq;
    long long tid, deadline;
    Py_ssize_t n;
    EventLoop *p;
    if (!PyArg_ParseTuple(args, "OOOOO!O!OLOL", &steps, &uniform, &draw, &string, &PyLong_Type, &tables,
                          &PyLong_Type, &size, &record, &tid, &limits, &deadline))
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
    p->tid_obj = PyLong_FromLongLong(tid);
    if (p->one == NULL || p->tid_obj == NULL) {
        Py_DECREF(p);
        return NULL;
    }
#define KEEP(field, value) do { Py_INCREF(value); p->field = value; } while (0)
    KEEP(uniform, uniform);
    KEEP(draw, draw);
    KEEP(string, string);
    KEEP(tables, tables);
    KEEP(size, size);
    KEEP(record, record);
    KEEP(limits, limits);
#undef KEEP
    p->tid = tid;
    p->deadline = deadline;
    return (PyObject *)p;
}

static PyAsyncMethods el_async = {
    .am_await = el_await,
    .am_send = el_send,
};

static PyMethodDef el_methods[] = {
    {"send", el_send_method, METH_O, NULL},
    {"throw", el_throw, METH_VARARGS, NULL},
    {"close", el_close, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static PyMemberDef el_members[] = {
    {"start", T_LONGLONG, offsetof(EventLoop, start), READONLY, "the current (or failed) event's start, ns"},
    {NULL},
};

static PyTypeObject EventLoopType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "pysysbench._hotpath.EventLoop",
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

/* ------------------------------------------------------------------ module --- */

static PyMethodDef module_methods[] = {
    {"mt_selftest", mt_selftest, METH_VARARGS,
     "mt_selftest(a, b, n): n draws read from a's state equal n calls of b.random() (a, b seeded alike)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_hotpath", NULL, -1, module_methods};

PyMODINIT_FUNC
PyInit__hotpath(void)
{
    PyObject *m;
    if (PyType_Ready(&DrawType) < 0 || PyType_Ready(&RecorderType) < 0 || PyType_Ready(&EventLoopType) < 0)
        return NULL;
    s_stop = PyUnicode_InternFromString("stop");
    if (s_stop == NULL)
        return NULL;
    strand_api = PyCapsule_Import(STRAND_API_CAPSULE, 0);
    if (strand_api == NULL || strand_api->version != STRAND_API_VERSION) {
        PyErr_Clear();            /* _wirescan not built: the loop runs through the Python frames */
        strand_api = NULL;
    }
    m = PyModule_Create(&module);
    if (m == NULL)
        return NULL;
    Py_INCREF(&DrawType);
    Py_INCREF(&RecorderType);
    Py_INCREF(&EventLoopType);
    if (PyModule_AddObject(m, "Draw", (PyObject *)&DrawType) < 0 ||
        PyModule_AddObject(m, "Recorder", (PyObject *)&RecorderType) < 0 ||
        PyModule_AddObject(m, "EventLoop", (PyObject *)&EventLoopType) < 0 ||
        PyModule_AddIntConstant(m, "UNIFORM", KIND_UNIFORM) < 0 ||
        PyModule_AddIntConstant(m, "SPECIAL", KIND_SPECIAL) < 0 ||
        PyModule_AddIntConstant(m, "STRING", KIND_STRING) < 0 ||
        PyModule_AddIntConstant(m, "OP_CALL", OP_CALL) < 0 ||
        PyModule_AddIntConstant(m, "OP_POINTS", OP_POINTS) < 0 ||
        PyModule_AddIntConstant(m, "OP_RANGE", OP_RANGE) < 0 ||
        PyModule_AddIntConstant(m, "OP_NON_INDEX", OP_NON_INDEX) < 0 ||
        PyModule_AddIntConstant(m, "OP_DELETE_INSERT", OP_DELETE_INSERT) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
