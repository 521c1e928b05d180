/* pysysbench._native: the C twins of pysysbench's hot path as one extension module, built
 * from one source per layer (native.h lists them).  pysysbench/native.py is its only
 * importer and decides whether it is used at all (PYSYSBENCH_NATIVE=off: never).  Optional:
 * without a compiler pysysbench uses the Python twins. */

#include "native.h"

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

/* the wire protocols by wire kind (drivers/wire.py: Wire.kind, the Statement's proto) */
static const WireProtocol *const protocols[WIRE_PROTOCOLS] = {
    [WIRE_MYSQL] = &mysql_wire_protocol,
    [WIRE_PGSQL] = &pg_wire_protocol,
};

const WireProtocol *
wire_protocol(int kind)
{
    return kind > 0 && kind < WIRE_PROTOCOLS ? protocols[kind] : NULL;
}

/* the base type of event sources (native.h): no instances of its own */
PyTypeObject EventSourceType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "pysysbench._native.EventSource",
    .tp_basicsize = sizeof(EventSource),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "What an EventLoop runs instead of steps (native.h).",
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_native", NULL, -1, NULL};

PyMODINIT_FUNC
PyInit__native(void)
{
    PyObject *m = PyModule_Create(&module);
    if (m == NULL)
        return NULL;
    if (handoff_init(m) < 0 || rand_init(m) < 0 || recorder_init(m) < 0 || wire_init(m) < 0 || mysql_init(m) < 0 ||
        pg_init(m) < 0 || strand_init(m) < 0 || PyType_Ready(&EventSourceType) < 0 || event_loop_init(m) < 0 ||
        bridge_init(m) < 0 || builtin_init(m) < 0 || memory_init(m) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
