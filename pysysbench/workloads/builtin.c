/* The inner loops of sysbench's built-in tests (cpu, memory, threads, mutex, fileio),
 * the C twin of workloads/builtin_core.py (the contract and the fallback).
 *
 * `Builtin(kind, params, fds)` is one test's shared state (its options, the memory test's
 * global buffer, the mutexes, the files and the fileio request generator); `runner(tid, seed)`
 * makes one benchmark thread's `BuiltinRunner`, whose
 *
 *   batch(record, max_n, deadline_ns, budget_ns) -> (events, finished)
 *
 * runs up to max_n events with the GIL released (so the threads run at once, as sysbench's
 * do) until the budget or the deadline (0: none) is over or the test has no more events
 * (`finished`: the memory test's total size, the mutex test's one event per thread), then
 * records each event's latency into `record` (the C Recorder, or a callable(tid, ns)).
 * `step()` runs one event (rate mode: the engine times it).  An I/O error raises
 * OSError(errno, message) with the events before it recorded. */

#include "native_core.h"
#include "native_runtime.h"
#include "native_stats.h"
#include "native_workloads.h"
#include <structmember.h>

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

enum { K_CPU = 0, K_MEMORY = 1, K_THREADS = 2, K_MUTEX = 3, K_FILEIO = 4 };
enum { M_SEQWR = 0, M_SEQREWR = 1, M_SEQRD = 2, M_RNDRD = 3, M_RNDWR = 4, M_RNDRW = 5 };
enum { OP_READ = 0, OP_WRITE = 1, OP_FSYNC = 2 };
enum { MEM_NONE = 0, MEM_READ = 1, MEM_WRITE = 2 };
#define LATS 8192          /* latencies kept between two recordings */
#define NPARAMS 16

typedef struct {
    PyObject_HEAD
    int kind;
    long long p[NPARAMS];        /* the kind's integer parameters (builtin_core.py PARAMS) */
    double ratio;                /* fileio: --file-rw-ratio */
    /* memory */
    size_t *global_buf;
    long long claimed_bytes;     /* atomic: bytes handed out so far */
    /* threads / mutex */
    pthread_mutex_t *locks;
    long long nlocks;
    volatile long long global_var;
    /* fileio */
    int *fds;
    int nfiles;
    char **maps;
    pthread_mutex_t gen;         /* the request generator's state, as sysbench's global mutex */
    long long position, req_performed;
    int current_file, fsynced_file, is_dirty;
    long long reads, writes, fsyncs, bytes_read, bytes_written;   /* atomic */
} Builtin;

typedef struct {
    PyObject_HEAD
    Builtin *test;
    long long tid;
    PyObject *tid_obj;
    uint64_t s[2];               /* core/rand.c's xoroshiro128+ (XORO_2018), seeded by splitmix64 */
    size_t *local_buf;
    char *io_buf;
    long long my_reads, my_writes;
    int done_once;               /* mutex: the thread's one event is done */
    volatile int slot;           /* the last event's histogram slot */
    long long left;              /* memory: this thread's events still to do (-1: no limit) */
    volatile unsigned long long sink;
    int err;                     /* errno of a failed event */
    char msg[256];
    long long lat[LATS];
} BuiltinRunner;

static PyTypeObject BuiltinType, BuiltinRunnerType;

static long long
now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);     /* time.perf_counter_ns()'s clock on Linux */
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* --- the events ---------------------------------------------------------------------- */

static int
ev_cpu(BuiltinRunner *r)
{
    unsigned long long c, l, n = 0, max = (unsigned long long)r->test->p[0];
    double t;
    for (c = 3; c < max; c++) {
        t = sqrt((double)c);
        for (l = 2; l <= t; l++)
            if (c % l == 0)
                break;
        if (l > t)
            n++;
    }
    r->sink = n;
    return 0;
}

static int
ev_memory(BuiltinRunner *r)
{
    Builtin *b = r->test;
    long long block = b->p[0], total = b->p[1];
    size_t words = (size_t)block / sizeof(size_t), i;
    volatile size_t *buf = b->p[2] ? r->local_buf : b->global_buf;
    size_t tmp = 0;
    (void)total;
    if (r->left == 0)
        return 1;
    r->left--;
    __atomic_fetch_add(&b->claimed_bytes, block, __ATOMIC_RELAXED);
    switch (b->p[3] * 2 + (b->p[4] != 0)) {
    case MEM_WRITE * 2:
        for (i = 0; i < words; i++)
            buf[i] = words - i;
        break;
    case MEM_READ * 2:
        for (i = 0; i < words; i++)
            tmp = buf[i];
        break;
    case MEM_WRITE * 2 + 1:
        for (i = 0; i < words; i++)
            buf[(size_t)(xoro_double(r->s, XORO_2018) * words)] = i;
        break;
    case MEM_READ * 2 + 1:
        for (i = 0; i < words; i++)
            tmp = buf[(size_t)(xoro_double(r->s, XORO_2018) * words)];
        break;
    default:                              /* none */
        for (i = 0; i < words; i++)
            tmp += words - i;
        break;
    }
    r->sink = tmp;
    return 0;
}

static int
ev_threads(BuiltinRunner *r)
{
    Builtin *b = r->test;
    pthread_mutex_t *m = &b->locks[r->tid % b->nlocks];
    long long i, yields = b->p[0];
    for (i = 0; i < yields; i++) {
        pthread_mutex_lock(m);
        sched_yield();
        pthread_mutex_unlock(m);
    }
    return 0;
}

static int
ev_mutex(BuiltinRunner *r)
{
    Builtin *b = r->test;
    long long n = b->p[1], loops = b->p[2], i;
    if (r->done_once)
        return 1;
    r->done_once = 1;
    do {
        pthread_mutex_t *m = &b->locks[xoro_next(r->s, XORO_2018) % (uint64_t)b->nlocks];
        for (i = 0; i < loops; i++)
            __asm__ __volatile__("" ::: "memory");
        pthread_mutex_lock(m);
        b->global_var++;
        pthread_mutex_unlock(m);
    } while (--n > 0);
    return 0;
}

/* fileio parameters (builtin_core.FILEIO_PARAMS) */
#define F_MODE p[0]
#define F_FILE_SIZE p[1]
#define F_TOTAL p[2]
#define F_BLOCK p[3]
#define F_REQUEST p[4]
#define F_FSYNC_FREQ p[5]
#define F_FSYNC_ALL p[6]
#define F_FDATASYNC p[7]
#define F_MMAP p[8]

static int
do_fsync(BuiltinRunner *r, int id)
{
    Builtin *b = r->test;
    int rc;
    if (b->F_MMAP)
        rc = msync(b->maps[id], (size_t)b->F_FILE_SIZE, MS_SYNC | MS_INVALIDATE);
    else
        rc = b->F_FDATASYNC ? fdatasync(b->fds[id]) : fsync(b->fds[id]);
    if (rc != 0) {
        r->err = errno;
        snprintf(r->msg, sizeof r->msg, "Failed to fsync file! file: %d", b->fds[id]);
        return -1;
    }
    __atomic_fetch_add(&b->fsyncs, 1, __ATOMIC_RELAXED);
    return 0;
}

/* the next request, under the generator's lock (sysbench's file_get_seq_request /
 * file_get_rnd_request) */
static int
next_request(BuiltinRunner *r, int *file, long long *pos, long long *size)
{
    Builtin *b = r->test;
    long long mode = b->F_MODE;
    int op;
    pthread_mutex_lock(&b->gen);
    if (mode <= M_SEQRD) {
        op = mode == M_SEQRD ? OP_READ : OP_WRITE;
        if (b->F_FSYNC_FREQ && op == OP_WRITE && b->is_dirty && b->req_performed % b->F_FSYNC_FREQ == 0)
            goto fsync;
        b->req_performed++;
        if (op == OP_WRITE)
            b->is_dirty = 1;
        if (b->current_file == b->nfiles) {
            b->position = 0;
            b->current_file = 0;
        }
        *file = b->current_file;
        *pos = b->position;
        *size = b->F_REQUEST < b->F_FILE_SIZE - b->position ? b->F_REQUEST : b->F_FILE_SIZE - b->position;
        b->position += *size;
        if (b->position == b->F_FILE_SIZE) {
            b->current_file++;
            b->position = 0;
        }
    } else {
        if (mode == M_RNDRW)
            op = ((double)r->my_reads + 1.0) / ((double)r->my_writes + 1.0) < b->ratio ? OP_READ : OP_WRITE;
        else
            op = mode == M_RNDWR ? OP_WRITE : OP_READ;
        if (b->F_FSYNC_FREQ && b->is_dirty && b->req_performed % b->F_FSYNC_FREQ == 0)
            goto fsync;
        long long t = (long long)(xoro_double(r->s, XORO_2018) * (double)b->F_TOTAL);
        t -= t % b->F_BLOCK;
        *file = (int)(t / b->F_FILE_SIZE);
        *pos = t % b->F_FILE_SIZE;
        *size = b->F_BLOCK < b->F_FILE_SIZE - *pos ? b->F_BLOCK : b->F_FILE_SIZE - *pos;
        b->req_performed++;
        if (op == OP_WRITE)
            b->is_dirty = 1;
    }
    pthread_mutex_unlock(&b->gen);
    return op;
fsync:
    *file = b->fsynced_file++;
    *pos = *size = 0;
    if (b->fsynced_file == b->nfiles) {
        b->fsynced_file = 0;
        b->is_dirty = 0;
    }
    pthread_mutex_unlock(&b->gen);
    return OP_FSYNC;
}

/* pwrite all of it: a short write is followed by another, which says why (ENOSPC, EFBIG) */
static ssize_t
full_pwrite(int fd, const char *buf, size_t n, off_t pos)
{
    size_t done = 0;
    while (done < n) {
        ssize_t w = pwrite(fd, buf + done, n - done, pos + (off_t)done);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        if (w == 0) {
            errno = ENOSPC;
            return -1;
        }
        done += (size_t)w;
    }
    return (ssize_t)done;
}

static int
ev_fileio(BuiltinRunner *r)
{
    Builtin *b = r->test;
    int file;
    long long pos, size;
    ssize_t got;
    int op = next_request(r, &file, &pos, &size);
    if (file < 0 || file >= b->nfiles)
        file = 0;
    switch (op) {
    case OP_WRITE:
        if (b->F_MMAP) {
            memcpy(b->maps[file] + pos, r->io_buf, (size_t)size);
            got = (ssize_t)size;
        } else {
            got = full_pwrite(b->fds[file], r->io_buf, (size_t)size, (off_t)pos);
        }
        if (got != (ssize_t)size) {
            r->err = got < 0 ? errno : ENOSPC;
            snprintf(r->msg, sizeof r->msg, "Failed to write file! file: %d pos: %lld", b->fds[file], pos);
            return -1;
        }
        if (b->F_FSYNC_ALL && do_fsync(r, file) < 0)
            return -1;
        r->my_writes++;
        __atomic_fetch_add(&b->writes, 1, __ATOMIC_RELAXED);
        __atomic_fetch_add(&b->bytes_written, size, __ATOMIC_RELAXED);
        return 0;
    case OP_READ:
        if (b->F_MMAP) {
            memcpy(r->io_buf, b->maps[file] + pos, (size_t)size);
            got = (ssize_t)size;
        } else {
            got = pread(b->fds[file], r->io_buf, (size_t)size, (off_t)pos);
        }
        if (got != (ssize_t)size) {
            r->err = got < 0 ? errno : EIO;
            snprintf(r->msg, sizeof r->msg, "Failed to read file! file: %d pos: %lld", b->fds[file], pos);
            return -1;
        }
        r->my_reads++;
        __atomic_fetch_add(&b->reads, 1, __ATOMIC_RELAXED);
        __atomic_fetch_add(&b->bytes_read, size, __ATOMIC_RELAXED);
        return 0;
    default:
        if (b->F_FSYNC_ALL)   /* every write is fsynced already */
            return 0;
        return do_fsync(r, file);
    }
}

static int
run_event(BuiltinRunner *r)
{
    switch (r->test->kind) {
    case K_CPU: return ev_cpu(r);
    case K_MEMORY: return ev_memory(r);
    case K_THREADS: return ev_threads(r);
    case K_MUTEX: return ev_mutex(r);
    default: return ev_fileio(r);
    }
}

/* --- BuiltinRunner ----------------------------------------------------------------------- */

static int
record_all(BuiltinRunner *r, PyObject *record, int n)
{
    int i;
    for (i = 0; i < n; i++) {
        if (Py_TYPE(record) == &RecorderType) {
            if (recorder_add((Recorder *)record, r->tid, r->lat[i]) < 0)
                return -1;
        } else {
            PyObject *args[2], *res;
            args[0] = r->tid_obj;
            if ((args[1] = PyLong_FromLongLong(r->lat[i])) == NULL)
                return -1;
            res = PyObject_Vectorcall(record, args, 2, NULL);
            Py_DECREF(args[1]);
            if (res == NULL)
                return -1;
            Py_DECREF(res);
        }
    }
    return 0;
}

static PyObject *
raise_failed(BuiltinRunner *r)
{
    PyObject *exc = Py_BuildValue("(is)", r->err, r->msg);
    if (exc != NULL) {
        PyErr_SetObject(PyExc_OSError, exc);
        Py_DECREF(exc);
    }
    return NULL;
}

static PyObject *
runner_batch(BuiltinRunner *r, PyObject *args)
{
    PyObject *record;
    long long max_n, deadline, budget, total = 0;
    int finished = 0, failed = 0;
    if (!PyArg_ParseTuple(args, "OLLL", &record, &max_n, &deadline, &budget))
        return NULL;
    while (total < max_n && !finished && !failed) {
        int n = 0, rc;
        long long limit = max_n - total < LATS ? max_n - total : LATS;
        Py_BEGIN_ALLOW_THREADS
        long long now = now_ns(), stop_at = now + budget, start;
        /* as sysbench's thread loop: the time limit checked before each event, the event
         * timed on its own (sb_event_start / sb_event_stop), so the latencies and the
         * "execution time" are the events' and the loop's cost per event is sysbench's */
        while (n < limit) {
            if (limits_time_up(deadline, now)) {   /* the rule's time part (runtime/limits.py) */
                finished = 2;                 /* the time is up: no event started */
                break;
            }
            start = now_ns();
            rc = run_event(r);
            if (rc != 0) {
                if (rc > 0)
                    finished = 1;
                else
                    failed = 1;
                break;
            }
            r->lat[n] = now_ns() - start;
            /* sysbench's sb_event_stop computes the histogram slot here (a log) */
            r->slot = (int)log((double)(r->lat[n] + 1));
            n++;
            now = now_ns();
            if (now >= stop_at)
                break;
        }
        Py_END_ALLOW_THREADS
        if (record_all(r, record, n) < 0)
            return NULL;
        total += n;
        if (n < limit && !finished && !failed)
            break;                            /* the budget is spent */
    }
    if (failed)
        return raise_failed(r);
    return Py_BuildValue("(Li)", total, finished == 1);
}

static PyObject *
runner_step(BuiltinRunner *r, PyObject *Py_UNUSED(unused))
{
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = run_event(r);
    Py_END_ALLOW_THREADS
    if (rc < 0)
        return raise_failed(r);
    return PyBool_FromLong(rc > 0);
}

static PyObject *
runner_fsync_all(BuiltinRunner *r, PyObject *Py_UNUSED(unused))
{
    int i, rc = 0;
    Py_BEGIN_ALLOW_THREADS
    for (i = 0; i < r->test->nfiles && rc == 0; i++)
        rc = do_fsync(r, i);
    Py_END_ALLOW_THREADS
    if (rc < 0)
        return raise_failed(r);
    Py_RETURN_NONE;
}

static void
runner_dealloc(BuiltinRunner *r)
{
    Py_XDECREF(r->test);
    Py_XDECREF(r->tid_obj);
    free(r->local_buf);
    free(r->io_buf);
    Py_TYPE(r)->tp_free((PyObject *)r);
}

static PyMethodDef runner_methods[] = {
    {"batch", (PyCFunction)runner_batch, METH_VARARGS, "batch(record, max_n, deadline_ns, budget_ns) -> (n, finished)"},
    {"step", (PyCFunction)runner_step, METH_NOARGS, "one event; True when the test has no more"},
    {"fsync_all", (PyCFunction)runner_fsync_all, METH_NOARGS, "fsync every file (--file-fsync-end)"},
    {NULL}
};

static PyMemberDef runner_members[] = {
    {"sink", T_ULONGLONG, offsetof(BuiltinRunner, sink), READONLY, "the last event's result (cpu: primes found)"},
    {"reads", T_LONGLONG, offsetof(BuiltinRunner, my_reads), READONLY, "this thread's reads"},
    {"writes", T_LONGLONG, offsetof(BuiltinRunner, my_writes), READONLY, "this thread's writes"},
    {NULL}
};

static PyTypeObject BuiltinRunnerType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "pysysbench._native.BuiltinRunner",
    .tp_basicsize = sizeof(BuiltinRunner),
    .tp_dealloc = (destructor)runner_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "one thread of a built-in test",
    .tp_methods = runner_methods,
    .tp_members = runner_members,
};

/* --- Builtin ---------------------------------------------------------------------------- */

static PyObject *
builtin_runner(Builtin *b, PyObject *args)
{
    long long tid;
    unsigned long long seed;
    BuiltinRunner *r;
    if (!PyArg_ParseTuple(args, "LK", &tid, &seed))
        return NULL;
    r = PyObject_New(BuiltinRunner, &BuiltinRunnerType);
    if (r == NULL)
        return NULL;
    Py_INCREF(b);
    r->test = b;
    r->tid = tid;
    r->tid_obj = PyLong_FromLongLong(tid);
    xoro_seed_splitmix64(r->s, seed);
    r->local_buf = NULL;
    r->io_buf = NULL;
    r->slot = 0;
    r->my_reads = r->my_writes = 0;
    r->done_once = 0;
    r->sink = 0;
    r->err = 0;
    r->msg[0] = 0;
    if (r->tid_obj == NULL) {
        Py_DECREF(r);
        return NULL;
    }
    /* memory: as sysbench 1.0.20, each thread does total / block / threads events */
    r->left = b->kind == K_MEMORY && b->p[1] > 0 ? b->p[1] / b->p[0] / (b->p[5] > 0 ? b->p[5] : 1) : -1;
    if (b->kind == K_MEMORY && b->p[2]) {
        if (posix_memalign((void **)&r->local_buf, 4096, (size_t)b->p[0]) != 0) {
            r->local_buf = NULL;
            goto nomem;
        }
        memset(r->local_buf, 0, (size_t)b->p[0]);
    }
    if (b->kind == K_FILEIO) {
        size_t n = (size_t)(b->F_REQUEST > b->F_BLOCK ? b->F_REQUEST : b->F_BLOCK);
        n = (n + 4095) & ~(size_t)4095;       /* aligned for O_DIRECT */
        if (posix_memalign((void **)&r->io_buf, 4096, n) != 0) {
            r->io_buf = NULL;
            goto nomem;
        }
        memset(r->io_buf, 0, n);
    }
    return (PyObject *)r;
nomem:
    Py_DECREF(r);
    return PyErr_NoMemory();
}

static PyObject *
builtin_stats(Builtin *b, PyObject *Py_UNUSED(unused))
{
    return Py_BuildValue("(LLLLL)", __atomic_load_n(&b->reads, __ATOMIC_RELAXED),
                         __atomic_load_n(&b->writes, __ATOMIC_RELAXED), __atomic_load_n(&b->fsyncs, __ATOMIC_RELAXED),
                         __atomic_load_n(&b->bytes_read, __ATOMIC_RELAXED),
                         __atomic_load_n(&b->bytes_written, __ATOMIC_RELAXED));
}

static PyObject *
builtin_claimed(Builtin *b, PyObject *Py_UNUSED(unused))
{
    long long c = __atomic_load_n(&b->claimed_bytes, __ATOMIC_RELAXED);
    return PyLong_FromLongLong(c < b->p[1] ? c : b->p[1]);
}

static PyObject *
builtin_close(Builtin *b, PyObject *Py_UNUSED(unused))
{
    int i;
    if (b->maps != NULL) {
        for (i = 0; i < b->nfiles; i++)
            if (b->maps[i] != NULL && b->maps[i] != MAP_FAILED)
                munmap(b->maps[i], (size_t)b->F_FILE_SIZE);
        free(b->maps);
        b->maps = NULL;
    }
    Py_RETURN_NONE;
}

static void
builtin_dealloc(Builtin *b)
{
    long long i;
    builtin_close(b, NULL);
    free(b->global_buf);
    if (b->locks != NULL) {
        for (i = 0; i < b->nlocks; i++)
            pthread_mutex_destroy(&b->locks[i]);
        free(b->locks);
    }
    free(b->fds);
    pthread_mutex_destroy(&b->gen);
    Py_TYPE(b)->tp_free((PyObject *)b);
}

/* Builtin(kind, params, fds, ratio) */
static PyObject *
builtin_new(PyTypeObject *type, PyObject *args, PyObject *Py_UNUSED(kw))
{
    int kind;
    PyObject *params, *fds;
    double ratio = 1.5;
    Py_ssize_t i, n;
    Builtin *b;
    if (!PyArg_ParseTuple(args, "iO!O!|d", &kind, &PyTuple_Type, &params, &PyTuple_Type, &fds, &ratio))
        return NULL;
    if (kind < K_CPU || kind > K_FILEIO || PyTuple_GET_SIZE(params) > NPARAMS) {
        PyErr_SetString(PyExc_ValueError, "Builtin: bad kind or parameters");
        return NULL;
    }
    b = (Builtin *)type->tp_alloc(type, 0);
    if (b == NULL)
        return NULL;
    b->kind = kind;
    b->ratio = ratio;
    pthread_mutex_init(&b->gen, NULL);
    for (i = 0; i < PyTuple_GET_SIZE(params); i++) {
        b->p[i] = PyLong_AsLongLong(PyTuple_GET_ITEM(params, i));
        if (b->p[i] == -1 && PyErr_Occurred())
            goto fail;
    }
    if (kind == K_MEMORY) {
        if (b->p[0] < (long long)sizeof(size_t)) {
            PyErr_SetString(PyExc_ValueError, "Builtin: memory block too small");
            goto fail;
        }
        if (posix_memalign((void **)&b->global_buf, 4096, (size_t)b->p[0]) != 0)
            b->global_buf = NULL;
        else
            memset(b->global_buf, 0, (size_t)b->p[0]);
        if (b->global_buf == NULL) {
            PyErr_NoMemory();
            goto fail;
        }
    }
    if (kind == K_THREADS || kind == K_MUTEX) {
        b->nlocks = kind == K_THREADS ? b->p[1] : b->p[0];
        if (b->nlocks < 1) {
            PyErr_SetString(PyExc_ValueError, "Builtin: no locks");
            goto fail;
        }
        b->locks = calloc((size_t)b->nlocks, sizeof(pthread_mutex_t));
        if (b->locks == NULL) {
            PyErr_NoMemory();
            goto fail;
        }
        for (i = 0; i < b->nlocks; i++)
            pthread_mutex_init(&b->locks[i], NULL);
    }
    if (kind == K_FILEIO) {
        n = PyTuple_GET_SIZE(fds);
        if (n < 1 || b->F_BLOCK < 1 || b->F_FILE_SIZE < 1) {
            PyErr_SetString(PyExc_ValueError, "Builtin: fileio needs files, a block and a file size");
            goto fail;
        }
        b->fds = calloc((size_t)n, sizeof(int));
        if (b->fds == NULL) {
            PyErr_NoMemory();
            goto fail;
        }
        b->nfiles = (int)n;
        for (i = 0; i < n; i++) {
            b->fds[i] = (int)PyLong_AsLong(PyTuple_GET_ITEM(fds, i));
            if (b->fds[i] == -1 && PyErr_Occurred())
                goto fail;
        }
        if (b->F_MMAP) {
            b->maps = calloc((size_t)n, sizeof(char *));
            if (b->maps == NULL) {
                PyErr_NoMemory();
                goto fail;
            }
            for (i = 0; i < n; i++) {
                b->maps[i] = mmap(NULL, (size_t)b->F_FILE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, b->fds[i], 0);
                if (b->maps[i] == MAP_FAILED) {
                    PyObject *e = Py_BuildValue("(is)", errno, "mmap() failed on a test file");
                    b->maps[i] = NULL;
                    if (e != NULL) {
                        PyErr_SetObject(PyExc_OSError, e);
                        Py_DECREF(e);
                    }
                    goto fail;
                }
            }
        }
    }
    return (PyObject *)b;
fail:
    Py_DECREF(b);
    return NULL;
}

static PyMethodDef builtin_methods[] = {
    {"runner", (PyCFunction)builtin_runner, METH_VARARGS, "runner(tid, seed): one thread's BuiltinRunner"},
    {"stats", (PyCFunction)builtin_stats, METH_NOARGS, "fileio: (reads, writes, fsyncs, bytes read, bytes written)"},
    {"claimed", (PyCFunction)builtin_claimed, METH_NOARGS, "memory: the bytes transferred"},
    {"close", (PyCFunction)builtin_close, METH_NOARGS, "unmap the files (mmap mode)"},
    {NULL}
};

static PyMemberDef builtin_members[] = {
    {"global_var", T_LONGLONG, offsetof(Builtin, global_var), READONLY, "mutex: locks taken"},
    {NULL}
};

static PyTypeObject BuiltinType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "pysysbench._native.Builtin",
    .tp_basicsize = sizeof(Builtin),
    .tp_dealloc = (destructor)builtin_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "the shared state of one built-in test (cpu, memory, threads, mutex, fileio)",
    .tp_methods = builtin_methods,
    .tp_members = builtin_members,
    .tp_new = builtin_new,
};

int
builtin_init(PyObject *module)
{
    if (PyType_Ready(&BuiltinType) < 0 || PyType_Ready(&BuiltinRunnerType) < 0)
        return -1;
    Py_INCREF(&BuiltinType);
    if (PyModule_AddObject(module, "Builtin", (PyObject *)&BuiltinType) < 0) {
        Py_DECREF(&BuiltinType);
        return -1;
    }
    return 0;
}
