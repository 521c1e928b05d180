/* The drivers layer of pysysbench's C extension (the C layers: native_runtime.h).
 *
 *   drivers/wire.c         the lean wire's core: WireCore, Statement, Pending;   (drivers/wire.py)
 *                          the wire protocols by kind
 *   drivers/mysql/wire.c   MySQL's scanner and COM_STMT_EXECUTE packets           (drivers/mysql/scan.py, wire.py)
 *   drivers/pgsql/wire.c   PostgreSQL's scanner and Bind messages                 (drivers/pgsql/scan.py, wire.py)
 *
 * A driver folder's C uses the wire core, never the other folder's C: each registers its
 * protocol with the core in its init. */

#ifndef PYSYSBENCH_NATIVE_DRIVERS_H
#define PYSYSBENCH_NATIVE_DRIVERS_H

#ifndef PY_SSIZE_T_CLEAN
#define PY_SSIZE_T_CLEAN
#endif
#include <Python.h>

/* ------------------------------------------------------------- drivers/wire.c --- */

typedef struct {
    PyObject_HEAD
    PyObject *strand;    /* the strand waiting for the response, or None */
    PyObject *waiter;    /* the Future of a request made outside a strand, or None */
    PyObject *scan;      /* kind 0: scanner callable(buffer) -> None | result */
    PyObject *pending;   /* bytearray: a response received in pieces */
    PyObject *lost;      /* the exception that ended the connection, or None */
    int kind;            /* 0: call scan; else the wire protocol (WIRE_MYSQL, WIRE_PGSQL) */
    int deprecate_eof;
    int cache_metadata;  /* MySQL: MARIADB_CLIENT_CACHE_METADATA negotiated */
    int fd;              /* the plain socket (no TLS) statements may be sent on directly, or -1 */
    int direct;          /* 1: the transport has nothing queued (a response has come since its last write) */
} WireCore;

typedef struct WireProtocol WireProtocol;

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    const WireProtocol *protocol;
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

enum { COUNT_READS = 0, COUNT_WRITES = 1, COUNT_OTHERS = 2 };

/* What the wire core asks of a protocol (one per driver folder, drivers/<name>/wire.c). */
struct WireProtocol {
    const char *name;
    /* None (not all there) or the scanned response of b[0:n] */
    PyObject *(*scan)(WireCore *w, const unsigned char *b, Py_ssize_t n);
    /* the request of one execution: bytes; NULL with no exception = take the Python statement */
    PyObject *(*encode)(Statement *s, PyObject *const *args, Py_ssize_t n);
    /* a scanned response: 0 = count it (*which), 1 = the server's error (*error, a new reference), -1 */
    int (*outcome)(Statement *s, PyObject *result, int *which, PyObject **error);
    int fail_is_coroutine;   /* the driver's fail(exc) returns a coroutine to await (PostgreSQL) */
};

enum { WIRE_CALL = 0, WIRE_MYSQL = 1, WIRE_PGSQL = 2, WIRE_PROTOCOLS = 3 };
/* the protocol of a wire kind, or NULL (kind 0, out of range, or not registered) */
const WireProtocol *wire_protocol(int kind);
/* a driver folder's init registers its protocol under its wire kind (drivers/wire.py: Wire.kind) */
void wire_register_protocol(int kind, const WireProtocol *protocol);

extern PyTypeObject WireCoreType;
/* o is the lean wire's own awaitable (a Pending): it runs no driver library code */
int wire_is_pending(PyObject *o);
int wire_init(PyObject *module);

/* --------------------------------------------------- drivers/{mysql,pgsql}/wire.c --- */

int mysql_init(PyObject *module);
int pg_init(PyObject *module);

#endif
