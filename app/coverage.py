"""Coverage: over many epochs, how much of a sentence has ever been a prediction target.

A position teaches the masked LM something only in the epochs where it is a target. If an epoch
trains on one of k *distinct* masks, each drawn at rate p, a position has been a target at least once
with probability 1 - (1 - p)^k: a static mask (BERT at preprocessing, k = 1) stays at p, BERT's ×10
duplication stops at 1 - (1 - p)^10, and RoBERTa's dynamic masking (k = epochs) keeps climbing.
:func:`simulate` draws many independent masked copies of one sentence's layout with the rules of
app/masking.py; :func:`coverage_curve` measures coverage when epoch e trains on copy ``copies[e]``,
and :func:`analytic_coverage` is the law above. Pure: no streamlit.
"""

from __future__ import annotations

from app.core import preload  # noqa: F401  (first: the heavy imports, once, in one thread)

preload.load()  # before torch: a page that imports this module first (or a script) gets the imports in one thread

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import torch

from app import masking
from app.masking import MaskingConfig
from app.core.text import Tokenized


@dataclass(frozen=True)
class CoverageDefaults:
    n_draws: int = 200  # independent draws behind a curve (fewer for long sentences) ...
    positions: int = 6400  # ... so that draws × maskable positions stays about this
    min_draws: int = 20


DEFAULTS = CoverageDefaults()


@dataclass(frozen=True)
class Simulation:
    """``n_draws`` independent draws of ``n_copies`` masked copies of one sentence's layout."""

    targets: torch.Tensor  # (n_draws, n_copies, T) bool
    maskable: torch.Tensor  # (T,) bool
    span_lengths: tuple[int, ...]  # every placed span, in words (span masking only)

    @property
    def rate(self) -> float:
        """The share of maskable positions that were targets, over every draw and copy."""
        return float(self.targets[:, :, self.maskable].float().mean()) if self.maskable.any() else 0.0


def maskable(sentence: Tokenized) -> torch.Tensor:
    """(T,) bool: True where a position may be a target (not a special token, typed or added)."""
    return ~torch.tensor(sentence.special, dtype=torch.bool)


def draws_for(n_maskable: int) -> int:
    """How many independent draws :func:`simulate` makes by default: ``n_draws``, fewer for a long
    sentence (each draw already averages over many positions), never below ``min_draws``."""
    return max(DEFAULTS.min_draws, min(DEFAULTS.n_draws, DEFAULTS.positions // max(1, n_maskable)))


def simulate(
    sentence: Tokenized, unit: str, cfg: MaskingConfig, seed: int, n_copies: int, n_draws: int | None = None
) -> Simulation:
    """Targets of many independent draws (the replacement split does not matter for coverage).

    Token masking: Bernoulli(p) per position; whole words: Bernoulli(p) per word; spans: SpanBERT's
    loop per copy. Seeded by ``seed`` alone (its own stream, apart from the lab's masked copies).
    """
    keep = maskable(sentence)  # (T,)
    n_draws = draws_for(int(keep.sum())) if n_draws is None else n_draws
    gen = masking.generator(int(seed) * 1_000_003 + 999_983)
    T = len(sentence.ids)
    if unit == "token":
        targets = masking.select_token_targets(keep.expand(n_draws, n_copies, T), cfg.mlm_probability, gen)
        return Simulation(targets, keep, ())
    word = torch.tensor([-1 if w is None else w for w in sentence.word_of], dtype=torch.long)  # (T,)
    if unit == "word":
        n_words = int(word.max()) + 1 if T else 0
        chosen = torch.rand(n_draws, n_copies, max(n_words, 1), generator=gen) < cfg.mlm_probability  # (N, C, W)
        return Simulation(chosen[:, :, word.clamp_min(0)] & (word >= 0), keep, ())  # (N, C, T)
    if unit != "span":
        raise ValueError(f"unknown unit {unit!r}; expected one of {', '.join(masking.UNITS)}")
    words, pieces = masking.word_pieces(sentence.word_of)
    k = masking.uniforms_needed(sum(pieces), len(words), cfg.mlm_probability)
    u = torch.rand(n_draws * n_copies, k, generator=gen, dtype=torch.float64).tolist()
    rows, lengths = [], []
    for row in u:
        span_of, placed = masking.spans_from_uniforms(pieces, cfg.mlm_probability, cfg.span_p, cfg.max_span, row)
        rows.append(span_of or [-1])
        lengths += placed
    slot = torch.tensor([-1 if w is None else words.index(w) for w in sentence.word_of], dtype=torch.long)  # (T,)
    span_word = torch.from_numpy(np.array(rows, dtype=np.int64))  # (N * C, W') span index per word, -1 if none
    targets = (span_word[:, slot.clamp_min(0)] >= 0) & (slot >= 0)  # (N * C, T)
    return Simulation(targets.reshape(n_draws, n_copies, T), keep, tuple(lengths))


def coverage_curve(sim: Simulation, copies: Sequence[int]) -> list[float]:
    """Mean fraction of maskable positions that were a target at least once by epoch 1..E, when epoch e
    trains on masked copy ``copies[e]`` (each copy index < the simulation's n_copies). Returns (E,)."""
    seen = sim.targets[:, list(copies), :].long().cummax(dim=1).values  # (N, E, T) 1 once a target
    n = int(sim.maskable.sum())
    if n == 0:
        return [0.0] * len(copies)
    return (seen[:, :, sim.maskable].sum(-1).double() / n).mean(0).tolist()  # (E,)


def analytic_coverage(p: float, copies: Sequence[int]) -> list[float]:
    """1 - (1 - p)^k by epoch 1..E, with k the number of distinct copies among ``copies[:e]``."""
    out, seen = [], set()
    for c in copies:
        seen.add(c)
        out.append(1.0 - (1.0 - p) ** len(seen))
    return out


def words_split(targets: torch.Tensor, word_ids) -> tuple[int, int]:
    """(words split by the mask, words targeted) over every row of ``targets`` (..., T): a word is
    split when some of its pieces are targets and others are not (token masking does it; whole-word and
    span masking never do)."""
    idx = torch.tensor([-1 if w is None else w for w in word_ids], dtype=torch.long)  # (T,)
    n_words = int(idx.max()) + 1 if len(idx) else 0
    if n_words <= 0:
        return 0, 0
    rows = targets.reshape(-1, targets.shape[-1])[:, idx >= 0].long()  # (N, T') targets on word pieces
    word_of = idx[idx >= 0]
    hit = torch.zeros(rows.shape[0], n_words, dtype=torch.long).index_add_(1, word_of, rows)  # (N, W)
    size = torch.bincount(word_of, minlength=n_words)  # (W,)
    return int(((hit > 0) & (hit < size)).sum()), int((hit > 0).sum())
