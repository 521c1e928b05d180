/* The lean wire's core in C, shared by every wire protocol: the twin of drivers/wire.py.
 *
 * WireCore is the receiving half of wire.Wire (its base class): data_received scans each
 * response and resumes the strand waiting on it (engine/strand.py, through the hand-off) or
 * settles the asyncio Future of a request.  Statement is a prepared statement's callable:
 * under a strand it writes its protocol's request itself and returns a Pending, the
 * awaitable that yields the wire to the strand and counts the response as read / write /
 * other (spec 5.11); anywhere else, or when the connection is gone, it returns the Python
 * statement coroutine (``slow``), which is the contract this code follows.  What differs
 * between servers -- the scanner, the request, what a response counts as -- is each
 * protocol's (drivers/mysql/wire.c, drivers/pgsql/wire.c: WireProtocol in native_drivers.h), each
 * registered here by its folder's init. */

#include "native_runtime.h"
#include "native_drivers.h"
#include <errno.h>
#include <limits.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>

static PyObject *one, *s_resume, *s_done, *s_set_result, *s_reads, *s_writes, *s_others, *s_throw;

/* the wire protocols by wire kind (drivers/wire.py: Wire.kind, the Statement's proto), as each
 * driver folder's init registers its own: the core names no driver */
static const WireProtocol *protocols[WIRE_PROTOCOLS];

void
wire_register_protocol(int kind, const WireProtocol *protocol)
{
    if (kind > 0 && kind < WIRE_PROTOCOLS)
        protocols[kind] = protocol;
}

const WireProtocol *
wire_protocol(int kind)
{
    return kind > 0 && kind < WIRE_PROTOCOLS ? protocols[kind] : NULL;
}

static PyObject *
wirecore_scan(WireCore *w, PyObject *buf)
{
    Py_buffer view;
    PyObject *out;
    const WireProtocol *protocol = wire_protocol(w->kind);
    if (protocol == NULL) {
        if (IS_NONE(w->scan)) {
            PyErr_SetString(PyExc_RuntimeError, "a response arrived with no scanner set");
            return NULL;
        }
        return PyObject_CallOneArg(w->scan, buf);
    }
    if (PyObject_GetBuffer(buf, &view, PyBUF_SIMPLE) < 0)
        return NULL;
    out = protocol->scan(w, (const unsigned char *)view.buf, view.len);
    PyBuffer_Release(&view);
    return out;
}

static int
bytearray_append_raw(PyObject *ba, const unsigned char *raw, Py_ssize_t len)
{
    Py_ssize_t n = PyByteArray_GET_SIZE(ba);
    if (PyByteArray_Resize(ba, n + len) < 0)
        return -1;
    memcpy(PyByteArray_AS_STRING(ba) + n, raw, len);
    return 0;
}

/* The scanned response of raw[0:len] with nothing pending before it, or None */
static PyObject *
wirecore_scan_raw(WireCore *w, PyObject *data, const unsigned char *raw, Py_ssize_t len)
{
    const WireProtocol *protocol = wire_protocol(w->kind);
    PyObject *buf, *out;
    if (protocol != NULL)
        return protocol->scan(w, raw, len);
    if (data != NULL)
        return wirecore_scan(w, data);
    if ((buf = PyBytes_FromStringAndSize((const char *)raw, len)) == NULL)
        return NULL;
    out = wirecore_scan(w, buf);
    Py_DECREF(buf);
    return out;
}

/* What arrived on the wire, raw[0:len] (data: the same as an object, or NULL): scanned,
 * kept while the response is incomplete, and once it is complete the waiting strand is
 * resumed with it (or the request's Future settled).  data_received, and WirePoll's reads. */
static PyObject *
wirecore_feed(WireCore *w, PyObject *data, const unsigned char *raw, Py_ssize_t len)
{
    PyObject *result, *r;
    Py_ssize_t had;
    if (IS_NONE(w->strand) && IS_NONE(w->waiter))
        Py_RETURN_NONE;                     /* nothing asked (a late notice): dropped */
    if (w->pending == NULL || !PyByteArray_Check(w->pending)) {
        PyErr_SetString(PyExc_TypeError, "wire.pending must be a bytearray");
        return NULL;
    }
    had = PyByteArray_GET_SIZE(w->pending);
    if (had) {
        PyObject *buf = w->pending;
        if (bytearray_append_raw(buf, raw, len) < 0)
            return NULL;
        Py_INCREF(buf);
        result = wirecore_scan(w, buf);
        Py_DECREF(buf);
    }
    else
        result = wirecore_scan_raw(w, data, raw, len);
    if (result == NULL)
        return NULL;
    if (result == Py_None) {
        Py_DECREF(result);
        if (!had && bytearray_append_raw(w->pending, raw, len) < 0)
            return NULL;
        Py_RETURN_NONE;
    }
    if (had && PyByteArray_Resize(w->pending, 0) < 0) {
        Py_DECREF(result);
        return NULL;
    }
    w->direct = w->fd >= 0;     /* the request was written out entirely, and nothing since */
    if (!IS_NONE(w->strand)) {
        PyObject *strand = w->strand;       /* our reference moves to this variable */
        Py_INCREF(Py_None);
        w->strand = Py_None;
        r = handoff_strand_type != NULL && PyObject_TypeCheck(strand, handoff_strand_type)
            ? handoff_resume(strand, result) : PyObject_CallMethodOneArg(strand, s_resume, result);
        Py_DECREF(strand);
        Py_DECREF(result);
        return r;
    }
    {
        PyObject *waiter = w->waiter, *done;
        Py_INCREF(Py_None);
        w->waiter = Py_None;
        done = PyObject_CallMethodNoArgs(waiter, s_done);
        if (done == NULL)
            r = NULL;
        else if (done == Py_False)
            r = PyObject_CallMethodOneArg(waiter, s_set_result, result);
        else {
            r = Py_None;
            Py_INCREF(r);
        }
        Py_XDECREF(done);
        Py_DECREF(waiter);
        Py_DECREF(result);
        return r;
    }
}

static PyObject *
wirecore_data_received(WireCore *w, PyObject *data)
{
    Py_buffer view;
    PyObject *r;
    if (IS_NONE(w->strand) && IS_NONE(w->waiter))
        Py_RETURN_NONE;
    if (PyObject_GetBuffer(data, &view, PyBUF_SIMPLE) < 0)
        return NULL;
    r = wirecore_feed(w, data, (const unsigned char *)view.buf, view.len);
    PyBuffer_Release(&view);
    return r;
}

static PyObject *
wirecore_new(PyTypeObject *type, PyObject *Py_UNUSED(args), PyObject *Py_UNUSED(kw))
{
    WireCore *w = (WireCore *)type->tp_alloc(type, 0);
    if (w == NULL)
        return NULL;
    Py_INCREF(Py_None);
    w->strand = Py_None;
    Py_INCREF(Py_None);
    w->waiter = Py_None;
    Py_INCREF(Py_None);
    w->scan = Py_None;
    Py_INCREF(Py_None);
    w->lost = Py_None;
    w->fd = -1;
    w->pending = PyByteArray_FromStringAndSize(NULL, 0);
    if (w->pending == NULL) {
        Py_DECREF(w);
        return NULL;
    }
    return (PyObject *)w;
}

static int
wirecore_traverse(WireCore *w, visitproc visit, void *arg)
{
    Py_VISIT(w->strand);
    Py_VISIT(w->waiter);
    Py_VISIT(w->scan);
    Py_VISIT(w->pending);
    Py_VISIT(w->lost);
    return 0;
}

static int
wirecore_clear(WireCore *w)
{
    Py_CLEAR(w->strand);
    Py_CLEAR(w->waiter);
    Py_CLEAR(w->scan);
    Py_CLEAR(w->pending);
    Py_CLEAR(w->lost);
    return 0;
}

static void
wirecore_dealloc(WireCore *w)
{
    PyObject_GC_UnTrack(w);
    wirecore_clear(w);
    Py_TYPE(w)->tp_free((PyObject *)w);
}

static PyMemberDef wirecore_members[] = {
    {"strand", T_OBJECT, offsetof(WireCore, strand), 0, "the strand waiting for the response, or None"},
    {"waiter", T_OBJECT, offsetof(WireCore, waiter), 0, "the Future of a request outside a strand, or None"},
    {"scan", T_OBJECT, offsetof(WireCore, scan), 0, "the scanner of a request (kind 0)"},
    {"pending", T_OBJECT, offsetof(WireCore, pending), 0, "bytes of a response received so far"},
    {"lost", T_OBJECT, offsetof(WireCore, lost), 0, "why the connection ended, or None"},
    {"kind", T_INT, offsetof(WireCore, kind), 0, "0: call scan; 1: MySQL statement; 2: PostgreSQL statement"},
    {"deprecate_eof", T_INT, offsetof(WireCore, deprecate_eof), 0, "MySQL CLIENT_DEPRECATE_EOF negotiated"},
    {"cache_metadata", T_INT, offsetof(WireCore, cache_metadata), 0, "MariaDB MARIADB_CLIENT_CACHE_METADATA negotiated"},
    {"fd", T_INT, offsetof(WireCore, fd), 0, "the plain socket statements may be sent on directly, or -1"},
    {"direct", T_INT, offsetof(WireCore, direct), 0, "1: nothing is queued in the transport"},
    {NULL},
};

static PyMethodDef wirecore_methods[] = {
    {"data_received", (PyCFunction)wirecore_data_received, METH_O, "asyncio.Protocol.data_received"},
    {NULL, NULL, 0, NULL},
};

PyTypeObject WireCoreType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "pysysbench._native.WireCore",
    .tp_basicsize = sizeof(WireCore),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "The receiving half of drivers/wire.py's Wire.",
    .tp_new = wirecore_new,
    .tp_dealloc = (destructor)wirecore_dealloc,
    .tp_traverse = (traverseproc)wirecore_traverse,
    .tp_clear = (inquiry)wirecore_clear,
    .tp_members = wirecore_members,
    .tp_methods = wirecore_methods,
};

static PyObject *pending_new(Statement *s);

/* Write a statement: straight onto the socket when nothing is queued in the transport (it
 * reaches the server now, not when the event loop flushes its queued writes at the end of
 * the turn; and no Python call), else -- and for what a full socket buffer leaves over, or
 * an error, which the transport then reports -- through the transport's write(). */
static PyObject *
wire_send(WireCore *w, PyObject *write, PyObject *data)
{
    const char *buf;
    Py_ssize_t len;
    ssize_t n;
    PyObject *rest, *r;
    if (w->fd < 0 || !w->direct || !PyBytes_CheckExact(data))
        return PyObject_CallOneArg(write, data);
    buf = PyBytes_AS_STRING(data);
    len = PyBytes_GET_SIZE(data);
    do
        n = send(w->fd, buf, (size_t)len, MSG_DONTWAIT | MSG_NOSIGNAL);
    while (n < 0 && errno == EINTR);
    if (n == len)
        Py_RETURN_NONE;
    w->direct = 0;
    if (n <= 0)
        return PyObject_CallOneArg(write, data);
    rest = PyBytes_FromStringAndSize(buf + n, len - n);
    if (rest == NULL)
        return NULL;
    r = PyObject_CallOneArg(write, rest);
    Py_DECREF(rest);
    return r;
}
static PyObject *
statement_call(PyObject *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    Statement *s = (Statement *)self;
    Py_ssize_t n = PyVectorcall_NARGS(nargsf);
    PyObject *strand, *data, *r;
    WireCore *w = s->wire;
    if (kwnames != NULL || !IS_NONE(w->lost))
        goto slow;
    strand = handoff_get(s->here);
    if (strand == NULL)
        return NULL;
    if (strand == Py_None) {
        Py_DECREF(strand);
        goto slow;
    }
    data = s->protocol->encode(s, args, n);
    if (data == NULL) {
        Py_DECREF(strand);
        if (PyErr_Occurred())
            return NULL;
        goto slow;                          /* not this path's to send (the Python statement says why) */
    }
    Py_XSETREF(w->strand, strand);          /* the wire resumes this strand */
    w->kind = s->proto;
    r = wire_send(w, s->write, data);
    Py_DECREF(data);
    if (r == NULL) {
        Py_INCREF(Py_None);
        Py_XSETREF(w->strand, Py_None);
        return NULL;
    }
    Py_DECREF(r);
    return pending_new(s);
slow:
    return PyObject_Vectorcall(s->slow, args, nargsf, kwnames);   /* a coroutine: the C loop registers the strand before it runs it */
}

static int
statement_traverse(Statement *s, visitproc visit, void *arg)
{
    Py_VISIT(s->wire);
    Py_VISIT(s->here);
    Py_VISIT(s->write);
    Py_VISIT(s->head);
    Py_VISIT(s->tail);
    Py_VISIT(s->pack);
    Py_VISIT(s->encoding);
    Py_VISIT(s->counters);
    Py_VISIT(s->fail);
    Py_VISIT(s->error);
    Py_VISIT(s->slow);
    return 0;
}

static int
statement_clear(Statement *s)
{
    Py_CLEAR(s->wire);
    Py_CLEAR(s->here);
    Py_CLEAR(s->write);
    Py_CLEAR(s->head);
    Py_CLEAR(s->tail);
    Py_CLEAR(s->pack);
    Py_CLEAR(s->encoding);
    Py_CLEAR(s->counters);
    Py_CLEAR(s->fail);
    Py_CLEAR(s->error);
    Py_CLEAR(s->slow);
    Py_CLEAR(s->counters_type);
    return 0;
}

static void
statement_dealloc(Statement *s)
{
    PyObject_GC_UnTrack(s);
    statement_clear(s);
    Py_TYPE(s)->tp_free((PyObject *)s);
}


/* Statement(proto, wire, here, write, head, tail, nparams, pack, encoding, counters, fail, error, slow, is_read) */
static PyObject *
statement_new(PyTypeObject *type, PyObject *args, PyObject *Py_UNUSED(kw))
{
    int proto, is_read;
    Py_ssize_t nparams;
    PyObject *wire, *here, *write, *head, *tail, *pack, *encoding, *counters, *fail, *error, *slow;
    Statement *s;
    if (!PyArg_ParseTuple(args, "iO!OOSSnOOOOOOp", &proto, &WireCoreType, &wire, &here, &write, &head, &tail,
                          &nparams, &pack, &encoding, &counters, &fail, &error, &slow, &is_read))
        return NULL;
    if (wire_protocol(proto) == NULL) {
        PyErr_SetString(PyExc_ValueError, "proto must be 1 (MySQL) or 2 (PostgreSQL)");
        return NULL;
    }
    s = (Statement *)type->tp_alloc(type, 0);
    if (s == NULL)
        return NULL;
    s->vectorcall = statement_call;
    s->protocol = wire_protocol(proto);
    s->proto = proto;
    s->is_read = is_read;
    s->nparams = nparams;
#define KEEP(field, value) do { Py_INCREF(value); s->field = value; } while (0)
    KEEP(wire, (WireCore *)wire);
    KEEP(here, here);
    KEEP(write, write);
    KEEP(head, head);
    KEEP(tail, tail);
    KEEP(pack, pack);
    KEEP(encoding, encoding);
    KEEP(counters, counters);
    KEEP(fail, fail);
    KEEP(error, error);
    KEEP(slow, slow);
#undef KEEP
    s->counters_type = Py_TYPE(counters);
    Py_INCREF(s->counters_type);
    s->off[COUNT_READS] = native_slot_offset(counters, s_reads);
    s->off[COUNT_WRITES] = native_slot_offset(counters, s_writes);
    s->off[COUNT_OTHERS] = native_slot_offset(counters, s_others);
    return (PyObject *)s;
}

static PyTypeObject StatementType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "pysysbench._native.Statement",
    .tp_basicsize = sizeof(Statement),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_doc = "A prepared statement on the lean wire: call with its parameters and await the result.",
    .tp_new = statement_new,
    .tp_dealloc = (destructor)statement_dealloc,
    .tp_traverse = (traverseproc)statement_traverse,
    .tp_clear = (inquiry)statement_clear,
    .tp_call = PyVectorcall_Call,
    .tp_vectorcall_offset = offsetof(Statement, vectorcall),
};

/* -------------------------------------------------------------- Pending --- */

enum { P_NEW = 0, P_WAITING = 1, P_DELEGATING = 2, P_DONE = 3 };

typedef struct {
    PyObject_HEAD
    Statement *stmt;
    PyObject *sub;      /* P_DELEGATING: the coroutine of fail() (PostgreSQL) */
    int state;
} Pending;

static PyTypeObject PendingType;

static PyObject *
pending_new(Statement *s)
{
    Pending *p = PyObject_GC_New(Pending, &PendingType);
    if (p == NULL)
        return NULL;
    Py_INCREF(s);
    p->stmt = s;
    p->sub = NULL;
    p->state = P_NEW;
    PyObject_GC_Track(p);
    return (PyObject *)p;
}

/* counters.<which> += 1 */
static int
bump(Statement *s, int which)
{
    PyObject *counters = s->counters, *name = which == COUNT_READS ? s_reads : which == COUNT_WRITES ? s_writes : s_others;
    PyObject *v, *v1;
    Py_ssize_t off = s->off[which];
    int rc;
    if (off >= 0 && Py_TYPE(counters) == s->counters_type && SLOT(counters, off) != NULL
            && PyLong_CheckExact(SLOT(counters, off))) {
        long long n = PyLong_AsLongLong(SLOT(counters, off));
        if (!(n == -1 && PyErr_Occurred()) && n < LLONG_MAX) {
            v1 = PyLong_FromLongLong(n + 1);
            if (v1 == NULL)
                return -1;
            Py_SETREF(SLOT(counters, off), v1);
            return 0;
        }
        PyErr_Clear();
    }
    v = PyObject_GetAttr(counters, name);
    if (v == NULL)
        return -1;
    v1 = PyNumber_Add(v, one);
    Py_DECREF(v);
    if (v1 == NULL)
        return -1;
    rc = PyObject_SetAttr(counters, name, v1);
    Py_DECREF(v1);
    return rc;
}


static PySendResult pending_delegate(Pending *p, PyObject *arg, PyObject **presult);

/* the response: raise its error through fail(), or count it */
static PySendResult
pending_finish(Pending *p, PyObject *result, PyObject **presult)
{
    Statement *s = p->stmt;
    PyObject *error = NULL, *r;
    int which = COUNT_OTHERS, rc;
    p->state = P_DONE;
    rc = s->protocol->outcome(s, result, &which, &error);
    if (rc < 0)
        return PYGEN_ERROR;
    if (rc == 1) {
        if (handoff_ensure_task() < 0) {
            Py_DECREF(error);
            return PYGEN_ERROR;
        }
        r = PyObject_CallOneArg(s->fail, error);   /* raises the classified error (or is a coroutine that does) */
        Py_DECREF(error);
        if (r == NULL)
            return PYGEN_ERROR;
        if (s->protocol->fail_is_coroutine) {
            p->sub = r;
            p->state = P_DELEGATING;
            return pending_delegate(p, Py_None, presult);
        }
        Py_DECREF(r);
    }
    if (bump(s, which) < 0)
        return PYGEN_ERROR;
    Py_INCREF(Py_None);
    *presult = Py_None;
    return PYGEN_RETURN;
}

static PySendResult
pending_delegate(Pending *p, PyObject *arg, PyObject **presult)
{
    PySendResult r;
    if (handoff_ensure_task() < 0)
        return PYGEN_ERROR;
    r = PyIter_Send(p->sub, arg, presult);
    if (r != PYGEN_NEXT) {
        p->state = P_DONE;
        Py_CLEAR(p->sub);
        if (r == PYGEN_RETURN) {       /* fail() returned instead of raising: counted as other */
            Py_DECREF(*presult);
            if (bump(p->stmt, COUNT_OTHERS) < 0)
                return PYGEN_ERROR;
            Py_INCREF(Py_None);
            *presult = Py_None;
        }
    }
    return r;
}

static PySendResult
pending_send(PyObject *self, PyObject *arg, PyObject **presult)
{
    Pending *p = (Pending *)self;
    switch (p->state) {
    case P_NEW:
        p->state = P_WAITING;
        Py_INCREF(p->stmt->wire);
        *presult = (PyObject *)p->stmt->wire;     /* the strand parks on the wire */
        return PYGEN_NEXT;
    case P_WAITING:
        return pending_finish(p, arg, presult);
    case P_DELEGATING:
        return pending_delegate(p, arg, presult);
    default:
        PyErr_SetString(PyExc_RuntimeError, "cannot reuse an already awaited statement");
        return PYGEN_ERROR;
    }
}

static PyObject *
pending_iternext(PyObject *self)
{
    PyObject *result = NULL;
    PySendResult r = pending_send(self, Py_None, &result);
    return native_send_result(r, result);
}

static PyObject *
pending_await(PyObject *self)
{
    Py_INCREF(self);
    return self;
}

static PyObject *
pending_send_method(PyObject *self, PyObject *arg)
{
    PyObject *result = NULL;
    PySendResult r = pending_send(self, arg, &result);
    if (r == PYGEN_NEXT)
        return result;
    if (r == PYGEN_RETURN) {
        _PyGen_SetStopIterationValue(result);
        Py_DECREF(result);
    }
    return NULL;
}

/* throw(exc) while waiting: an Exception (the connection was lost) goes through fail() to be
 * classified, as in the Python statement; CancelledError and the like are raised as they are */
static PyObject *
pending_throw(PyObject *self, PyObject *args)
{
    Pending *p = (Pending *)self;
    PyObject *typ, *val = NULL, *tb = NULL, *exc, *r;
    if (!PyArg_ParseTuple(args, "O|OO", &typ, &val, &tb))
        return NULL;
    if (PyExceptionInstance_Check(typ))
        exc = typ, Py_INCREF(exc);
    else if (PyExceptionClass_Check(typ))
        exc = IS_NONE(val) ? PyObject_CallNoArgs(typ)
                           : PyExceptionInstance_Check(val) ? (Py_INCREF(val), val) : PyObject_CallOneArg(typ, val);
    else {
        PyErr_SetString(PyExc_TypeError, "throw() needs an exception");
        return NULL;
    }
    if (exc == NULL)
        return NULL;
    if (p->state == P_DELEGATING) {
        r = PyObject_CallMethodOneArg(p->sub, s_throw, exc);
        Py_DECREF(exc);
        if (r == NULL) {
            p->state = P_DONE;
            Py_CLEAR(p->sub);
        }
        return r;
    }
    if (p->state == P_WAITING && PyObject_IsInstance(exc, PyExc_Exception) == 1) {
        p->state = P_DONE;
        r = PyObject_CallOneArg(p->stmt->fail, exc);
        Py_DECREF(exc);
        if (r == NULL)
            return NULL;
        if (p->stmt->protocol->fail_is_coroutine) {   /* a coroutine: run it in our place */
            PyObject *result = NULL;
            PySendResult sr;
            p->sub = r;
            p->state = P_DELEGATING;
            sr = pending_delegate(p, Py_None, &result);
            if (sr == PYGEN_NEXT)
                return result;
            if (sr == PYGEN_RETURN) {
                _PyGen_SetStopIterationValue(result);
                Py_DECREF(result);
            }
            return NULL;
        }
        Py_DECREF(r);
        PyErr_SetNone(PyExc_StopIteration);
        return NULL;
    }
    p->state = P_DONE;
    PyErr_SetObject((PyObject *)Py_TYPE(exc), exc);
    Py_DECREF(exc);
    return NULL;
}

static PyObject *
pending_close(PyObject *self, PyObject *Py_UNUSED(unused))
{
    Pending *p = (Pending *)self;
    p->state = P_DONE;
    if (p->sub != NULL) {
        PyObject *r = PyObject_CallMethod(p->sub, "close", NULL);
        Py_CLEAR(p->sub);
        if (r == NULL)
            return NULL;
        Py_DECREF(r);
    }
    Py_RETURN_NONE;
}

static int
pending_traverse(Pending *p, visitproc visit, void *arg)
{
    Py_VISIT(p->stmt);
    Py_VISIT(p->sub);
    return 0;
}

static int
pending_clear(Pending *p)
{
    Py_CLEAR(p->stmt);
    Py_CLEAR(p->sub);
    return 0;
}

static void
pending_dealloc(Pending *p)
{
    PyObject_GC_UnTrack(p);
    pending_clear(p);
    PyObject_GC_Del(p);
}

static PyAsyncMethods pending_async = {
    .am_await = pending_await,
    .am_send = pending_send,
};

static PyMethodDef pending_methods[] = {
    {"send", pending_send_method, METH_O, NULL},
    {"throw", pending_throw, METH_VARARGS, NULL},
    {"close", pending_close, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject PendingType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "pysysbench._native.Pending",
    .tp_basicsize = sizeof(Pending),
#ifdef Py_TPFLAGS_HAVE_AM_SEND
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_AM_SEND,
#else
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
#endif
    .tp_doc = "A statement sent on the lean wire, awaiting its response.",
    .tp_dealloc = (destructor)pending_dealloc,
    .tp_traverse = (traverseproc)pending_traverse,
    .tp_clear = (inquiry)pending_clear,
    .tp_as_async = &pending_async,
    .tp_iter = PyObject_SelfIter,
    .tp_iternext = pending_iternext,
    .tp_methods = pending_methods,
};

int
wire_is_pending(PyObject *o)
{
    return Py_IS_TYPE(o, &PendingType);
}

/* ---------------------------------------------------------------- WirePoll --- *
 * The wires of a worker's threads read in C (engine/worker.py's WirePump): while a run's
 * events go on, the event loop stops reading their transports (pause_reading) and
 * WirePoll.run waits on their sockets itself with epoll, reads each response into one
 * buffer and scans it where it lies (wirecore_feed: the strand waiting on the wire is
 * resumed there, and its event goes on to send its next statement) -- for up to a turn of
 * the event loop (until_ns), then the loop has its turn: timers, the reporter, the other
 * sockets.  Per response that is one read and no event-loop callback, no bytes object, no
 * Python call; the event loop's own reading (data_received) is this code's twin and
 * fallback.  A wire whose socket ends (EOF, an error) or whose response raises goes back
 * to the caller (run's list of (wire, exception or None)): the event loop reads it again
 * and reports the end as it always does. */

#ifdef __linux__          /* epoll and timerfd: elsewhere the event loop reads (native.WirePoll is None) */
#define HAVE_WIREPOLL 1
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#define POLL_EVENTS 64
#define POLL_BUFFER 65536

typedef struct {
    PyObject_HEAD
    int epfd;
    int tfd;             /* the turn's end: a timer in the epoll set (its entry's ptr is NULL) */
    PyObject *wires;     /* set: the wires registered (the references their epoll entries use) */
    PyObject *watch;     /* watch(fd, callback): called when fd is readable (its entry's ptr), or NULL */
} WirePoll;

static unsigned char poll_buffer[POLL_BUFFER];   /* used with the GIL held only */

static PyObject *
wirepoll_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    WirePoll *p;
    if (!_PyArg_NoKeywords("WirePoll", kw) || !_PyArg_NoPositional("WirePoll", args))
        return NULL;
    p = (WirePoll *)type->tp_alloc(type, 0);
    if (p == NULL)
        return NULL;
    p->epfd = p->tfd = -1;
    if ((p->wires = PySet_New(NULL)) == NULL) {
        Py_DECREF(p);
        return NULL;
    }
    if ((p->epfd = epoll_create1(EPOLL_CLOEXEC)) < 0 ||
        (p->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC)) < 0) {
        PyErr_SetFromErrno(PyExc_OSError);
        Py_DECREF(p);
        return NULL;
    }
    {
        struct epoll_event ev;
        memset(&ev, 0, sizeof ev);
        ev.events = EPOLLIN;
        ev.data.ptr = NULL;
        if (epoll_ctl(p->epfd, EPOLL_CTL_ADD, p->tfd, &ev) < 0) {
            PyErr_SetFromErrno(PyExc_OSError);
            Py_DECREF(p);
            return NULL;
        }
    }
    return (PyObject *)p;
}

static int
wirepoll_traverse(WirePoll *p, visitproc visit, void *arg)
{
    Py_VISIT(p->wires);
    Py_VISIT(p->watch);
    return 0;
}

static int
wirepoll_clear(WirePoll *p)
{
    /* closing the epoll descriptor drops its entries, which use these references */
    if (p->epfd >= 0) {
        close(p->epfd);
        p->epfd = -1;
    }
    if (p->tfd >= 0) {
        close(p->tfd);
        p->tfd = -1;
    }
    Py_CLEAR(p->wires);
    Py_CLEAR(p->watch);
    return 0;
}

static void
wirepoll_dealloc(WirePoll *p)
{
    PyObject_GC_UnTrack(p);
    wirepoll_clear(p);
    Py_TYPE(p)->tp_free((PyObject *)p);
}

static int
wirepoll_usable(WirePoll *p)
{
    if (p->epfd < 0 || p->wires == NULL) {
        PyErr_SetString(PyExc_ValueError, "the WirePoll is closed");
        return 0;
    }
    return 1;
}

static PyObject *
wirepoll_add(WirePoll *p, PyObject *wire)
{
    struct epoll_event ev;
    WireCore *w;
    int has;
    if (!wirepoll_usable(p))
        return NULL;
    if (!PyObject_TypeCheck(wire, &WireCoreType)) {
        PyErr_SetString(PyExc_TypeError, "WirePoll.add: a Wire is needed");
        return NULL;
    }
    w = (WireCore *)wire;
    if ((has = PySet_Contains(p->wires, wire)) != 0)
        return has < 0 ? NULL : Py_NewRef(Py_False);
    if (w->fd < 0)
        return Py_NewRef(Py_False);     /* TLS, or the connection is gone: the event loop reads it */
    memset(&ev, 0, sizeof ev);
    ev.events = EPOLLIN;
    ev.data.ptr = w;
    if (epoll_ctl(p->epfd, EPOLL_CTL_ADD, w->fd, &ev) < 0)
        return PyErr_SetFromErrno(PyExc_OSError);
    if (PySet_Add(p->wires, wire) < 0) {
        epoll_ctl(p->epfd, EPOLL_CTL_DEL, w->fd, &ev);
        return NULL;
    }
    Py_RETURN_TRUE;
}

/* watch(fd, callback): callback() whenever fd is readable while run waits (rate mode's timer,
 * engine/arrivals.c: the arrivals are handed out here, not after a trip through the event
 * loop); one fd at a time, kept until the poll closes */
static PyObject *
wirepoll_watch(WirePoll *p, PyObject *args)
{
    struct epoll_event ev;
    int fd;
    PyObject *callback;
    if (!PyArg_ParseTuple(args, "iO", &fd, &callback) || !wirepoll_usable(p))
        return NULL;
    if (p->watch != NULL || !PyCallable_Check(callback)) {
        PyErr_SetString(PyExc_ValueError, "WirePoll.watch: one callable, once");
        return NULL;
    }
    memset(&ev, 0, sizeof ev);
    ev.events = EPOLLIN;
    ev.data.ptr = callback;
    if (epoll_ctl(p->epfd, EPOLL_CTL_ADD, fd, &ev) < 0)
        return PyErr_SetFromErrno(PyExc_OSError);
    p->watch = Py_NewRef(callback);
    Py_RETURN_NONE;
}

/* take w out (its socket may be closed already: the kernel then dropped the entry) */
static int
wirepoll_drop(WirePoll *p, PyObject *wire)
{
    struct epoll_event ev;
    int fd = ((WireCore *)wire)->fd;
    int has = PySet_Contains(p->wires, wire);
    if (has <= 0)
        return has;
    if (fd >= 0)
        epoll_ctl(p->epfd, EPOLL_CTL_DEL, fd, &ev);
    return PySet_Discard(p->wires, wire) < 0 ? -1 : 1;
}

static PyObject *
wirepoll_remove(WirePoll *p, PyObject *wire)
{
    int r;
    if (p->wires == NULL || !PyObject_TypeCheck(wire, &WireCoreType))
        Py_RETURN_FALSE;
    /* the socket may have been closed and its number reused: drop the entry by the object */
    if ((r = wirepoll_drop(p, wire)) < 0)
        return NULL;
    return Py_NewRef(r ? Py_True : Py_False);
}

/* hand wire back to the caller: out of the poll, (wire, exc or None) onto *out */
static int
wirepoll_hand_back(WirePoll *p, PyObject *wire, PyObject *exc, PyObject **out)
{
    PyObject *pair;
    Py_INCREF(wire);          /* the set's reference may be the last */
    if (wirepoll_drop(p, wire) < 0 || (*out == NULL && (*out = PyList_New(0)) == NULL)) {
        Py_DECREF(wire);
        return -1;
    }
    pair = PyTuple_Pack(2, wire, exc != NULL ? exc : Py_None);
    Py_DECREF(wire);
    if (pair == NULL)
        return -1;
    if (PyList_Append(*out, pair) < 0) {
        Py_DECREF(pair);
        return -1;
    }
    Py_DECREF(pair);
    return 0;
}

/* Reads until the clock reaches until_ns.  Each wait blocks with no timeout of its own: the
 * turn's end is the timer in the set, armed once per run.  A wait with a timeout arms and
 * cancels a kernel timer every time it sleeps, and in a VM that reprograms the timer
 * device (an exit to the hypervisor): 0.4-2.8 us more system time per query at 8 threads
 * (bench/journal/2026-12-04.md, "A worker reads its sockets in C"). */
static PyObject *
wirepoll_run(WirePoll *p, PyObject *args)
{
    long long until;
    int release = 1, n, i, turn_over = 0, failed = 0;
    unsigned long long responses = 0;
    struct epoll_event ev[POLL_EVENTS];
    struct itimerspec its;
    PyObject *out = NULL;
    if (!PyArg_ParseTuple(args, "L|p", &until, &release))
        return NULL;
    if (!wirepoll_usable(p))
        return NULL;
    if (PySet_GET_SIZE(p->wires) == 0)
        return PyLong_FromLong(0);
    memset(&its, 0, sizeof its);
    if (until <= 0)
        until = 1;          /* 0 would disarm the timer; 1: one pass over what is ready, no wait */
    its.it_value.tv_sec = (time_t)(until / 1000000000LL);
    its.it_value.tv_nsec = (long)(until % 1000000000LL);
    if (timerfd_settime(p->tfd, TFD_TIMER_ABSTIME, &its, NULL) < 0)
        return PyErr_SetFromErrno(PyExc_OSError);
    while (!turn_over && PySet_GET_SIZE(p->wires) > 0) {
        if (release) {
            Py_BEGIN_ALLOW_THREADS
            n = epoll_wait(p->epfd, ev, POLL_EVENTS, -1);
            Py_END_ALLOW_THREADS
        }
        else
            n = epoll_wait(p->epfd, ev, POLL_EVENTS, -1);
        if (n < 0) {
            if (errno == EINTR)
                break;          /* a signal: the event loop's turn */
            Py_XDECREF(out);
            return PyErr_SetFromErrno(PyExc_OSError);
        }
        /* every wire of the batch is alive now (a wire leaves the set and the epoll set
         * together); held until the batch is done, as a response may end another wire */
        for (i = 0; i < n; i++)
            Py_XINCREF((PyObject *)ev[i].data.ptr);
        for (i = 0; i < n && !failed; i++) {
            WireCore *w = (WireCore *)ev[i].data.ptr;
            PyObject *wire = (PyObject *)w, *r;
            ssize_t got;
            int has;
            if (w == NULL) {            /* the timer: the event loop's turn */
                uint64_t ticks;
                turn_over = 1;
                if (read(p->tfd, &ticks, sizeof ticks) < 0 && errno != EAGAIN) {
                    PyErr_SetFromErrno(PyExc_OSError);
                    failed = 1;
                }
                continue;
            }
            if (wire == p->watch) {     /* the watched fd: its callback */
                if ((r = PyObject_CallNoArgs(wire)) == NULL)
                    failed = 1;
                Py_XDECREF(r);
                continue;
            }
            has = PySet_Contains(p->wires, wire);   /* an earlier response may have taken it out */
            if (has <= 0) {
                failed = has < 0;
                continue;
            }
            if (w->fd < 0) {            /* closed while it was polled */
                failed = wirepoll_hand_back(p, wire, NULL, &out) < 0;
                continue;
            }
            do
                got = recv(w->fd, poll_buffer, POLL_BUFFER, MSG_DONTWAIT);
            while (got < 0 && errno == EINTR);
            if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
                continue;
            if (got <= 0) {             /* the end of the connection: the event loop reports it */
                failed = wirepoll_hand_back(p, wire, NULL, &out) < 0;
                continue;
            }
            responses++;
            r = wirecore_feed(w, NULL, poll_buffer, got);
            if (r == NULL) {
                PyObject *type, *value, *tb;
                PyErr_Fetch(&type, &value, &tb);
                PyErr_NormalizeException(&type, &value, &tb);
                if (tb != NULL && value != NULL)
                    PyException_SetTraceback(value, tb);
                failed = value == NULL || wirepoll_hand_back(p, wire, value, &out) < 0;
                Py_XDECREF(type);
                Py_XDECREF(value);
                Py_XDECREF(tb);
                continue;
            }
            Py_DECREF(r);
        }
        for (i = 0; i < n; i++)
            Py_XDECREF((PyObject *)ev[i].data.ptr);
        if (failed)
            goto fail;
    }
    if (!turn_over) {       /* out early: the timer must not keep the set readable (fileno) */
        memset(&its, 0, sizeof its);
        timerfd_settime(p->tfd, 0, &its, NULL);
    }
    if (out == NULL)
        return PyLong_FromUnsignedLongLong(responses);
    return out;
fail:
    Py_XDECREF(out);
    return NULL;
}

static PyObject *
wirepoll_fileno(WirePoll *p, PyObject *Py_UNUSED(unused))
{
    if (!wirepoll_usable(p))
        return NULL;
    return PyLong_FromLong(p->epfd);
}

static PyMethodDef wirepoll_methods[] = {
    {"add", (PyCFunction)wirepoll_add, METH_O,
     "add(wire) -> bool: read the wire's socket here (False: it has none, or is in already)"},
    {"remove", (PyCFunction)wirepoll_remove, METH_O, "remove(wire) -> bool: no longer read it here"},
    {"watch", (PyCFunction)wirepoll_watch, METH_VARARGS,
     "watch(fd, callback): call callback() when fd is readable while run waits (one fd, kept until closed)"},
    {"fileno", (PyCFunction)wirepoll_fileno, METH_NOARGS,
     "the epoll descriptor: readable while a registered wire is (for the event loop's add_reader)"},
    {"run", (PyCFunction)wirepoll_run, METH_VARARGS,
     "run(until_ns, release_gil=True) -> int | list: read and scan responses until the clock of "
     "time.perf_counter_ns reaches until_ns (or nothing is registered, or a signal came); the number "
     "of reads, or the list of (wire, exception or None) handed back to the event loop"},
    {NULL, NULL, 0, NULL},
};

static PyObject *
wirepoll_len_get(WirePoll *p, void *Py_UNUSED(closure))
{
    return PyLong_FromSsize_t(p->wires != NULL ? PySet_GET_SIZE(p->wires) : 0);
}

static PyObject *
wirepoll_waiting_get(WirePoll *p, void *Py_UNUSED(closure))
{
    Py_ssize_t pos = 0, n = 0;
    PyObject *key;
    Py_hash_t hash;
    if (p->wires == NULL)
        return PyLong_FromLong(0);
    while (_PySet_NextEntry(p->wires, &pos, &key, &hash)) {
        WireCore *w = (WireCore *)key;
        n += !IS_NONE(w->strand) || !IS_NONE(w->waiter);
    }
    return PyLong_FromSsize_t(n);
}

static PyGetSetDef wirepoll_getset[] = {
    {"count", (getter)wirepoll_len_get, NULL, "the wires registered", NULL},
    {"waiting", (getter)wirepoll_waiting_get, NULL, "the wires registered that a response is due on", NULL},
    {NULL},
};

static PyTypeObject WirePollType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "pysysbench._native.WirePoll",
    .tp_basicsize = sizeof(WirePoll),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "A worker's wires read with epoll in C (engine/worker.py's WirePump).",
    .tp_new = wirepoll_new,
    .tp_dealloc = (destructor)wirepoll_dealloc,
    .tp_traverse = (traverseproc)wirepoll_traverse,
    .tp_clear = (inquiry)wirepoll_clear,
    .tp_methods = wirepoll_methods,
    .tp_getset = wirepoll_getset,
};

#endif /* __linux__ */

int
wire_init(PyObject *m)
{
#define INTERN(var, text) if ((var = PyUnicode_InternFromString(text)) == NULL) return -1
    INTERN(s_resume, "resume");
    INTERN(s_done, "done");
    INTERN(s_set_result, "set_result");
    INTERN(s_reads, "reads");
    INTERN(s_writes, "writes");
    INTERN(s_others, "others");
    INTERN(s_throw, "throw");
#undef INTERN
    if ((one = PyLong_FromLong(1)) == NULL)
        return -1;
    if (PyType_Ready(&WireCoreType) < 0 || PyType_Ready(&StatementType) < 0 || PyType_Ready(&PendingType) < 0)
        return -1;
    Py_INCREF(&WireCoreType);
    Py_INCREF(&StatementType);
    if (PyModule_AddObject(m, "WireCore", (PyObject *)&WireCoreType) < 0 ||
        PyModule_AddObject(m, "Statement", (PyObject *)&StatementType) < 0)
        return -1;
#ifdef HAVE_WIREPOLL
    if (PyType_Ready(&WirePollType) < 0)
        return -1;
    Py_INCREF(&WirePollType);
    if (PyModule_AddObject(m, "WirePoll", (PyObject *)&WirePollType) < 0)
        return -1;
#endif
    return 0;
}
