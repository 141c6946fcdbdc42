"""The plan fixed before the data (app/experiments/plans.py): every experiment has one that agrees with its claim,
changes are kept as new versions with the history written as it happened, the seeds of a plan with a power
calculation follow from it, and the runner follows the plan and refuses results from uncommitted code."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from app.experiments import EXPERIMENTS, claims, plans, results, runner, verdict


def test_every_experiment_has_a_plan_that_agrees_with_its_claim():
    assert set(plans.PLANS) == set(EXPERIMENTS)
    for name in EXPERIMENTS:
        assert plans.disagreements(plans.current(name), claims.CLAIMS[name]) == [], name


def test_disagreements_names_what_differs():
    plan = plans.current("masking")
    moved = plans.Plan(
        **{**plan.__dict__, "comparisons": (plans.Planned("dynamic_vs_static1", "valid_top1"),) + plan.comparisons[1:]}
    )
    found = plans.disagreements(moved, claims.CLAIMS["masking"])
    assert any("dynamic_vs_static1" in f and "metric" in f for f in found)


def test_versions_are_numbered_in_order_and_each_changes_something():
    for name, versions in plans.PLANS.items():
        assert [p.version for p in versions] == list(range(1, len(versions) + 1)), name
        assert [p.date for p in versions] == sorted(p.date for p in versions), name
        assert all(p.experiment == name for p in versions)
        for before, after in zip(versions, versions[1:]):
            same = (before.seeds, before.comparisons, before.budget) == (after.seeds, after.comparisons, after.budget)
            assert not same, f"{name} v{after.version} repeats v{before.version}: a version is a change"
            assert after.why, f"{name} v{after.version} says nothing of why it changed"


def test_the_history_is_written_as_it_happened():
    # seeds 3 -> 5 -> 10 where a verdict sat near its threshold; ELECTRA stayed at 3 until its rebuild
    for name in ("masking", "sentence", "distillation"):
        assert list(dict.fromkeys(p.seeds for p in plans.history(name))) == [3, 5, 10], name
    assert plans.history("electra")[2].seeds == 3
    # the first runs had no written plan; every later change to the old experiments came after their data
    for name in EXPERIMENTS:
        assert plans.history(name)[0].fixed == plans.UNWRITTEN
    for name in ("masking", "sentence", "sharing", "distillation"):
        changes = plans.history(name)[1:5] if name == "distillation" else plans.history(name)[1:]
        assert all(p.fixed == plans.AFTER for p in changes), name
    # ... until distillation's second teacher (issue 49), fixed before any 2-teacher result
    assert plans.history("distillation")[5].fixed == plans.BEFORE and plans.history("distillation")[5].teachers == 2
    # kinds and margins written the day after the 3-seed results
    v2 = plans.history("masking")[1]
    assert v2.date == "2026-11-24" and v2.comparison("dynamic_vs_static10").kind == verdict.NONINFERIORITY
    assert plans.history("masking")[0].comparison("dynamic_vs_static10").kind == verdict.SUPERIORITY
    # distillation's metric switched from held-out loss to top-1 after a reversal on loss
    rows = plans.claim_history("distillation", "soft_beats_hard")
    assert rows[0]["metric"] == "valid_loss" and rows[1]["metric"] == "valid_top1" and rows[1]["changed"] == ["metric"]
    assert "reversal" in rows[1]["why"]
    # the 10-seed masking run was recorded from a dirty tree
    ten = [look for look in plans.looks("masking") if look.seeds == 10]
    assert len(ten) == 1 and ten[0].dirty


def test_looks_match_the_recorded_results_files():
    """The last look of each old experiment is the run its bundled results file holds (same finish time, seeds,
    revision and dirty flag), so the history counts the results on the page."""
    for name in ("masking", "sentence", "sharing", "distillation"):
        doc = results.bundled(name, results.BUNDLED)
        if doc is None:
            pytest.skip(f"no bundled results for {name}")
        last = plans.looks(name)[-1]
        meta = doc["meta"]
        assert last.finished == meta["finished"], name
        assert meta["git"]["revision"].startswith(last.revision) and last.dirty == meta["git"]["dirty"], name
        assert last.seeds == max(len(a["seeds"]) for a in doc["arms"].values()), name
        assert plans.version_of(name, doc).looks[-1] == last


def test_claim_history_counts_looks_per_comparison():
    assert plans.claim_looks("masking", "span_vs_token") == 3  # 3, 5 and 10 seeds
    assert plans.claim_looks("distillation", "soft_beats_hard") == 6  # loss twice, top-1 three times, 2 teachers once
    assert plans.claim_looks("distillation", "init_from_teacher") == 4  # came with the top-1 plan; 2 teachers once


def test_power_is_a_paired_t_tests_power():
    p = plans.Power("probe_acc", effect=0.02, sd=0.02, sd_from="test", family=19)
    powers = [p.power(n) for n in range(2, 30)]
    assert powers == sorted(powers) and powers[0] < 0.2 and powers[-1] > 0.95
    assert p.power(10, 0.05 / 19) < p.power(10)
    n = p.seeds_needed()
    assert p.power(n) >= 0.8 > p.power(n - 1)
    from scipy import stats as scipy_stats  # requirements-test.txt: missing is a failure, not a skip

    for n, alpha in ((5, 0.05), (10, 0.05), (10, 0.05 / 19), (20, 0.05 / 19)):  # against the noncentral t
        df, shift = n - 1, math.sqrt(n)
        crit = scipy_stats.t.ppf(1 - alpha / 2, df)
        exact = scipy_stats.nct.sf(crit, df, shift) + scipy_stats.nct.cdf(-crit, df, shift)
        assert abs(p.power(n, alpha) - exact) < 0.02, (n, alpha, p.power(n, alpha), exact)


def test_a_plan_with_a_power_calculation_has_the_seeds_it_asks_for():
    for name in EXPERIMENTS:
        for plan in plans.history(name):
            if plan.power is not None:
                assert plan.seeds == plan.power.seeds_needed(), (name, plan.version)
                assert 1 <= plan.power.family and plan.power.effect > 0 and plan.power.sd > 0
                d = plan.as_dict()["power"]
                assert d["seeds"] == plan.seeds and "power" in d["text"]


def test_electra_plan_was_fixed_before_its_data():
    plan = plans.current("electra")
    assert plan.fixed == plans.BEFORE and plan.power is not None
    # its one run, recorded as a look once its results were in: the bundled file's, from a clean tree, after the plan
    doc = json.loads((Path(__file__).resolve().parents[1] / "assets" / "experiments" / "electra.json").read_text())
    (look,) = plan.looks
    assert look.finished == doc["meta"]["finished"] and not look.dirty and not doc["meta"]["git"]["dirty"]
    assert doc["meta"]["git"]["revision"].startswith(look.revision)
    assert look.seeds == plan.seeds == len(doc["arms"]["electra"]["seeds"])
    assert doc["plan"]["version"] == plan.version and plan.date <= look.finished[:10]


def test_the_record_a_results_file_keeps():
    rec = plans.record("electra")
    assert rec["version"] == plans.current("electra").version and rec["seeds"] == plans.current("electra").seeds
    assert [v["version"] for v in rec["versions"]] == [p.version for p in plans.history("electra")]
    json.dumps(rec)  # it goes into the results JSON


# ----------------------------------------------------------------------------- the runner follows the plan


CLEAN, DIRTY = {"revision": "abc", "dirty": False}, {"revision": "abc", "dirty": True}


def test_a_full_run_uses_the_plans_seeds_and_refuses_another_count():
    planned = plans.current("masking").seeds
    assert runner.check_run("masking", None, False, False, CLEAN) == planned
    assert runner.check_run("masking", planned, False, False, CLEAN) == planned
    with pytest.raises(runner.Refused, match="plan"):
        runner.check_run("masking", planned + 1, False, False, CLEAN)


def test_results_from_a_dirty_tree_are_refused():
    with pytest.raises(runner.Refused, match="uncommitted"):
        runner.check_run("masking", None, False, False, DIRTY)
    with pytest.raises(runner.Refused, match="uncommitted"):
        runner.check_run("masking", None, True, False, DIRTY)  # a quick run too, unless it says so
    assert runner.check_run("masking", None, True, True, DIRTY) == 1  # quick, flagged: a smoke or test run
    assert runner.check_run("masking", 2, True, True, DIRTY) == 2
    with pytest.raises(runner.Refused, match="quick"):
        runner.check_run("masking", None, False, True, CLEAN)  # the flag is not for a full run


def test_the_command_line_refuses_with_a_message(capsys, tmp_path, monkeypatch):
    from app.experiments.__main__ import main

    monkeypatch.setattr(runner, "git_revision", lambda: dict(DIRTY))
    assert main(["run", "masking", "--work", str(tmp_path), "--out", str(tmp_path)]) == 2
    assert "uncommitted" in capsys.readouterr().err
    assert main(["run", "masking", "--allow-dirty", "--work", str(tmp_path), "--out", str(tmp_path)]) == 2
    assert "--quick" in capsys.readouterr().err
    assert not list(tmp_path.glob("*.json"))


def test_plans_command_prints_every_version(capsys):
    from app.experiments.__main__ import main

    assert main(["plans"]) == 0
    out = capsys.readouterr().out
    assert sum(len(v) for v in plans.PLANS.values()) == sum(line.startswith("| ") for line in out.splitlines()) - 1


def test_plans_json_records_the_version_each_run_followed(tmp_path):
    for name in ("masking", "distillation"):
        src = results.path_of(name, results.BUNDLED)
        if not src.exists():
            pytest.skip("no bundled results")
        (tmp_path / src.name).write_text(src.read_text(encoding="utf-8"), encoding="utf-8")
    written = plans.record_in_results(tmp_path)
    assert {p.name for p in written} == {"masking.json", "distillation.json"}
    doc = results.read(tmp_path / "masking.json")
    assert doc["plan"]["version"] == 4 and doc["plan"]["seeds"] == 10  # the 10-seed run, before the three outcomes
    assert results.read(tmp_path / "distillation.json")["plan"]["seeds"] == 10
