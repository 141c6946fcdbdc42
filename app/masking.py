"""Masked-language-model corruption: which positions become prediction targets, and what they become.

One module serves both the recipes that train the bundled checkpoints (batched, on tensors) and the
masking lab lesson (one sentence, many epochs). Every function is pure and takes an explicit
``torch.Generator`` so a seed reproduces a draw exactly.

Vocabulary (as in transformers' ``DataCollatorForLanguageModeling``):

- ``mlm_probability``: the chance that a position is a prediction *target* (BERT: 0.15).
- Of the targets, ``mask_fraction`` become the mask token, ``random_fraction`` a random token, and the
  rest stay unchanged (BERT's 80/10/10 rule).
- Special tokens and padding are never targets.

The masking lab adds what happens over epochs: :func:`epoch_plan` (static ×1, BERT's static ×10,
RoBERTa's dynamic masking), :func:`simulate` and :func:`coverage_curve` (how many positions have been a
target by epoch k, against 1 - (1 - p)^k), SpanBERT's span lengths (:func:`span_length_pmf`) and
:func:`fill_masks` (a masked LM's top-k at the targets).

Kinds returned by :func:`corrupt` (one small int per position):
``KEEP`` (not a target), ``MASKED`` (target shown as the mask token), ``RANDOM`` (target shown as a
random token), ``UNCHANGED`` (target shown as itself).
"""

from __future__ import annotations

from app import preload  # noqa: F401  (first: the heavy imports, once, in one thread)

import math
import unicodedata
from dataclasses import dataclass

import numpy as np
import torch

KEEP, MASKED, RANDOM, UNCHANGED = 0, 1, 2, 3
KIND_NAMES = {KEEP: "not a target", MASKED: "mask token", RANDOM: "random token", UNCHANGED: "unchanged"}


@dataclass(frozen=True)
class MaskingConfig:
    mlm_probability: float = 0.15
    mask_fraction: float = 0.8
    random_fraction: float = 0.1
    span_p: float = 0.2  # SpanBERT: span length in words ~ Geometric(p), clipped at max_span
    max_span: int = 10

    def __post_init__(self) -> None:
        if not 0.0 <= self.mlm_probability <= 1.0:
            raise ValueError("the masking rate must be between 0 and 1")
        if self.mask_fraction < 0 or self.random_fraction < 0 or self.mask_fraction + self.random_fraction > 1 + 1e-9:
            raise ValueError("the mask and random fractions must be non-negative and add up to at most 1")
        if not 0.0 < self.span_p <= 1.0 or self.max_span < 1:
            raise ValueError("span p must be in (0, 1] and the maximum span at least 1")


def generator(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(int(seed))


def select_token_targets(maskable: torch.Tensor, p: float, gen: torch.Generator) -> torch.Tensor:
    """Independent Bernoulli(p) per maskable position, like ``DataCollatorForLanguageModeling``.

    maskable: (..., T) bool, True where a position may be a target (not special, not padding).
    Returns (..., T) bool targets.
    """
    draws = torch.rand(maskable.shape, generator=gen)  # (..., T)
    return (draws < p) & maskable


def select_word_targets(word_ids: list[int | None], p: float, gen: torch.Generator) -> torch.Tensor:
    """Whole-word masking: each word is a target with probability p, and then all of its pieces are.

    word_ids: per token the index of the word it belongs to, ``None`` for special tokens
    (the list ``tokenizer(...).word_ids()`` returns). Returns (T,) bool.
    """
    word = torch.tensor([-1 if w is None else w for w in word_ids], dtype=torch.long)  # (T,)
    n_words = int(word.max()) + 1 if len(word) else 0
    chosen = torch.rand(n_words, generator=gen) < p  # (W,)
    if n_words == 0:
        return torch.zeros(len(word), dtype=torch.bool)
    return chosen[word.clamp_min(0)] & (word >= 0)


# ----------------------------------------------------------------------------- span masking (SpanBERT)


def span_length_pmf(span_p: float, max_span: int) -> list[float]:
    """P(L = k) for k = 1..max_span: Geometric(span_p) truncated at ``max_span`` and renormalised.

    This is what SpanBERT's code does (``len_distrib = [p (1-p)^(k-1)]``, divided by its sum): lengths
    above the maximum are never drawn, rather than piled onto the maximum.
    """
    weights = [span_p * (1.0 - span_p) ** (k - 1) for k in range(1, max_span + 1)]
    total = sum(weights)
    return [w / total for w in weights]


def clipped_geometric_mean(p: float, max_span: int) -> float:
    """Mean span length of Geometric(p) clipped (truncated and renormalised) at ``max_span``.

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
    """n span lengths (in words) from Geometric(p) on {1, 2, ...} truncated at ``max_span`` (SpanBERT).

    Returns (n,) long. See :func:`span_length_pmf` for the exact distribution.
    """
    u = torch.rand(n, generator=gen, dtype=torch.float64)  # (n,)
    if p >= 1.0:
        return torch.ones(n, dtype=torch.long)
    q = 1.0 - p
    mass = 1.0 - q**max_span
    lengths = torch.floor(torch.log1p(-u * mass) / math.log(q)).long() + 1  # (n,)
    return lengths.clamp(1, max_span)


def _words(word_ids) -> tuple[int, list[int]]:
    """(number of maskable tokens, pieces per word) from per-token word indices (None = special)."""
    n_words = max((w for w in word_ids if w is not None), default=-1) + 1
    pieces = [0] * n_words
    for w in word_ids:
        if w is not None:
            pieces[w] += 1
    return sum(pieces), pieces


def _place_spans(pieces: list[int], p: float, span_p: float, max_span: int, u: list[float]) -> tuple[list[int], list[int]]:
    """SpanBERT's loop on words, driven by the uniforms ``u`` (at least 1 + 2 * len(pieces) of them).

    The budget is p * (number of tokens), rounded at random so that its mean is exactly p * tokens.
    Each step draws a length, picks a start among the words not yet masked, and masks whole words
    from there until the span has its length, reaches the end, meets an already masked word, or the
    budget is spent. Returns (per word: the index of its span, or -1; the placed span lengths in words).
    """
    n_tokens = sum(pieces)
    budget = math.floor(p * n_tokens + u[0])
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


def _uniforms_needed(n_tokens: int, n_words: int, p: float) -> int:
    """Uniforms :func:`_place_spans` can use: one for the budget, two per span, and there are at most
    min(budget, words) spans since each covers at least one word."""
    return 1 + 2 * min(math.floor(p * n_tokens) + 1, n_words)


def place_spans(
    word_ids: list[int | None], p: float, span_p: float, max_span: int, gen: torch.Generator
) -> tuple[torch.Tensor, list[int]]:
    """Span masking with the span of every target: ((T,) long span index per token, -1 where not a
    target; the placed span lengths in words). Spans are runs of whole words, so they never split one."""
    n_tokens, pieces = _words(word_ids)
    u = torch.rand(_uniforms_needed(n_tokens, len(pieces), p), generator=gen, dtype=torch.float64).tolist()
    span_of_word, lengths = _place_spans(pieces, p, span_p, max_span, u)
    span_ids = torch.tensor([-1 if w is None else span_of_word[w] for w in word_ids], dtype=torch.long)
    return span_ids, lengths


def select_span_targets(
    word_ids: list[int | None], p: float, span_p: float, max_span: int, gen: torch.Generator
) -> tuple[torch.Tensor, list[int]]:
    """SpanBERT span masking: pick spans of whole words until about p of the tokens are targets.

    Span lengths are drawn in words from the truncated geometric distribution (:func:`span_length_pmf`);
    each span starts at a random unmasked word and covers whole words, so spans never split a word.
    A span is cut short by the end of the text, by an already masked word, or by the budget, so on a
    short sentence the placed spans are shorter than the drawn ones. Returns ((T,) bool targets, the
    list of placed span lengths in words).
    """
    span_ids, lengths = place_spans(word_ids, p, span_p, max_span, gen)
    return span_ids >= 0, lengths


def corrupt(
    input_ids: torch.Tensor,
    targets: torch.Tensor,
    mask_token_id: int,
    random_ids: torch.Tensor,
    cfg: MaskingConfig,
    gen: torch.Generator,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Apply the replacement split to the chosen targets.

    input_ids: (..., T) long; targets: (..., T) bool; random_ids: (R,) long, the ids a random
    replacement is drawn from (the vocabulary minus special tokens).
    Returns (corrupted ids (..., T), kinds (..., T) with KEEP/MASKED/RANDOM/UNCHANGED).
    """
    u = torch.rand(input_ids.shape, generator=gen)  # (..., T) one draw decides the kind
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


# ----------------------------------------------------------------------------- the lab: one sentence, many epochs
#
# BERT masked each sequence once at preprocessing and duplicated the data 10 times, so over 40 epochs
# every masked copy was seen 4 times; RoBERTa draws a fresh mask each time a sequence is fed.
# A "copy" below is one masked version of the sentence; an epoch uses one copy.

STRATEGIES = ("static", "static10", "dynamic")
STRATEGY_LABELS = {
    "static": "Static ×1 (one mask, every epoch)",
    "static10": "Static ×10 (BERT: 10 masked copies)",
    "dynamic": "Dynamic (RoBERTa: a fresh mask every epoch)",
}
UNITS = ("token", "word", "span")
UNIT_LABELS = {"token": "Token (BERT)", "word": "Whole word (BERT-wwm)", "span": "Span (SpanBERT)"}


@dataclass(frozen=True)
class LabDefaults:
    duplication: int = 10  # BERT's copies of the data, each with its own mask
    max_epochs: int = 40  # BERT's 40 epochs
    n_draws: int = 200  # independent draws behind the coverage curves (fewer for long sentences) ...
    sim_positions: int = 6400  # ... so that draws × maskable positions stays about this
    n_span_samples: int = 20_000  # draws behind the span-length histogram
    max_tokens: int = 128  # the lab's cap on the sentence (the bundled models' limit)


LAB = LabDefaults()


def copy_index(strategy: str, epoch: int, duplication: int = LAB.duplication) -> int:
    """Which masked copy epoch ``epoch`` (0-based) trains on: static ×1 always copy 0; static ×10 copy
    epoch mod 10; dynamic a new copy every epoch."""
    if strategy == "static":
        return 0
    if strategy == "static10":
        return epoch % duplication
    if strategy == "dynamic":
        return epoch
    raise ValueError(f"unknown strategy {strategy!r}; expected one of {', '.join(STRATEGIES)}")


def distinct_copies(strategy: str, epochs: int, duplication: int = LAB.duplication) -> int:
    """How many different masks a sequence has been seen with after ``epochs`` epochs."""
    return len({copy_index(strategy, e, duplication) for e in range(epochs)})


def copy_generator(seed: int, copy: int) -> torch.Generator:
    """The generator of masked copy ``copy``: the same (seed, copy) always gives the same mask."""
    return generator(int(seed) * 1_000_003 + int(copy))


@dataclass(frozen=True)
class Encoded:
    """A sentence as a model sees it. Plain tuples, so it caches and pickles.

    input_ids, tokens, special, word_ids: (T,); word_ids[i] is the index of the word token i belongs
    to (None for special tokens); special[i] is True for [CLS]/<s>/... (never a target).
    """

    input_ids: tuple[int, ...]
    tokens: tuple[str, ...]
    special: tuple[bool, ...]
    word_ids: tuple[int | None, ...]
    n_tokens_full: int  # tokens the whole text has, before the cap
    cap: int
    n_unknown: int  # pieces that are the unknown token
    n_typed_special: int = 0  # special tokens typed in the text itself ("[MASK]", "<s>"): kept special

    @property
    def truncated(self) -> bool:
        return self.n_tokens_full > len(self.input_ids)

    @property
    def maskable(self) -> torch.Tensor:
        return ~torch.tensor(self.special, dtype=torch.bool)  # (T,) True where a position may be a target

    @property
    def n_words(self) -> int:
        return max((w for w in self.word_ids if w is not None), default=-1) + 1


def _word_ids_from_pieces(tokens: list[str], special: list[bool]) -> list[int | None]:
    """Words from the pieces' markers, for tokenizers without ``word_ids()``: ``##`` continues a word
    (WordPiece); otherwise ``Ġ`` (byte-level BPE) and ``▁`` (SentencePiece) start one, as does the
    first piece after a special token. Exact for WordPiece and SentencePiece; for byte-level BPE it
    joins punctuation to the word before (the tokenizer's own pre-tokenizer splits it off)."""
    wordpiece = any(t.startswith("##") for t in tokens)
    out: list[int | None] = []
    word, after_special = -1, True
    for t, s in zip(tokens, special):
        if s:
            out.append(None)
            after_special = True
            continue
        starts = not t.startswith("##") if wordpiece else (t.startswith(("Ġ", "▁")) or after_special)
        word += 1 if starts or word < 0 else 0
        after_special = False
        out.append(word)
    return out


def encode(tokenizer, text: str, cap: int = LAB.max_tokens) -> Encoded:
    """Tokenize ``text`` with special tokens, keeping at most ``cap`` tokens (the model's own limit
    when it is lower). Word indices are renumbered 0..W-1 in order. A special token typed in the text
    (``[MASK]``, ``<s>``) stays special: it is never a target. The unknown token is an ordinary piece."""
    limit = min(int(cap), int(getattr(tokenizer, "model_max_length", cap) or cap))
    full = len(tokenizer(text, add_special_tokens=True, verbose=False)["input_ids"])
    enc = tokenizer(text, truncation=True, max_length=limit, return_special_tokens_mask=True)
    ids = list(enc["input_ids"])
    tokens = tokenizer.convert_ids_to_tokens(ids)
    control = set(tokenizer.all_special_ids) - {getattr(tokenizer, "unk_token_id", None)}
    typed = [not s and i in control for i, s in zip(ids, enc["special_tokens_mask"])]  # "[MASK]" in the text
    special = [bool(s) or t for s, t in zip(enc["special_tokens_mask"], typed)]
    try:
        raw = enc.word_ids()
    except (AttributeError, ValueError):
        raw = _word_ids_from_pieces(tokens, special)
    renumber: dict[int, int] = {}
    word_ids: list[int | None] = []
    for w, s in zip(raw, special):
        if w is None or s:
            word_ids.append(None)
        else:
            word_ids.append(renumber.setdefault(w, len(renumber)))
    unk = getattr(tokenizer, "unk_token_id", None)
    return Encoded(tuple(ids), tuple(tokens), tuple(special), tuple(word_ids), full, limit,
                   sum(1 for i in ids if unk is not None and i == unk), sum(typed))


def replacement_ids(tokenizer) -> torch.Tensor:
    """Ids a random replacement may take: the whole vocabulary except special tokens. (R,) long."""
    special = set(tokenizer.all_special_ids)
    return torch.tensor([i for i in range(len(tokenizer)) if i not in special], dtype=torch.long)


def unusual_characters(text: str) -> dict[str, str]:
    """Characters the bundled (English, TinyStories) vocabularies barely know, by kind:
    {"emoji": ..., "CJK": ..., "right-to-left": ...}, each the distinct characters found, in order."""
    found: dict[str, list[str]] = {"emoji": [], "CJK": [], "right-to-left": []}
    for ch in text:
        cp = ord(ch)
        name = unicodedata.name(ch, "")
        if unicodedata.bidirectional(ch) in ("R", "AL", "AN"):
            kind = "right-to-left"
        elif any(s in name for s in ("CJK", "HIRAGANA", "KATAKANA", "HANGUL", "IDEOGRAPHIC")):
            kind = "CJK"
        elif unicodedata.category(ch) == "So" or 0x1F000 <= cp <= 0x1FAFF or cp in (0x200D, 0xFE0F):
            kind = "emoji"
        else:
            continue
        if ch not in found[kind]:
            found[kind].append(ch)
    return {k: "".join(v) for k, v in found.items() if v}


def split_words(targets: torch.Tensor, word_ids) -> tuple[int, int]:
    """(words split by the mask, words targeted) over every row of ``targets`` (..., T): a word is
    split when some of its pieces are targets and others are not."""
    idx = torch.tensor([-1 if w is None else w for w in word_ids], dtype=torch.long)  # (T,)
    n_words = int(idx.max()) + 1 if len(idx) else 0
    if n_words == 0:
        return 0, 0
    rows = targets.reshape(-1, targets.shape[-1])[:, idx >= 0].long()  # (N, T') targets on word pieces
    word_of = idx[idx >= 0]
    hit = torch.zeros(rows.shape[0], n_words, dtype=torch.long).index_add_(1, word_of, rows)  # (N, W)
    size = torch.bincount(word_of, minlength=n_words)  # (W,)
    return int(((hit > 0) & (hit < size)).sum()), int((hit > 0).sum())


@dataclass(frozen=True)
class MaskedCopy:
    targets: torch.Tensor  # (T,) bool
    kinds: torch.Tensor  # (T,) KEEP / MASKED / RANDOM / UNCHANGED
    corrupted: torch.Tensor  # (T,) long, what the model is fed
    spans: tuple[int, ...]  # placed span lengths in words (span masking only)


def mask_copy(enc: Encoded, unit: str, cfg: MaskingConfig, mask_token_id: int, random_ids: torch.Tensor,
              gen: torch.Generator) -> MaskedCopy:
    """One masked version of the sentence: choose the targets by token, whole word or span, then apply
    the replacement split (per token; per span for span masking, as SpanBERT does)."""
    ids = torch.tensor(enc.input_ids, dtype=torch.long)  # (T,)
    if unit == "span":
        span_ids, spans = place_spans(list(enc.word_ids), cfg.mlm_probability, cfg.span_p, cfg.max_span, gen)
        corrupted, kinds = corrupt_spans(ids, span_ids, mask_token_id, random_ids, cfg, gen)
        return MaskedCopy(span_ids >= 0, kinds, corrupted, tuple(spans))
    if unit == "word":
        targets = select_word_targets(list(enc.word_ids), cfg.mlm_probability, gen) & enc.maskable
    elif unit == "token":
        targets = select_token_targets(enc.maskable, cfg.mlm_probability, gen)
    else:
        raise ValueError(f"unknown unit {unit!r}; expected one of {', '.join(UNITS)}")
    corrupted, kinds = corrupt(ids, targets, mask_token_id, random_ids, cfg, gen)
    return MaskedCopy(targets, kinds, corrupted, ())


@dataclass(frozen=True)
class EpochPlan:
    """What the model is fed for one sentence over ``E`` epochs under one strategy."""

    copies: tuple[int, ...]  # (E,) the masked copy each epoch trains on
    targets: torch.Tensor  # (E, T) bool
    kinds: torch.Tensor  # (E, T)
    corrupted: torch.Tensor  # (E, T) long
    spans: tuple[tuple[int, ...], ...]  # (E,) placed span lengths per epoch


def epoch_plan(enc: Encoded, strategy: str, unit: str, epochs: int, cfg: MaskingConfig, seed: int,
               mask_token_id: int, random_ids: torch.Tensor, duplication: int = LAB.duplication) -> EpochPlan:
    """The masks of epochs 0..epochs-1. Copy c is always drawn from ``copy_generator(seed, c)``, so
    static ×10 and dynamic agree on the first 10 epochs and part only when static ×10 starts over."""
    copies = tuple(copy_index(strategy, e, duplication) for e in range(epochs))
    made = {c: mask_copy(enc, unit, cfg, mask_token_id, random_ids, copy_generator(seed, c)) for c in sorted(set(copies))}
    rows = [made[c] for c in copies]
    return EpochPlan(
        copies,
        torch.stack([r.targets for r in rows]),  # (E, T)
        torch.stack([r.kinds for r in rows]),  # (E, T)
        torch.stack([r.corrupted for r in rows]),  # (E, T)
        tuple(r.spans for r in rows),
    )


def times_targeted(plan: EpochPlan) -> tuple[torch.Tensor, torch.Tensor]:
    """Per position: (epochs in which it was a target, distinct masked copies in which it was one). (T,) each."""
    times = plan.targets.sum(0)  # (T,)
    first = {}
    for e, c in enumerate(plan.copies):
        first.setdefault(c, e)
    distinct = plan.targets[sorted(first.values())].sum(0)  # (T,) one row per distinct copy
    return times, distinct


# ----------------------------------------------------------------------------- coverage over many draws


@dataclass(frozen=True)
class Simulation:
    """``n_draws`` independent draws of ``n_copies`` masked copies of one sentence's layout."""

    targets: torch.Tensor  # (n_draws, n_copies, T) bool
    maskable: torch.Tensor  # (T,) bool
    span_lengths: tuple[int, ...]  # every placed span, in words (span masking only)


def draws_for(enc: Encoded) -> int:
    """How many independent draws :func:`simulate` makes by default: LAB.n_draws, fewer for a long
    sentence (each draw already averages over many positions), never below 20."""
    return max(20, min(LAB.n_draws, LAB.sim_positions // max(1, sum(not s for s in enc.special))))


def simulate(enc: Encoded, unit: str, cfg: MaskingConfig, seed: int, n_copies: int = LAB.max_epochs,
             n_draws: int | None = None) -> Simulation:
    """Targets of many independent draws (the replacement split does not matter for coverage).

    Token masking: Bernoulli(p) per position; whole words: Bernoulli(p) per word; spans: SpanBERT's
    loop per copy. Seeded by ``seed`` alone (its own stream, not the epoch plan's).
    """
    n_draws = draws_for(enc) if n_draws is None else n_draws
    gen = generator(int(seed) * 1_000_003 + 999_983)
    maskable = enc.maskable  # (T,)
    T = len(enc.input_ids)
    if unit == "token":
        targets = select_token_targets(maskable.expand(n_draws, n_copies, T), cfg.mlm_probability, gen)
        return Simulation(targets, maskable, ())
    word = torch.tensor([-1 if w is None else w for w in enc.word_ids], dtype=torch.long)  # (T,)
    if unit == "word":
        chosen = torch.rand(n_draws, n_copies, max(enc.n_words, 1), generator=gen) < cfg.mlm_probability  # (N, C, W)
        targets = chosen[:, :, word.clamp_min(0)] & (word >= 0)  # (N, C, T)
        return Simulation(targets, maskable, ())
    if unit != "span":
        raise ValueError(f"unknown unit {unit!r}; expected one of {', '.join(UNITS)}")
    n_tokens, pieces = _words(enc.word_ids)
    k = _uniforms_needed(n_tokens, len(pieces), cfg.mlm_probability)
    u = torch.rand(n_draws * n_copies, k, generator=gen, dtype=torch.float64).tolist()
    rows, lengths = [], []
    for row in u:
        span_of, placed = _place_spans(pieces, cfg.mlm_probability, cfg.span_p, cfg.max_span, row)
        rows.append(span_of or [-1])
        lengths += placed
    span_word = torch.from_numpy(np.array(rows, dtype=np.int64))  # (N * C, W) span index per word, -1 if none
    targets = (span_word[:, word.clamp_min(0)] >= 0) & (word >= 0)  # (N * C, T)
    return Simulation(targets.reshape(n_draws, n_copies, T), maskable, tuple(lengths))


def coverage_curve(sim: Simulation, strategy: str, epochs: int, duplication: int = LAB.duplication) -> list[float]:
    """Mean fraction of maskable positions that were a target at least once by epoch 1..epochs."""
    idx = [copy_index(strategy, e, duplication) for e in range(epochs)]
    seen = sim.targets[:, idx, :].long().cummax(dim=1).values  # (N, E, T) 1 once a target
    n = int(sim.maskable.sum())
    if n == 0:
        return [0.0] * epochs
    return (seen[:, :, sim.maskable].sum(-1).double() / n).mean(0).tolist()  # (E,)


def analytic_coverage(p: float, strategy: str, epochs: int, duplication: int = LAB.duplication) -> list[float]:
    """1 - (1 - p)^k, with k the number of distinct masks seen by epoch 1..epochs."""
    return [1.0 - (1.0 - p) ** distinct_copies(strategy, e, duplication) for e in range(1, epochs + 1)]


# ----------------------------------------------------------------------------- the model fills the blanks


@dataclass(frozen=True)
class Prediction:
    position: int
    original_id: int
    shown_id: int
    kind: int
    top_ids: tuple[int, ...]  # (k,)
    top_probs: tuple[float, ...]  # (k,)
    p_original: float
    rank_original: int  # 1 = the model's first choice


def fill_masks(model, input_ids: torch.Tensor, targets: torch.Tensor, original_ids: torch.Tensor,
               kinds: torch.Tensor, k: int = 5) -> list[Prediction]:
    """A masked LM's top-k at every target position of one corrupted sequence.

    input_ids, targets, original_ids, kinds: (T,). The model must return ``.logits`` (1, T, V).
    """
    positions = targets.nonzero().flatten().tolist()
    if not positions:
        return []
    device = next(model.parameters()).device
    with torch.no_grad():
        logits = model(input_ids=input_ids[None].to(device)).logits[0, positions].float().cpu()  # (n, V)
    probs = torch.softmax(logits, dim=-1)  # (n, V)
    top = probs.topk(min(k, probs.shape[-1]), dim=-1)  # (n, k)
    out = []
    for j, pos in enumerate(positions):
        orig = int(original_ids[pos])
        p_orig = probs[j, orig]
        out.append(Prediction(pos, orig, int(input_ids[pos]), int(kinds[pos]), tuple(top.indices[j].tolist()),
                              tuple(top.values[j].tolist()), float(p_orig), int((probs[j] > p_orig).sum()) + 1))
    return out
