/* MySQL's half of the lean wire in C: where a response ends (the twin of
 * drivers/mysql/scan.py's mysql_scan; its docstring is the contract and the unit tests run
 * both on the same buffers), the COM_STMT_EXECUTE packet of one execution, and what a
 * scanned response counts as (spec 5.11) -- the wire core (drivers/wire.c) asks these
 * through mysql_wire_protocol. */

#include "native_runtime.h"
#include "native_drivers.h"
#include <stdint.h>

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
static PyObject *
mysql_result(Py_ssize_t end, long long fields, unsigned long long affected, long err, const char *msg,
             Py_ssize_t msglen)
{
    PyObject *items[5] = {PyLong_FromSsize_t(end), PyLong_FromLongLong(fields < 0 ? 0LL : fields),
                          PyLong_FromUnsignedLongLong(affected), PyLong_FromLong(err),
                          PyBytes_FromStringAndSize(msg, msglen)};
    return native_tuple_of(5, items);
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
mysql_scan(PyObject *Py_UNUSED(self), PyObject *args)
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


/* the statement's request: NULL without an exception when the parameter count is not the
 * prepared one (the Python statement raises the driver's error for it) */
static PyObject *
mysql_encode(Statement *s, PyObject *const *args, Py_ssize_t n)
{
    if (n != s->nparams)
        return NULL;
    return mysql_packet(s, args, n);
}

/* (end, fields, affected, errno, message): a read (a result set), a write (rows changed) or
 * other, and the server's error when there is one (fail() raises it: the count is only taken
 * if it does not) */
static int
mysql_outcome(Statement *s, PyObject *result, int *which, PyObject **error)
{
    int bad, f, a;
    if (!PyTuple_Check(result) || PyTuple_GET_SIZE(result) < 5) {
        PyErr_Format(PyExc_RuntimeError, "a statement was resumed with %R", result);
        return -1;
    }
    bad = PyObject_IsTrue(PyTuple_GET_ITEM(result, 3));
    if (bad < 0)
        return -1;
    if (bad) {
        *error = PyObject_CallFunctionObjArgs(s->error, PyTuple_GET_ITEM(result, 3), PyTuple_GET_ITEM(result, 4),
                                              NULL);
        if (*error == NULL)
            return -1;
    }
    f = PyObject_IsTrue(PyTuple_GET_ITEM(result, 1));
    a = f ? 0 : PyObject_IsTrue(PyTuple_GET_ITEM(result, 2));
    if (f < 0 || a < 0) {
        if (bad)
            Py_CLEAR(*error);
        return -1;
    }
    *which = f ? COUNT_READS : a ? COUNT_WRITES : COUNT_OTHERS;
    return bad;
}

static PyObject *
mysql_wire_scan(WireCore *w, const unsigned char *b, Py_ssize_t n)
{
    return mysql_scan_buf(b, n, w->deprecate_eof, w->cache_metadata);
}

static const WireProtocol mysql_wire_protocol = {"mysql", mysql_wire_scan, mysql_encode, mysql_outcome, 0};

static PyMethodDef mysql_methods[] = {
    {"mysql_scan", mysql_scan, METH_VARARGS, "mysql_scan(buf, deprecate_eof, cache_metadata=False) -> None | (end, fields, affected, errno, message)"},
    {NULL, NULL, 0, NULL},
};

int
mysql_init(PyObject *m)
{
    wire_register_protocol(WIRE_MYSQL, &mysql_wire_protocol);
    return PyModule_AddFunctions(m, mysql_methods);
}
