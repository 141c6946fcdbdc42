"""app/mlm.py: the one top-k at masked positions, checked against the model's own forward and softmax."""

from __future__ import annotations

import math

import pytest
import torch

from app import mlm
from app.core import text as txt

TEXT = "The little girl found a red ball in the park."


class Vocab:
    """A tokenizer's two calls that a Prediction needs, over a made-up vocabulary."""

    all_special_ids = [0]
    unk_token_id = 1
    pieces = ["[CLS]", "[UNK]", "Ġball", "##co", "▁The", "park"]

    def convert_ids_to_tokens(self, ids):
        return self.pieces[ids] if isinstance(ids, int) else [self.pieces[i] for i in ids]

    def convert_tokens_to_string(self, tokens):
        return "".join(tokens).replace("Ġ", " ").replace("▁", " ")


def test_top_k_is_best_first_with_pieces_as_stored_and_as_read():
    probs = torch.tensor([0.05, 0.05, 0.4, 0.12, 0.3, 0.08])  # (V,)
    p = mlm.top_k(probs, Vocab(), 3)
    assert p.ids == (2, 4, 3) and p.pieces == ("Ġball", "▁The", "##co") and p.words == ("ball", "The", "##co")
    assert p.probabilities == pytest.approx((0.4, 0.3, 0.12))
    assert p.read == tuple(zip(p.words, p.probabilities)) and p.raw == tuple(zip(p.pieces, p.probabilities))
    assert p.top(2) == mlm.Prediction(p.ids[:2], p.pieces[:2], p.words[:2], p.probabilities[:2])
    assert len(mlm.top_k(probs, Vocab(), 50).ids) == 6  # never more than the vocabulary
    assert mlm.predictions(torch.stack([probs, probs.flip(0)]), Vocab(), 1)[1].ids == (3,)  # one per row
    assert mlm.predictions(torch.zeros(0, 6), Vocab(), 3) == ()


def test_rank_counts_the_strictly_likelier_pieces():
    probs = torch.tensor([0.1, 0.4, 0.1, 0.4])
    assert [mlm.rank(probs, i) for i in range(4)] == [3, 1, 3, 1]


def test_a_word_fill_multiplies_its_pieces_and_joins_the_best_fill():
    probs = torch.tensor(
        [[0.0, 0.1, 0.6, 0.1, 0.1, 0.1], [0.0, 0.1, 0.1, 0.5, 0.2, 0.1]]
    )  # (n=2, V): "Ġball" then "##co" are likeliest
    w = mlm.fill_word(Vocab(), probs, [4, 3], k=2)
    assert w.pieces == ("▁The", "##co") and w.original == "The" and w.n_pieces == 2
    assert w.p_pieces == pytest.approx((0.1, 0.5)) and w.p_word == pytest.approx(0.05)
    assert w.rank == 2 and w.first.ids[0] == 2  # the original first piece (0.1) stands behind 0.6 only
    assert w.best_fill == "ball##co" and not w.unknown
    assert w.top(1).first == w.first.top(1) and w.top(1).p_word == w.p_word
    assert mlm.fill_word(Vocab(), probs, [1, 3], k=2).unknown
    assert mlm.NO_PIECE.n_pieces == 0 and math.isnan(mlm.NO_PIECE.p_word)


def test_with_masks_copies():
    ids = torch.tensor([[5, 6, 7, 8]])
    masked = mlm.with_masks(ids, [1, 3], 0)
    assert masked.tolist() == [[5, 0, 7, 0]] and ids.tolist() == [[5, 6, 7, 8]]


@pytest.mark.parametrize("key", ["bert", "roberta"])
def test_probabilities_at_are_the_models_softmax_at_the_masked_positions(bundled, key):
    loaded = bundled(key)
    tok, model = loaded.tokenizer, loaded.model
    tk = txt.tokenize(tok, TEXT)
    where = tk.pieces_of(6)  # "ball"
    ids = mlm.with_masks(torch.tensor([tk.ids]), where, tok.mask_token_id)  # (1, T)
    probs = mlm.probabilities_at(model, {"input_ids": ids}, where)  # (n, V)
    with torch.no_grad():
        expected = torch.softmax(model(input_ids=ids).logits[0, where], -1)
    assert probs.shape == (len(where), model.config.vocab_size) and probs.dtype == torch.float32
    assert torch.allclose(probs, expected, atol=1e-6)
    p = mlm.top_k(probs[0], tok, 5)
    assert list(p.ids) == expected[0].topk(5).indices.tolist()
    assert p.pieces == tuple(tok.convert_ids_to_tokens(list(p.ids)))
    assert p.words == tuple(txt.piece_text(tok, i) for i in p.ids)
    assert mlm.rank(probs[0], p.ids[0]) == 1
