"""Sentence objectives: next-sentence prediction (NSP, BERT) vs sentence-order prediction (SOP, ALBERT),
scored by the models' own sentence heads on two sentences in order and swapped.

Both objectives read a pair as ``[CLS] A [SEP] B [SEP]`` (token types 0 for ``[CLS] A [SEP]``, 1 for
``B [SEP]``) and put a two-way classifier on the pooled ``[CLS]`` vector. Index 0 means "B follows A",
index 1 means "it does not" — in each objective's own sense:

- **NSP** (Devlin et al., 2019): half the training pairs keep their true B (*IsNext*, 0); the other half
  take B from *another document* (*NotNext*, 1). Another document almost always means another topic —
  other names, other things — so NSP can be solved by noticing the topic changed, without any sense of
  order. ``BertForPreTraining``'s ``cls.seq_relationship`` head.
- **SOP** (Lan et al., 2020, ALBERT): the negatives are the *same two segments swapped* (1). Same topic,
  same words on both sides: only the order — coherence — tells them apart. ALBERT's ``sop_classifier``
  on its pooler.

The lesson asks both heads about the user's two sentences in both orders, then about pairs generated
from held-out stories (``assets/sentence_order/stories.txt``): two consecutive segments of a story in
order, B replaced by a segment of another story (NSP's negative: a topic shift), and the two swapped
(SOP's negative). Over those pairs it measures each head on each task — the grid of ALBERT's Table 5, where
the NSP-trained model scored 90.5% on NSP and 52.0% (chance) on SOP, the SOP-trained one 78.9% and 86.5%.
Every sentence the page says about that grid is computed from it (:func:`summarize_grid`): each cell's
accuracy with a 95% binomial interval, whether it beats chance, and whether each head shows the paper's pattern.

The ALBERT checkpoint is loaded as a masked LM by the catalogue (``AlbertForMaskedLM``, no pooler);
its pooler and SOP classifier are read from the same checkpoint file (:func:`sop_head_weights`) and
applied exactly as ``AlbertForPreTraining`` does (tests check the logits against it).
"""

from __future__ import annotations

from app.core import preload  # noqa: F401  (first: the router calls preload.load() before a lesson runs)

preload.load()  # the heavy imports, once, in one thread, before this module's own (a page run outside the router too)

import math
import random
from dataclasses import dataclass, replace


from app.core import text as txt
from app.core.lesson import Note, Stop, direct, inputs_from
from app.core.state import Param, Spec, figure_param, seed_param, text_param
from app.sentence_heads import (  # noqa: F401  (the heads, scored as training and the report score them)
    CHUNK,
    MAX_TOKENS,
    POOL_PAIRS,
    POOL_SEED,
    SOP_KEYS,
    encode_pairs,
    head_probs,
    in_length_order,
    sentence_logits,
    sop_head_weights,
    task_accuracy,
)
from app.sentence_pairs import (  # noqa: F401
    FUNCTION_WORDS,
    KIND_LABELS,
    KINDS,
    SEGMENT_SENTENCES,
    STORIES,
    TASKS,
    Pair,
    content_words,
    generate_pairs,
    load_stories,
    shared_words,
)

ORDER = 90  # its place in teaching order (app/lessons/__init__.py lists lessons by it)
TITLE = 'NSP vs SOP: sentence objectives'
ICON = ':material/swap_vert:'
LINE = (
    'Two sentences in order and swapped: what next-sentence and sentence-order heads see, '
    'and why ALBERT found NSP easy.'
)


@dataclass(frozen=True)
class Defaults:
    max_tokens: int = MAX_TOKENS  # a pair's tokens, specials included: the NSP stand-in trained on at most 96
    examples: int = 3  # generated pairs of each kind shown in the table
    sample_pairs: int = POOL_PAIRS  # base pairs behind the accuracy grid (each in order, other story, swapped)
    large_pairs: int = 12  # ... the first this many of them when a head is of the real checkpoints' size:
    large_params: int = 20_000_000  # a head with more parameters than this (bert-base: 110 M; the stand-ins: ~1 M)
    pool_seed: int = (
        POOL_SEED  # the pool of base pairs is fixed (scored once per model); the page's seed picks those shown
    )
    segment_sentences: tuple[int, int] = (
        SEGMENT_SENTENCES  # sentences per generated segment (A, B): uniform in this range,
    )
    # as the NSP stand-in's recipe draws its pairs (app/training/bert_nsp.py); one sentence a side holds too little
    # to tell a story from another (a bag-of-words classifier: 0.74 on such pairs, 0.85 on 2-3 sentences)


DEFAULTS = Defaults()
DEFAULT_A = "The little girl found a red ball in the park."
DEFAULT_B = "She picked it up and ran home to show her mom."
MODELS = ("albert", "bert-nsp")
TAKEAWAY = "NSP's negatives change the topic; SOP's keep it and swap the order, so only order can tell them apart."
SPEC = Spec(
    text_param(DEFAULT_A, "Sentence A"),
    text_param(DEFAULT_B, "Sentence B", name="text_b", shared=False),
    seed_param(help="Which of the generated pairs from held-out stories are shown: the same seed, the same pairs."),
    Param(
        "examples",
        "int",
        DEFAULTS.examples,
        lo=1,
        hi=10,
        widget="slider",
        label="Generated pairs shown",
        help="Base pairs in the table; each appears in order, with B from another story, and swapped.",
    ),
    figure_param(
        (
            ("pair", "Each head on your two sentences, in order and swapped"),
            ("accuracy", "Who solves which task (held-out pairs)"),
            ("kinds", "Each head on each kind of pair (held-out)"),
        )
    ),
)

# index 1 of each head, in its own objective's words
OBJECTIVES = {"albert": "sop", "bert-nsp": "nsp"}
SAYS = {"sop": "swapped", "nsp": "not next"}
HEAD_NAMES = {"sop": "SOP head (ALBERT)", "nsp": "NSP head (BERT)"}
TASK_NAMES = {"nsp": "NSP", "sop": "SOP"}
# ALBERT (Lan et al., 2020), Table 5, ALBERT-base: accuracy of the model trained with (row) on each intrinsic task
PAPER = {"nsp": {"nsp": 0.905, "sop": 0.520}, "sop": {"nsp": 0.789, "sop": 0.865}}
# ... the paper's pattern: which head beats chance on which task (NSP-trained: NSP only; SOP-trained: both)
PATTERN = {"nsp": {"nsp": True, "sop": False}, "sop": {"nsp": True, "sop": True}}
Z95 = 1.959964  # the normal quantile of a two-sided 95% interval


# ----------------------------------------------------------------------------- the held-out stories


# ----------------------------------------------------------------------------- the two heads


def mcnemar_exact(only_first: int, only_second: int) -> float:
    """Two-sided exact McNemar test: the pairs where exactly one of two heads is right (``only_first`` of them the
    first head, ``only_second`` the second), against a fair coin. 1.0 when there are none."""
    n = only_first + only_second
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, k) for k in range(min(only_first, only_second) + 1)) / 2**n
    return min(1.0, 2 * tail)


COMPARE_ALPHA = 0.05  # over the comparisons a page makes (one per task), split equally (Bonferroni)


def compare_heads(heads, hits: dict[tuple[str, str], list[bool]]) -> tuple[str, ...]:
    """Table 5's comparison, on the same pairs: for each task, is the head trained on it ahead of the other head?
    ``hits[(key, task)]``: whether the head was right on each of the task's pairs (the same pairs, in the same
    order, for every head). An exact McNemar test on the pairs where only one head is right, at
    ``COMPARE_ALPHA`` split over the tasks; one sentence per task, computed from the counts. Empty unless one
    NSP head and one SOP head are both there."""
    by_objective = {h.objective: h for h in heads}
    if set(by_objective) != set(TASKS):
        return ()
    alpha = COMPARE_ALPHA / len(TASKS)
    lines = []
    for task in TASKS:
        own, other = by_objective[task], by_objective[next(t for t in TASKS if t != task)]
        a, b = hits[(own.key, task)], hits[(other.key, task)]
        only_own = sum(x and not y for x, y in zip(a, b))
        only_other = sum(y and not x for x, y in zip(a, b))
        p = mcnemar_exact(only_own, only_other)
        if p <= alpha:
            ahead = own if only_own > only_other else other
            verdict = f"**the {ahead.name} is ahead**" + (
                ""
                if ahead is own
                else f" — not the paper's pattern, where the {TASK_NAMES[task]}-trained head leads on its own task"
            )
        else:
            verdict = f"not told apart on {len(a)} pairs"
        lines.append(
            f"On {TASK_NAMES[task]}, the {own.name} — the head trained on it — is right on {sum(a)} of "
            f"{len(a)} pairs, the {other.name} on {sum(b)}. Of the {only_own + only_other} pairs where only "
            f"one of them is right, {only_own} are the {own.name}'s (exact McNemar test, p = {p:.2g}; "
            f"{len(TASKS)} comparisons, each at {alpha:g}): {verdict}."
        )
    return tuple(lines)


# ----------------------------------------------------------------------------- the lesson: inputs -> run -> result


@inputs_from(SPEC)
class Inputs:
    """The page's values as the lesson reads them: one field per SPEC parameter (app.core.lesson.inputs_from)."""


@dataclass(frozen=True)
class Head:
    """One sentence head that could be scored. says: what its index 1 means ("swapped" / "not next")."""

    key: str  # catalogue key
    objective: str  # "sop" | "nsp"
    name: str
    says: str
    shown_as: str  # which checkpoint produced it (loaded.shown_as)


@dataclass(frozen=True)
class Scored:
    """A generated pair with each head's P(B does not follow A) (by catalogue key) and the content words
    A and B share."""

    pair: Pair
    shared: int
    p_not: dict[str, float]


@dataclass(frozen=True)
class Result:
    """heads: the heads that were scored. user[key] = (probs for (A, B), probs for (B, A)), each
    (P(B follows A), P(it does not)). examples: the generated pairs shown; accuracy[key][task]: the head's
    accuracy on a task's pairs (argmax, over ``n_pairs`` base pairs); mean_not[key][kind]: mean
    P(does not follow) per kind; mean_shared[kind]: mean shared content words per kind."""

    heads: tuple[Head, ...]
    text_a: str
    text_b: str
    user: dict[str, tuple[tuple[float, float], tuple[float, float]]]
    pieces: dict[str, tuple[str, ...]]  # the (A, B) input each model read, as its tokens
    examples: tuple[Scored, ...]
    accuracy: dict[str, dict[str, float]]
    mean_not: dict[str, dict[str, float]]
    mean_shared: dict[str, float]
    n_pairs: int
    notes: tuple[Note, ...]
    grid: "Grid"  # the accuracy grid with its intervals and the sentences that describe it (summarize_grid)


SAME_BAND = 0.05  # a change of P(does not follow) under 5 points when swapped: "about the same"


def pair_story(heads, user: dict[str, tuple[tuple[float, float], tuple[float, float]]]) -> str:
    """What each head did with the student's own pair when it was swapped, from its numbers: an order-aware head
    should say "does not follow" more often for (B, A) than for (A, B); the sentence says whether this one did
    ("SOP head: 89% -> 19% when swapped: it went down, taking the swapped order for the original on this pair")."""
    parts = []
    for h in heads:
        (_, ab), (_, ba) = user[h.key]
        moved = f"**{h.name}**: P({h.says}) {ab:.0%} → {ba:.0%} when swapped"
        if abs(ba - ab) < SAME_BAND:
            parts.append(
                f"{moved}: about the same both ways (within {SAME_BAND:.0%}), as a head that checks only the "
                "topic would answer, since both orders share the same words"
            )
        elif ba > ab:
            parts.append(f"{moved}: up, as an order-aware head should go")
        else:
            parts.append(f"{moved}: down — on this pair it takes the swapped order for the original one")
    return "On your pair: " + "; ".join(parts) + "." if parts else ""


def catches_swap(h: "Head", user) -> bool:
    """Whether head ``h`` tells this pair's two orders apart the way its task asks: P(B does not follow A) under 0.5
    for (A, B) as written and above 0.5 for (B, A), swapped (its own 0.5 line, as the accuracies count)."""
    (_, ab), (_, ba) = user[h.key]
    return ab < 0.5 < ba


def takeaway(r: "Result") -> str:
    """The slide's takeaway, computed from this view's heads: whether each caught the swap of the pair on the page
    (``catches_swap``, with the probability it gave the swapped pair), then each head's accuracy on the held-out SOP
    pairs (in order or swapped: order is all there is to tell them apart). ``TAKEAWAY`` is the number-free version."""
    said = {h.key: f"{h.name.split(' (')[0]}: {r.user[h.key][1][1]:.0%} {h.says}" for h in r.heads}
    caught = [h for h in r.heads if catches_swap(h, r.user)]
    missed = [h for h in r.heads if h not in caught]
    if not missed:
        pair = f"On this pair {'both heads catch' if len(caught) > 1 else 'the head catches'} the swap"
    elif not caught:
        pair = f"On this pair {'neither head catches' if len(missed) > 1 else 'the head misses'} the swap"
    else:
        pair = (
            f"On this pair only the {caught[0].name.split(' (')[0]} catches the swap; the "
            f"{missed[0].name.split(' (')[0]} does not"
        )
    pair += " (" + "; ".join(said[h.key] for h in r.heads) + ")"
    sop = [r.grid.cell(h.key, "sop") for h in r.heads]
    held = ", ".join(
        f"the {h.name.split(' (')[0]}{' is right on' if i == 0 else ' on'} {c.accuracy:.0%}"
        for i, (h, c) in enumerate(zip(r.heads, sop))
    )
    return f"{pair}. On {sop[0].n} held-out pairs in order or swapped, where only the order differs, {held}."


def wilson_interval(correct: int, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a binomial proportion ``correct / n`` (95% by default): (low, high)."""
    if n <= 0:
        return 0.0, 1.0
    p = correct / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


@dataclass(frozen=True)
class Cell:
    """One head on one task: ``correct`` of ``n`` pairs (half of them negatives, so 0.5 is chance) and the 95%
    Wilson interval of that accuracy."""

    key: str  # catalogue key of the head
    objective: str  # the head's own objective: "nsp" | "sop"
    task: str  # "nsp" | "sop"
    correct: int
    n: int
    low: float
    high: float

    @property
    def accuracy(self) -> float:
        return self.correct / self.n if self.n else float("nan")

    @property
    def beats_chance(self) -> bool:
        """True when the whole interval lies above 0.5."""
        return self.low > 0.5

    @property
    def verdict(self) -> str:
        """ "above chance" | "below chance" (the whole interval on one side of 0.5) | "at chance"."""
        return "above chance" if self.low > 0.5 else "below chance" if self.high < 0.5 else "at chance"

    def says(self) -> str:
        """e.g. "67.5% on SOP (95% interval 58.7–75.2%, all above 50%: 17.5 points above chance)"."""
        gap = abs(self.accuracy - 0.5) * 100
        how = {
            "above chance": f"all above 50%: {gap:.1f} points above chance",
            "below chance": f"all below 50%: {gap:.1f} points below chance",
            "at chance": "which holds 50%: at chance",
        }[self.verdict]
        return (
            f"{self.accuracy:.1%} on {TASK_NAMES[self.task]} of {self.n} pairs "
            f"(95% interval {self.low * 100:.1f}–{self.high:.1%}, {how})"
        )


@dataclass(frozen=True)
class Grid:
    """What the heads × tasks grid shows, as the page says it. cells: one per head and task (heads in the
    Result's order, NSP task first). matches[key]: the head beats chance exactly where the paper's head of its
    objective did (PATTERN). heading, title: the section's heading and the figure's title; lines: one markdown
    sentence per head — what it does here, and the paper's numbers beside it."""

    cells: tuple[Cell, ...]
    matches: dict[str, bool]
    heading: str
    title: str
    lines: tuple[str, ...]

    def cell(self, key: str, task: str) -> Cell:
        return next(c for c in self.cells if c.key == key and c.task == task)


def _paper(objective: str) -> str:
    row = PAPER[objective]
    return (
        f"ALBERT's {TASK_NAMES[objective]}-trained model scored {row['nsp']:.1%} on NSP and {row['sop']:.1%} on "
        "SOP (Table 5)"
    )


def summarize_grid(heads, cells: tuple[Cell, ...]) -> Grid:
    """The grid's prose, computed from its cells: for each head, its accuracy on each task with the interval and
    whether it beats chance, whether that is the paper's pattern for a head of its objective — said plainly
    when it is not — and the paper's own numbers. The heading claims "NSP is easy and SOP is not" only when the
    NSP head is there and every head shows the paper's pattern."""
    by = {(c.key, c.task): c for c in cells}
    matches, lines = {}, []
    for h in heads:
        nsp, sop = by[(h.key, "nsp")], by[(h.key, "sop")]
        matches[h.key] = all(by[(h.key, t)].beats_chance == PATTERN[h.objective][t] for t in TASKS)
        scores = f"**{h.name}**: {nsp.says()}; {sop.says()}."
        solved = [TASK_NAMES[t] for t in TASKS if by[(h.key, t)].beats_chance]
        does = (
            f"It beats chance on {' and '.join(solved)} only."
            if len(solved) == 1
            else "It beats chance on both tasks."
            if solved
            else "It beats chance on neither task."
        )
        if matches[h.key]:
            verdict = f"That is the paper's pattern: {_paper(h.objective)}."
        else:
            expected = [TASK_NAMES[t] for t in TASKS if PATTERN[h.objective][t]]
            verdict = (
                f"That is **not** the paper's pattern, which would have it beat chance on "
                f"{' and '.join(expected)}{' only' if len(expected) == 1 else ''}: {_paper(h.objective)}."
            )
        lines.append(f"{scores} {does} {verdict}")
    nsp_head = any(h.objective == "nsp" for h in heads)
    if nsp_head and all(matches.values()):
        heading = "Why NSP is easy and SOP is not"
        title = "Who solves which task: ALBERT's Table 5 in miniature"
    elif all(matches.values()):
        heading = "Which task the SOP head solves"
        title = "Who solves which task (the grid of ALBERT's Table 5)"
    else:
        heading = "Who solves which task here — not the paper's pattern"
        title = "Who solves which task (here not the pattern of ALBERT's Table 5)"
    return Grid(tuple(cells), matches, heading, title, tuple(lines))


def _heads(models: dict) -> tuple[list, list[Note]]:
    """The loaded models with a sentence head, and notes for those that cannot be used."""
    usable, notes = [], []
    for key in MODELS:
        loaded = models.get(key)
        objective = OBJECTIVES[key]
        if loaded is None or isinstance(loaded, str):
            why = f": {txt.md(loaded, 200)}" if isinstance(loaded, str) else ""
            origin = (
                " The bundled NSP stand-in is built from the BERT stand-in by "
                f"{txt.md('python -m app.training --recipe bert-nsp')} (into {txt.md('assets/models/bert-nsp')})."
                if key == "bert-nsp"
                else ""
            )
            notes.append(
                Note(f"The {HEAD_NAMES[objective]} is not available here{why}, so it is left out.{origin}", "warning")
            )
            continue
        usable.append((key, loaded))
    return usable, notes


def shown_bases(seed: int, examples: int, pool: int = DEFAULTS.sample_pairs) -> list[int]:
    """Which base pairs of the pool (its first ``pool``) the table shows: ``examples`` of them, chosen by the
    seed (seed 0: the first)."""
    n = min(max(int(examples), 0), pool)
    return list(range(n)) if int(seed) == 0 else random.Random(int(seed)).sample(range(pool), n)


def pool_size(models) -> int:
    """How many base pairs of the pool the heads score: all of them for the stand-ins, the first
    ``large_pairs`` when any head is larger than ``large_params`` parameters. Scoring the pool is one forward
    over 3 × pool pairs of up to 64 tokens: 180 pairs through bert-base take ~20 s on one CPU core, 36 ~4 s."""
    largest = max((sum(p.numel() for p in m.model.parameters()) for m in models), default=0)
    return DEFAULTS.large_pairs if largest > DEFAULTS.large_params else DEFAULTS.sample_pairs


def _mean(xs) -> float:
    xs = list(xs)
    return sum(xs) / len(xs) if xs else float("nan")


def run(models: dict, inputs: Inputs, cache=direct) -> Result:
    """Both heads on (A, B) and (B, A), then on generated pairs from held-out stories.

    ``models`` maps "albert" and "bert-nsp" to loaded models (a str where loading failed: that head is
    left out with a note). The user's pair and the generated pairs go through ``cache`` separately, so
    typing a sentence does not re-score the stories."""
    a = txt.require_text(inputs.text, DEFAULT_A, "two sentences (A and B)").strip()
    b = txt.require_text(inputs.text_b, DEFAULT_B, "two sentences (A and B)").strip()
    usable, notes = _heads(models)
    heads, user, pieces = [], {}, {}
    for key, loaded in usable:
        objective = OBJECTIVES[key]
        probs = cache(head_probs, loaded, ((a, b), (b, a)))
        if probs is None:
            notes.append(
                Note(
                    f"{txt.md(loaded.shown_as, 120)} ships no sentence head (its checkpoint has no "
                    f"pooler and {objective.upper()} classifier), so the {HEAD_NAMES[objective]} is left out.",
                    "warning",
                )
            )
            continue
        heads.append(Head(key, objective, HEAD_NAMES[objective], SAYS[objective], loaded.shown_as))
        user[key] = (probs[0], probs[1])
        tk = txt.tokenize(loaded.tokenizer, a, DEFAULTS.max_tokens, text_pair=b)
        pieces[key] = tk.pieces
        if tk.truncated:
            notes.append(
                Note(
                    f"Your two sentences are {tk.n_full} tokens for {loaded.variant.label}; its head reads "
                    f"the first {len(tk.ids)} (the NSP stand-in was trained on pairs of at most "
                    f"{DEFAULTS.max_tokens}), cutting the longer sentence first.",
                    "warning",
                )
            )
        for which, sentence in (("A", a), ("B", b)):
            notes += [
                Note(f"Sentence {which}: {n}")
                for n in txt.input_notes(
                    txt.tokenize(loaded.tokenizer, sentence, DEFAULTS.max_tokens),
                    loaded.tokenizer,
                    sentence,
                    loaded.variant.label,
                )
            ]
    if not heads:
        raise Stop(
            "No sentence head can be scored here: neither ALBERT's SOP head nor BERT's NSP head is available. "
            + " ".join(n.text for n in notes if n.level != "info"),
            "error",
        )

    stories = load_stories()
    # A fixed pool, scored once per model; the seed only picks the rows shown. Heads of the real checkpoints'
    # size score its first large_pairs (seconds on a CPU, where all 60 would take most of a minute).
    pool = pool_size([dict(usable)[h.key] for h in heads])
    if pool < DEFAULTS.sample_pairs:
        notes.append(
            Note(
                f"These heads are of the real checkpoints' size, so they score {pool} of the "
                f"{DEFAULTS.sample_pairs} story pairs the stand-ins score ({3 * pool} inputs instead of "
                f"{3 * DEFAULTS.sample_pairs}): the page stays quick on a CPU, and the accuracies below "
                "are coarser."
            )
        )
    sample = generate_pairs(stories, DEFAULTS.sample_pairs, DEFAULTS.pool_seed)[: 3 * pool]  # (3 · pool,)
    texts = tuple((p.a, p.b) for p in sample)
    p_not = {h.key: [p1 for _, p1 in cache(head_probs, dict(usable)[h.key], texts)] for h in heads}
    scored = tuple(Scored(p, shared_words(p.a, p.b), {k: v[i] for k, v in p_not.items()}) for i, p in enumerate(sample))
    accuracy = {h.key: task_accuracy(sample, p_not[h.key]) for h in heads}
    cells, hits = _cells(heads, scored)
    grid = summarize_grid(heads, tuple(cells))
    grid = replace(grid, lines=grid.lines + compare_heads(heads, hits))  # the two heads on the same pairs
    mean_not = {
        h.key: {kind: _mean(s.p_not[h.key] for s in scored if s.pair.kind == kind) for kind in KINDS} for h in heads
    }
    mean_shared = {kind: _mean(s.shared for s in scored if s.pair.kind == kind) for kind in KINDS}
    picked = shown_bases(inputs.seed, inputs.examples, pool)
    shown = tuple(
        sorted(
            (s for s in scored if s.pair.base in picked),
            key=lambda s: (picked.index(s.pair.base), KINDS.index(s.pair.kind)),
        )
    )
    return Result(tuple(heads), a, b, user, pieces, shown, accuracy, mean_not, mean_shared, pool, tuple(notes), grid)


def _cells(heads, scored) -> tuple[list[Cell], dict]:
    """(one Cell per head and task: its right answers with a Wilson interval, each answer's hit by (head, task))."""
    cells, hits = [], {}
    for h in heads:
        for task, kinds in TASKS.items():
            hits[(h.key, task)] = [(s.p_not[h.key] > 0.5) == bool(s.pair.label) for s in scored if s.pair.kind in kinds]
            right = sum(hits[(h.key, task)])
            cells.append(
                Cell(
                    h.key,
                    h.objective,
                    task,
                    right,
                    len(hits[(h.key, task)]),
                    *wilson_interval(right, len(hits[(h.key, task)])),
                )
            )
    return cells, hits


# ----------------------------------------------------------------------------- ask the class


def question(result: Result):
    """ "Is B the next sentence?" for a pair from the pool (a swapped one when there is one: where the two heads
    differ), yes or no; the right answer is how the pair was made, the model's is the NSP head's, and the reveal
    says what each head said."""
    from app.classroom.question import Question

    pool = sorted(result.examples, key=lambda s: s.pair.kind != "swapped")
    if not pool or not result.heads:
        return None
    pair = pool[0]
    nsp = next((h for h in result.heads if h.objective == "nsp"), result.heads[0])
    p_no = pair.p_not.get(nsp.key)
    model = () if p_no is None else (("yes", 1 - p_no), ("no", p_no))
    said = " ".join(f"{h.name}: {100 * pair.p_not[h.key]:.0f}% {h.says}." for h in result.heads if h.key in pair.p_not)
    truth = "no" if pair.pair.label else "yes"
    return Question(
        "sentence_order",
        f"A: {pair.pair.a}  B: {pair.pair.b}  Is B the sentence that comes next after A?",
        "choice",
        ("yes", "no"),
        (truth,),
        model,
        f"This pair is {pair.pair.kind.replace('-', ' ')}. {said}",
    )
