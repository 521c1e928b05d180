"""The gate over a whole store (``history check``): every series, every metric, one exit code.

Role: runs :func:`detect.check` on each series (``series.py``) and metric, and folds the
decisions into one code, the worst winning:

* 1 when any series has a regression (whatever the others say);
* else 2 when any series has too few runs to decide, or when nothing matched at all;
  ``allow_short`` turns that 2 into 0 when at least one series was decided (a series
  still too young to judge is named, not counted);
* else 0.

Pure: no store, no output.  ``lines`` and ``as_json`` say it for people and for pipelines.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from .detect import OK, REGRESSION, UNDECIDED, Decision, Finding, Settings, check
from .series import Series


@dataclass(frozen=True)
class Verdict:
    """The decision on one metric of one series."""

    series: Series
    metric: str
    decision: Decision

    @property
    def finding(self) -> Finding | None:
        """The regression the decision reports (the latest finding), if any."""
        regressions = [f for f in self.decision.findings if f.kind == "regression"]
        return regressions[-1] if self.decision.code == REGRESSION and regressions else None


@dataclass
class GateResult:
    code: int
    verdicts: list[Verdict] = field(default_factory=list)
    note: str = ""  # why there is nothing to decide

    def count(self, code: int) -> int:
        return sum(v.decision.code == code for v in self.verdicts)


def check_against(against: str | None) -> None:
    """``--against``'s value is a label or ``last-N`` with N >= 1 (a ValueError otherwise)."""
    if against is None:
        return
    if not against.strip():
        raise ValueError("--against needs a label or last-N")
    m = re.fullmatch(r"last-(\d+)", against.strip())
    if m and int(m.group(1)) < 1:
        raise ValueError(f"--against={against}: N must be 1 or more")


def decide(series: Sequence[Series], metric: str, s: Settings, against: str | None) -> list[Verdict]:
    out = []
    for one in series:
        points = one.points(metric)
        try:
            decision = check(points, metric, s, against=against)
        except ValueError as exc:  # --against names a label this series lacks
            decision = Decision(UNDECIDED, f"{metric}: {exc}")
        missing = len(one.runs) - len(points)  # a failed run, or one that never measured this metric
        notes = [f"{missing} run(s) without a value of {metric}"] if missing else []
        notes += [f"{one.left_out} run(s) without the axis's label"] if one.left_out else []
        if notes and decision.code == UNDECIDED:
            reason = f"{decision.reason} ({' and '.join(notes)} left out)"
            decision = Decision(decision.code, reason, decision.findings)
        out.append(Verdict(one, metric, decision))
    return out


def gate(
    series: Sequence[Series],
    metrics: Sequence[str],
    settings: Settings | None = None,
    against: str | None = None,
    allow_short: bool = False,
) -> GateResult:
    """Every series' decision on every metric and the one code they give (see the module)."""
    s = settings or Settings()
    check_against(against)
    if not series:
        return GateResult(UNDECIDED, note="no runs match; nothing to decide")
    verdicts = [v for m in metrics for v in decide(series, m, s, against)]
    verdicts.sort(key=lambda v: (v.series.key.workload, v.series.key.threads or 0, v.series.key.driver))
    codes = {v.decision.code for v in verdicts}
    if REGRESSION in codes:
        code = REGRESSION
    elif UNDECIDED in codes and not (allow_short and OK in codes):
        code = UNDECIDED
    else:
        code = OK
    return GateResult(code, verdicts)


def _pct(x: float) -> str:
    return f"{x:+.1%}" if math.isfinite(x) else ("+inf" if x > 0 else "-inf")


def finding_text(v: Verdict, short: bool = False) -> str:
    """The metric, the effect with its interval and the first run of the changed level
    (``short``: by its base name); the decision's reason when it found no regression."""
    f = v.finding
    if f is None:
        return v.decision.reason
    after, before = (
        (os.path.basename(f.after_run), os.path.basename(f.before_run)) if short else (f.after_run, f.before_run)
    )
    return (
        f"{f.metric} {_pct(f.effect)} [{_pct(f.low)}, {_pct(f.high)}] from {after} ({f.after_label}) on; "
        f"{f.runs_after} run(s) against {f.runs_before} before, last before {before} ({f.before_label}), p={f.p_value:.3g}"
    )


def regression_line(v: Verdict) -> str:
    """One line: the series, the metric, the effect with its interval, the first run of the changed level."""
    return f"regression: {v.series.key.name()}: {finding_text(v)}"


def lines(result: GateResult, store: str) -> list[str]:
    """The text of ``history check``: a line per regression and per undecided series, then a summary."""
    if not result.verdicts:
        return [f"history check: {result.note} (store: {store}); exit {result.code}"]
    out = [regression_line(v) for v in result.verdicts if v.decision.code == REGRESSION]
    out += [
        f"not enough data: {v.series.key.name()}: {v.decision.reason}"
        for v in result.verdicts
        if v.decision.code == UNDECIDED
    ]
    n_series = len({v.series.key for v in result.verdicts})
    metrics = list(dict.fromkeys(v.metric for v in result.verdicts))
    out.append(
        f"history check: {n_series} series x {len(metrics)} metric(s) ({', '.join(metrics)}): "
        f"{result.count(REGRESSION)} regression(s), {result.count(UNDECIDED)} not enough data, "
        f"{result.count(OK)} ok; exit {result.code}"
    )
    return out


def as_json(result: GateResult, store: str, by: str) -> dict[str, object]:
    return {
        "code": result.code,
        "store": store,
        "by": by,
        "note": result.note,
        "verdicts": [
            {
                "workload": v.series.key.workload,
                "threads": v.series.key.threads,
                "driver": v.series.key.driver,
                "metric": v.metric,
                "runs": len(v.series.points(v.metric)),
                **v.decision.as_json(),
            }
            for v in result.verdicts
        ],
    }
