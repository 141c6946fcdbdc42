"""Item-level uncertainty where a probe decides (issue 49 item 7): the bootstrap over the probe's test items × the
seeds, the verdicts that rest on it, and what the page and docs/results.md say of it."""

from __future__ import annotations

import math

import numpy as np
import pytest

from app.experiments import bootstrap, results, verdict
from app.experiments.claims import CLAIMS, ITEMS


def _arms(n_seeds: int = 10, base: float = 0.52, gap: float = -0.0094, jitter: float = 0.004):
    rng = np.random.default_rng(7)
    b = {s: base + float(rng.normal(0, jitter)) for s in range(n_seeds)}
    a = {s: b[s] + gap + float(rng.normal(0, jitter / 2)) for s in range(n_seeds)}
    return a, b


def test_from_stored_accuracies_the_items_widen_the_seeds_interval_by_their_binomial_spread():
    a, b = _arms()
    x = bootstrap.items_bootstrap(a, b, 1000)
    assert x.method == bootstrap.STORED and x.items == 1000 and x.seeds == 10 and x.draws == bootstrap.DRAWS
    assert x.difference == pytest.approx(np.mean([a[s] - b[s] for s in a]))
    pa, pb = np.mean(list(a.values())), np.mean(list(b.values()))
    assert x.item_sd == pytest.approx(math.sqrt(pa * (1 - pa) / 1000 + pb * (1 - pb) / 1000))
    assert x.low < x.seed_low and x.high > x.seed_high  # the items add their spread to the seeds'
    # 95% of a normal with sd ≈ the items' and the seeds' together: roughly ±1.96 · item_sd wide around the mean
    assert (x.high - x.low) / 2 == pytest.approx(1.96 * x.item_sd, rel=0.15)
    assert x.seed_high < 0 and x.low < 0 < x.high  # the seeds alone clear 0, another draw of items does not
    assert x.p > 0.05 and "Binomial(1,000, p)/1,000" in x.how and "widen" in x.how
    again = bootstrap.items_bootstrap(a, b, 1000)
    assert (again.low, again.high, again.p) == (x.low, x.high, x.p)  # seeded: the same numbers every time
    assert math.isnan(x.p_equiv)  # no margin, no equivalence test
    eq = bootstrap.items_bootstrap(a, b, 1000, eq_margin=0.02)
    assert 0 < eq.p_equiv <= 1 and eq.p_equiv > 0.05  # the items' spread (±0.04) is wider than ±0.02


def test_a_loss_like_metric_is_signed_and_the_p_is_against_the_boundary():
    a, b = _arms(gap=0.2, jitter=0.01)
    up = bootstrap.items_bootstrap(a, b, 1000, higher_is_better=True)
    down = bootstrap.items_bootstrap(a, b, 1000, higher_is_better=False)
    assert up.difference == pytest.approx(-down.difference) and up.p < 0.001
    assert up.p == pytest.approx(2 / (bootstrap.DRAWS + 1))  # no draw on the far side: the smallest p it gives
    near = bootstrap.items_bootstrap(a, b, 1000, boundary=up.difference)
    assert near.p > 0.5  # against a boundary at the difference itself


def test_per_item_outcomes_resample_the_same_items_for_every_seed_and_arm():
    """Where the results store each seed's 0/1 outcome per item, the bootstrap is exact: arms that get the same items
    right (positively correlated, as models of the same text do) give a narrower interval than the stored-accuracy
    bound, which draws the arms independently."""
    rng = np.random.default_rng(3)
    n, seeds = 400, range(6)
    hard = rng.random(n) < 0.45  # items both arms tend to miss
    a_items, b_items, a, b = {}, {}, {}, {}
    for s in seeds:
        common = np.where(hard, rng.random(n) < 0.2, rng.random(n) < 0.9)
        flip_a, flip_b = rng.random(n) < 0.05, rng.random(n) < 0.05
        oa, ob = common ^ flip_a, common ^ flip_b
        a_items[s], b_items[s] = "".join("1" if v else "0" for v in oa), "".join("1" if v else "0" for v in ob)
        a[s], b[s] = float(oa.mean()), float(ob.mean())
    exact = bootstrap.items_bootstrap(a, b, n, a_items=a_items, b_items=b_items, draws=600)
    bound = bootstrap.items_bootstrap(a, b, n)
    assert exact.method == bootstrap.PER_ITEM and exact.items == n and "exact" in exact.how
    assert exact.difference == pytest.approx(bound.difference)
    assert exact.high - exact.low < bound.high - bound.low
    missing = dict(a_items)
    missing.pop(0)
    assert bootstrap.items_bootstrap(a, b, n, a_items=missing, b_items=b_items).method == bootstrap.STORED


def test_too_few_seeds_give_no_bootstrap():
    assert bootstrap.items_bootstrap({0: 0.6}, {0: 0.5}, 1000) is None
    assert bootstrap.items_bootstrap({0: 0.6, 1: 0.61}, {0: 0.5, 1: 0.52}, 0) is None


def test_holm_ranks_the_larger_p_and_a_probe_the_items_do_not_settle_says_so():
    """Seeds that clear 0 on their own do not make a verdict when another draw of the probe's items would not."""
    a, b = _arms(gap=0.012, jitter=0.002)
    alone = verdict.compare(a, b)
    assert alone.p < 0.001 and alone.verdict == verdict.REPRODUCES  # the seeds alone
    x = bootstrap.items_bootstrap(a, b, 1000, boundary=alone.boundary)
    v = verdict.with_items(alone, x)
    assert v.p_items == x.p and v.p_test == max(alone.p, x.p) > 0.05
    assert v.verdict == verdict.TOO_SMALL and v.label == "not settled by the probe's 1,000 items"
    assert "over another draw of the probe's items it does not" in v.why
    assert "bootstrap" in v.reason and f"{x.items:,} test items" in v.reason
    other = verdict.compare({0: 1.0, 1: 1.2, 2: 1.1}, {0: 0.5, 1: 0.6, 2: 0.55})
    judged = verdict.judge({"probe": v, "other": other})
    assert judged["probe"].rank == 2 and judged["probe"].m == 2  # ranked by its larger p
    assert verdict.with_items(alone, None) == alone


def test_every_probe_comparison_is_judged_over_items_and_seeds():
    found = results.judged(results.family(results.BUNDLED))
    probes = [(name, c) for name, claim in CLAIMS.items() for c in claim.comparisons if c.metric in ITEMS]
    assert len(probes) >= 4
    for name, c in probes:
        v = found[name][c.key]
        assert math.isfinite(v["p_items"]) and v["items"] == results.bundled(name)["budget"]["probe_test"]
        if v["n"] >= 10:  # with 3 seeds the percentile bootstrap is narrower than t's interval (t₀.₉₇₅ = 4.3 on 2 df)
            assert v["items_low"] <= v["ci_low"] and v["items_high"] >= v["ci_high"]  # wider than the seeds alone
        if not v["health"]:
            assert v["p_holm"] >= min(1.0, max(v["p"], v["p_items"]))  # Holm's p starts from the larger one
    not_probe = found["masking"]["dynamic_vs_static1"]
    assert not_probe["items"] == 0 and math.isnan(not_probe["p_items"])
    span = found["masking"]["span_vs_token"]
    assert span["ci_high"] < 0 < span["items_high"] and span["items_low"] < 0  # the seeds' direction, not the items'


def test_the_span_verdict_box_says_what_the_items_and_the_other_metrics_show():
    from app.lessons import claims

    r = claims.run({}, claims.Inputs(claim="masking", compare=2))
    c = r.comparisons[r.chosen]
    assert c.key == "span_vs_token"
    text = claims.verdict_text(c, r.m)
    v = c.verdict
    assert f"Over the probe's {v['items']:,} test items × the seeds" in text
    assert f"{claims._n(v['items_low'])} to {claims._n(v['items_high'])}" in text
    doc = results.bundled("masking")
    rows = {row["metric"]: row for row in results.other_metrics(doc, "span", "dynamic", "probe_acc")}
    loss = np.mean(
        [
            -(x - y)
            for x, y in zip(results.finals(doc, "span", "valid_loss"), results.finals(doc, "dynamic", "valid_loss"))
        ]
    )
    assert rows["valid_loss"]["difference"] == pytest.approx(loss)
    assert f"held-out masked-LM loss {results.signed(loss)} nats" in text  # −0.194 today, computed
    assert f"cloze top-5 {results.signed(rows['cloze_top5']['difference'])}" in text  # −0.047 today
    assert "described, not tested" in text


def test_the_measured_docs_carry_the_items_table():
    table = results.measured_table(results.BUNDLED)
    assert "**Where a probe decides: items × seeds.**" in table
    row = [line for line in table.splitlines() if line.startswith("| masking | Masking random spans")][-1]
    v = results.judged(results.family(results.BUNDLED))["masking"]["span_vs_token"]
    assert f"[{results.signed(v['items_low'])}, {results.signed(v['items_high'])}], {v['p_items']:.2g}" in row
    assert "held-out masked-LM loss −0.194 nats" in row
    assert "no stored result records yet" in table
