/* The private interface between the pieces of pysysbench's C extension (pysysbench._native).
 *
 * One extension module is built from one C file per layer, each beside the Python twin it
 * stands for (pysysbench/native.py decides which of the two runs):
 *
 *   _native.c                 the module: readies every piece, the shared helpers, the wire protocols
 *   handoff.c                 the strand running now (handoff.py's `here`), shared by wire and strand
 *   rand.c                    sysbench's uniform / special / string draws            (rand.py)
 *   stats/recorder.c          the latency recorder                                   (stats/recorder.py)
 *   drivers/wire.c            the lean wire's core: WireCore, Statement, Pending     (drivers/wire.py)
 *   drivers/mysql/wire.c      MySQL's scanner and COM_STMT_EXECUTE packets           (drivers/mysql/scan.py, wire.py)
 *   drivers/pgsql/wire.c      PostgreSQL's scanner and Bind messages                 (drivers/pgsql/scan.py, wire.py)
 *   engine/strand.c           the strand's driving half                              (engine/strand.py)
 *   engine/event_loop.c       the time-limited loop of the bundled OLTP events       (engine/worker.py)
 *                             and the --events counter in shared memory              (engine/budget.py)
 *   memory.c                  glibc's mallopt (the mmap threshold's pin), huge pages (memory.py)
 *                             for the Lua states' heap
 *   lua/bridge.c              a Lua state's events as an event source: lua_resume    (lua/state.py)
 *   workloads/builtin.c       the built-in tests' inner loops (cpu, memory, ...)   (workloads/builtin_core.py)
 *
 * A piece calls only pieces of its own layer or below (as the Python does); the one call
 * that would go up -- a wire resuming the strand that waits on it -- goes through the
 * hand-off, where the strand core registers itself.  Everything is one shared object, so
 * the calls between pieces stay direct C calls. */

#ifndef PYSYSBENCH_NATIVE_H
#define PYSYSBENCH_NATIVE_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>

#define IS_NONE(x) ((x) == NULL || (x) == Py_None)
#define SLOT(obj, offset) (*(PyObject **)((char *)(obj) + (offset)))

/* ------------------------------------------------------------ _native.c: helpers --- */

/* the offset of a writable __slots__ member `name` of obj's type, or -1 */
Py_ssize_t native_slot_offset(PyObject *obj, PyObject *name);
/* a tuple of n new references; NULL (and every item released) if one is NULL */
PyObject *native_tuple_of(Py_ssize_t n, PyObject **items);

/* An event source: what an EventLoop (engine/event_loop.c) runs instead of steps -- a
 * workload that draws its statements itself (lua/bridge.c: a Lua state's event).  Its
 * objects are of a subtype of EventSourceType (defined in _native.c, so that a workload's
 * source and the engine's loop meet below both) and start with EVENT_SOURCE_HEAD. */
enum {
    SOURCE_STATEMENT = 0,   /* *stmt and args[0 .. *nargs) (new references) are the next statement to await */
    SOURCE_END = 1,         /* the event has ended: record it */
    SOURCE_STOP = 2,        /* the event asks its thread to stop (not recorded) */
    SOURCE_PYTHON = 3,      /* the rest of the event is the workload's Python: *handover (a new reference) */
};
#define SOURCE_MAX_ARGS 16
typedef struct {
    /* the event's next step: first = 1 when it begins, else after its last statement ended;
     * SOURCE_*, or -1 with an exception */
    int (*next)(PyObject *source, int first, PyObject **stmt, PyObject **args, Py_ssize_t *nargs,
                PyObject **handover);
} EventSourceOps;
#define EVENT_SOURCE_HEAD PyObject_HEAD const EventSourceOps *ops;
typedef struct {
    EVENT_SOURCE_HEAD
} EventSource;
extern PyTypeObject EventSourceType;

/* ----------------------------------------------------------------- handoff.c --- */

int handoff_init(PyObject *module);
/* handoff_setup(here): the object whose `strand` slot says which strand runs now */
int handoff_setup(PyObject *here);
/* here.strand of the hand-off object `here` (a new reference; None when none runs) */
PyObject *handoff_get(PyObject *here);
int handoff_set(PyObject *here, PyObject *value);
/* the strand running now, borrowed (NULL: none, or the hand-off is not set up) */
PyObject *handoff_current(void);
/* the hand-off object given to handoff_setup, borrowed (NULL before) */
PyObject *handoff_here(void);
/* the strand core, registered by engine/strand.c: its type and its resume(response) */
extern PyTypeObject *handoff_strand_type;
extern PyObject *(*handoff_resume)(PyObject *strand, PyObject *response);
/* make the running strand the loop's current asyncio task if it deferred that (a strand
 * handing a response straight to a C awaitable registers itself only when Python code
 * that may ask asyncio for its task is about to run): 0, or -1 with an exception.  NULL
 * until engine/strand.c sets it. */
extern int (*handoff_as_task)(void);
/* 0, or what handoff_as_task returns: call before running code of unknown kind */
static inline int
handoff_ensure_task(void)
{
    return handoff_as_task == NULL ? 0 : handoff_as_task();
}

/* -------------------------------------------------------------------- rand.c --- */

int rand_init(PyObject *module);

/* --------------------------------------------------------- stats/recorder.c --- */

typedef struct Recorder Recorder;
extern PyTypeObject RecorderType;
int recorder_init(PyObject *module);
int recorder_add(Recorder *r, long long tid, long long lat);

/* ---------------------------------------------------------- drivers/wire.c --- */

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
/* the protocol of a wire kind, or NULL (kind 0, or out of range) */
const WireProtocol *wire_protocol(int kind);

extern PyTypeObject WireCoreType;
/* o is the lean wire's own awaitable (a Pending): it runs no driver library code */
int wire_is_pending(PyObject *o);
int wire_init(PyObject *module);

/* ------------------------------------------------- drivers/{mysql,pgsql}/wire.c --- */

extern const WireProtocol mysql_wire_protocol;
extern const WireProtocol pg_wire_protocol;
int mysql_init(PyObject *module);
int pg_init(PyObject *module);

/* -------------------------------------------------------- engine/strand.c --- */

/* Give `value` to an awaitable that offered itself.  PYGEN_NEXT: it waits again, *yielded is
 * what it yields.  PYGEN_RETURN: it has ended (returned or raised) and keeps that outcome for
 * the next send() the Python frames above it make; *yielded is left NULL.  Never PYGEN_ERROR. */
typedef PySendResult (*strand_inner_step)(PyObject *inner, PyObject *value, PyObject **yielded);
/* an awaitable that yields many times inside one await offers itself to the running strand,
 * which may then give it the wire's responses directly */
void strand_offer(PyObject *inner, strand_inner_step step);
int strand_init(PyObject *module);

/* ---------------------------------------------------- engine/event_loop.c --- */

int event_loop_init(PyObject *module);

/* ------------------------------------------------------------ lua/bridge.c --- */

int bridge_init(PyObject *module);

/* -------------------------------------------------------------- memory.c --- */

/* adds mallopt and heap_hugepages (glibc only; absent elsewhere) */
int memory_init(PyObject *module);

/* ---------------------------------------------------- workloads/builtin.c --- */

int builtin_init(PyObject *module);

#endif
