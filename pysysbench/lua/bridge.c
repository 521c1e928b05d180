/* A Lua state's events as an event source (native_runtime.h) for the engine's C event loop: the twin
 * of lua/state.py's LuaState._drive for the statements of an event.
 *
 * The Python bridge resumes the state's event coroutine through lupa once per statement and
 * awaits the statement in a Python frame: about two thirds of a Lua event's client CPU was
 * that Python (bench/journal/2026-12-01.md).  LuaEvents resumes the same coroutine
 * with lua_resume itself and hands the statement it yields (OP_EXEC: a prepared statement and
 * its parameters) straight to the EventLoop, which sends it and takes the wire's response
 * directly (strand_offer) -- no Python frame per statement.  Anything else the coroutine
 * yields (a plain query, a prepare, a sleep, a failed event, parameters of other types) is
 * left for the Python bridge: the values are moved into a table in the registry
 * (HELD_KEY), which LuaState.take_held() reads through lupa, and the EventLoop's await ends
 * so that the Python finishes the event.  A statement that fails ends the await with its
 * exception; the Python gives Lua the error as _drive does (`last`: the statement's id).
 *
 * lupa hands out no lua_State: the Lua C API is taken from lupa's own LuaJIT module (its
 * symbols are exported; lua_bind(module) looks them up once), and a coroutine's lua_State is
 * named by pysysbench_lua_thread_address, a lua_CFunction each state loads with
 * package.loadlib.  Only LuaJIT 2.1 (Lua 5.1's C API) is bound; other runtimes take the
 * Python bridge.  Must match lua/state.py: the OP_* numbers and the runner's yields.
 *
 * Stackful events (x86-64): each LuaEvents runs lua_resume on a C stack of its own, and
 * Stmt:execute (sysbench.lua) hands its statement to pysysbench_exec1/2/4, FFI functions that
 * switches back to the loop's stack with the statement and returns its answer when the
 * loop switches in again.  The FFI call compiles into the event's trace, so a statement
 * costs a switch and a return into machine code instead of a coroutine.yield (never
 * compiled), a lua_resume and an interpreted continuation.  Whatever is not a statement
 * the C can send still yields, on the state's stack, to the lua_resume there: that path
 * is the one above.  While a state waits inside pysysbench_exec, a trace of its runner is
 * live: nothing may enter that state's VM (lupa calls), so anything that ends the loop's
 * await other than le_next (a failed statement, a cancelled thread) first calls
 * LuaEvents.unwind(), which answers -1: Stmt:execute then yields the statement as the
 * yield path does, and the coroutine waits at an ordinary yield again. */

#include "native_core.h"
#include "native_runtime.h"
#include "native_workloads.h"
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <sys/syscall.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <ucontext.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

typedef struct lua_State lua_State;
typedef struct lua_Debug lua_Debug;
typedef void (*lua_Hook)(lua_State *, lua_Debug *);
typedef double lua_Number;
typedef ptrdiff_t lua_Integer;

/* Lua 5.1 / LuaJIT ABI */
#define LUA_YIELD 1
#define LUA_REGISTRYINDEX (-10000)
#define LUA_TNIL 0
#define LUA_TBOOLEAN 1
#define LUA_TNUMBER 3
#define LUA_TSTRING 4
#define LUA_TTHREAD 8
#define LUA_MASKCOUNT 8

#define HELD_KEY "pysysbench.held"
enum { OP_DONE = 0, OP_EXEC = 1 };    /* lua/state.py */

static struct {
    int (*resume)(lua_State *, int);
    int (*status)(lua_State *);
    int (*gettop)(lua_State *);
    void (*settop)(lua_State *, int);
    int (*type)(lua_State *, int);
    lua_Number (*tonumber)(lua_State *, int);
    int (*toboolean)(lua_State *, int);
    const char *(*tolstring)(lua_State *, int, size_t *);
    lua_State *(*tothread)(lua_State *, int);
    void (*pushinteger)(lua_State *, lua_Integer);
    void (*pushnumber)(lua_State *, lua_Number);
    void (*pushnil)(lua_State *);
    void (*pushvalue)(lua_State *, int);
    void (*createtable)(lua_State *, int, int);
    void (*rawseti)(lua_State *, int, int);
    void (*setfield)(lua_State *, int, const char *);
    int (*sethook)(lua_State *, lua_Hook, int, int);
    void (*pushstring)(lua_State *, const char *);
    int (*error)(lua_State *);
} lua;
static int bound;
static PyObject *lua_error_type;     /* lupa.LuaError: a dead event coroutine, as lupa raises it */
static PyObject *interrupted_type;   /* LuaInterrupted: a state stopped by the watchdog below */
static PyObject *s_reads;

/* sysbench.rand's generator for the states, called through LuaJIT's FFI (sysbench.lua loads
 * this file with ffi.load when the extension is there): core/rand.c's xoroshiro128+ with
 * sysbench's constants on the state's own uint64_t[2], the twin of sysbench.lua's Lua generator (draw for draw the same numbers,
 * tests/unit/test_lua_rand_native.py).  In Lua, a draw the interpreter runs boxes about ten
 * uint64 cdata objects (garbage in every state's heap) and a string of sysbench.rand.string
 * one draw per character; at 1000 threads most states run their events interpreted, as
 * LuaJIT compiles a loop only after it is hot in that state.  As sysbench, whose
 * sysbench.rand functions are C reached through the FFI. */
__attribute__((visibility("default"))) uint64_t
pysysbench_rand_u64(uint64_t *s)
{
    return xoro_next(s, XORO_SYSBENCH);
}

__attribute__((visibility("default"))) double
pysysbench_rand_double(uint64_t *s)
{
    return xoro_double(s, XORO_SYSBENCH);
}

/* x % m as Lua computes it for numbers: x - floor(x / m) * m */
static inline double
lua_mod(double x, double m)
{
    return x - floor(x / m) * m;
}

/* sysbench.rand.special(a, b) (sysbench.lua's r_special, the default distribution), a and b
 * already whole numbers below 2^32: the same double operations in the same order, so the
 * same draws and the same result.  One FFI call instead of a branch in Lua: half of it draws
 * once, the other thirteen times, and a trace recorded through one side left the other to the
 * interpreter in every event (a hot exit) */
__attribute__((visibility("default"))) double
pysysbench_rand_special(uint64_t *s, double a, double b, double iter, double pct, double res)
{
    double t = lua_mod(b - a, 4294967296.0);
    double R = t * 100.0 / (100.0 - res);
    double u = pysysbench_rand_double(s);
    if (u * R < t) {
        double sum = 0.0;
        for (double i = 1; i <= iter; i++)
            sum = sum + pysysbench_rand_double(s);
        return lua_mod(floor(a + sum * t / iter), 4294967296.0);
    }
    double d = t * pct / 100.0;
    return lua_mod(floor(a + floor(u * (d + 1) + t / 2.0 - t * pct / 200.0)), 4294967296.0);
}

/* sysbench.rand.string(fmt) into out[0..n): '#' a digit, '@' a lowercase letter, a NUL ends
 * the template (the rest NULs), anything else as it is */
__attribute__((visibility("default"))) void
pysysbench_rand_string(uint64_t *s, const char *fmt, size_t n, char *out)
{
    for (size_t i = 0; i < n; i++) {
        char c = fmt[i];
        if (c == '#')
            out[i] = (char)(uint32_t)(48.0 + pysysbench_rand_double(s) * 10.0);    /* as r_uniform(48, 57) */
        else if (c == '@')
            out[i] = (char)(uint32_t)(97.0 + pysysbench_rand_double(s) * 26.0);    /* r_uniform(97, 122) */
        else if (c == '\0') {
            memset(out + i, 0, n - i);
            return;
        }
        else
            out[i] = c;
    }
}

/* the address of the coroutine given (a Lua thread) as a number, or nil: loaded into each
 * state with package.loadlib, so that a state names its coroutine's lua_State */
__attribute__((visibility("default"))) int
pysysbench_lua_thread_address(lua_State *L)
{
    lua_State *co = bound ? lua.tothread(L, 1) : NULL;
    if (co == NULL) {
        if (bound)
            lua.pushnil(L);
        return bound ? 1 : 0;
    }
    lua.pushnumber(L, (lua_Number)(uintptr_t)co);
    return 1;
}

/* lua_bind(module): the Lua C API of lupa's LuaJIT module `module` (its __file__), once; False
 * when the module is not LuaJIT 2.1 or lacks a symbol (then the Python bridge runs) */
static PyObject *
lua_bind(PyObject *Py_UNUSED(self), PyObject *module)
{
    PyObject *file, *name, *err;
    void *h;
    if (bound)
        Py_RETURN_TRUE;
    name = PyObject_GetAttrString(module, "__name__");
    if (name == NULL)
        return NULL;
    if (!PyUnicode_Check(name) || PyUnicode_CompareWithASCIIString(name, "lupa.luajit21") != 0) {
        Py_DECREF(name);
        Py_RETURN_FALSE;
    }
    Py_DECREF(name);
    err = PyObject_GetAttrString(module, "LuaError");
    file = err == NULL ? NULL : PyObject_GetAttrString(module, "__file__");
    if (file == NULL || !PyUnicode_Check(file)) {
        Py_XDECREF(err);
        Py_XDECREF(file);
        PyErr_Clear();
        Py_RETURN_FALSE;
    }
    h = dlopen(PyUnicode_AsUTF8(file), RTLD_NOW | RTLD_NOLOAD);
    Py_DECREF(file);
    if (h == NULL) {
        Py_DECREF(err);
        Py_RETURN_FALSE;
    }
#define SYM(field, symbol) if ((*(void **)&lua.field = dlsym(h, symbol)) == NULL) goto missing
    SYM(resume, "lua_resume");
    SYM(status, "lua_status");
    SYM(gettop, "lua_gettop");
    SYM(settop, "lua_settop");
    SYM(type, "lua_type");
    SYM(tonumber, "lua_tonumber");
    SYM(toboolean, "lua_toboolean");
    SYM(tolstring, "lua_tolstring");
    SYM(tothread, "lua_tothread");
    SYM(pushinteger, "lua_pushinteger");
    SYM(pushnumber, "lua_pushnumber");
    SYM(pushnil, "lua_pushnil");
    SYM(pushvalue, "lua_pushvalue");
    SYM(createtable, "lua_createtable");
    SYM(rawseti, "lua_rawseti");
    SYM(setfield, "lua_setfield");
    SYM(sethook, "lua_sethook");
    SYM(pushstring, "lua_pushstring");
    SYM(error, "lua_error");
#undef SYM
    dlclose(h);           /* lupa's import holds the module: the addresses stay valid */
    lua_error_type = err;
    bound = 1;
    Py_RETURN_TRUE;
missing:
    dlclose(h);
    Py_DECREF(err);
    Py_RETURN_FALSE;
}


/* ------------------------------------------------------------ stack switching --- *
 * ps_switch(from, to): save the callee-saved registers on the current stack, store its
 * pointer into *from, continue on the stack `to` (a pointer ps_switch stored, or a fresh
 * stack laid out by stack_new), as if its own ps_switch call returned there.  No
 * swapcontext(3): glibc's saves and restores the signal mask with a system call each time. */
#if defined(__x86_64__) && defined(__linux__)
#define HAVE_STACKS 1
void ps_switch(void **from, void *to);
__asm__(
    ".text\n"
    ".p2align 4\n"
    ".type ps_switch, @function\n"
    ".hidden ps_switch\n"
    ".globl ps_switch\n"
    "ps_switch:\n"
    "    pushq %rbp\n"
    "    pushq %rbx\n"
    "    pushq %r12\n"
    "    pushq %r13\n"
    "    pushq %r14\n"
    "    pushq %r15\n"
    "    subq $8, %rsp\n"
    "    stmxcsr (%rsp)\n"
    "    fnstcw 4(%rsp)\n"
    "    movq %rsp, (%rdi)\n"
    "    movq %rsi, %rsp\n"
    "    ldmxcsr (%rsp)\n"
    "    fldcw 4(%rsp)\n"
    "    addq $8, %rsp\n"
    "    popq %r15\n"
    "    popq %r14\n"
    "    popq %r13\n"
    "    popq %r12\n"
    "    popq %rbx\n"
    "    popq %rbp\n"
    "    ret\n"
    ".size ps_switch, .-ps_switch\n");
#else
#define HAVE_STACKS 0
#endif

/* A state's C stack: reserved, not committed (only the pages a resume touches count), with
 * a guard page below.  Python code a script reaches through lupa runs on it too, hence far
 * more than the few KB a Lua event uses. */
#define STACK_SIZE (1024 * 1024)
/* events between two trims of a state's stack (stack_trim): at 1000 threads a state runs a few
 * hundred events in a 10-s run and compiles its traces after about 56 */
#define TRIM_EVERY 64

typedef struct {
    char *base;      /* the mapping (guard page first), or NULL */
    void *sp;        /* the stack pointer ps_switch saved there (or the fresh frame) */
} Stack;

static void le_entry(void);

/* a fresh stack whose first switch "returns" into le_entry: 0, or -1 (no stack: the yield
 * path serves the state) */
static int
stack_new(Stack *st)
{
#if HAVE_STACKS
    long page = sysconf(_SC_PAGESIZE);
    char *base = mmap(NULL, STACK_SIZE, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
    uint64_t *top;
    unsigned int csr[2];
    if (base == MAP_FAILED)
        return -1;
    if (page > 0)
        mprotect(base, (size_t)page, PROT_NONE);
    top = (uint64_t *)(base + STACK_SIZE);    /* 16-aligned */
    *--top = 0;                               /* le_entry's return address: none (it never returns) */
    *--top = (uint64_t)(uintptr_t)le_entry;   /* ps_switch's ret */
    for (int i = 0; i < 6; i++)
        *--top = 0;                           /* rbp, rbx, r12-r15 */
    __asm__ volatile("stmxcsr %0\n\tfnstcw %1" : "=m"(csr[0]), "=m"(csr[1]));
    *--top = (uint64_t)csr[0] | ((uint64_t)(csr[1] & 0xffff) << 32);   /* the caller's MXCSR and x87 control */
    st->base = base;
    st->sp = top;
    return 0;
#else
    (void)st;
    return -1;
#endif
}

/* give back the pages of the stack below sp (dead while the state is switched out): what a
 * deep moment left there (LuaJIT compiling a trace on this stack: 7-8 KB a state at 1000
 * threads, 4 KB after) is otherwise resident until the state's end */
static void
stack_trim(Stack *st)
{
    long page = sysconf(_SC_PAGESIZE);
    char *lo, *hi;
    if (st->base == NULL || page <= 0)
        return;
    lo = st->base + page;                                          /* above the guard page */
    hi = (char *)((uintptr_t)st->sp & ~(uintptr_t)(page - 1));    /* the page holding sp stays */
    if (hi > lo)
        madvise(lo, (size_t)(hi - lo), MADV_DONTNEED);
}

static void
stack_free(Stack *st)
{
    if (st->base != NULL)
        munmap(st->base, STACK_SIZE);
    st->base = NULL;
}

/* a statement's parameter, as pysysbench_exec* take them */
typedef struct {
    double num;
    const char *str;
    size_t len;
    int tag;
} ExecArg;
enum { ARG_NIL = 0, ARG_NUMBER = 1, ARG_STRING = 2, ARG_BOOLEAN = 3 };
enum { PARKED_NO = 0, PARKED_EXEC = 1, PARKED_DONE = 2 };

typedef struct {
    EVENT_SOURCE_HEAD
    lua_State *co;           /* the event coroutine (lua/state.py's runner), suspended at a yield */
    PyObject *runner;        /* lupa's object for it: keeps the coroutine alive */
    PyObject *stmts;         /* LuaState.stmts: statement id -> the driver's statement */
    PyObject *counters;      /* .reads: whether a statement returned rows (Lua is told 1 or 0) */
    PyTypeObject *counters_type;
    Py_ssize_t reads_off;    /* .reads' __slots__ offset in counters, or -1 */
    PyObject *reads;         /* counters.reads before the statement in flight */
    Py_ssize_t last;         /* the id of the statement last handed out */
    long long statements, handovers;   /* statements handed out; requests left to Python */
    long long unwinds;                 /* unwind() calls that found the state parked */
    int stacked;             /* 1: resumes run on `stack` (stackful events); 0: on the loop's */
    Stack stack;             /* the state's C stack, made at the first resume */
    void *back;              /* the loop's stack pointer while the state runs on its own */
    int parked;              /* PARKED_*: waiting inside pysysbench_exec or pysysbench_event_done */
    int stop;                /* PARKED_DONE: the event returned a true value (its thread stops) */
    unsigned long events;    /* events ended on the stack: every TRIM_EVERY the stack is trimmed */
    int nres, status;        /* the next lua_resume's arguments on co; the last one's result */
    int answer;              /* what pysysbench_exec returns: 1 rows, 0 none, -1 yield it */
    PyObject *pstmt;         /* the parked statement and its parameters, until handed out */
    PyObject *pargs[SOURCE_MAX_ARGS];
    Py_ssize_t pn;
    sigjmp_buf recover;      /* in le_entry, around its lua_resume: where the watchdog's signal leaves a trace */
    volatile sig_atomic_t armed;   /* 1: inside that lua_resume (recover is valid) */
    int dead;                /* left by the watchdog inside compiled code: never entered again */
} LuaEvents;

/* the source whose state runs on its own stack now (between le_enter and the switch back) */
static __thread LuaEvents *le_current;
/* (the watchdog: below) */
/* nonzero while some state runs on its own stack: what sysbench.lua reads (through the FFI)
 * before it fills pysysbench_exec's parameters, so that a state served by the yield path does
 * not pay for the call.  A hint: pysysbench_exec itself asks le_current. */
__attribute__((visibility("default"))) int pysysbench_stacked[1];

/* ------------------------------------------------------------------ the watchdog --- *
 * A Lua function that computes without yielding (`while true do end` in event() or
 * thread_init()) holds the thread that runs the event loop: no timer of the engine fires,
 * no signal handler of Python runs.  The watchdog is a thread of its own that keeps the
 * loop's stop bounds (lua_watch_bound: the forced shutdown, the stop grace, the thread
 * initialisation timeout, given by the engine, which calls lua_watch_bound(0) when it has
 * acted itself) and the stop requests (SIGINT and SIGTERM, chained in front of Python's
 * handlers; SIGURG from a worker process's parent), which the loop answers with
 * lua_watch_ack().  When a bound passes, or a request is not answered within
 * REQUEST_MARGIN_S, it interrupts the Lua state running on the loop's thread, every
 * KICK_EVERY_S until the engine has taken over: it sends SIGURG to that thread, whose
 * handler
 *   - sets a count hook on the running state (an interpreted loop, LuaJIT's own Ctrl-C),
 *     which raises INTERRUPT_MARKER at its next instruction; the call that gets it waits
 *     for the engine's cancel (lua/state.py);
 *   - or, when the thread is inside compiled code (a trace: LuaJIT's compiled loops never
 *     look at hooks) of a state running on its own C stack (le_entry), leaves the trace
 *     with siglongjmp to le_entry: that state is dead (never entered again, its runtime
 *     never freed) and its event ends with LuaInterrupted.
 * A state that neither answers (a compiled loop in a call through lupa: thread_init, ...)
 * gets FALLBACK_S, then the watchdog prints the bound's message and ends the process
 * with its exit code, as sysbench does at its bounds. */
#define INTERRUPT_MARKER "pysysbench: interrupted by a stop request"
#define REQUEST_MARGIN_S 0.5
#define KICK_EVERY_S 0.05
#define FALLBACK_S 3.0
#define MAX_JIT_RANGES 256

static volatile sig_atomic_t w_enabled;
#define MAX_LUA_THREADS 4096
static pid_t w_tids[MAX_LUA_THREADS];       /* the threads that ran Lua (the loop's; SQLite's strands) */
static volatile int w_ntids;
static __thread int t_registered;
static int w_pipe[2] = {-1, -1};            /* wakes the watchdog (a signal handler writes to it) */
static int w_thread_started;
static pthread_mutex_t w_mu = PTHREAD_MUTEX_INITIALIZER;
static double w_bound;                      /* monotonic seconds, 0: none */
static char w_message[512];                 /* printed at FALLBACK_S past the bound */
static int w_code;
static volatile sig_atomic_t w_request;     /* a stop request not yet seen by the watchdog: 128 + signal, or 1 */
static double w_request_at;                 /* the request's answer is due then (0: none pending) */
static int w_request_code;
static double w_progress;                   /* the last interrupt the loop took (lua_watch_parked) */
static volatile sig_atomic_t w_interrupting;
static __thread lua_State *volatile t_running;   /* the state running Lua on this thread, or NULL */
static struct sigaction w_prev[NSIG];       /* Python's SIGINT / SIGTERM handlers, chained */
static int w_chained[NSIG];
/* the anonymous executable mappings (LuaJIT's machine code), double-buffered for the handler */
static uintptr_t w_ranges[2][MAX_JIT_RANGES][2];
static volatile int w_nranges[2];
static volatile int w_cur;

/* this thread runs Lua states: the watchdog interrupts it too (once per thread) */
static inline void
w_register(void)
{
    if (!t_registered) {
        t_registered = 1;
        pthread_mutex_lock(&w_mu);
        if (w_ntids < MAX_LUA_THREADS)
            w_tids[w_ntids++] = (pid_t)syscall(SYS_gettid);
        pthread_mutex_unlock(&w_mu);
    }
}

static double
mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void
w_wake(void)
{
    if (w_pipe[1] >= 0) {
        ssize_t r = write(w_pipe[1], "w", 1);
        (void)r;
    }
}

static void
stop_hook(lua_State *L, lua_Debug *ar)
{
    (void)ar;
    lua.sethook(L, NULL, 0, 0);
    lua.pushstring(L, INTERRUPT_MARKER);
    lua.error(L);
}

static int
pc_in_jit(uintptr_t pc)
{
    int cur = w_cur, n = w_nranges[cur];
    for (int i = 0; i < n; i++)
        if (pc >= w_ranges[cur][i][0] && pc < w_ranges[cur][i][1])
            return 1;
    return 0;
}

/* re-read /proc/self/maps into the buffer the handler does not read */
static void
w_read_ranges(void)
{
    int next = !w_cur, n = 0;
    FILE *f = fopen("/proc/self/maps", "re");
    char line[512];
    if (f == NULL)
        return;
    while (n < MAX_JIT_RANGES && fgets(line, sizeof line, f) != NULL) {
        unsigned long lo, hi, off, inode;
        char perms[8], dev[16];
        int used = 0;
        if (sscanf(line, "%lx-%lx %7s %lx %15s %lu %n", &lo, &hi, perms, &off, dev, &inode, &used) < 6)
            continue;
        if (perms[2] != 'x' || inode != 0)
            continue;
        if (used > 0 && line[used] != '\n' && line[used] != '\0')   /* named: [vdso], a file */
            continue;
        w_ranges[next][n][0] = lo;
        w_ranges[next][n][1] = hi;
        n++;
    }
    fclose(f);
    w_nranges[next] = n;
    __atomic_store_n(&w_cur, next, __ATOMIC_SEQ_CST);
}

/* SIGURG: from the watchdog (to the loop's thread), interrupt the state running there;
 * from anyone else (a worker's parent cancelling it), a stop request */
static void
on_kick(int sig, siginfo_t *si, void *ctx)
{
    int saved = errno;
    (void)sig;
    if (si->si_code != SI_TKILL || si->si_pid != getpid()) {
        if (w_enabled) {
            w_request = 1;
            w_wake();
        }
    } else if (w_interrupting && t_registered) {
        LuaEvents *e = le_current;
        lua_State *L = t_running;
#if defined(__x86_64__) && defined(__linux__)
        uintptr_t pc = (uintptr_t)((ucontext_t *)ctx)->uc_mcontext.gregs[REG_RIP];
        if (e != NULL && e->armed && pc_in_jit(pc))
            siglongjmp(e->recover, 1);
#else
        (void)ctx;
        (void)e;
#endif
        if (L != NULL)
            lua.sethook(L, stop_hook, LUA_MASKCOUNT, 1);
    }
    errno = saved;
}

/* SIGINT / SIGTERM while watching: a stop request, then Python's own handler */
static void
on_stop_signal(int sig, siginfo_t *si, void *ctx)
{
    int saved = errno;
    if (w_enabled) {
        w_request = 128 + sig;
        w_wake();
    }
    errno = saved;
    if (sig > 0 && sig < NSIG && w_chained[sig]) {
        struct sigaction *p = &w_prev[sig];
        if (p->sa_flags & SA_SIGINFO) {
            if (p->sa_sigaction != NULL)
                p->sa_sigaction(sig, si, ctx);
        } else if (p->sa_handler != SIG_DFL && p->sa_handler != SIG_IGN && p->sa_handler != NULL)
            p->sa_handler(sig);
        else if (p->sa_handler == SIG_DFL) {
            signal(sig, SIG_DFL);
            raise(sig);
        }
    }
}

static void *
w_main(void *unused)
{
    sigset_t all;
    double kicked = 0;
    (void)unused;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL);      /* signals go to the other threads */
    for (;;) {
        struct pollfd pfd = {w_pipe[0], POLLIN, 0};
        double now = mono(), due = 0;
        int timeout = -1;
        char buf[64];
        pthread_mutex_lock(&w_mu);
        if (w_request) {
            if (w_request_at == 0)
                w_request_at = now + REQUEST_MARGIN_S;
            if (w_request > 1)
                w_request_code = w_request;
            w_request = 0;
        }
        if (w_enabled) {
            if (w_bound > 0)
                due = w_bound;
            if (w_request_at > 0 && (due == 0 || w_request_at < due))
                due = w_request_at;
        }
        if (due > 0 && now >= due) {
            if (!w_interrupting) {
                w_interrupting = 1;
                w_progress = now;
                w_read_ranges();
            }
            if (now - w_progress > FALLBACK_S) {
                /* nothing answers: end the process as sysbench does at its bounds */
                int code = (w_request_at > 0 && (w_bound == 0 || w_request_at <= w_bound)) ? w_request_code : w_code;
                const char *msg = code == w_code ? w_message : "";
                ssize_t r;
                r = write(1, msg, strlen(msg));
                (void)r;
                _exit(code ? code : 1);
            }
            if (now - kicked >= KICK_EVERY_S) {
                if ((int)((now - w_progress) / KICK_EVERY_S) % 10 == 0)
                    w_read_ranges();              /* traces compiled meanwhile */
                kicked = now;
                for (int i = 0; i < w_ntids; i++)
                    syscall(SYS_tgkill, getpid(), w_tids[i], SIGURG);
            }
            timeout = (int)(KICK_EVERY_S * 1000);
        } else {
            w_interrupting = 0;
            if (due > 0)
                timeout = (int)((due - now) * 1000) + 1;
        }
        pthread_mutex_unlock(&w_mu);
        if (poll(&pfd, 1, timeout) > 0) {
            ssize_t r = read(w_pipe[0], buf, sizeof buf);
            (void)r;
        }
    }
    return NULL;
}

/* a fork (worker processes; a campaign's later run) has no watchdog thread nor Lua threads
 * of its parent, and must not write to the parent's pipe */
static void
w_before_fork(void)
{
    pthread_mutex_lock(&w_mu);
}

static void
w_after_fork_parent(void)
{
    pthread_mutex_unlock(&w_mu);
}

static void
w_after_fork_child(void)
{
    pthread_mutex_init(&w_mu, NULL);
    w_thread_started = 0;
    w_enabled = 0;
    w_interrupting = 0;
    w_ntids = 0;
    t_registered = 0;
    if (w_pipe[0] >= 0) {
        close(w_pipe[0]);
        close(w_pipe[1]);
        w_pipe[0] = w_pipe[1] = -1;
    }
}

static int
w_install(int sig, void (*fn)(int, siginfo_t *, void *), int chain)
{
    struct sigaction sa, prev;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = fn;
    sa.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    if (sigaction(sig, &sa, &prev) < 0)
        return -1;
    if (chain && !(prev.sa_flags & SA_SIGINFO && prev.sa_sigaction == fn)) {
        w_prev[sig] = prev;
        w_chained[sig] = 1;
    }
    return 0;
}

/* lua_watch_start(signals): watch the calling thread's event loop (signals: SIGINT and
 * SIGTERM are stop requests too, in the process that gets them from the terminal) */
static PyObject *
lua_watch_start(PyObject *Py_UNUSED(self), PyObject *arg)
{
    int signals = PyObject_IsTrue(arg);
    if (signals < 0)
        return NULL;
    static int at_fork;
    if (!bound)
        Py_RETURN_FALSE;
    if (!at_fork) {
        pthread_atfork(w_before_fork, w_after_fork_parent, w_after_fork_child);
        at_fork = 1;
    }
    pthread_mutex_lock(&w_mu);
    if (w_pipe[0] < 0 && pipe2(w_pipe, O_CLOEXEC | O_NONBLOCK) < 0) {
        pthread_mutex_unlock(&w_mu);
        return PyErr_SetFromErrno(PyExc_OSError);
    }
    w_bound = w_request_at = 0;
    w_request = 0;
    w_interrupting = 0;
    pthread_mutex_unlock(&w_mu);
    w_install(SIGURG, on_kick, 0);
    if (signals) {
        w_install(SIGINT, on_stop_signal, 1);
        w_install(SIGTERM, on_stop_signal, 1);
    }
    if (!w_thread_started) {
        pthread_t t;
        sigset_t all, old;
        sigfillset(&all);
        pthread_sigmask(SIG_BLOCK, &all, &old);
        if (pthread_create(&t, NULL, w_main, NULL) == 0) {
            pthread_detach(t);
            w_thread_started = 1;
        }
        pthread_sigmask(SIG_SETMASK, &old, NULL);
    }
    w_enabled = 1;
    w_wake();
    Py_RETURN_TRUE;
}

/* lua_watch_stop(): no more watching; Python's SIGINT / SIGTERM handlers back in place
 * (where the chain is still ours) */
static PyObject *
lua_watch_stop(PyObject *Py_UNUSED(self), PyObject *Py_UNUSED(unused))
{
    w_enabled = 0;
    pthread_mutex_lock(&w_mu);
    w_bound = w_request_at = 0;
    w_interrupting = 0;
    pthread_mutex_unlock(&w_mu);
    for (int sig = 1; sig < NSIG; sig++) {
        struct sigaction cur;
        if (!w_chained[sig])
            continue;
        if (sigaction(sig, NULL, &cur) == 0 && (cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == on_stop_signal)
            sigaction(sig, &w_prev[sig], NULL);
        w_chained[sig] = 0;
    }
    w_wake();
    Py_RETURN_NONE;
}

/* lua_watch_bound(delay_s, message, code): interrupt the loop's Lua delay_s from now unless
 * the engine calls this again first (0: no bound); at FALLBACK_S past it, with nothing
 * answering, print message and exit with code */
static PyObject *
lua_watch_bound(PyObject *Py_UNUSED(self), PyObject *args)
{
    double delay;
    const char *msg = "";
    int code = 2;
    if (!PyArg_ParseTuple(args, "d|si", &delay, &msg, &code))
        return NULL;
    pthread_mutex_lock(&w_mu);
    w_bound = delay > 0 ? mono() + delay : 0;
    snprintf(w_message, sizeof w_message, "%s", msg);
    w_code = code;
    if (delay <= 0)
        w_request_at = 0;         /* the engine has acted: nothing is due */
    pthread_mutex_unlock(&w_mu);
    w_wake();
    Py_RETURN_NONE;
}

/* lua_watch_ack(): the loop has seen the stop requests so far */
static PyObject *
lua_watch_ack(PyObject *Py_UNUSED(self), PyObject *Py_UNUSED(unused))
{
    pthread_mutex_lock(&w_mu);
    w_request_at = 0;
    w_request = 0;
    pthread_mutex_unlock(&w_mu);
    w_wake();
    Py_RETURN_NONE;
}

/* lua_watch_parked(): a call took the interrupt (the loop runs again): the fallback waits */
static PyObject *
lua_watch_parked(PyObject *Py_UNUSED(self), PyObject *Py_UNUSED(unused))
{
    pthread_mutex_lock(&w_mu);
    w_progress = mono();
    pthread_mutex_unlock(&w_mu);
    Py_RETURN_NONE;
}

/* lua_watch_running(address): the state about to run Lua through lupa on the loop's thread
 * (0: none); returns the previous one */
static PyObject *
lua_watch_running(PyObject *Py_UNUSED(self), PyObject *arg)
{
    unsigned long long a = PyLong_AsUnsignedLongLong(arg);
    lua_State *prev = t_running;
    if (a == (unsigned long long)-1 && PyErr_Occurred())
        return NULL;
    w_register();
    t_running = (lua_State *)(uintptr_t)a;
    return PyLong_FromUnsignedLongLong((unsigned long long)(uintptr_t)prev);
}

static PyObject *
le_reads(LuaEvents *e)
{
    PyObject *v;
    if (e->reads_off >= 0 && Py_TYPE(e->counters) == e->counters_type && (v = SLOT(e->counters, e->reads_off)) != NULL) {
        Py_INCREF(v);
        return v;
    }
    return PyObject_GetAttr(e->counters, s_reads);
}

/* the yielded values 1 .. top into the registry's HELD_KEY table (with n = top), the stack emptied */
static int
le_hold(LuaEvents *e, PyObject **handover)
{
    lua_State *co = e->co;
    int top = lua.gettop(co);
    lua.createtable(co, top, 1);
    for (int i = 1; i <= top; i++) {
        lua.pushvalue(co, i);
        lua.rawseti(co, -2, i);
    }
    lua.pushinteger(co, top);
    lua.setfield(co, -2, "n");
    lua.setfield(co, LUA_REGISTRYINDEX, HELD_KEY);
    lua.settop(co, 0);
    e->handovers++;
    Py_INCREF(Py_Ellipsis);
    *handover = Py_Ellipsis;     /* LuaState.finish_event: the request is in the registry */
    return SOURCE_PYTHON;
}

/* a Lua number as the Python value lupa makes of it: an integral number is an int */
static PyObject *
number_value(lua_Number d)
{
    if (d == floor(d) && d >= -9.2233720368547758e18 && d < 9.2233720368547758e18)
        return PyLong_FromLongLong((long long)d);
    return PyFloat_FromDouble(d);
}

/* a Lua string as lupa makes it: str, or bytes where it is not UTF-8 (sent as they are,
 * where lupa raises UnicodeDecodeError) */
static PyObject *
string_value(const char *b, size_t len)
{
    PyObject *v = PyUnicode_DecodeUTF8(b, (Py_ssize_t)len, NULL);
    if (v == NULL && PyErr_ExceptionMatches(PyExc_UnicodeDecodeError)) {
        PyErr_Clear();
        v = PyBytes_FromStringAndSize(b, (Py_ssize_t)len);
    }
    return v;
}

/* the Lua value at idx as the Python value lupa makes of it (nil, boolean, number, string);
 * NULL without an exception: another type, left to lupa */
static PyObject *
le_value(lua_State *co, int idx)
{
    switch (lua.type(co, idx)) {
    case LUA_TNIL:
        Py_RETURN_NONE;
    case LUA_TBOOLEAN:
        return PyBool_FromLong(lua.toboolean(co, idx));
    case LUA_TNUMBER:
        return number_value(lua.tonumber(co, idx));
    case LUA_TSTRING: {
        size_t len;
        const char *b = lua.tolstring(co, idx, &len);
        return string_value(b, len);
    }
    default:
        return NULL;
    }
}

/* the statement of id `id` (a borrowed reference), or NULL: not a prepared statement the C sends */
static PyObject *
le_statement(LuaEvents *e, lua_Number d)
{
    Py_ssize_t id = (Py_ssize_t)d;
    PyObject *s;
    if (d != (lua_Number)id || id <= 0 || id >= PyList_GET_SIZE(e->stmts))
        return NULL;
    s = PyList_GET_ITEM(e->stmts, id);
    return s == Py_None ? NULL : s;
}

/* ---------------------------------------------------------------- stackful events --- */

/* run on the state's own stack: each switch in resumes the coroutine (or, parked, returns
 * from pysysbench_exec, which switches back itself); each lua_resume's end switches back */
#define STATUS_KILLED (-100)

static void
le_entry(void)
{
    for (;;) {
        LuaEvents *e = le_current;
        if (sigsetjmp(e->recover, 0) == 0) {
            e->armed = 1;
            e->status = lua.resume(e->co, e->nres);
            e->armed = 0;
        } else {                            /* the watchdog left a trace (on_kick): the state is dead */
            sigset_t kick;
            e = le_current;
            e->armed = 0;
            e->dead = 1;
            e->parked = PARKED_NO;
            e->status = STATUS_KILLED;
            sigemptyset(&kick);
            sigaddset(&kick, SIGURG);
            pthread_sigmask(SIG_UNBLOCK, &kick, NULL);
        }
        ps_switch(&e->stack.sp, e->back);
    }
}

/* continue the state on its own stack until it parks in pysysbench_exec or its lua_resume ends */
static void
le_enter(LuaEvents *e)
{
#if HAVE_STACKS
    LuaEvents *prev = le_current;
    lua_State *running = t_running;
    w_register();
    le_current = e;
    t_running = e->co;
    pysysbench_stacked[0]++;
    ps_switch(&e->back, e->stack.sp);
    pysysbench_stacked[0]--;
    t_running = running;
    le_current = prev;
#else
    (void)e;
#endif
}

/* On a state's own stack, hand prepared statement `id` with its n parameters to the loop and
 * return its answer: 1 (it returned rows), 0 (it did not), -1 (it failed, or the thread is
 * being stopped: yield it).  Anywhere else -2: yield it (the Python bridge, or le_next's
 * yield path, serves it). */
static int
exec_statement(int id, int n, const ExecArg *a)
{
    LuaEvents *e = le_current;
    PyObject *s;
    int i;
    if (e == NULL || e->parked || (s = le_statement(e, (lua_Number)id)) == NULL)
        return -2;
    for (i = 0; i < n; i++) {
        PyObject *v;
        switch (a[i].tag) {
        case ARG_NIL:
            Py_INCREF(Py_None);
            v = Py_None;
            break;
        case ARG_NUMBER:
            v = number_value(a[i].num);
            break;
        case ARG_STRING:
            v = string_value(a[i].str, a[i].len);
            break;
        case ARG_BOOLEAN:
            v = PyBool_FromLong(a[i].num != 0);
            break;
        default:
            v = NULL;
        }
        if (v == NULL)
            break;
        e->pargs[i] = v;
    }
    if (i < n || (e->reads = le_reads(e)) == NULL) {
        while (i-- > 0)
            Py_CLEAR(e->pargs[i]);
        PyErr_Clear();              /* the yield path meets the same value and says so */
        return -2;
    }
    Py_INCREF(s);
    e->pstmt = s;
    e->pn = n;
    e->last = id;
    e->statements++;
    e->parked = PARKED_EXEC;
    ps_switch(&e->stack.sp, e->back);      /* le_enter returns; the answer comes with the next one */
    e->parked = PARKED_NO;
    return e->answer;
}

/* pysysbench_exec1/2/4(id, sig, then per parameter: number, string, its length): what
 * Stmt:execute calls through the FFI (exec_statement above).  sig: the parameter count in bits
 * 0-2, then each parameter's ARG_* in two bits, from bit 3 on.  Fixed arities, no array of
 * parameters: where the event runs interpreted (a state not yet warm, a loop LuaJIT does not
 * compile) an FFI call's plain arguments cost about a third of what filling a cdata array did. */
static int
exec_sig(int id, int sig, ExecArg *a)
{
    int n = sig & 7;
    if (n > 4)
        return -2;
    for (int i = 0; i < n; i++)
        a[i].tag = (sig >> (3 + 2 * i)) & 3;
    return exec_statement(id, n, a);
}

#define EXEC_ARG(num, str, len) {(num), (str), (size_t)(len), 0}

__attribute__((visibility("default"))) int
pysysbench_exec1(int id, int sig, double n1, const char *s1, double l1)
{
    ExecArg a[1] = {EXEC_ARG(n1, s1, l1)};
    return exec_sig(id, sig, a);
}

__attribute__((visibility("default"))) int
pysysbench_exec2(int id, int sig, double n1, const char *s1, double l1, double n2, const char *s2, double l2)
{
    ExecArg a[2] = {EXEC_ARG(n1, s1, l1), EXEC_ARG(n2, s2, l2)};
    return exec_sig(id, sig, a);
}

__attribute__((visibility("default"))) int
pysysbench_exec4(int id, int sig, double n1, const char *s1, double l1, double n2, const char *s2, double l2,
                 double n3, const char *s3, double l3, double n4, const char *s4, double l4)
{
    ExecArg a[4] = {EXEC_ARG(n1, s1, l1), EXEC_ARG(n2, s2, l2), EXEC_ARG(n3, s3, l3), EXEC_ARG(n4, s4, l4)};
    return exec_sig(id, sig, a);
}

/* pysysbench_event_done(stop): called by the runner (lua/state.py) through the FFI when an
 * event has ended without an error.  On a state's own stack, end the event in the loop and
 * return 0 when the next one begins, or -1 (the thread is being stopped: yield it); anywhere
 * else -2 (yield it). */
__attribute__((visibility("default"))) int
pysysbench_event_done(int stop)
{
    LuaEvents *e = le_current;
    if (e == NULL || e->parked)
        return -2;
    e->stop = stop != 0;
    e->parked = PARKED_DONE;
    ps_switch(&e->stack.sp, e->back);
    e->parked = PARKED_NO;
    return e->answer;
}

/* LuaEvents.unwind(): a state parked in pysysbench_exec or pysysbench_event_done answered -1,
 * so that its coroutine waits at an ordinary yield of the statement or of the event's end
 * (what the Python bridge resumes) */
static PyObject *
le_unwind(PyObject *self, PyObject *Py_UNUSED(unused))
{
    LuaEvents *e = (LuaEvents *)self;
    if (e->parked && !e->dead) {
        e->unwinds++;
        Py_CLEAR(e->reads);
        e->answer = -1;
        le_enter(e);
        if (e->parked) {
            PyErr_SetString(PyExc_RuntimeError, "a Lua state parked again while it was unwound");
            return NULL;
        }
        if (e->status == LUA_YIELD)
            lua.settop(e->co, 0);       /* what it yielded again (a statement: the failure answers it) */
    }
    Py_RETURN_NONE;
}

static int
le_next(PyObject *self, int first, PyObject **stmt, PyObject **args, Py_ssize_t *nargs, PyObject **handover)
{
    LuaEvents *e = (LuaEvents *)self;
    lua_State *co = e->co;
    int status, top, nres, changed = 0;
    if (e->dead) {
        PyErr_SetString(interrupted_type, INTERRUPT_MARKER);
        return -1;
    }
    if (!e->parked && lua.status(co) != LUA_YIELD) {
        PyErr_SetString(lua_error_type, "the Lua event coroutine is not suspended");
        return -1;
    }
    nres = 0;
    if (!first) {                           /* the statement's answer: 1 = it returned rows (a read) */
        PyObject *now = le_reads(e);
        if (now == NULL)
            return -1;
        changed = e->reads == NULL ? 1 : PyObject_RichCompareBool(now, e->reads, Py_NE);
        Py_DECREF(now);
        Py_CLEAR(e->reads);
        if (changed < 0)
            return -1;
        if (!e->parked) {
            lua.settop(co, 0);
            lua.pushinteger(co, changed);
            nres = 1;
        }
    }
    if (e->parked != (first ? PARKED_DONE : PARKED_EXEC) && e->parked) {
        PyErr_SetString(lua_error_type, first ? "the Lua event coroutine is waiting for a statement"
                                              : "the Lua event coroutine is waiting for its next event");
        return -1;
    }
    if (e->stacked && e->stack.base == NULL && stack_new(&e->stack) < 0)
        e->stacked = 0;                     /* no stack: the yield path */
    if (e->stacked) {
        if (e->parked)
            e->answer = first ? 0 : changed;
        else
            e->nres = nres;
        le_enter(e);
        if (e->parked == PARKED_DONE) {     /* the event's end, from pysysbench_event_done */
            if (++e->events % TRIM_EVERY == 0)
                stack_trim(&e->stack);
            return e->stop ? SOURCE_STOP : SOURCE_END;
        }
        if (e->parked) {                    /* the next statement, from pysysbench_exec */
            memcpy(args, e->pargs, (size_t)e->pn * sizeof(PyObject *));
            memset(e->pargs, 0, sizeof(e->pargs));
            *stmt = e->pstmt;
            e->pstmt = NULL;
            *nargs = e->pn;
            return SOURCE_STATEMENT;
        }
        status = e->status;
    } else {
        lua_State *running = t_running;
        w_register();
        t_running = co;
        status = lua.resume(co, nres);
        t_running = running;
    }
    if (status == STATUS_KILLED) {
        PyErr_SetString(interrupted_type, INTERRUPT_MARKER);
        return -1;
    }
    if (status != LUA_YIELD) {              /* the runner never returns: it died (an error outside its pcall) */
        size_t len = 0;
        const char *msg = status == 0 ? NULL : lua.tolstring(co, -1, &len);
        if (msg != NULL && strcmp(msg, INTERRUPT_MARKER) == 0) {
            e->dead = 1;
            PyErr_SetString(interrupted_type, INTERRUPT_MARKER);
            return -1;
        }
        PyObject *text = msg == NULL ? PyUnicode_FromString("the Lua event coroutine ended")
                                     : PyUnicode_DecodeUTF8(msg, (Py_ssize_t)len, "replace");
        if (text != NULL) {
            PyErr_SetObject(lua_error_type, text);
            Py_DECREF(text);
        }
        return -1;
    }
    top = lua.gettop(co);
    if (top >= 1 && lua.type(co, 1) == LUA_TNUMBER) {
        lua_Number op = lua.tonumber(co, 1);
        if (op == OP_DONE && top >= 2 && lua.type(co, 2) == LUA_TBOOLEAN && lua.toboolean(co, 2)) {
            int stop = top >= 3 && lua.toboolean(co, 3);   /* a true value returned: its thread stops */
            lua.settop(co, 0);
            return stop ? SOURCE_STOP : SOURCE_END;
        }
        if (op == OP_EXEC && top >= 2 && top - 2 <= SOURCE_MAX_ARGS && lua.type(co, 2) == LUA_TNUMBER) {
            lua_Number d = lua.tonumber(co, 2);
            Py_ssize_t n = top - 2, i;
            PyObject *s = le_statement(e, d);
            if (s != NULL) {
                for (i = 0; i < n; i++) {
                    args[i] = le_value(co, 3 + (int)i);
                    if (args[i] == NULL)
                        break;
                }
                if (i == n && (e->reads = le_reads(e)) != NULL) {
                    lua.settop(co, 0);
                    Py_INCREF(s);
                    *stmt = s;
                    *nargs = n;
                    e->last = (Py_ssize_t)d;
                    e->statements++;
                    return SOURCE_STATEMENT;
                }
                while (i-- > 0)
                    Py_DECREF(args[i]);
                if (PyErr_Occurred())
                    return -1;
            }
        }
    }
    return le_hold(e, handover);
}

static const EventSourceOps le_ops = {.next = le_next};

/* LuaEvents(runner, address, stmts, counters, stacked=True): `runner` lupa's object of the
 * suspended event coroutine, `address` its lua_State (pysysbench_lua_thread_address);
 * `stacked`: stackful events where the platform has them (False: every statement yields) */
static PyObject *
le_new(PyTypeObject *type, PyObject *args, PyObject *Py_UNUSED(kw))
{
    PyObject *runner, *stmts, *counters;
    unsigned long long address;
    int stacked = 1;
    LuaEvents *e;
    if (!PyArg_ParseTuple(args, "OKO!O|p", &runner, &address, &PyList_Type, &stmts, &counters, &stacked))
        return NULL;
    if (!bound) {
        PyErr_SetString(PyExc_RuntimeError, "lua_bind() has not bound a LuaJIT module");
        return NULL;
    }
    e = (LuaEvents *)type->tp_alloc(type, 0);
    if (e == NULL)
        return NULL;
    e->ops = &le_ops;
    e->co = (lua_State *)(uintptr_t)address;
    Py_INCREF(runner);
    e->runner = runner;
    Py_INCREF(stmts);
    e->stmts = stmts;
    Py_INCREF(counters);
    e->counters = counters;
    e->counters_type = Py_TYPE(counters);
    Py_INCREF(e->counters_type);
    e->reads_off = native_slot_offset(counters, s_reads);
    e->stacked = stacked && HAVE_STACKS;
    return (PyObject *)e;
}

static int
le_traverse(LuaEvents *e, visitproc visit, void *arg)
{
    Py_VISIT(e->runner);
    Py_VISIT(e->stmts);
    Py_VISIT(e->counters);
    Py_VISIT(e->reads);
    Py_VISIT(e->pstmt);
    for (int i = 0; i < SOURCE_MAX_ARGS; i++)
        Py_VISIT(e->pargs[i]);
    return 0;
}

static void
le_drop_parked(LuaEvents *e)
{
    Py_CLEAR(e->pstmt);
    for (int i = 0; i < SOURCE_MAX_ARGS; i++)
        Py_CLEAR(e->pargs[i]);
}

static int
le_clear(LuaEvents *e)
{
    if (e->parked && !e->dead && e->runner != NULL) {     /* never left parked: its runtime may close next */
        PyObject *r = le_unwind((PyObject *)e, NULL);
        if (r == NULL)
            PyErr_WriteUnraisable((PyObject *)e);
        Py_XDECREF(r);
    }
    le_drop_parked(e);
    Py_CLEAR(e->runner);
    Py_CLEAR(e->stmts);
    Py_CLEAR(e->counters);
    Py_CLEAR(e->reads);
    Py_CLEAR(e->counters_type);
    return 0;
}

static void
le_dealloc(LuaEvents *e)
{
    PyObject_GC_UnTrack(e);
    le_clear(e);
    if (!e->parked && !e->dead)     /* a stack with live frames is never freed */
        stack_free(&e->stack);
    Py_TYPE(e)->tp_free((PyObject *)e);
}

static PyMemberDef le_members[] = {
    {"last", T_PYSSIZET, offsetof(LuaEvents, last), READONLY, "the id of the statement last handed out"},
    {"statements", T_LONGLONG, offsetof(LuaEvents, statements), READONLY, "statements handed out"},
    {"handovers", T_LONGLONG, offsetof(LuaEvents, handovers), READONLY, "yields left to the Python bridge"},
    {"stacked", T_INT, offsetof(LuaEvents, stacked), READONLY, "1: the state runs on a C stack of its own"},
    {"parked", T_INT, offsetof(LuaEvents, parked), READONLY,
     "1: waiting inside pysysbench_exec for a statement, 2: inside pysysbench_event_done for the next event"},
    {"unwinds", T_LONGLONG, offsetof(LuaEvents, unwinds), READONLY, "unwind() calls that found the state parked"},
    {"dead", T_INT, offsetof(LuaEvents, dead), READONLY, "1: stopped by the watchdog, never to be entered again"},
    {NULL},
};

static PyMethodDef le_methods[] = {
    {"unwind", le_unwind, METH_NOARGS,
     "A state waiting inside pysysbench_exec yields its statement instead (before Python resumes it)."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject LuaEventsType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "pysysbench._native.LuaEvents",
    .tp_basicsize = sizeof(LuaEvents),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "A Lua state's event coroutine as an EventLoop's event source (lua/bridge.c).",
    .tp_new = le_new,
    .tp_dealloc = (destructor)le_dealloc,
    .tp_traverse = (traverseproc)le_traverse,
    .tp_clear = (inquiry)le_clear,
    .tp_members = le_members,
    .tp_methods = le_methods,
};

static PyMethodDef bridge_functions[] = {
    {"lua_bind", lua_bind, METH_O, "Bind lupa's LuaJIT module's C API (True), or not (False: not LuaJIT 2.1)."},
    {"lua_watch_start", lua_watch_start, METH_O, "Watch this thread's event loop for Lua that ignores its stop bounds."},
    {"lua_watch_stop", lua_watch_stop, METH_NOARGS, "Stop watching."},
    {"lua_watch_bound", lua_watch_bound, METH_VARARGS, "(delay_s, message, code): the next stop bound (0: none)."},
    {"lua_watch_ack", lua_watch_ack, METH_NOARGS, "The loop has seen the stop requests so far."},
    {"lua_watch_parked", lua_watch_parked, METH_NOARGS, "A Lua call took the interrupt."},
    {"lua_watch_running", lua_watch_running, METH_O, "The lua_State running Lua through lupa now (0: none)."},
    {NULL, NULL, 0, NULL},
};

int
bridge_init(PyObject *m)
{
    if ((s_reads = PyUnicode_InternFromString("reads")) == NULL)
        return -1;
    interrupted_type = PyErr_NewExceptionWithDoc("pysysbench._native.LuaInterrupted",
        "A Lua state stopped by the watchdog (lua/bridge.c) at a stop bound.", NULL, NULL);
    if (interrupted_type == NULL || PyModule_AddObjectRef(m, "LuaInterrupted", interrupted_type) < 0)
        return -1;
    if (PyModule_AddStringConstant(m, "LUA_INTERRUPT_MARKER", INTERRUPT_MARKER) < 0)
        return -1;
    LuaEventsType.tp_base = &EventSourceType;
    if (PyType_Ready(&LuaEventsType) < 0 || PyModule_AddFunctions(m, bridge_functions) < 0)
        return -1;
    Py_INCREF(&LuaEventsType);
    return PyModule_AddObject(m, "LuaEvents", (PyObject *)&LuaEventsType);
}
