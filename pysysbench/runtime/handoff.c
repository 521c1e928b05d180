/* The strand hand-off in C: the twin of handoff.py's `here` access.  engine/strand.c writes
 * which strand runs now (strand_setup gives it the hand-off object), drivers/wire.c reads it
 * to park the running strand on a wire and, when the response comes, resumes that strand
 * through the strand core registered here -- so the wire (drivers) never names the engine's
 * strand, as the Python wire only calls ``strand.resume``. */

#include "native_runtime.h"

static PyObject *s_strand;
static PyObject *st_here;          /* handoff.here, once set up */
static PyTypeObject *here_type;    /* its type, whose `strand` slot is at here_off */
static Py_ssize_t here_off = -1;

PyTypeObject *handoff_strand_type;
PyObject *(*handoff_resume)(PyObject *strand, PyObject *response);
int (*handoff_as_task)(void);

int
handoff_setup(PyObject *here)
{
    Py_INCREF(here);
    Py_XSETREF(st_here, here);
    Py_INCREF(Py_TYPE(here));
    Py_XSETREF(here_type, Py_TYPE(here));
    here_off = native_slot_offset(here, s_strand);
    return 0;
}

/* here.strand (a new reference): the slot read in place when `here` is the set-up object's type */
PyObject *
handoff_get(PyObject *here)
{
    if (here_off >= 0 && Py_TYPE(here) == here_type && SLOT(here, here_off) != NULL) {
        Py_INCREF(SLOT(here, here_off));
        return SLOT(here, here_off);
    }
    return PyObject_GetAttr(here, s_strand);
}

int
handoff_set(PyObject *here, PyObject *value)
{
    if (here_off >= 0 && Py_TYPE(here) == here_type) {
        Py_INCREF(value);
        Py_XSETREF(SLOT(here, here_off), value);
        return 0;
    }
    return PyObject_SetAttr(here, s_strand, value);
}

PyObject *
handoff_current(void)
{
    if (st_here == NULL || here_off < 0 || Py_TYPE(st_here) != here_type)
        return NULL;
    return SLOT(st_here, here_off);
}

PyObject *
handoff_here(void)
{
    return st_here;
}

int
handoff_init(PyObject *Py_UNUSED(m))
{
    s_strand = PyUnicode_InternFromString("strand");
    return s_strand == NULL ? -1 : 0;
}
