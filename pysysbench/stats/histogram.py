"""sysbench's latency histogram: 1024 logarithmic buckets from 0.001 ms to 100 000 ms.

Role: the one place that maps a latency to a bucket and bucket counts back to
milliseconds (spec 5.7).  Counts are plain ``list[int]`` so that per-worker
histograms can be shipped between processes and added exactly; percentiles are
only ever computed from (merged) counts, never averaged.

The constants are computed with the same expressions as sysbench's C code
(``range_deduct = log(range_min)``, ``range_mult = (size - 1) / (log(range_max) -
range_deduct)``; with glibc this equals ``1023 / log(1e8)`` to the last bit), so
bucket boundaries match the binary's.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

N_BUCKETS = 1024
MIN_MS = 0.001
MAX_MS = 100000.0

# ln of the lowest bucket value, subtracted from ln(v) (sysbench's range_deduct).
LN_MIN_MS = math.log(MIN_MS)
# Buckets per unit of ln(ms): 1023 / ln(1e8) ~= 55.5355 (sysbench's range_mult).
M = (N_BUCKETS - 1) / (math.log(MAX_MS) - LN_MIN_MS)

_LAST = N_BUCKETS - 1
_NS_PER_MS = 1e6
_log = math.log  # a module-global alias saves an attribute lookup per event


def bucket_index(latency_ns: int) -> int:
    """Return the bucket of one latency sample (called once per event: keep it cheap).

    sysbench computes ``floor((log(ns / 1e6) - range_deduct) * range_mult + 0.5)``
    and clamps it to [0, 1023].  We keep that exact operation order (one division,
    one log, one subtract-multiply-add) so the rounding of every intermediate double
    is the binary's; folding the constants into one multiply-add would move a few
    boundary samples into the neighbouring bucket.

    ``int()`` truncates toward zero instead of flooring, which only differs for
    negative arguments; those all clamp to bucket 0 either way.
    """
    if latency_ns <= 0:
        # log(0) is -inf in C and lands in bucket 0; Python would raise.
        return 0
    i = int((_log(latency_ns / _NS_PER_MS) - LN_MIN_MS) * M + 0.5)
    if i < 0:
        return 0
    if i > _LAST:
        return _LAST
    return i


def bucket_value_ms(i: int) -> float:
    """Return the latency in ms that bucket *i* stands for: exp(i/M + ln 0.001)."""
    return math.exp(i / M + LN_MIN_MS)


def percentile_ms(counts: Sequence[int], p: float) -> float:
    """Return the *p*-th percentile (ms) of a histogram, sysbench's way.

    target = floor(n * p / 100 + 0.5); the answer is the value of the first bucket
    whose running sum reaches target.  With n == 0 (or any target of 0) that is
    bucket 0, i.e. 0.001 ms, which sysbench prints as ``0.00``.
    """
    n = sum(counts)
    target = math.floor(n * p / 100 + 0.5)
    running = 0
    for i, c in enumerate(counts):
        running += c
        if running >= target:
            return bucket_value_ms(i)
    # Unreachable for 0 <= p <= 100 (target <= n); mirror C, whose loop runs off
    # the end and reports the value one past the last bucket.
    return bucket_value_ms(len(counts))


def new_counts() -> list[int]:
    """Return an empty histogram (1024 zero counts)."""
    return [0] * N_BUCKETS


def merge_into(dst: list[int], src: Sequence[int]) -> None:
    """Add *src* bucket-wise into *dst* in place (exact: counts are integers)."""
    for i, c in enumerate(src):
        if c:
            dst[i] += c


def diff(new: Sequence[int], old: Sequence[int]) -> list[int]:
    """Return the bucket-wise difference *new* - *old* (counts recorded in between)."""
    return [a - b for a, b in zip(new, old, strict=True)]
