"""Change points beyond noise in a series of runs, and the gate's decision (``history check``).

Role: given the runs of one series in order (each with its name, its label and the metric's
value or repeated values), find where the metric's level changed beyond noise, and decide
whether the latest level is a regression.  Pure: no store, no output, no clock.

Detection is e-divisive (Matteson and James, 2014, the method Apache Otava uses): the split
that maximises the energy distance between the two sides is kept when a permutation test finds
it significant at ``alpha`` (a segment too short for shuffles to reach ``alpha`` is judged on
Gaussian noise instead), and each side is split again until no split is significant.  A
merge step (as Otava's) then drops change points whose two adjacent levels differ by less than
``min_effect`` or not significantly by Welch's t-test, weakest first.  The permutations use a
fixed seed: the same series gives the same findings.  Each finding's effect is the relative
change of the level's mean with a Welch t-interval; a run's repeated values (per-interval
TPS, say) put a floor under the noise of its level.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

# metrics whose larger value is better; the others named below are better when smaller
HIGHER_IS_BETTER = ("tps", "qps", "throughput", "events_per_s", "reads_per_s", "writes_per_s")
LOWER_IS_BETTER = ("p50", "p90", "p95", "p99", "p999", "max", "avg", "latency", "error_rate", "errors")

OK, REGRESSION, UNDECIDED = 0, 1, 2


@dataclass(frozen=True)
class Point:
    """One run of a series: its name (file or log), its label and the metric's value(s)."""

    run: str
    label: str
    values: tuple[float, ...]
    summary: float | None = None  # the run's own value (its p95, say) when it is not the values' mean

    def __post_init__(self) -> None:
        vals = [*self.values, *([self.summary] if self.summary is not None else [])]
        if not vals or not all(math.isfinite(v) for v in vals):
            raise ValueError(f"run {self.run!r}: the metric needs a finite value, got {list(vals)}")

    @property
    def value(self) -> float:
        return float(self.summary) if self.summary is not None else float(np.mean(self.values))


@dataclass(frozen=True)
class Settings:
    """Detection settings: significance level, smallest effect worth a finding, runs per level."""

    alpha: float = 0.01
    min_effect: float = 0.05
    min_runs: int = 3  # runs a level needs (each side of a change point)
    confidence: float = 0.95  # of the effect's interval
    permutations: int = 999  # shuffles per tested split, at most (or Gaussian draws for a short segment)
    seed: int = 43

    def __post_init__(self) -> None:
        if not 0 < self.alpha < 1:
            raise ValueError(f"significance level must be between 0 and 1, got {self.alpha}")
        if self.min_effect < 0:
            raise ValueError(f"minimum effect must be >= 0, got {self.min_effect}")
        if self.min_runs < 2:
            raise ValueError(f"runs per level must be >= 2, got {self.min_runs}")
        if not 0 < self.confidence < 1:
            raise ValueError(f"confidence must be between 0 and 1, got {self.confidence}")


@dataclass(frozen=True)
class Finding:
    """A change point: the runs either side, the levels' means and the relative effect with its interval."""

    metric: str
    index: int  # position in the series of the first run of the changed level
    before_run: str
    after_run: str
    before_label: str
    after_label: str
    mean_before: float
    mean_after: float
    effect: float  # mean_after / mean_before - 1
    low: float
    high: float
    p_value: float
    kind: str  # "regression" or "improvement"
    runs_before: int = 0
    runs_after: int = 0

    def as_json(self) -> dict[str, object]:
        """The finding for --output-format=json (an infinite effect, from a zero baseline, as null)."""
        out = dataclasses.asdict(self)
        for key in ("effect", "low", "high"):
            out[key] = out[key] if math.isfinite(out[key]) else None
        return out

    def line(self) -> str:
        return (
            f"{self.kind}: {self.metric} {self.effect:+.1%} [{self.low:+.1%}, {self.high:+.1%}] "
            f"from {self.before_run} ({self.before_label}) to {self.after_run} ({self.after_label}), p={self.p_value:.3g}"
        )


@dataclass(frozen=True)
class Decision:
    """The gate's answer: code 0 (no regression beyond noise), 1 (regression), 2 (not enough data)."""

    code: int
    reason: str
    findings: list[Finding] = field(default_factory=list)

    def as_json(self) -> dict[str, object]:
        return {"code": self.code, "reason": self.reason, "findings": [f.as_json() for f in self.findings]}


def direction(metric: str) -> int:
    """+1 when a larger value of ``metric`` is better (TPS, QPS), -1 when smaller is (p95, p99, error rate)."""
    name = metric.strip().lower().replace(" ", "_").replace("-", "_").replace("/", "_per_")
    if name in HIGHER_IS_BETTER or name.endswith("_per_s"):
        return 1
    if name in LOWER_IS_BETTER or re.fullmatch(r"p\d+(\.\d+)?", name) or "latency" in name or "error" in name:
        return -1
    raise ValueError(f"unknown metric {metric!r}: say whether higher or lower is better")


# --- Student's t (no SciPy): the regularised incomplete beta by its continued fraction ---


def _beta_fraction(a: float, b: float, x: float) -> float:
    tiny, c, d = 1e-300, 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 300):
        for num in (
            m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
            -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1)),
        ):
            d = 1.0 + num * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + num / c
            c = c if abs(c) > tiny else tiny
            h *= c * d
        if abs(c * d - 1.0) < 1e-14:
            break
    return h


def _beta_reg(a: float, b: float, x: float) -> float:
    if x <= 0.0 or x >= 1.0:
        return 0.0 if x <= 0.0 else 1.0
    log_front = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(log_front) * _beta_fraction(a, b, x) / a
    return 1.0 - math.exp(log_front) * _beta_fraction(b, a, 1.0 - x) / b


def t_pvalue(t: float, df: float) -> float:
    """Two-sided p-value of Student's t statistic ``t`` at ``df`` degrees of freedom."""
    if not math.isfinite(t):
        return 0.0
    return _beta_reg(df / 2.0, 0.5, df / (df + t * t))


def t_quantile(confidence: float, df: float) -> float:
    """The t with two-sided coverage ``confidence`` (1.96-like; 2.262 for 95 % at 9 df)."""
    lo, hi = 0.0, 1e4
    for _ in range(64):
        mid = (lo + hi) / 2.0
        lo, hi = (mid, hi) if t_pvalue(mid, df) > 1.0 - confidence else (lo, mid)
    return (lo + hi) / 2.0


# --- comparing two levels ---


@dataclass(frozen=True)
class _Levels:
    mean_before: float
    mean_after: float
    effect: float
    low: float
    high: float
    p_value: float


def _noise(points: Sequence[Point]) -> tuple[float, float] | None:
    """Variance of one run's value in a level and its degrees of freedom; None with one run and no repeats.

    With two runs or more it is the runs' sample variance; a run's repeated values put a floor
    under it (the variance of a run's mean from its own values), since a few runs may agree by chance.
    """
    within = [np.var(p.values, ddof=1) / len(p.values) for p in points if len(p.values) >= 2 and p.summary is None]
    floor = float(np.mean(within)) if within else 0.0
    if len(points) >= 2:
        between = float(np.var([p.value for p in points], ddof=1))
        return max(between, floor), float(len(points) - 1)
    if within:
        return floor, float(len(points[0].values) - 1)
    return None


def compare_levels(before: Sequence[Point], after: Sequence[Point], confidence: float) -> _Levels | None:
    """Welch's t-test and t-interval on the runs' values of two levels; None when the noise is unknown.

    A side with a single run borrows the other side's run-to-run variance.  The interval of the
    relative effect is the difference's interval divided by the earlier mean.
    """
    mb, ma = float(np.mean([p.value for p in before])), float(np.mean([p.value for p in after]))
    nb, na = _noise(before), _noise(after)
    if nb is None and na is None:
        return None
    if len(before) < 2 <= len(after) or nb is None:
        nb = na  # one run: the other side's run-to-run spread stands for its own
    if len(after) < 2 <= len(before) or na is None:
        na = nb
    assert nb is not None and na is not None
    vb, va = nb[0] / len(before), na[0] / len(after)
    se = math.sqrt(vb + va)
    if se == 0:
        p, half = (1.0 if ma == mb else 0.0), 0.0
    else:
        denom = (vb * vb / nb[1] if nb[1] else 0.0) + (va * va / na[1] if na[1] else 0.0)
        df = (vb + va) ** 2 / denom if denom else 1.0
        p, half = t_pvalue((ma - mb) / se, df), t_quantile(confidence, df) * se
    d = ma - mb
    return _Levels(mb, ma, _relative(d, mb), _relative(d - half, mb), _relative(d + half, mb), p)


def _relative(change: float, base: float) -> float:
    """``change`` as a fraction of ``base``; from a zero base (no errors before) any change is infinite."""
    if base:
        return change / abs(base)
    return math.copysign(math.inf, change) if change else 0.0


def _finding(
    points: Sequence[Point], cut: int, bounds: tuple[int, int], metric: str, sign: int, conf: float
) -> Finding | None:
    before, after = points[bounds[0] : cut], points[cut : bounds[1]]
    lv = compare_levels(before, after, conf)
    if lv is None:
        return None
    worse = (lv.mean_after - lv.mean_before) * sign < 0
    return Finding(
        metric=metric,
        index=cut,
        before_run=points[cut - 1].run,
        after_run=points[cut].run,
        before_label=points[cut - 1].label,
        after_label=points[cut].label,
        mean_before=lv.mean_before,
        mean_after=lv.mean_after,
        effect=lv.effect,
        low=lv.low,
        high=lv.high,
        p_value=lv.p_value,
        kind="regression" if worse else "improvement",
        runs_before=len(before),
        runs_after=len(after),
    )


# --- e-divisive: energy-distance splits with a permutation test ---


def _split_scores(dist: np.ndarray, min_runs: int) -> np.ndarray:
    """Energy statistic of every split of one segment (or a stack of permuted ones): shape (..., splits).

    ``dist`` holds |x_i - x_j| (..., L, L).  Split k puts runs [0, k) before and [k, L) after,
    min_runs <= k <= L - min_runs; the block sums for all k come from two running sums.
    """
    size = dist.shape[-1]
    zero = np.zeros(dist.shape[:-2] + (1,))
    # within[k]: sum over i, j < k; rows[k]: sum over i < k, all j
    lower = np.tri(size, size, -1, dtype=bool)
    within = np.concatenate([zero, 2.0 * np.where(lower, dist, 0.0).sum(-1).cumsum(-1)], axis=-1)
    rows = np.concatenate([zero, dist.sum(-1).cumsum(-1)], axis=-1)
    k = np.arange(min_runs, size - min_runs + 1)
    m = size - k
    within_before = within[..., k]
    across = rows[..., k] - within_before
    within_after = rows[..., size][..., None] - within_before - 2.0 * across
    energy = 2.0 * across / (k * m) - within_before / (k * (k - 1)) - within_after / (m * (m - 1))
    return energy * (k * m / size)


def _gini(dist: np.ndarray) -> np.ndarray:
    """Mean distance between two different values (the scale the energy statistic grows with)."""
    size = dist.shape[-1]
    return dist.sum(axis=(-2, -1)) / (size * (size - 1))


@functools.lru_cache(maxsize=64)
def _gaussian_null(size: int, min_runs: int, draws: int, seed: int) -> np.ndarray:
    """Best-split scores, over their scale, of ``draws`` series of ``size`` Gaussian values (sorted)."""
    z = np.random.default_rng(seed).standard_normal((draws, size))
    dist = np.abs(z[:, :, None] - z[:, None, :])
    return np.sort(_split_scores(dist, min_runs).max(axis=1) / _gini(dist))


def _split_pvalue(x: np.ndarray, cut: int, observed: float, s: Settings, rng: np.random.Generator) -> float:
    """The p-value of the best split: a permutation test, or a Gaussian one where shuffles cannot reach alpha.

    No shuffle test of a 4 + 4 split can give less than 2 / C(8, 4) = 0.029: a segment that
    short is judged against the same statistic over Gaussian noise (scale-free: over its scale).
    """
    if 2.0 / math.comb(x.size, cut) > s.alpha / 2:
        null = _gaussian_null(x.size, s.min_runs, s.permutations, s.seed)
        ratio = observed / float(_gini(np.abs(x[:, None] - x[None, :])))
        exceed = null.size - int(np.searchsorted(null, ratio * (1 - 1e-12)))
        return (exceed + 1) / (null.size + 1)
    return _shuffled_pvalue(x, observed, s, rng)


def _shuffled_pvalue(x: np.ndarray, observed: float, s: Settings, rng: np.random.Generator) -> float:
    """Share of shuffles of the segment whose best split scores at least the observed one.

    Shuffles come in batches; it stops as soon as the p-value can no longer fall below alpha.
    """
    exceed, done, batch = 0, 0, 100
    stop = s.alpha * (s.permutations + 1)
    while done < s.permutations:
        n = min(batch, s.permutations - done)
        order = np.argsort(rng.random((n, x.size)), axis=1)
        xs = x[order]
        dist = xs[:, :, None] - xs[:, None, :]
        best = _split_scores(np.abs(dist, out=dist), s.min_runs).max(axis=1)
        exceed += int(np.count_nonzero(best >= observed * (1 - 1e-12)))
        done += n
        if exceed + 1 > stop:
            break
    return (exceed + 1) / (done + 1)


def _best_split(x: np.ndarray, min_runs: int) -> tuple[int, float]:
    scores = _split_scores(np.abs(x[:, None] - x[None, :]), min_runs)
    k = int(np.argmax(scores))
    return k + min_runs, float(scores[k])


def change_points(x: Sequence[float] | np.ndarray, s: Settings) -> list[tuple[int, float]]:
    """E-divisive on the values ``x``: (index of the first value of a new level, permutation p-value), in order."""
    arr = np.asarray(x, dtype=float)
    rng = np.random.default_rng(s.seed)
    segments, found = [(0, arr.size)], []
    while True:
        best: tuple[int, int, int, float] | None = None
        for a, b in segments:
            if b - a >= 2 * s.min_runs:
                k, score = _best_split(arr[a:b], s.min_runs)
                if best is None or score > best[3]:
                    best = (a, b, a + k, score)
        if best is None or best[3] <= 0:
            break
        a, b, cut, score = best
        p = _split_pvalue(arr[a:b], cut - a, score, s, rng)
        if p > s.alpha:
            break
        found.append((cut, p))
        segments.remove((a, b))
        segments += [(a, cut), (cut, b)]
    return sorted(found)


# --- findings and the gate ---


def _refine(x: np.ndarray, cuts: list[int], min_runs: int) -> list[int]:
    """Each cut moved, between its neighbours, to where the two sides' means differ most (least squares).

    E-divisive finds that the distribution changed; for where a level's mean moved, the split
    with the largest between-level sum of squares places it more exactly (a run or two, often).
    """
    out = list(cuts)
    for i in range(len(out)):
        lo, hi = (out[i - 1] if i else 0), (out[i + 1] if i + 1 < len(out) else x.size)
        seg = x[lo:hi]
        k = np.arange(min_runs, seg.size - min_runs + 1)
        if k.size == 0:
            continue
        head = np.cumsum(seg)[k - 1]
        gap = head / k - (seg.sum() - head) / (seg.size - k)
        out[i] = lo + int(k[np.argmax(k * (seg.size - k) * gap * gap)])
    return out


def _strength(f: Finding | None) -> tuple[float, float]:
    return (1.0, 0.0) if f is None else (f.p_value, -abs(f.effect))


def _merge(points: Sequence[Point], cuts: list[int], metric: str, sign: int, s: Settings) -> list[Finding]:
    """Findings at ``cuts``, dropping the weakest (largest p, then smallest effect) until all pass both bars."""
    cuts = list(cuts)
    while cuts:
        bounds = [0, *cuts, len(points)]
        found = [
            _finding(points, c, (bounds[i], bounds[i + 2]), metric, sign, s.confidence) for i, c in enumerate(cuts)
        ]
        weak = [i for i, f in enumerate(found) if f is None or f.p_value > s.alpha or abs(f.effect) < s.min_effect]
        if not weak:
            return [f for f in found if f is not None]

        del cuts[max(weak, key=lambda i: _strength(found[i]))]
    return []


def detect(
    points: Sequence[Point], metric: str, settings: Settings | None = None, sign: int | None = None
) -> list[Finding]:
    """The change points of ``metric`` over the runs ``points`` (in series order), oldest first.

    ``sign`` is +1 when higher is better, -1 when lower is; by default it follows the metric's
    name (``direction``).  A series shorter than two levels (2 x min_runs runs) has no findings.
    """
    s = settings or Settings()
    sign = direction(metric) if sign is None else sign
    if len(points) < 2 * s.min_runs:
        return []
    values = np.array([p.value for p in points])
    cuts = _refine(values, [cut for cut, _ in change_points(values, s)], s.min_runs)
    return _merge(points, cuts, metric, sign, s)


def _latest(points: Sequence[Point], metric: str, sign: int, s: Settings) -> Decision:
    """Without --against: is the level holding the latest run a regression against the level before it?"""
    need = 2 * s.min_runs
    if len(points) < need:
        return Decision(
            UNDECIDED, f"{metric}: {len(points)} run(s); at least {need} are needed ({s.min_runs} per level)"
        )
    findings = detect(points, metric, s, sign)
    if findings and findings[-1].kind == "regression":
        return Decision(REGRESSION, findings[-1].line(), findings)
    start = findings[-1].index if findings else 0
    tail = points[len(points) - s.min_runs + 1 :]
    level = points[start : len(points) - len(tail)]
    if tail and len(level) >= s.min_runs:
        lv = compare_levels(level, tail, s.confidence)
        if lv is not None and lv.effect * sign <= -s.min_effect:
            return Decision(
                UNDECIDED,
                f"{metric}: the last {len(tail)} run(s) from {tail[0].run} are {lv.effect:+.1%} against the "
                f"level before them; {s.min_runs} runs are needed to tell a new level from noise",
                findings,
            )
    return Decision(OK, f"{metric}: no regression beyond noise over {len(points)} runs", findings)


def _groups(points: Sequence[Point], against: str) -> tuple[list[Point], list[Point]]:
    """(baseline, candidate) for --against=LABEL or --against=last-N; the candidate is the latest label's runs."""
    last = len(points)
    while last > 0 and points[last - 1].label == points[-1].label:
        last -= 1
    candidate = list(points[last:])
    m = re.fullmatch(r"last-(\d+)", against.strip())
    if m:
        n = int(m.group(1))
        if n < 1:
            raise ValueError(f"--against=last-N needs N >= 1, got {against!r}")
        return list(points[max(0, last - n) : last]), candidate
    if not any(p.label == against for p in points):
        raise ValueError(f"no run is labelled {against!r}")
    return [p for p in points[:last] if p.label == against], candidate


def check(
    points: Sequence[Point],
    metric: str,
    settings: Settings | None = None,
    against: str | None = None,
    sign: int | None = None,
) -> Decision:
    """The gate: code 0 (no regression beyond noise), 1 (regression: the findings), 2 (not enough data).

    Without ``against`` the latest level is compared with the level before it (see ``_latest``);
    with ``against`` (a label, or ``last-N``) the latest label's runs are compared with those runs,
    which must be at least min_runs.
    """
    s = settings or Settings()
    sign = direction(metric) if sign is None else sign
    if against is None:
        return _latest(points, metric, sign, s)
    if not points:
        return Decision(UNDECIDED, f"{metric}: no runs")
    base, cand = _groups(points, against)
    if len(base) < s.min_runs:
        return Decision(
            UNDECIDED,
            f"{metric}: {len(base)} baseline run(s) for --against={against}; at least {s.min_runs} are needed",
        )
    merged = [*base, *cand]
    f = _finding(merged, len(base), (0, len(merged)), metric, sign, s.confidence)
    if f is None:
        return Decision(UNDECIDED, f"{metric}: the noise of {cand[0].run} is unknown")
    if f.kind == "regression" and f.p_value <= s.alpha and abs(f.effect) >= s.min_effect:
        return Decision(REGRESSION, f.line(), [f])
    return Decision(OK, f"{metric}: {f.effect:+.1%} [{f.low:+.1%}, {f.high:+.1%}] against {against}, within noise", [f])
