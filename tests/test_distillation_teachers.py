"""More than one teacher seed (issue 49): distillation's plan version 6 trains 2 teachers, teacher k with seed k, and
student seed s distils teacher s mod 2. Teacher 0 keeps the folder (and digest) every earlier run had; each seed
records its teacher and each teacher its own scores; a verdict's label must hold within each teacher's seeds
(verdict.across_teachers); the health check and the compute are per teacher. Quick budget only."""

from __future__ import annotations

import copy
import json
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch

from app.experiments import distillation, plans, results, runner, verdict
from app.lessons import claims
from tests.test_experiments import story

ROOT = Path(__file__).resolve().parents[1]

# computed from the code before the teachers field existed (commit 4f1862d): teacher_folder(ctx).name and
# runner.digest(budget) for FULL and QUICK
TODAY = {"FULL": ("teacher-311e7eaa8c", "15cb61b59f"), "QUICK": ("teacher-788282113a", "8e5116e907")}


def _ctx(budget):
    return SimpleNamespace(budget=budget, root=Path("/work-root"))


# ----------------------------------------------------------------------------- folders, plan, seeds → teachers


def test_teacher_zeros_folder_and_the_one_teacher_work_folders_are_unchanged():
    for name, budget in (("FULL", distillation.FULL), ("QUICK", distillation.QUICK)):
        teacher, work = TODAY[name]
        assert distillation.teacher_folder(_ctx(budget)).name == teacher, name
        assert distillation.teacher_folder(_ctx(budget), 0).name == teacher, name
        assert runner.digest(runner.work_key(budget)) == work, name  # teachers = 1: the folder its runs had
        two = replace(budget, teachers=2)
        assert distillation.teacher_folder(_ctx(two), 0).name == teacher, name  # teacher 0 is the same teacher
        assert distillation.teacher_folder(_ctx(two), 1).name not in (teacher,), name
        assert runner.digest(runner.work_key(two)) != work, name  # 2 teachers: other students, another folder


def test_seeds_alternate_teachers():
    two = replace(distillation.FULL, teachers=2)
    assert [distillation.teacher_of(s, two) for s in range(10)] == [0, 1] * 5
    assert {distillation.teacher_of(s, distillation.FULL) for s in range(10)} == {0}


def test_plan_version_6_fixes_two_teachers_before_the_data_and_the_runner_follows_it():
    plan = plans.current("distillation")
    assert (plan.version, plan.date, plan.seeds, plan.fixed) == (6, "2026-11-28", 10, plans.BEFORE)
    assert plan.teachers == 2 and plan.budget_settings() == {"teachers": 2}
    assert "a second teacher seed (issue 49)" in plan.why and "2 teachers" in plan.budget
    assert plan.comparisons == plans.history("distillation")[4].comparisons  # only the teachers changed
    assert all(p.teachers == 1 for p in plans.history("distillation")[:5])
    module = distillation
    assert runner.planned_budget("distillation", module) == replace(distillation.FULL, teachers=2)
    assert runner.planned_budget("distillation", module, quick=True) == replace(distillation.QUICK, teachers=2)
    assert dict(plans.record("distillation")["settings"]) == {"teachers": 2}
    # nothing the runner accepted before is refused: the plan's seeds, as before
    assert runner.check_run("distillation", None, False, False, {"dirty": False}) == 10
    assert runner.check_run("distillation", 10, False, False, {"dirty": False}) == 10
    for name in ("masking", "sentence", "electra", "sharing"):  # no settings: their budgets as they were
        module = __import__(f"app.experiments.{name}", fromlist=["FULL"])
        assert runner.planned_budget(name, module) == module.FULL


# ----------------------------------------------------------------------------- the per-teacher rule (pure)

TEACHER = {s: s % 2 for s in range(10)}
HARD = {s: 0.50 for s in range(10)}


def _soft(even: float, odd: float) -> dict:
    return {s: (even if s % 2 == 0 else odd) + 0.001 * (s % 3) for s in range(10)}


def test_the_same_sign_with_both_teachers_keeps_the_label():
    v = verdict.decide(_soft(0.52, 0.53), HARD, equivalence_margin=0.01)
    assert v.verdict == verdict.REPRODUCES
    w = verdict.across_teachers(v, TEACHER)
    assert (w.verdict, w.label, w.outcome) == (v.verdict, v.label, v.outcome)
    assert [c.teacher for c in w.by_teacher] == [0, 1]
    assert [c.seeds for c in w.by_teacher] == [(0, 2, 4, 6, 8), (1, 3, 5, 7, 9)]
    t0 = w.by_teacher[0]
    assert t0.difference == pytest.approx(sum(t0.diffs) / 5) and t0.ci_low < t0.difference < t0.ci_high
    assert not any(c.disagrees or c.contradicts for c in w.by_teacher)
    assert "replicates with 2 independent teachers" in w.teacher_check


def test_opposite_signs_make_it_inconclusive_because_it_depends_on_the_teacher():
    odd = [-0.02, 0.015, -0.01, 0.01, -0.01]  # teacher 1: mean −0.003, its interval across 0
    soft = {s: 0.56 + 0.001 * (s % 3) if s % 2 == 0 else 0.5 + odd[s // 2] for s in range(10)}
    v = verdict.decide(soft, HARD, equivalence_margin=0.01)
    assert v.verdict == verdict.REPRODUCES and v.holm_pass  # the seed-level test alone passes
    w = verdict.across_teachers(v, TEACHER)
    assert w.verdict == verdict.INCONCLUSIVE and w.outcome == verdict.NEITHER
    assert w.label == f"{verdict.INCONCLUSIVE}: {verdict.DEPENDS}"
    one = w.by_teacher[1]
    assert one.difference == pytest.approx(-0.003) and one.disagrees and not one.contradicts
    assert one.ci_low < 0 < one.ci_high and not w.by_teacher[0].disagrees
    assert (
        "teacher 1's mean is not above 0" in w.teacher_check
        and verdict.DEPENDS in w.why
        and verdict.DEPENDS in w.reason
    )
    assert (w.p, w.ci_low, w.ci_high) == (v.p, v.ci_low, v.ci_high)  # the seed-level numbers stay as measured


def test_a_teacher_whose_interval_clearly_contradicts_is_named_as_such():
    v = verdict.decide(_soft(0.60, 0.49), HARD, equivalence_margin=0.01)
    assert v.verdict == verdict.REPRODUCES
    w = verdict.across_teachers(v, TEACHER)
    assert w.by_teacher[1].contradicts and w.by_teacher[1].ci_high < 0
    assert "teacher 1's whole interval is not above 0" in w.teacher_check


def test_an_equivalence_label_must_hold_inside_the_margin_with_each_teacher():
    # teacher 0's seeds ~+0.011, teacher 1's ~−0.011: pooled, the 95% interval is inside ±0.0084
    split = {s: (0.511 if s % 2 == 0 else 0.489) + 0.0001 * (s % 3) for s in range(10)}
    wide = verdict.decide(split, HARD, equivalence_margin=0.015)
    assert wide.verdict == verdict.EQUIVALENT
    assert verdict.across_teachers(wide, TEACHER).label == wide.label  # each teacher inside ±0.015 too: kept
    narrow = verdict.decide(split, HARD, equivalence_margin=0.01)
    assert narrow.verdict == verdict.EQUIVALENT  # pooled, inside ±0.01 ...
    w = verdict.across_teachers(narrow, TEACHER)
    assert all(c.disagrees and c.contradicts for c in w.by_teacher)  # ... but each teacher wholly outside it
    assert w.label == f"{verdict.INCONCLUSIVE}: {verdict.DEPENDS}" and "is not inside ±0.01" in w.teacher_check


def test_one_teacher_an_unpaired_test_or_no_label_change_nothing_but_say_the_numbers():
    v = verdict.decide(_soft(0.56, 0.495), HARD, equivalence_margin=0.01)
    assert verdict.across_teachers(v, {s: 0 for s in range(10)}) == v
    assert verdict.across_teachers(v, {}) == v
    unclear = verdict.decide({s: 0.5 + (0.01 if s % 2 else -0.01) for s in range(10)}, HARD)
    w = verdict.across_teachers(unclear, TEACHER)
    assert (
        w.label == unclear.label
        and len(w.by_teacher) == 2
        and "asserts no effect a teacher could contradict" in w.teacher_check
    )


# ----------------------------------------------------------------------------- end to end, quick


@pytest.fixture(scope="module")
def two_teachers(tmp_path_factory):
    """The quick distillation run of plan 6 (2 teachers), 4 seeds: (its JSON, its work folder)."""
    import random

    corpus = tmp_path_factory.mktemp("corpus")
    rng = random.Random(0)
    (corpus / "tinystories_train.txt").write_text("\n\n".join(story(rng) for _ in range(600)) + "\n")
    (corpus / "tinystories_valid.txt").write_text("\n\n".join(story(rng) for _ in range(150)) + "\n")
    work, out = tmp_path_factory.mktemp("work"), tmp_path_factory.mktemp("out")
    torch.set_num_threads(1)
    path = runner.run_experiment(
        "distillation", seeds=4, quick=True, corpus=corpus, work=work, out=out, allow_dirty=True, command="quick"
    )
    return results.read(path), work


@pytest.mark.slow  # trains (a few steps)
def test_two_teachers_are_trained_with_their_own_seeds_and_each_seed_records_its_teacher(two_teachers):
    doc, work = two_teachers
    assert doc["budget"]["teachers"] == 2 and doc["plan"]["version"] == 6
    ctx = _ctx(replace(distillation.QUICK, teachers=2))
    ctx.root = work
    folders = [distillation.teacher_folder(ctx, k) for k in (0, 1)]
    assert folders[0].name == TODAY["QUICK"][0] and folders[0] != folders[1]
    finals = [json.loads((f / "model" / "final.json").read_text()) for f in folders]
    assert [f["seed"] for f in finals] == [0, 1]
    from safetensors.torch import load_file

    wa, wb = (load_file(str(f / "model" / "model.safetensors")) for f in folders)
    assert any(not torch.equal(wa[k], wb[k]) for k in wa)  # different seeds: different teachers
    for arm in doc["arms"].values():
        for r in arm["seeds"]:
            k = r["details"]["teacher"]
            assert k == r["seed"] % 2 and r["details"]["teachers"] == 2
            assert r["details"]["teacher_final"] == finals[k]["final"]  # its own teacher's held-out scores
    assert distillation.prepare_parts(ctx) == []  # both trained: nothing left for --jobs to train at once
    ctx.root = work / "elsewhere"
    assert distillation.prepare_parts(ctx) == [0, 1]  # untrained: two independent parts, one per process
    found = results.teachers(doc)
    assert sorted(found) == [0, 1] and found[0]["seeds"] == [0, 2] and found[1]["seeds"] == [1, 3]
    assert found[1]["final"] == finals[1]["final"]
    assert results.teacher_of_seeds(doc) == {0: 0, 1: 1, 2: 0, 3: 1}
    assert all(v["by_teacher"] and v["teacher_check"] for v in doc["verdicts"])


@pytest.mark.slow  # trains (a few steps)
def test_health_and_compute_are_per_teacher_and_the_page_shows_each_teacher(two_teachers):
    doc = copy.deepcopy(two_teachers[0])
    for arm in doc["arms"].values():  # teacher 0 far above its students, teacher 1 below them
        for r in arm["seeds"]:
            r["details"]["teacher_final"] = {
                **r["details"]["teacher_final"],
                "top1": 0.9 if r["seed"] % 2 == 0 else 0.0,
            }
    soft = {row["measure"]: row for row in results.health(doc)["soft_t2"]}["teacher_gap"]
    assert soft["failed"] == [1, 3]  # only the seeds that distilled teacher 1
    note = claims.teacher_note(doc)
    assert note.level == "warning" and "Teacher 1 is not stronger than every student it taught" in note.text
    assert "teacher 0 (seed 0) 0.900" in note.text and "teacher 1 (seed 1) 0.000" in note.text
    for arm in doc["arms"].values():  # both below their students: said of both, in the plural
        for r in arm["seeds"]:
            r["details"]["teacher_final"]["top1"] = 0.0
    assert "Teachers 0, 1 are not stronger than every student they taught" in claims.teacher_note(doc).text
    t = results.teacher_flops(doc)
    assert t["count"] == 2 and t["all"] == pytest.approx(2 * t["total"])
    r = results.recipe_flops(doc, "soft_t2")
    assert r["teacher"] == pytest.approx(t["total"])  # each seed's recipe: its own teacher, once
    assert results.recipe_flops(doc, "scratch")["teacher"] == 0.0
    table = "\n".join(results.compute_lines({"distillation": doc}))
    assert "2 teachers" in table and f"{t['all'] / 1e12:.1f} TFLOP in all" in table


def test_the_bundled_results_have_two_teachers_and_every_verdict_is_checked_with_each():
    """The bundled run is plan version 6's: 10 student seeds, seed s distilling teacher s mod 2, each teacher's own
    scores recorded, and each judged comparison checked within each teacher's 5 seeds."""
    doc = results.bundled("distillation", results.BUNDLED)
    if doc is None:
        pytest.skip("no bundled distillation results")
    assert doc["budget"]["teachers"] == 2 and doc["plan"]["version"] == 6
    assert results.teacher_of_seeds(doc) == {s: s % 2 for s in range(10)}
    found = results.teachers(doc)
    assert sorted(found) == [0, 1] and found[0]["seeds"] == [0, 2, 4, 6, 8] and found[1]["seeds"] == [1, 3, 5, 7, 9]
    assert found[0]["final"] != found[1]["final"] and found[0]["steps"] == found[1]["steps"] == 10000
    assert results.teacher_flops(doc)["count"] == 2
    judged = results.verdicts(doc, results.family(results.BUNDLED))
    checked = [v for v in judged.values() if v["by_teacher"]]
    assert checked and all(len(v["by_teacher"]) == 2 and v["teacher_check"] for v in checked)
    assert all(v["by_teacher"] for v in judged.values() if v["rank"] > 0)  # every tested comparison
    note = claims.teacher_note(doc).text
    assert "2 teachers" in note and "student seed s distils teacher s mod 2" in note
    assert "these results come from an earlier version" not in note and "One teacher" not in note
    table = results.measured_table(results.BUNDLED)
    assert "**Across teachers.**" in table and all(verdict.DEPENDS not in v["label"] for v in judged.values())


def test_a_one_teacher_document_reads_as_before():
    """Every run before plan version 6 had one teacher and recorded no teacher per seed: such a document (the
    bundled one with its second teacher taken out) is read as one teacher, with no across-teachers check, and the
    page says that the current plan trains 2."""
    doc = results.bundled("distillation", results.BUNDLED)
    if doc is None:
        pytest.skip("no bundled distillation results")
    doc = copy.deepcopy(doc)
    del doc["budget"]["teachers"]
    doc["plan"] = {**doc["plan"], "version": 4}
    for arm in doc["arms"].values():
        arm["seeds"] = [r for r in arm["seeds"] if r["seed"] % 2 == 0]
        for r in arm["seeds"]:
            r["details"].pop("teacher", None)
            r["details"].pop("teachers", None)
    assert set(results.teacher_of_seeds(doc).values()) == {0}
    assert results.teacher_flops(doc)["count"] == 1
    found = results.verdicts(doc, results.family(results.BUNDLED))
    assert all(not v["teacher_check"] and not v["by_teacher"] for v in found.values())
    note = claims.teacher_note(doc)
    assert "One teacher, trained once" in note.text
    assert "The current plan (version 6, 2026-11-28, fixed before the data) trains 2 teachers" in note.text
