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

static PyObject *
recorder_record(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    Recorder *r = (Recorder *)self;
    long long tid, lat;
    Py_ssize_t i;
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
    i = (Py_ssize_t)(tid - r->tid0);
    if (tid < r->tid0 || i >= r->n) {
        PyErr_Format(PyExc_ValueError, "thread %lld is not one of this recorder's", tid);
        return NULL;
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
    if (PyType_Ready(&DrawType) < 0 || PyType_Ready(&RecorderType) < 0)
        return NULL;
    m = PyModule_Create(&module);
    if (m == NULL)
        return NULL;
    Py_INCREF(&DrawType);
    Py_INCREF(&RecorderType);
    if (PyModule_AddObject(m, "Draw", (PyObject *)&DrawType) < 0 ||
        PyModule_AddObject(m, "Recorder", (PyObject *)&RecorderType) < 0 ||
        PyModule_AddIntConstant(m, "UNIFORM", KIND_UNIFORM) < 0 ||
        PyModule_AddIntConstant(m, "SPECIAL", KIND_SPECIAL) < 0 ||
        PyModule_AddIntConstant(m, "STRING", KIND_STRING) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
