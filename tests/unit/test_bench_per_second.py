"""bench/per_second.py: each interval report beside the machine's wake-ups across cores.

The script reads both tools' report lines and the kernel's counters; the parsing is
what can go wrong quietly (a row of zeros looks like a calm machine).
"""

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench" / "per_second.py"

INTERRUPTS = """           CPU0       CPU1
  0:         37          0   IO-APIC    2-edge      timer
LOC:    1650313    1579771   Local timer interrupts
RES:     120513      98234   Rescheduling interrupts
CAL:      31094      33207   Function call interrupts
"""


@pytest.fixture(scope="module")
def per_second():
    spec = importlib.util.spec_from_file_location("per_second_under_test", BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_rescheduling_row_is_summed_over_the_cores(per_second):
    assert per_second.reschedule_interrupts(INTERRUPTS) == 120513 + 98234
    assert per_second.reschedule_interrupts("LOC: 1 2 Local timer interrupts\n") == 0


def test_context_switches_come_from_proc_stat(per_second):
    assert per_second.context_switches(b"cpu  1 2 3\nintr 99\nctxt 4242\nbtime 1\n") == 4242


@pytest.mark.parametrize(
    "line, expected",
    [
        # sysbench 1.0.20 and pysysbench print the same interval line
        (
            "[ 3s ] thds: 8 tps: 14523.71 qps: 145237.12 (r/w/o: 145237.12/0.00/0.00) lat (ms,95%): 0.09 "
            "err/s: 0.00 reconn/s: 0.00",
            (3, 145237.12),
        ),
        (
            "[ 12s ] thds: 1000 tps: 120.00 qps: 2400.50 (r/w/o: 1680.00/480.00/240.50) lat (ms,95%): 9.91 "
            "err/s: 0.00 reconn/s: 0.00",
            (12, 2400.5),
        ),
        ("Threads started!", None),
        ("    queries:                             1452371 (145237.12 per sec.)", None),
    ],
)
def test_interval_reports_are_read_and_nothing_else(per_second, line, expected):
    assert per_second.report(line) == expected


def test_a_row_divides_by_the_seconds_between_samples_and_by_the_qps(per_second):
    cells = [c.strip() for c in per_second.row(4, 1000.0, (10.0, 100, 1000), (12.0, 300, 5000)).strip("|").split("|")]
    assert cells == ["4", "1,000", "100", "0.100", "2,000", "2.000"]


def test_a_command_without_interval_reports_is_refused_with_one_line():
    done = subprocess.run([sys.executable, str(BENCH), "--", "true"], capture_output=True, text=True)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "per_second: the command needs --report-interval=1 (its per-second QPS is the first column)"
    ]
