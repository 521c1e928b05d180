/* sysbench's 'uniform', 'special' and 'string' draws in C: the twin of rand.py's
 * Rand._py_uniform / _py_special / _py_string.  The Python code is the contract: the
 * same double operations in the same order, so a seeded run draws the same numbers
 * with or without the C (tests/unit/test_hotpath.py runs both side by side).
 * Also the C's one xoroshiro128+ (native_core.h), the twin of rand.py's Xoroshiro128Plus
 * (tests/unit/test_xoroshiro.py). */

#include "native_core.h"
#include <math.h>
#include <stddef.h>
#include <stdint.h>

#define SMALL (1LL << 52)   /* integers that convert to double exactly, with room */

/* ---------------------------------------------------------- xoroshiro128+ --- */

static inline uint64_t
rotl64(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

uint64_t
xoro_next(uint64_t *s, XoroParams p)
{
    uint64_t s0 = s[0], s1 = s[1], r = s0 + s1;
    s1 ^= s0;
    s[0] = rotl64(s0, p.a) ^ s1 ^ (s1 << p.b);
    s[1] = rotl64(s1, p.c);
    return r;
}

double
xoro_double(uint64_t *s, XoroParams p)
{
    /* times 2^-bits: exact, so the one rounding is the conversion's, as in rand.py */
    return (double)(xoro_next(s, p) >> (64 - p.double_bits)) * (1.0 / (double)(1ULL << p.double_bits));
}

static uint64_t
splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

void
xoro_seed_splitmix64(uint64_t *s, uint64_t seed)
{
    s[0] = splitmix64(&seed);
    s[1] = splitmix64(&seed);
}

static int
xoro_params_ok(XoroParams p)
{
    if (p.a < 1 || p.a > 63 || p.b < 0 || p.b > 63 || p.c < 1 || p.c > 63 || p.double_bits < 1 || p.double_bits > 53) {
        PyErr_SetString(PyExc_ValueError, "xoroshiro128+: rotations in 1..63, a shift in 0..63, double bits in 1..53");
        return 0;
    }
    return 1;
}

/* xoro_draws(s0, s1, (a, b, c, double_bits), n, doubles=False): the next n outputs (or doubles)
 * from the state (s0, s1), for the twin test */
static PyObject *
xoro_draws(PyObject *Py_UNUSED(self), PyObject *args)
{
    unsigned long long s0, s1;
    XoroParams p;
    Py_ssize_t n;
    int doubles = 0;
    if (!PyArg_ParseTuple(args, "KK(iiii)n|p", &s0, &s1, &p.a, &p.b, &p.c, &p.double_bits, &n, &doubles) ||
        !xoro_params_ok(p))
        return NULL;
    if (n < 0) {
        PyErr_SetString(PyExc_ValueError, "xoro_draws: n must not be negative");
        return NULL;
    }
    uint64_t s[2] = {s0, s1};
    PyObject *out = PyList_New(n);
    for (Py_ssize_t i = 0; out != NULL && i < n; i++) {
        PyObject *x = doubles ? PyFloat_FromDouble(xoro_double(s, p)) : PyLong_FromUnsignedLongLong(xoro_next(s, p));
        if (x == NULL)
            Py_CLEAR(out);
        else
            PyList_SET_ITEM(out, i, x);
    }
    return out;
}

/* splitmix64_state(seed) -> (s0, s1): the state xoro_seed_splitmix64 fills */
static PyObject *
splitmix64_state(PyObject *Py_UNUSED(self), PyObject *args)
{
    unsigned long long seed;
    uint64_t s[2];
    if (!PyArg_ParseTuple(args, "K", &seed))
        return NULL;
    xoro_seed_splitmix64(s, seed);
    return Py_BuildValue("(KK)", (unsigned long long)s[0], (unsigned long long)s[1]);
}

/* ------------------------------------------------------------------- Xoro --- *
 * A xoroshiro128+ generator as an object: rand.Rand's stream (its Python twin is rand.py's
 * Xoroshiro128Plus, the same outputs and doubles), whose state the draws below step in place,
 * without a Python call per draw.  Sysbench's own generator is a xoroshiro128+ too; a
 * special() draw takes 13 doubles, which the Mersenne Twister behind random.Random made of
 * 26 words (about 480 instructions of a point select's 5,000). */

typedef struct {
    PyObject_HEAD
    uint64_t s[2];
    XoroParams p;
} XoroObject;

static PyTypeObject XoroType;

/* Xoro(s0, s1, (a, b, c, double_bits)) */
static PyObject *
xoroobj_new(PyTypeObject *type, PyObject *args, PyObject *Py_UNUSED(kw))
{
    unsigned long long s0, s1;
    XoroParams p;
    XoroObject *o;
    if (!PyArg_ParseTuple(args, "KK(iiii)", &s0, &s1, &p.a, &p.b, &p.c, &p.double_bits) || !xoro_params_ok(p))
        return NULL;
    if ((o = (XoroObject *)type->tp_alloc(type, 0)) == NULL)
        return NULL;
    o->s[0] = s0;
    o->s[1] = s1;
    o->p = p;
    return (PyObject *)o;
}

static PyObject *
xoroobj_double(PyObject *self, PyObject *Py_UNUSED(unused))
{
    XoroObject *o = (XoroObject *)self;
    return PyFloat_FromDouble(xoro_double(o->s, o->p));
}

static PyObject *
xoroobj_next(PyObject *self, PyObject *Py_UNUSED(unused))
{
    XoroObject *o = (XoroObject *)self;
    return PyLong_FromUnsignedLongLong(xoro_next(o->s, o->p));
}

static PyObject *
xoroobj_skip(PyObject *self, PyObject *Py_UNUSED(unused))
{
    XoroObject *o = (XoroObject *)self;
    xoro_next(o->s, o->p);
    Py_RETURN_NONE;
}

static PyObject *
xoroobj_getstate(PyObject *self, PyObject *Py_UNUSED(unused))
{
    XoroObject *o = (XoroObject *)self;
    return Py_BuildValue("(KK)", (unsigned long long)o->s[0], (unsigned long long)o->s[1]);
}

static PyObject *
xoroobj_setstate(PyObject *self, PyObject *state)
{
    XoroObject *o = (XoroObject *)self;
    unsigned long long s0, s1;
    if (!PyArg_ParseTuple(state, "KK", &s0, &s1))
        return NULL;
    o->s[0] = s0;
    o->s[1] = s1;
    Py_RETURN_NONE;
}

static PyMethodDef xoroobj_methods[] = {
    {"double", xoroobj_double, METH_NOARGS, "a double in [0, 1) from the next output's top bits"},
    {"next", xoroobj_next, METH_NOARGS, "one raw 64-bit output"},
    {"skip", xoroobj_skip, METH_NOARGS, "consume one output"},
    {"getstate", xoroobj_getstate, METH_NOARGS, "the state (s0, s1)"},
    {"setstate", xoroobj_setstate, METH_O, "setstate((s0, s1))"},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject XoroType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "pysysbench._native.Xoro",
    .tp_basicsize = sizeof(XoroObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "xoroshiro128+ on a state (s0, s1): the C twin of rand.py's Xoroshiro128Plus.",
    .tp_new = xoroobj_new,
    .tp_methods = xoroobj_methods,
};

/* ------------------------------------------------------------------ draws --- */

enum { KIND_UNIFORM = 0, KIND_SPECIAL = 1, KIND_STRING = 2 };

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    int kind;
    PyObject *u;          /* zero-argument callable: uniform double in [0, 1) */
    XoroObject *rng;      /* the Xoro whose double() is u, stepped in place; else NULL (u is called) */
    PyObject *fallback;   /* the Python method, for arguments out of SMALL range */
    long spec_iter;
    double iter_mult, pct_mult, pct_2_mult, res_mult;
} Draw;

static int
draw_u(Draw *d, double *out)
{
    if (d->rng != NULL) {
        *out = xoro_double(d->rng->s, d->rng->p);
        return 0;
    }
    PyObject *r = PyObject_Vectorcall(d->u, NULL, 0, NULL);
    if (r == NULL)
        return -1;
    *out = PyFloat_AsDouble(r);
    Py_DECREF(r);
    if (*out == -1.0 && PyErr_Occurred())
        return -1;
    return 0;
}

/* a + int(x) */
static PyObject *
trunc_plus(long long a, double x)
{
    if (fabs(x) < (double)SMALL)
        return PyLong_FromLongLong(a + (long long)x);
    PyObject *pa = PyLong_FromLongLong(a), *px = PyLong_FromDouble(x), *sum = NULL;   /* never on sysbench's ranges */
    if (pa != NULL && px != NULL)
        sum = PyNumber_Add(pa, px);
    Py_XDECREF(pa);
    Py_XDECREF(px);
    return sum;
}

/* rand.string(template): '#' -> int(48.0 + u() * 10.0), '@' -> int(97.0 + u() * 26.0), the rest copied;
 * one draw per '#'/'@', left to right (Latin-1 templates; others go to the Python method) */
static PyObject *
draw_string(Draw *d, PyObject *template)
{
    Py_ssize_t n = PyUnicode_GET_LENGTH(template), i;
    const Py_UCS1 *t = PyUnicode_1BYTE_DATA(template);
    PyObject *out = PyUnicode_New(n, PyUnicode_MAX_CHAR_VALUE(template));
    Py_UCS1 *w;
    double r;
    if (out == NULL)
        return NULL;
    w = PyUnicode_1BYTE_DATA(out);
    for (i = 0; i < n; i++) {
        if (t[i] == '#') {
            if (draw_u(d, &r) < 0)
                goto fail;
            w[i] = (Py_UCS1)(long)(48.0 + r * 10.0);
        } else if (t[i] == '@') {
            if (draw_u(d, &r) < 0)
                goto fail;
            w[i] = (Py_UCS1)(long)(97.0 + r * 26.0);
        } else
            w[i] = t[i];
    }
    return out;
fail:
    Py_DECREF(out);
    return NULL;
}

static PyObject *
draw_call(PyObject *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    Draw *d = (Draw *)self;
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    long long a, b;
    double r;
    int overflow = 0;
    if (d->kind == KIND_STRING) {
        if (nargs != 1 || kwnames != NULL || !PyUnicode_Check(args[0]) || PyUnicode_KIND(args[0]) != PyUnicode_1BYTE_KIND)
            return PyObject_Vectorcall(d->fallback, args, nargsf, kwnames);
        return draw_string(d, args[0]);
    }
    if (nargs != 2 || kwnames != NULL || !PyLong_CheckExact(args[0]) || !PyLong_CheckExact(args[1]))
        return PyObject_Vectorcall(d->fallback, args, nargsf, kwnames);
    a = PyLong_AsLongLongAndOverflow(args[0], &overflow);
    if (!overflow)
        b = PyLong_AsLongLongAndOverflow(args[1], &overflow);
    if (overflow || a <= -SMALL || a >= SMALL || b <= -SMALL || b >= SMALL)
        return PyObject_Vectorcall(d->fallback, args, nargsf, kwnames);
    if (d->kind == KIND_UNIFORM) {
        /* int(a + u() * (b - a + 1)) */
        if (draw_u(d, &r) < 0)
            return NULL;
        double x = (double)a + r * (double)(b - a + 1);
        if (!(fabs(x) < (double)SMALL))
            return PyLong_FromDouble(x);
        return PyLong_FromLongLong((long long)x);
    }
    /* special: t = b - a; rnd = u(); if rnd * (t * res_mult) < t: int(a + sum * t * iter_mult)
       else a + int(rnd * (t * pct_mult + 1) + (t / 2 - t * pct_2_mult)) */
    {
        long long t = b - a;
        double td = (double)t;
        if (draw_u(d, &r) < 0)
            return NULL;
        if (r * (td * d->res_mult) < td) {
            double total = 0.0, x;
            for (long i = 0; i < d->spec_iter; i++) {
                if (draw_u(d, &x) < 0)
                    return NULL;
                total += x;
            }
            double v = (double)a + total * td * d->iter_mult;
            if (!(fabs(v) < (double)SMALL))
                return PyLong_FromDouble(v);
            return PyLong_FromLongLong((long long)v);
        }
        return trunc_plus(a, r * (td * d->pct_mult + 1.0) + (td / 2.0 - td * d->pct_2_mult));
    }
}

static int
draw_traverse(Draw *d, visitproc visit, void *arg)
{
    Py_VISIT(d->u);
    Py_VISIT(d->rng);
    Py_VISIT(d->fallback);
    return 0;
}

static int
draw_clear(Draw *d)
{
    Py_CLEAR(d->u);
    Py_CLEAR(d->rng);
    Py_CLEAR(d->fallback);
    return 0;
}

static void
draw_dealloc(Draw *d)
{
    PyObject_GC_UnTrack(d);
    draw_clear(d);
    Py_TYPE(d)->tp_free((PyObject *)d);
}

/* Draw(kind, u, fallback, spec_iter=1, iter_mult=1.0, pct_mult=0.0, pct_2_mult=0.0, res_mult=0.0, rng=None):
 * rng, when given, is the Xoro whose double() is u, stepped in place */
static PyObject *
draw_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    static char *names[] = {"kind", "u", "fallback", "spec_iter", "iter_mult", "pct_mult", "pct_2_mult",
                            "res_mult", "rng", NULL};
    int kind;
    PyObject *u, *fallback, *rng = Py_None;
    long spec_iter = 1;
    double iter_mult = 1.0, pct_mult = 0.0, pct_2_mult = 0.0, res_mult = 0.0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "iOO|ldddd$O", names, &kind, &u, &fallback, &spec_iter, &iter_mult,
                                     &pct_mult, &pct_2_mult, &res_mult, &rng))
        return NULL;
    if (kind != KIND_UNIFORM && kind != KIND_SPECIAL && kind != KIND_STRING) {
        PyErr_SetString(PyExc_ValueError, "kind must be 0 (uniform), 1 (special) or 2 (string)");
        return NULL;
    }
    if (rng != Py_None && !Py_IS_TYPE(rng, &XoroType)) {
        PyErr_SetString(PyExc_TypeError, "rng must be a Xoro");
        return NULL;
    }
    Draw *d = (Draw *)type->tp_alloc(type, 0);
    if (d == NULL)
        return NULL;
    d->vectorcall = draw_call;
    d->kind = kind;
    Py_INCREF(u);
    d->u = u;
    Py_INCREF(fallback);
    d->fallback = fallback;
    if (rng != Py_None) {
        Py_INCREF(rng);
        d->rng = (XoroObject *)rng;
    }
    d->spec_iter = spec_iter;
    d->iter_mult = iter_mult;
    d->pct_mult = pct_mult;
    d->pct_2_mult = pct_2_mult;
    d->res_mult = res_mult;
    return (PyObject *)d;
}

static PyTypeObject DrawType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "pysysbench._native.Draw",
    .tp_basicsize = sizeof(Draw),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_doc = "One of rand.Rand's integer draws (uniform, special) over a uniform-double source.",
    .tp_new = draw_new,
    .tp_dealloc = (destructor)draw_dealloc,
    .tp_traverse = (traverseproc)draw_traverse,
    .tp_clear = (inquiry)draw_clear,
    .tp_call = PyVectorcall_Call,
    .tp_vectorcall_offset = offsetof(Draw, vectorcall),
};

static PyMethodDef rand_methods[] = {
    {"xoro_draws", xoro_draws, METH_VARARGS,
     "xoro_draws(s0, s1, (a, b, c, double_bits), n, doubles=False): n xoroshiro128+ outputs (or doubles)"},
    {"splitmix64_state", splitmix64_state, METH_VARARGS,
     "splitmix64_state(seed) -> (s0, s1): the xoroshiro128+ state splitmix64 fills from seed"},
    {NULL, NULL, 0, NULL},
};

int
rand_init(PyObject *m)
{
    if (PyType_Ready(&DrawType) < 0 || PyType_Ready(&XoroType) < 0)
        return -1;
    Py_INCREF(&DrawType);
    Py_INCREF(&XoroType);
    if (PyModule_AddObject(m, "Draw", (PyObject *)&DrawType) < 0 ||
        PyModule_AddObject(m, "Xoro", (PyObject *)&XoroType) < 0 || PyModule_AddFunctions(m, rand_methods) < 0 ||
        PyModule_AddIntConstant(m, "UNIFORM", KIND_UNIFORM) < 0 ||
        PyModule_AddIntConstant(m, "SPECIAL", KIND_SPECIAL) < 0 ||
        PyModule_AddIntConstant(m, "STRING", KIND_STRING) < 0)
        return -1;
    return 0;
}
