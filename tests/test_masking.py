"""Property tests of app/masking.py (over many seeded draws) and of the masking lab's figures."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from app import masking as m
from app.figures import masking as figs

DEFAULT_TEXT = "The little girl found a red ball in the park. She kicked it over the puddles to the wobbly treehouse."
FAST = settings(max_examples=25, deadline=None)


def fake_encoded(pieces_per_word: list[int], pad: int = 0) -> m.Encoded:
    """[CLS] w0 w0 w1 ... [SEP] [PAD]*pad with word_ids; ids are 10 + position (never special)."""
    word_ids: list[int | None] = [None]
    for w, n in enumerate(pieces_per_word):
        word_ids += [w] * n
    word_ids += [None] * (1 + pad)
    T = len(word_ids)
    special = tuple(w is None for w in word_ids)
    ids = tuple(1 if s else 10 + i for i, s in enumerate(special))
    tokens = tuple("[S]" if s else f"t{i}" for i, s in enumerate(special))
    return m.Encoded(ids, tokens, special, tuple(word_ids), T, 512, 0)


RANDOM_IDS = torch.arange(10, 200)
MASK_ID = 4
words_strategy = st.lists(st.integers(1, 4), min_size=1, max_size=40)


# ----------------------------------------------------------------------------- configuration


def test_config_rejects_impossible_settings():
    with pytest.raises(ValueError, match="add up to at most 1"):
        m.MaskingConfig(mask_fraction=0.8, random_fraction=0.3)
    with pytest.raises(ValueError):
        m.MaskingConfig(mlm_probability=1.5)
    with pytest.raises(ValueError):
        m.MaskingConfig(span_p=0.0)


# ----------------------------------------------------------------------------- token-level targets and the split


@FAST
@given(p=st.floats(0.05, 0.6), seed=st.integers(0, 2**31 - 1))
def test_token_rate_within_tolerance_and_specials_never_targets(p, seed):
    maskable = torch.ones(400, 64, dtype=torch.bool)
    maskable[:, 0] = maskable[:, -1] = False  # [CLS] ... [SEP]
    maskable[::3, 40:] = False  # padding in a third of the rows
    targets = m.select_token_targets(maskable, p, m.generator(seed))
    assert not (targets & ~maskable).any()
    rate = targets.sum().item() / maskable.sum().item()
    sd = math.sqrt(p * (1 - p) / maskable.sum().item())
    assert abs(rate - p) < 5 * sd


@FAST
@given(mask=st.floats(0.0, 1.0), share=st.floats(0.0, 1.0), seed=st.integers(0, 2**31 - 1))
def test_replacement_split_holds(mask, share, seed):
    random_fraction = (1 - mask) * share
    cfg = m.MaskingConfig(mask_fraction=mask, random_fraction=random_fraction)
    gen = m.generator(seed)
    ids = torch.randint(10, 200, (200, 64), generator=gen)
    targets = m.select_token_targets(torch.ones_like(ids, dtype=torch.bool), 0.5, gen)
    corrupted, kinds = m.corrupt(ids, targets, MASK_ID, RANDOM_IDS, cfg, gen)
    n = targets.sum().item()
    for kind, expected in ((m.MASKED, mask), (m.RANDOM, random_fraction), (m.UNCHANGED, 1 - mask - random_fraction)):
        got = ((kinds == kind) & targets).sum().item() / n
        assert abs(got - expected) < 5 * math.sqrt(max(expected * (1 - expected), 1e-4) / n) + 1e-9
    assert ((kinds == m.KEEP) == ~targets).all()
    assert (corrupted[kinds == m.MASKED] == MASK_ID).all()
    assert (corrupted[kinds == m.UNCHANGED] == ids[kinds == m.UNCHANGED]).all()
    assert (corrupted[~targets] == ids[~targets]).all()
    assert torch.isin(corrupted[kinds == m.RANDOM], RANDOM_IDS).all()  # never a special token


def test_mlm_batch_labels_only_at_targets():
    gen = m.generator(0)
    ids = torch.randint(10, 200, (64, 32), generator=gen)
    maskable = torch.ones_like(ids, dtype=torch.bool)
    maskable[:, 0] = maskable[:, 20:] = False
    corrupted, labels = m.mlm_batch(ids, maskable, MASK_ID, RANDOM_IDS, m.MaskingConfig(), gen)
    assert (labels[~maskable] == -100).all()
    assert (corrupted[~maskable] == ids[~maskable]).all()
    assert (labels[labels != -100] == ids[labels != -100]).all()


def test_token_statistics_match_transformers_collator(bundled):
    """Our token masking and DataCollatorForLanguageModeling, same settings: same target rate, same split."""
    from transformers import DataCollatorForLanguageModeling

    tok = bundled("bert").tokenizer
    enc = tok([DEFAULT_TEXT] * 600, return_special_tokens_mask=True)
    ids = torch.tensor(enc["input_ids"])  # (N, T)
    special = torch.tensor(enc["special_tokens_mask"]).bool()
    collator = DataCollatorForLanguageModeling(tok, mlm_probability=0.15, mask_replace_prob=0.8,
                                               random_replace_prob=0.1, seed=0, return_tensors="pt")
    batch = collator([{"input_ids": i, "special_tokens_mask": s} for i, s in zip(enc["input_ids"], enc["special_tokens_mask"])])
    hf_targets = batch["labels"] != -100
    hf_in = batch["input_ids"]

    cfg = m.MaskingConfig(mlm_probability=0.15, mask_fraction=0.8, random_fraction=0.1)
    ours_in, ours_labels = m.mlm_batch(ids, ~special, tok.mask_token_id, m.replacement_ids(tok), cfg, m.generator(0))
    our_targets = ours_labels != -100

    def stats(targets, fed):
        n = targets.sum().item()
        masked = ((fed == tok.mask_token_id) & targets).sum().item() / n
        unchanged = ((fed == ids) & targets).sum().item() / n
        return targets.sum().item() / (~special).sum().item(), masked, 1 - masked - unchanged, unchanged

    hf, ours = stats(hf_targets, hf_in), stats(our_targets, ours_in)
    assert not (hf_targets & special).any() and not (our_targets & special).any()
    n = min(hf_targets.sum().item(), our_targets.sum().item())
    for a, b, expected in zip(hf, ours, (0.15, 0.8, 0.1, 0.1)):
        tol = 5 * math.sqrt(expected * (1 - expected) / n) * 2
        assert abs(a - expected) < tol and abs(b - expected) < tol and abs(a - b) < tol


# ----------------------------------------------------------------------------- whole words and spans


@FAST
@given(pieces=words_strategy, p=st.floats(0.05, 0.9), seed=st.integers(0, 2**31 - 1))
def test_whole_word_and_span_masking_never_split_a_word(pieces, p, seed):
    enc = fake_encoded(pieces, pad=3)
    for unit in ("word", "span"):
        sim = m.simulate(enc, unit, m.MaskingConfig(mlm_probability=p), seed, n_copies=5, n_draws=20)
        assert m.split_words(sim.targets, enc.word_ids)[0] == 0
        assert not sim.targets[:, :, ~enc.maskable].any()  # specials and padding never targets
        copy = m.mask_copy(enc, unit, m.MaskingConfig(mlm_probability=p), MASK_ID, RANDOM_IDS, m.generator(seed))
        assert m.split_words(copy.targets, enc.word_ids)[0] == 0
        assert not copy.targets[~enc.maskable].any()


def test_token_masking_does_split_words():
    enc = fake_encoded([3] * 30)
    sim = m.simulate(enc, "token", m.MaskingConfig(), 0, n_copies=4, n_draws=50)
    split, chosen = m.split_words(sim.targets, enc.word_ids)
    assert 0 < split <= chosen


def test_whole_word_rate_per_token():
    enc = fake_encoded([1, 2, 3, 1, 4] * 8)
    sim = m.simulate(enc, "word", m.MaskingConfig(mlm_probability=0.2), 1, n_copies=40, n_draws=200)
    assert abs(sim.targets[:, :, enc.maskable].float().mean().item() - 0.2) < 0.01


def test_span_length_distribution_is_the_truncated_geometric():
    assert m.clipped_geometric_mean(0.2, 10) == pytest.approx(3.797, abs=1e-3)  # SpanBERT: "mean 3.8"
    assert m.clipped_geometric_mean(1.0, 10) == 1.0
    pmf = m.span_length_pmf(0.2, 10)
    assert sum(pmf) == pytest.approx(1.0) and all(a > b for a, b in zip(pmf, pmf[1:]))
    n = 100_000
    lengths = m.sample_span_lengths(n, 0.2, 10, m.generator(0))
    assert lengths.min() >= 1 and lengths.max() <= 10
    counts = torch.bincount(lengths, minlength=11)[1:].double()
    expected = torch.tensor(pmf, dtype=torch.double) * n
    chi2 = ((counts - expected) ** 2 / expected).sum().item()
    assert chi2 < 30  # 9 degrees of freedom: P(chi2 > 30) < 0.001
    assert lengths.double().mean().item() == pytest.approx(3.797, abs=0.03)


@FAST
@given(span_p=st.floats(0.05, 1.0), max_span=st.integers(1, 10), u=st.floats(0.0, 0.999999))
def test_scalar_and_vector_span_length_agree(span_p, max_span, u):
    q = 1.0 - span_p
    mass = 1.0 - q**max_span if span_p < 1 else 1.0
    cdf = [sum(m.span_length_pmf(span_p, max_span)[:k]) for k in range(1, max_span + 1)]
    length = m._span_length(u, span_p, max_span)
    assert 1 <= length <= max_span
    # inverse CDF: the smallest k with F(k) > u (up to rounding at the edges)
    expected = next((k for k, c in enumerate(cdf, 1) if c > u + 1e-9), max_span)
    assert abs(length - expected) <= 1 if mass else True


@FAST
@given(pieces=words_strategy, p=st.floats(0.05, 0.9), span_p=st.floats(0.1, 1.0), max_span=st.integers(1, 10),
       seed=st.integers(0, 2**31 - 1))
def test_spans_are_contiguous_runs_of_whole_words(pieces, p, span_p, max_span, seed):
    enc = fake_encoded(pieces)
    span_ids, lengths = m.place_spans(list(enc.word_ids), p, span_p, max_span, m.generator(seed))
    assert all(1 <= n <= max_span for n in lengths)
    for s, n in enumerate(lengths):
        words = sorted({enc.word_ids[i] for i in (span_ids == s).nonzero().flatten().tolist()})
        assert words == list(range(words[0], words[0] + n))  # n consecutive words
    targets, lengths2 = m.select_span_targets(list(enc.word_ids), p, span_p, max_span, m.generator(seed))
    assert torch.equal(targets, span_ids >= 0) and lengths2 == lengths


def test_span_rate_on_single_piece_words():
    enc = fake_encoded([1] * 100)
    sim = m.simulate(enc, "span", m.MaskingConfig(mlm_probability=0.15), 0, n_copies=10, n_draws=100)
    assert abs(sim.targets[:, :, enc.maskable].float().mean().item() - 0.15) < 0.01
    assert 2.5 < sum(sim.span_lengths) / len(sim.span_lengths) <= 3.8  # the budget cuts the last span short


def test_span_replacement_is_decided_per_span():
    enc = fake_encoded([1] * 60)
    ids = torch.tensor(enc.input_ids)
    kinds_of_spans = []
    for seed in range(300):
        gen = m.generator(seed)
        span_ids, _ = m.place_spans(list(enc.word_ids), 0.3, 0.2, 10, gen)
        _, kinds = m.corrupt_spans(ids, span_ids, MASK_ID, RANDOM_IDS, m.MaskingConfig(), gen)
        for s in range(int(span_ids.max()) + 1):
            k = kinds[span_ids == s].unique()
            assert len(k) == 1  # one decision for the whole span
            kinds_of_spans.append(int(k))
    n = len(kinds_of_spans)
    assert abs(kinds_of_spans.count(m.MASKED) / n - 0.8) < 5 * math.sqrt(0.16 / n)
    assert abs(kinds_of_spans.count(m.RANDOM) / n - 0.1) < 5 * math.sqrt(0.09 / n)


# ----------------------------------------------------------------------------- epochs and coverage


def test_copy_schedule():
    assert [m.copy_index("static", e) for e in range(25)] == [0] * 25
    assert [m.copy_index("static10", e) for e in range(25)] == [e % 10 for e in range(25)]
    assert [m.copy_index("dynamic", e) for e in range(25)] == list(range(25))
    assert (m.distinct_copies("static", 40), m.distinct_copies("static10", 40), m.distinct_copies("dynamic", 40)) == (1, 10, 40)
    with pytest.raises(ValueError):
        m.copy_index("sometimes", 0)


@pytest.mark.parametrize("unit", m.UNITS)
def test_static_masks_repeat_and_dynamic_ones_differ(unit):
    enc = fake_encoded([1, 2, 1, 3] * 10)
    cfg = m.MaskingConfig()
    plans = {s: m.epoch_plan(enc, s, unit, 25, cfg, 7, MASK_ID, RANDOM_IDS) for s in m.STRATEGIES}
    static, static10, dynamic = plans["static"], plans["static10"], plans["dynamic"]
    assert all(torch.equal(static.corrupted[e], static.corrupted[0]) for e in range(25))
    assert all(torch.equal(static10.corrupted[e], static10.corrupted[e % 10]) for e in range(25))
    assert len({tuple(r) for r in static10.targets[:10].tolist()}) > 1
    assert len({tuple(r) for r in dynamic.targets.tolist()}) >= 20  # fresh masks (a repeat is rare, not impossible)
    assert torch.equal(dynamic.corrupted[:10], static10.corrupted[:10])  # copy c is the same draw for both
    again = m.epoch_plan(enc, "dynamic", unit, 25, cfg, 7, MASK_ID, RANDOM_IDS)
    assert torch.equal(again.corrupted, dynamic.corrupted)  # seeded
    times, distinct = m.times_targeted(static10)
    assert (distinct <= 10).all() and (times >= distinct).all()
    assert torch.equal(times, static10.targets.sum(0))


def test_coverage_curves_follow_the_analytic_law():
    enc = fake_encoded([1] * 30)
    sim = m.simulate(enc, "token", m.MaskingConfig(mlm_probability=0.15), 0)
    for s in m.STRATEGIES:
        got = m.coverage_curve(sim, s, 40)
        want = m.analytic_coverage(0.15, s, 40)
        assert all(b >= a - 1e-12 for a, b in zip(got, got[1:]))  # coverage never shrinks
        assert max(abs(a - b) for a, b in zip(got, want)) < 0.02
    static10 = m.coverage_curve(sim, "static10", 40)
    assert static10[9] == pytest.approx(static10[39], abs=1e-12)  # nothing new after the 10th copy
    assert m.analytic_coverage(0.15, "static", 5) == [pytest.approx(0.15)] * 5
    assert m.analytic_coverage(0.15, "dynamic", 40)[-1] == pytest.approx(1 - 0.85**40)


def test_simulation_draws_scale_with_length():
    assert m.draws_for(fake_encoded([1] * 10)) == m.LAB.n_draws
    assert 20 <= m.draws_for(fake_encoded([1] * 126)) < m.LAB.n_draws


# ----------------------------------------------------------------------------- tokenization and input checks


@pytest.mark.parametrize("key", ["bert", "roberta", "albert", "distilbert", "electra-generator"])
def test_encode_with_every_masked_lm_tokenizer(bundled, key):
    from app.models import catalogue

    if not catalogue.get(key).bundled_available():
        pytest.skip(f"no bundled {key} checkpoint here")
    tok = bundled(key).tokenizer
    enc = m.encode(tok, DEFAULT_TEXT)
    assert len(enc.input_ids) == len(enc.tokens) == len(enc.special) == len(enc.word_ids)
    assert all((w is None) == s for w, s in zip(enc.word_ids, enc.special))
    assert sorted({w for w in enc.word_ids if w is not None}) == list(range(enc.n_words))
    assert not enc.truncated and enc.n_unknown == 0
    if catalogue.get(key).family != "roberta":  # byte-level BPE also splits punctuation off a word, unmarked
        assert m._word_ids_from_pieces(list(enc.tokens), list(enc.special)) == list(enc.word_ids)
    long = m.encode(tok, DEFAULT_TEXT * 20, cap=64)
    assert long.truncated and len(long.input_ids) == 64 and long.n_tokens_full > 64
    assert long.special[0] or long.special[-1]  # the special tokens survive truncation
    typed = m.encode(tok, f"the {tok.mask_token} ran {tok.cls_token or tok.bos_token}")
    assert typed.n_typed_special == 2 and sum(typed.special) == sum(enc.special[:1] + enc.special[-1:]) + 2
    assert all(w is None for w, t in zip(typed.word_ids, typed.tokens) if t in (tok.mask_token, tok.cls_token, tok.bos_token))
    rid = m.replacement_ids(tok)
    assert not torch.isin(rid, torch.tensor(tok.all_special_ids)).any()


def test_unusual_characters():
    assert m.unusual_characters(DEFAULT_TEXT) == {}
    found = m.unusual_characters("The cat 😀 saw 東京 and שלום and مرحبا.")
    assert set(found) == {"emoji", "CJK", "right-to-left"}
    assert "😀" in found["emoji"] and "東" in found["CJK"] and "ש" in found["right-to-left"]


def test_fill_masks_shapes_and_probabilities(bundled):
    loaded = bundled("bert")
    tok = loaded.tokenizer
    enc = m.encode(tok, DEFAULT_TEXT)
    ids = torch.tensor(enc.input_ids)
    copy = m.mask_copy(enc, "token", m.MaskingConfig(mlm_probability=0.4), tok.mask_token_id,
                       m.replacement_ids(tok), m.generator(3))
    preds = m.fill_masks(loaded.model, copy.corrupted, copy.targets, ids, copy.kinds, k=5)
    assert [p.position for p in preds] == copy.targets.nonzero().flatten().tolist()
    for p in preds:
        assert len(p.top_ids) == 5 and list(p.top_probs) == sorted(p.top_probs, reverse=True)
        assert 0 < sum(p.top_probs) <= 1 + 1e-6 and 0 <= p.p_original <= 1
        assert (p.rank_original == 1) == (p.top_ids[0] == p.original_id) or p.p_original == p.top_probs[0]
        if p.original_id in p.top_ids:
            assert p.rank_original == p.top_ids.index(p.original_id) + 1
    none = torch.zeros_like(copy.targets)
    assert m.fill_masks(loaded.model, copy.corrupted, none, ids, copy.kinds) == []


@pytest.mark.trained
@pytest.mark.parametrize("key", ["bert", "roberta", "distilbert"])
def test_trained_model_recovers_easy_masked_words(bundled, key):
    """Mask 'park' in the default sentence: a trained model has it in its top 10. ('ball' after 'red' is
    too hard for these few-million-parameter models: the bundled BERT ranks it about 15th. The ELECTRA
    generator is left out: a quarter of the discriminator's width by design, it only has to propose
    plausible replacements; tests/test_checkpoints.py checks that it beats the unigram baseline.)"""
    loaded = bundled(key)
    tok = loaded.tokenizer
    enc = m.encode(tok, DEFAULT_TEXT)
    ids = torch.tensor(enc.input_ids)
    pieces = [t.lstrip("Ġ▁").lower() for t in enc.tokens]
    for word in ("park",):
        targets = torch.tensor([t == word for t in pieces]) & enc.maskable
        assert targets.sum() == 1
        fed = torch.where(targets, torch.full_like(ids, tok.mask_token_id), ids)
        (pred,) = m.fill_masks(loaded.model, fed, targets, ids, torch.where(targets, m.MASKED, m.KEEP), k=10)
        assert pred.rank_original <= 10, (word, tok.convert_ids_to_tokens(list(pred.top_ids)))


# ----------------------------------------------------------------------------- figures (on their data)


def test_grid_figure_data():
    tokens = ["<s>", "the", "cat", "</s>"]
    special = [True, False, False, True]
    kinds = [[0, m.MASKED, 0, 0], [0, 0, m.RANDOM, 0]]
    shown = [["<s>", "<mask>", "cat", "</s>"], ["<s>", "the", "<b>dog", "</s>"]]
    fig = figs.epoch_grid_figure(tokens, special, kinds, shown, [0, 1], highlight=1)
    z = fig.data[0].z
    assert [list(r) for r in z] == [[figs.SPECIAL, m.MASKED, m.KEEP, figs.SPECIAL], [figs.SPECIAL, m.KEEP, m.RANDOM, figs.SPECIAL]]
    assert fig.data[0].text[0][1] == "&lt;mask&gt;" and fig.data[0].text[1][2] == "&lt;b&gt;dog"  # escaped
    assert list(fig.data[0].x) == ["0·&lt;s&gt;", "1·the", "2·cat", "3·&lt;/s&gt;"]
    assert fig.data[0].customdata[1][2][3] == 2  # masked copy, 1-based
    assert len(fig.layout.shapes) == 1 and fig.layout.shapes[0].y0 == 0.5


def test_coverage_and_distinct_figures_data():
    sim = {"static": [0.15, 0.15], "static10": [0.15, 0.28], "dynamic": [0.15, 0.28]}
    ana = {s: [0.15, 0.2775] for s in sim}
    fig = figs.coverage_figure(sim, ana, 200, mark_epoch=2)
    assert len(fig.data) == 6 and list(fig.data[2].y) == [0.15, 0.28] and list(fig.data[3].y) == [0.15, 0.2775]
    fig = figs.distinct_masks_figure(["[CLS]", "a", "b", "[SEP]"], [True, False, False, True],
                                     {"static": [0, 1, 0, 0], "dynamic": [0, 2, 3, 0]},
                                     {"static": [0, 5, 0, 0], "dynamic": [0, 2, 3, 0]}, 5)
    assert list(fig.data[1].y) == [2, 3] and list(fig.data[0].customdata) == [5, 0] and list(fig.data[0].x) == ["1·a", "2·b"]


def test_span_and_prediction_figures_data():
    pmf = m.span_length_pmf(0.2, 3)
    fig = figs.span_length_figure(pmf, [50, 30, 20], [8, 2, 0], {"expected": 1.7})
    assert list(fig.data[0].y) == [0.5, 0.3, 0.2] and list(fig.data[1].y) == [0.8, 0.2, 0.0] and list(fig.data[2].y) == pmf
    fig = figs.predictions_figure(["1·ball"], [["ball", "toy"]], [[0.5, 0.2]], [[True, False]])
    assert [list(r) for r in fig.data[0].z] == [[0.5, 0.2]] and fig.data[0].text[0][0] == "ball ✓"
