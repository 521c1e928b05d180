/* The strand's driving half in C: the twin of engine/strand.py's _PyStrandCore (the base
 * class of Strand; tests/unit/test_strand.py runs the Strand on both cores). */

#include "native_runtime.h"
#include "native_drivers.h"
#include "native_engine.h"

/* The driving half of engine/strand.py's Strand (its base class): resume the
 * thread's coroutine with a response, with the strand registered as the running
 * strand (the hand-off, handoff.c) and as the loop's current task, and park it on the wire it
 * yields.  Anything else it yields goes to the Python methods (_park), and so does
 * its end (_settle).  Set up once by strand_setup(here, enter_task, leave_task,
 * CancelledError). */

static PyObject *st_enter, *st_leave, *st_cancelled, *s_park, *s_settle, *s_throw;
/* asyncio's own table of the running task per loop (asyncio.tasks._current_tasks, the dict
 * _asyncio._enter_task / _leave_task keep), or NULL: strand_setup is given it only where
 * engine/strand.py checked that those functions keep it.  Entering and leaving through it
 * is what those functions do, minus their call and argument parsing (a third of a strand's
 * resume, bench/journal/2026-12-01.md); anything unusual (a task already running, another task
 * current at leave) goes to the functions themselves, which raise their own errors. */
static PyObject *st_tasks;
static PyTypeObject StrandCoreType;

typedef struct StrandCore {
    PyObject_HEAD
    PyObject *coro;
    PyObject *loop;
    PyObject *waiting;   /* the Future or wire this strand waits on, or None */
    int cancel;          /* a cancel() not yet delivered */
    PyObject *inner;     /* an awaitable inside coro that the wire's response may go to directly, or NULL */
    strand_inner_step inner_step;
    int deferred;        /* running an inner step, not yet the loop's current task (strand_as_task) */
} StrandCore;

/* The inner shortcut (strand_offer in native_engine.h).  An awaitable deep in the strand's
 * coroutine (a C loop of many statements: engine/event_loop.c) offers itself each time
 * it yields; when what it yielded reaches the strand as a wire to park on, the wire's
 * response is later given to the awaitable's step function directly, without resuming
 * the Python frames between it and the strand, which stay suspended on it.  When the
 * step ends the awaitable (a return or an exception), the awaitable keeps the outcome
 * and the strand resumes the frames, whose next send to it returns that outcome. */
void
strand_offer(PyObject *inner, strand_inner_step step)
{
    PyObject *s = handoff_current();
    if (s == NULL || !PyObject_TypeCheck(s, &StrandCoreType))
        return;
    Py_INCREF(inner);
    Py_XSETREF(((StrandCore *)s)->inner, inner);
    ((StrandCore *)s)->inner_step = step;
}

/* fn(loop, self): asyncio's _enter_task or _leave_task; 0, or -1 with its exception */
static int
task_call(PyObject *fn, StrandCore *self)
{
    PyObject *r, *task_args[2] = {self->loop, (PyObject *)self};
    r = PyObject_Vectorcall(fn, task_args, 2, NULL);
    if (r == NULL)
        return -1;
    Py_DECREF(r);
    return 0;
}

/* become the loop's current task (asyncio.current_task()): 0, or -1 with an exception */
static int
task_enter(StrandCore *self)
{
    if (st_tasks != NULL) {
        PyObject *cur = PyDict_GetItemWithError(st_tasks, self->loop);    /* borrowed */
        if (cur == NULL && !PyErr_Occurred() && PyDict_SetItem(st_tasks, self->loop, (PyObject *)self) == 0)
            return 0;
        PyErr_Clear();                        /* the function raises what is wrong */
    }
    return task_call(st_enter, self);
}

/* stop being the loop's current task: 0, or -1 with an exception */
static int
task_leave(StrandCore *self)
{
    if (st_tasks != NULL && PyDict_GetItemWithError(st_tasks, self->loop) == (PyObject *)self
        && PyDict_DelItem(st_tasks, self->loop) == 0)
        return 0;
    PyErr_Clear();
    return task_call(st_leave, self);
}

/* become the running strand (the hand-off); *outer: the one before */
static int
strand_hand(StrandCore *self, PyObject **outer)
{
    *outer = handoff_get(handoff_here());
    if (*outer == NULL)
        return -1;
    if (handoff_set(handoff_here(), (PyObject *)self) < 0) {
        Py_CLEAR(*outer);
        return -1;
    }
    return 0;
}

/* become the running strand and the loop's current task; *outer: the strand before */
static int
strand_enter(StrandCore *self, PyObject **outer)
{
    if (strand_hand(self, outer) < 0)
        return -1;
    if (task_enter(self) < 0) {
        handoff_set(handoff_here(), *outer);
        Py_CLEAR(*outer);
        return -1;
    }
    return 0;
}

/* undo strand_enter (consumes outer); an exception set on entry is kept.  After an inner
 * step that never needed to be the current task (deferred), only the hand-off is undone. */
static int
strand_leave(StrandCore *self, PyObject *outer)
{
    PyObject *et, *ev, *etb;
    int rc = 0;
    PyErr_Fetch(&et, &ev, &etb);
    if (self->deferred)
        self->deferred = 0;
    else if (task_leave(self) < 0)
        rc = -1;
    if (handoff_set(handoff_here(), outer) < 0)
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

/* handoff_as_task: the running strand, deferred in an inner step, becomes the current task now */
static int
strand_as_task(void)
{
    PyObject *s = handoff_current();
    if (s == NULL || !PyObject_TypeCheck(s, &StrandCoreType) || !((StrandCore *)s)->deferred)
        return 0;
    if (task_enter((StrandCore *)s) < 0)
        return -1;
    ((StrandCore *)s)->deferred = 0;
    return 0;
}

/* wait for what the coroutine (or the inner awaitable) yielded (consumed): a wire or a rate-mode
 * ticket (engine/arrivals.c) resumes us itself (keeping an inner awaitable's offer); anything
 * else goes to the Python methods */
static PyObject *
strand_wait(StrandCore *self, PyObject *y)
{
    PyObject *r;
    if (PyObject_TypeCheck(y, &WireCoreType) || Py_IS_TYPE(y, &TicketType)) {
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
    if (handoff_here() == NULL) {
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

/* deliver the cancel() not yet delivered: resume with a new CancelledError */
static PyObject *
strand_cancelled(StrandCore *self)
{
    PyObject *exc, *r;
    self->cancel = 0;
    exc = PyObject_CallNoArgs(st_cancelled);
    if (exc == NULL)
        return NULL;
    r = strand_run(self, NULL, exc);
    Py_DECREF(exc);
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
    if (self->cancel)
        return strand_cancelled(self);
    return strand_run(self, value, NULL);
}

/* resume with exc raised, or with the cancel not yet delivered, as Task.__step does: a
   cancel() that found the awaited Future already done (an asyncio.timeout() firing in the
   turn its connect failed) lands in that await, inside the timeout block, not at a later
   one (strand.py's throw; it ended threads silently) */
static PyObject *
strand_throw(StrandCore *self, PyObject *exc)
{
    if (self->cancel) {
        int is = PyObject_IsInstance(exc, st_cancelled);
        if (is < 0)
            return NULL;
        if (!is)
            return strand_cancelled(self);
        self->cancel = 0;
    }
    return strand_run(self, NULL, exc);
}

/* the response to the inner awaitable's step; the frames above it only when it has ended */
static PyObject *
strand_inner(StrandCore *self, PyObject *value)
{
    PyObject *outer, *y = NULL, *inner = self->inner;
    PySendResult status;
    Py_INCREF(inner);
    if (strand_hand(self, &outer) < 0) {       /* the current task only if Python code runs (strand_as_task) */
        Py_DECREF(inner);
        return NULL;
    }
    self->deferred = 1;
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
    return strand_throw(self, exc);
}

static PyObject *
strand_setup(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyObject *here, *enter, *leave, *cancelled, *tasks = Py_None;
    if (!PyArg_ParseTuple(args, "OOOO|O", &here, &enter, &leave, &cancelled, &tasks))
        return NULL;
    if (tasks != Py_None && !PyDict_CheckExact(tasks)) {
        PyErr_SetString(PyExc_TypeError, "strand_setup: current_tasks must be a dict or None");
        return NULL;
    }
    if (handoff_setup(here) < 0)
        return NULL;
    Py_INCREF(enter);
    Py_XSETREF(st_enter, enter);
    Py_INCREF(leave);
    Py_XSETREF(st_leave, leave);
    Py_INCREF(cancelled);
    Py_XSETREF(st_cancelled, cancelled);
    if (tasks == Py_None)
        Py_CLEAR(st_tasks);
    else {
        Py_INCREF(tasks);
        Py_XSETREF(st_tasks, tasks);
    }
    Py_RETURN_NONE;
}

static PyObject *
strandcore_new(PyTypeObject *type, PyObject *Py_UNUSED(args), PyObject *Py_UNUSED(kw))
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
    .tp_name = "pysysbench._native.StrandCore",
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

static PyMethodDef strand_methods[] = {
    {"strand_setup", strand_setup, METH_VARARGS, "strand_setup(here, enter_task, leave_task, CancelledError, current_tasks=None)"},
    {NULL, NULL, 0, NULL},
};

static PyObject *
strand_resume_any(PyObject *strand, PyObject *response)
{
    return strand_resume((StrandCore *)strand, response);
}

int
strand_init(PyObject *m)
{
    if ((s_park = PyUnicode_InternFromString("_park")) == NULL ||
        (s_settle = PyUnicode_InternFromString("_settle")) == NULL ||
        (s_throw = PyUnicode_InternFromString("throw")) == NULL || PyType_Ready(&StrandCoreType) < 0)
        return -1;
    handoff_strand_type = &StrandCoreType;      /* the wires resume strands through the hand-off */
    handoff_resume = strand_resume_any;
    handoff_as_task = strand_as_task;
    Py_INCREF(&StrandCoreType);
    if (PyModule_AddObject(m, "StrandCore", (PyObject *)&StrandCoreType) < 0 ||
        PyModule_AddFunctions(m, strand_methods) < 0)
        return -1;
    return 0;
}
