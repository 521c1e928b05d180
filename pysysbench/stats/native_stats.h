/* The stats layer of pysysbench's C extension (the C layers: native_runtime.h).
 *
 *   stats/recorder.c   the latency recorder                                    (stats/recorder.py) */

#ifndef PYSYSBENCH_NATIVE_STATS_H
#define PYSYSBENCH_NATIVE_STATS_H

#ifndef PY_SSIZE_T_CLEAN
#define PY_SSIZE_T_CLEAN
#endif
#include <Python.h>

typedef struct Recorder Recorder;
extern PyTypeObject RecorderType;
int recorder_init(PyObject *module);
int recorder_add(Recorder *r, long long tid, long long lat);

#endif
