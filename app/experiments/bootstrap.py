"""Item-level uncertainty where a probe decides: a bootstrap over the probe's test items × the seeds.

A probe comparison's per-seed numbers are accuracies on one fixed set of n test items (the acceptability probe's
1,000 sentences, the sentence probes' 1,200 pairs), the same for every arm and seed. The seed-level t-test
(app/experiments/verdict.py) sees only how the accuracies move from seed to seed; it ignores that another draw of n
items from the same kind of text would move every accuracy too. The bootstrap puts both back:

1. **seeds**: draw the n_s paired seeds with replacement; the mean of their differences d = A − B (positive = the
   claimed direction) is one draw of the seed-level mean;
2. **items**: draw the n test items with replacement, once per draw and the same for every seed and both arms
   (they were all scored on the same items), and add what that moves the mean difference by.

Two ways of doing step 2, by what the results store:

- **per-item outcomes** (each seed's 0/1 correctness on every test item, ``details["items"][metric]``, a string of
  "0"/"1" of length n): exact — the same resampled items for every seed and arm. No stored result has them yet:
  the probes record only their accuracy, and a rerun that stores them is what this needs.
- **the stored accuracies** (what every results file has today): each arm's accuracy on a resample of n items is,
  exactly, a Binomial(n, p)/n draw around its accuracy p (p: the arm's mean over seeds). Two things are not known
  without the per-item outcomes, and both are taken on the side that widens the interval: the shift is shared by
  every seed (as if every seed got the same items right — the variance of one seed, not of a mean over seeds), and
  the two arms' shifts are drawn independently (as if A's and B's hard items were unrelated; models trained on the
  same text tend to find the same items hard, which would narrow it). So this interval is an upper bound on the
  exact one's width, in all likelihood.

With few seeds (ELECTRA's 3) a percentile bootstrap of the seeds is narrower than Student's t interval (t₀.₉₇₅ is
4.30 on 2 df, not 1.96): Holm ranks the larger of the t-test's p and this one's, so the t-test still binds there.

Result: the bootstrap's 95% interval of the mean difference (percentiles 2.5 and 97.5) and its two-sided p against
the claim's boundary (twice the share of draws on the far side of it, (k + 1)/(B + 1)), and the same for the
equivalence test (TOST) against ± the margin; with no draw beyond the boundary the p is 2/(B + 1), the smallest it
resolves (1.0e-4 at 20,000 draws). Seeded: the same numbers on every run.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np

DRAWS = 20_000  # from the stored accuracies (cheap: one binomial per arm and draw)
ITEM_DRAWS = 4_000  # from per-item outcomes (a resample of n items per draw)
SEED = 0

STORED = "stored accuracies"
PER_ITEM = "per-item outcomes"


@dataclass(frozen=True)
class ItemsBootstrap:
    """The bootstrap over items × seeds of one paired comparison (d = A − B, positive = the claimed direction)."""

    method: str  # PER_ITEM or STORED
    items: int  # n, the probe's test items
    seeds: int  # the paired seeds resampled
    draws: int
    difference: float  # the mean paired difference (as measured)
    low: float  # the 95% interval of the mean difference, over items × seeds
    high: float
    seed_low: float  # the same bootstrap with the items held fixed (seeds only), for comparison
    seed_high: float
    item_sd: float  # the sd that the items alone add to the mean difference
    boundary: float
    p: float  # two-sided, against the boundary
    eq_margin: float  # ± what the equivalence test is against (0: none)
    p_equiv: float  # TOST over items × seeds: 2 · max(share ≤ −M, share ≥ +M), capped at 1 (nan without a margin)
    how: str  # the method and its limits, one sentence

    def as_dict(self) -> dict:
        return asdict(self)


def _p(draws: np.ndarray, boundary: float, observed: float) -> float:
    """Two-sided percentile p: twice the share of draws on the far side of ``boundary`` from ``observed``."""
    far = np.count_nonzero(draws <= boundary) if observed > boundary else np.count_nonzero(draws >= boundary)
    return min(1.0, 2.0 * (far + 1) / (len(draws) + 1))


def _p_equiv(draws: np.ndarray, margin: float) -> float:
    if not margin > 0:
        return float("nan")
    below, above = np.count_nonzero(draws <= -margin), np.count_nonzero(draws >= margin)
    return min(1.0, 2.0 * (max(below, above) + 1) / (len(draws) + 1))


def _outcomes(records: dict, seeds: list) -> np.ndarray | None:
    """(seeds, n) 0/1 per-item outcomes, or None when a seed lacks them or their lengths differ."""
    rows = []
    for s in seeds:
        bits = records.get(s)
        if not isinstance(bits, str) or not bits or set(bits) - {"0", "1"}:
            return None
        rows.append(np.frombuffer(bits.encode(), dtype=np.uint8) - ord("0"))
    if len({len(r) for r in rows}) != 1:
        return None
    return np.stack(rows).astype(np.float64)


def items_bootstrap(
    a: dict,
    b: dict,
    items: int,
    higher_is_better: bool = True,
    boundary: float = 0.0,
    eq_margin: float = 0.0,
    a_items: dict | None = None,
    b_items: dict | None = None,
    draws: int | None = None,
    seed: int = SEED,
) -> ItemsBootstrap | None:
    """The bootstrap over items × seeds of a paired comparison.

    a, b: {seed: accuracy} of each arm (paired by seed; at least 2 shared seeds, else None). items: n, the probe's
    test items. boundary: what the claim's test is against (verdict.boundary_of). a_items, b_items: {seed: "0101…"}
    per-item outcomes, used when every shared seed of both arms has them (then ``items`` is their length)."""
    seeds = sorted(s for s in a if s in b)
    if len(seeds) < 2 or not items or items < 1:
        return None
    sign = 1.0 if higher_is_better else -1.0
    d = np.array([sign * (a[s] - b[s]) for s in seeds])  # (n_s,)
    diff = float(d.mean())
    rng = np.random.default_rng(seed)
    oa = _outcomes(a_items or {}, seeds) if a_items else None
    ob = _outcomes(b_items or {}, seeds) if b_items else None
    if oa is not None and ob is not None and oa.shape == ob.shape:
        method, n = PER_ITEM, oa.shape[1]
        draws = draws or ITEM_DRAWS
        per_item = sign * (oa - ob)  # (n_s, n): each seed's difference on each item
        idx_s = rng.integers(0, len(seeds), size=(draws, len(seeds)))  # (B, n_s)
        total, seed_only = np.empty(draws), np.empty(draws)
        item_mean = per_item.mean(0)  # (n,): the mean over seeds of each item's difference
        for i in range(draws):
            counts = np.bincount(rng.integers(0, n, size=n), minlength=n) / n  # (n,) weights of a resample
            chosen = per_item[idx_s[i]]  # (n_s, n)
            total[i] = float((chosen @ counts).mean())
            seed_only[i] = float(chosen.mean())
        item_sd = float(
            np.std(
                [
                    item_mean @ (np.bincount(rng.integers(0, n, size=n), minlength=n) / n)
                    for _ in range(min(draws, 1000))
                ]
            )
        )
        how = (
            f"exact: the same {n:,} resampled items for every seed and both arms (per-item outcomes stored), "
            f"{len(seeds)} seeds resampled, {draws:,} draws"
        )
    else:
        method, n = STORED, int(items)
        draws = draws or DRAWS
        idx_s = rng.integers(0, len(seeds), size=(draws, len(seeds)))  # (B, n_s)
        seed_only = d[idx_s].mean(1)  # (B,)
        pa = min(max(float(np.mean([a[s] for s in seeds])), 0.0), 1.0)  # an accuracy: clipped to [0, 1]
        pb = min(max(float(np.mean([b[s] for s in seeds])), 0.0), 1.0)
        shift_a = rng.binomial(n, pa, size=draws) / n - pa  # (B,): A's accuracy on another n items, less its own
        shift_b = rng.binomial(n, pb, size=draws) / n - pb
        item = sign * (shift_a - shift_b)
        total = seed_only + item
        item_sd = math.sqrt(pa * (1 - pa) / n + pb * (1 - pb) / n)
        how = (
            f"from the stored accuracies (no per-item outcomes are stored): each arm's accuracy on {n:,} resampled "
            f"items is Binomial({n:,}, p)/{n:,}, one draw shared by every seed, the two arms drawn independently "
            f"— both assumptions widen the interval; {len(seeds)} seeds resampled, {draws:,} draws"
        )
    lo, hi = np.percentile(total, [2.5, 97.5])
    slo, shi = np.percentile(seed_only, [2.5, 97.5])
    return ItemsBootstrap(
        method,
        n,
        len(seeds),
        draws,
        diff,
        float(lo),
        float(hi),
        float(slo),
        float(shi),
        item_sd,
        boundary,
        _p(total, boundary, diff),
        float(eq_margin or 0.0),
        _p_equiv(total, float(eq_margin or 0.0)),
        how,
    )
