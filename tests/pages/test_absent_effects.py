"""Every sentence a lesson says about what it shows is computed from what it shows (issue 26). For each lesson, its
page is fed a result in which the effect its prose describes is ABSENT (the lesson's own result, with the numbers
behind that sentence changed), and the page must not claim the effect — it says what the numbers show instead.
The story functions are also tested on both sides of each threshold without a page.

Covered elsewhere: the NSP/SOP grid's heading and lines (tests/test_sentence_order_grid.py, and the page below),
the claims page's verdicts on a tie and a reversal (tests/pages/test_claims_page.py), Side by side's swapped-in
word (tests/test_compare.py::swap_verdict, and the page below). The attention lesson describes its views, never
what a head does: it has no sentence about its output to test."""

from __future__ import annotations

import dataclasses
import importlib

import pytest

from tests.conftest import run_page, shown_text


def fed(monkeypatch, slug: str, change, **query):
    """The page of lesson ``slug`` run with its library's ``run`` result passed through ``change``."""
    lib = importlib.import_module(f"app.lessons.{slug}")
    real = lib.run

    def run(models, inputs, cache=None):
        return change(real(models, inputs) if cache is None else real(models, inputs, cache))

    monkeypatch.setattr(lib, "run", run)
    at = run_page(f"pages/{slug}.py", **query)
    assert not at.exception, at.exception
    return shown_text(at)


# ----------------------------------------------------------------------------- masking lab


def test_masking_story_functions_follow_the_numbers():
    from app.lessons import masking as lab

    assert "cuts them" in lab.span_story({"drawn": 3.8, "placed": 2.1})
    assert "cuts them" not in lab.span_story({"drawn": 3.8, "placed": 3.7})
    assert "reached every position" in lab.spread_story({"static": 20, "dynamic": 0}, 27, 40)
    assert "left 3 of 27 out" in lab.spread_story({"static": 20, "dynamic": 3}, 27, 5)


def test_masking_page_does_not_say_spans_were_cut_when_they_were_not(monkeypatch):
    def change(r):
        sp = r.spans
        return dataclasses.replace(r, spans=dataclasses.replace(sp, means={**sp.means, "placed": sp.means["drawn"]}))

    text = fed(monkeypatch, "masking", change, unit="span")
    assert "cuts them" not in text and "as long as the drawn ones" in text


# ----------------------------------------------------------------------------- ALBERT: parameters


def test_table4_story_counts_the_rows_that_agree():
    from app.lessons import albert_params as params

    rows = params.table4_rows()
    said = params.table4_story(rows)
    assert said.startswith("3 of 8 rows agree") and "4 more do without the pooler" in said
    assert "E = 768, not shared (BERT) (+1.67M) differs by more" in said  # BERT-base: 109.7M computed, 108M quoted
    exact = [{**r, "difference (M)": 0.0} for r in rows]
    assert (
        params.table4_story(exact) == "8 of 8 rows agree with the paper to its rounding (whole millions: within 0.5M)."
    )


def test_albert_params_page_does_not_say_rows_agree_when_they_do_not(monkeypatch):
    def change(r):
        return dataclasses.replace(r, table4=tuple({**row, "difference (M)": 5.0} for row in r.table4))

    text = fed(monkeypatch, "albert_params", change)
    assert "0 of 8 rows agree" in text and "agrees to rounding" not in text


# ----------------------------------------------------------------------------- ALBERT: shared layers


def test_step_shapes():
    from app.lessons.albert_activations import step_shape

    assert step_shape([5, 4, 3]) == "shrinking" and step_shape([1, 2, 3]) == "growing"
    assert step_shape([3, 5, 4, 6]) == "oscillating" and step_shape([2, 2.05, 1.98]) == "flat"


def test_albert_layers_page_says_what_its_steps_do(monkeypatch):
    """An ALBERT whose later steps oscillate and whose first step is not the largest: the page says both, and
    that this matches the paper; the bundled one converges, and the page says it does not show the paper's."""
    import torch

    def change(r):
        a = r.albert
        n = len(a.series["l2"])
        l2 = torch.tensor([1.0] + [3.0 if i % 2 else 2.0 for i in range(n - 1)])
        return dataclasses.replace(r, albert=dataclasses.replace(a, series={**a.series, "l2": l2}))

    text = fed(monkeypatch, "albert_activations", change)
    assert "is not the largest" in text and "is the largest" not in text
    assert "this stand-in oscillates too" in text and "does not show that here" not in text
    bundled = fed(monkeypatch, "albert_activations", lambda r: r)  # the bundled stand-in: one or the other
    assert ("oscillates too" in bundled) != ("does not show that here" in bundled)


# ----------------------------------------------------------------------------- DistilBERT


def test_sweep_story_follows_the_entropies_and_the_gap():
    from app.lessons.distillation import sweep_story

    sweep = {
        "temperature": [1, 2, 4],
        "teacher_entropy": [1.0, 2.0, 3.0],
        "student_entropy": [1.5, 2.2, 3.1],
        "kl_term": [0.2, 0.25, 0.3],
    }
    said = sweep_story(sweep, 4096)
    assert (
        "both distributions flatten" in said
        and "gap between them shrinks" in said
        and "keeps it from vanishing" in said
    )
    flat = {
        **sweep,
        "teacher_entropy": [3.0, 2.0, 1.0],
        "student_entropy": [1.0, 2.0, 3.5],
        "kl_term": [0.2, 0.01, 0.001],
    }
    said = sweep_story(flat, 4096)
    assert "do not both rise" in said and "does not shrink" in said and "does not hold it steady" in said


def test_distillation_page_does_not_say_the_gap_shrinks_when_it_grows(monkeypatch):
    def change(r):
        s = r.sweep
        student = [h + 0.1 * i for i, h in enumerate(s["teacher_entropy"])]
        return dataclasses.replace(r, sweep={**s, "student_entropy": student})

    text = fed(monkeypatch, "distillation", change)
    assert "gap between them does not shrink" in text and "gap between them shrinks" not in text


# ----------------------------------------------------------------------------- ELECTRA


def test_electra_page_says_a_forged_word_slipped_past_when_it_scores_low(monkeypatch):
    def change(r):
        scores = [0.9] * len(r.edit_scores)
        scores[r.edit_pos] = 0.01
        return dataclasses.replace(r, edit_scores=tuple(scores))

    text = fed(monkeypatch, "electra", change, edit_word="banana")
    assert "it slipped past" in text and "caught" not in text


# ----------------------------------------------------------------------------- XLNet


def test_xlnet_page_does_not_say_blocked_cells_are_zero_when_they_are_not(monkeypatch):
    def change(r):
        checks = [dict(c) for c in r.checks]
        checks[0]["max prob on a blocked cell"] = 0.25
        return dataclasses.replace(r, checks=type(r.checks)(checks))

    text = fed(monkeypatch, "xlnet", change)
    assert "exactly 0" not in text and "not respected" in text


# ----------------------------------------------------------------------------- DeBERTa


def test_deberta_page_does_not_put_moved_scores_on_the_diagonal(monkeypatch):
    def change(r):
        return dataclasses.replace(
            r,
            shifts=tuple(
                dataclasses.replace(s, max_delta=0.5)
                if s.family == "deberta"
                else dataclasses.replace(s, max_delta=0.0)
                for s in r.shifts
            ),
        )

    text = fed(monkeypatch, "deberta", change, prefix="Once upon a time, in a big forest,")
    assert "leave the diagonal" in text and "sit on the diagonal" not in text
    assert "did not move either" in text and "scores differently once it has moved" not in text


# ----------------------------------------------------------------------------- ModernBERT


def test_timing_story_says_equal_only_when_equal():
    """Concluded from the ratio's interval (rounds in turns), never from two medians: "about equal" needs the whole
    interval within ±SAME_TIME, faster / slower the whole interval on one side of 1."""
    from app.lessons.modernbert import Cost, timing_story

    def cost(built, full, low, high):
        ratio = None if low is None else {"ratio": built / full, "low": low, "high": high, "n": 5}
        return Cost((8,), (1,), (1,), (1,), (1,), (1,), (1,), 8, (128, 512), (1.0, built), (1.0, full), (1, 3), (1, 3),
                    rounds=(3, 5), ratio=ratio)  # fmt: skip

    assert "about equal" in timing_story(cost(10.0, 10.5, 0.9, 1.02))
    faster = timing_story(cost(5.0, 10.0, 0.45, 0.55))
    assert "faster" in faster and "about equal" not in faster and "95% interval 0.45–0.55×" in faster
    assert "slower" in timing_story(cost(15.0, 10.0, 1.3, 1.7))
    # medians 2× apart, but an interval that takes in 1: no conclusion either way (the old text said "faster")
    noise = timing_story(cost(5.0, 10.0, 0.3, 1.4))
    assert "within the noise" in noise and "was faster" not in noise and "about equal" not in noise
    # medians nearly equal, interval too wide for ±15%: not "about equal" either
    assert "about equal" not in timing_story(cost(10.0, 10.2, 0.7, 1.4))
    assert "no conclusion" in timing_story(cost(10.0, 10.0, None, None))


def test_modernbert_page_does_not_say_equal_when_the_window_was_faster(monkeypatch):
    def change(r):
        c = r.cost
        ratio = {"ratio": 0.5, "low": 0.45, "high": 0.55, "n": 5}
        halved = tuple(x / 2 for x in c.ms_global)
        return dataclasses.replace(r, cost=dataclasses.replace(c, ms_model=halved, ratio=ratio))

    text = fed(monkeypatch, "modernbert", change)
    assert "as built was faster" in text and "about equal" not in text


# ----------------------------------------------------------------------------- NSP vs SOP


def test_sentence_order_page_does_not_say_nsp_is_easy_when_its_head_is_at_chance(monkeypatch):
    from app.lessons import sentence_order as so

    def change(r):
        chance = tuple(
            so.Cell(c.key, c.objective, c.task, c.n // 2, c.n, *so.wilson_interval(c.n // 2, c.n)) for c in r.grid.cells
        )
        return dataclasses.replace(r, grid=so.summarize_grid(r.heads, chance))

    text = fed(monkeypatch, "sentence_order", change)
    assert "Why NSP is easy" not in text and "at chance" in text


# ----------------------------------------------------------------------------- Side by side


def test_compare_page_says_the_discriminator_missed_a_swap_it_scored_low(monkeypatch):
    from app.lessons import compare

    def change(r):
        if r.electra_says is None:
            pytest.skip("no ELECTRA swap on the defaults")
        return dataclasses.replace(
            r,
            electra_says=compare.swap_verdict(
                "tree", (0.9, 0.02, 0.01, 0.3, 0.9), (True, False, False, False, True), 2
            ),
        )

    text = fed(monkeypatch, "compare", change)
    assert "missed it" in text and "lit it up" not in text
