/* pysysbench._native: the C twins of pysysbench's hot path as one extension module, built
 * from one source per layer.  This file sits on the top C layer (beside the engine's C, the
 * highest user) so that every call it makes points down, and it only wires: it readies every file, lowest layer first
 * (the C layers and their headers: native_runtime.h).  pysysbench/runtime/native.py is its only
 * importer and decides whether it is used at all (PYSYSBENCH_NATIVE=off: never).  Optional:
 * without a compiler pysysbench uses the Python twins. */

#include "native_core.h"
#include "native_runtime.h"
#include "native_stats.h"
#include "native_drivers.h"
#include "native_workloads.h"
#include "native_engine.h"

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, .m_name = "_native", .m_size = -1};

PyMODINIT_FUNC
PyInit__native(void)
{
    PyObject *m = PyModule_Create(&module);
    if (m == NULL)
        return NULL;
    if (rand_init(m) < 0 ||                                                        /* core */
        native_util_init(m) < 0 || handoff_init(m) < 0 || memory_init(m) < 0 ||    /* runtime */
        recorder_init(m) < 0 ||                                                    /* stats */
        wire_init(m) < 0 || mysql_init(m) < 0 || pg_init(m) < 0 ||                 /* drivers */
        builtin_init(m) < 0 || bridge_init(m) < 0 ||                               /* workloads */
        strand_init(m) < 0 || event_loop_init(m) < 0 || arrivals_init(m) < 0) {      /* engine */
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
