"""Microbenchmark for pysysbench.core.rand: ns per call of the hot-path methods.

Print-only (not a test). Run: .venv/bin/python bench/rand_speed.py
"""

from __future__ import annotations

import timeit

from pysysbench.core.rand import C_TEMPLATE, DISTRIBUTIONS, PAD_TEMPLATE, Rand

SEED = 1
TABLE_SIZE = 10_000
CALLS = 200_000
STRING_CALLS = 20_000
REPEATS = 5


def ns_per_call(func, calls: int) -> float:
    # Best of several repeats: the least-disturbed run is the most honest.
    return min(timeit.repeat(func, number=calls, repeat=REPEATS)) / calls * 1e9


def main() -> None:
    for rand_type in DISTRIBUTIONS:
        rand = Rand(SEED, rand_type=rand_type)
        default = rand.default
        ns = ns_per_call(lambda: default(1, TABLE_SIZE), CALLS)  # noqa: B023 -- called in this iteration
        print(f"default() rand_type={rand_type:<9} {ns:8.0f} ns/call")
    rand = Rand(SEED)
    uniform_double = rand.uniform_double
    print(f"uniform_double()                {ns_per_call(uniform_double, CALLS):8.0f} ns/call")
    for name, template in (("C_TEMPLATE", C_TEMPLATE), ("PAD_TEMPLATE", PAD_TEMPLATE)):
        ns = ns_per_call(lambda: rand.string(template), STRING_CALLS)  # noqa: B023 -- called in this iteration
        print(f"string({name:<12})            {ns:8.0f} ns/call")
    mixed = "@@@@@-#####"
    ns = ns_per_call(lambda: rand.string(mixed), STRING_CALLS)
    print(f"string('{mixed}') (generic)  {ns:8.0f} ns/call")


if __name__ == "__main__":
    main()
