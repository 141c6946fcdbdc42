"""The verdict rule (app/experiments/verdict.py) on synthetic numbers: Student's t in pure Python against
known values, paired vs Welch, the three kinds of claim (superiority, noninferiority, equivalence) and
Holm's step-down over a family; and how results.verdicts pairs the arms by their "seed" field."""

from __future__ import annotations

from pathlib import Path

import math
import random
import re

import pytest

from app.experiments import claims, results, verdict
from app.experiments.verdict import EQUIVALENCE, NONINFERIORITY, REPRODUCES, REVERSES, SUPERIORITY, TOO_SMALL


def seeds(values) -> dict:
    return dict(enumerate(values))


# ----------------------------------------------------------------------------- Student's t


@pytest.mark.parametrize(
    "t, df, cdf",
    [
        (1.0, 1, 0.75),  # Cauchy: 1/2 + atan(t)/π
        (-1.0, 1, 0.25),
        (2.0, 2, 0.5 + 2.0 / (2 * math.sqrt(6.0))),  # df 2: 1/2 + t / (2 √(2 + t²))
        (0.0, 7.5, 0.5),
        (2.776445, 4, 0.975),  # the tables' two-sided 95% points
        (4.302653, 2, 0.975),
        (2.228139, 10, 0.975),
        (2.015048, 5, 0.95),
        (3.182446, 3, 0.975),
    ],
)
def test_t_cdf_known_values(t, df, cdf):
    assert verdict.t_cdf(t, df) == pytest.approx(cdf, abs=2e-7)
    assert verdict.t_sf(t, df) == pytest.approx(1 - cdf, abs=2e-7)


def test_t_cdf_closed_form_at_three_df_and_its_symmetry():
    for t in (-5.0, -0.3, 0.7, 2.5, 12.0):  # df 3: 1/2 + (1/π)(t/(√3 (1 + t²/3)) + atan(t/√3))
        exact = 0.5 + (t / (math.sqrt(3) * (1 + t * t / 3)) + math.atan(t / math.sqrt(3))) / math.pi
        assert verdict.t_cdf(t, 3) == pytest.approx(exact, abs=1e-12)
        assert verdict.t_cdf(-t, 3.7) == pytest.approx(1 - verdict.t_cdf(t, 3.7), abs=1e-12)
    assert verdict.t_cdf(math.inf, 2) == 1.0 and verdict.t_cdf(-math.inf, 2) == 0.0
    assert verdict.t_cdf(1.96, 1e6) == pytest.approx(0.9750, abs=1e-4)  # → the normal


def test_t_quantiles_and_the_incomplete_beta():
    assert verdict.t_critical(2) == pytest.approx(4.302653, abs=1e-5)
    assert verdict.t_critical(4) == pytest.approx(2.776445, abs=1e-5)
    assert verdict.t_critical(8) == pytest.approx(2.306004, abs=1e-5)
    assert 1.96 < verdict.t_critical(200) < 1.98
    assert verdict.t_quantile(0.025, 6) == pytest.approx(-verdict.t_critical(6))
    for a, x in ((1.0, 0.3), (2.5, 0.8)):
        assert verdict.betainc(a, 1.0, x) == pytest.approx(x**a)  # I_x(a, 1) = x^a
    assert verdict.betainc(2.0, 3.0, 0.4) == pytest.approx(0.5248)  # Σ_{j≥2} C(4,j) 0.4^j 0.6^(4−j)


def test_against_scipy():
    from scipy import stats  # requirements-test.txt: missing is a failure, not a skip

    rng = random.Random(3)
    for _ in range(30):
        t, df = rng.uniform(-8, 8), rng.uniform(0.5, 40)
        assert verdict.t_cdf(t, df) == pytest.approx(stats.t.cdf(t, df), abs=1e-10)
    a, b = [5.35, 5.23, 5.28, 5.30], [5.45, 5.33, 5.41, 5.38]
    v = verdict.decide(seeds(a), seeds(b), higher_is_better=False)
    assert v.p == pytest.approx(stats.ttest_rel(a, b).pvalue)
    w = verdict.decide(a, b + [5.50], higher_is_better=False)  # lists: never paired
    ref = stats.ttest_ind(a, b + [5.50], equal_var=False)
    assert w.design == "Welch" and w.p == pytest.approx(ref.pvalue) and abs(w.t) == pytest.approx(abs(ref.statistic))


# ----------------------------------------------------------------------------- paired vs unpaired


def test_a_paired_design_finds_what_the_unpaired_test_misses():
    """Seeds move both arms together (the same initial weights and batch order): the seeds differ by ±0.3, the arms by
    0.05."""
    base = [5.0, 5.3, 4.7, 5.15, 4.85]
    b = [x + 0.05 + e for x, e in zip(base, (0.004, -0.003, 0.002, -0.004, 0.001))]  # loss: A lower by ~0.05
    corr = _correlation(base, b)
    assert corr > 0.99
    paired = verdict.decide(seeds(base), seeds(b), higher_is_better=False)
    unpaired = verdict.decide(base, b, higher_is_better=False)
    assert paired.design == "paired" and paired.df == 4 and paired.n == 5
    assert paired.verdict == REPRODUCES and paired.ci_low > 0
    assert unpaired.design == "Welch" and unpaired.verdict == TOO_SMALL and unpaired.ci_low < 0 < unpaired.ci_high
    assert paired.difference == pytest.approx(unpaired.difference)
    assert list(paired.diffs) == pytest.approx([y - x for x, y in zip(base, b)])
    assert paired.sd == pytest.approx(_sd(paired.diffs)) and paired.se == pytest.approx(paired.sd / math.sqrt(5))


def test_pairs_follow_the_seed_not_the_position_and_partial_overlap_pairs_the_shared_seeds():
    a = {0: 2.0, 1: 2.3, 2: 1.7}
    b = {2: 1.75, 0: 2.05, 1: 2.35}  # the same numbers in another order
    v = verdict.decide(a, b, higher_is_better=False)
    assert v.seeds == (0, 1, 2) and v.diffs == pytest.approx((0.05, 0.05, 0.05)) and v.verdict == REPRODUCES
    part = verdict.decide({0: 2.0, 1: 2.3, 2: 1.7, 3: 9.0}, {0: 2.05, 1: 2.35, 2: 1.75}, higher_is_better=False)
    assert part.seeds == (0, 1, 2) and part.n == 3 and part.n_a == 4
    one = verdict.decide({0: 2.0, 1: 2.3}, {1: 2.4, 2: 2.1})  # one shared seed: Welch on all four
    assert one.design == "Welch" and one.n == 4


def test_too_few_seeds_is_too_small_and_outside_the_family():
    v = verdict.decide([0.9], [0.1, 0.2, 0.15])
    assert v.verdict == TOO_SMALL and not v.enough_seeds and "seeds" in v.reason
    fam = verdict.judge({"few": v, "clear": verdict.decide(seeds([1.0, 1.1, 0.9]), seeds([0.5, 0.6, 0.4]))})
    assert fam["clear"].m == 1 and fam["few"].m == 1 and fam["few"].rank == 0 and fam["clear"].verdict == REPRODUCES
    assert verdict.decide(seeds([0.9, 0.9]), seeds([0.1, 0.1])).verdict == REPRODUCES  # no spread: any difference
    assert verdict.decide(seeds([0.5, 0.5]), seeds([0.5, 0.5])).verdict == TOO_SMALL
    with pytest.raises(ValueError):
        verdict.decide([], [0.1])
    with pytest.raises(ValueError):
        verdict.decide([1.0, 2.0], [1.0, 2.0], kind=NONINFERIORITY)  # needs a margin


# ----------------------------------------------------------------------------- superiority


def test_superiority_two_sided_both_ways_and_the_direction_of_a_loss():
    up = verdict.decide(seeds([0.80, 0.82, 0.79]), seeds([0.70, 0.71, 0.70]))
    assert up.verdict == REPRODUCES and up.boundary == 0 and up.p == pytest.approx(2 * up.p_one_sided)
    down = verdict.decide(seeds([0.70, 0.71, 0.70]), seeds([0.80, 0.82, 0.79]), scale="hidden 128, 3 seeds")
    assert down.verdict == REVERSES and down.label == "reverses at hidden 128, 3 seeds"
    assert "hidden 128" in down.reason and "wrong way" in down.reason
    loss = verdict.decide(seeds([2.0, 2.1, 1.9]), seeds([2.5, 2.62, 2.41]), higher_is_better=False)
    assert loss.verdict == REPRODUCES and loss.difference == pytest.approx(0.51)


def test_the_interval_and_p_tell_the_same_story():
    rng = random.Random(0)
    for _ in range(200):
        kind = rng.choice(verdict.KINDS)
        margin = 0.0 if kind == SUPERIORITY else 0.05
        a = [rng.gauss(0, 0.1) for _ in range(4)]
        b = [x + rng.gauss(rng.uniform(-0.15, 0.15), 0.03) for x in a]
        v = verdict.decide(seeds(a), seeds(b), kind=kind, margin=margin)
        clears = not (v.ci_low <= v.boundary <= v.ci_high)
        assert clears == (v.p < 0.05), (kind, v)
        assert (v.verdict != TOO_SMALL) == (v.p <= 0.05)  # a family of one: Holm's threshold is α
        assert v.ci_low == pytest.approx(v.difference - v.t95 * v.se)


# ----------------------------------------------------------------------------- noninferiority


def test_a_clear_cost_under_an_almost_nothing_claim_reverses():
    """'Sharing attention costs almost nothing' (A = shared, B = not shared, loss, margin 0.05 nats): shared
    is 0.15 nats worse on every seed. Coded as "not shared beats shared" it would read 'reproduces'."""
    none = [5.40, 5.43, 5.41]
    shared = [5.55, 5.59, 5.555]
    v = verdict.decide(seeds(shared), seeds(none), higher_is_better=False, kind=NONINFERIORITY, margin=0.05)
    assert v.verdict == REVERSES and v.boundary == -0.05 and v.ci_high < -0.05
    assert "worse than B by more than the margin" in v.reason
    backwards = verdict.decide(seeds(none), seeds(shared), higher_is_better=False)  # the old coding
    assert backwards.verdict == REPRODUCES


def test_a_null_with_a_tight_interval_supports_noninferiority():
    none = [5.40, 5.43, 5.41, 5.38]
    shared = [x + d for x, d in zip(none, (0.004, -0.003, 0.002, -0.002))]
    v = verdict.decide(seeds(shared), seeds(none), higher_is_better=False, kind=NONINFERIORITY, margin=0.05)
    assert v.verdict == REPRODUCES and v.ci_low > -0.05 and v.ci_low < 0 < v.ci_high
    assert verdict.decide(seeds(shared), seeds(none), higher_is_better=False).verdict == TOO_SMALL  # not superior
    wide = [x + d for x, d in zip(none, (0.09, -0.08, 0.06, -0.07))]
    assert (
        verdict.decide(seeds(wide), seeds(none), higher_is_better=False, kind=NONINFERIORITY, margin=0.05).verdict
        == TOO_SMALL
    )
    small_cost = [x + 0.02 + d for x, d in zip(none, (0.002, -0.002, 0.001, -0.001))]  # a clear cost inside the margin
    assert (
        verdict.decide(seeds(small_cost), seeds(none), higher_is_better=False, kind=NONINFERIORITY, margin=0.05).verdict
        == REPRODUCES
    )


# ----------------------------------------------------------------------------- equivalence


def test_equivalence_inside_outside_and_between():
    mlm = [0.527, 0.522, 0.534, 0.529]
    inside = verdict.decide(
        seeds([x + d for x, d in zip(mlm, (0.002, -0.001, 0.001, 0.0))]), seeds(mlm), kind=EQUIVALENCE, margin=0.02
    )
    assert inside.verdict == REPRODUCES and -0.02 < inside.ci_low and inside.ci_high < 0.02
    lo_p = verdict.t_sf((inside.difference + 0.02) / inside.se, inside.df)  # TOST: the larger one-sided p
    hi_p = verdict.t_cdf((inside.difference - 0.02) / inside.se, inside.df)
    assert inside.p_one_sided == pytest.approx(max(lo_p, hi_p)) and inside.p == pytest.approx(2 * max(lo_p, hi_p))
    outside = verdict.decide(
        seeds([x + 0.06 + d for x, d in zip(mlm, (0.002, -0.001, 0.001, 0.0))]),
        seeds(mlm),
        kind=EQUIVALENCE,
        margin=0.02,
    )
    assert outside.verdict == REVERSES and outside.ci_low > 0.02 and outside.boundary == 0.02
    below = verdict.decide(
        seeds([x - 0.06 + d for x, d in zip(mlm, (0.002, -0.001, 0.001, 0.0))]),
        seeds(mlm),
        kind=EQUIVALENCE,
        margin=0.02,
    )
    assert below.verdict == REVERSES and below.boundary == -0.02
    straddle = verdict.decide(
        seeds([x + 0.015 + d for x, d in zip(mlm, (0.01, -0.01, 0.008, -0.006))]),
        seeds(mlm),
        kind=EQUIVALENCE,
        margin=0.02,
    )
    assert straddle.verdict == TOO_SMALL and straddle.ci_low < 0.02 < straddle.ci_high
    beats = verdict.decide(seeds([x + 0.012 for x in mlm]), seeds(mlm), kind=EQUIVALENCE, margin=0.02)
    assert beats.verdict == REPRODUCES  # "A beats B" by less than the margin is still "about as good as"


# ----------------------------------------------------------------------------- Holm


def test_holm_on_known_p_values():
    steps = verdict.holm({"a": 0.01, "b": 0.04, "c": 0.03, "d": 0.005})
    assert [steps[k].rank for k in "dacb"] == [1, 2, 3, 4]
    assert [steps[k].threshold for k in "dacb"] == pytest.approx([0.05 / 4, 0.05 / 3, 0.05 / 2, 0.05])
    assert [steps[k].adjusted for k in "dacb"] == pytest.approx([0.02, 0.03, 0.06, 0.06])
    assert [steps[k].rejected for k in "dacb"] == [True, True, False, False]  # b: 0.04 ≤ 0.05 but Holm stopped at c
    assert verdict.holm({"x": 0.03, "y": float("nan")}) == {"x": verdict.HolmStep("x", 0.03, 1, 0.05, 0.03, True)}


def test_judge_adjusts_a_family_and_says_so():
    def with_p(p: float) -> verdict.Verdict:  # a paired test with 3 seeds and this two-sided p
        t = verdict.t_quantile(1 - p / 2, 2)
        return verdict.decide(
            seeds([1.0 + t * 0.01 / math.sqrt(3) + e for e in (0.01, -0.01, 0.0)]), seeds([1.0, 1.0, 1.0])
        )

    tests = {k: with_p(p) for k, p in {"a": 0.01, "b": 0.04, "c": 0.03, "d": 0.005}.items()}
    assert [tests[k].p for k in "abcd"] == pytest.approx([0.01, 0.04, 0.03, 0.005])
    assert all(v.verdict == REPRODUCES for v in tests.values())  # each alone clears 0.05
    fam = verdict.judge(tests)
    assert {k: fam[k].verdict for k in "abcd"} == {"a": REPRODUCES, "b": TOO_SMALL, "c": TOO_SMALL, "d": REPRODUCES}
    assert fam["c"].m == 4 and fam["c"].rank == 3 and fam["c"].holm_threshold == pytest.approx(0.025)
    assert fam["b"].holm_stopped_at == 3 and "Holm stopped at rank 3" in fam["b"].reason
    assert "rank 3 of 4" in fam["c"].reason and "0.05/2 = 0.025" in fam["c"].reason
    # clear on its own, not among 4: the difference is not "too small", the 3 seeds do not settle it
    assert fam["b"].label == fam["c"].label == "not settled by 3 seeds" and fam["a"].label == REPRODUCES


def test_a_difference_inside_the_seed_spread_is_labelled_too_small():
    fam = verdict.judge(
        {
            "x": verdict.decide(seeds([1.0, 1.2, 0.9]), seeds([1.1, 0.95, 1.0])),
            "y": verdict.decide(seeds([2.0, 2.1, 2.2]), seeds([1.0, 1.1, 1.2])),
        }
    )
    assert fam["x"].verdict == TOO_SMALL and fam["x"].p > 0.05 and fam["x"].label == TOO_SMALL


# ----------------------------------------------------------------------------- the claims and the results documents


def test_the_about_as_good_as_claims_are_coded_with_a_margin():
    comps = {c.key: (name, c) for name, claim in claims.CLAIMS.items() for c in claim.comparisons}
    assert len(comps) == 19
    expected = {
        "dynamic_vs_static10": (NONINFERIORITY, "dynamic", "static10"),
        "attention_sharing_is_cheap": (NONINFERIORITY, "attention", "none"),
        "electra15_vs_mlm": (EQUIVALENCE, "electra15", "mlm"),
        "factorized_all_shared": (NONINFERIORITY, "all_small_e", "all"),
        "nsp_does_not_help_mlm": (NONINFERIORITY, "none", "nsp"),
    }
    for key, (name, c) in comps.items():
        kind, better, worse = expected.get(key, (SUPERIORITY, c.better, c.worse))
        assert (c.kind, c.better, c.worse) == (kind, better, worse), key
        if kind == SUPERIORITY:
            assert c.margin == 0
        else:  # one margin per metric, in every claim, with its reason
            assert (c.margin, c.margin_why) == claims.MARGINS[c.metric] and c.margin > 0 and c.margin_why, key


def _doc(finals_by_arm: dict, kind=SUPERIORITY, margin=0.0, higher=False, order=None) -> dict:
    comp = claims.Comparison("a_vs_b", "A vs B", "a", "b", "valid_loss", "made up", kind=kind, margin=margin)
    claim = claims.Claim("t", "c", ("p",), {"valid_loss": claims.Metric("loss", higher, "nats")}, (comp,))
    arms = {}
    for arm, finals in finals_by_arm.items():
        runs = [{"seed": s, "final": {"valid_loss": f}, "curves": {}} for s, f in enumerate(finals)]
        if order and arm in order:
            runs = [runs[i] for i in order[arm]]
        arms[arm] = {"label": arm, "change": {}, "params": 1, "seeds": runs}
    return {
        "schema": 1,
        "experiment": "x",
        "claim": claim.as_dict(),
        "meta": {},
        "budget": {"shape": {"hidden_size": 128, "num_hidden_layers": 2}, "steps": 1000},
        "arms": arms,
    }


def test_results_pair_by_the_seed_field_and_put_the_scale_on_a_reversal():
    base = [5.0, 5.3, 4.7]
    doc = _doc({"a": [x + 0.1 for x in base], "b": base}, order={"a": [2, 0, 1]})  # a's seeds stored out of order
    v = results.verdicts(doc, others={})["a_vs_b"]
    assert v["design"] == "paired" and v["seeds"] == (0, 1, 2) and v["diffs"] == pytest.approx((-0.1,) * 3)
    assert v["verdict"] == REVERSES and v["label"] == "reverses at hidden 128, 2 layers, 1000 steps, 3 seeds"
    ni = results.verdicts(_doc({"a": [x + 0.01 for x in base], "b": base}, NONINFERIORITY, 0.05), others={})
    assert ni["a_vs_b"]["verdict"] == REPRODUCES and ni["a_vs_b"]["kind"] == NONINFERIORITY


def test_results_adjust_over_every_experiment_of_the_folder():
    docs = results.family(results.BUNDLED)
    found = results.judged(docs)
    rows = [v for d in found.values() for v in d.values()]
    # a comparison with an untrained arm is not tested, nor one whose effect another comparison counts
    m = sum(v["enough_seeds"] and not v["health"] and not v["counted_in"] for v in rows)
    assert all(v["m"] == m for v in rows)
    assert sorted(v["rank"] for v in rows if v["enough_seeds"] and not v["health"] and not v["counted_in"]) == list(
        range(1, m + 1)
    )
    assert all(v["rank"] == 0 for v in rows if v["health"] or v["counted_in"])
    for name, doc in docs.items():
        assert results.verdicts(doc) == found[name] or results.folder() != results.BUNDLED


def _correlation(x, y) -> float:
    mx, my = sum(x) / len(x), sum(y) / len(y)
    sxy = sum((a - mx) * (b - my) for a, b in zip(x, y))
    return sxy / math.sqrt(sum((a - mx) ** 2 for a in x) * sum((b - my) ** 2 for b in y))


def _sd(xs) -> float:
    m = sum(xs) / len(xs)
    return math.sqrt(sum((x - m) ** 2 for x in xs) / (len(xs) - 1))


def test_the_measured_table_in_docs_is_the_bundled_results():
    readme = (results.BUNDLED.parents[1] / "docs" / "results.md").read_text(encoding="utf-8")
    table = results.measured_table(results.BUNDLED)
    assert f"{results.MEASURED_START}\n{table}\n{results.MEASURED_END}" in readme
    from app.experiments.claims import CLAIMS

    from app.experiments.claims import ITEMS

    main, items = table.split("**Where a probe decides")
    assert main.count("\n| ") == 1 + sum(len(c.comparisons) for c in CLAIMS.values())  # the header, a row each
    probes = sum(c.metric in ITEMS for claim in CLAIMS.values() for c in claim.comparisons)
    assert items.count("\n| ") == 1 + probes  # and a row per probe comparison in the items table
    assert "not run yet" not in table  # every comparison has its results


# ----------------------------------------------------------------------------- health before verdict


def _bundled(name: str) -> dict:
    import copy

    return copy.deepcopy(results.read(results.BUNDLED / f"{name}.json"))


def _family_with(doc: dict) -> dict:
    docs = {k: d for k, d in results.family(results.BUNDLED).items() if k != doc["experiment"]}
    docs[doc["experiment"]] = doc
    return results.judged(docs)


def test_the_first_electra_runs_discriminators_did_not_learn_so_its_three_comparisons_get_no_verdict():
    """The first ELECTRA run (plan version 1, 3 seeds; kept in tests/data since the 10-seed run replaced it)."""
    first = results.read(Path(__file__).resolve().parent / "data" / "electra-3seeds-plan1.json")
    found = _family_with(first)
    for key in ("rtd_beats_mlm", "all_tokens_matter", "electra15_vs_mlm"):
        v = found["electra"][key]
        assert v["verdict"] == verdict.NO_VERDICT and v["rank"] == 0 and not v["holm_pass"], key
        assert v["label"].startswith("no verdict: ") and "did not learn its task (discriminator ROC-AUC" in v["label"]
        assert "needs ≥ 0.750" in v["label"]
    assert (
        "electra did not learn its task (discriminator ROC-AUC 0.561, 0.541, 0.544 on seeds 0, 1, 2 of 3"
        in found["electra"]["rtd_beats_mlm"]["label"]
    )
    rows = [v for d in found.values() for v in d.values()]
    total = sum(len(c.comparisons) for c in claims.CLAIMS.values())
    assert len(rows) == total == 19
    untested = sum(bool(r["health"] or r["counted_in"]) for r in rows)
    assert all(v["m"] == total - untested for v in rows)  # counted, never written down


def test_todays_electra_discriminators_learn_but_the_probe_stays_at_chance_for_bert_so_still_no_verdict():
    """The rebuilt 10-seed run (plan version 4): every discriminator clears its ROC-AUC floor, so no comparison is
    refused for that; the masked-LM baseline's acceptability probe stays below its floor on every seed, so the
    comparisons with it still get no verdict, now for the probe."""
    doc = _bundled("electra")
    for arm in ("electra", "electra15"):
        aucs = [r["final"]["rtd_auc"] for r in doc["arms"][arm]["seeds"]]
        assert len(aucs) == 10 and min(aucs) >= 0.75, arm
    found = _family_with(doc)["electra"]
    for key in ("rtd_beats_mlm", "electra15_vs_mlm"):
        v = found[key]
        assert v["verdict"] == verdict.NO_VERDICT and "did not learn its task" not in v["label"], key
        assert "the probe is not clearly above chance in mlm" in v["label"] and "on 10 of 10 seeds" in v["label"]
    assert all(v["n"] == 10 for v in found.values())


def _flat_training(doc: dict, arm: str, seed: int) -> None:
    r = next(r for r in doc["arms"][arm]["seeds"] if r["seed"] == seed)
    r["curves"]["train_loss"] = [8.2] * len(r["curves"]["train_loss"])  # it learned nothing


def _healthy_electra(doc: dict) -> None:
    for arm in doc["arms"].values():
        for r in arm["seeds"]:
            r["final"]["probe_acc"] += 0.1
            if r["final"].get("rtd_auc") is not None:
                r["final"]["rtd_auc"] = 0.9


def _break_masking(doc):
    _flat_training(doc, "dynamic", 3)
    return "dynamic", "dynamic did not learn its task (training-loss fall (nats) 0.00 on seed 3 of 10, needs ≥ 1.00)"


def _break_sentence(doc):
    next(r for r in doc["arms"]["nsp"]["seeds"] if r["seed"] == 2)["final"]["nsp_head"] = 0.52
    return "nsp", "nsp did not learn its task (NSP head accuracy 0.520 on seed 2 of 10, needs ≥ 0.528)"


def _break_electra(doc):
    _healthy_electra(doc)
    doc["arms"]["electra15"]["seeds"][1]["final"]["rtd_auc"] = 0.6
    n = len(doc["arms"]["electra15"]["seeds"])
    return "electra15", f"electra15 did not learn its task (discriminator ROC-AUC 0.600 on seed 1 of {n}, needs ≥ 0.75"


def _break_sharing(doc):
    _flat_training(doc, "all_small_e", 0)
    return "all_small_e", "all_small_e did not learn its task (training-loss fall"


def _break_distillation(doc):
    r = next(r for r in doc["arms"]["hard"]["seeds"] if r["seed"] == 4)
    r["details"]["teacher_final"]["top1"] = r["final"]["valid_top1"]  # a teacher no better than this student
    return (
        "hard",
        "hard's teacher is not stronger than its student (teacher's top-1 lead 0.00 on seed 4 of 10, needs ≥ 0.0100)",
    )


@pytest.mark.parametrize(
    "name, breaks",
    [
        ("masking", _break_masking),
        ("sentence", _break_sentence),
        ("electra", _break_electra),
        ("sharing", _break_sharing),
        ("distillation", _break_distillation),
    ],
)
def test_an_arm_that_fails_its_health_check_on_one_seed_gets_no_verdict_and_leaves_the_family(name, breaks):
    doc = _bundled(name)
    if name == "electra":
        _healthy_electra(doc)
    before = _family_with(doc)
    assert all(
        v["verdict"] != verdict.NO_VERDICT
        for v in before[name].values()
        if name != "masking" or v["metric"] != "probe_acc"
    )  # healthy as stored (ELECTRA: made healthy)
    arm, failure = breaks(doc)
    after = _family_with(doc)
    hit = [k for k, v in after[name].items() if arm in (v["better"], v["worse"])]
    assert hit
    for key, v in after[name].items():
        if key in hit:
            assert v["verdict"] == verdict.NO_VERDICT and failure in v["label"] and v["rank"] == 0, key
            assert failure in v["reason"] and "not among the comparisons Holm adjusts" in v["why"]
        else:
            assert v["verdict"] == before[name][key]["verdict"], key
    m_before = max(v["m"] for d in before.values() for v in d.values())
    newly = sum(1 for k in hit if before[name][k]["verdict"] != verdict.NO_VERDICT)
    assert max(v["m"] for d in after.values() for v in d.values()) == m_before - newly


def test_a_probe_check_applies_only_to_comparisons_on_that_probe():
    checks = results.health(_bundled("masking"))
    probe = next(row for row in checks["dynamic"] if row["measure"] == "probe_acc")
    assert not probe["passed"] and probe["floor"] == pytest.approx(0.5 + 1.96 * math.sqrt(0.25 / 1000))
    found = _family_with(_bundled("masking"))["masking"]
    assert found["span_vs_token"]["verdict"] == found["word_vs_token"]["verdict"] == verdict.NO_VERDICT
    assert found["dynamic_vs_static1"]["verdict"] == REPRODUCES  # the same arm, on the held-out loss


def test_verdict_docstrings_do_not_write_down_a_wrong_family_size():
    from app.lessons import claims as lesson

    total = sum(len(c.comparisons) for c in claims.CLAIMS.values())
    for doc in (verdict.__doc__, lesson.__doc__):
        for n in re.findall(r"(\d+) when every experiment has results|m = (\d+)", doc):
            assert int(next(x for x in n if x)) == total
    assert "(18 when" not in verdict.__doc__


# ----------------------------------------------------------------------------- three outcomes against the margin


def test_three_outcomes_different_equivalent_and_inconclusive_against_the_margin():
    base = [5.0, 5.3, 4.7, 5.15, 4.85]
    near = verdict.decide(
        seeds(base),
        seeds([x + e for x, e in zip(base, (0.002, -0.003, 0.001, -0.002, 0.002))]),
        higher_is_better=False,
        equivalence_margin=0.05,
    )
    assert near.outcome == verdict.WITHIN and near.verdict == verdict.EQUIVALENT and near.equivalent
    assert near.label == "equivalent within ±0.05" and near.ci_low > -0.05 and near.ci_high < 0.05
    assert (
        near.in_margins == pytest.approx(near.difference / 0.05) and "no difference larger than the margin" in near.why
    )
    wide = verdict.decide(seeds([1.0, 1.2, 0.9]), seeds([1.1, 0.95, 1.0]), equivalence_margin=0.05)
    assert wide.outcome == verdict.NEITHER and wide.verdict == TOO_SMALL == verdict.INCONCLUSIVE
    assert "not ruled out" in wide.why and wide.label == "inconclusive at this scale"
    clear = verdict.decide(seeds([2.0, 2.1, 2.2]), seeds([1.0, 1.1, 1.2]), equivalence_margin=0.05)
    assert clear.outcome == verdict.DIFFERENT and clear.verdict == REPRODUCES and clear.in_margins == pytest.approx(20)
    no_margin = verdict.decide(seeds([1.0, 1.2, 0.9]), seeds([1.001, 1.199, 0.9]))  # no margin: no equivalence test
    assert no_margin.verdict == TOO_SMALL and not no_margin.equivalent and math.isnan(no_margin.p_equiv)


def test_tost_clears_exactly_when_the_95_percent_interval_lies_inside_the_margin():
    rng = random.Random(5)
    for _ in range(200):
        a = [rng.gauss(0, 1) for _ in range(4)]
        b = [x + rng.gauss(0.02, 0.03) for x in a]
        v = verdict.decide(seeds(a), seeds(b), equivalence_margin=0.06)
        inside = -0.06 < v.ci_low and v.ci_high < 0.06
        assert (v.p_equiv < 0.05) == inside


def test_equivalence_is_adjusted_by_holm_at_the_same_level():
    def tight(offset: float) -> verdict.Verdict:  # paired differences offset ± 0.003: TOST p alone ~0.003-0.02
        a = [1.0, 1.1, 0.9]
        return verdict.decide(
            seeds(a), seeds([x - offset + e for x, e in zip(a, (0.003, -0.003, 0.0))]), equivalence_margin=0.02
        )

    alone = tight(0.012)
    assert alone.equivalent and alone.p_equiv < 0.05
    fam = verdict.judge({k: tight(0.012) for k in "abcdefghij"})
    v = fam["a"]
    assert v.m == 10 and v.equiv_threshold <= 0.05 / 1 and v.p_equiv > 0.05 / 10
    assert not all(x.equivalent for x in fam.values())  # ten of them: Holm's first threshold is 0.005


def test_todays_verdicts_the_readme_and_the_stored_json_say_the_same():
    found = results.judged(results.family(results.BUNDLED))
    t = found["distillation"]["temperature_above_one"]
    assert t["verdict"] == verdict.EQUIVALENT and t["label"] == "equivalent within ±0.01" and t["p_equiv"] < 1e-6
    assert t["in_margins"] == pytest.approx(t["difference"] / 0.01)
    table = results.measured_table(results.BUNDLED)
    assert "in margins" in table and "TOST p" in table and "| equivalent within ±0.01 |" in table
    for name, d in found.items():
        stored = {v["key"]: v for v in results.read(results.BUNDLED / f"{name}.json")["verdicts"]}
        assert {k: stored[k]["label"] for k in d} == {k: v["label"] for k, v in d.items()}, name
        assert all(stored[k]["outcome"] == v["outcome"] for k, v in d.items())


def test_a_comparison_counted_once_leaves_holms_family_and_says_where_it_is_counted():
    """Issue 49 item 6: an effect is counted once. A comparison marked counted_once keeps its numbers but is not a
    test: rank 0, no threshold, passes nothing, and m counts only the others."""
    a = {0: 0.50, 1: 0.51, 2: 0.52}
    b = {0: 0.10, 1: 0.12, 2: 0.11}
    tests = {
        "init": verdict.compare(a, b),
        "whole": verdict.compare(a, {0: 0.12, 1: 0.13, 2: 0.12}),
        "other": verdict.compare({0: 1.0, 1: 1.1, 2: 1.2}, {0: 0.9, 1: 1.0, 2: 1.05}),
    }
    tests["whole"] = verdict.counted_once(tests["whole"], "init", "it measures the same inheritance")
    out = verdict.judge(tests)
    assert out["whole"].verdict == verdict.NOT_COUNTED and out["whole"].rank == 0 and not out["whole"].holm_pass
    assert out["whole"].label == "not a separate test: it measures the same inheritance; it is counted once, as init"
    assert out["whole"].difference > 0.3 and out["whole"].ci_low > 0  # measured, not hidden
    assert out["init"].m == out["other"].m == 2 and out["whole"].m == 2
    assert "not among the comparisons Holm adjusts" in out["whole"].reason
