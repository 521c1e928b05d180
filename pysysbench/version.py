"""The package version, in the lowest layer so that every module can name it."""

__version__ = "0.1.0"

# --sysbench-compat value -> the sysbench release pysysbench copies (its face, defaults, report, Lua API)
SYSBENCH_RELEASES = {"1.0": "1.0.20", "1.1": "1.1.0"}
