"""The claims page's computed notes: a comparison whose arms spent different compute says so with both
numbers, and the distillation page checks its premise (a teacher stronger than its students) from the
results instead of assuming it."""

from __future__ import annotations

import copy
import json
from pathlib import Path

from app.lessons import claims

ROOT = Path(__file__).resolve().parents[1]


def _doc(name: str) -> dict:
    return json.loads((ROOT / "assets" / "experiments" / f"{name}.json").read_text())


def _comparison(name: str, key: str) -> claims.Comparison:
    return next(c for c in claims.comparisons(name, None) if c.key == key)


def _set_teacher(doc: dict, top1: float) -> dict:
    doc = copy.deepcopy(doc)
    for arm in doc["arms"].values():
        for r in arm["seeds"]:
            r["details"]["teacher_final"]["top1"] = top1
    return doc


def _students(doc: dict) -> list[float]:
    return [r["final"]["valid_top1"] for a in doc["arms"].values() for r in a["seeds"]]


def test_a_teacher_weaker_than_a_student_is_a_warning_and_a_stronger_one_is_said_with_its_margin():
    doc = _doc("distillation")
    best = max(_students(doc))
    weak = claims.teacher_note(_set_teacher(doc, best - 0.05))
    assert weak.level == "warning" and "not stronger than every student" in weak.text
    strong = claims.teacher_note(_set_teacher(doc, best + 0.08))
    assert strong.level == "info" and "not stronger" not in strong.text
    assert f"by {0.08:.3f}" in strong.text
    assert f"{best + 0.08:.3f}" in strong.text and f"{best:.3f}" in strong.text


def test_no_teacher_note_without_a_recorded_teacher():
    doc = copy.deepcopy(_doc("distillation"))
    for arm in doc["arms"].values():
        for r in arm["seeds"]:
            r["details"] = {}
    assert claims.teacher_note(doc) is None


def test_arms_that_spent_different_compute_are_said_to_and_arms_that_spent_the_same_are_not():
    doc = _doc("distillation")
    soft_vs_hard = _comparison("distillation", "soft_beats_hard")
    note = claims.compute_note(doc, soft_vs_hard)
    fa, fb = doc["arms"]["soft_t2"]["flops_per_step"], doc["arms"]["hard"]["flops_per_step"]
    assert fa > 1.05 * fb  # the soft arm also runs the teacher
    assert note is not None and f"{fa / 1e9:.1f} GFLOP" in note.text and f"{fb / 1e9:.1f} GFLOP" in note.text
    same = copy.deepcopy(doc)
    same["arms"]["soft_t2"]["flops_per_step"] = fb
    assert claims.compute_note(same, soft_vs_hard) is None
    # ELECTRA's arms trade steps for cost per step and spend the same in all: no note
    electra = _doc("electra")
    assert claims.compute_note(electra, _comparison("electra", claims.CLAIMS["electra"].comparisons[0].key)) is None


def test_the_page_shows_both_notes_for_distillation():
    r = claims.run({}, claims.Inputs(claim="distillation", compare=0))
    texts = " ".join(n.text for n in r.notes)
    assert "The teacher" in texts and "did not spend the same compute" in texts
