"""Golden tests: sysbench 1.0.20 text output, byte for byte, against spec Appendix A.

Each expected string is copied verbatim from the appendix.  Where the binary's
numbers came from clock readings (rates, total time), the inputs below were chosen
so that the same C formulas yield the printed digits; counts and latencies are the
appendix's own values.
"""

from __future__ import annotations

import math

import pytest

from pysysbench.output.text import (
    checkpoint_header,
    histogram_block,
    intermediate_line,
    rate_line,
    summary_block,
)
from pysysbench.stats.histogram import LN_MIN_MS, M, bucket_value_ms, new_counts
from pysysbench.stats.records import IntervalStat, Snapshot, Summary, summary_from

MS = 1_000_000  # ns per ms


def bucket_printing(text: str) -> int:
    """Index of the bucket whose value sysbench prints as *text* with %.2f."""
    hits = [i for i in range(1024) if "%.2f" % bucket_value_ms(i) == text]
    assert hits, text
    return hits[-1]


def pct_ms(text: str) -> float:
    return bucket_value_ms(bucket_printing(text))


def summary(**kw) -> Summary:
    base = dict(
        reconnects=0,
        errors=0,
        percentile=95,
        hist=tuple(new_counts()),
        unfinished=None,
    )
    base.update(kw)
    return Summary(**base)


# --------------------------------------------------------------------------- A.4

A4_HISTOGRAM_ROWS = [
    ("2.810", 1),
    ("2.861", 1),
    ("2.913", 3),
    ("2.966", 2),
    ("3.020", 2),
    ("3.075", 2),
    ("3.187", 6),
    ("3.245", 2),
    ("3.304", 1),
    ("3.364", 3),
    ("3.425", 4),
    ("3.488", 2),
    ("3.551", 1),
    ("3.615", 1),
    ("3.681", 2),
    ("3.748", 2),
    ("3.956", 1),
    ("4.329", 1),
    ("4.569", 1),
    ("7.430", 1),
    ("7.842", 1),
]

A4_HISTOGRAM = (
    """\
Latency histogram (values are in milliseconds)
       value  ------------- distribution ------------- count
       2.810 |*******                                  1
       2.861 |*******                                  1
       2.913 |********************                     3
       2.966 |*************                            2
       3.020 |*************                            2
       3.075 |*************                            2
       3.187 |**************************************** 6
       3.245 |*************                            2
       3.304 |*******                                  1
       3.364 |********************                     3
       3.425 |***************************              4
       3.488 |*************                            2
       3.551 |*******                                  1
       3.615 |*******                                  1
       3.681 |*************                            2
       3.748 |*************                            2
       3.956 |*******                                  1
       4.329 |*******                                  1
       4.569 |*******                                  1
       7.430 |*******                                  1
       7.842 |*******                                  1
"""
    + " \n"  # the closing line holds exactly one space
)

A4_SUMMARY = """\
SQL statistics:
    queries performed:
        read:                            560
        write:                           160
        other:                           80
        total:                           800
    transactions:                        40     (533.80 per sec.)
    queries:                             800    (10676.04 per sec.)
    ignored errors:                      0      (0.00 per sec.)
    reconnects:                          0      (0.00 per sec.)

General statistics:
    total time:                          0.0739s
    total number of events:              40

Latency (ms):
         min:                                    2.80
         avg:                                    3.56
         max:                                    7.85
         95th percentile:                        4.57
         sum:                                  142.37

Threads fairness:
    events (avg/stddev):           20.0000/0.00
    execution time (avg/stddev):   0.0712/0.00

"""


def a4_hist() -> list[int]:
    hist = new_counts()
    for text, count in A4_HISTOGRAM_ROWS:
        i = round((math.log(float(text)) - LN_MIN_MS) * M)
        assert "%.3f" % bucket_value_ms(i) == text
        hist[i] = count
    return hist


def a4_snapshot() -> Snapshot:
    return Snapshot(
        events=40,
        reads=560,
        writes=160,
        others=80,
        lat_sum_ns=142_370_000,
        lat_min_ns=2_800_000,
        lat_max_ns=7_850_000,
        hist=a4_hist(),
        thread_events={0: 20, 1: 20},
        thread_lat_ns={0: 71_185_000, 1: 71_185_000},
    )


def test_a4_histogram_block_is_verbatim():
    assert histogram_block(a4_hist()) == A4_HISTOGRAM


def test_a4_summary_block_is_verbatim():
    s = summary_from(
        a4_snapshot(),
        Snapshot(),
        total_time_s=0.0739,
        elapsed_s=0.07493415,
        threads=2,
        percentile=95,
    )
    assert summary_block(s) == A4_SUMMARY


def test_a4_full_tail_histogram_then_summary():
    s = summary_from(
        a4_snapshot(),
        Snapshot(),
        total_time_s=0.0739,
        elapsed_s=0.07493415,
        threads=2,
        percentile=95,
    )
    assert histogram_block(s.hist) + summary_block(s) == A4_HISTOGRAM + A4_SUMMARY


def test_empty_histogram_prints_title_and_space_line_only():
    assert histogram_block(new_counts()) == ("Latency histogram (values are in milliseconds)\n" + " \n")


# --------------------------------------------------------------------------- A.3

A3_LINES = """\
[ 1s ] thds: 2 tps: 1126.54 qps: 22571.76 (r/w/o: 15807.52/4508.16/2256.08) lat (ms,95%): 3.36 err/s: 1.00 reconn/s: 0.00
[ 2s ] thds: 2 tps: 1128.07 qps: 22662.37 (r/w/o: 15878.95/4521.28/2262.14) lat (ms,95%): 2.07 err/s: 6.00 reconn/s: 0.00
[ 3s ] thds: 2 tps: 1103.12 qps: 22108.41 (r/w/o: 15475.68/4424.48/2208.24) lat (ms,95%): 3.25 err/s: 2.00 reconn/s: 0.00
[ 4s ] thds: 2 tps: 1162.93 qps: 23241.69 (r/w/o: 16269.08/4645.74/2326.87) lat (ms,95%): 3.30 err/s: 1.00 reconn/s: 0.00
[ 5s ] thds: 2 tps: 1131.08 qps: 22653.52 (r/w/o: 15864.06/4526.30/2263.15) lat (ms,95%): 3.62 err/s: 1.00 reconn/s: 0.00""".splitlines()

# (time_s, interval_s, threads, events, reads, writes, others, errors, pct printed)
A3_INPUTS = [
    (1.0013, 1.0012953, 2, 1128, 15828, 4514, 2259, 1, "3.36"),
    (2.0021, 1.0008219, 2, 1129, 15892, 4525, 2264, 6, "2.07"),
    (3.0011, 0.9989865, 2, 1102, 15460, 4420, 2206, 2, "3.25"),
    (4.0003, 0.9991960, 2, 1162, 16256, 4642, 2325, 1, "3.30"),
    (5.0002, 0.9999329, 2, 1131, 15863, 4526, 2263, 1, "3.62"),
]

A3_SUMMARY = """\
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


def interval(time_s, interval_s, thds, events, reads, writes, others, errors, pct, **kw):
    return IntervalStat(
        time_s=time_s,
        interval_s=interval_s,
        threads_running=thds,
        events=events,
        reads=reads,
        writes=writes,
        others=others,
        errors=errors,
        reconnects=0,
        percentile=95,
        latency_pct_ms=pct_ms(pct),
        **kw,
    )


@pytest.mark.parametrize("row, expected", list(zip(A3_INPUTS, A3_LINES)))
def test_a3_intermediate_lines(row, expected):
    assert intermediate_line(interval(*row)) == expected


def test_spec_6_2_example_line():
    st = interval(2.0021, 1.0008219, 2, 1129, 15892, 4525, 2264, 6, "2.07")
    assert intermediate_line(st) == (
        "[ 2s ] thds: 2 tps: 1128.07 qps: 22662.37 (r/w/o: 15878.95/4521.28/2262.14)"
        " lat (ms,95%): 2.07 err/s: 6.00 reconn/s: 0.00"
    )


def test_a3_summary_block():
    s = summary(
        total_time_s=5.0057,
        elapsed_s=5.0066526,
        threads=2,
        events=5655,
        reads=79324,
        writes=22639,
        others=11321,
        errors=11,
        lat_min_ns=680_000,
        lat_max_ns=146_720_000,
        lat_sum_ns=9_985_720_000,
        latency_pct_ms=pct_ms("3.30"),
        thread_events=(2902, 2753),
        thread_lat_ns=(4_992_860_000, 4_992_860_000),
    )
    assert summary_block(s) == A3_SUMMARY


# --------------------------------------------------------------------------- A.5

A5_LINES = """\
[ 1s ] thds: 2 tps: 509.21 qps: 509.21 (r/w/o: 509.21/0.00/0.00) lat (ms,95%): 0.32 err/s: 0.00 reconn/s: 0.00
[ 1s ] queue length: 0, concurrency: 1
[ 2s ] thds: 2 tps: 499.13 qps: 499.13 (r/w/o: 499.13/0.00/0.00) lat (ms,95%): 0.27 err/s: 0.00 reconn/s: 0.00
[ 2s ] queue length: 0, concurrency: 0
[ 3s ] thds: 2 tps: 472.97 qps: 472.97 (r/w/o: 472.97/0.00/0.00) lat (ms,95%): 0.26 err/s: 0.00 reconn/s: 0.00
[ 3s ] queue length: 1, concurrency: 0
"""

A5_SUMMARY = """\
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
    events (avg/stddev):           741.0000/3.00
    execution time (avg/stddev):   0.1259/0.00

"""


def test_a5_rate_mode_lines():
    rows = [
        (1.0015, 1.0015416, 510, "0.32", 0, 1),
        (2.0032, 1.0017330, 500, "0.27", 0, 0),
        (3.0033, 1.0000529, 473, "0.26", 1, 0),
    ]
    out = []
    for time_s, interval_s, n, pct, queue, conc in rows:
        st = interval(time_s, interval_s, 2, n, n, 0, 0, 0, pct, queue_length=queue, concurrency=conc)
        out += [intermediate_line(st), rate_line(st)]
    assert "".join(line + "\n" for line in out) == A5_LINES


def test_a5_summary_block():
    s = summary(
        total_time_s=3.0037,
        elapsed_s=3.0045921,
        threads=2,
        events=1482,
        reads=1482,
        writes=0,
        others=0,
        lat_min_ns=40_000,
        lat_max_ns=940_000,
        lat_sum_ns=251_890_000,
        latency_pct_ms=pct_ms("0.29"),
        thread_events=(744, 738),
        thread_lat_ns=(125_945_000, 125_945_000),
    )
    assert summary_block(s) == A5_SUMMARY


# --------------------------------------------------------------------------- A.6

A6_TAIL = """\
Latency (ms):
         min:                                    0.41
         avg:                                    1.31
         max:                                    2.62
         percentile stats:               disabled
         sum:                                  131.34
"""


def test_a6_percentile_disabled():
    s = summary(
        total_time_s=0.1,
        elapsed_s=0.1,
        threads=1,
        events=100,
        reads=1400,
        writes=0,
        others=200,
        lat_min_ns=410_000,
        lat_max_ns=2_620_000,
        lat_sum_ns=131_340_000,
        percentile=0,
        latency_pct_ms=0.0,
        thread_events=(100,),
        thread_lat_ns=(131_340_000,),
    )
    text = summary_block(s)
    start = text.index("Latency (ms):")
    end = text.index("\n", text.index("         sum:")) + 1
    assert text[start:end] == A6_TAIL


# --------------------------------------------------------------------------- A.7

A7_SUMMARY = """\
SQL statistics:
    queries performed:
        read:                            0
        write:                           0
        other:                           0
        total:                           0
    transactions:                        0      (0.00 per sec.)
    queries:                             0      (0.00 per sec.)
    ignored errors:                      0      (0.00 per sec.)
    reconnects:                          0      (0.00 per sec.)

Number of unfinished transactions on forced shutdown: 2

General statistics:
    total time:                          2.0003s
    total number of events:              0

Latency (ms):
         min:                                    0.00
         avg:                                    0.00
         max:                                    0.00
         95th percentile:                        0.00
         sum:                                    0.00

Threads fairness:
    events (avg/stddev):           1.0000/0.00
    execution time (avg/stddev):   0.0000/2.00

"""


def test_a7_forced_shutdown():
    # The two cut-short events count in the per-thread figures only (sysbench quirk).
    s = summary_from(
        Snapshot(thread_events={0: 1, 1: 1}, thread_lat_ns={0: 2_000_100_000, 1: 2_000_200_000}),
        Snapshot(),
        total_time_s=2.0003,
        elapsed_s=2.0003,
        threads=2,
        percentile=95,
        unfinished=2,
    )
    assert summary_block(s) == A7_SUMMARY


def test_forced_shutdown_with_nothing_running_prints_no_block():
    s = summary(
        total_time_s=2.0,
        elapsed_s=2.0,
        threads=1,
        events=0,
        reads=0,
        writes=0,
        others=0,
        lat_min_ns=0,
        lat_max_ns=0,
        lat_sum_ns=0,
        latency_pct_ms=0.001,
        thread_events=(0,),
        thread_lat_ns=(0,),
        unfinished=0,
    )
    assert "unfinished" not in summary_block(s)


# --------------------------------------------------------------------------- A.8 / A.9 / A.11


def test_a8_checkpoint_header_and_transactions_line():
    assert checkpoint_header(1.0002) == "[ 1s ] Checkpoint report:"
    assert checkpoint_header(2.0004) == "[ 2s ] Checkpoint report:"
    s = summary(
        total_time_s=2.0004,
        elapsed_s=1.0007366,
        threads=1,
        events=197,
        reads=197,
        writes=0,
        others=0,
        lat_min_ns=1,
        lat_max_ns=1,
        lat_sum_ns=197,
        latency_pct_ms=0.001,
        thread_events=(197,),
        thread_lat_ns=(197,),
    )
    text = summary_block(s)
    assert "    transactions:                        197    (196.85 per sec.)\n" in text
    assert "    total time:                          2.0004s\n" in text


A9_LINES = """\
[ 1s ] thds: 2 tps: 868.41 qps: 17392.19 (r/w/o: 12179.72/3473.65/1738.82) lat (ms,95%): 4.91 err/s: 0.00 reconn/s: 0.00
[ 2s ] thds: 2 tps: 914.23 qps: 18365.62 (r/w/o: 12867.24/3664.92/1833.46) lat (ms,95%): 4.03 err/s: 5.00 reconn/s: 0.00
[ 3s ] thds: 1 tps: 857.76 qps: 17182.24 (r/w/o: 12030.67/3435.05/1716.52) lat (ms,95%): 7.04 err/s: 2.00 reconn/s: 0.00""".splitlines()

A9_INPUTS = [
    (1.0018, 1.0018289, 2, 870, 12202, 3480, 1742, 0, "4.91"),
    (2.0016, 0.9997482, 2, 914, 12864, 3664, 1833, 5, "4.03"),
    (3.0019, 1.0002768, 1, 858, 12034, 3436, 1717, 2, "7.04"),
]


@pytest.mark.parametrize("row, expected", list(zip(A9_INPUTS, A9_LINES)))
def test_a9_legacy_intermediate_lines(row, expected):
    assert intermediate_line(interval(*row)) == expected


A11_LINES = """\
[ 1s ] thds: 4 tps: 1175.22 qps: 23948.37 (r/w/o: 16802.27/4693.90/2452.20) lat (ms,95%): 5.37 err/s: 20.95 reconn/s: 0.00
[ 2s ] thds: 4 tps: 105.09 qps: 2094.81 (r/w/o: 1462.27/411.36/221.19) lat (ms,95%): 5.28 err/s: 1.00 reconn/s: 0.00
[ 3s ] thds: 4 tps: 233.99 qps: 4861.80 (r/w/o: 3424.86/940.96/495.98) lat (ms,95%): 4.65 err/s: 9.00 reconn/s: 0.00""".splitlines()

A11_INPUTS = [
    (1.0024, 1.0023645, 4, 1178, 16842, 4705, 2458, 21, "5.37"),
    (2.0015, 0.9991336, 4, 105, 1461, 411, 221, 1, "5.28"),
    (3.0015, 1.0000402, 4, 234, 3425, 941, 496, 9, "4.65"),
]

A11_SQL = """\
SQL statistics:
    queries performed:
        read:                            21742
        write:                           6069
        other:                           3182
        total:                           30993
    transactions:                        1521   (474.72 per sec.)
    queries:                             30993  (9673.15 per sec.)
    ignored errors:                      32     (9.99 per sec.)
    reconnects:                          0      (0.00 per sec.)
"""


@pytest.mark.parametrize("row, expected", list(zip(A11_INPUTS, A11_LINES)))
def test_a11_pgsql_intermediate_lines(row, expected):
    assert intermediate_line(interval(*row)) == expected


def test_a11_sql_block():
    s = summary(
        total_time_s=3.2,
        elapsed_s=3.2040219,
        threads=4,
        events=1521,
        reads=21742,
        writes=6069,
        others=3182,
        errors=32,
        lat_min_ns=1,
        lat_max_ns=1,
        lat_sum_ns=1521,
        latency_pct_ms=0.001,
        thread_events=(380, 380, 380, 381),
        thread_lat_ns=(1, 1, 1, 1),
    )
    assert summary_block(s).startswith(A11_SQL + "\n")


# --------------------------------------------------------------------------- edge cases


def test_wide_counts_get_one_space_and_percentile_100_fits():
    s = summary(
        total_time_s=10.0,
        elapsed_s=10.0,
        threads=1,
        events=1234567,
        reads=0,
        writes=0,
        others=0,
        lat_min_ns=1,
        lat_max_ns=1,
        lat_sum_ns=1234567,
        percentile=100,
        latency_pct_ms=bucket_value_ms(0),
        thread_events=(1234567,),
        thread_lat_ns=(1234567,),
    )
    text = summary_block(s)
    assert "    transactions:                        1234567 (123456.70 per sec.)\n" in text
    assert "        100th percentile:                        0.00\n" in text


def test_zero_interval_prints_like_c():
    st = IntervalStat(
        time_s=0.4,
        interval_s=0.0,
        threads_running=1,
        events=3,
        reads=0,
        writes=0,
        others=0,
        errors=0,
        reconnects=0,
        percentile=95,
        latency_pct_ms=0.0,
    )
    assert intermediate_line(st) == (
        "[ 0s ] thds: 1 tps:  inf qps: -nan (r/w/o: -nan/-nan/-nan) lat (ms,95%): 0.00 err/s: -nan reconn/s: -nan"
    )
