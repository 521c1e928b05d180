"""engine/memory.py: the receive buffers of a reconnect storm go back to the system."""

from __future__ import annotations

import platform
import subprocess
import sys

import pytest

STORM = """
import sys
from pysysbench.engine.memory import pin_mmap_threshold
def rss_mb():
    return int(open("/proc/self/statm").read().split()[1]) * 4096 / 2 ** 20
if sys.argv[1] == "pin":
    assert pin_mmap_threshold() and pin_mmap_threshold()
def storm(n=400):
    keep, bufs = [], []
    for _ in range(n):
        bufs.append(bytearray(256 * 1024))              # asyncmy's receive buffer of a new connection
        keep.append([object() for _ in range(20)] + [bytearray(300)])   # the connection's small objects
    for i in range(n):
        bufs[i] = bytearray(16 * 1024)                  # drivers/mysql/session.py shrinks it after the handshake
    return keep, bufs
first = storm()
before = rss_mb()
del first                                               # the server is killed: the connections go
again = storm()                                         # and are re-opened
print(rss_mb() - before)
"""


@pytest.mark.skipif(platform.system() != "Linux" or platform.libc_ver()[0] != "glibc", reason="glibc's malloc")
def test_reconnected_connections_buffers_do_not_stay_resident():
    """Before: the first free of a 256 KiB block raised glibc's mmap threshold, the re-opened
    connections' buffers came from the heap and stayed resident (about 100 MB here; 650 MB for the
    soak's 2,000 connections)."""
    grown = float(subprocess.run([sys.executable, "-c", STORM, "pin"], capture_output=True, text=True,
                                 check=True).stdout)
    assert grown < 20, f"{grown:.0f} MB more after the reconnect storm"


@pytest.mark.skipif(platform.system() != "Linux" or platform.libc_ver()[0] != "glibc", reason="glibc's malloc")
@pytest.mark.parametrize("native", ["on", "off"])
def test_the_pin_is_one_call_with_or_without_the_c_extension(native):
    """engine/memory.c's mallopt when the C is used (ctypes, 6 M instructions of a run's start-up,
    is then never imported), the same call through ctypes when it is not."""
    import os
    code = ("import sys\n"
            "from pysysbench import native\n"
            "from pysysbench.engine.memory import pin_mmap_threshold\n"
            "print(pin_mmap_threshold(), native.ENABLED, 'ctypes' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**os.environ, "PYSYSBENCH_NATIVE": native}).stdout.split()
    assert out[0] == "True"
    assert out[2] == ("False" if out[1] == "True" else "True")
