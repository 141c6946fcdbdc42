"""Property tests of app/masking.py, the corruption rules (over many seeded draws): target rates, the
80/10/10 split, whole words and SpanBERT's spans, and agreement with transformers' own collator."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from app import masking as m

TEXT = "The little girl found a red ball in the park. She kicked it over the puddles to the wobbly treehouse."
FAST = settings(max_examples=25, deadline=None)
RANDOM_IDS = torch.arange(10, 200)
MASK_ID = 4
words_strategy = st.lists(st.integers(1, 4), min_size=1, max_size=40)


def word_ids_of(pieces_per_word: list[int], pad: int = 0) -> list[int | None]:
    """[CLS] w0 w0 w1 ... [SEP] [PAD]*pad as per-token word indices (None = special)."""
    out: list[int | None] = [None]
    for w, n in enumerate(pieces_per_word):
        out += [w] * n
    return out + [None] * (1 + pad)


# ----------------------------------------------------------------------------- configuration


def test_config_rejects_impossible_settings():
    with pytest.raises(ValueError, match="add up to at most 1"):
        m.MaskingConfig(mask_fraction=0.8, random_fraction=0.3)
    with pytest.raises(ValueError):
        m.MaskingConfig(mlm_probability=1.5)
    with pytest.raises(ValueError):
        m.MaskingConfig(span_p=0.0)
    assert m.MaskingConfig().unchanged_fraction == pytest.approx(0.1)
    assert m.MaskingConfig(mask_fraction=0.8, random_fraction=0.2).unchanged_fraction == pytest.approx(0.0, abs=1e-12)


def test_units_are_stated_once_with_their_labels():
    assert m.UNITS == ("token", "word", "span") == tuple(u for u, _ in m.UNIT_LABELS)


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


def test_a_seed_reproduces_a_batch():
    ids = torch.randint(10, 200, (8, 32), generator=m.generator(1))
    maskable = torch.ones_like(ids, dtype=torch.bool)
    a = m.mlm_batch(ids, maskable, MASK_ID, RANDOM_IDS, m.MaskingConfig(), m.generator(5))
    b = m.mlm_batch(ids, maskable, MASK_ID, RANDOM_IDS, m.MaskingConfig(), m.generator(5))
    assert torch.equal(a[0], b[0]) and torch.equal(a[1], b[1])


def test_token_statistics_match_transformers_collator(bundled):
    """Our token masking and DataCollatorForLanguageModeling, same settings: same target rate, same split."""
    from transformers import DataCollatorForLanguageModeling

    tok = bundled("bert").tokenizer
    enc = tok([TEXT] * 600, return_special_tokens_mask=True)
    ids = torch.tensor(enc["input_ids"])  # (N, T)
    special = torch.tensor(enc["special_tokens_mask"]).bool()
    collator = DataCollatorForLanguageModeling(
        tok, mlm_probability=0.15, mask_replace_prob=0.8, random_replace_prob=0.1, seed=0, return_tensors="pt"
    )
    batch = collator(
        [{"input_ids": i, "special_tokens_mask": s} for i, s in zip(enc["input_ids"], enc["special_tokens_mask"])]
    )
    hf_targets = batch["labels"] != -100
    hf_in = batch["input_ids"]

    random_ids = torch.tensor([i for i in range(len(tok)) if i not in set(tok.all_special_ids)])
    cfg = m.MaskingConfig(mlm_probability=0.15, mask_fraction=0.8, random_fraction=0.1)
    ours_in, ours_labels = m.mlm_batch(ids, ~special, tok.mask_token_id, random_ids, cfg, m.generator(0))
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


# ----------------------------------------------------------------------------- whole words


@FAST
@given(pieces=words_strategy, p=st.floats(0.05, 0.9), seed=st.integers(0, 2**31 - 1))
def test_whole_word_targets_take_every_piece_of_a_chosen_word(pieces, p, seed):
    word_ids = word_ids_of(pieces, pad=3)
    targets = m.select_word_targets(word_ids, p, m.generator(seed)).tolist()
    for w in range(len(pieces)):
        assert len({t for t, i in zip(targets, word_ids) if i == w}) == 1  # all or none of its pieces
    assert not any(t for t, i in zip(targets, word_ids) if i is None)


def test_whole_word_masking_with_no_words_chooses_nothing():
    assert not m.select_word_targets([None, None], 0.9, m.generator(0)).any()


# ----------------------------------------------------------------------------- spans (SpanBERT)


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
def test_scalar_span_length_is_the_inverse_cdf(span_p, max_span, u):
    cdf = [sum(m.span_length_pmf(span_p, max_span)[:k]) for k in range(1, max_span + 1)]
    length = m._span_length(u, span_p, max_span)
    assert 1 <= length <= max_span
    expected = next((k for k, c in enumerate(cdf, 1) if c > u + 1e-9), max_span)  # the smallest k with F(k) > u
    assert abs(length - expected) <= 1  # up to rounding at the edges


@FAST
@given(
    pieces=words_strategy,
    p=st.floats(0.05, 0.9),
    span_p=st.floats(0.1, 1.0),
    max_span=st.integers(1, 10),
    seed=st.integers(0, 2**31 - 1),
)
def test_spans_are_contiguous_runs_of_whole_words(pieces, p, span_p, max_span, seed):
    word_ids = word_ids_of(pieces)
    span_ids, lengths = m.place_spans(word_ids, p, span_p, max_span, m.generator(seed))
    assert all(1 <= n <= max_span for n in lengths)
    assert all(s == -1 for s, w in zip(span_ids.tolist(), word_ids) if w is None)  # specials never targets
    for s, n in enumerate(lengths):
        words = sorted({word_ids[i] for i in (span_ids == s).nonzero().flatten().tolist()})
        assert words == list(range(words[0], words[0] + n))  # n consecutive words
        for w in words:  # every piece of each of its words
            assert all(span_ids[i] == s for i, x in enumerate(word_ids) if x == w)
    again, _ = m.place_spans(word_ids, p, span_p, max_span, m.generator(seed))
    assert torch.equal(again, span_ids)


def test_spans_skip_word_indices_that_have_no_piece():
    """A typed special token leaves a gap in the word indices: spans run over the words that are there."""
    word_ids = [None, 0, 1, None, 5, 6, 6, 7, None]
    assert m.word_pieces(word_ids) == ([0, 1, 5, 6, 7], [1, 1, 1, 2, 1])
    for seed in range(50):
        span_ids, lengths = m.place_spans(word_ids, 0.9, 0.2, 10, m.generator(seed))
        assert all(s == -1 for s, w in zip(span_ids.tolist(), word_ids) if w is None)
        assert sum(lengths) == len({w for s, w in zip(span_ids.tolist(), word_ids) if s >= 0})


def test_span_replacement_is_decided_per_span():
    word_ids = word_ids_of([1] * 60)
    ids = torch.tensor([1 if w is None else 10 + i for i, w in enumerate(word_ids)])
    kinds_of_spans = []
    for seed in range(300):
        gen = m.generator(seed)
        span_ids, _ = m.place_spans(word_ids, 0.3, 0.2, 10, gen)
        _, kinds = m.corrupt_spans(ids, span_ids, MASK_ID, RANDOM_IDS, m.MaskingConfig(), gen)
        for s in range(int(span_ids.max()) + 1):
            k = kinds[span_ids == s].unique()
            assert len(k) == 1  # one decision for the whole span
            kinds_of_spans.append(int(k))
        assert (kinds[span_ids < 0] == m.KEEP).all()
    n = len(kinds_of_spans)
    assert abs(kinds_of_spans.count(m.MASKED) / n - 0.8) < 5 * math.sqrt(0.16 / n)
    assert abs(kinds_of_spans.count(m.RANDOM) / n - 0.1) < 5 * math.sqrt(0.09 / n)
