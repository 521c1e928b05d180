/* PostgreSQL's half of the lean wire in C: where a response ends (the twin of
 * drivers/pgsql/scan.py's pg_scan), the Bind message of one execution (the twin of
 * drivers/pgsql/wire.py's _py_pg_bind) and what a scanned response counts as (spec 5.11) -- the
 * wire core (drivers/wire.c) asks these through pg_wire_protocol. */

#include "native_runtime.h"
#include "native_drivers.h"
#include <stdint.h>
#include <stdio.h>
#include <string.h>

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
                out = native_tuple_of(4, items);
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
pg_scan(PyObject *Py_UNUSED(self), PyObject *args)
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
 * tail (Execute + Sync) -- the Python twin is drivers/pgsql/wire.py's _py_pg_bind */
/* x in decimal (as "%lld" prints it) into buf (at least 21 bytes): its length */
static Py_ssize_t
pg_decimal(char *buf, long long x)
{
    char tmp[24];
    int k = 0;
    Py_ssize_t n = 0;
    unsigned long long u = x < 0 ? 0ULL - (unsigned long long)x : (unsigned long long)x;
    do {
        tmp[k++] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (x < 0)
        buf[n++] = '-';
    while (k)
        buf[n++] = tmp[--k];
    return n;
}

#define PG_FEW 16    /* parameters whose bookkeeping lives on the stack (the bundled statements have 1-4) */

static PyObject *
pg_bind_items(const Py_buffer *headp, PyObject *const *items, Py_ssize_t n, const Py_buffer *tailp)
{
    Py_buffer head = *headp, tail = *tailp;
    PyObject *out = NULL, **temps = NULL, *few_temps[PG_FEW];
    const char **ptrs = NULL, *few_ptrs[PG_FEW];
    Py_ssize_t *lens = NULL, i, total, bind_len, few_lens[PG_FEW];
    char (*nums)[24] = NULL, few_nums[PG_FEW][24];
    int heap = n > PG_FEW;
    unsigned char *w;

    if (n > 32767) {
        PyErr_SetString(PyExc_ValueError, "too many parameters for one statement");
        return NULL;
    }
    if (heap) {
        ptrs = PyMem_Calloc(n, sizeof(*ptrs));
        lens = PyMem_Calloc(n, sizeof(*lens));
        temps = PyMem_Calloc(n, sizeof(*temps));
        nums = PyMem_Calloc(n, sizeof(*nums));
        if (!ptrs || !lens || !temps || !nums) {
            PyErr_NoMemory();
            goto done;
        }
    } else {
        ptrs = few_ptrs;
        lens = few_lens;
        temps = few_temps;
        nums = few_nums;
        for (i = 0; i < n; i++)
            temps[i] = NULL;
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
            lens[i] = pg_decimal(nums[i], x);
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
    if (heap) {
        PyMem_Free(temps);
        PyMem_Free(ptrs);
        PyMem_Free(lens);
        PyMem_Free(nums);
    }
    return out;
}

static PyObject *
pg_bind(PyObject *Py_UNUSED(self), PyObject *args)
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

static PyObject *
pg_encode(Statement *s, PyObject *const *args, Py_ssize_t n)
{
    Py_buffer head, tail;
    PyObject *data;
    if (PyBytes_CheckExact(s->head) && PyBytes_CheckExact(s->tail)) {    /* what the driver gives: no buffer export */
        head.buf = PyBytes_AS_STRING(s->head);
        head.len = PyBytes_GET_SIZE(s->head);
        tail.buf = PyBytes_AS_STRING(s->tail);
        tail.len = PyBytes_GET_SIZE(s->tail);
        return pg_bind_items(&head, args, n, &tail);
    }
    if (PyObject_GetBuffer(s->head, &head, PyBUF_SIMPLE) < 0)
        return NULL;
    if (PyObject_GetBuffer(s->tail, &tail, PyBUF_SIMPLE) < 0) {
        PyBuffer_Release(&head);
        return NULL;
    }
    data = pg_bind_items(&head, args, n, &tail);
    PyBuffer_Release(&head);
    PyBuffer_Release(&tail);
    return data;
}

/* (end, tag, error, described): the ErrorResponse when there is one (fail() is a coroutine
 * that raises it; if it returns, the statement counts as other), else a read when the
 * statement returns rows, a write when the command tag counts rows, other */
static int
pg_outcome(Statement *s, PyObject *result, int *which, PyObject **error)
{
    PyObject *err;
    if (!PyTuple_Check(result) || PyTuple_GET_SIZE(result) < 4) {
        PyErr_Format(PyExc_RuntimeError, "a statement was resumed with %R", result);
        return -1;
    }
    err = PyTuple_GET_ITEM(result, 2);
    if (err != Py_None) {
        *which = COUNT_OTHERS;
        *error = PyObject_CallOneArg(s->error, err);
        return *error == NULL ? -1 : 1;
    }
    *which = s->is_read ? COUNT_READS : pg_tag_counts_rows(PyTuple_GET_ITEM(result, 1)) ? COUNT_WRITES : COUNT_OTHERS;
    return 0;
}

static PyObject *
pg_wire_scan(WireCore *Py_UNUSED(w), const unsigned char *b, Py_ssize_t n)
{
    return pg_scan_buf(b, n);
}

static const WireProtocol pg_wire_protocol = {"pgsql", pg_wire_scan, pg_encode, pg_outcome, 1};

static PyMethodDef pg_methods[] = {
    {"pg_scan", pg_scan, METH_VARARGS, "pg_scan(buf) -> None | (end, tag, error, described)"},
    {"pg_bind", pg_bind, METH_VARARGS, "pg_bind(head, args, tail) -> Bind message + tail"},
    {NULL, NULL, 0, NULL},
};

int
pg_init(PyObject *m)
{
    wire_register_protocol(WIRE_PGSQL, &pg_wire_protocol);
    return PyModule_AddFunctions(m, pg_methods);
}
