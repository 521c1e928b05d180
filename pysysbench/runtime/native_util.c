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

int
native_util_init(PyObject *module)
{
    (void)module;
    return PyType_Ready(&EventSourceType);
}
