"""Build hook for the optional C extension (everything else is in pyproject.toml).

``pysysbench._wirescan`` finds where a server's response ends in C; when no
compiler is available the build goes on and pysysbench uses the same functions
in Python (pysysbench/drivers/wirescan.py), only slower.
"""

from setuptools import Extension, setup

setup(ext_modules=[Extension("pysysbench._wirescan", ["pysysbench/_wirescan.c"], optional=True,
                             extra_compile_args=["-O2"])])
