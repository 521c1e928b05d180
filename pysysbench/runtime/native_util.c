/* The C helpers shared by the files above (native_runtime.h), below every user: the module
 * init (_native.c) only wires, so a file that needs a helper never reaches up to it. */

#include "native_runtime.h"

/* the offset of a writable __slots__ member `name` of obj's type, or -1: read and written in place
 * (no attribute lookup) while the object's type is the one the offset was taken from */
Py_ssize_t
native_slot_offset(PyObject *obj, PyObject *name)
{
    PyObject *d = _PyType_Lookup(Py_TYPE(obj), name);     /* borrowed */
    if (d != NULL && Py_IS_TYPE(d, &PyMemberDescr_Type)) {
        PyMemberDef *m = ((PyMemberDescrObject *)d)->d_member;
        if ((m->type == T_OBJECT_EX || m->type == T_OBJECT) && !(m->flags & READONLY))
            return m->offset;
    }
    return -1;
}

PyObject *
native_tuple_of(Py_ssize_t n, PyObject **items)
{
    PyObject *t = NULL;
    Py_ssize_t i;
    for (i = 0; i < n; i++)
        if (items[i] == NULL)
            goto fail;
    t = PyTuple_New(n);
    if (t == NULL)
        goto fail;
    for (i = 0; i < n; i++)
        PyTuple_SET_ITEM(t, i, items[i]);
    return t;
fail:
    for (i = 0; i < n; i++)
        Py_XDECREF(items[i]);
    return NULL;
}

/* the base type of event sources (native_runtime.h): no instances of its own; here, below both
 * the workloads that subclass it (lua/bridge.c) and the engine's loop that runs it */
PyTypeObject EventSourceType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "pysysbench._native.EventSource",
    .tp_basicsize = sizeof(EventSource),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "What an EventLoop runs instead of steps (native_runtime.h).",
};

/* ------------------------------------------------------------ the event-limit rule --- *
 * runtime/limits.py states it; Limits.admit is the Python twin of limits_admit. */

enum { LIM_STOP, LIM_DEADLINE, LIM_BUDGET, LIM_WARMING, LIM_FIELDS };
static const char *const lim_names[LIM_FIELDS] = {"stop", "deadline_ns", "budget", "warming"};
static PyObject *lim_name[LIM_FIELDS], *s_take;
static PyTypeObject *lim_type;             /* the type lim_off was taken from (a strong reference) */
static Py_ssize_t lim_off[LIM_FIELDS];     /* its slot offsets (-1: read by name) */

/* the slots' offsets taken from limits' type when it is not the one they were taken from */
static void
lim_adopt(PyObject *limits)
{
    PyTypeObject *old = lim_type;
    Py_INCREF(Py_TYPE(limits));
    lim_type = Py_TYPE(limits);
    Py_XDECREF(old);
    for (int i = 0; i < LIM_FIELDS; i++)
        lim_off[i] = native_slot_offset(limits, lim_name[i]);
}

/* limits.<field> read in place (a borrowed reference), or NULL: not of the type the offsets
 * are of, or unset -- then lim_get.  Several reads per event, each with no reference taken */
static inline PyObject *
lim_peek(PyObject *limits, int field)
{
    if (Py_IS_TYPE(limits, lim_type) && lim_off[field] >= 0)
        return SLOT(limits, lim_off[field]);
    return NULL;
}

/* limits.<field> (a new reference): in place while limits is of the type the offsets are of */
static PyObject *
lim_get(PyObject *limits, int field)
{
    PyObject *v;
    if (!Py_IS_TYPE(limits, lim_type))
        lim_adopt(limits);
    if ((v = lim_peek(limits, field)) != NULL) {
        Py_INCREF(v);
        return v;
    }
    return PyObject_GetAttr(limits, lim_name[field]);     /* anything else (or unset: its error) */
}

/* limits.<field> as a truth value: 0, 1, or -1 with an exception */
static int
lim_flag(PyObject *limits, int field)
{
    PyObject *v = lim_peek(limits, field);
    int r;
    if (v == Py_False)
        return 0;
    if (v == Py_True)
        return 1;
    if ((v = lim_get(limits, field)) == NULL)
        return -1;
    r = PyObject_IsTrue(v);
    Py_DECREF(v);
    return r;
}

/* limits.deadline_ns as a number, or -1 with an exception.  A deadline of nanoseconds is an
 * int of two digits, whose conversion takes CPython's slow path (a quarter of a rate-limited
 * event's cost in C): the last one converted is kept, with a reference, so the same object
 * (ints do not change) is not converted again. */
static long long
lim_deadline(PyObject *limits)
{
    static PyObject *last;
    static long long last_value;
    PyObject *v = lim_peek(limits, LIM_DEADLINE);
    long long deadline;
    if (v != NULL && v == last)
        return last_value;
    if ((v = lim_get(limits, LIM_DEADLINE)) == NULL)
        return -1;
    if (v == last) {
        Py_DECREF(v);
        return last_value;
    }
    deadline = PyLong_AsLongLong(v);
    if (deadline == -1 && PyErr_Occurred()) {
        Py_DECREF(v);
        return -1;
    }
    Py_XSETREF(last, v);                 /* our reference moves to the cache */
    last_value = deadline;
    return deadline;
}

/* the stop, or the time limit at now_ns: 0, 1, or -1 with an exception */
static int
lim_ended(PyObject *limits, long long now_ns)
{
    long long deadline;
    int stop = lim_flag(limits, LIM_STOP);
    if (stop != 0)
        return stop;
    deadline = lim_deadline(limits);
    if (deadline == -1 && PyErr_Occurred())
        return -1;
    return limits_time_up(deadline, now_ns);
}

/* budget.take(n): how many of n events it gave, or -1 with an exception */
static long long
lim_take(PyObject *budget, long long n)
{
    PyObject *arg = PyLong_FromLongLong(n), *r;
    long long got;
    if (arg == NULL)
        return -1;
    r = PyObject_CallMethodOneArg(budget, s_take, arg);
    Py_DECREF(arg);
    if (r == NULL)
        return -1;
    got = PyLong_AsLongLong(r);
    Py_DECREF(r);
    return got;
}

int
limits_ended(PyObject *limits, long long now_ns)
{
    return lim_ended(limits, now_ns);
}

long long
limits_deadline(PyObject *limits)
{
    return lim_deadline(limits);
}

long long
limits_admit(PyObject *limits, long long now_ns, long long n)
{
    PyObject *budget;
    long long got;
    int ended = lim_ended(limits, now_ns), warming;
    if (ended != 0)
        return ended < 0 ? -1 : 0;
    if (lim_peek(limits, LIM_BUDGET) == Py_None)
        return n;                        /* no --events: all n may start */
    if ((budget = lim_get(limits, LIM_BUDGET)) == NULL)
        return -1;
    warming = budget == Py_None ? 1 : lim_flag(limits, LIM_WARMING);   /* not counted: all n may start */
    got = warming < 0 ? -1 : warming ? n : lim_take(budget, n);
    Py_DECREF(budget);
    return got;
}

/* limits_admit(limits, now_ns, n=1): the C rule, for tests/unit/test_limits.py */
static PyObject *
util_limits_admit(PyObject *module, PyObject *args)
{
    PyObject *limits;
    long long now, n = 1, got;
    (void)module;
    if (!PyArg_ParseTuple(args, "OL|L", &limits, &now, &n))
        return NULL;
    if (n < 0) {
        PyErr_SetString(PyExc_ValueError, "the count must not be negative");
        return NULL;
    }
    got = limits_admit(limits, now, n);
    return got < 0 ? NULL : PyLong_FromLongLong(got);
}

static PyMethodDef util_methods[] = {
    {"limits_admit", util_limits_admit, METH_VARARGS,
     "limits_admit(limits, now_ns, n=1): how many of n events may start (runtime/limits.py's rule)"},
    {NULL, NULL, 0, NULL},
};

int
native_util_init(PyObject *module)
{
    for (int i = 0; i < LIM_FIELDS; i++)
        if ((lim_name[i] = PyUnicode_InternFromString(lim_names[i])) == NULL)
            return -1;
    if ((s_take = PyUnicode_InternFromString("take")) == NULL)
        return -1;
    if (PyType_Ready(&EventSourceType) < 0)
        return -1;
    return PyModule_AddFunctions(module, util_methods);
}

PyObject *
native_send_result(PySendResult r, PyObject *value)
{
    if (r == PYGEN_NEXT)
        return value;
    if (r == PYGEN_RETURN) {
        if (value == Py_None)
            PyErr_SetNone(PyExc_StopIteration);
        else
            _PyGen_SetStopIterationValue(value);
        Py_DECREF(value);
    }
    return NULL;
}

PyObject *
native_raise_thrown(PyObject *args)
{
    PyObject *typ, *val = NULL, *tb = NULL;
    if (!PyArg_ParseTuple(args, "O|OO", &typ, &val, &tb))
        return NULL;
    if (PyExceptionInstance_Check(typ))
        PyErr_SetObject((PyObject *)Py_TYPE(typ), typ);
    else
        PyErr_SetObject(typ, val == NULL ? Py_None : val);
    return NULL;
}
