"""Build hook for the optional C extension (everything else is in pyproject.toml).

``pysysbench._wirescan`` finds where a server's response ends in C and
``pysysbench._hotpath`` does the run loop's random draws and latency recording;
when no compiler is available the build goes on and pysysbench uses the same
functions in Python (drivers/wirescan.py, rand.py, engine/worker.py), only slower.
"""

from setuptools import Extension, setup

# -ffp-contract=off: no fused multiply-add, so _hotpath's draws round exactly as Python's floats
FLAGS = ["-O2", "-ffp-contract=off"]

# the C interface between the two (a C loop in _hotpath given responses by _wirescan's strands)
HEADERS = ["pysysbench/pysysbench_strand_api.h"]

setup(ext_modules=[Extension("pysysbench._wirescan", ["pysysbench/_wirescan.c"], depends=HEADERS, optional=True,
                             extra_compile_args=FLAGS),
                   Extension("pysysbench._hotpath", ["pysysbench/_hotpath.c"], depends=HEADERS, optional=True,
                             extra_compile_args=FLAGS)])
