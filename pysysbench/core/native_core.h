/* The ground floor of pysysbench's C extension (pysysbench._native): files that need Python
 * and nothing of the other C files (the C layers: native_runtime.h).
 *
 *   rand.c      sysbench's uniform / special / string draws; xoroshiro128+      (rand.py) */

#ifndef PYSYSBENCH_NATIVE_CORE_H
#define PYSYSBENCH_NATIVE_CORE_H

#ifndef PY_SSIZE_T_CLEAN
#define PY_SSIZE_T_CLEAN
#endif
#include <Python.h>
#include <stdint.h>

int rand_init(PyObject *module);

/* xoroshiro128+, the one generator of the C (rand.py's Xoroshiro128Plus is its twin): what its
 * users choose, the rotation a, shift b and rotation c of a step and how many top bits of an
 * output make a double in [0, 1).  Constant at each call, so -flto folds them into the caller */
typedef struct {
    int a, b, c, double_bits;
} XoroParams;
/* sysbench 1.0.20's constants and uniform_double (sysbench.rand through lua/bridge.c) */
#define XORO_SYSBENCH ((XoroParams){55, 14, 36, 52})
/* the authors' 2018 constants and the usual 53-bit double (workloads/builtin.c) */
#define XORO_2018 ((XoroParams){24, 16, 37, 53})

/* one raw 64-bit output of the state s[2] */
uint64_t xoro_next(uint64_t *s, XoroParams p);
/* a double in [0, 1) from the next output's top p.double_bits bits */
double xoro_double(uint64_t *s, XoroParams p);
/* s[2] filled by splitmix64 from seed (the built-in tests' seeding) */
void xoro_seed_splitmix64(uint64_t *s, uint64_t seed);

#endif
