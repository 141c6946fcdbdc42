"""The masking lab: one sentence over many epochs — *when* the mask is drawn, and what a masked LM makes of it.

BERT (Devlin et al., 2019) masked each sequence once, at preprocessing (*static masking*), and
duplicated the data 10 times with different masks, so over its 40 epochs every masked copy was seen 4
times. RoBERTa (Liu et al., 2019) draws a fresh mask every time a sequence is fed (*dynamic masking*).
A *copy* below is one masked version of the sentence; an epoch trains on one copy:
:func:`copy_index` says which, :func:`epoch_plan` lays the copies out epoch by epoch, app/coverage.py
measures how much of the sentence has been a target, and :func:`fill_masks` lets a real masked LM fill
the blanks of one epoch. What a target is and what it becomes (tokens, whole words, SpanBERT's spans;
the 80/10/10 split) are the rules of app/masking.py.

``run`` is the lesson: the page (pages/masking.py) and the tests call it. Its expensive steps go
through ``cache``: the model's forward (``predictions_of``) depends only on the inspected epoch's
corrupted row, so the top-k slider never re-runs the model; the coverage simulation
(``coverage_of``) does not depend on the strategy, the epochs or the 80/10/10 split.
"""

from __future__ import annotations

from app.core import preload  # noqa: F401  (first: the router calls preload.load() before a lesson runs)

preload.load()  # the heavy imports, once, in one thread, before this module's own (a page run outside the router too)

from collections import Counter
from dataclasses import dataclass, replace

import torch

from app import coverage, masking, mlm, span_boundary
from app.core import text as txt
from app.core.lesson import Note, Stop, direct, inputs_from
from app.masking import KEEP, MASKED, RANDOM, UNCHANGED, MaskingConfig
from app.masking import STRATEGIES, STRATEGY_LABELS, STRATEGY_READING, STRATEGY_SHORT, STRATEGY_TABLE  # noqa: F401
from app.models import catalogue
from app.core.state import Param, Spec, figure_param, seed_param, text_param

ORDER = 10  # its place in teaching order (app/lessons/__init__.py lists lessons by it)
TITLE = 'Masking lab'
ICON = ':material/theater_comedy:'
LINE = 'Static vs dynamic masking, 80/10/10, whole words and spans — with a real model filling the blanks.'

# How each tokenizer family marks its pieces (by the catalogue's tokenizer_kind, which starts with the name).
MARKERS = (
    ("WordPiece", "WordPiece: `##` marks a piece that continues the word before it."),
    (
        "byte-level BPE",
        "Byte-level BPE: `Ġ` stands for the space before a word; a character the vocabulary "
        "lacks is spelled byte by byte.",
    ),
    ("SentencePiece", "SentencePiece: `▁` marks the start of a word."),
)


@dataclass(frozen=True)
class LabDefaults:
    duplication: int = 10  # BERT's copies of the data, each with its own mask
    max_epochs: int = 40  # BERT's 40 epochs
    epochs: int = 20
    max_tokens: int = 128  # the lab's cap on the sentence, special tokens included (the bundled models' limit)
    topk: int = 5
    max_topk: int = 10  # guesses the model's forward keeps per blank (the top-k slider only trims them)
    n_span_samples: int = 20_000  # draws behind the span-length histogram


LAB = LabDefaults()
CFG = MaskingConfig()  # BERT's 15%, 80/10/10; SpanBERT's p = 0.2, max 10
DEFAULT_TEXT = "The little girl found a red ball in the park. She kicked it over the puddles to the wobbly treehouse."
VARIANTS = tuple(catalogue.MASKED_LMS)
# the lesson's takeaway, one line: the page's last word (under the key figure on a projector), the handout's
TAKEAWAY = 'Static masking asks the same positions every epoch; dynamic masking reaches every position over time.'
SPEC = Spec(
    text_param(DEFAULT_TEXT, "Your text"),
    Param(
        "variant",
        "choice",
        "bert",
        choices=VARIANTS,
        widget="select",
        label="Model (a masked LM)",
        labels=tuple((k, catalogue.get(k).label) for k in VARIANTS),
        help="The masked LM that fills the blanks; its tokenizer decides the pieces that can be masked.",
    ),
    Param(
        "strategy",
        "choice",
        "static10",
        choices=STRATEGIES,
        widget="radio",
        label="When is the mask drawn?",
        labels=tuple(STRATEGY_LABELS.items()),
    ),
    Param(
        "unit",
        "choice",
        "token",
        choices=masking.UNITS,
        widget="radio",
        label="What is masked?",
        labels=masking.UNIT_LABELS,
    ),
    Param("epochs", "int", LAB.epochs, lo=1, hi=LAB.max_epochs, widget="slider", label="Epochs"),
    Param(
        "rate",
        "float",
        CFG.mlm_probability,
        lo=0.01,
        hi=0.95,
        step=0.01,
        fmt="percent",
        label="Masking rate (mlm_probability)",
        help="The chance that a position is a prediction target (BERT: 15%).",
    ),
    Param(
        "mask_frac",
        "float",
        CFG.mask_fraction,
        lo=0.0,
        hi=1.0,
        step=0.05,
        fmt="percent",
        label="Of the targets: mask token",
    ),
    Param(
        "random_frac",
        "float",
        CFG.random_fraction,
        lo=0.0,
        hi=1.0,
        step=0.05,
        fmt="percent",
        label="Of the targets: random token",
    ),
    Param(
        "span_p",
        "float",
        CFG.span_p,
        lo=0.05,
        hi=1.0,
        step=0.05,
        label="Span length p (geometric)",
        help="SpanBERT draws span lengths in words from Geometric(p) on 1, 2, ..., truncated at the maximum.",
    ),
    Param("max_span", "int", CFG.max_span, lo=1, hi=10, widget="slider", label="Longest span (words)"),
    seed_param(),
    Param(
        "epoch",
        "int",
        1,
        lo=1,
        hi=LAB.max_epochs,
        widget="select",
        label="Epoch to inspect",
        help="Outlined in the grid; the model fills its blanks below. Epochs count from 1.",
    ),
    Param("topk", "int", LAB.topk, lo=1, hi=LAB.max_topk, widget="slider", label="Guesses per blank (top-k)"),
    Param(
        "span",
        "int",
        1,
        lo=1,
        hi=LAB.max_tokens,
        widget="select",
        label="Span to inspect (SBO)",
        help="Which masked span of the inspected epoch the span-boundary objective is shown for, counted from 1 "
        "in order of position (span masking only).",
    ),
    figure_param(
        (
            ("grid", "Targets, epoch by epoch (this strategy)"),
            ("coverage", "Coverage: static, ×10 and dynamic side by side"),
        )
    ),
)


def pct(x: float) -> str:
    """A share as a percentage: 0.8 -> "80%", 0.125 -> "12.5%"."""
    return f"{x:.0%}" if abs(x * 100 - round(x * 100)) < 1e-9 else f"{x:.1%}"


# ----------------------------------------------------------------------------- which copy each epoch trains on


def word_targets(r: "Result") -> tuple[int, int, int]:
    """Over every epoch of the plan: (words made targets, those of several pieces, words cut — some of their pieces
    targets and others not). A word counts once per epoch it is a target in; whole-word and span masking never cut
    one, token masking may."""
    pieces: dict[int, list[int]] = {}
    for t, w in enumerate(r.sentence.word_of):
        if w is not None and not r.sentence.special[t]:
            pieces.setdefault(w, []).append(t)
    targeted = several = cut = 0
    for row in r.kinds:  # (T,) one epoch
        for ts in pieces.values():
            hit = [row[t] != KEEP for t in ts]
            if any(hit):
                targeted += 1
                several += len(ts) > 1
                cut += not all(hit)
    return targeted, several, cut


def takeaway(r: "Result") -> str:
    """The page's takeaway, computed from this view's result (``TAKEAWAY`` is the number-free version of the token
    one): about whole words when whole words are masked, about spans under SpanBERT's spans, else about when the
    mask is drawn, with this sentence's measured rate."""
    if r.unit == "word":
        targeted, several, cut = word_targets(r)
        example = f" (such as {txt.md(r.example_word)})" if r.example_word else ""
        split = (
            f"{several} of them of several pieces{example}"
            if several
            else "none of them of several pieces: this sentence shows no difference from token masking"
        )
        whole = (
            "none left half-hidden, so the model cannot guess a piece from the rest of its word"
            if not cut
            else f"yet {txt.count(cut, 'word')} left half-hidden"
        )
        return (
            f"Whole-word masking hides every piece of a word together: over {txt.count(r.epochs, 'epoch')}, "
            f"{txt.count(targeted, 'target word')}, {split}; {whole}."
        )
    if r.unit == "span" and r.spans is not None:
        return (
            f"SpanBERT hides whole words in contiguous spans: the spans placed here average "
            f"{r.spans.means['placed']:.1f} words (the geometric law's mean: {r.spans.means['expected']:.1f}), so "
            "the model must rebuild a phrase from its edges."
        )
    asked, rate = f"{r.coverage.rate:.0%}", pct(r.cfg.mlm_probability)
    return (
        f"Static masking asks the same {asked} of positions every epoch"  # one line on a handout: ≤ 110 characters
        + ("" if asked == rate else f" (rate set: {rate})")
        + "; dynamic masking reaches every one over time."
    )


def whole_percents(shares) -> tuple[int, ...]:
    """Shares as whole percents that add up to 100 (largest remainder): 0.857 / 0.057 / 0.086 -> 86 / 6 / 8, where
    rounding each alone would give 86 / 6 / 9 = 101."""
    raw = [100.0 * x for x in shares]
    out = [int(x) for x in raw]
    for i in sorted(range(len(raw)), key=lambda i: raw[i] - out[i], reverse=True)[: 100 - sum(out)]:
        out[i] += 1
    return tuple(out)


def split_text(r: "Result") -> str:
    """What the targets were fed, in counts and in whole percents that add up to 100, beside the split that was set."""
    n = round(r.targets_per_epoch * r.epochs)
    counts = [round(x * n) for x in r.shares]
    parts = [
        f"**{c}** {what} ({p}%)"
        for c, what, p in zip(counts, ("mask", "random", "unchanged"), whole_percents(r.shares))
    ]
    return (
        f"Of the {txt.count(n, 'target')} over these epochs: {', '.join(parts)} (set: {pct(r.cfg.mask_fraction)} / "
        f"{pct(r.cfg.random_fraction)} / {pct(r.cfg.unchanged_fraction)}; percents rounded to add up to 100)."
    )


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


def copy_schedule(strategy: str, epochs: int, duplication: int = LAB.duplication) -> list[int]:
    """The copy of every epoch 0..epochs-1. (E,)"""
    return [copy_index(strategy, e, duplication) for e in range(epochs)]


def distinct_copies(strategy: str, epochs: int, duplication: int = LAB.duplication) -> int:
    """How many different masks a sequence has been seen with after ``epochs`` epochs."""
    return len(set(copy_schedule(strategy, epochs, duplication)))


def copy_generator(seed: int, copy: int) -> torch.Generator:
    """The generator of masked copy ``copy``: the same (seed, copy) always gives the same mask."""
    return masking.generator(int(seed) * 1_000_003 + int(copy))


# ----------------------------------------------------------------------------- masked copies, epoch by epoch


def replacement_ids(tokenizer) -> torch.Tensor:
    """Ids a random replacement may take: the whole vocabulary except special tokens. (R,) long."""
    special = set(tokenizer.all_special_ids)
    return torch.tensor([i for i in range(len(tokenizer)) if i not in special], dtype=torch.long)


@dataclass(frozen=True)
class MaskedCopy:
    targets: torch.Tensor  # (T,) bool
    kinds: torch.Tensor  # (T,) KEEP / MASKED / RANDOM / UNCHANGED
    corrupted: torch.Tensor  # (T,) long, what the model is fed
    spans: tuple[int, ...]  # placed span lengths in words (span masking only)
    span_ids: torch.Tensor  # (T,) long: per token the index of its span, −1 where none (span masking only; else all −1)


def mask_copy(
    sentence: txt.Tokenized,
    unit: str,
    cfg: MaskingConfig,
    mask_token_id: int,
    random_ids: torch.Tensor,
    gen: torch.Generator,
) -> MaskedCopy:
    """One masked version of the sentence: choose the targets by token, whole word or span, then apply
    the replacement split (per token; per span for span masking, as SpanBERT does)."""
    ids = torch.tensor(sentence.ids, dtype=torch.long)  # (T,)
    keep = coverage.maskable(sentence)  # (T,)
    words = list(sentence.word_of)
    if unit == "span":
        span_ids, spans = masking.place_spans(words, cfg.mlm_probability, cfg.span_p, cfg.max_span, gen)
        corrupted, kinds = masking.corrupt_spans(ids, span_ids, mask_token_id, random_ids, cfg, gen)
        return MaskedCopy(span_ids >= 0, kinds, corrupted, tuple(spans), span_ids)
    if unit == "word":
        targets = masking.select_word_targets(words, cfg.mlm_probability, gen) & keep
    elif unit == "token":
        targets = masking.select_token_targets(keep, cfg.mlm_probability, gen)
    else:
        raise ValueError(f"unknown unit {unit!r}; expected one of {', '.join(masking.UNITS)}")
    corrupted, kinds = masking.corrupt(ids, targets, mask_token_id, random_ids, cfg, gen)
    return MaskedCopy(targets, kinds, corrupted, (), torch.full_like(ids, -1))


@dataclass(frozen=True)
class EpochPlan:
    """What the model is fed for one sentence over ``E`` epochs under one strategy."""

    copies: tuple[int, ...]  # (E,) the masked copy each epoch trains on
    targets: torch.Tensor  # (E, T) bool
    kinds: torch.Tensor  # (E, T)
    corrupted: torch.Tensor  # (E, T) long
    span_ids: torch.Tensor  # (E, T) long: per token its span's index, −1 where none (span masking only)


def epoch_plan(
    sentence: txt.Tokenized,
    strategy: str,
    unit: str,
    epochs: int,
    cfg: MaskingConfig,
    seed: int,
    mask_token_id: int,
    random_ids: torch.Tensor,
    duplication: int = LAB.duplication,
) -> EpochPlan:
    """The masks of epochs 0..epochs-1. Copy c is always drawn from ``copy_generator(seed, c)``, so
    static ×10 and dynamic agree on the first 10 epochs and part only when static ×10 starts over."""
    copies = tuple(copy_schedule(strategy, epochs, duplication))
    made = {
        c: mask_copy(sentence, unit, cfg, mask_token_id, random_ids, copy_generator(seed, c))
        for c in sorted(set(copies))
    }
    rows = [made[c] for c in copies]
    return EpochPlan(
        copies,
        torch.stack([r.targets for r in rows]),
        torch.stack([r.kinds for r in rows]),
        torch.stack([r.corrupted for r in rows]),
        torch.stack([r.span_ids for r in rows]),
    )  # (E, T) each


def times_targeted(plan: EpochPlan) -> tuple[torch.Tensor, torch.Tensor]:
    """Per position: (epochs in which it was a target, distinct masked copies in which it was one). (T,) each."""
    first: dict[int, int] = {}
    for e, c in enumerate(plan.copies):
        first.setdefault(c, e)
    return plan.targets.sum(0), plan.targets[sorted(first.values())].sum(0)  # one row per distinct copy


# ----------------------------------------------------------------------------- the model fills the blanks


@dataclass(frozen=True)
class Blank:
    """One target of the inspected epoch and a masked LM's guesses there (pieces as the tokenizer writes them)."""

    position: int
    kind: int  # MASKED / RANDOM / UNCHANGED: what the target was shown as
    original: str  # the piece that was there
    fed: str  # the piece the model was shown
    original_id: int
    guesses: mlm.Prediction  # its top-k, best first
    p_original: float
    rank_original: int  # 1 = the model's first choice

    @property
    def hits(self) -> tuple[bool, ...]:
        """(k,) True where a guess is the original piece."""
        return tuple(i == self.original_id for i in self.guesses.ids)

    def top(self, k: int) -> "Blank":
        return replace(self, guesses=self.guesses.top(k))


def fill_masks(
    model,
    tokenizer,
    input_ids: torch.Tensor,
    targets: torch.Tensor,
    original_ids: torch.Tensor,
    kinds: torch.Tensor,
    k: int = LAB.max_topk,
) -> list[Blank]:
    """A masked LM's top-k at every target position of one corrupted sequence.

    input_ids (what the model is fed), targets, original_ids, kinds: (T,). The probabilities are the model's
    softmax at the targets.
    """
    positions = targets.nonzero().flatten().tolist()
    if not positions:
        return []
    device = next(model.parameters()).device
    probs = mlm.probabilities_at(model, {"input_ids": input_ids[None].to(device)}, positions)  # (n, V)
    out = []
    for j, pos in enumerate(positions):
        orig, fed = int(original_ids[pos]), int(input_ids[pos])
        out.append(
            Blank(
                pos,
                int(kinds[pos]),
                tokenizer.convert_ids_to_tokens(orig),
                tokenizer.convert_ids_to_tokens(fed),
                orig,
                mlm.top_k(probs[j], tokenizer, k),
                float(probs[j, orig]),
                mlm.rank(probs[j], orig),
            )
        )
    return out


# ----------------------------------------------------------------------------- the lesson: inputs -> run -> result


@inputs_from(SPEC)
class Inputs:
    """The page's values as the lesson reads them: one field per SPEC parameter (app.core.lesson.inputs_from)."""


@dataclass(frozen=True)
class Coverage:
    """Coverage of one sentence's layout over ``n_draws`` seeded draws of ``LAB.max_epochs`` copies."""

    n_draws: int
    simulated: dict[str, tuple[float, ...]]  # per strategy, by epoch 1..max_epochs: mean share ever a target
    analytic: dict[str, tuple[float, ...]]  # the same, 1 - (1 - p)^k
    rate: float  # measured share of maskable positions that were targets
    split: int  # words split by a mask, over every draw and copy
    chosen: int  # words with at least one target, over every draw and copy
    placed: tuple[int, ...]  # placed spans by length 1..max_span (span masking only; zeros otherwise)


@dataclass(frozen=True)
class SpanLengths:
    """SpanBERT's span lengths in words, 1..max_span: the truncated geometric pmf, the counts drawn from
    it and the counts placed in this sentence (cut by its end, by each other and by the budget)."""

    pmf: tuple[float, ...]
    drawn: tuple[int, ...]
    placed: tuple[int, ...]
    means: dict[str, float]  # expected / drawn / placed


@dataclass(frozen=True)
class SboTarget:
    """One token of the chosen span: what SBO predicts it from (app/span_boundary.py), and what the lesson's model
    — a masked LM without an SBO head — guessed there from the whole corrupted sentence."""

    position: int  # i
    relative: int  # i − s + 1: the index of its position embedding p
    original: str  # the piece SBO and MLM must recover
    fed: str  # what the encoder was shown there
    mlm_top: str | None  # the lesson model's first guess at i (None: no guess was made)
    mlm_rank: int | None  # the rank of the original among its guesses (1 = first)
    mlm_p: float | None  # its probability of the original


@dataclass(frozen=True)
class Sbo:
    """SpanBERT's span-boundary objective for one span of the inspected epoch (span masking only)."""

    n_spans: int  # spans in the inspected epoch
    span: span_boundary.BoundarySpan  # the chosen one: s, e and its boundaries' positions
    left: str | None  # the piece at x_{s−1} (None: off the sequence)
    right: str | None  # the piece at x_{e+1}
    left_fed: str | None  # what the encoder was shown there (a boundary can itself be a target of a touching span)
    right_fed: str | None
    left_target: bool  # the left boundary is itself a target (another span touches this one)
    right_target: bool
    targets: tuple[SboTarget, ...]  # (e − s + 1,)
    window: tuple[int, int]  # the positions the figure shows, first and last (inclusive)


@dataclass(frozen=True)
class Result:
    """One view of the lab as plain data. Position-indexed tuples have one entry per token (T); the
    grid's have one row per epoch (E) of the chosen strategy; per-strategy dicts are keyed by STRATEGIES."""

    label: str  # the variant's name
    shown_as: str  # which checkpoint: the hub id, or the bundled stand-in for it
    tokenizer_kind: str
    marker: str  # how this tokenizer marks its pieces
    sentence: txt.Tokenized  # the pieces the model sees (word_of: index of the word, from 0)
    n_words: int
    n_maskable: int
    cfg: MaskingConfig  # as used (random fraction lowered when mask + random would exceed 100%)
    strategy: str
    unit: str
    epochs: int
    epoch: int  # the inspected epoch, 1-based
    copies: tuple[int, ...]  # (E,)
    kinds: tuple[tuple[int, ...], ...]  # (E, T)
    fed: tuple[tuple[str, ...], ...]  # (E, T) the piece the model is fed
    times: dict[str, tuple[int, ...]]  # (T,) epochs in which a position was a target
    distinct: dict[str, tuple[int, ...]]  # (T,) distinct masks in which it was one
    shares: tuple[float, float, float] | None  # mask / random / unchanged among this plan's targets; None if none
    targets_per_epoch: float
    coverage: Coverage
    multi_piece_words: int
    example_word: str  # the pieces of one word that has several, joined by spaces ("" when none has)
    spans: SpanLengths | None  # span masking only
    epoch_targets: int  # targets in the inspected epoch
    predictions: tuple[Blank, ...]
    notes: tuple[Note, ...]
    sbo: Sbo | None = None  # span masking with a span in the inspected epoch only

    @property
    def n_distinct(self) -> int:
        return len(set(self.copies))

    @property
    def never(self) -> dict[str, int]:
        """Per strategy: maskable positions that were never a target over these epochs."""
        return {
            s: sum(1 for d, sp in zip(counts, self.sentence.special) if not sp and d == 0)
            for s, counts in self.distinct.items()
        }

    @property
    def coverage_now(self) -> dict[str, tuple[float, float, int]]:
        """Per strategy after ``epochs`` epochs: (simulated coverage, 1 - (1 - p)^k, k distinct masks)."""
        e = self.epochs - 1
        return {
            s: (self.coverage.simulated[s][e], self.coverage.analytic[s][e], distinct_copies(s, self.epochs))
            for s in STRATEGIES
        }


def masking_config(inputs: Inputs) -> tuple[MaskingConfig, list[Note]]:
    """The rules the inputs ask for; mask + random above 100% of the targets keeps the mask share and
    lowers the random one to what is left (and says so)."""
    mask, rnd, notes = inputs.mask_frac, inputs.random_frac, []
    if mask + rnd > 1 + 1e-9:
        notes.append(
            Note(
                f"Mask {pct(mask)} + random {pct(rnd)} = {pct(mask + rnd)} of the targets, more than 100%: "
                f"using random = {pct(1 - mask)} (and 0% unchanged) until you lower one of them.",
                "warning",
            )
        )
        rnd = max(0.0, 1.0 - mask)
    return MaskingConfig(inputs.rate, mask, rnd, inputs.span_p, inputs.max_span), notes


def epoch_plans(
    loaded, sentence: txt.Tokenized, unit: str, epochs: int, cfg: MaskingConfig, seed: int
) -> dict[str, EpochPlan]:
    """Every strategy's plan for this sentence (``loaded``: its mask token and vocabulary)."""
    tok = loaded.tokenizer
    random_ids = replacement_ids(tok)
    return {s: epoch_plan(sentence, s, unit, epochs, cfg, seed, tok.mask_token_id, random_ids) for s in STRATEGIES}


def coverage_of(sentence: txt.Tokenized, unit: str, rate: float, span_p: float, max_span: int, seed: int) -> Coverage:
    """Coverage curves of all three strategies to ``LAB.max_epochs``, from one simulation."""
    cfg = MaskingConfig(mlm_probability=rate, span_p=span_p, max_span=max_span)
    sim = coverage.simulate(sentence, unit, cfg, seed, n_copies=LAB.max_epochs)
    schedules = {s: copy_schedule(s, LAB.max_epochs) for s in STRATEGIES}
    placed = Counter(sim.span_lengths)
    split, chosen = coverage.words_split(sim.targets, sentence.word_of)
    return Coverage(
        sim.targets.shape[0],
        {s: tuple(coverage.coverage_curve(sim, c)) for s, c in schedules.items()},
        {s: tuple(coverage.analytic_coverage(rate, c)) for s, c in schedules.items()},
        sim.rate,
        split,
        chosen,
        tuple(placed.get(k, 0) for k in range(1, max_span + 1)),
    )


def drawn_span_lengths(span_p: float, max_span: int, seed: int) -> tuple[int, ...]:
    """How many of ``LAB.n_span_samples`` drawn span lengths are 1..max_span."""
    lengths = masking.sample_span_lengths(LAB.n_span_samples, span_p, max_span, masking.generator(seed))
    return tuple(torch.bincount(lengths, minlength=max_span + 1)[1:].tolist())


def predictions_of(loaded, fed: tuple, targets: tuple, original: tuple, kinds: tuple) -> tuple[Blank, ...]:
    """The model's top ``LAB.max_topk`` at the targets of one corrupted row (the expensive step)."""
    t = [torch.tensor(x) for x in (fed, targets, original, kinds)]
    return tuple(fill_masks(loaded.model, loaded.tokenizer, *t, k=LAB.max_topk))


def _mean(counts) -> float:
    return sum(k * c for k, c in enumerate(counts, 1)) / max(1, sum(counts))


def run(models: dict, inputs: Inputs, cache=direct) -> Result:
    """Tokenize -> every strategy's epoch plan -> coverage over many draws -> (span lengths) -> the model
    fills the blanks of the inspected epoch. ``models`` holds the chosen variant under its key."""
    loaded = models[inputs.variant]
    tok, label = loaded.tokenizer, loaded.variant.label
    txt.require_text(inputs.text, DEFAULT_TEXT)
    cfg, notes = masking_config(inputs)
    sentence = txt.tokenize(tok, inputs.text, LAB.max_tokens)
    if sentence.truncated:
        why = f"{label}'s limit" if sentence.cap < LAB.max_tokens else "the lab's cap"
        notes.append(
            Note(
                f"Your text is {sentence.n_full} tokens long for {label}; the lab uses the first "
                f"{len(sentence.ids)} ({why}) and drops the rest.",
                "warning",
            )
        )
    notes += [Note(n) for n in txt.input_notes(sentence, tok, inputs.text, label)]
    n_maskable = sum(not s for s in sentence.special)
    if n_maskable == 0:
        raise Stop(
            f"After tokenization nothing in this text can be a target: {label}'s tokenizer read only special "
            "tokens. Type a few words."
        )
    epoch = inputs.epoch
    if epoch > inputs.epochs:
        epoch = inputs.epochs
        notes.append(
            Note(f"Epoch {inputs.epoch} is beyond the {inputs.epochs} epochs shown: inspecting epoch {epoch}.")
        )

    plans = cache(epoch_plans, loaded, sentence, inputs.unit, inputs.epochs, cfg, inputs.seed)
    plan = plans[inputs.strategy]
    per = {s: times_targeted(p) for s, p in plans.items()}
    keep = coverage.maskable(sentence)
    kinds = plan.kinds[:, keep]  # (E, maskable)
    n_targets = int((kinds != KEEP).sum())
    shares = tuple(int((kinds == k).sum()) / n_targets for k in (MASKED, RANDOM, UNCHANGED)) if n_targets else None
    cov = cache(coverage_of, sentence, inputs.unit, cfg.mlm_probability, cfg.span_p, cfg.max_span, inputs.seed)

    spans = _span_lengths(cfg, inputs.seed, cov, cache) if inputs.unit == "span" else None

    pieces_of = Counter(w for w in sentence.word_of if w is not None)
    multi = [w for w, c in pieces_of.items() if c > 1]
    example = " ".join(sentence.pieces[i] for i in sentence.pieces_of(multi[0])) if multi else ""

    row = epoch - 1
    targets = plan.targets[row]
    predictions = _fill_blanks(loaded, plan, row, sentence, cache, notes) if targets.any() else ()
    sbo = None
    if inputs.unit == "span":
        fed_row = tuple(tok.convert_ids_to_tokens(plan.corrupted[row].tolist()))
        sbo, note = sbo_of(sentence, tuple(plan.span_ids[row].tolist()), fed_row, predictions, inputs.span, epoch)
        if note:
            notes.append(note)
    return Result(
        label,
        loaded.shown_as,
        loaded.variant.tokenizer_kind,
        next((m for kind, m in MARKERS if loaded.variant.tokenizer_kind.startswith(kind)), ""),
        sentence,
        len(pieces_of),
        n_maskable,
        cfg,
        inputs.strategy,
        inputs.unit,
        inputs.epochs,
        epoch,
        plan.copies,
        tuple(tuple(r) for r in plan.kinds.tolist()),
        tuple(tuple(tok.convert_ids_to_tokens(r)) for r in plan.corrupted.tolist()),
        {s: tuple(t.tolist()) for s, (t, _) in per.items()},
        {s: tuple(d.tolist()) for s, (_, d) in per.items()},
        shares,
        n_targets / inputs.epochs,
        cov,
        len(multi),
        example,
        spans,
        int(targets.sum()),
        tuple(p.top(inputs.topk) for p in predictions),
        tuple(notes),
        sbo,
    )


def _span_lengths(cfg, seed: int, cov, cache) -> SpanLengths:
    """Span lengths: the clipped geometric distribution, lengths drawn with ``seed``, and those placed in the text."""
    drawn = cache(drawn_span_lengths, cfg.span_p, cfg.max_span, seed)
    return SpanLengths(
        tuple(masking.span_length_pmf(cfg.span_p, cfg.max_span)),
        drawn,
        cov.placed,
        {
            "expected": masking.clipped_geometric_mean(cfg.span_p, cfg.max_span),
            "drawn": _mean(drawn),
            "placed": _mean(cov.placed),
        },
    )


def _fill_blanks(loaded, plan, row: int, sentence, cache, notes: list) -> tuple[Blank, ...]:
    """The model's guesses at the targets of epoch ``row + 1``; () with an error note where the checkpoint loads but
    cannot run."""
    label, targets = loaded.variant.label, plan.targets[row]
    try:
        return cache(
            predictions_of,
            loaded,
            tuple(plan.corrupted[row].tolist()),
            tuple(targets.tolist()),
            sentence.ids,
            tuple(plan.kinds[row].tolist()),
        )
    except (RuntimeError, ValueError, IndexError) as e:  # a checkpoint that loads but cannot run
        notes.append(
            Note(
                f"{label} could not fill the blanks ({type(e).__name__}: {txt.md(str(e), 160)}). Choose another model.",
                "error",
            )
        )
    return ()


SBO_CONTEXT = 3  # positions the SBO figure shows on each side of the boundaries


def sbo_of(
    sentence: txt.Tokenized,
    span_ids: tuple[int, ...],
    fed: tuple[str, ...],
    predictions: tuple[Blank, ...],
    chosen: int,
    epoch: int,
) -> tuple[Sbo | None, Note | None]:
    """The span-boundary objective for span number ``chosen`` (from 1) of one epoch's masks: its boundaries, each
    token's relative position, and the lesson model's MLM guesses at its tokens (``predictions``). span_ids, fed:
    (T,) the epoch's span index per token (−1: none) and the pieces the model is fed. (None, None) when the epoch
    has no span; a ``chosen`` beyond its spans shows span 1 and says so."""
    spans = span_boundary.boundary_spans(span_ids)
    if not spans:
        return None, None
    note = None
    if not 1 <= chosen <= len(spans):
        note = Note(
            f"Epoch {epoch} masks {txt.count(len(spans), 'span')}: span {chosen} does not exist, showing span 1."
        )
        chosen = 1
    span = spans[chosen - 1]
    pieces, guessed = sentence.pieces, {b.position: b for b in predictions}

    def at(pos: int | None, what) -> str | None:
        return None if pos is None else what[pos]

    targets = tuple(
        SboTarget(
            i,
            rel,
            pieces[i],
            fed[i],
            guessed[i].guesses.pieces[0] if i in guessed else None,
            guessed[i].rank_original if i in guessed else None,
            guessed[i].p_original if i in guessed else None,
        )
        for i, rel in zip(span.positions, span.relative)
    )
    first = max(0, (span.left if span.left is not None else span.start) - SBO_CONTEXT)
    last = min(len(pieces) - 1, (span.right if span.right is not None else span.end) + SBO_CONTEXT)
    return Sbo(
        len(spans),
        span,
        at(span.left, pieces),
        at(span.right, pieces),
        at(span.left, fed),
        at(span.right, fed),
        span.left is not None and span_ids[span.left] >= 0,
        span.right is not None and span_ids[span.right] >= 0,
        targets,
        (first, last),
    ), note


def sbo_text(s: Sbo) -> str:
    """What the SBO figure shows, in numbers from it (markdown; every token escaped)."""

    def side(name: str, piece: str | None, fed: str | None, target: bool) -> str:
        if piece is None:
            return f"no {name} boundary (the span reaches the sequence's edge)"
        shown = (
            f" (fed as {txt.md(fed)}: a token of the touching span, so SBO reads a masked position there)"
            if target
            else ""
        )
        return f"{name} boundary {txt.md(piece)}{shown}"

    sp = s.span
    rel = ", ".join(f"{txt.md(t.original)} p{t.relative}" for t in s.targets)
    return (
        f"Span {sp.number} of {s.n_spans} covers positions {sp.start}–{sp.end} "
        f"({txt.count(len(sp), 'token')}): {side('left', s.left, s.left_fed, s.left_target)} at {sp.left}, "
        f"{side('right', s.right, s.right_fed, s.right_target)} at {sp.right}. SBO predicts each of its tokens from "
        f"those two outputs and its relative position: {rel}."
    )


def sbo_model_text(s: Sbo, label: str) -> str:
    """What the lesson's model can and cannot show of SBO, with its MLM guesses at the span's tokens (markdown)."""
    guessed = [t for t in s.targets if t.mlm_top is not None]
    first = sum(t.mlm_rank == 1 for t in guessed)
    said = (
        (
            f"**What {txt.md(label)} can show**: its masked-LM head's guesses at the span's tokens, from the whole "
            f"corrupted sentence (the span's own masked positions included): the original ranked first at "
            f"{first} of {txt.count(len(guessed), 'token')}. "
        )
        if guessed
        else ""
    )
    return (
        said + f"**What it cannot show**: SBO's own guess, from the two boundary outputs and p alone — it has no "
        "SBO head. None of this lab's models was trained with SBO: the bundled stand-ins and the catalogue's hub "
        "checkpoints were trained with masked LM (none with SBO), and a transformers masked-LM model has no SBO "
        "head to load. **Ours**: "
        "the spans, their boundaries and relative positions above, computed by the paper's rule from the spans "
        f"drawn here. **The paper's**: the SBO head ({span_boundary.HEAD}) and its loss L_MLM + L_SBO "
        f"({span_boundary.PAPER})."
    )


def span_story(means: dict) -> str:
    """Whether the spans placed in the sentence came out shorter than the ones drawn, computed from the span
    figure's means (words): the masking budget of a short sentence cuts long spans."""
    drawn, placed = means["drawn"], means["placed"]
    if placed < drawn - 0.2:
        return (
            f"Here the placed spans ({placed:.2f} words on average) are shorter than the drawn ones ({drawn:.2f}): "
            "the budget of a short sentence cuts them. On a long text the placed spans approach the drawn ones."
        )
    return (
        f"Here the placed spans ({placed:.2f} words on average) are as long as the drawn ones ({drawn:.2f}, within "
        "0.2 words): the sentence leaves the budget room for them."
    )


def spread_story(never: dict[str, int], n_maskable: int, epochs: int) -> str:
    """What the distinct-masks figure shows about spreading, computed from it: a static mask's positions are
    always or never a question; how many positions dynamic masking left out after ``epochs`` epochs."""
    out = [
        "With a static mask a position is either always a question or never"
        + (f" (here {never['static']} of the {n_maskable} never are)." if "static" in never else ".")
    ]
    if "dynamic" in never:
        left = never["dynamic"]
        out.append(
            f"Dynamic masking reached every position in {epochs} epoch(s)."
            if left == 0
            else f"Dynamic masking left {left} of {n_maskable} out in {epochs} epoch(s): each epoch draws afresh, "
            "so more epochs reach them."
        )
    return " ".join(out)


# ----------------------------------------------------------------------------- ask the class


def question(result: Result):
    """ "Which word goes in the blank?" for the first masked target of the inspected epoch: the model's four likeliest
    words and the word that was there, in alphabetical order (the order gives nothing away), with the model's
    probability for each; its answer is its first choice. None when no target was shown as the mask."""
    from app.classroom.question import Question, join_pieces, reads

    blank = next((b for b in result.predictions if b.kind == MASKED), None)
    if blank is None:
        return None
    guesses = {}
    for word, p in zip(blank.guesses.words, blank.guesses.probabilities):
        word = reads(word).strip()
        if word and word.isalpha() and word not in guesses and len(guesses) < 4:
            guesses[word] = float(p)
    original = reads(blank.original).strip()
    if original:
        guesses.setdefault(original, float(blank.p_original))
    if len(guesses) < 2:
        return None
    fed = list(result.fed[result.epoch - 1])
    fed[blank.position] = "____"
    shown = [p for p, special in zip(fed, result.sentence.special) if not special]
    top = reads(blank.guesses.words[0]).strip()
    rank = f"its guess no. {blank.rank_original}" if blank.rank_original else "not among its guesses"
    return Question(
        "masking",
        f"Which word goes in the blank? {join_pieces(shown)}",
        "choice",
        tuple(sorted(guesses, key=str.lower)),
        (top,),
        tuple(guesses.items()),
        f"The word there was {original}: {rank} ({100 * blank.p_original:.0f}%), on {result.shown_as}.",
    )
