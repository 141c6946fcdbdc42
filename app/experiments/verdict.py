"""Does a paper's claim reproduce here? A verdict computed from the per-seed numbers, never written by hand.

A claim compares two arms, A and B, on one metric. ``difference`` = A − B, signed so that a positive
difference is the direction the paper claims (for a loss: A lower). Three kinds of claim:

- **superiority** ("A beats B"): the boundary is 0; the claim holds when A − B is clearly above 0, and
  fails clearly (reverses) when it is clearly below 0.
- **noninferiority** ("A is not worse than B by more than ``margin``", e.g. "comparable to or better",
  "costs almost nothing"): the boundary is −margin; it holds when A − B is clearly above −margin and fails
  when it is clearly below (A worse by more than the margin).
- **equivalence** ("A and B are within ±``margin``", e.g. "about as good as"): two one-sided tests (TOST),
  A − B > −margin and A − B < +margin, the claim's p being the larger of the two; the binding one is always
  the margin on the side of the measured difference, so the boundary is that margin. It holds when
  A − B is clearly inside ±margin, fails when clearly outside.

The test, in plain numbers:

1. **Paired** when the arms share seeds (the same ``seed`` in both: the same batch order, masking draws
   and, where shapes match, initialisation — the arms rise and fall together across seeds): the
   per-seed differences ``d_i`` = A_i − B_i over the n shared seeds, their mean ``d̄`` and sd ``s``;
   ``se = s / √n``, ``df = n − 1``. **Welch** (unpaired) only when the arms share fewer than 2 seeds:
   ``se = √(sA²/nA + sB²/nB)`` with Welch–Satterthwaite's df.
2. ``t = (d̄ − boundary) / se`` and ``p = 2 · P(T_df ≥ |t|)`` (Student's t, computed here in pure Python
   from the regularized incomplete beta function). Every conclusion is thus a one-sided test at α/2 = 2.5%,
   the same standard in both directions and for every kind, and can be read off one interval: the 95%
   interval of the difference, ``d̄ ± t₀.₉₇₅(df) · se``, lies entirely on one side of the boundary exactly
   when p < 0.05 (for equivalence that is stricter than the 90% interval of the usual 5% TOST).
3. **Multiplicity**: the page makes m comparisons: every comparison of app/experiments/claims.py with results,
   at least 2 seeds per arm and both arms healthy (m is counted, never written down). Holm's step-down
   at α = 0.05 over those m: sort the p values, p₍₁₎ ≤ … ≤ p₍ₘ₎; the comparison of rank k needs
   ``p ≤ α / (m − k + 1)``, and Holm stops at the first rank that misses — no later rank passes.
   Equivalently the Holm-adjusted p, ``max over j ≤ k of (m − j + 1) · p₍ⱼ₎``, is at most α.
4. Verdict, one of three outcomes against the margin: **different** — Holm passes the claim's test: it
   **reproduces** when the difference lies on the claim's side of the boundary, **reverses** on the other
   (superiority: a clear difference in the wrong direction; noninferiority: A clearly worse by more than the
   margin; equivalence: clearly outside the margin); **equivalent within ± the margin** — not different, but
   the two one-sided tests (TOST) against ± the margin (the claim's, else its metric's,
   app/experiments/claims.py MARGINS) pass Holm's step-down at the same α over the family's equivalence tests:
   the 95% interval lies inside ±margin, no difference larger than the margin (for a superiority claim: the
   label "equivalent within ±M"; for an equivalence claim that is "reproduces"); **inconclusive at this
   scale** otherwise (neither). Every difference is also given as a multiple of its margin (``in_margins``).
   With fewer than 2 seeds in an arm there is no spread to compare against: inconclusive, ``enough_seeds``
   False, and outside the family m.
   The label says which "inconclusive" it is: where the 95% interval clears the boundary on its own (p ≤ α) but
   not after Holm's adjustment, the seeds are too few to settle it among m comparisons, and the label says so
   ("not settled by 3 seeds").

5. **Health before verdict**: an arm that did not reach what its experiment requires to count as trained
   (app/experiments/claims.py, ``Health``; checked per seed by app/experiments/results.py) gets no verdict:
   :func:`unhealthy` marks the comparison **no verdict**, with the arm and its numbers, and :func:`judge` leaves
   it out of Holm's family — an untrained arm's comparison is not a test of the claim.

6. **Counted once**: where two comparisons of the family measure (mostly) the same effect — DistilBERT's "starting
   from the teacher beats random" and "the distilled student beats a teacher-free one" both measure what the student
   inherits from the teacher — only one is a test; the other (:func:`counted_once`) is shown with its numbers, outside
   Holm's family, and says which comparison counts its effect.

7. **Items where a probe decides**: a probe's per-seed numbers are accuracies on one fixed set of test items; the
   seed-level test ignores that another draw of items would move them. For a comparison on a probe,
   :func:`with_items` adds a bootstrap over the probe's items × the seeds (app/experiments/bootstrap.py: exact from
   per-item outcomes where stored, else from the stored accuracies, on the side that widens the interval), and
   Holm ranks the larger of the two p's (``p_test``; likewise for the equivalence test, ``p_equiv_test``).

8. **Across teachers** (distillation with more than one teacher, plan version 6): student seed s distils teacher
   s mod K, so the seeds are nested within K independently trained teachers. The seed-level paired test above stays
   the test (over all seeds, Holm as before). :func:`across_teachers` adds a check computed from the same
   per-seed differences, grouped by teacher: each teacher's mean difference and its own 95% interval (paired t
   over its seeds). A label that says something — *reproduces*, *reverses*, *equivalent within ±M* — must hold
   within every teacher's seeds: a teacher whose mean lies on the other side of the label's boundary (the
   teachers disagree in sign; for *equivalent*, a teacher's mean outside ±M) or whose own interval lies wholly on
   the other side (it clearly contradicts) turns the label into *inconclusive: depends on the teacher*, with each
   teacher's numbers as the reason. The comparison stays in Holm's family (its p still counts in m): the check
   can only withdraw a label, never lend one.

   Why this test with 2 teachers: the teacher is a random draw too, and a claim about distillation is a claim
   about teachers in general. The proper model has a between-teacher variance component, but with K = 2
   teachers it has 1 degree of freedom: a test that used it (a t on the 2 teacher means, df 1, t₀.₉₇₅ = 12.7)
   would have almost no power, and the seed-level interval cannot include it at all. What 2 teachers can show is
   replication: whether the effect seen with one teacher appears again, in the same direction, with an
   independent one. So the seed-level test decides the label and the teachers decide whether it may stand; the
   page says that the between-teacher spread is not estimated. Only the sign and a clear contradiction are asked
   of each teacher, not significance: 5 seeds per teacher have far less power than 10, and requiring each half to
   clear the boundary alone would make the check a second, weaker test instead of a replication check.

When every seed difference is the same (se = 0), any difference from the boundary is clear (p = 0).
Pure Python: the page imports it without torch or scipy.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import asdict, dataclass, replace

REPRODUCES = "reproduces"
TOO_SMALL = "inconclusive at this scale"  # neither clearly different nor clearly within ± the margin
INCONCLUSIVE = TOO_SMALL
EQUIVALENT = "equivalent within the margin"  # "A beats B" not shown: no difference larger than ± the margin
REVERSES = "reverses"
NO_VERDICT = "no verdict"  # an arm failed its health check: the comparison is not made (outside Holm's family)
NOT_COUNTED = "not a separate test"  # re-measures an effect another comparison of the family tests: counted once there
DEPENDS = "depends on the teacher"  # the label did not hold within every teacher's seeds (across_teachers)
VERDICTS = (REPRODUCES, EQUIVALENT, TOO_SMALL, REVERSES)
DIFFERENT, WITHIN, NEITHER = "different", "equivalent", "inconclusive"  # the three outcomes against the margin
MIN_SEEDS = 2
ALPHA = 0.05  # the family-wise error rate Holm keeps

SUPERIORITY, NONINFERIORITY, EQUIVALENCE = "superiority", "noninferiority", "equivalence"
KINDS = (SUPERIORITY, NONINFERIORITY, EQUIVALENCE)
KIND_TEXT = {
    SUPERIORITY: "A beats B",
    NONINFERIORITY: "A is not worse than B by more than the margin",
    EQUIVALENCE: "A and B are within ± the margin",
}


# ----------------------------------------------------------------------------- Student's t, pure Python


def _betacf(a: float, b: float, x: float) -> float:
    """The continued fraction of the incomplete beta function (modified Lentz), as in Numerical Recipes §6.4."""
    tiny, eps = 1e-300, 3e-16
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 10000):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < eps:
            break
    return h


def betainc(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta function I_x(a, b), for a, b > 0 and 0 ≤ x ≤ 1."""
    if not 0.0 <= x <= 1.0:
        raise ValueError("x must lie in [0, 1]")
    if x in (0.0, 1.0):
        return x
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, 1.0 - x) / b


def t_sf(t: float, df: float) -> float:
    """P(T ≥ t) for Student's t with df > 0 degrees of freedom (df need not be a whole number)."""
    if df <= 0:
        raise ValueError("needs positive degrees of freedom")
    if math.isnan(t):
        return float("nan")
    if math.isinf(t):
        return 0.0 if t > 0 else 1.0
    tail = 0.5 * betainc(df / 2.0, 0.5, df / (df + t * t))  # P(T ≥ |t|)
    return tail if t >= 0 else 1.0 - tail


def t_cdf(t: float, df: float) -> float:
    """P(T ≤ t) for Student's t with df degrees of freedom."""
    return 1.0 - t_sf(t, df)


def t_quantile(q: float, df: float) -> float:
    """The q-quantile of Student's t (0 < q < 1), by bisection on :func:`t_cdf`."""
    if not 0.0 < q < 1.0:
        raise ValueError("q must lie in (0, 1)")
    if q == 0.5:
        return 0.0
    if q < 0.5:
        return -t_quantile(1.0 - q, df)
    lo, hi = 0.0, 1.0
    while t_cdf(hi, df) < q:
        lo, hi = hi, hi * 2.0
    for _ in range(200):
        mid = (lo + hi) / 2.0
        if t_cdf(mid, df) < q:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-12 * max(1.0, hi):
            break
    return (lo + hi) / 2.0


def t_critical(df: float) -> float:
    """Two-sided 95% quantile of Student's t with df degrees of freedom (4.30 for df 2, 2.78 for df 4)."""
    if df <= 0:
        raise ValueError("needs positive degrees of freedom")
    return t_quantile(0.975, df)


# ----------------------------------------------------------------------------- one comparison


@dataclass(frozen=True)
class Verdict:
    """Everything a student needs to check a verdict by hand."""

    verdict: str  # one of VERDICTS
    label: str  # the verdict as shown: "reverses" carries the scale it was measured at
    kind: str  # one of KINDS
    margin: float  # in the metric's units (0 for superiority)
    boundary: float  # what the difference is tested against: 0, −margin, or the margin on the difference's side
    design: str  # "paired" (per-seed differences) or "Welch" (unpaired); "" without enough seeds
    n_a: int
    n_b: int
    n: int  # pairs (paired) or nA + nB (Welch)
    seeds: tuple  # the shared seeds, in order (paired); () for Welch
    a: tuple  # A's values at those seeds (paired), or all of A's (Welch), as measured (not signed)
    b: tuple  # B's, likewise
    diffs: tuple  # the per-seed differences A − B, signed (paired); () for Welch
    difference: float  # mean of A − B, positive in the claimed direction
    mean_a: float
    mean_b: float
    sd_a: float
    sd_b: float
    sd: float | None  # of the per-seed differences (paired); None for Welch
    se: float  # of the mean difference
    df: float
    t: float  # (difference − boundary) / se
    p_one_sided: float  # P(T ≥ |t|): for equivalence, TOST's p (the larger of its two one-sided p's) when inside
    p: float  # 2 · p_one_sided, capped at 1: what Holm ranks
    t95: float  # the two-sided 95% quantile of t at df
    ci_low: float  # 95% interval of the difference, difference ∓ t95 · se
    ci_high: float
    m: int  # comparisons in the family Holm adjusts over (1 for a comparison judged alone)
    rank: int  # this p's rank among the family's (1 = smallest); 0 when not in the family
    holm_threshold: float  # ALPHA / (m − rank + 1): what p must not exceed
    p_holm: float  # Holm-adjusted p: it passes when p_holm ≤ ALPHA
    holm_pass: bool  # Holm rejects the boundary (also False when Holm stopped at an earlier rank)
    holm_stopped_at: int  # the first rank Holm did not pass (0 when it passed all)
    enough_seeds: bool
    scale: str  # the scale it was measured at ("hidden 128, 2 layers, 1600 steps, 3 seeds"), "" when unknown
    reason: str  # the rule applied to these numbers, in one sentence
    why: str = ""  # the reason's last part: Holm's decision and what it means for the claim
    health: str = ""  # why an arm does not count as trained ("electra did not learn its task (...)"); "" when both do
    eq_margin: float = 0.0  # ± what the equivalence test (TOST) is against: the claim's margin, else its metric's
    p_equiv: float = float("nan")  # TOST's p, 2 · max of its two one-sided p's: < 0.05 iff the 95% interval is inside
    equiv_threshold: float = float("nan")  # what p_equiv must not exceed: Holm over the family's equivalence tests
    equivalent: bool = False  # Holm passes the equivalence test: no difference larger than ± eq_margin
    outcome: str = ""  # DIFFERENT, WITHIN or NEITHER; "" without a test
    in_margins: float = float("nan")  # the difference as a multiple of eq_margin
    counted_in: str = ""  # the comparison whose test already covers this one's effect ("" when it is its own test)
    items: int = 0  # a probe's test items behind each number (0: not a probe, no item-level test)
    p_items: float = float("nan")  # the items × seeds bootstrap's p against the boundary (app/experiments/bootstrap.py)
    items_low: float = float("nan")  # its 95% interval of the difference
    items_high: float = float("nan")
    p_equiv_items: float = float("nan")  # its equivalence test against ± eq_margin
    items_how: str = ""  # how it was drawn and its limits
    by_teacher: tuple = ()  # with more than one teacher: a TeacherCheck per teacher (across_teachers)
    teacher_check: str = ""  # the across-teachers check in one sentence ("" with one teacher)

    @property
    def p_test(self) -> float:
        """What Holm ranks: the seed-level t-test's p, or for a probe the larger of it and the items × seeds
        bootstrap's p — a probe's difference must clear its boundary over another draw of test items too."""
        return max(self.p, self.p_items) if self.p_items == self.p_items else self.p

    @property
    def p_equiv_test(self) -> float:
        """The equivalence test's p Holm ranks: TOST's, or the larger of it and the bootstrap's for a probe."""
        if self.p_equiv_items == self.p_equiv_items and self.p_equiv == self.p_equiv:
            return max(self.p_equiv, self.p_equiv_items)
        return self.p_equiv

    @property
    def tested(self) -> bool:
        """Whether Holm's family holds this comparison: enough seeds, both arms healthy, not counted elsewhere."""
        return self.enough_seeds and not self.health and not self.counted_in

    def as_dict(self) -> dict:
        return asdict(self)

    @property
    def side(self) -> str:
        """Which side of the boundary the difference lies: "holds" (the claim's) or "fails"."""
        return _side(self.kind, self.difference, self.margin)


def _sd(xs: list[float]) -> float:
    return statistics.stdev(xs) if len(xs) >= 2 else 0.0


def _clean(values) -> dict:
    """{seed: value} from a dict (seeds known: pairable) or a list (positions, never paired), finite only."""
    items = values.items() if isinstance(values, dict) else ((None, v) for v in values)
    out = {}
    for i, (k, v) in enumerate(items):
        if v is not None and math.isfinite(float(v)):
            out[("#", i) if k is None else k] = float(v)
    return out


def _side(kind: str, diff: float, margin: float) -> str:
    if kind == EQUIVALENCE:
        return "holds" if abs(diff) < margin else "fails"
    boundary = -margin if kind == NONINFERIORITY else 0.0
    return "holds" if diff > boundary else "fails"


def boundary_of(kind: str, margin: float, diff: float) -> float:
    """What the difference is tested against: 0 (superiority), −margin (noninferiority), and for equivalence
    the margin on the difference's side (TOST's binding one-sided test)."""
    if kind == SUPERIORITY:
        return 0.0
    if kind == NONINFERIORITY:
        return -margin
    return margin if diff >= 0 else -margin


def _paired_or_welch(ca: dict, cb: dict, shared: list, sign: float):
    """(design, diffs, diff, sd, n, se, df, seeds, values a, values b) of a paired test over the ``shared`` seeds, or
    of Welch's over the arms' own; None where neither has the seeds it needs."""
    n_a, n_b = len(ca), len(cb)
    if len(shared) >= MIN_SEEDS:
        design = "paired"
        diffs = tuple(sign * (ca[s] - cb[s]) for s in shared)
        diff = statistics.fmean(diffs)
        sd = _sd(list(diffs))
        n = len(diffs)
        se, df = sd / math.sqrt(n), float(n - 1)
        seeds = tuple(shared)
        va_, vb_ = tuple(ca[s] for s in shared), tuple(cb[s] for s in shared)
        return design, diffs, diff, sd, n, se, df, seeds, va_, vb_
    if n_a >= MIN_SEEDS and n_b >= MIN_SEEDS:
        design, diffs, seeds, sd = "Welch", (), (), None
        mean_a, mean_b = statistics.fmean(ca.values()), statistics.fmean(cb.values())
        sd_a, sd_b = _sd(list(ca.values())), _sd(list(cb.values()))
        va_, vb_ = tuple(ca.values()), tuple(cb.values())
        diff = sign * (mean_a - mean_b)
        va, vb = sd_a**2 / n_a, sd_b**2 / n_b
        se = math.sqrt(va + vb)
        n = n_a + n_b
        df = (va + vb) ** 2 / (va**2 / (n_a - 1) + vb**2 / (n_b - 1)) if va + vb > 0 else float(n_a + n_b - 2)
        return design, diffs, diff, sd, n, se, df, seeds, va_, vb_
    return None


def _too_small(kind: str, margin: float, scale: str, ca: dict, cb: dict, diff: float, moments, shared: int) -> Verdict:
    """The verdict of a comparison with too few seeds to know the spread: no test, the difference shown."""
    n_a, n_b, nan = len(ca), len(cb), float("nan")
    mean_a, mean_b, sd_a, sd_b = moments
    reason = f"{n_a} and {n_b} seeds, {shared} shared: at least {MIN_SEEDS} per arm are needed to know the spread"
    return Verdict(
        TOO_SMALL,
        TOO_SMALL,
        kind,
        margin,
        boundary_of(kind, margin, diff),
        "",
        n_a,
        n_b,
        0,
        (),
        tuple(ca.values()),
        tuple(cb.values()),
        (),
        diff,
        mean_a,
        mean_b,
        sd_a,
        sd_b,
        None,
        nan,
        nan,
        nan,
        nan,
        nan,
        nan,
        nan,
        nan,
        0,
        0,
        nan,
        nan,
        False,
        0,
        False,
        scale,
        reason,
    )


def compare(
    a,
    b,
    higher_is_better: bool = True,
    kind: str = SUPERIORITY,
    margin: float = 0.0,
    scale: str = "",
    equivalence_margin: float = 0.0,
) -> Verdict:
    """The test of one comparison, judged alone (m = 1); :func:`judge` adjusts a family of them.

    a, b: each arm's final numbers, as {seed: value} (arms that share seeds are paired by seed) or as a list
    (never paired). margin: in the metric's units, > 0 for noninferiority and equivalence. equivalence_margin: the
    ± margin a superiority claim's difference is also tested against (its metric's margin; 0: no such test)."""
    if kind not in KINDS:
        raise ValueError(f"kind is one of {', '.join(KINDS)}")
    if kind != SUPERIORITY and not margin > 0:
        raise ValueError(f"a {kind} claim needs a positive margin")
    margin = float(margin) if kind != SUPERIORITY else 0.0
    ca, cb = _clean(a), _clean(b)
    if not ca or not cb:
        raise ValueError("each arm needs at least one finite number")
    sign = 1.0 if higher_is_better else -1.0
    mean_a, mean_b = statistics.fmean(ca.values()), statistics.fmean(cb.values())
    sd_a, sd_b = _sd(list(ca.values())), _sd(list(cb.values()))
    n_a, n_b = len(ca), len(cb)
    shared = [s for s in ca if s in cb and not (isinstance(s, tuple) and s[:1] == ("#",))]
    try:
        shared.sort()
    except TypeError:
        pass
    nan = float("nan")
    tested = _paired_or_welch(ca, cb, shared, sign)
    if tested is None:
        diff = sign * (mean_a - mean_b)
        return _too_small(kind, margin, scale, ca, cb, diff, (mean_a, mean_b, sd_a, sd_b), len(shared))
    design, diffs, diff, sd, n, se, df, seeds, va_, vb_ = tested
    boundary = boundary_of(kind, margin, diff)
    gap = diff - boundary
    if se > 0:
        t = gap / se
    else:
        t = 0.0 if gap == 0 else math.copysign(math.inf, gap)
    p_one = t_sf(abs(t), df)
    p = min(1.0, 2.0 * p_one)
    t95 = t_critical(df)
    eq = margin if kind != SUPERIORITY else float(equivalence_margin or 0.0)
    p_eq = tost(diff, se, df, eq) if eq > 0 else nan
    v = Verdict(
        TOO_SMALL,
        TOO_SMALL,
        kind,
        margin,
        boundary,
        design,
        n_a,
        n_b,
        n,
        seeds,
        va_,
        vb_,
        diffs,
        diff,
        mean_a,
        mean_b,
        sd_a,
        sd_b,
        sd,
        se,
        df,
        t,
        p_one,
        p,
        t95,
        diff - t95 * se,
        diff + t95 * se,
        1,
        0,
        nan,
        nan,
        False,
        0,
        True,
        scale,
        "",
        eq_margin=eq,
        p_equiv=p_eq,
        in_margins=diff / eq if eq > 0 else nan,
    )
    return _apply_holm(v, 1, 1, ALPHA, p, 0, ALPHA if eq > 0 else nan, p_eq)


def tost(diff: float, se: float, df: float, margin: float) -> float:
    """Two one-sided tests of −margin < difference < +margin: 2 · max(P(T ≥ (d + M)/se), P(T ≥ (M − d)/se)), capped at
    1 — below 0.05 exactly when the 95% interval d ± t₀.₉₇₅ · se lies inside ±M (the same standard as every other
    test here)."""

    def one(gap: float) -> float:
        if se > 0:
            return t_sf(gap / se, df)
        return 0.0 if gap > 0 else 1.0

    return min(1.0, 2.0 * max(one(diff + margin), one(margin - diff)))


def decide(
    a,
    b,
    higher_is_better: bool = True,
    kind: str = SUPERIORITY,
    margin: float = 0.0,
    scale: str = "",
    equivalence_margin: float = 0.0,
) -> Verdict:
    """One comparison judged alone (a family of one: Holm's threshold is α itself)."""
    return compare(a, b, higher_is_better, kind, margin, scale, equivalence_margin)


# ----------------------------------------------------------------------------- the family: Holm


@dataclass(frozen=True)
class HolmStep:
    key: object
    p: float
    rank: int  # 1 = smallest p
    threshold: float  # alpha / (m − rank + 1)
    adjusted: float  # Holm-adjusted p
    rejected: bool


def holm(pvalues: dict, alpha: float = ALPHA) -> dict:
    """Holm's step-down over ``pvalues`` ({key: p}; NaN p's are left out of the family): key -> HolmStep.
    Ties keep the keys' order."""
    family = [(k, p) for k, p in pvalues.items() if p is not None and not math.isnan(p)]
    m = len(family)
    order = sorted(range(m), key=lambda i: family[i][1])
    out, running, going = {}, 0.0, True
    for rank, i in enumerate(order, start=1):
        key, p = family[i]
        threshold = alpha / (m - rank + 1)
        running = max(running, min(1.0, (m - rank + 1) * p))
        going = going and p <= threshold
        out[key] = HolmStep(key, p, rank, threshold, running, going)
    return out


def _apply_holm(
    v: Verdict,
    m: int,
    rank: int,
    threshold: float,
    adjusted: float,
    stopped_at: int,
    eq_threshold: float = float("nan"),
    eq_adjusted: float = float("nan"),
) -> Verdict:
    passed = bool(v.enough_seeds and adjusted <= ALPHA)  # the running max carries Holm's stop to later ranks
    equivalent = bool(v.enough_seeds and v.eq_margin > 0 and eq_adjusted <= ALPHA)
    side = _side(v.kind, v.difference, v.margin)
    verdict = (REPRODUCES if side == "holds" else REVERSES) if passed else TOO_SMALL
    outcome = (WITHIN if v.kind == EQUIVALENCE and side == "holds" else DIFFERENT) if passed else NEITHER
    if not passed and equivalent:  # not clearly different, clearly within ± the margin
        outcome = WITHIN
        verdict = EQUIVALENT if v.kind == SUPERIORITY else TOO_SMALL
    label = verdict + (f" at {v.scale}" if verdict == REVERSES and v.scale else "")
    if verdict == EQUIVALENT:
        label = f"equivalent within ±{_g(v.eq_margin)}"
    elif verdict == TOO_SMALL and v.enough_seeds and v.p_test <= ALPHA:  # clear alone, not among m: too few seeds
        label = f"not settled by {unsettled_seeds(v)} seeds"
    elif verdict == TOO_SMALL and v.enough_seeds and v.p <= ALPHA:  # the seeds clear it, another draw of items may not
        label = f"not settled by the probe's {v.items:,} items"
    v = replace(
        v,
        verdict=verdict,
        label=label,
        m=m,
        rank=rank,
        holm_threshold=threshold,
        p_holm=adjusted,
        holm_pass=passed,
        holm_stopped_at=stopped_at,
        equiv_threshold=eq_threshold,
        equivalent=equivalent,
        outcome=outcome if v.enough_seeds else "",
    )
    return replace(v, reason=reason(v), why=why(v))


def with_items(v: Verdict, b) -> Verdict:
    """``v`` with a probe's item-level test (``b``: app/experiments/bootstrap.py ItemsBootstrap, None: unchanged):
    from here on Holm ranks :attr:`Verdict.p_test`, the larger of the seeds' p and the bootstrap's."""
    if b is None or not v.enough_seeds:
        return v
    v = replace(
        v, items=b.items, p_items=b.p, items_low=b.low, items_high=b.high, p_equiv_items=b.p_equiv, items_how=b.how
    )
    return _apply_holm(v, 1, 1, ALPHA, v.p_test, 0, ALPHA if v.eq_margin > 0 else float("nan"), v.p_equiv_test)


def unsettled_seeds(v: Verdict) -> str:
    """The seeds behind a comparison, as its label counts them: the pairs, or each arm's when unpaired."""
    return str(len(v.seeds)) if v.design == "paired" else (str(v.n_a) if v.n_a == v.n_b else f"{v.n_a} and {v.n_b}")


def unhealthy(v: Verdict, failure: str) -> Verdict:
    """``v`` with no verdict because an arm did not count as trained: ``failure`` says which and by what numbers
    ("electra did not learn its task (discriminator ROC-AUC 0.541 on seed 1, needs ≥ 0.75)"). Its numbers stay
    (what was measured); it is outside Holm's family (rank 0) and passes nothing."""
    v = replace(
        v,
        verdict=NO_VERDICT,
        label=f"{NO_VERDICT}: {failure}",
        health=failure,
        rank=0,
        holm_threshold=None,
        p_holm=None,
        holm_pass=False,
        holm_stopped_at=0,
        equiv_threshold=None,
        equivalent=False,
        outcome="",
    )
    return replace(v, reason=reason(v), why=why(v))


def counted_once(v: Verdict, counted_in: str, why_not: str) -> Verdict:
    """``v`` as a comparison that measures (mostly) the same effect as ``counted_in``, which is in Holm's family:
    one experiment is counted once, so this one is shown with its numbers but is not a separate test (rank 0, passes
    nothing). ``why_not`` says what the two share ("both measure what the student inherits from the teacher")."""
    v = replace(
        v,
        verdict=NOT_COUNTED,
        label=f"{NOT_COUNTED}: {why_not}; it is counted once, as {counted_in}",
        counted_in=counted_in,
        rank=0,
        holm_threshold=None,
        p_holm=None,
        holm_pass=False,
        holm_stopped_at=0,
        equiv_threshold=None,
        equivalent=False,
        outcome="",
    )
    return replace(v, reason=reason(v), why=why(v))


@dataclass(frozen=True)
class TeacherCheck:
    """One teacher's share of a comparison (:func:`across_teachers`): its seeds' differences A − B, signed as the
    verdict's (positive = the claimed direction)."""

    teacher: int
    seeds: tuple  # the student seeds that distilled this teacher
    diffs: tuple  # their differences A − B
    difference: float  # their mean
    sd: float | None  # None with one seed
    ci_low: float  # 95% interval of the mean, paired t over this teacher's seeds (NaN with one seed)
    ci_high: float
    disagrees: bool  # its mean lies on the other side of what the label says
    contradicts: bool  # its whole interval does


def teacher_groups(v: Verdict, teacher_of: dict) -> dict:
    """{teacher: [(seed, difference), ...]} of a paired verdict's seeds ({} when unpaired or a seed's teacher is
    unknown)."""
    if v.design != "paired" or not v.seeds:
        return {}
    groups: dict = {}
    for s, d in zip(v.seeds, v.diffs):
        if s not in teacher_of:
            return {}
        groups.setdefault(teacher_of[s], []).append((s, d))
    return dict(sorted(groups.items()))


def _asserts(v: Verdict):
    """What the label says about the difference, as tests of a teacher's numbers: (in words, holds(mean),
    clearly_not(low, high): the whole interval lies on the other side); None when the label says nothing a teacher
    could contradict (inconclusive, no verdict, not a separate test)."""

    def above(b):
        return f"above {_s(b) if b else '0'}", lambda x: x > b, lambda lo, hi: hi <= b

    def below(b):
        return f"below {_s(b) if b else '0'}", lambda x: x < b, lambda lo, hi: lo >= b

    def inside(m):
        return f"inside ±{_g(m)}", lambda x: -m < x < m, lambda lo, hi: lo >= m or hi <= -m

    if v.verdict in (REPRODUCES, REVERSES) and v.outcome in (DIFFERENT, WITHIN):
        if v.kind == EQUIVALENCE and v.verdict == REPRODUCES:
            return inside(v.margin)
        return above(v.boundary) if v.difference > v.boundary else below(v.boundary)
    if v.verdict == EQUIVALENT:
        return inside(v.eq_margin)
    return None


def across_teachers(v: Verdict, teacher_of: dict) -> Verdict:
    """``v`` checked within each teacher's seeds (point 8 of the module's doc). ``teacher_of``: {seed: teacher}.
    With fewer than 2 teachers among the verdict's seeds (or an unpaired test) ``v`` comes back unchanged. Else each
    teacher's mean and 95% interval are recorded (``by_teacher``) and said (``teacher_check``); a label that a teacher
    disagrees with (its mean on the other side) or clearly contradicts (its whole interval on the other side) becomes
    *inconclusive: depends on the teacher* (outcome NEITHER; Holm's numbers stay as they were)."""
    groups = teacher_groups(v, teacher_of)
    if len(groups) < 2:
        return v
    said = _asserts(v)
    checks = []
    for k, rows in groups.items():
        diffs = tuple(d for _, d in rows)
        mean = statistics.fmean(diffs)
        if len(diffs) >= MIN_SEEDS:
            sd = _sd(list(diffs))
            half = t_critical(len(diffs) - 1) * sd / math.sqrt(len(diffs))
            low, high = mean - half, mean + half
        else:
            sd, low, high = None, float("nan"), float("nan")
        disagrees = bool(said) and not said[1](mean)
        contradicts = bool(said) and low == low and said[2](low, high)
        checks.append(TeacherCheck(k, tuple(s for s, _ in rows), diffs, mean, sd, low, high, disagrees, contradicts))
    parts = []
    for c in checks:
        interval = f", 95% interval {_s(c.ci_low)} to {_s(c.ci_high)}" if c.ci_low == c.ci_low else ", one seed"
        parts.append(f"teacher {c.teacher} ({count_seeds(len(c.seeds))}) {_s(c.difference)}{interval}")
    numbers = "; ".join(parts)
    if said is None:
        text = (
            f"within each teacher: {numbers} (the label asserts no effect a teacher could contradict, so there is "
            f"nothing to replicate; the spread between {len(checks)} teachers is not estimated)"
        )
        return replace(v, by_teacher=tuple(checks), teacher_check=text)
    bad = [c for c in checks if c.disagrees or c.contradicts]
    if not bad:
        text = (
            f"within each teacher: {numbers} — every teacher's mean lies {said[0]}, as the label says: it "
            f"replicates with {len(checks)} independent teachers (their spread is not estimated from {len(checks)})"
        )
        return replace(v, by_teacher=tuple(checks), teacher_check=text)
    how = "; ".join(
        f"teacher {c.teacher}'s " + ("whole interval" if c.contradicts else "mean") + f" is not {said[0]}" for c in bad
    )
    text = (
        f"within each teacher: {numbers} — {how}, where the seed-level test says {v.label}: the effect does not "
        f"replicate with an independent teacher, so {INCONCLUSIVE}: {DEPENDS}"
    )
    label = f"{INCONCLUSIVE}: {DEPENDS}"
    return replace(
        v,
        verdict=TOO_SMALL,
        label=label,
        outcome=NEITHER,
        by_teacher=tuple(checks),
        teacher_check=text,
        why=f"{v.why}; but {text}",
        reason=f"{v.reason}; but {text}",
    )


def count_seeds(n: int) -> str:
    return f"{n} seed{'s' if n != 1 else ''}"


def judge(tests: dict, alpha: float = ALPHA) -> dict:
    """The family's verdicts: ``tests`` ({key: Verdict from :func:`compare`, or :func:`unhealthy`}) adjusted by
    Holm over the comparisons that have a test (enough seeds, both arms healthy). key -> Verdict with m, rank,
    threshold and the decision. A comparison marked :func:`counted_once` is left out of the family too."""
    steps = holm({k: v.p_test for k, v in tests.items() if v.tested}, alpha)
    eq_steps = holm({k: v.p_equiv_test for k, v in tests.items() if v.tested}, alpha)
    m = len(steps)
    stopped = min((s.rank for s in steps.values() if not s.rejected), default=0)
    out = {}
    for k, v in tests.items():
        s = steps.get(k)
        if s is None:
            v = replace(v, m=m)
            out[k] = replace(v, reason=reason(v), why=why(v))
            continue
        e = eq_steps.get(k)
        out[k] = _apply_holm(
            v,
            m,
            s.rank,
            s.threshold,
            s.adjusted,
            stopped,
            *((e.threshold, e.adjusted) if e else (float("nan"), float("nan"))),
        )
    return out


# ----------------------------------------------------------------------------- the reason, in numbers


def _g(x: float, digits: int = 3) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "—"
    if math.isinf(x):
        return "∞" if x > 0 else "−∞"
    return f"{x:.{digits}g}"


def _s(x: float, digits: int = 3) -> str:
    """Signed: +0.0123, −0.45."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "—"
    return ("+" if x >= 0 else "−") + _g(abs(x), digits)


def _pv(p: float) -> str:
    return "0" if p == 0 else f"{p:.2g}" if p >= 1e-4 else f"{p:.1e}"


def claim_text(kind: str, margin: float) -> str:
    """The hypothesis in words and numbers: "A − B > 0", "A − B > −0.05", "−0.02 < A − B < +0.02"."""
    if kind == SUPERIORITY:
        return "A − B > 0"
    if kind == NONINFERIORITY:
        return f"A − B > −{_g(margin)}"
    return f"−{_g(margin)} < A − B < +{_g(margin)}"


def _where(v: Verdict) -> str:
    return {
        SUPERIORITY: "0",
        NONINFERIORITY: f"−{_g(v.margin)} (the margin)",
        EQUIVALENCE: f"{_s(v.boundary)} (the nearer margin)",
    }[v.kind]


def holm_text(v: Verdict) -> str:
    """Holm's threshold for this comparison, in numbers."""
    if v.m > 1:
        return f"Holm: rank {v.rank} of {v.m}, needs p ≤ {_g(ALPHA)}/{v.m - v.rank + 1} = {_g(v.holm_threshold, 2)}"
    return f"needs p ≤ {_g(ALPHA)}"


def why(v: Verdict) -> str:
    """Holm's decision on this comparison and what it means for the claim, in numbers."""
    if v.counted_in:
        return (
            f"{v.label[len(NOT_COUNTED) + 2 :]}: the family holds each experiment's effect once, so this comparison "
            f"is shown, not tested, and is not among the comparisons Holm adjusts"
        )
    if v.health:
        return (
            f"{v.health}: an arm that did not count as trained is no test of the claim, so this comparison has "
            f"no verdict and is not among the comparisons Holm adjusts"
        )
    if not v.enough_seeds:
        return f"{v.n_a} and {v.n_b} seeds: at least {MIN_SEEDS} per arm are needed to know the spread, so {v.label}"
    p, thr = _pv(v.p_test), _g(v.holm_threshold, 2)
    if v.p_items == v.p_items:  # a probe: Holm ranks the larger of the seeds' p and the items × seeds bootstrap's
        p = (
            f"{p} (the larger of the seeds' t-test p {_pv(v.p)} and the bootstrap over the probe's {v.items:,} items "
            f"× seeds, p {_pv(v.p_items)}, 95% interval {_s(v.items_low)} to {_s(v.items_high)})"
        )
    if v.holm_pass:
        if v.verdict == REPRODUCES:
            because = {
                SUPERIORITY: "A is clearly better",
                NONINFERIORITY: f"A is clearly not worse than B by more than {_g(v.margin)}",
                EQUIVALENCE: f"A and B are clearly within ±{_g(v.margin)}",
            }[v.kind]
        else:
            because = {
                SUPERIORITY: "B is clearly better: the difference goes the wrong way",
                NONINFERIORITY: f"A is clearly worse than B by more than the margin {_g(v.margin)}",
                EQUIVALENCE: f"A and B clearly differ by more than the margin {_g(v.margin)}",
            }[v.kind]
        return f"p {p} ≤ {thr}, so {v.label}: {because}"
    if v.holm_stopped_at and v.holm_stopped_at < v.rank and v.p_test <= v.holm_threshold:
        first = f"p {p} ≤ {thr}, but Holm stopped at rank {v.holm_stopped_at} (a smaller p missed its threshold)"
    elif v.p_test <= ALPHA:
        first = f"p {p} > {thr}: the 95% interval clears {_where(v)} on its own, not with {v.m} comparisons"
    elif v.p <= ALPHA:
        first = (
            f"p {p} > {thr}: the seeds' 95% interval clears {_where(v)}, but over another draw of the probe's "
            f"items it does not"
        )
    else:
        first = f"p {p} > {thr}: the 95% interval contains {_where(v)}"
    return f"{first}; {equivalence_text(v)}, so {v.label}"


def equivalence_text(v: Verdict) -> str:
    """The equivalence test's part of the reason: is the difference clearly within ± the margin?"""
    if not v.eq_margin > 0 or v.kind == EQUIVALENCE:
        return "no equivalence margin is stated for this metric" if not v.eq_margin > 0 else "the claim's own test"
    thr = _g(v.equiv_threshold, 2) if v.equiv_threshold is not None else "—"
    inside = "inside" if v.ci_low > -v.eq_margin and v.ci_high < v.eq_margin else "not inside"
    pe = _pv(v.p_equiv_test) + (
        f" (the larger of the seeds' {_pv(v.p_equiv)} and the items × seeds bootstrap's {_pv(v.p_equiv_items)})"
        if v.p_equiv_items == v.p_equiv_items
        else ""
    )
    if v.equivalent:
        return (
            f"the 95% interval lies inside ±{_g(v.eq_margin)} (TOST p {pe} ≤ {thr}, Holm over the "
            f"equivalence tests): no difference larger than the margin"
        )
    return (
        f"the 95% interval is {inside} ±{_g(v.eq_margin)} (TOST p {pe} > {thr} after Holm over the "
        f"equivalence tests): a difference as large as the margin is not ruled out"
    )


def reason(v: Verdict) -> str:
    """One sentence: the test on these numbers and why it gives this verdict."""
    if v.health:
        return f"{NO_VERDICT}: {why(v)}" + (f" ({v.m} are)" if v.m else "")
    if v.counted_in:
        return f"{NOT_COUNTED}: {why(v)}" + (f" ({v.m} are)" if v.m else "")
    if not v.enough_seeds:
        return f"{v.n_a} and {v.n_b} seeds: at least {MIN_SEEDS} per arm are needed to know the spread" + (
            f" (it is not among the {v.m} comparisons Holm adjusts)" if v.m else ""
        )
    how = (
        f"paired over {v.n} seeds, A − B = {_s(v.difference)} (sd {_g(v.sd)}, se {_g(v.se)}, df {_g(v.df)})"
        if v.design == "paired"
        else f"Welch (unpaired), A − B = {_s(v.difference)} (se {_g(v.se)}, df {_g(v.df)})"
    )
    interval = f"95% interval {_s(v.ci_low)} to {_s(v.ci_high)}"
    tval = _s(v.t) if v.t < 0 else _g(v.t)
    test = (
        f"t = {'(A − B − (' + _s(v.boundary) + '))' if v.boundary else '(A − B)'} / se = {tval}, "
        f"p = 2·P(T ≥ |t|) = {_pv(v.p)}"
    )
    if v.p_items == v.p_items:
        test += (
            f"; over the probe's {v.items:,} test items × the seeds (a bootstrap, {v.items_how}): 95% interval "
            f"{_s(v.items_low)} to {_s(v.items_high)}, p = {_pv(v.p_items)}"
        )
    return f"{how}; {interval} against {_where(v)}; {test}; {holm_text(v)} — {why(v)}"
