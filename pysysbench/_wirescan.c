/* Where a server's response ends, without decoding it: the C twin of
 * pysysbench/drivers/wirescan.py (its docstring is the contract; the unit tests
 * run both on the same buffers).  Built as an optional extension: without a
 * compiler pysysbench falls back to the Python functions. */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

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
    return Py_BuildValue("(nLKly#)", end, fields < 0 ? 0LL : fields, affected, err, msg, msglen);
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

static PyObject *
mysql_scan(PyObject *self, PyObject *args)
{
    Py_buffer view;
    int deprecate_eof;
    const unsigned char *b;
    Py_ssize_t n, pos = 0, at, end;
    long long fields = -1;
    unsigned long long affected = 0, value, columns, i;
    unsigned int status;
    unsigned char first;
    packet_t p;
    PyObject *out = NULL;

    if (!PyArg_ParseTuple(args, "y*p", &view, &deprecate_eof))
        return NULL;
    b = (const unsigned char *)view.buf;
    n = view.len;
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
        lenenc(b, p.start, end, &columns);
        if (fields < 0)
            fields = (long long)columns;
        for (i = 0; i < columns + (deprecate_eof ? 0 : 1); i++) {
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
    PyBuffer_Release(&view);
    return out;
}

static PyObject *
pg_scan(PyObject *self, PyObject *args)
{
    Py_buffer view;
    const unsigned char *b;
    Py_ssize_t n, pos = 0, end, tag_at = -1, tag_len = 0, err_at = -1, err_len = 0;
    unsigned char kind;
    uint32_t length;
    int described = -1;
    PyObject *out = NULL, *tag, *err;

    if (!PyArg_ParseTuple(args, "y*", &view))
        return NULL;
    b = (const unsigned char *)view.buf;
    n = view.len;
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
            if (tag && err)
                out = Py_BuildValue("(nNNi)", end, tag, err, described);
            else {
                Py_XDECREF(tag);
                Py_XDECREF(err);
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
    PyBuffer_Release(&view);
    return out;
}

/* pg_bind(head, args, tail) -> bytes: a Bind message of args as text parameters
 * ('B', length, head = portal + statement name + "no format codes", the parameter
 * count, each as int32 length + text (-1 = NULL), "no result format codes"), then
 * tail (Execute + Sync) -- the Python twin is wire._py_pg_bind */
static PyObject *
pg_bind(PyObject *self, PyObject *args)
{
    Py_buffer head, tail;
    PyObject *values, *out = NULL, **temps = NULL;
    const char **ptrs = NULL;
    Py_ssize_t *lens = NULL, n, i, total, bind_len;
    char (*nums)[24] = NULL;
    unsigned char *w;

    if (!PyArg_ParseTuple(args, "y*O!y*", &head, &PyTuple_Type, &values, &tail))
        return NULL;
    n = PyTuple_GET_SIZE(values);
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
        PyObject *v = PyTuple_GET_ITEM(values, i);
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
    PyBuffer_Release(&head);
    PyBuffer_Release(&tail);
    return out;
}

static PyMethodDef methods[] = {
    {"mysql_scan", mysql_scan, METH_VARARGS, "mysql_scan(buf, deprecate_eof) -> None | (end, fields, affected, errno, message)"},
    {"pg_scan", pg_scan, METH_VARARGS, "pg_scan(buf) -> None | (end, tag, error, described)"},
    {"pg_bind", pg_bind, METH_VARARGS, "pg_bind(head, args, tail) -> Bind message + tail"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_wirescan", NULL, -1, methods};

PyMODINIT_FUNC
PyInit__wirescan(void)
{
    return PyModule_Create(&module);
}
