"""Acceptance: "``pysysbench oltp_read_write --time=5 --report-interval=1 --histogram=on run``
output parses with the same regular expressions that parse sysbench 1.0.20 output".

The regexes below are the ones a typical sysbench result parser uses (one per line
kind).  They are first checked against verbatim sysbench 1.0.20 output (spec Appendix
A.3 and A.5), then against pysysbench's output on SQLite: every line after the
header must be matched by one of them or be one of the known fixed lines, and the
parsed numbers must be consistent with each other.
"""

from __future__ import annotations

import math
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

_VENV_SCRIPT = Path(sys.executable).with_name("pysysbench")
CLI = [str(_VENV_SCRIPT)] if _VENV_SCRIPT.exists() else [sys.executable, "-m", "pysysbench"]

# =========================================================================== the parser's regexes

SYSBENCH_HEADER_RE = re.compile(r"^sysbench (\d+\.\d+\.\d+)(?:-\w+)? \(using (?:bundled|system) LuaJIT [\w.-]+\)$")
PYSYSBENCH_HEADER_RE = re.compile(r"^pysysbench (\S+) \(using system CPython (\d+\.\d+\.\d+)\)$")

REGEXES: dict[str, re.Pattern] = {
    name: re.compile(rx)
    for name, rx in {
        # banner
        "threads": r"^Number of threads: (\d+)$",
        "rate_target": r"^Target transaction rate: (\d+)/sec$",
        "report_every": r"^Report intermediate results every (\d+) second\(s\)$",
        "seed": r"^Initializing random number generator from (?:current time|seed \((\d+)\)\.)$",
        # intermediate reports
        "interval": (
            r"^\[ (\d+)s \] thds: (\d+) tps: ([\d.]+) qps: ([\d.]+) \(r/w/o: ([\d.]+)/([\d.]+)/([\d.]+)\) "
            r"lat \(ms,(\d+)%\): ([\d.]+) err/s: ([\d.]+) reconn/s: ([\d.]+)$"
        ),
        "queue": r"^\[ (\d+)s \] queue length: (\d+), concurrency: (\d+)$",
        # histogram
        "hist_row": r"^\s+([\d.]+) \|(\**)\s+(\d+)$",
        # cumulative report
        "read": r"^\s+read:\s+(\d+)$",
        "write": r"^\s+write:\s+(\d+)$",
        "other": r"^\s+other:\s+(\d+)$",
        "total": r"^\s+total:\s+(\d+)$",
        "transactions": r"^\s+transactions:\s+(\d+)\s+\(([\d.]+) per sec\.\)$",
        "queries": r"^\s+queries:\s+(\d+)\s+\(([\d.]+) per sec\.\)$",
        "ignored_errors": r"^\s+ignored errors:\s+(\d+)\s+\(([\d.]+) per sec\.\)$",
        "reconnects": r"^\s+reconnects:\s+(\d+)\s+\(([\d.]+) per sec\.\)$",
        "total_time": r"^\s+total time:\s+([\d.]+)s$",
        "total_events": r"^\s+total number of events:\s+(\d+)$",
        "lat_min": r"^\s+min:\s+([\d.]+)$",
        "lat_avg": r"^\s+avg:\s+([\d.]+)$",
        "lat_max": r"^\s+max:\s+([\d.]+)$",
        "lat_pct": r"^\s+(\d+)th percentile:\s+([\d.]+)$",
        "lat_pct_disabled": r"^\s+percentile stats:\s+disabled$",
        "lat_sum": r"^\s+sum:\s+([\d.]+)$",
        "fair_events": r"^\s+events \(avg/stddev\):\s+([\d.]+)/([\d.]+)$",
        "fair_time": r"^\s+execution time \(avg/stddev\):\s+([\d.]+)/([\d.]+)$",
        # sysbench's own WARNING: lines (deprecated aliases, endless test, ...); parsers skip them
        "warning": r"^WARNING: .+$",
    }.items()
}

FIXED_LINES = {
    "",
    " ",  # the histogram's closing line
    "Running the test with following options:",
    "Initializing worker threads...",
    "Threads started!",
    "Latency histogram (values are in milliseconds)",
    "       value  ------------- distribution ------------- count",
    "SQL statistics:",
    "    queries performed:",
    "General statistics:",
    "Latency (ms):",
    "Threads fairness:",
}


class Parsed(dict):
    """name -> list of group tuples, in output order."""

    def one(self, name: str) -> tuple:
        assert len(self.get(name, [])) == 1, (name, self.get(name))
        return self[name][0]


def _parse(text: str, header_re: re.Pattern) -> tuple[Parsed, list[tuple[str, list[str]]]]:
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    assert header_re.match(lines[0]), lines[0]
    parsed = Parsed()
    unmatched = []
    for line in lines[1:]:
        if line in FIXED_LINES:
            continue
        hits = [name for name, rx in REGEXES.items() if rx.match(line)]
        if len(hits) != 1:
            unmatched.append((line, hits))
            continue
        parsed.setdefault(hits[0], []).append(REGEXES[hits[0]].match(line).groups())
    return parsed, unmatched


def parse_output(text: str, header_re: re.Pattern) -> Parsed:
    """Parse every line after the header; fail on a line no regex (or several) matches."""
    parsed, unmatched = _parse(text, header_re)
    assert not unmatched, "lines not matched by exactly one regex:\n" + "\n".join(map(repr, unmatched))
    return parsed


# =========================================================================== consistency checks


def check_consistency(
    p: Parsed,
    *,
    time_limit: int | None = None,
    threads: int | None = None,
    percentile: int = 95,
    histogram: bool | None = True,
    interval: int | None = 1,
) -> dict:
    """``histogram``: True = must be present and complete, False = absent, None = not checked."""
    reads, writes, others, total = (int(p.one(k)[0]) for k in ("read", "write", "other", "total"))
    assert reads + writes + others == total
    events, tps = int(p.one("transactions")[0]), float(p.one("transactions")[1])
    queries, qps = int(p.one("queries")[0]), float(p.one("queries")[1])
    assert queries == total
    assert events == int(p.one("total_events")[0])
    errors, reconnects = int(p.one("ignored_errors")[0]), int(p.one("reconnects")[0])
    total_time = float(p.one("total_time")[0])
    assert events > 0 and total_time > 0
    # per-second figures are count / seconds (total time is printed with 4 decimals)
    assert tps == pytest.approx(events / total_time, rel=2e-3, abs=0.01)
    assert qps == pytest.approx(queries / total_time, rel=2e-3, abs=0.01)
    if time_limit:
        assert time_limit <= total_time < time_limit + 1.5

    lat_min, lat_avg, lat_max, lat_sum = (float(p.one(k)[0]) for k in ("lat_min", "lat_avg", "lat_max", "lat_sum"))
    assert lat_min <= lat_avg <= lat_max
    # sum / events = avg (each printed with 2 decimals)
    assert lat_sum / events == pytest.approx(lat_avg, abs=0.006)
    pct, pct_ms = p.one("lat_pct")
    assert int(pct) == percentile
    # the percentile is a histogram bucket value: buckets are ~1.8 % apart
    assert lat_min * 0.98 - 0.01 <= float(pct_ms) <= lat_max * 1.02 + 0.01

    fair_events_avg, _ = p.one("fair_events")
    fair_time_avg, _ = p.one("fair_time")
    n_threads = int(p.one("threads")[0])
    if threads is not None:
        assert n_threads == threads
    assert float(fair_events_avg) == pytest.approx(events / n_threads, abs=5e-5)
    assert float(fair_time_avg) == pytest.approx(lat_sum / 1000 / n_threads, abs=2e-4)

    if histogram:
        rows = p["hist_row"]
        counts = [int(r[2]) for r in rows]
        values = [float(r[0]) for r in rows]
        assert sum(counts) == events  # every event is in the histogram
        assert values == sorted(values)
        assert max(len(r[1]) for r in rows) == 40  # the fullest bucket gets 40 stars
        assert all(len(r[1]) == math.floor(c * 40 / max(counts) + 0.5) for r, c in zip(rows, counts))
        # first/last bucket vs min/max: half a bucket (~0.9 %) plus the 2-decimal rounding of min/max
        assert values[0] <= lat_min * 1.02 + 0.006 and values[-1] >= lat_max * 0.98 - 0.006
    elif histogram is False:
        assert "hist_row" not in p

    if interval:
        assert int(p.one("report_every")[0]) == interval
        ticks = p.get("interval", [])
        assert ticks, "no intermediate report"
        secs = [int(t[0]) for t in ticks]
        # aligned to the start, ascending (a tick missed under load is skipped, spec 5.6)
        assert secs == sorted(set(secs)) and all(x % interval == 0 for x in secs) and secs[0] > 0
        if time_limit:
            assert time_limit - 1 <= len(secs) and secs[-1] <= time_limit
        for t in ticks:
            thds, t_tps, t_qps, r, w, o, t_pct, t_lat, err, rec = t[1:]
            assert 1 <= int(thds) <= n_threads
            assert int(t_pct) == percentile
            # r/w/o add up to qps (each rounded to 2 decimals)
            assert float(r) + float(w) + float(o) == pytest.approx(float(t_qps), abs=0.02)
            assert float(t_tps) >= 0 and float(t_lat) >= 0 and float(err) >= 0 and float(rec) >= 0
    return dict(
        events=events,
        reads=reads,
        writes=writes,
        others=others,
        errors=errors,
        reconnects=reconnects,
        total_time=total_time,
    )


# =========================================================================== sysbench 1.0.20 output

# Spec Appendix A.3, verbatim (the 146 elided histogram lines are elided here too).
A3 = """\
sysbench 1.0.20 (using system LuaJIT 2.1.0-beta3)

Running the test with following options:
Number of threads: 2
Report intermediate results every 1 second(s)
Initializing random number generator from current time


Initializing worker threads...

Threads started!

[ 1s ] thds: 2 tps: 1126.54 qps: 22571.76 (r/w/o: 15807.52/4508.16/2256.08) lat (ms,95%): 3.36 err/s: 1.00 reconn/s: 0.00
[ 2s ] thds: 2 tps: 1128.07 qps: 22662.37 (r/w/o: 15878.95/4521.28/2262.14) lat (ms,95%): 2.07 err/s: 6.00 reconn/s: 0.00
[ 3s ] thds: 2 tps: 1103.12 qps: 22108.41 (r/w/o: 15475.68/4424.48/2208.24) lat (ms,95%): 3.25 err/s: 2.00 reconn/s: 0.00
[ 4s ] thds: 2 tps: 1162.93 qps: 23241.69 (r/w/o: 16269.08/4645.74/2326.87) lat (ms,95%): 3.30 err/s: 1.00 reconn/s: 0.00
[ 5s ] thds: 2 tps: 1131.08 qps: 22653.52 (r/w/o: 15864.06/4526.30/2263.15) lat (ms,95%): 3.62 err/s: 1.00 reconn/s: 0.00
Latency histogram (values are in milliseconds)
       value  ------------- distribution ------------- count
       0.677 |                                         1
       0.690 |                                         1
       0.715 |                                         2
       0.728 |*                                        4
       0.741 |**                                       12
       0.755 |**                                       8
       0.768 |***                                      13
       0.782 |****                                     21
       0.797 |*****                                    25
       0.811 |******                                   28
       0.826 |********                                 39
[… elided …]
      23.101 |                                         1
      23.948 |                                         1
      90.775 |                                         1
     147.608 |                                         1
 
SQL statistics:
    queries performed:
        read:                            79324
        write:                           22639
        other:                           11321
        total:                           113284
    transactions:                        5655   (1129.50 per sec.)
    queries:                             113284 (22626.69 per sec.)
    ignored errors:                      11     (2.20 per sec.)
    reconnects:                          0      (0.00 per sec.)

General statistics:
    total time:                          5.0057s
    total number of events:              5655

Latency (ms):
         min:                                    0.68
         avg:                                    1.77
         max:                                  146.72
         95th percentile:                        3.30
         sum:                                 9985.72

Threads fairness:
    events (avg/stddev):           2827.5000/74.50
    execution time (avg/stddev):   4.9929/0.00

"""

# Spec Appendix A.5 (rate mode, with the queue lines), verbatim.
A5 = """\
sysbench 1.0.20 (using system LuaJIT 2.1.0-beta3)

Running the test with following options:
Number of threads: 2
Target transaction rate: 500/sec
Report intermediate results every 1 second(s)
Initializing random number generator from current time


Initializing worker threads...

Threads started!

[ 1s ] thds: 2 tps: 509.21 qps: 509.21 (r/w/o: 509.21/0.00/0.00) lat (ms,95%): 0.32 err/s: 0.00 reconn/s: 0.00
[ 1s ] queue length: 0, concurrency: 1
[ 2s ] thds: 2 tps: 499.13 qps: 499.13 (r/w/o: 499.13/0.00/0.00) lat (ms,95%): 0.27 err/s: 0.00 reconn/s: 0.00
[ 2s ] queue length: 0, concurrency: 0
[ 3s ] thds: 2 tps: 472.97 qps: 472.97 (r/w/o: 472.97/0.00/0.00) lat (ms,95%): 0.26 err/s: 0.00 reconn/s: 0.00
[ 3s ] queue length: 1, concurrency: 0
SQL statistics:
    queries performed:
        read:                            1482
        write:                           0
        other:                           0
        total:                           1482
    transactions:                        1482   (493.24 per sec.)
    queries:                             1482   (493.24 per sec.)
    ignored errors:                      0      (0.00 per sec.)
    reconnects:                          0      (0.00 per sec.)

General statistics:
    total time:                          3.0037s
    total number of events:              1482

Latency (ms):
         min:                                    0.04
         avg:                                    0.17
         max:                                    0.94
         95th percentile:                        0.29
         sum:                                  251.89

Threads fairness:
    events (avg/stddev):           741.0000/0.00
    execution time (avg/stddev):   0.1259/0.00

"""

ELIDED = "[… elided …]"


def test_regexes_parse_sysbench_appendix_a3():
    text = A3.replace(ELIDED + "\n", "")
    p = parse_output(text, SYSBENCH_HEADER_RE)
    assert p.one("threads") == ("2",)
    assert [t[0] for t in p["interval"]] == ["1", "2", "3", "4", "5"]
    assert p["interval"][1] == (
        "2",
        "2",
        "1128.07",
        "22662.37",
        "15878.95",
        "4521.28",
        "2262.14",
        "95",
        "2.07",
        "6.00",
        "0.00",
    )
    assert p.one("transactions") == ("5655", "1129.50")
    assert p.one("queries") == ("113284", "22626.69")
    assert p.one("ignored_errors") == ("11", "2.20")
    assert p.one("total_time") == ("5.0057",)
    assert p.one("lat_pct") == ("95", "3.30")
    assert p.one("lat_max") == ("146.72",)
    assert p.one("fair_events") == ("2827.5000", "74.50")
    assert len(p["hist_row"]) == 15
    assert p["hist_row"][4] == ("0.741", "**", "12")
    # the same consistency rules hold for sysbench's own numbers (the histogram is not
    # checked: its elided lines make it incomplete here)
    c = check_consistency(p, time_limit=5, threads=2, histogram=None, interval=1)
    assert c["events"] == 5655 and c["errors"] == 11


def test_regexes_parse_sysbench_appendix_a5():
    p = parse_output(A5, SYSBENCH_HEADER_RE)
    assert p.one("rate_target") == ("500",)
    assert p["queue"] == [("1", "0", "1"), ("2", "0", "0"), ("3", "1", "0")]
    c = check_consistency(p, time_limit=3, threads=2, histogram=False, interval=1)
    assert c["events"] == 1482 and c["reads"] == 1482


def test_every_elided_a3_line_is_the_only_unparsable_one():
    _, unmatched = _parse(A3, SYSBENCH_HEADER_RE)
    assert unmatched == [(ELIDED, [])]


def test_a_mangled_line_is_reported():
    bad = A5.replace(
        "    transactions:                        1482   (493.24 per sec.)",
        "    transactions:                        1482   (493.24 per second)",
    )
    with pytest.raises(AssertionError):
        parse_output(bad, SYSBENCH_HEADER_RE)


# =========================================================================== pysysbench output


def without_sqlite_note(stderr: str) -> str:
    """stderr less the line a run on the default SQLite file prints (no --db-driver given)."""
    return "".join(line for line in stderr.splitlines(True) if not line.startswith("NOTE: no --db-driver given"))


def run_cli(args: list[str], cwd: Path, timeout: float = 60) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYSYSBENCH_")}
    proc = subprocess.run(CLI + args, cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env)
    assert "Traceback" not in proc.stdout + proc.stderr, proc.stdout + proc.stderr
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert without_sqlite_note(proc.stderr) == "", proc.stderr
    return proc


ACCEPTANCE = ["oltp_read_write", "--time=5", "--report-interval=1", "--histogram=on", "run"]


def test_acceptance_command_time_5(tmp_path):
    """The acceptance command, verbatim, after a default prepare (1 table x 10000 rows)."""
    run_cli(["oltp_read_write", "prepare"], tmp_path)
    proc = run_cli(ACCEPTANCE, tmp_path)
    p = parse_output(proc.stdout, PYSYSBENCH_HEADER_RE)
    c = check_consistency(p, time_limit=5, threads=1, percentile=95, histogram=True, interval=1)
    # one worker, no errors: every event is exactly the default 20-statement mix (spec 0 #5)
    assert c["errors"] == 0 and c["reconnects"] == 0
    assert (c["reads"], c["writes"], c["others"]) == (14 * c["events"], 4 * c["events"], 2 * c["events"])
    assert all(t[1] == "1" for t in p["interval"])


def test_appendix_a3_command_line_time_3(tmp_path):
    """A.3's own command line (2 tables x 1000 rows, 2 threads), shortened to 3 s."""
    data = ["oltp_read_write", "--tables=2", "--table-size=1000"]
    run_cli([*data, "prepare"], tmp_path)
    proc = run_cli([*data, "--threads=2", "--time=3", "--report-interval=1", "--histogram=on", "run"], tmp_path)
    p = parse_output(proc.stdout, PYSYSBENCH_HEADER_RE)
    c = check_consistency(p, time_limit=3, threads=2, percentile=95, histogram=True, interval=1)
    if c["errors"] == 0:
        assert (c["reads"], c["writes"], c["others"]) == (14 * c["events"], 4 * c["events"], 2 * c["events"])
    else:  # restarted events repeat their statements (A.3: reads = 14 x (events + errors))
        assert c["reads"] >= 14 * c["events"] and c["others"] >= 2 * c["events"]


def test_rate_mode_parses(tmp_path):
    data = ["oltp_read_write", "--tables=1", "--table-size=1000"]
    run_cli([*data, "prepare"], tmp_path)
    proc = run_cli([*data, "--rate=40", "--time=2", "--report-interval=1", "--percentile=99", "run"], tmp_path)
    p = parse_output(proc.stdout, PYSYSBENCH_HEADER_RE)
    check_consistency(p, time_limit=2, threads=1, percentile=99, histogram=False, interval=1)
    assert p.one("rate_target") == ("40",)
    assert [q[0] for q in p["queue"]] == [t[0] for t in p["interval"]]
