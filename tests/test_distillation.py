"""app/lessons/distillation.py and app/figures/distillation.py: the loss the training recipe imports from here,
softening, the recipe's KL at T (by hand, its scaling, zero for identical logits), entropy rising with T,
teacher and student on one input, the pair's size and speed, and run() on the bundled pair (hidden sizes
are read from the checkpoints, never pinned: the bundled pair is retrained wider)."""

from __future__ import annotations

import math
from types import SimpleNamespace

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import app.training.distilbert as recipe
from app import measure
from app.lessons import distillation
from app.core import text as txt
from app.figures import distillation as figs
from app.core.lesson import Stop
from app.models import catalogue

TEXT = distillation.DEFAULT_TEXT
BALL = 6  # "ball"
PARK = distillation.SPEC.word.default  # "park"

logit_rows = st.lists(st.floats(-8, 8), min_size=2, max_size=12)


def _logits(rows):
    return torch.tensor(rows, dtype=torch.float32)


# ----------------------------------------------------------------------------- the recipe, reused


def test_the_recipe_trains_with_the_lessons_own_loss_and_weights():
    assert (
        recipe.distillation_losses is distillation.distillation_losses
    )  # the recipe and the lesson import the same ones
    assert recipe.Recipe is distillation.Recipe
    r = distillation.RECIPE
    assert (r.alpha_ce, r.alpha_mlm, r.alpha_cos, r.temperature) == (5.0, 2.0, 1.0, 2.0)
    assert r == recipe.Recipe()


# ----------------------------------------------------------------------------- KL at T


def test_kl_term_equals_a_hand_computation():
    s = torch.tensor([[2.0, 1.0, 0.0, -1.0], [0.5, 0.5, 3.0, 0.0]])
    t = torch.tensor([[1.0, 2.0, 0.5, -0.5], [0.0, 1.0, 2.0, 1.0]])
    temp = 2.0
    total = 0.0
    for si, ti in zip(s.tolist(), t.tolist()):
        zs = [math.exp(x / temp) for x in si]
        zt = [math.exp(x / temp) for x in ti]
        ps = [z / sum(zs) for z in zs]
        pt = [z / sum(zt) for z in zt]
        total += sum(a * math.log(a / b) for a, b in zip(pt, ps))
    hand = temp**2 * total / len(s)  # T² · KL(teacher ‖ student), averaged over positions (batchmean)
    assert distillation.kl_term(s, t, temp) == pytest.approx(hand, rel=1e-5)
    assert sum(distillation.kl_per_position(s, t, temp)) / 2 == pytest.approx(hand, rel=1e-5)


@settings(max_examples=60, deadline=None)
@given(logit_rows, st.floats(0.5, 10))
def test_kl_is_zero_for_identical_logits(row, temp):
    z = _logits([row])
    assert distillation.kl_term(z, z.clone(), temp) == pytest.approx(0.0, abs=1e-10)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(st.floats(-6, 6), st.floats(-6, 6)), min_size=2, max_size=10),
    st.floats(0.5, 5),
    st.floats(0.5, 3),
)
def test_kl_term_scales_as_in_the_recipe(pairs, temp, c):
    s, t = _logits([[a for a, _ in pairs]]), _logits([[b for _, b in pairs]])
    base = distillation.kl_term(s, t, temp)
    assert base >= -1e-6
    # T² · KL at T is T² times the plain KL of the logits divided by T
    assert base == pytest.approx(temp**2 * distillation.kl_term(s / temp, t / temp, 1.0), rel=1e-4, abs=1e-6)
    # scaling logits and temperature together by c scales the term by c² (the T² factor at work)
    assert distillation.kl_term(c * s, c * t, c * temp) == pytest.approx(c**2 * base, rel=1e-3, abs=1e-5)


def test_at_high_temperature_the_term_becomes_logit_matching():
    # Hinton et al.: T² · KL -> (1 / 2V) · Σ (d − mean d)², d = z_t − z_s, as T grows
    torch.manual_seed(0)
    s, t = torch.randn(1, 50), torch.randn(1, 50)
    d = (t - s)[0]
    limit = float(((d - d.mean()) ** 2).sum() / (2 * d.numel()))
    assert distillation.kl_term(s, t, 200.0) == pytest.approx(limit, rel=0.02)


# ----------------------------------------------------------------------------- softening


@settings(max_examples=80, deadline=None)
@given(logit_rows, st.lists(st.floats(0.5, 10), min_size=2, max_size=6))
def test_softened_distributions_get_flatter_as_t_grows(row, temps):
    z = _logits(row)
    if float(z.max() - z.min()) < 1e-3:
        return  # constant logits are already uniform at every T
    temps = sorted(set(temps))
    ent = [float(distillation.entropy(distillation.soften(z, t))) for t in temps]
    assert all(b >= a - 1e-5 for a, b in zip(ent, ent[1:]))
    assert all(e <= math.log(len(row)) + 1e-5 for e in ent)


def test_soften_is_a_distribution_and_rejects_bad_temperatures():
    z = torch.tensor([3.0, 1.0, 0.0])
    for temp in (0.5, 1.0, 2.0, 100.0):
        p = distillation.soften(z, temp)
        assert float(p.sum()) == pytest.approx(1.0) and bool((p > 0).all())
    assert distillation.soften(z, 1e6).tolist() == pytest.approx([1 / 3] * 3, rel=1e-4)
    with pytest.raises(ValueError):
        distillation.soften(z, 0.0)


def test_temperature_sweep_is_monotone():
    torch.manual_seed(1)
    s, t = torch.randn(100) * 3, torch.randn(100) * 3
    sw = distillation.temperature_sweep(s, t)
    assert (
        sw["temperature"] == sorted(sw["temperature"]) and sw["temperature"][0] == 0.5 and sw["temperature"][-1] == 10.0
    )
    for key in ("teacher_entropy", "student_entropy"):
        assert all(b >= a - 1e-6 for a, b in zip(sw[key], sw[key][1:]))
    for key in ("teacher_top1", "student_top1"):
        assert all(b <= a + 1e-6 for a, b in zip(sw[key], sw[key][1:]))


def test_top_tokens_lists_the_teachers_then_the_students():
    t = torch.tensor([0.5, 0.3, 0.1, 0.05, 0.05])
    s = torch.tensor([0.05, 0.1, 0.05, 0.6, 0.2])
    assert distillation.top_tokens(t, s, 2) == [0, 1, 3, 4]


# ----------------------------------------------------------------------------- teacher and student


def test_distilbert_really_has_half_the_teachers_layers(bundled):
    teacher, student = bundled("bert").model, bundled("distilbert").model
    assert len(student.distilbert.transformer.layer) * 2 == len(teacher.bert.encoder.layer)
    assert measure.layer_count(student) * 2 == measure.layer_count(teacher)
    assert teacher.config.hidden_size == student.config.dim  # so the cosine term is defined


@pytest.fixture(scope="module")
def pair(bundled):
    return distillation.pair_forward(bundled("bert"), bundled("distilbert"), TEXT, BALL)


def test_pair_forward_masks_the_word_for_both_models(bundled, pair):
    tok = bundled("distilbert").tokenizer
    n = len(tok(TEXT)["input_ids"])
    hidden = bundled("distilbert").model.config.dim
    assert distillation.same_vocabulary(bundled("bert").tokenizer, tok)
    assert pair.tokens[pair.masked[0]] == tok.mask_token and pair.gold == (tok.convert_tokens_to_ids("ball"),)
    assert pair.t_logits.shape == pair.s_logits.shape == (n, len(tok))
    assert pair.t_hidden.shape == pair.s_hidden.shape == (n, hidden)
    assert (pair.labels != -100).nonzero().flatten().tolist() == list(pair.masked)
    with pytest.raises(ValueError):
        distillation.pair_forward(bundled("bert"), bundled("distilbert"), "[MASK] [SEP]", 1)  # "MASK" has no piece


def test_pair_forward_matches_each_models_own_forward_and_the_recipes_student_logits(bundled, pair):
    tok = bundled("distilbert").tokenizer
    enc = tok(TEXT, return_tensors="pt")
    ids = enc["input_ids"].clone()
    ids[0, list(pair.masked)] = tok.mask_token_id
    student = bundled("distilbert").model
    with torch.no_grad():
        s = student(input_ids=ids, attention_mask=enc["attention_mask"]).logits[0]
        t = bundled("bert").model(input_ids=ids, attention_mask=enc["attention_mask"]).logits[0]
        real = enc["attention_mask"].bool()
        as_trained, h = recipe.student_logits(student, ids, enc["attention_mask"], real)  # what the recipe optimised
    assert torch.allclose(pair.s_logits, s, atol=1e-4) and torch.allclose(pair.t_logits, t, atol=1e-4)
    assert torch.allclose(pair.s_logits, as_trained, atol=1e-4) and torch.allclose(pair.s_hidden, h[0], atol=1e-4)


def test_recipe_terms_are_the_recipes_weighted_sum(pair):
    terms = distillation.recipe_terms(pair, 2.0)
    s, t, hs, ht = (x.double() for x in (pair.s_logits, pair.t_logits, pair.s_hidden, pair.t_hidden))
    direct = recipe.distillation_losses(
        s, t, pair.labels, hs, ht, 2.0
    )  # the page evaluates the recipe's function in float64
    assert terms["kl"] == pytest.approx(float(direct["kl"])) and terms["mlm"] == pytest.approx(float(direct["mlm"]))
    assert terms["cos"] == pytest.approx(float(direct["cos"]))
    as_trained = recipe.distillation_losses(
        pair.s_logits, pair.t_logits, pair.labels, pair.s_hidden, pair.t_hidden, 2.0
    )
    assert terms["kl"] == pytest.approx(float(as_trained["kl"]), rel=1e-2)  # float32 rounds a small KL a little
    assert terms["mlm"] == pytest.approx(float(as_trained["mlm"]), rel=1e-5)
    assert terms["total"] == pytest.approx(5 * terms["kl"] + 2 * terms["mlm"] + 1 * terms["cos"])
    # the MLM term is the cross-entropy at the masked word only
    ce = torch.nn.functional.cross_entropy(pair.s_logits[list(pair.masked)], torch.tensor(pair.gold))
    assert terms["mlm"] == pytest.approx(float(ce), rel=1e-5)
    # only the soft-target term depends on T
    hot = distillation.recipe_terms(pair, 5.0)
    assert hot["mlm"] == terms["mlm"] and hot["cos"] == terms["cos"]
    assert hot["kl"] == pytest.approx(distillation.kl_term(pair.s_logits, pair.t_logits, 5.0))


def test_cosine_term_is_left_out_when_hidden_sizes_differ(pair):
    import dataclasses

    narrow = dataclasses.replace(pair, s_hidden=pair.s_hidden[:, :16])
    terms = distillation.recipe_terms(narrow)
    assert terms["cos"] is None and terms["weighted"]["cos"] is None
    assert terms["total"] == pytest.approx(5 * terms["kl"] + 2 * terms["mlm"])


def test_size_and_speed_from_the_models(bundled):
    teacher, student = measure.size_of(bundled("bert")), measure.size_of(bundled("distilbert"))
    sz = distillation.size_and_speed(teacher, student, 10.0, 4.0)
    assert sz["teacher_layers"] == 2 * sz["student_layers"]
    assert sz["teacher_params"] == measure.count_parameters(bundled("bert").model)
    assert sz["smaller"] == pytest.approx(1 - sz["student_params"] / sz["teacher_params"])
    assert 0 < sz["smaller"] < 1 and sz["speedup"] == pytest.approx(2.5) and sz["faster"] == pytest.approx(1.5)
    emb = bundled("bert").model.get_input_embeddings().weight.numel()
    assert sz["embedding_share"] == pytest.approx(emb / sz["teacher_params"]) and 0 < sz["embedding_share"] < 1


def test_summary_lines_follow_the_numbers():
    base = {
        "teacher_params": 100,
        "student_params": 80,
        "teacher_layers": 4,
        "student_layers": 2,
        "teacher_ms": 10.0,
        "student_ms": 5.0,
        "smaller": 0.2,
        "speedup": 2.0,
        "faster": 1.0,
        "embedding_share": 0.4,
    }
    text = "\n".join(distillation.summary_lines(base, {}, True, 9))
    assert "20% smaller" in text and "less than the paper's 40%" in text and "40% of the teacher" in text
    assert "2.00× the speed" in text and "no model-card numbers yet" in text
    hub = {**base, "student_params": 600, "smaller": -5.0, "speedup": 0.5, "student_ms": 20.0}
    text = "\n".join(distillation.summary_lines(hub, {}, False, 9))
    assert "6.0× larger" in text and "2.00× slower" in text and "not trained by this project" in text
    assert "masked-LM head" not in text  # not timed: not mentioned
    timed = {**base, "teacher_whole_ms": 12.0, "student_whole_ms": 8.0, "speedup_whole": 1.5}
    text = "\n".join(distillation.summary_lines(timed, {}, True, 9))
    assert "the encoder at **2.00× the speed**" in text and "head over the whole vocabulary" in text
    assert "1.50× the speed (12.00 → 8.00 ms)" in text


def test_the_speed_caption_says_what_the_head_did_to_the_speed_up():
    """Worded from the numbers: the head narrows the speed-up where it costs both models alike, and the caption
    does not say so where the whole models' speed-up is the larger one."""
    base = {
        "teacher_params": 100,
        "student_params": 80,
        "teacher_layers": 4,
        "student_layers": 2,
        "teacher_ms": 3.2,
        "student_ms": 1.6,
        "speedup": 2.0,
    }
    assert "masked-LM head" not in distillation.speed_caption(base)
    narrows = {**base, "teacher_whole_ms": 4.7, "student_whole_ms": 2.9, "speedup_whole": 4.7 / 2.9}
    text = distillation.speed_caption(narrows)
    assert "encoder time 0.50" in text and "with the masked-LM head 0.62" in text
    assert "with it, the speed-up narrows (2.00× → 1.62×)" in text
    wider = {**base, "teacher_whole_ms": 6.2, "student_whole_ms": 2.6, "speedup_whole": 6.2 / 2.6}
    assert "the speed-up did not narrow in this timing (2.00× → 2.38×)" in distillation.speed_caption(wider)


def test_card_numbers_come_from_the_bundled_model_card(bundled):
    final = catalogue.bundled_card_metrics(catalogue.get("distilbert"))
    assert "retained_top1" in final, "the bundled student's model card lost its numbers"
    card = distillation.card_summary(final)
    assert card == distillation.card_of(bundled("distilbert"))
    assert card["retained_top1"] == pytest.approx(final["top1"] / final["teacher"]["top1"])
    assert card["faster"] == pytest.approx(final["speedup"] - 1)
    line = "\n".join(
        distillation.summary_lines(
            {
                "teacher_params": 2,
                "student_params": 1,
                "teacher_layers": 4,
                "student_layers": 2,
                "teacher_ms": 2.0,
                "student_ms": 1.0,
                "smaller": 0.5,
                "speedup": 2.0,
                "faster": 1.0,
                "embedding_share": 0.3,
            },
            card,
            True,
            9,
        )
    )
    assert f"{card['retained_top1']:.0%} retained" in line
    assert distillation.card_summary({}) == {}


def test_a_student_above_its_teacher_is_said_so_with_why_and_one_below_is_not():
    size = {
        "teacher_params": 2,
        "student_params": 1,
        "teacher_layers": 4,
        "student_layers": 2,
        "teacher_ms": 2.0,
        "student_ms": 1.0,
        "smaller": 0.5,
        "speedup": 2.0,
        "faster": 1.0,
        "embedding_share": 0.3,
    }
    above = {"student_top1": 0.516, "teacher_top1": 0.5, "retained_top1": 1.032, "speedup": 1.6, "faster": 0.6}
    text = "\n".join(distillation.summary_lines(size, above, True, 9))
    assert "103% retained" in text and "beats its teacher" in text and "more training than the teacher" in text
    below = {**above, "student_top1": 0.485, "retained_top1": 0.97}
    text = "\n".join(distillation.summary_lines(size, below, True, 9))
    assert "97% retained" in text and "beats" not in text


def test_pair_notes_say_when_the_teacher_is_not_the_real_one():
    assert distillation.pair_notes("bundled", "/x/bert", "bundled") == []
    notes = distillation.pair_notes("hub", "google/bert_uncased_L-4_H-256_A-4", "hub")
    assert (
        len(notes) == 1
        and "`google-bert/bert-base-uncased`" in notes[0]
        and "`google/bert_uncased_L-4_H-256_A-4`" in notes[0]
    )
    assert len(distillation.pair_notes("bundled", "/x", "hub cache")) == 1


# ----------------------------------------------------------------------------- run: the page's one sequence


def pair_models(bundled) -> dict:
    return {k: bundled(k) for k in distillation.MODELS}


def quick_cache(step, *args):
    """Plain calls, except that the latencies are made up (compare's tests time real forwards): the encoders
    at 4 and 2 ms, with the masked-LM head 5 and 3 ms."""
    if step is measure.latencies:
        return {
            m.variant.key: {
                "median_ms": 4.0 / (i + 1) + 1.0,
                "encoder_median_ms": 4.0 / (i + 1),
                "samples_ms": [1.0],
                "encoder_samples_ms": [4.0 / (i + 1)],
                "n_tokens": 13,
            }
            for i, m in enumerate(args[0])
        }
    return step(*args)


def test_run_on_the_bundled_pair(bundled):
    r = distillation.run(pair_models(bundled), distillation.Inputs(word=BALL, temperature=4.0, top_k=5), quick_cache)
    pair = distillation.pair_forward(bundled("bert"), bundled("distilbert"), TEXT, BALL)
    m = pair.masked[0]
    tok = bundled("distilbert").tokenizer
    assert r.words[r.word] == "ball" and r.n_pieces == 1 and r.notes == ()
    assert r.teacher == bundled("bert").shown_as and r.student == bundled("distilbert").shown_as
    soft = r.soft
    t1, t4 = distillation.soften(pair.t_logits[m], 1.0), distillation.soften(pair.t_logits[m], 4.0)
    ids = distillation.top_tokens(t1, distillation.soften(pair.s_logits[m], 1.0), 5)
    assert soft.tokens == tuple(txt.piece_text(tok, i) for i in ids) and len(soft.tokens) >= 5
    assert soft.teacher_1 == pytest.approx(t1[ids].tolist()) and soft.teacher_t == pytest.approx(t4[ids].tolist())
    assert soft.teacher_top_t < soft.teacher_top_1  # a higher temperature: a flatter teacher
    assert soft.gold == "ball" and soft.vocab == len(tok)
    assert soft.kl == pytest.approx(distillation.kl_term(pair.s_logits[m : m + 1], pair.t_logits[m : m + 1], 4.0))
    assert r.terms_recipe["temperature"] == 2.0 and r.terms_yours["temperature"] == 4.0
    assert r.kl_per_token == pytest.approx(distillation.kl_per_position(pair.s_logits, pair.t_logits, 4.0))
    assert r.tokens == pair.tokens and r.masked == pair.masked
    assert r.size["speedup"] == pytest.approx(2.0) and r.size["teacher_layers"] == 2 * r.size["student_layers"]
    assert r.size["speedup_whole"] == pytest.approx(5 / 3) and r.claims["measured here"]["faster"] == pytest.approx(1.0)
    assert "the encoder at **2.00× the speed**" in r.summary[1] and "head over the whole vocabulary" in r.summary[1]
    assert r.claims["paper"] == {"smaller": 0.4, "faster": 0.6, "retained": 0.97}
    assert r.claims["measured here"]["smaller"] == pytest.approx(r.size["smaller"])
    assert ("model card" in r.claims) == bool(r.card) and len(r.summary) == 3


def test_run_caches_the_forward_passes_apart_from_temperature_and_tokens_shown(bundled):
    calls = {}

    def recording(step, *args):
        calls.setdefault(key, []).append((step.__name__, args))
        return quick_cache(step, *args)

    for key in ((1.0, 3), (6.5, 12)):
        r = distillation.run(pair_models(bundled), distillation.Inputs(temperature=key[0], top_k=key[1]), recording)
        assert r.temperature == key[0] and len(r.soft.tokens) >= key[1]
    same = lambda a, b: torch.equal(a, b) if isinstance(a, torch.Tensor) else a == b  # noqa: E731
    for (name_a, args_a), (name_b, args_b) in zip(calls[(1.0, 3)], calls[(6.5, 12)], strict=True):
        # the sliders change no cached step's arguments
        assert name_a == name_b and all(same(a, b) for a, b in zip(args_a, args_b, strict=True)), name_a
    # the sweep over T is one of them: it does not depend on the chosen T
    assert {name for name, _ in calls[(1.0, 3)]} == {
        "pair_forward",
        "latencies",
        "size_of",
        "card_of",
        "temperature_sweep",
    }


def test_run_stops_or_notes_on_bad_input(bundled):
    models = pair_models(bundled)
    for blank in ("", "  \n "):
        with pytest.raises(Stop):
            distillation.run(models, distillation.Inputs(text=blank), quick_cache)
    tok = bundled("distilbert").tokenizer
    with pytest.raises(Stop):
        distillation.run(models, distillation.Inputs(text=f"{tok.mask_token} {tok.sep_token}"), quick_cache)
    r = distillation.run(
        models, distillation.Inputs(text=f"The {tok.mask_token} sat on a mat 😀.", word=2), quick_cache
    )
    shown = " ".join(n.text for n in r.notes)
    assert f"`{tok.mask_token}`" in shown and "`😀`" in shown and "emoji" not in shown.lower()
    assert r.word != 2 and r.words[r.word] in ("The", "sat")  # the nearest word with a piece of its own
    r = distillation.run(models, distillation.Inputs(word=40), quick_cache)
    assert r.word == max(i for i, w in enumerate(r.words) if txt.is_content_word(w)) and r.notes  # not "."
    long = distillation.run(models, distillation.Inputs(text=" ".join([TEXT] * 30)), quick_cache)
    assert any(n.level == "warning" for n in long.notes)
    assert len(long.tokens) <= txt.token_limit(tok)


# ----------------------------------------------------------------------------- figures


def test_soft_target_figure_data():
    fig = figs.soft_targets_figure(
        ["ball", "<toy>"], [0.6, 0.1], [0.4, 0.2], [0.5, 0.2], [0.35, 0.25], 2.0, gold="ball"
    )
    assert [list(d.customdata) for d in fig.data] == [[0.6, 0.1], [0.4, 0.2], [0.5, 0.2], [0.35, 0.25]]
    assert [y for d in fig.data for y in d.y] == pytest.approx(
        [6 / 7, 1 / 7, 2 / 3, 1 / 3, 5 / 7, 2 / 7, 7 / 12, 5 / 12]
    )
    assert fig.data[0].x[1] == "&lt;toy&gt;" and "✓" in fig.data[0].x[0]
    assert "70% of P at T = 1, 60.0% at T = 2" in fig.layout.annotations[0].text


def test_soft_targets_show_the_shape_a_high_temperature_gives_not_vanishing_bars():
    """At T = 4 over a whole vocabulary every shown token's probability is tiny (the issue: bars flat at ~0.002);
    renormalised over the tokens shown, the top token's share falls visibly from T = 1 to T = 4 and the near-misses
    rise, exactly as p_i / p_j = (q_i / q_j)^(1/T) says."""
    import torch

    logits = torch.tensor([4.0, 3.0, 2.5, 2.0, 1.0] + [0.0] * 30_000)
    p1, p4 = torch.softmax(logits, -1)[:5].tolist(), torch.softmax(logits / 4, -1)[:5].tolist()
    assert max(p4) < 0.001  # what the raw bars showed
    fig = figs.soft_targets_figure(list("abcde"), p1, p4, p1, p4, 4.0)
    one, hot = list(fig.data[0].y), list(fig.data[1].y)
    assert sum(one) == pytest.approx(1) and sum(hot) == pytest.approx(1)
    assert one[0] - hot[0] > 0.2 and hot[-1] > 2 * one[-1]  # the top falls, the last near-miss more than doubles
    assert hot[0] / hot[1] == pytest.approx((p1[0] / p1[1]) ** 0.25)


def test_temperature_and_kl_figures_data():
    sw = {
        "temperature": [1.0, 2.0],
        "teacher_entropy": [1.0, 1.5],
        "student_entropy": [1.2, 1.6],
        "kl_term": [0.3, 0.2],
    }
    fig = figs.temperature_figure(SimpleNamespace(sweep=sw, temperature=3.0), 2.0)
    assert list(fig.data[0].y) == [1.0, 1.5] and list(fig.data[2].y) == [0.3, 0.2]
    bars = figs.position_kl_figure(
        SimpleNamespace(tokens=["[CLS]", "[MASK]", "<b>"], kl_per_token=[0.1, 0.5, 0.2], masked=[1], temperature=2.0)
    )
    assert list(bars.data[0].y) == [0.1, 0.5, 0.2] and bars.data[0].marker.color[1] != bars.data[0].marker.color[0]
    assert bars.data[0].x[2] == "2·&lt;b&gt;"
    claims = figs.claims_figure(
        {
            "paper": {"smaller": 0.4, "faster": 0.6, "retained": 0.97},
            "measured here": {"smaller": 0.3, "faster": 0.5, "retained": None},
        }
    )
    assert list(claims.data[0].y) == pytest.approx([40, 60, 97]) and claims.data[1].y[2] is None


# ----------------------------------------------------------------------------- quality (trained checkpoints)


@pytest.mark.trained
def test_trained_student_agrees_with_its_teacher(bundled):
    pair = distillation.pair_forward(bundled("bert"), bundled("distilbert"), TEXT, PARK)  # "... in the [park]."
    m = pair.masked[0]
    top_t = set(pair.t_logits[m].topk(5).indices.tolist())
    top_s = set(pair.s_logits[m].topk(5).indices.tolist())
    assert len(top_t & top_s) >= 3
    assert pair.gold[0] in top_t


def test_the_reports_speed_up_times_teacher_and_student_in_turns(monkeypatch):
    """The model card's and the quality report's forward speed-ups (app.training.distilbert.forward_speedup) go
    through the page's own interleaved timing: a teacher twice as slow as its student reads 2×, an encoder three
    times as slow 3×, and the calls alternate (teacher, student, their encoders, teacher, ...), so background load
    falls on each alike. The models spend time on a clock of the test's own, so the numbers are exact under any
    load."""
    from functools import partial

    from app import measure

    calls, now = [], [0.0]
    monkeypatch.setattr(measure, "with_encoders", partial(measure.with_encoders, clock=lambda: now[0]))

    class Slow(torch.nn.Module):
        def __init__(self, name, ms):
            super().__init__()
            self.name, self.ms, self.w = name, ms, torch.nn.Parameter(torch.zeros(1))

        @property
        def device(self):
            return self.w.device

        def forward(self, **inputs):
            calls.append(self.name)
            now[0] += self.ms / 1000  # this forward's time, on the test's clock

    tok = lambda text, return_tensors: {"input_ids": torch.zeros(1, 5, dtype=torch.long)}  # noqa: E731
    teacher, student = Slow("teacher", 8.0), Slow("student", 4.0)
    teacher.base_model, student.base_model = Slow("teacher encoder", 6.0), Slow("student encoder", 2.0)
    out = recipe.forward_speedup(teacher, student, tok, repeats=20)
    assert out["speedup"] == pytest.approx(2.0) and out["encoder_speedup"] == pytest.approx(3.0), out
    assert out["teacher_ms"] == pytest.approx(8.0) and out["student_ms"] == pytest.approx(4.0)
    assert out["encoder_student_ms"] == pytest.approx(2.0)
    assert calls[-80:] == ["teacher", "student", "teacher encoder", "student encoder"] * 20


def test_a_speed_up_is_concluded_only_when_its_interval_lies_clear_of_one():
    noisy = measure.ratio_interval([88.5, 40.0, 95.0], [51.6, 60.0, 30.0])  # one load said 7.14×, another 2.01×
    assert distillation.pace(1.7, noisy).startswith("within timing noise on this machine (1.70×, 95% interval")
    clear = measure.ratio_interval([10.0, 10.4, 9.8, 10.1, 9.9], [5.0, 5.1, 4.9, 5.0, 5.05])
    assert distillation.pace(2.0, clear).startswith(
        "2.00× the speed (95% interval"
    ) and "5 rounds" in distillation.pace(2.0, clear)
    base = {
        "teacher_params": 100,
        "student_params": 80,
        "teacher_layers": 4,
        "student_layers": 2,
        "teacher_ms": 10.0,
        "student_ms": 5.0,
        "smaller": 0.2,
        "speedup": 1.7,
        "faster": 0.7,
        "embedding_share": 0.4,
        "speedup_interval": noisy,
    }
    text = "\n".join(distillation.summary_lines(base, {}, True, 3))
    assert "the speed**" not in text and "within timing noise" in text and "median of 3 forwards" in text
    both = {
        **base,
        "speedup_interval": clear,
        "teacher_whole_ms": 12.0,
        "student_whole_ms": 8.0,
        "speedup_whole": 1.5,
        "speedup_whole_interval": noisy,
    }
    assert "did not clearly change: the two intervals overlap" in distillation.speed_caption(both)
