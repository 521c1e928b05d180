/* Where a server's response ends, without decoding it: the C twin of
 * pysysbench/drivers/wirescan.py (its docstring is the contract; the unit tests
 * run both on the same buffers).  Built as an optional extension: without a
 * compiler pysysbench falls back to the Python functions. */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
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

static PyMethodDef methods[] = {
    {"mysql_scan", mysql_scan, METH_VARARGS, "mysql_scan(buf, deprecate_eof) -> None | (end, fields, affected, errno, message)"},
    {"pg_scan", pg_scan, METH_VARARGS, "pg_scan(buf) -> None | (end, tag, error, described)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_wirescan", NULL, -1, methods};

PyMODINIT_FUNC
PyInit__wirescan(void)
{
    return PyModule_Create(&module);
}
