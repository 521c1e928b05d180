/* A Lua state's events as an event source (native.h) for the engine's C event loop: the twin
 * of lua/state.py's LuaState._drive for the statements of an event.
 *
 * The Python bridge resumes the state's event coroutine through lupa once per statement and
 * awaits the statement in a Python frame: about two thirds of a Lua event's client CPU was
 * that Python (docs/performance.md, "The Lua engine").  LuaEvents resumes the same coroutine
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
 * Python bridge.  Must match lua/state.py: the OP_* numbers and the runner's yields. */

#include "native.h"
#include <dlfcn.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef struct lua_State lua_State;
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
} lua;
static int bound;
static PyObject *lua_error_type;     /* lupa.LuaError: a dead event coroutine, as lupa raises it */
static PyObject *s_reads;

/* sysbench.rand's generator for the states, called through LuaJIT's FFI (sysbench.lua loads
 * this file with ffi.load when the extension is there): xoroshiro128+ on the state's own
 * uint64_t[2], the twin of sysbench.lua's Lua generator (draw for draw the same numbers,
 * tests/unit/test_lua_rand_native.py).  In Lua, a draw the interpreter runs boxes about ten
 * uint64 cdata objects (garbage in every state's heap) and a string of sysbench.rand.string
 * one draw per character; at 1000 threads most states run their events interpreted, as
 * LuaJIT compiles a loop only after it is hot in that state.  As sysbench, whose
 * sysbench.rand functions are C reached through the FFI. */
static inline uint64_t
rotl64(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

__attribute__((visibility("default"))) uint64_t
pysysbench_rand_u64(uint64_t *s)
{
    uint64_t s0 = s[0], s1 = s[1], r = s0 + s1;
    s1 ^= s0;
    s[0] = rotl64(s0, 55) ^ s1 ^ (s1 << 14);
    s[1] = rotl64(s1, 36);
    return r;
}

__attribute__((visibility("default"))) double
pysysbench_rand_double(uint64_t *s)
{
    return (double)(pysysbench_rand_u64(s) >> 12) * 2.220446049250313e-16;
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
lua_bind(PyObject *self, PyObject *module)
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
} LuaEvents;

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

/* the Lua value at idx as the Python value lupa makes of it (nil, boolean, number, string; a
 * string that is not UTF-8 as bytes, sent as they are, where lupa raises UnicodeDecodeError);
 * NULL without an exception: another type, left to lupa */
static PyObject *
le_value(lua_State *co, int idx)
{
    switch (lua.type(co, idx)) {
    case LUA_TNIL:
        Py_RETURN_NONE;
    case LUA_TBOOLEAN:
        return PyBool_FromLong(lua.toboolean(co, idx));
    case LUA_TNUMBER: {
        lua_Number d = lua.tonumber(co, idx);
        if (d == floor(d) && d >= -9.2233720368547758e18 && d < 9.2233720368547758e18)
            return PyLong_FromLongLong((long long)d);      /* lupa: an integral number is an int */
        return PyFloat_FromDouble(d);
    }
    case LUA_TSTRING: {
        size_t len;
        const char *b = lua.tolstring(co, idx, &len);
        PyObject *v = PyUnicode_DecodeUTF8(b, (Py_ssize_t)len, NULL);
        if (v == NULL && PyErr_ExceptionMatches(PyExc_UnicodeDecodeError)) {
            PyErr_Clear();
            v = PyBytes_FromStringAndSize(b, (Py_ssize_t)len);
        }
        return v;
    }
    default:
        return NULL;
    }
}

static int
le_next(PyObject *self, int first, PyObject **stmt, PyObject **args, Py_ssize_t *nargs, PyObject **handover)
{
    LuaEvents *e = (LuaEvents *)self;
    lua_State *co = e->co;
    int status, top, nres;
    if (lua.status(co) != LUA_YIELD) {
        PyErr_SetString(lua_error_type, "the Lua event coroutine is not suspended");
        return -1;
    }
    nres = 0;
    if (!first) {                           /* the statement's answer: 1 = it returned rows (a read) */
        PyObject *now = le_reads(e);
        int changed;
        if (now == NULL)
            return -1;
        changed = e->reads == NULL ? 1 : PyObject_RichCompareBool(now, e->reads, Py_NE);
        Py_DECREF(now);
        Py_CLEAR(e->reads);
        if (changed < 0)
            return -1;
        lua.settop(co, 0);
        lua.pushinteger(co, changed);
        nres = 1;
    }
    status = lua.resume(co, nres);
    if (status != LUA_YIELD) {              /* the runner never returns: it died (an error outside its pcall) */
        size_t len = 0;
        const char *msg = status == 0 ? NULL : lua.tolstring(co, -1, &len);
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
            Py_ssize_t id = (Py_ssize_t)d, n = top - 2, i;
            PyObject *s;
            if (d == (lua_Number)id && id > 0 && id < PyList_GET_SIZE(e->stmts)
                    && (s = PyList_GET_ITEM(e->stmts, id)) != Py_None) {
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
                    e->last = id;
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

/* LuaEvents(runner, address, stmts, counters): `runner` lupa's object of the suspended event
 * coroutine, `address` its lua_State (pysysbench_lua_thread_address) */
static PyObject *
le_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    PyObject *runner, *stmts, *counters;
    unsigned long long address;
    LuaEvents *e;
    if (!PyArg_ParseTuple(args, "OKO!O", &runner, &address, &PyList_Type, &stmts, &counters))
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
    return (PyObject *)e;
}

static int
le_traverse(LuaEvents *e, visitproc visit, void *arg)
{
    Py_VISIT(e->runner);
    Py_VISIT(e->stmts);
    Py_VISIT(e->counters);
    Py_VISIT(e->reads);
    return 0;
}

static int
le_clear(LuaEvents *e)
{
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
    Py_TYPE(e)->tp_free((PyObject *)e);
}

static PyMemberDef le_members[] = {
    {"last", T_PYSSIZET, offsetof(LuaEvents, last), READONLY, "the id of the statement last handed out"},
    {"statements", T_LONGLONG, offsetof(LuaEvents, statements), READONLY, "statements handed out"},
    {"handovers", T_LONGLONG, offsetof(LuaEvents, handovers), READONLY, "yields left to the Python bridge"},
    {NULL},
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
};

static PyMethodDef bridge_functions[] = {
    {"lua_bind", lua_bind, METH_O, "Bind lupa's LuaJIT module's C API (True), or not (False: not LuaJIT 2.1)."},
    {NULL, NULL, 0, NULL},
};

int
bridge_init(PyObject *m)
{
    if ((s_reads = PyUnicode_InternFromString("reads")) == NULL)
        return -1;
    LuaEventsType.tp_base = &EventSourceType;
    if (PyType_Ready(&LuaEventsType) < 0 || PyModule_AddFunctions(m, bridge_functions) < 0)
        return -1;
    Py_INCREF(&LuaEventsType);
    return PyModule_AddObject(m, "LuaEvents", (PyObject *)&LuaEventsType);
}
