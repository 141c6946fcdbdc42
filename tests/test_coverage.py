"""app/coverage.py: many seeded draws of one sentence's layout — whole words and spans never split a word,
rates hold, and coverage follows 1 - (1 - p)^k with k the distinct masks seen."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from app import coverage as c
from app import masking as m
from app.core.text import Tokenized

FAST = settings(max_examples=25, deadline=None)
STATIC, STATIC10, DYNAMIC = [0] * 40, [e % 10 for e in range(40)], list(range(40))


def fake_sentence(pieces_per_word: list[int], pad: int = 0) -> Tokenized:
    """[CLS] w0 w0 w1 ... [SEP] [PAD]*pad as app.core.text would give it; ids are 10 + position (never special)."""
    word_of: list[int | None] = [None]
    for w, n in enumerate(pieces_per_word):
        word_of += [w] * n
    word_of += [None] * (1 + pad)
    T = len(word_of)
    special = tuple(w is None for w in word_of)
    ids = tuple(1 if s else 10 + i for i, s in enumerate(special))
    pieces = tuple("[S]" if s else f"t{i}" for i, s in enumerate(special))
    return Tokenized(ids, pieces, ((0, 0),) * T, special, tuple(word_of), (), T, 512)


@FAST
@given(
    pieces=st.lists(st.integers(1, 4), min_size=1, max_size=40), p=st.floats(0.05, 0.9), seed=st.integers(0, 2**31 - 1)
)
def test_whole_word_and_span_masking_never_split_a_word(pieces, p, seed):
    sentence = fake_sentence(pieces, pad=3)
    for unit in ("word", "span"):
        sim = c.simulate(sentence, unit, m.MaskingConfig(mlm_probability=p), seed, n_copies=5, n_draws=20)
        assert c.words_split(sim.targets, sentence.word_of)[0] == 0
        assert not sim.targets[:, :, ~c.maskable(sentence)].any()  # specials and padding never targets


def test_token_masking_does_split_words():
    sentence = fake_sentence([3] * 30)
    sim = c.simulate(sentence, "token", m.MaskingConfig(), 0, n_copies=4, n_draws=50)
    split, chosen = c.words_split(sim.targets, sentence.word_of)
    assert 0 < split <= chosen


def test_words_split_counts_by_hand():
    word_ids = [None, 0, 0, 1, 1, 2, None]
    targets = torch.tensor([[0, 1, 0, 1, 1, 0, 0], [0, 1, 1, 0, 0, 1, 0]], dtype=torch.bool)
    assert c.words_split(targets, word_ids) == (1, 4)  # row 0: word 0 split, word 1 whole; row 1: words 0 and 2


def test_whole_word_rate_per_token():
    sentence = fake_sentence([1, 2, 3, 1, 4] * 8)
    sim = c.simulate(sentence, "word", m.MaskingConfig(mlm_probability=0.2), 1, n_copies=40, n_draws=200)
    assert abs(sim.rate - 0.2) < 0.01


def test_span_rate_on_single_piece_words():
    sentence = fake_sentence([1] * 100)
    sim = c.simulate(sentence, "span", m.MaskingConfig(mlm_probability=0.15), 0, n_copies=10, n_draws=100)
    assert abs(sim.rate - 0.15) < 0.01
    assert 2.5 < sum(sim.span_lengths) / len(sim.span_lengths) <= 3.8  # the budget cuts the last span short


def test_simulation_is_seeded_and_rejects_unknown_units():
    sentence = fake_sentence([1, 2] * 5)
    a = c.simulate(sentence, "span", m.MaskingConfig(), 3, n_copies=4, n_draws=10)
    b = c.simulate(sentence, "span", m.MaskingConfig(), 3, n_copies=4, n_draws=10)
    assert torch.equal(a.targets, b.targets) and a.span_lengths == b.span_lengths
    with pytest.raises(ValueError):
        c.simulate(sentence, "sentence", m.MaskingConfig(), 0, n_copies=1)


def test_coverage_curves_follow_the_analytic_law():
    sentence = fake_sentence([1] * 30)
    sim = c.simulate(sentence, "token", m.MaskingConfig(mlm_probability=0.15), 0, n_copies=40)
    for copies in (STATIC, STATIC10, DYNAMIC):
        got = c.coverage_curve(sim, copies)
        want = c.analytic_coverage(0.15, copies)
        assert all(b >= a - 1e-12 for a, b in zip(got, got[1:]))  # coverage never shrinks
        assert max(abs(a - b) for a, b in zip(got, want)) < 0.02
    static10 = c.coverage_curve(sim, STATIC10)
    assert static10[9] == pytest.approx(static10[39], abs=1e-12)  # nothing new after the 10th copy
    assert c.analytic_coverage(0.15, STATIC[:5]) == [pytest.approx(0.15)] * 5
    assert c.analytic_coverage(0.15, DYNAMIC)[-1] == pytest.approx(1 - 0.85**40)
    dyn, s10, st1 = (c.coverage_curve(sim, x)[-1] for x in (DYNAMIC, STATIC10, STATIC))
    assert dyn > s10 > st1


def test_simulation_draws_scale_with_length():
    assert c.draws_for(10) == c.DEFAULTS.n_draws
    assert c.DEFAULTS.min_draws <= c.draws_for(126) < c.DEFAULTS.n_draws
    assert c.draws_for(10**6) == c.DEFAULTS.min_draws
    sim = c.simulate(fake_sentence([1] * 126), "token", m.MaskingConfig(), 0, n_copies=2)
    assert sim.targets.shape == (c.draws_for(126), 2, 128)
