"""Masked-LM predictions: what a model guesses at the positions it was asked about.

A masked LM (BERT, RoBERTa, ALBERT, DistilBERT, ELECTRA's generator, DeBERTa, ModernBERT) returns logits
(1, T, V) over its vocabulary at every position; its guess at a masked position is the softmax there.
XLNet returns one row per target of ``target_mapping`` instead (no mask token), which the same functions
read. Every lesson that shows guesses goes through here:

- :func:`probabilities_at`: one forward, the softmax at the given positions, float32 on the CPU;
- :func:`top_k` / :func:`predictions`: the ``k`` likeliest pieces at one row / every row, as
  :class:`Prediction`, each piece kept as the vocabulary stores it ("Ġball", "##co") and as a person
  reads it ("ball", decoded once by :func:`app.core.text.piece_text`);
- :func:`rank`: where the original piece stands (1 = the model's first choice);
- :func:`fill_word` / :class:`WordFill`: a word whose every piece is masked at once (the model is told
  how long it is), each piece guessed on its own: the top-k of the first piece, P(word) as the product
  of the pieces' probabilities (independent guesses, not a joint probability), the best fill.

Pure: no streamlit.
"""

from __future__ import annotations

from app.core import preload  # noqa: F401  (first: the heavy imports, once, in one thread)

preload.load()  # before torch: a page that imports this module first (or a script) gets the imports in one thread

from dataclasses import dataclass, replace
from typing import Sequence

import torch

from app.core import text as txt
from app.models import device as devices


@dataclass(frozen=True)
class Prediction:
    """A masked LM's ``k`` likeliest pieces at one position, best first."""

    ids: tuple[int, ...]  # (k,) vocabulary ids
    pieces: tuple[str, ...]  # (k,) as the vocabulary stores them: "Ġball", "##co", "▁The", "[SEP]"
    words: tuple[str, ...]  # (k,) as read: "ball", "##co", "The", "[SEP]"
    probabilities: tuple[float, ...]  # (k,) in [0, 1], descending

    def top(self, k: int) -> "Prediction":
        """The same prediction cut to its ``k`` best guesses."""
        return Prediction(self.ids[:k], self.pieces[:k], self.words[:k], self.probabilities[:k])

    @property
    def read(self) -> tuple[tuple[str, float], ...]:
        """(word as read, probability) per guess, best first."""
        return tuple(zip(self.words, self.probabilities))

    @property
    def raw(self) -> tuple[tuple[str, float], ...]:
        """(piece as stored, probability) per guess, best first."""
        return tuple(zip(self.pieces, self.probabilities))


NOTHING = Prediction((), (), (), ())


def probabilities(logits: torch.Tensor) -> torch.Tensor:
    """softmax over the vocabulary, float32 on the CPU. (..., V) -> (..., V)"""
    return torch.softmax(logits.float(), dim=-1).cpu()


def probabilities_at(model, inputs: dict, positions: Sequence[int] | None = None) -> torch.Tensor:
    """One forward of ``model`` on one sequence and its softmax at ``positions``. (n, V) float32 on the CPU.

    inputs: the forward's keyword arguments, (1, T) tensors on the model's device (XLNet's ``perm_mask`` and
    ``target_mapping`` included). positions: rows of the (T, V) logits to keep; None keeps every row the
    model returns (XLNet with ``target_mapping`` returns one row per target).
    """
    with devices.forward(model):
        logits = model(**inputs).logits[0]  # (T, V), or (n, V) with target_mapping
        if positions is not None:
            logits = logits[list(positions)]  # (n, V)
    return probabilities(logits)


def top_ids(probs: torch.Tensor, k: int) -> tuple[torch.Tensor, torch.Tensor]:
    """The ``k`` largest entries of every row (``k`` at most the vocabulary): (values (..., k), ids (..., k))."""
    top = probs.topk(min(k, probs.shape[-1]), dim=-1)
    return top.values, top.indices


def top_k(probs: torch.Tensor, tokenizer, k: int) -> Prediction:
    """The ``k`` likeliest pieces of one distribution. probs: (V,)"""
    values, ids = top_ids(probs, k)  # (k,), (k,)
    ids_ = tuple(int(i) for i in ids.tolist())
    return Prediction(
        ids_,
        tuple(tokenizer.convert_ids_to_tokens(list(ids_))),
        tuple(txt.piece_text(tokenizer, i) for i in ids_),
        tuple(float(v) for v in values.tolist()),
    )


def predictions(probs: torch.Tensor, tokenizer, k: int) -> tuple[Prediction, ...]:
    """:func:`top_k` of every row. probs: (n, V) -> n predictions."""
    return tuple(top_k(row, tokenizer, k) for row in probs)


def rank(probs: torch.Tensor, token_id: int) -> int:
    """Where ``token_id`` stands in one distribution (V,): 1 = the likeliest; ties count in its favour."""
    return int((probs > probs[int(token_id)]).sum()) + 1


def with_masks(input_ids: torch.Tensor, positions: Sequence[int], mask_token_id: int) -> torch.Tensor:
    """A copy of ``input_ids`` (1, T) with the mask token at ``positions``. (1, T) -> (1, T)"""
    masked = input_ids.clone()
    masked[0, list(positions)] = mask_token_id
    return masked


# ----------------------------------------------------------------------------- a word, every piece masked


@dataclass(frozen=True)
class WordFill:
    """A masked LM's guess for one word with all its pieces masked at once, each guessed on its own.
    ``pieces`` is () when the tokenizer kept no piece of the word (:data:`NO_PIECE`)."""

    pieces: tuple[str, ...]  # (n,) the word's own pieces, as the vocabulary stores them
    original: str  # its first piece, as read
    first: Prediction  # the top-k at the first piece
    p_pieces: tuple[float, ...]  # (n,) P(the original piece) at each masked position
    p_word: float  # their product (nan without pieces)
    rank: int  # of the original first piece in the first piece's distribution (1 = top)
    best_fill: str  # the likeliest piece at every masked position, joined as the tokenizer writes them
    unknown: bool  # the word is (partly) the unknown token: its "original" is not a real word

    @property
    def n_pieces(self) -> int:
        return len(self.pieces)

    def top(self, k: int) -> "WordFill":
        """The same guess with only the first piece's ``k`` best guesses."""
        return replace(self, first=self.first.top(k))


NO_PIECE = WordFill((), "", NOTHING, (), float("nan"), 0, "", False)


def fill_word(tokenizer, probs: torch.Tensor, gold: Sequence[int], k: int) -> WordFill:
    """What ``probs`` (n, V), one distribution per masked piece of a word whose original ids are ``gold``
    (n,), say about that word."""
    gold = [int(g) for g in gold]
    p_gold = probs[torch.arange(len(gold)), torch.tensor(gold)]  # (n,)
    best = probs.argmax(-1).tolist()  # (n,)
    return WordFill(
        pieces=tuple(tokenizer.convert_ids_to_tokens(gold)),
        original=txt.piece_text(tokenizer, gold[0]),
        first=top_k(probs[0], tokenizer, k),
        p_pieces=tuple(float(p) for p in p_gold.tolist()),
        p_word=float(p_gold.prod()),
        rank=rank(probs[0], gold[0]),
        best_fill=tokenizer.convert_tokens_to_string(tokenizer.convert_ids_to_tokens(best)).strip(),
        unknown=tokenizer.unk_token_id in gold,
    )
