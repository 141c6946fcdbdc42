"""Masked-language-model corruption: which positions become prediction targets, and what they become.

The rules only: the training recipes (app/training/) apply them to batches, the masking lab
(app/lessons/masking.py) to one sentence over many epochs, and app/coverage.py to many seeded draws. Every
function is pure and takes an explicit ``torch.Generator``, so a seed reproduces a draw exactly.

Vocabulary (as in transformers' ``DataCollatorForLanguageModeling`` and the papers):

- ``mlm_probability``: the chance that a position is a prediction *target* (BERT: 0.15).
- Of the targets, ``mask_fraction`` become the mask token, ``random_fraction`` a random token and the
  rest stay unchanged (BERT's *80/10/10* rule), so the model cannot trust any token it is shown.
- What a target is: a word piece (BERT, ``select_token_targets``), a whole word — every piece of a
  chosen word (BERT-wwm, ``select_word_targets``) — or a *span* of whole words whose length in words is
  Geometric(``span_p``) truncated at ``max_span`` (SpanBERT, ``place_spans``; mean 3.8 for p = 0.2,
  max 10). SpanBERT decides the 80/10/10 split once per span (``corrupt_spans``).
- Special tokens and padding are never targets.

Kinds returned by :func:`corrupt` (one small int per position): ``KEEP`` (not a target), ``MASKED``
(target shown as the mask token), ``RANDOM`` (target shown as a random token), ``UNCHANGED`` (target
shown as itself).
"""

from __future__ import annotations

from app.core import preload  # noqa: F401  (first: the heavy imports, once, in one thread)

preload.load()  # before torch: a page that imports this module first (or a script) gets the imports in one thread

import math
from dataclasses import dataclass

import torch

KEEP, MASKED, RANDOM, UNCHANGED = 0, 1, 2, 3
KIND_NAMES = {KEEP: "not a target", MASKED: "mask token", RANDOM: "random token", UNCHANGED: "unchanged"}
UNIT_LABELS = (("token", "Token (BERT)"), ("word", "Whole word (BERT-wwm)"), ("span", "Span (SpanBERT)"))
UNITS = tuple(u for u, _ in UNIT_LABELS)


@dataclass(frozen=True)
class MaskingConfig:
    mlm_probability: float = 0.15
    mask_fraction: float = 0.8
    random_fraction: float = 0.1
    span_p: float = 0.2  # SpanBERT: span length in words ~ Geometric(p), truncated at max_span
    max_span: int = 10

    def __post_init__(self) -> None:
        if not 0.0 <= self.mlm_probability <= 1.0:
            raise ValueError("the masking rate must be between 0 and 1")
        if self.mask_fraction < 0 or self.random_fraction < 0 or self.mask_fraction + self.random_fraction > 1 + 1e-9:
            raise ValueError("the mask and random fractions must be non-negative and add up to at most 1")
        if not 0.0 < self.span_p <= 1.0 or self.max_span < 1:
            raise ValueError("span p must be in (0, 1] and the maximum span at least 1")

    @property
    def unchanged_fraction(self) -> float:
        """The share of targets shown as themselves (BERT: the last 10%)."""
        return max(0.0, 1.0 - self.mask_fraction - self.random_fraction)


def generator(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(int(seed))


# ----------------------------------------------------------------------------- targets: tokens and whole words


def select_token_targets(maskable: torch.Tensor, p: float, gen: torch.Generator) -> torch.Tensor:
    """Independent Bernoulli(p) per maskable position, like ``DataCollatorForLanguageModeling``.

    maskable: (..., T) bool, True where a position may be a target (not special, not padding).
    Returns (..., T) bool targets.
    """
    draws = torch.rand(maskable.shape, generator=gen)  # (..., T)
    return (draws < p) & maskable


def select_word_targets(word_ids: list[int | None], p: float, gen: torch.Generator) -> torch.Tensor:
    """Whole-word masking: each word is a target with probability p, and then all of its pieces are.

    word_ids: per token the index of the word it belongs to, ``None`` for special tokens (as
    ``app.core.text.Tokenized.word_of`` or ``tokenizer(...).word_ids()`` give it). Returns (T,) bool.
    """
    word = torch.tensor([-1 if w is None else w for w in word_ids], dtype=torch.long)  # (T,)
    n_words = int(word.max()) + 1 if len(word) else 0
    if n_words <= 0:
        return torch.zeros(len(word), dtype=torch.bool)
    chosen = torch.rand(n_words, generator=gen) < p  # (W,)
    return chosen[word.clamp_min(0)] & (word >= 0)


# ----------------------------------------------------------------------------- targets: spans (SpanBERT)


def span_length_pmf(span_p: float, max_span: int) -> list[float]:
    """P(L = k) for k = 1..max_span: Geometric(span_p) truncated at ``max_span`` and renormalised.

    This is what SpanBERT's code does (``len_distrib = [p (1-p)^(k-1)]``, divided by its sum): lengths
    above the maximum are never drawn, rather than piled onto the maximum.
    """
    weights = [span_p * (1.0 - span_p) ** (k - 1) for k in range(1, max_span + 1)]
    total = sum(weights)
    return [w / total for w in weights]


def clipped_geometric_mean(p: float, max_span: int) -> float:
    """Mean span length of Geometric(p) truncated (and renormalised) at ``max_span``.

    For SpanBERT's p = 0.2 and maximum 10 this is 3.797 — the "mean span length of 3.8" of the paper.
    (Piling the mass above 10 onto 10 instead would give 4.46.)
    """
    return float(sum(k * w for k, w in enumerate(span_length_pmf(p, max_span), start=1)))


def _span_length(u: float, span_p: float, max_span: int) -> int:
    """Inverse CDF of the truncated geometric: a uniform u in [0, 1) -> a length in 1..max_span."""
    if span_p >= 1.0:
        return 1
    q = 1.0 - span_p
    mass = 1.0 - q**max_span  # P(L <= max_span) before renormalising
    return min(max_span, max(1, math.floor(math.log1p(-u * mass) / math.log(q)) + 1))


def sample_span_lengths(n: int, p: float, max_span: int, gen: torch.Generator) -> torch.Tensor:
    """n span lengths (in words) from Geometric(p) on {1, 2, ...} truncated at ``max_span`` (SpanBERT):
    the same inverse CDF as the span loop uses, on a whole vector. Returns (n,) long."""
    u = torch.rand(n, generator=gen, dtype=torch.float64)  # (n,)
    if p >= 1.0:
        return torch.ones(n, dtype=torch.long)
    q = 1.0 - p
    mass = 1.0 - q**max_span
    lengths = torch.floor(torch.log1p(-u * mass) / math.log(q)).long() + 1  # (n,)
    return lengths.clamp(1, max_span)


def word_pieces(word_ids) -> tuple[list[int], list[int]]:
    """(the words that have pieces, in order; how many pieces each has) from per-token word indices
    (None = special). A word index with no piece (a typed special token, a cut) is left out, so spans
    run over the words the model actually sees."""
    words = sorted({w for w in word_ids if w is not None})
    slot = {w: i for i, w in enumerate(words)}
    pieces = [0] * len(words)
    for w in word_ids:
        if w is not None:
            pieces[slot[w]] += 1
    return words, pieces


def uniforms_needed(n_tokens: int, n_words: int, p: float) -> int:
    """Uniforms :func:`spans_from_uniforms` can use: one for the budget, two per span, and there are at
    most min(budget, words) spans since each covers at least one word."""
    return 1 + 2 * min(math.floor(p * n_tokens) + 1, n_words)


def spans_from_uniforms(
    pieces: list[int], p: float, span_p: float, max_span: int, u: list[float]
) -> tuple[list[int], list[int]]:
    """SpanBERT's loop on words, driven by the uniforms ``u`` (``uniforms_needed`` of them).

    The budget is p * (number of tokens), rounded at random so that its mean is exactly p * tokens.
    Each step draws a length, picks a start among the words not yet masked, and masks whole words
    from there until the span has its length, reaches the end, meets an already masked word, or the
    budget is spent. pieces: (W,) pieces per word. Returns (per word: the index of its span, or -1;
    the placed span lengths in words).
    """
    budget = math.floor(p * sum(pieces) + u[0])
    span_of = [-1] * len(pieces)
    lengths: list[int] = []
    covered, k = 0, 1
    while covered < budget and k + 1 < len(u):
        free = [w for w, s in enumerate(span_of) if s < 0]
        if not free:
            break
        length = _span_length(u[k], span_p, max_span)
        w = free[min(int(u[k + 1] * len(free)), len(free) - 1)]
        k += 2
        placed = 0
        while placed < length and w < len(pieces) and span_of[w] < 0 and covered < budget:
            span_of[w] = len(lengths)
            covered += pieces[w]
            placed += 1
            w += 1
        lengths.append(placed)
    return span_of, lengths


def place_spans(
    word_ids: list[int | None], p: float, span_p: float, max_span: int, gen: torch.Generator
) -> tuple[torch.Tensor, list[int]]:
    """SpanBERT span masking: spans of whole words until about p of the tokens are targets.

    A span is cut short by the end of the text, by an already masked word or by the budget, so on a
    short sentence the placed spans are shorter than the drawn ones. Returns ((T,) long: per token the
    index of its span, -1 where not a target; the placed span lengths in words). Spans never split a word.
    """
    words, pieces = word_pieces(word_ids)
    u = torch.rand(uniforms_needed(sum(pieces), len(words), p), generator=gen, dtype=torch.float64).tolist()
    span_of_word, lengths = spans_from_uniforms(pieces, p, span_p, max_span, u)
    span_of = dict(zip(words, span_of_word))
    span_ids = torch.tensor([-1 if w is None else span_of[w] for w in word_ids], dtype=torch.long)  # (T,)
    return span_ids, lengths


# ----------------------------------------------------------------------------- what the targets become: 80/10/10


def _split(
    input_ids: torch.Tensor,
    targets: torch.Tensor,
    u: torch.Tensor,
    mask_token_id: int,
    random_ids: torch.Tensor,
    cfg: MaskingConfig,
    gen: torch.Generator,
) -> tuple[torch.Tensor, torch.Tensor]:
    """The replacement split, given one uniform per position ``u`` (..., T): below mask_fraction the mask
    token, then random_fraction a random token, the rest unchanged. Returns (corrupted ids, kinds)."""
    is_mask = targets & (u < cfg.mask_fraction)
    is_random = targets & (u >= cfg.mask_fraction) & (u < cfg.mask_fraction + cfg.random_fraction)
    random_tokens = random_ids[torch.randint(len(random_ids), input_ids.shape, generator=gen)]
    corrupted = torch.where(is_mask, torch.full_like(input_ids, mask_token_id), input_ids)
    corrupted = torch.where(is_random, random_tokens, corrupted)
    kinds = torch.full_like(input_ids, KEEP)
    kinds[targets] = UNCHANGED
    kinds[is_mask] = MASKED
    kinds[is_random] = RANDOM
    return corrupted, kinds


def corrupt(
    input_ids: torch.Tensor,
    targets: torch.Tensor,
    mask_token_id: int,
    random_ids: torch.Tensor,
    cfg: MaskingConfig,
    gen: torch.Generator,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Apply the replacement split to the chosen targets, decided per token.

    input_ids: (..., T) long; targets: (..., T) bool; random_ids: (R,) long, the ids a random
    replacement is drawn from (the vocabulary minus special tokens).
    Returns (corrupted ids (..., T), kinds (..., T) with KEEP/MASKED/RANDOM/UNCHANGED).
    """
    u = torch.rand(input_ids.shape, generator=gen)  # (..., T) one draw decides the kind
    return _split(input_ids, targets, u, mask_token_id, random_ids, cfg, gen)


def corrupt_spans(
    input_ids: torch.Tensor,
    span_ids: torch.Tensor,
    mask_token_id: int,
    random_ids: torch.Tensor,
    cfg: MaskingConfig,
    gen: torch.Generator,
) -> tuple[torch.Tensor, torch.Tensor]:
    """The replacement split decided once per span, as SpanBERT does: all tokens of a span become the
    mask token, or all become random tokens, or all stay. input_ids, span_ids: (T,) long, span_ids -1
    where a token is not a target. Returns (corrupted ids (T,), kinds (T,))."""
    targets = span_ids >= 0  # (T,)
    n_spans = int(span_ids.max()) + 1 if targets.any() else 0
    u = torch.rand(max(n_spans, 1), generator=gen)[span_ids.clamp_min(0)]  # (T,) the draw of each token's span
    return _split(input_ids, targets, u, mask_token_id, random_ids, cfg, gen)


def mlm_batch(
    input_ids: torch.Tensor,
    maskable: torch.Tensor,
    mask_token_id: int,
    random_ids: torch.Tensor,
    cfg: MaskingConfig,
    gen: torch.Generator,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Token-level BERT masking of a batch: returns (corrupted ids (B, T), labels (B, T)).

    labels hold the original id at targets and -100 elsewhere (the loss ignores -100).
    """
    targets = select_token_targets(maskable, cfg.mlm_probability, gen)
    corrupted, _ = corrupt(input_ids, targets, mask_token_id, random_ids, cfg, gen)
    labels = torch.where(targets, input_ids, torch.full_like(input_ids, -100))
    return corrupted, labels


# ----------------------------------------------------------------------------- when the mask is drawn

# When the mask is drawn: (key, name, whose recipe, what it is, how to read its epochs × positions grid).
STRATEGY_TABLE = (
    (
        "static",
        "Static ×1",
        "",
        "one mask, every epoch",
        "One mask, fixed at preprocessing: every epoch asks the same questions, and the other positions are "
        "never practised.",
    ),
    (
        "static10",
        "Static ×10",
        "BERT",
        "10 masked copies",
        "BERT's 10 copies: the rows repeat every 10 epochs, so after epoch 10 the model sees nothing new.",
    ),
    (
        "dynamic",
        "Dynamic",
        "RoBERTa",
        "a fresh mask every epoch",
        "RoBERTa: every row is a new mask, so over many epochs nearly every position becomes a question.",
    ),
)
STRATEGIES = tuple(row[0] for row in STRATEGY_TABLE)
STRATEGY_SHORT = {s: f"{name} ({who})" if who else name for s, name, who, _, _ in STRATEGY_TABLE}
STRATEGY_LABELS = {s: f"{name} ({who + ': ' if who else ''}{what})" for s, name, who, what, _ in STRATEGY_TABLE}
STRATEGY_READING = {s: reading for s, *_, reading in STRATEGY_TABLE}
