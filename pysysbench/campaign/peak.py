"""Peak finding for ``threads = "auto"``.

Role: find the thread count of peak throughput the way the PolarDB-X report
states it ("the thread count of peak QPS"), with as few runs as possible.

1. Search: run at ``start`` threads, then multiply by ``factor`` (rounded, always
   at least +1) while the best throughput keeps improving.  A step improves only
   when its mean exceeds the best mean by more than ``min_gain`` AND by more than
   the run-to-run noise (Welch 95 % margin, when repeats give one).  The search
   stops after ``patience`` non-improving steps in a row, or at ``max``.
2. Refine: ``refine`` rounds test the geometric midpoints between the best
   point and its nearest tested neighbours, moving the best when one improves.

The result names the peak (highest mean), and the saturation point: the fewest
threads whose throughput is within noise / ``min_gain`` of the peak, which is
where adding clients stopped paying off.

The algorithm is a pure function of the measurements, so a resumed campaign
replays the same decisions from the stored results.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from ..core.record import record
from ..stats.noise import Sample, margin, sample, welch_margin
from .spec import AutoThreads

# measure(threads, phase) -> the metric of each repeat at that thread count
Measure = Callable[[int, str], Sequence[float]]


@record(frozen=True)
class Point:
    threads: int
    sample: Sample
    phase: str


@record(frozen=True)
class Peak:
    metric: str
    threads: int
    value: float
    saturation_threads: int
    points: tuple[Point, ...]
    stopped: str  # why the search ended
    # the two facts saturation_threads combines, kept apart (issue 20): the fewest threads
    # within min_gain of the peak, and the fewest not told apart from it by the noise
    # (None: single runs, noise unknown)
    within_gain_threads: int | None = None
    within_noise_threads: int | None = None

    def as_dict(self) -> dict:
        return {
            "metric": self.metric,
            "threads": self.threads,
            "value": self.value,
            "saturation_threads": self.saturation_threads,
            "within_gain_threads": self.within_gain_threads,
            "within_noise_threads": self.within_noise_threads,
            "stopped": self.stopped,
            "tested": [
                {"threads": p.threads, "phase": p.phase, "mean": p.sample.mean, "sd": p.sample.sd, "n": p.sample.n}
                for p in sorted(self.points, key=lambda p: p.threads)
            ],
        }


def improves(new: Sample, best: Sample, min_gain: float) -> bool:
    return new.mean - best.mean > margin(best, new, min_gain)


def next_threads(t: int, factor: float) -> int:
    return max(t + 1, int(round(t * factor)))


class PeakSearch:
    """One search; ``points`` grows as thread counts are measured."""

    def __init__(self, auto: AutoThreads, measure: Measure):
        self.auto = auto
        self.measure = measure
        self.points: dict[int, Point] = {}
        self.best: Point | None = None

    def _try(self, threads: int, phase: str) -> bool:
        """Measure ``threads``; True when it became the new best."""
        point = Point(threads, sample(self.measure(threads, phase)), phase)
        self.points[threads] = point
        if self.best is None or improves(point.sample, self.best.sample, self.auto.min_gain):
            self.best = point
            return True
        return False

    def search(self) -> str:
        a = self.auto
        t, misses = a.start, 0
        while True:
            misses = 0 if self._try(t, "search") else misses + 1
            if misses >= a.patience:
                return f"no gain beyond {a.min_gain:.0%} / noise for {misses} step(s)"
            if t >= a.max:
                return f"reached max = {a.max}"
            t = min(next_threads(t, a.factor), a.max)

    def refine(self) -> None:
        for _ in range(self.auto.refine):
            candidates = self._midpoints()
            if not candidates:
                return
            for t in candidates:
                self._try(t, "refine")

    def _midpoints(self) -> list[int]:
        tested = sorted(self.points)
        i = tested.index(self.best.threads)
        out = []
        for j in (i - 1, i + 1):
            if 0 <= j < len(tested):
                lo, hi = sorted((tested[j], self.best.threads))
                mid = int(round(math.sqrt(lo * hi)))
                if lo < mid < hi and mid not in self.points:
                    out.append(mid)
        return out

    def result(self, stopped: str) -> Peak:
        pts = tuple(self.points.values())
        top = max(pts, key=lambda p: p.sample.mean)
        saturation = min(
            p.threads
            for p in pts
            if top.sample.mean - p.sample.mean <= margin(p.sample, top.sample, self.auto.min_gain)
        )
        gain = min(p.threads for p in pts if p.sample.mean >= top.sample.mean * (1 - self.auto.min_gain))
        noisy = [
            p.threads
            for p in pts
            if (m := welch_margin(p.sample, top.sample)) is not None and top.sample.mean - p.sample.mean <= m
        ]
        return Peak(
            self.auto.metric,
            top.threads,
            top.sample.mean,
            saturation,
            pts,
            stopped,
            within_gain_threads=gain,
            within_noise_threads=min(noisy) if noisy else None,
        )


def find_peak(auto: AutoThreads, measure: Measure) -> Peak:
    s = PeakSearch(auto, measure)
    stopped = s.search()
    s.refine()
    return s.result(stopped)
