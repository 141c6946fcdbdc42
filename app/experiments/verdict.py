"""Does a paper's claim reproduce here? A verdict computed from the per-seed numbers, never written by hand.

The rule (a two-sample t-test at the 5% level, stated in plain numbers):

1. A claim compares two arms on one metric in one direction: "arm A beats arm B" (higher is better,
   or lower is better for a loss). ``difference`` = mean(A) − mean(B), signed so that a positive
   difference is the direction the paper claims.
2. The spread is the pooled standard deviation of the seeds,
   ``sd = sqrt(((nA − 1)·sdA² + (nB − 1)·sdB²) / (nA + nB − 2))``, and the uncertainty of the
   difference of two means is ``se = sd · sqrt(1/nA + 1/nB)``.
3. The difference is *clear* when ``|difference| > t · se``, with ``t`` the two-sided 95% quantile of
   Student's t with nA + nB − 2 degrees of freedom (2.78 for 3 seeds a side, 2.31 for 5).
4. Verdict: **reproduces** when the difference is clear and positive; **reverses** when it is clear and
   negative; **too small to tell at this scale** when it is within ``t · se`` — the arms differ by less
   than the seeds differ among themselves. With fewer than 2 seeds in an arm there is no spread to
   compare against, and the verdict is "too small to tell" with ``enough_seeds`` False.

When every seed gives the same number (sd = 0), any nonzero difference is clear.
Pure Python: the page imports it without torch.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import asdict, dataclass

REPRODUCES = "reproduces"
TOO_SMALL = "too small to tell at this scale"
REVERSES = "reverses"
VERDICTS = (REPRODUCES, TOO_SMALL, REVERSES)
MIN_SEEDS = 2

# two-sided 95% quantiles of Student's t by degrees of freedom (1..30); beyond 30, 1.96 + 2.4/df
_T95 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
        2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042)


def t_critical(df: int) -> float:
    """Two-sided 95% quantile of Student's t with df degrees of freedom (df ≥ 1)."""
    if df < 1:
        raise ValueError("needs at least one degree of freedom")
    return _T95[df - 1] if df <= len(_T95) else 1.96 + 2.4 / df


@dataclass(frozen=True)
class Verdict:
    verdict: str  # one of VERDICTS
    difference: float  # mean(A) − mean(B), positive in the claimed direction
    mean_a: float
    mean_b: float
    sd_a: float
    sd_b: float
    n_a: int
    n_b: int
    pooled_sd: float
    se: float  # of the difference of the two means
    threshold: float  # t · se: what |difference| must exceed to be clear
    enough_seeds: bool
    reason: str  # the rule applied to these numbers, in one sentence

    def as_dict(self) -> dict:
        return asdict(self)


def _sd(xs: list[float]) -> float:
    return statistics.stdev(xs) if len(xs) >= 2 else 0.0


def decide(a: list[float], b: list[float], higher_is_better: bool = True) -> Verdict:
    """The verdict on "A beats B", from the final numbers of each seed of arm A (claimed better) and B."""
    a, b = [float(x) for x in a if x is not None and math.isfinite(x)], [float(x) for x in b if x is not None and math.isfinite(x)]
    if not a or not b:
        raise ValueError("each arm needs at least one finite number")
    sign = 1.0 if higher_is_better else -1.0
    mean_a, mean_b = statistics.fmean(a), statistics.fmean(b)
    diff = sign * (mean_a - mean_b)
    sd_a, sd_b = _sd(a), _sd(b)
    n_a, n_b = len(a), len(b)
    if n_a < MIN_SEEDS or n_b < MIN_SEEDS:
        return Verdict(TOO_SMALL, diff, mean_a, mean_b, sd_a, sd_b, n_a, n_b, float("nan"), float("nan"), float("nan"),
                       False, f"{n_a} and {n_b} seeds: at least {MIN_SEEDS} per arm are needed to know the spread")
    df = n_a + n_b - 2
    pooled = math.sqrt(((n_a - 1) * sd_a**2 + (n_b - 1) * sd_b**2) / df)
    se = pooled * math.sqrt(1 / n_a + 1 / n_b)
    threshold = t_critical(df) * se
    if abs(diff) > threshold and diff != 0:
        verdict = REPRODUCES if diff > 0 else REVERSES
        reason = (f"the difference {diff:+.4g} is {'beyond' if se else 'not zero, with no'} seed spread"
                  + (f" (|difference| > t·se = {threshold:.3g})" if se else ""))
    else:
        verdict = TOO_SMALL
        reason = f"the difference {diff:+.4g} is within the seed spread (|difference| ≤ t·se = {threshold:.3g})"
    return Verdict(verdict, diff, mean_a, mean_b, sd_a, sd_b, n_a, n_b, pooled, se, threshold, True, reason)
