"""memory.py: the receive buffers of a reconnect storm go back to the system; many Lua states take huge pages."""

from __future__ import annotations

import platform
import subprocess
import sys

import pytest

STORM = """
import sys
from pysysbench.runtime.memory import pin_mmap_threshold
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
    grown = float(
        subprocess.run([sys.executable, "-c", STORM, "pin"], capture_output=True, text=True, check=True).stdout
    )
    assert grown < 20, f"{grown:.0f} MB more after the reconnect storm"


@pytest.mark.skipif(platform.system() != "Linux" or platform.libc_ver()[0] != "glibc", reason="glibc's malloc")
@pytest.mark.parametrize("native", ["on", "off"])
def test_the_pin_is_one_call_with_or_without_the_c_extension(native):
    """memory.c's mallopt when the C is used (ctypes, 6 M instructions of a run's start-up,
    is then never imported), the same call through ctypes when it is not."""
    import os

    code = (
        "import sys\n"
        "from pysysbench.runtime import native\n"
        "from pysysbench.runtime.memory import pin_mmap_threshold\n"
        "print(pin_mmap_threshold(), native.ENABLED, 'ctypes' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYSYSBENCH_NATIVE": native},
    ).stdout.split()
    assert out[0] == "True"
    assert out[2] == ("False" if out[1] == "True" else "True")


HUGE_SCRIPT = """
function event() end
function thread_done()
  if sysbench.tid == sysbench.opt.threads - 1 then
    local advised = 0
    for line in io.lines("/proc/self/smaps") do
      if line:match("^%x+%-%x+ ") then heap = line:match("%[heap%]") ~= nil
      elseif heap and line:match("^VmFlags:.* hg") then advised = advised + 1 end
    end
    print("heap areas with huge pages asked: " .. advised)
  end
end
"""


def _thp_madvise() -> bool:
    from pysysbench.runtime.memory import _thp_mode

    return _thp_mode() == "madvise"


def _advised_heap_areas(tmp_path, threads: int, env_extra: dict | None = None) -> int:
    import os

    script = tmp_path / "huge.lua"
    script.write_text(HUGE_SCRIPT)
    env = {k: v for k, v in os.environ.items() if k != "GLIBC_TUNABLES"}
    env.update(env_extra or {})
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "pysysbench",
            str(script),
            f"--threads={threads}",
            "--workers=1",
            f"--sqlite-db={tmp_path / 'x.db'}",
            f"--events={threads}",
            "run",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    return int(out.stdout.split("heap areas with huge pages asked: ")[1].split()[0])


@pytest.mark.skipif(platform.system() != "Linux" or platform.libc_ver()[0] != "glibc", reason="glibc's malloc")
def test_many_lua_states_take_huge_pages_for_their_heap_and_few_do_not(tmp_path):
    """memory.py's huge_heap: a worker holding 40 Lua states asks the kernel for huge pages
    on the heap its states grew (the process's /proc/self/smaps, read by the script itself); 8
    states do not (HUGE_PAGE_STATES); nor 40 when the user set GLIBC_TUNABLES."""
    from pysysbench.runtime.native import heap_hugepages

    if heap_hugepages is None or not _thp_madvise():
        pytest.skip("needs the C extension and the kernel's transparent huge pages in madvise mode")
    assert _advised_heap_areas(tmp_path, 40) >= 1
    assert _advised_heap_areas(tmp_path, 8) == 0
    assert _advised_heap_areas(tmp_path, 40, {"GLIBC_TUNABLES": "glibc.malloc.check=0"}) == 0


def test_thp_mode_reads_the_bracketed_setting(tmp_path, monkeypatch):
    from pysysbench.runtime import memory

    setting = tmp_path / "enabled"
    setting.write_text("always [madvise] never\n")
    monkeypatch.setattr(memory, "THP_ENABLED", str(setting))
    assert memory._thp_mode() == "madvise"
    setting.write_text("[never]\n")
    assert memory._thp_mode() == "never"
    monkeypatch.setattr(memory, "THP_ENABLED", str(tmp_path / "absent"))
    assert memory._thp_mode() == ""
