"""Run-to-run noise: the small statistics both peak finding and ``compare`` use.

Role: decide whether two sets of repeated measurements differ by more than
their spread.  The test is Welch's t-test (unequal variances, small samples),
two-sided at 95 %, with the critical value taken at the Welch-Satterthwaite
degrees of freedom rounded down (conservative).  A practical floor
(``min_effect``, a fraction of the baseline) keeps tiny but "significant"
differences from being called wins.  With a single run on either side the noise
is unknown: callers say so instead of pretending.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from ..core.record import record

# Two-sided 95 % critical values of Student's t for 1..30 degrees of freedom.
T95 = (
    12.706,
    4.303,
    3.182,
    2.776,
    2.571,
    2.447,
    2.365,
    2.306,
    2.262,
    2.228,
    2.201,
    2.179,
    2.160,
    2.145,
    2.131,
    2.120,
    2.110,
    2.101,
    2.093,
    2.086,
    2.080,
    2.074,
    2.069,
    2.064,
    2.060,
    2.056,
    2.052,
    2.048,
    2.045,
    2.042,
)
T95_LARGE = 1.96


@record(frozen=True)
class Sample:
    """Repeated measurements of one figure (e.g. the TPS of one cell)."""

    values: tuple[float, ...]

    @property
    def n(self) -> int:
        return len(self.values)

    @property
    def mean(self) -> float:
        return sum(self.values) / self.n if self.values else 0.0

    @property
    def sd(self) -> float:
        """Sample standard deviation (0 with fewer than two values)."""
        if self.n < 2:
            return 0.0
        m = self.mean
        return math.sqrt(sum((v - m) ** 2 for v in self.values) / (self.n - 1))

    @property
    def cv(self) -> float:
        """Coefficient of variation (sd / mean)."""
        return self.sd / self.mean if self.mean else 0.0


def sample(values: Sequence[float]) -> Sample:
    return Sample(tuple(float(v) for v in values))


def t_critical(df: float) -> float:
    """Two-sided 95 % critical value of t for ``df`` degrees of freedom."""
    k = int(math.floor(df))
    if k < 1:
        return T95[0]
    return T95[k - 1] if k <= len(T95) else T95_LARGE


def welch_margin(a: Sample, b: Sample) -> float | None:
    """Half-width of the 95 % confidence interval of ``mean(b) - mean(a)``;
    None when either side has a single value (noise unknown)."""
    if a.n < 2 or b.n < 2:
        return None
    va, vb = a.sd**2 / a.n, b.sd**2 / b.n
    se = math.sqrt(va + vb)
    if se == 0:
        return 0.0
    df = (va + vb) ** 2 / ((va**2 / (a.n - 1) if va else 0.0) + (vb**2 / (b.n - 1) if vb else 0.0))
    return t_critical(df) * se


@record(frozen=True)
class Difference:
    """``b`` relative to ``a``: ratio, relative change and whether it beats the noise."""

    ratio: float  # mean(b) / mean(a)
    change: float  # ratio - 1
    noise: float | None  # 95 % margin relative to mean(a); None = unknown (single runs)
    significant: bool | None  # None = cannot tell (single runs)


def difference(a: Sample, b: Sample, min_effect: float) -> Difference:
    """Compare two samples; significant = the change exceeds both the 95 %
    noise margin and ``min_effect`` (a fraction of ``mean(a)``)."""
    base = a.mean
    ratio = b.mean / base if base else math.inf if b.mean else 1.0
    change = ratio - 1.0
    margin = welch_margin(a, b)
    if margin is None:
        return Difference(ratio, change, None, None)
    noise = margin / abs(base) if base else math.inf
    significant = abs(change) > noise and abs(change) >= min_effect
    return Difference(ratio, change, noise, significant)


def margin(best: Sample, other: Sample, min_gain: float) -> float:
    """How much ``other`` must exceed ``best`` to count as better."""
    noise = welch_margin(best, other) or 0.0
    return max(min_gain * abs(best.mean), noise)


def paired_difference(pairs: Sequence[tuple[float, float]], min_effect: float) -> Difference:
    """``b`` relative to ``a`` from pairs measured together (round r of variant A and of
    variant B in one interleaved campaign): the noise is the spread of the per-pair
    differences, so drift that moves both members of a pair cancels out."""
    a = sample([x for x, _ in pairs])
    b = sample([y for _, y in pairs])
    base = a.mean
    ratio = b.mean / base if base else math.inf if b.mean else 1.0
    change = ratio - 1.0
    d = sample([y - x for x, y in pairs])
    if d.n < 2:
        return Difference(ratio, change, None, None)
    noise = t_critical(d.n - 1) * d.sd / math.sqrt(d.n) / abs(base) if base else math.inf
    significant = abs(change) > noise and abs(change) >= min_effect
    return Difference(ratio, change, noise, significant)
