#!/usr/bin/env python3
"""Apache Otava's change points on the same synthetic series as tests/unit/test_history_detect.py.

A cross-check of pysysbench/history/detect.py against the library issue 43 named first.  Otava
pins numpy 2.2 and brings Google Cloud, Slack and gRPC clients, so it runs in a venv of its own:

    python3 -m venv /tmp/otava-venv && /tmp/otava-venv/bin/pip install apache-otava
    /tmp/otava-venv/bin/python bench/history_otava_check.py tests/data/history_noise.json 100

The series are built as the test builds them (whole real runs drawn with the same seeds, each
run's value its mean TPS, a 10 % step at a known run); numpy's PCG64 streams agree across versions.
"""

import json
import sys
import time

import numpy as np
from otava.analysis import compute_change_points  # only in the throwaway venv

DATA, N = sys.argv[1], int(sys.argv[2])
POOL = [tuple(r["tps"]) for r in json.load(open(DATA))["runs"]]


def series(seed, step_at, n=20):
    rng, out = np.random.default_rng(seed), []
    for i in range(n):
        vals = POOL[int(rng.integers(len(POOL)))]
        if step_at is not None and i >= step_at:
            vals = tuple(v * 0.9 for v in vals)
        out.append(float(np.mean(vals)))
    return out


def step_at(seed):
    return int(np.random.default_rng(1000 + seed).integers(6, 15)) if seed < 10 else 6 + seed % 9


def main():
    for pv, mm in ((0.001, 0.0), (0.01, 0.05), (0.05, 0.05)):
        found = [
            compute_change_points(series(s, step_at(s)), window_len=50, max_pvalue=pv, min_magnitude=mm)[0]
            for s in range(N)
        ]
        hits = sum(any(c.index == step_at(s) for c in cps) for s, cps in enumerate(found))
        false = sum(
            len(compute_change_points(series(100 + s, None), window_len=50, max_pvalue=pv, min_magnitude=mm)[0])
            for s in range(N)
        )
        print(
            f"otava max_pvalue={pv} min_magnitude={mm}: step at the right run {hits}/{N}, false findings {false} over {N}"
        )
    made = [series(s, 25 if s % 2 else None, n=50) for s in range(200)]
    t0 = time.perf_counter()
    for x in made:
        compute_change_points(x, window_len=50, max_pvalue=0.01, min_magnitude=0.05)
    print(f"otava: 200 series x 50 runs in {time.perf_counter() - t0:.2f} s")


if __name__ == "__main__":
    main()
