/* Where a server's response ends, without decoding it: the C twin of
 * pysysbench/drivers/wirescan.py (its docstring is the contract; the unit tests
 * run both on the same buffers).  Built as an optional extension: without a
 * compiler pysysbench falls back to the Python functions. */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <errno.h>
#include <limits.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <stddef.h>
#include <structmember.h>

#define MORE_RESULTS 0x0008
#define MAX_PACKET 0xFFFFFF

typedef struct {
    Py_ssize_t start;   /* payload of the logical packet */
    Py_ssize_t length;  /* length of its first physical packet */
    Py_ssize_t next;    /* position after it */
} packet_t;

/* 1 = a whole logical packet at pos, 0 = not all there */
static int
next_packet(const unsigned char *b, Py_ssize_t n, Py_ssize_t pos, packet_t *p)
{
    Py_ssize_t length;
    int first = 1;
    p->start = pos + 4;
    for (;;) {
        if (n - pos < 4)
            return 0;
        length = (Py_ssize_t)b[pos] | ((Py_ssize_t)b[pos + 1] << 8) | ((Py_ssize_t)b[pos + 2] << 16);
        if (n - pos - 4 < length)
            return 0;
        if (first) {
            p->length = length;
            first = 0;
        }
        pos += 4 + length;
        if (length != MAX_PACKET) {
            p->next = pos;
            return 1;
        }
    }
}

/* length-encoded integer at pos (bounded by end); returns the position after it */
static Py_ssize_t
lenenc(const unsigned char *b, Py_ssize_t pos, Py_ssize_t end, unsigned long long *value)
{
    unsigned char first;
    int size, i;
    *value = 0;
    if (pos >= end)
        return end;
    first = b[pos];
    if (first < 0xFB) {
        *value = first;
        return pos + 1;
    }
    size = first == 0xFC ? 2 : first == 0xFD ? 3 : 8;
    if (pos + 1 + size > end)
        return end;
    for (i = 0; i < size; i++)
        *value |= (unsigned long long)b[pos + 1 + i] << (8 * i);
    return pos + 1 + size;
}

/* a tuple of n new references; NULL (and every item released) if one is NULL */
static PyObject *
tuple_of(Py_ssize_t n, PyObject **items)
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

static PyObject *
mysql_result(Py_ssize_t end, long long fields, unsigned long long affected, long err, const char *msg,
             Py_ssize_t msglen)
{
    PyObject *items[5] = {PyLong_FromSsize_t(end), PyLong_FromLongLong(fields < 0 ? 0LL : fields),
                          PyLong_FromUnsignedLongLong(affected), PyLong_FromLong(err),
                          PyBytes_FromStringAndSize(msg, msglen)};
    return tuple_of(5, items);
}

static PyObject *
mysql_error(const unsigned char *b, packet_t *p, long long fields, unsigned long long affected)
{
    Py_ssize_t end = p->start + p->length, at = p->start + 3;
    long err = 0;
    if (p->length >= 3)
        err = (long)b[p->start + 1] | ((long)b[p->start + 2] << 8);
    if (at < end && b[at] == '#')
        at += 6;
    if (at > end)
        at = end;
    return mysql_result(p->next, fields, affected, err, (const char *)b + at, end - at);
}

/* None (not all there) or (end, fields, affected, errno, message) of the response in b[0:n].
 * cache_metadata: MARIADB_CLIENT_CACHE_METADATA was negotiated, so a column count packet
 * ends with a byte saying whether the column definitions follow (0: they were skipped). */
static PyObject *
mysql_scan_buf(const unsigned char *b, Py_ssize_t n, int deprecate_eof, int cache_metadata)
{
    Py_ssize_t pos = 0, at, end;
    long long fields = -1;
    unsigned long long affected = 0, value, columns, defs, i;
    unsigned int status;
    unsigned char first;
    packet_t p;
    PyObject *out = NULL;

    for (;;) {
        if (!next_packet(b, n, pos, &p))
            goto incomplete;
        pos = p.next;
        if (p.length == 0) {
            out = mysql_result(pos, fields, affected, 2027, "malformed packet", 16);
            goto done;
        }
        first = b[p.start];
        end = p.start + p.length;
        if (first == 0x00) {
            at = lenenc(b, p.start + 1, end, &value);
            affected += value;
            at = lenenc(b, at, end, &value);
            status = at + 1 < end ? (unsigned int)b[at] | ((unsigned int)b[at + 1] << 8) : 0;
            if (fields < 0)
                fields = 0;
            if (status & MORE_RESULTS)
                continue;
            out = mysql_result(pos, fields, affected, 0, "", 0);
            goto done;
        }
        if (first == 0xFF) {
            out = mysql_error(b, &p, fields, affected);
            goto done;
        }
        if (first == 0xFB) {
            out = mysql_result(pos, 0, 0, -1, "LOCAL INFILE request", 20);
            goto done;
        }
        at = lenenc(b, p.start, end, &columns);
        if (fields < 0)
            fields = (long long)columns;
        defs = cache_metadata && at < end && b[at] == 0 ? 0 : columns;   /* definitions that follow */
        for (i = 0; i < defs + (deprecate_eof ? 0 : 1); i++) {
            if (!next_packet(b, n, pos, &p))
                goto incomplete;
            pos = p.next;
        }
        for (;;) {
            if (!next_packet(b, n, pos, &p))
                goto incomplete;
            pos = p.next;
            end = p.start + p.length;
            first = p.length ? b[p.start] : 0;
            if (first == 0xFE && (p.length < 9 || (deprecate_eof && p.length < MAX_PACKET))) {
                if (deprecate_eof) {
                    at = lenenc(b, p.start + 1, end, &value);
                    at = lenenc(b, at, end, &value);
                    status = at + 1 < end ? (unsigned int)b[at] | ((unsigned int)b[at + 1] << 8) : 0;
                } else {
                    status = p.length >= 5 ? (unsigned int)b[p.start + 3] | ((unsigned int)b[p.start + 4] << 8) : 0;
                }
                break;
            }
            if (first == 0xFF) {
                out = mysql_error(b, &p, fields, affected);
                goto done;
            }
        }
        if (!(status & MORE_RESULTS)) {
            out = mysql_result(pos, fields, affected, 0, "", 0);
            goto done;
        }
    }
incomplete:
    out = Py_None;
    Py_INCREF(out);
done:
    return out;
}

static PyObject *
mysql_scan(PyObject *self, PyObject *args)
{
    Py_buffer view;
    int deprecate_eof, cache_metadata = 0;
    PyObject *out;

    if (!PyArg_ParseTuple(args, "y*p|p", &view, &deprecate_eof, &cache_metadata))
        return NULL;
    out = mysql_scan_buf((const unsigned char *)view.buf, view.len, deprecate_eof, cache_metadata);
    PyBuffer_Release(&view);
    return out;
}

/* None (not all there) or (end, tag, error, described) of the response in b[0:n] */
static PyObject *
pg_scan_buf(const unsigned char *b, Py_ssize_t n)
{
    Py_ssize_t pos = 0, end, tag_at = -1, tag_len = 0, err_at = -1, err_len = 0;
    unsigned char kind;
    uint32_t length;
    int described = -1;
    PyObject *out = NULL, *tag, *err;

    for (;;) {
        if (n - pos < 5) {
            out = Py_None;
            Py_INCREF(out);
            break;
        }
        kind = b[pos];
        length = ((uint32_t)b[pos + 1] << 24) | ((uint32_t)b[pos + 2] << 16) | ((uint32_t)b[pos + 3] << 8) | b[pos + 4];
        end = pos + 1 + (Py_ssize_t)length;
        if (end > n) {
            out = Py_None;
            Py_INCREF(out);
            break;
        }
        if (kind == 'Z') {
            if (tag_at >= 0)
                tag = PyBytes_FromStringAndSize((const char *)b + tag_at, tag_len);
            else {
                tag = Py_None;
                Py_INCREF(tag);
            }
            if (err_at >= 0)
                err = PyBytes_FromStringAndSize((const char *)b + err_at, err_len);
            else {
                err = Py_None;
                Py_INCREF(err);
            }
            {
                PyObject *items[4] = {PyLong_FromSsize_t(end), tag, err, PyLong_FromLong(described)};
                out = tuple_of(4, items);
            }
            break;
        }
        if (kind == 'C' && end - pos >= 6) {
            tag_at = pos + 5;
            tag_len = end - 1 - tag_at;
        } else if (kind == 'E' && err_at < 0) {
            err_at = pos + 5;
            err_len = end - err_at;
        } else if (kind == 'T') {
            described = 1;
        } else if (kind == 'n' && described < 0) {
            described = 0;
        }
        pos = end;
    }
    return out;
}

static PyObject *
pg_scan(PyObject *self, PyObject *args)
{
    Py_buffer view;
    PyObject *out;

    if (!PyArg_ParseTuple(args, "y*", &view))
        return NULL;
    out = pg_scan_buf((const unsigned char *)view.buf, view.len);
    PyBuffer_Release(&view);
    return out;
}

/* pg_bind(head, args, tail) -> bytes: a Bind message of args as text parameters
 * ('B', length, head = portal + statement name + "no format codes", the parameter
 * count, each as int32 length + text (-1 = NULL), "no result format codes"), then
 * tail (Execute + Sync) -- the Python twin is wire._py_pg_bind */
static PyObject *
pg_bind_items(const Py_buffer *headp, PyObject *const *items, Py_ssize_t n, const Py_buffer *tailp)
{
    Py_buffer head = *headp, tail = *tailp;
    PyObject *out = NULL, **temps = NULL;
    const char **ptrs = NULL;
    Py_ssize_t *lens = NULL, i, total, bind_len;
    char (*nums)[24] = NULL;
    unsigned char *w;

    if (n > 32767) {
        PyErr_SetString(PyExc_ValueError, "too many parameters for one statement");
        goto done;
    }
    ptrs = PyMem_Calloc(n ? n : 1, sizeof(*ptrs));
    lens = PyMem_Calloc(n ? n : 1, sizeof(*lens));
    temps = PyMem_Calloc(n ? n : 1, sizeof(*temps));
    nums = PyMem_Calloc(n ? n : 1, sizeof(*nums));
    if (!ptrs || !lens || !temps || !nums) {
        PyErr_NoMemory();
        goto done;
    }
    bind_len = 4 + head.len + 2 + 2;
    for (i = 0; i < n; i++) {
        PyObject *v = items[i];
        if (v == Py_None) {
            lens[i] = -1;
        } else if (PyBool_Check(v)) {
            ptrs[i] = v == Py_True ? "t" : "f";
            lens[i] = 1;
        } else if (PyLong_CheckExact(v)) {
            int overflow = 0;
            long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
            if (x == -1 && PyErr_Occurred())
                goto done;
            if (overflow)
                goto generic;
            lens[i] = snprintf(nums[i], sizeof(nums[i]), "%lld", x);
            ptrs[i] = nums[i];
        } else if (PyUnicode_Check(v)) {
            ptrs[i] = PyUnicode_AsUTF8AndSize(v, &lens[i]);
            if (!ptrs[i])
                goto done;
        } else if (PyBytes_Check(v)) {
            ptrs[i] = PyBytes_AS_STRING(v);
            lens[i] = PyBytes_GET_SIZE(v);
        } else if (PyByteArray_Check(v)) {
            ptrs[i] = PyByteArray_AS_STRING(v);
            lens[i] = PyByteArray_GET_SIZE(v);
        } else {
        generic:
            temps[i] = PyObject_Str(v);
            if (!temps[i])
                goto done;
            ptrs[i] = PyUnicode_AsUTF8AndSize(temps[i], &lens[i]);
            if (!ptrs[i])
                goto done;
        }
        if (lens[i] > 0x3FFFFFFF) {
            PyErr_SetString(PyExc_ValueError, "parameter too large for one message");
            goto done;
        }
        bind_len += 4 + (lens[i] > 0 ? lens[i] : 0);
    }
    if (bind_len > 0x7FFFFFFF) {
        PyErr_SetString(PyExc_ValueError, "statement parameters too large for one message");
        goto done;
    }
    total = 1 + bind_len + tail.len;
    out = PyBytes_FromStringAndSize(NULL, total);
    if (!out)
        goto done;
    w = (unsigned char *)PyBytes_AS_STRING(out);
#define PUT32(x) do { uint32_t _v = (uint32_t)(x); *w++ = _v >> 24; *w++ = _v >> 16; *w++ = _v >> 8; *w++ = _v; } while (0)
    *w++ = 'B';
    PUT32(bind_len);
    memcpy(w, head.buf, head.len);
    w += head.len;
    *w++ = (unsigned char)(n >> 8);
    *w++ = (unsigned char)n;
    for (i = 0; i < n; i++) {
        PUT32(lens[i] < 0 ? 0xFFFFFFFFu : (uint32_t)lens[i]);
        if (lens[i] > 0) {
            memcpy(w, ptrs[i], lens[i]);
            w += lens[i];
        }
    }
#undef PUT32
    *w++ = 0;
    *w++ = 0;
    memcpy(w, tail.buf, tail.len);
done:
    if (temps)
        for (i = 0; i < n; i++)
            Py_XDECREF(temps[i]);
    PyMem_Free(temps);
    PyMem_Free(ptrs);
    PyMem_Free(lens);
    PyMem_Free(nums);
    return out;
}

static PyObject *
pg_bind(PyObject *self, PyObject *args)
{
    Py_buffer head, tail;
    PyObject *values, *out;

    if (!PyArg_ParseTuple(args, "y*O!y*", &head, &PyTuple_Type, &values, &tail))
        return NULL;
    out = pg_bind_items(&head, &PyTuple_GET_ITEM(values, 0), PyTuple_GET_SIZE(values), &tail);
    PyBuffer_Release(&head);
    PyBuffer_Release(&tail);
    return out;
}

/* ======================= the statement hot path of drivers/wire.py ======================= *
 * WireCore is the receiving half of wire.Wire (its base class): data_received scans each
 * response and resumes the strand waiting on it (engine/strand.py) or settles the asyncio
 * Future of a request.  Statement is a prepared statement's callable: under a strand it
 * writes COM_STMT_EXECUTE / Bind+Execute+Sync itself and returns a Pending, the awaitable
 * that yields the wire to the strand and counts the response as read / write / other
 * (spec 5.11); anywhere else, or when the connection is gone, it returns the Python
 * statement coroutine (``slow``), which is the contract this code follows. */

#define IS_NONE(x) ((x) == NULL || (x) == Py_None)

enum { SCAN_CALL = 0, SCAN_MYSQL = 1, SCAN_PG = 2 };
enum { PROTO_MYSQL = 1, PROTO_PG = 2 };
enum { C_READS = 0, C_WRITES = 1, C_OTHERS = 2 };

/* the offset of a writable __slots__ member `name` of obj's type, or -1: read and written in place
 * (no attribute lookup) while the object's type is the one the offset was taken from */
static Py_ssize_t
slot_offset(PyObject *obj, PyObject *name)
{
    PyObject *d = _PyType_Lookup(Py_TYPE(obj), name);     /* borrowed */
    if (d != NULL && Py_IS_TYPE(d, &PyMemberDescr_Type)) {
        PyMemberDef *m = ((PyMemberDescrObject *)d)->d_member;
        if ((m->type == T_OBJECT_EX || m->type == T_OBJECT) && !(m->flags & READONLY))
            return m->offset;
    }
    return -1;
}

#define SLOT(obj, offset) (*(PyObject **)((char *)(obj) + (offset)))

static PyObject *one, *s_resume, *s_strand, *s_done, *s_set_result, *s_reads, *s_writes, *s_others, *s_throw;

typedef struct {
    PyObject_HEAD
    PyObject *strand;    /* the strand waiting for the response, or None */
    PyObject *waiter;    /* the Future of a request made outside a strand, or None */
    PyObject *scan;      /* kind SCAN_CALL: scanner callable(buffer) -> None | result */
    PyObject *pending;   /* bytearray: a response received in pieces */
    PyObject *lost;      /* the exception that ended the connection, or None */
    int kind;
    int deprecate_eof;
    int cache_metadata;  /* MySQL: MARIADB_CLIENT_CACHE_METADATA negotiated */
    int fd;              /* the plain socket (no TLS) statements may be sent on directly, or -1 */
    int direct;          /* 1: the transport has nothing queued (a response has come since its last write) */
} WireCore;

#include "pysysbench_strand_api.h"

typedef struct StrandCore StrandCore;
static PyTypeObject StrandCoreType;
static PyObject *strand_resume(StrandCore *self, PyObject *value);

static PyObject *
wirecore_scan(WireCore *w, PyObject *buf)
{
    Py_buffer view;
    PyObject *out;
    if (w->kind == SCAN_CALL) {
        if (IS_NONE(w->scan)) {
            PyErr_SetString(PyExc_RuntimeError, "a response arrived with no scanner set");
            return NULL;
        }
        return PyObject_CallOneArg(w->scan, buf);
    }
    if (PyObject_GetBuffer(buf, &view, PyBUF_SIMPLE) < 0)
        return NULL;
    if (w->kind == SCAN_MYSQL)
        out = mysql_scan_buf((const unsigned char *)view.buf, view.len, w->deprecate_eof, w->cache_metadata);
    else
        out = pg_scan_buf((const unsigned char *)view.buf, view.len);
    PyBuffer_Release(&view);
    return out;
}

static int
bytearray_append(PyObject *ba, PyObject *data)
{
    Py_buffer view;
    Py_ssize_t n = PyByteArray_GET_SIZE(ba);
    if (PyObject_GetBuffer(data, &view, PyBUF_SIMPLE) < 0)
        return -1;
    if (PyByteArray_Resize(ba, n + view.len) < 0) {
        PyBuffer_Release(&view);
        return -1;
    }
    memcpy(PyByteArray_AS_STRING(ba) + n, view.buf, view.len);
    PyBuffer_Release(&view);
    return 0;
}

static PyObject *
wirecore_data_received(WireCore *w, PyObject *data)
{
    PyObject *buf = data, *result, *r;
    Py_ssize_t had;
    if (IS_NONE(w->strand) && IS_NONE(w->waiter))
        Py_RETURN_NONE;                     /* nothing asked (a late notice): dropped */
    if (w->pending == NULL || !PyByteArray_Check(w->pending)) {
        PyErr_SetString(PyExc_TypeError, "wire.pending must be a bytearray");
        return NULL;
    }
    had = PyByteArray_GET_SIZE(w->pending);
    if (had) {
        if (bytearray_append(w->pending, data) < 0)
            return NULL;
        buf = w->pending;
    }
    Py_INCREF(buf);
    result = wirecore_scan(w, buf);
    Py_DECREF(buf);
    if (result == NULL)
        return NULL;
    if (result == Py_None) {
        Py_DECREF(result);
        if (!had && bytearray_append(w->pending, data) < 0)
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
        r = PyObject_TypeCheck(strand, &StrandCoreType) ? strand_resume((StrandCore *)strand, result)
                                                        : PyObject_CallMethodOneArg(strand, s_resume, result);
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
wirecore_new(PyTypeObject *type, PyObject *args, PyObject *kw)
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

static PyTypeObject WireCoreType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "pysysbench._wirescan.WireCore",
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

/* ------------------------------------------------------------ Statement --- */

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    int proto;
    int is_read;          /* PostgreSQL: the statement returns rows */
    Py_ssize_t nparams;   /* MySQL: parameters expected */
    WireCore *wire;
    PyObject *here;       /* .strand: the strand running now, or None */
    PyObject *write;      /* the transport's write */
    PyObject *head;       /* MySQL: COM_STMT_EXECUTE header; PostgreSQL: Bind head */
    PyObject *tail;       /* PostgreSQL: Execute + Sync */
    PyObject *pack;       /* MySQL: pack(args, encoding) -> parameter block (any types) */
    PyObject *encoding;
    PyObject *counters;
    PyObject *fail;       /* classifies and raises (PostgreSQL: a coroutine function) */
    PyObject *error;      /* MySQL: error(errno, message); PostgreSQL: error(body) -> exception */
    PyObject *slow;       /* the Python statement: the same, as a coroutine */
    PyTypeObject *counters_type;       /* the type the offsets below were taken from */
    Py_ssize_t off[3];                 /* reads, writes, others in counters (__slots__), or -1 */
} Statement;

/* COM_STMT_EXECUTE with all-integer parameters; NULL without an exception = use pack() */
static PyObject *
mysql_int_packet(Statement *s, PyObject *const *args, Py_ssize_t n)
{
    /* no parameters: no null bitmap and no "new parameters bound" flag either */
    Py_ssize_t hlen = PyBytes_GET_SIZE(s->head), bitmap = (n + 7) / 8, body = hlen + (n ? bitmap + 1 + 10 * n : 0), i;
    unsigned long long v[64];
    int unsigned_[64];
    PyObject *out;
    unsigned char *w;
    if (n > 64)
        return NULL;
    for (i = 0; i < n; i++) {
        int overflow = 0;
        long long x;
        if (!PyLong_CheckExact(args[i]))
            return NULL;
        x = PyLong_AsLongLongAndOverflow(args[i], &overflow);
        if (x == -1 && PyErr_Occurred())
            return NULL;
        if (overflow) {
            if (overflow < 0)
                return NULL;
            v[i] = PyLong_AsUnsignedLongLong(args[i]);
            if (v[i] == (unsigned long long)-1 && PyErr_Occurred()) {
                PyErr_Clear();
                return NULL;
            }
            unsigned_[i] = 1;
        } else {
            v[i] = (unsigned long long)x;
            unsigned_[i] = 0;
        }
    }
    out = PyBytes_FromStringAndSize(NULL, 4 + body);
    if (out == NULL)
        return NULL;
    w = (unsigned char *)PyBytes_AS_STRING(out);
    w[0] = body & 0xFF;
    w[1] = (body >> 8) & 0xFF;
    w[2] = (body >> 16) & 0xFF;
    w[3] = 0;
    w += 4;
    memcpy(w, PyBytes_AS_STRING(s->head), hlen);
    w += hlen;
    if (n == 0)
        return out;
    memset(w, 0, bitmap);
    w += bitmap;
    *w++ = 1;                                 /* new parameters bound */
    for (i = 0; i < n; i++) {
        *w++ = 0x08;                          /* MYSQL_TYPE_LONGLONG */
        *w++ = unsigned_[i] ? 0x80 : 0x00;
    }
    for (i = 0; i < n; i++)
        for (int k = 0; k < 8; k++)
            *w++ = (unsigned char)(v[i] >> (8 * k));
    return out;
}

static PyObject *
mysql_packet(Statement *s, PyObject *const *args, Py_ssize_t n)
{
    PyObject *tuple, *params, *out;
    Py_ssize_t hlen, plen, body;
    unsigned char *w;
    out = mysql_int_packet(s, args, n);
    if (out != NULL || PyErr_Occurred())
        return out;
    tuple = PyTuple_New(n);
    if (tuple == NULL)
        return NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_INCREF(args[i]);
        PyTuple_SET_ITEM(tuple, i, args[i]);
    }
    params = PyObject_CallFunctionObjArgs(s->pack, tuple, s->encoding, NULL);
    Py_DECREF(tuple);
    if (params == NULL)
        return NULL;
    if (!PyBytes_Check(params)) {
        Py_DECREF(params);
        PyErr_SetString(PyExc_TypeError, "the parameter packer must return bytes");
        return NULL;
    }
    hlen = PyBytes_GET_SIZE(s->head);
    plen = PyBytes_GET_SIZE(params);
    body = hlen + plen;
    if (body >= 0xFFFFFF) {
        Py_DECREF(params);
        PyErr_SetString(PyExc_ValueError, "statement parameters too large for one packet");
        return NULL;
    }
    out = PyBytes_FromStringAndSize(NULL, 4 + body);
    if (out != NULL) {
        w = (unsigned char *)PyBytes_AS_STRING(out);
        w[0] = body & 0xFF;
        w[1] = (body >> 8) & 0xFF;
        w[2] = (body >> 16) & 0xFF;
        w[3] = 0;
        memcpy(w + 4, PyBytes_AS_STRING(s->head), hlen);
        memcpy(w + 4 + hlen, PyBytes_AS_STRING(params), plen);
    }
    Py_DECREF(params);
    return out;
}

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

static PyObject *st_here;
static PyTypeObject *here_type;
static Py_ssize_t here_off = -1;

/* here.strand (a new reference) */
static PyObject *
here_get(PyObject *here)
{
    if (here_off >= 0 && Py_TYPE(here) == here_type && SLOT(here, here_off) != NULL) {
        Py_INCREF(SLOT(here, here_off));
        return SLOT(here, here_off);
    }
    return PyObject_GetAttr(here, s_strand);
}

static int
here_set(PyObject *here, PyObject *value)
{
    if (here_off >= 0 && Py_TYPE(here) == here_type) {
        Py_INCREF(value);
        Py_XSETREF(SLOT(here, here_off), value);
        return 0;
    }
    return PyObject_SetAttr(here, s_strand, value);
}

static PyObject *
statement_call(PyObject *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    Statement *s = (Statement *)self;
    Py_ssize_t n = PyVectorcall_NARGS(nargsf);
    PyObject *strand, *data, *r;
    WireCore *w = s->wire;
    if (kwnames != NULL || !IS_NONE(w->lost) || (s->proto == PROTO_MYSQL && n != s->nparams))
        goto slow;
    strand = here_get(s->here);
    if (strand == NULL)
        return NULL;
    if (strand == Py_None) {
        Py_DECREF(strand);
        goto slow;
    }
    if (s->proto == PROTO_MYSQL)
        data = mysql_packet(s, args, n);
    else {
        Py_buffer head, tail;
        if (PyObject_GetBuffer(s->head, &head, PyBUF_SIMPLE) < 0) {
            Py_DECREF(strand);
            return NULL;
        }
        if (PyObject_GetBuffer(s->tail, &tail, PyBUF_SIMPLE) < 0) {
            PyBuffer_Release(&head);
            Py_DECREF(strand);
            return NULL;
        }
        data = pg_bind_items(&head, args, n, &tail);
        PyBuffer_Release(&head);
        PyBuffer_Release(&tail);
    }
    if (data == NULL) {
        Py_DECREF(strand);
        return NULL;
    }
    Py_XSETREF(w->strand, strand);          /* the wire resumes this strand */
    w->kind = s->proto == PROTO_MYSQL ? SCAN_MYSQL : SCAN_PG;
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
    return PyObject_Vectorcall(s->slow, args, nargsf, kwnames);
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

static PyTypeObject WireCoreType;

/* Statement(proto, wire, here, write, head, tail, nparams, pack, encoding, counters, fail, error, slow, is_read) */
static PyObject *
statement_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    int proto, is_read;
    Py_ssize_t nparams;
    PyObject *wire, *here, *write, *head, *tail, *pack, *encoding, *counters, *fail, *error, *slow;
    Statement *s;
    if (!PyArg_ParseTuple(args, "iO!OOSSnOOOOOOp", &proto, &WireCoreType, &wire, &here, &write, &head, &tail,
                          &nparams, &pack, &encoding, &counters, &fail, &error, &slow, &is_read))
        return NULL;
    if (proto != PROTO_MYSQL && proto != PROTO_PG) {
        PyErr_SetString(PyExc_ValueError, "proto must be 1 (MySQL) or 2 (PostgreSQL)");
        return NULL;
    }
    s = (Statement *)type->tp_alloc(type, 0);
    if (s == NULL)
        return NULL;
    s->vectorcall = statement_call;
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
    s->off[C_READS] = slot_offset(counters, s_reads);
    s->off[C_WRITES] = slot_offset(counters, s_writes);
    s->off[C_OTHERS] = slot_offset(counters, s_others);
    return (PyObject *)s;
}

static PyTypeObject StatementType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "pysysbench._wirescan.Statement",
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
    PyObject *counters = s->counters, *name = which == C_READS ? s_reads : which == C_WRITES ? s_writes : s_others;
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

/* spec 5.11: PostgreSQL counts a write when the command tag's row count is a number other than 0 */
static int
pg_tag_counts_rows(PyObject *tag)
{
    const char *t, *rows;
    Py_ssize_t n, i, k;
    if (!PyBytes_Check(tag))
        return 0;
    t = PyBytes_AS_STRING(tag);
    n = PyBytes_GET_SIZE(tag);
    for (i = n - 1; i >= 0 && t[i] != ' '; i--)
        ;
    rows = t + i + 1;
    k = n - i - 1;
    if (k == 0 || (k == 1 && rows[0] == '0'))
        return 0;
    for (i = 0; i < k; i++)
        if (rows[i] < '0' || rows[i] > '9')
            return 0;
    return 1;
}

static PySendResult pending_delegate(Pending *p, PyObject *arg, PyObject **presult);

/* the response: raise its error through fail(), or count it */
static PySendResult
pending_finish(Pending *p, PyObject *result, PyObject **presult)
{
    Statement *s = p->stmt;
    int which;
    p->state = P_DONE;
    if (!PyTuple_Check(result) || PyTuple_GET_SIZE(result) < 4) {
        PyErr_Format(PyExc_RuntimeError, "a statement was resumed with %R", result);
        return PYGEN_ERROR;
    }
    if (s->proto == PROTO_MYSQL) {
        PyObject *fields = PyTuple_GET_ITEM(result, 1), *affected = PyTuple_GET_ITEM(result, 2);
        PyObject *err = PyTuple_GET_ITEM(result, 3);
        int bad = PyObject_IsTrue(err);
        if (bad < 0)
            return PYGEN_ERROR;
        if (bad) {
            PyObject *exc = PyObject_CallFunctionObjArgs(s->error, err, PyTuple_GET_ITEM(result, 4), NULL), *r;
            if (exc == NULL)
                return PYGEN_ERROR;
            r = PyObject_CallOneArg(s->fail, exc);   /* raises the classified error */
            Py_DECREF(exc);
            if (r == NULL)
                return PYGEN_ERROR;
            Py_DECREF(r);
        }
        int f = PyObject_IsTrue(fields), a = f ? 0 : PyObject_IsTrue(affected);
        if (f < 0 || a < 0)
            return PYGEN_ERROR;
        which = f ? C_READS : a ? C_WRITES : C_OTHERS;
    } else {
        PyObject *tag = PyTuple_GET_ITEM(result, 1), *err = PyTuple_GET_ITEM(result, 2);
        if (err != Py_None) {
            PyObject *exc = PyObject_CallOneArg(s->error, err);
            if (exc == NULL)
                return PYGEN_ERROR;
            p->sub = PyObject_CallOneArg(s->fail, exc);   /* a coroutine that raises the classified error */
            Py_DECREF(exc);
            if (p->sub == NULL)
                return PYGEN_ERROR;
            p->state = P_DELEGATING;
            return pending_delegate(p, Py_None, presult);
        }
        which = s->is_read ? C_READS : pg_tag_counts_rows(tag) ? C_WRITES : C_OTHERS;
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
    PySendResult r = PyIter_Send(p->sub, arg, presult);
    if (r != PYGEN_NEXT) {
        p->state = P_DONE;
        Py_CLEAR(p->sub);
        if (r == PYGEN_RETURN) {       /* fail() returned instead of raising: counted as other */
            Py_DECREF(*presult);
            if (bump(p->stmt, C_OTHERS) < 0)
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
    if (r == PYGEN_NEXT)
        return result;
    if (r == PYGEN_RETURN) {
        if (result == Py_None)
            PyErr_SetNone(PyExc_StopIteration);
        else
            _PyGen_SetStopIterationValue(result);
        Py_DECREF(result);
    }
    return NULL;
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
        if (p->stmt->proto == PROTO_PG) {          /* a coroutine: run it in our place */
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
pending_close(PyObject *self, PyObject *unused)
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
    .tp_name = "pysysbench._wirescan.Pending",
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


/* ------------------------------------------------------------ StrandCore --- *
 * The driving half of engine/strand.py's Strand (its base class): resume the
 * thread's coroutine with a response, with the strand registered as the running
 * strand (wire.here) and as the loop's current task, and park it on the wire it
 * yields.  Anything else it yields goes to the Python methods (_park), and so does
 * its end (_settle).  Set up once by strand_setup(here, enter_task, leave_task,
 * CancelledError). */

static PyObject *st_enter, *st_leave, *st_cancelled, *s_park, *s_settle;

typedef struct StrandCore {
    PyObject_HEAD
    PyObject *coro;
    PyObject *loop;
    PyObject *waiting;   /* the Future or wire this strand waits on, or None */
    int cancel;          /* a cancel() not yet delivered */
    PyObject *inner;     /* an awaitable inside coro that the wire's response may go to directly, or NULL */
    strand_inner_step inner_step;
} StrandCore;

/* The inner shortcut (pysysbench_strand_api.h).  An awaitable deep in the strand's
 * coroutine (a C loop of many statements: _hotpath.EventLoop) offers itself each time
 * it yields; when what it yielded reaches the strand as a wire to park on, the wire's
 * response is later given to the awaitable's step function directly, without resuming
 * the Python frames between it and the strand, which stay suspended on it.  When the
 * step ends the awaitable (a return or an exception), the awaitable keeps the outcome
 * and the strand resumes the frames, whose next send to it returns that outcome. */
static void
strand_offer(PyObject *inner, strand_inner_step step)
{
    PyObject *s;
    if (st_here == NULL || here_off < 0 || Py_TYPE(st_here) != here_type)
        return;
    s = SLOT(st_here, here_off);
    if (s == NULL || !PyObject_TypeCheck(s, &StrandCoreType))
        return;
    Py_INCREF(inner);
    Py_XSETREF(((StrandCore *)s)->inner, inner);
    ((StrandCore *)s)->inner_step = step;
}

/* become the running strand (wire.here) and the loop's current task; *outer: the one before */
static int
strand_enter(StrandCore *self, PyObject **outer)
{
    PyObject *r, *task_args[2] = {self->loop, (PyObject *)self};
    *outer = here_get(st_here);
    if (*outer == NULL)
        return -1;
    if (here_set(st_here, (PyObject *)self) < 0) {
        Py_CLEAR(*outer);
        return -1;
    }
    r = PyObject_Vectorcall(st_enter, task_args, 2, NULL);
    if (r == NULL) {
        here_set(st_here, *outer);
        Py_CLEAR(*outer);
        return -1;
    }
    Py_DECREF(r);
    return 0;
}

/* undo strand_enter (consumes outer); an exception set on entry is kept */
static int
strand_leave(StrandCore *self, PyObject *outer)
{
    PyObject *r, *et, *ev, *etb, *task_args[2] = {self->loop, (PyObject *)self};
    int rc;
    PyErr_Fetch(&et, &ev, &etb);
    r = PyObject_Vectorcall(st_leave, task_args, 2, NULL);
    rc = r == NULL ? -1 : 0;
    Py_XDECREF(r);
    if (here_set(st_here, outer) < 0)
        rc = -1;
    Py_DECREF(outer);
    if (rc == 0)
        PyErr_Restore(et, ev, etb);
    else {
        Py_XDECREF(et);
        Py_XDECREF(ev);
        Py_XDECREF(etb);
    }
    return rc;
}

/* wait for what the coroutine (or the inner awaitable) yielded (consumed): a wire resumes us
 * itself (keeping an inner awaitable's offer); anything else goes to the Python methods */
static PyObject *
strand_wait(StrandCore *self, PyObject *y)
{
    PyObject *r;
    if (PyObject_TypeCheck(y, &WireCoreType)) {
        Py_XSETREF(self->waiting, y);
        Py_RETURN_NONE;
    }
    Py_CLEAR(self->inner);
    r = PyObject_CallMethodOneArg((PyObject *)self, s_park, y);
    Py_DECREF(y);
    return r;
}

static PyObject *
strand_run(StrandCore *self, PyObject *value, PyObject *exc)
{
    PyObject *outer, *r, *y = NULL, *et, *ev, *etb;
    PySendResult status;
    if (st_here == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "strand_setup() was not called");
        return NULL;
    }
    Py_CLEAR(self->inner);                 /* an awaitable inside offers itself again as it yields */
    if (strand_enter(self, &outer) < 0)
        return NULL;
    if (exc == NULL)
        status = PyIter_Send(self->coro, value, &y);
    else {
        y = PyObject_CallMethodOneArg(self->coro, s_throw, exc);
        if (y != NULL)
            status = PYGEN_NEXT;
        else if (PyErr_ExceptionMatches(PyExc_StopIteration) && _PyGen_FetchStopIterationValue(&y) == 0)
            status = PYGEN_RETURN;          /* the coroutine returned: y is its value */
        else
            status = PYGEN_ERROR;
    }
    if (strand_leave(self, outer) < 0) {
        Py_XDECREF(y);
        Py_CLEAR(self->inner);
        return NULL;
    }
    PyErr_Fetch(&et, &ev, &etb);   /* the coroutine's exception, if any */
    if (status == PYGEN_NEXT)
        return strand_wait(self, y);
    Py_CLEAR(self->inner);
    Py_INCREF(Py_None);
    Py_XSETREF(self->waiting, Py_None);
    if (status == PYGEN_RETURN) {
        PyObject *stop = PyObject_CallOneArg(PyExc_StopIteration, y);
        Py_DECREF(y);
        if (stop == NULL)
            return NULL;
        r = PyObject_CallMethodOneArg((PyObject *)self, s_settle, stop);
        Py_DECREF(stop);
        return r;
    }
    if (et == NULL) {
        PyErr_SetString(PyExc_SystemError, "coroutine failed without an exception");
        return NULL;
    }
    PyErr_NormalizeException(&et, &ev, &etb);
    if (etb != NULL)
        PyException_SetTraceback(ev, etb);
    r = PyObject_CallMethodOneArg((PyObject *)self, s_settle, ev);
    Py_XDECREF(et);
    Py_XDECREF(ev);
    Py_XDECREF(etb);
    return r;
}

static PyObject *
strand_step(StrandCore *self, PyObject *const *args, Py_ssize_t nargs)
{
    PyObject *value = nargs > 0 ? args[0] : Py_None;
    if (nargs > 1) {
        PyErr_SetString(PyExc_TypeError, "step(value=None)");
        return NULL;
    }
    if (self->cancel) {
        PyObject *exc, *r;
        self->cancel = 0;
        exc = PyObject_CallNoArgs(st_cancelled);
        if (exc == NULL)
            return NULL;
        r = strand_run(self, NULL, exc);
        Py_DECREF(exc);
        return r;
    }
    return strand_run(self, value, NULL);
}

static PyObject *
strand_throw(StrandCore *self, PyObject *exc)
{
    return strand_run(self, NULL, exc);
}

/* the response to the inner awaitable's step; the frames above it only when it has ended */
static PyObject *
strand_inner(StrandCore *self, PyObject *value)
{
    PyObject *outer, *y = NULL, *inner = self->inner;
    PySendResult status;
    Py_INCREF(inner);
    if (strand_enter(self, &outer) < 0) {
        Py_DECREF(inner);
        return NULL;
    }
    status = self->inner_step(inner, value, &y);
    Py_DECREF(inner);
    if (strand_leave(self, outer) < 0) {
        Py_XDECREF(y);
        Py_CLEAR(self->inner);
        return NULL;
    }
    if (status == PYGEN_NEXT)
        return strand_wait(self, y);
    Py_CLEAR(self->inner);                      /* it ended and kept its outcome: the frames take it */
    return strand_run(self, Py_None, NULL);
}

/* called by the wire this strand waits on, with the scanned response */
static PyObject *
strand_resume(StrandCore *self, PyObject *value)
{
    Py_INCREF(Py_None);
    Py_XSETREF(self->waiting, Py_None);
    if (self->cancel)
        return strand_step(self, NULL, 0);
    if (self->inner != NULL)
        return strand_inner(self, value);
    return strand_run(self, value, NULL);
}

/* called by the wire this strand waits on when its connection is lost */
static PyObject *
strand_fail(StrandCore *self, PyObject *exc)
{
    Py_INCREF(Py_None);
    Py_XSETREF(self->waiting, Py_None);
    return strand_run(self, NULL, exc);
}

static PyObject *
strand_setup(PyObject *module, PyObject *args)
{
    PyObject *here, *enter, *leave, *cancelled;
    if (!PyArg_ParseTuple(args, "OOOO", &here, &enter, &leave, &cancelled))
        return NULL;
    Py_INCREF(here);
    Py_XSETREF(st_here, here);
    Py_INCREF(Py_TYPE(here));
    Py_XSETREF(here_type, Py_TYPE(here));
    here_off = slot_offset(here, s_strand);
    Py_INCREF(enter);
    Py_XSETREF(st_enter, enter);
    Py_INCREF(leave);
    Py_XSETREF(st_leave, leave);
    Py_INCREF(cancelled);
    Py_XSETREF(st_cancelled, cancelled);
    Py_RETURN_NONE;
}

static PyObject *
strandcore_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    StrandCore *s = (StrandCore *)type->tp_alloc(type, 0);
    if (s == NULL)
        return NULL;
    Py_INCREF(Py_None);
    s->coro = Py_None;
    Py_INCREF(Py_None);
    s->loop = Py_None;
    Py_INCREF(Py_None);
    s->waiting = Py_None;
    return (PyObject *)s;
}

static int
strandcore_traverse(StrandCore *s, visitproc visit, void *arg)
{
    Py_VISIT(s->coro);
    Py_VISIT(s->loop);
    Py_VISIT(s->waiting);
    Py_VISIT(s->inner);
    return 0;
}

static int
strandcore_clear(StrandCore *s)
{
    Py_CLEAR(s->coro);
    Py_CLEAR(s->loop);
    Py_CLEAR(s->waiting);
    Py_CLEAR(s->inner);
    return 0;
}

static void
strandcore_dealloc(StrandCore *s)
{
    PyObject_GC_UnTrack(s);
    strandcore_clear(s);
    Py_TYPE(s)->tp_free((PyObject *)s);
}

static PyMemberDef strandcore_members[] = {
    {"coro", T_OBJECT, offsetof(StrandCore, coro), 0, "the coroutine driven"},
    {"loop", T_OBJECT, offsetof(StrandCore, loop), 0, "its event loop"},
    {"_waiting", T_OBJECT, offsetof(StrandCore, waiting), 0, "the Future or wire it waits on, or None"},
    {"_cancel", T_BOOL, offsetof(StrandCore, cancel), 0, "a cancel() not yet delivered"},
    {NULL},
};

static PyMethodDef strandcore_methods[] = {
    {"step", (PyCFunction)(void (*)(void))strand_step, METH_FASTCALL, "step(value=None): resume the coroutine"},
    {"throw", (PyCFunction)strand_throw, METH_O, "throw(exc): raise exc inside the coroutine"},
    {"resume", (PyCFunction)strand_resume, METH_O, "the wire's response"},
    {"fail", (PyCFunction)strand_fail, METH_O, "the wire's connection was lost"},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject StrandCoreType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "pysysbench._wirescan.StrandCore",
    .tp_basicsize = sizeof(StrandCore),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "The driving half of engine/strand.py's Strand.",
    .tp_new = strandcore_new,
    .tp_dealloc = (destructor)strandcore_dealloc,
    .tp_traverse = (traverseproc)strandcore_traverse,
    .tp_clear = (inquiry)strandcore_clear,
    .tp_members = strandcore_members,
    .tp_methods = strandcore_methods,
};


static PyMethodDef methods[] = {
    {"mysql_scan", mysql_scan, METH_VARARGS, "mysql_scan(buf, deprecate_eof, cache_metadata=False) -> None | (end, fields, affected, errno, message)"},
    {"pg_scan", pg_scan, METH_VARARGS, "pg_scan(buf) -> None | (end, tag, error, described)"},
    {"pg_bind", pg_bind, METH_VARARGS, "pg_bind(head, args, tail) -> Bind message + tail"},
    {"strand_setup", strand_setup, METH_VARARGS, "strand_setup(here, enter_task, leave_task, CancelledError)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_wirescan", NULL, -1, methods};

PyMODINIT_FUNC
PyInit__wirescan(void)
{
    PyObject *m;
#define INTERN(var, text) if ((var = PyUnicode_InternFromString(text)) == NULL) return NULL
    INTERN(s_resume, "resume");
    INTERN(s_strand, "strand");
    INTERN(s_done, "done");
    INTERN(s_set_result, "set_result");
    INTERN(s_reads, "reads");
    INTERN(s_writes, "writes");
    INTERN(s_others, "others");
    INTERN(s_throw, "throw");
    INTERN(s_park, "_park");
    INTERN(s_settle, "_settle");
#undef INTERN
    if ((one = PyLong_FromLong(1)) == NULL)
        return NULL;
    if (PyType_Ready(&WireCoreType) < 0 || PyType_Ready(&StatementType) < 0 || PyType_Ready(&PendingType) < 0 ||
        PyType_Ready(&StrandCoreType) < 0)
        return NULL;
    m = PyModule_Create(&module);
    if (m == NULL)
        return NULL;
    {
        static StrandApi api = {STRAND_API_VERSION, strand_offer};
        PyObject *cap = PyCapsule_New(&api, STRAND_API_CAPSULE, NULL);
        if (cap == NULL || PyModule_AddObject(m, "_strand_api", cap) < 0) {
            Py_XDECREF(cap);
            Py_DECREF(m);
            return NULL;
        }
    }
    Py_INCREF(&WireCoreType);
    Py_INCREF(&StatementType);
    Py_INCREF(&StrandCoreType);
    if (PyModule_AddObject(m, "WireCore", (PyObject *)&WireCoreType) < 0 ||
        PyModule_AddObject(m, "StrandCore", (PyObject *)&StrandCoreType) < 0 ||
        PyModule_AddObject(m, "Statement", (PyObject *)&StatementType) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
