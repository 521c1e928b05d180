/* The worker's latency recorder in C: the twin of stats/recorder.py's PyRecorder (events
 * and latency per thread, min / max, sysbench's 1024-bucket histogram with the index
 * computed as the Python computes it; tests/unit/test_hotpath.py compares the two). */

#include "native_stats.h"
#include <math.h>

#define N_BUCKETS 1024

struct Recorder {
    PyObject_HEAD
    long long tid0;
    Py_ssize_t n;
    long long *events;   /* per thread tid0 + i */
    long long *lat;      /* latency sum per thread, ns */
    long long lat_min, lat_max;
    long long hist[N_BUCKETS];
    double ln_ns_per_ms, ln_min_ms;   /* subtracted one after the other, as in Python */
    double m;
};

int
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
recorder_reset_minmax(PyObject *self, PyObject *Py_UNUSED(unused))
{
    Recorder *r = (Recorder *)self;
    r->lat_min = r->lat_max = 0;
    Py_RETURN_NONE;
}

/* (events, lat_sum, lat_min, lat_max, hist list, {tid: events}, {tid: lat}) of threads that recorded */
static PyObject *
recorder_state(PyObject *self, PyObject *Py_UNUSED(unused))
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
recorder_new(PyTypeObject *type, PyObject *args, PyObject *Py_UNUSED(kw))
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

PyTypeObject RecorderType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "pysysbench._native.Recorder",
    .tp_basicsize = sizeof(Recorder),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Latency and event accounting of threads tid0 .. tid0 + n - 1 (see stats/recorder.py).",
    .tp_new = recorder_new,
    .tp_dealloc = (destructor)recorder_dealloc,
    .tp_methods = recorder_methods,
};

int
recorder_init(PyObject *m)
{
    if (PyType_Ready(&RecorderType) < 0)
        return -1;
    Py_INCREF(&RecorderType);
    return PyModule_AddObject(m, "Recorder", (PyObject *)&RecorderType);
}
