"""ELECTRA's replaced-token detection: masking, sampling replacements from the generator, scoring every
token with the discriminator, and measuring how well it detects the replacements.

Clark et al. (2020). A small generator (a masked LM) fills the masked positions of a sentence by
*sampling* from its output distribution; the discriminator then reads the corrupted sentence and
predicts, for every token, whether it was replaced. A sampled token that happens to equal the
original counts as **original** (label 0), as in the paper. Because every token gets a label, the
discriminator learns from all positions, not only the masked ~15%.

The rules (masking, sampling, labels, detection scores) are app/replaced_tokens.py, shared with the training
recipe and the experiment; this module runs them on one sentence for the lesson (pages/electra.py), with an
explicit ``torch.Generator``: a seed reproduces a round exactly.

Vocabulary: ``mlm_probability`` is the share of content tokens that are masked; ``labels`` /
``replaced`` are 1 where the corrupted token differs from the original and 0 elsewhere;
``scores`` are the discriminator's P(replaced) = sigmoid(logit).
"""

from __future__ import annotations

from app.core import preload  # noqa: F401  (first: the router calls preload.load() before a lesson runs)

preload.load()  # the heavy imports, once, in one thread, before this module's own (a page run outside the router too)

import json
import math
from dataclasses import dataclass, field
from pathlib import Path

import torch

from app import mlm, replaced_tokens
from app.replaced_tokens import (  # noqa: F401  (the rules, shared with training and the experiment)
    Detection,
    content_positions,
    corrupt,
    detection_metrics,
    mask_positions,
    masked_input,
    n_to_mask,
    replaced_labels,
    replacement_probs,
    roc_auc,
    sample_replacements,
)
from app.detection import (  # noqa: F401  (one round through the pair, shared with the quality report)
    DEFAULT_TEXT,
    MAX_TOKENS,
    MLM_PROBABILITY,
    TEMPERATURE,
    Encoded,
    discriminator_scores,
    discriminator_side,
    encode,
    generator_logits,
    generator_side,
    plausible_share,
    pooled_detection,
    sample_corruption,
    special_ids,
)
from app.core import text as txt
from app.core.lesson import Note, Stop, direct, inputs_from
from app.core.state import Param, Spec, figure_param, seed_param, text_param

ORDER = 50  # its place in teaching order (app/lessons/__init__.py lists lessons by it)
TITLE = 'ELECTRA: spot the fake'
ICON = ':material/policy:'
LINE = 'A generator swaps words, a discriminator scores every token: replaced-token detection, live.'


@dataclass(frozen=True)
class ElectraDefaults:
    mlm_probability: float = MLM_PROBABILITY
    temperature: float = TEMPERATURE  # the paper samples from the generator at T = 1
    top_k: int = 5  # alternatives shown for each sampled replacement
    max_tokens: int = MAX_TOKENS  # cap on a sentence, special tokens included: a strip stays readable
    threshold: float = replaced_tokens.THRESHOLD  # P(replaced) above which a token is flagged


DEFAULTS = ElectraDefaults()
MODELS = ("electra-generator", "electra-discriminator")
# the lesson's takeaway, one line: the page's last word (under the key figure on a projector), the handout's
TAKEAWAY = "ELECTRA learns from every token — spotting the generator's fakes — not only the masked 15%."
SPEC = Spec(
    text_param(DEFAULT_TEXT, "Your sentence"),
    Param(
        "rate",
        "float",
        DEFAULTS.mlm_probability,
        lo=0.05,
        hi=0.5,
        step=0.01,
        label="Masking rate",
        help="Share of the word pieces the generator must fill (ELECTRA: 15%).",
    ),
    Param(
        "temperature",
        "float",
        DEFAULTS.temperature,
        lo=0.1,
        hi=3.0,
        step=0.05,
        label="Generator temperature",
        help="Samples come from softmax(logits / T). T = 1 is the paper; low T picks the generator's favourite "
        "(often the original word), high T picks wilder words.",
    ),
    seed_param(help="Masked positions come from this seed, the generator's samples from the next one."),
    Param("edit_pos", "int", 7, lo=0, hi=511, label="Token to replace", widget="select"),
    Param(
        "edit_word",
        "str",
        "ran",
        max_len=40,
        label="Replacement word",
        widget="line",
        help="One word. It must be in the vocabulary; a word that splits into pieces uses its first piece.",
    ),
    figure_param(
        (
            ("pipeline", "One round of the game, stage by stage"),
            ("signal", "Positions that teach: masked LM against every token"),
        )
    ),
)


# ----------------------------------------------------------------------------- input


# ----------------------------------------------------------------------------- one round, as plain data


@dataclass(frozen=True)
class Round:
    """Everything the pipeline figure shows, as plain Python data (one entry per token).

    replacement[i]: the sampled token at a masked position, None elsewhere; same_as_original[i]: the
    sample equals the original (so the label is 0); alternatives[i]: the top-k (token, probability)
    pairs under the tempered distribution, [] where not masked; scores[i]: P(replaced);
    labels[i]: corrupted != original.
    """

    tokens: list[str]
    special: list[bool]
    masked: list[bool]
    replacement: list[str | None]
    replacement_prob: list[float | None]
    same_as_original: list[bool]
    alternatives: list[list[tuple[str, float]]]
    corrupted: list[str]
    scores: list[float]
    labels: list[bool]
    corrupted_ids: list[int] = field(default_factory=list)


def sample_round(
    tokenizer,
    encoded: Encoded,
    masked: torch.Tensor,
    g_logits: torch.Tensor,
    temperature: float,
    seed: int,
    top_k: int = DEFAULTS.top_k,
) -> tuple[torch.Tensor, dict]:
    """Sample replacements at the masked positions (seeded) and describe them.

    Returns (corrupted ids (T,), a dict with the Round fields about the generator's side).
    """
    ids = torch.tensor(encoded.input_ids)  # (T,)
    probs, sampled, corrupted = sample_corruption(tokenizer, ids, masked, g_logits, temperature, seed)  # (n, V) (n,)
    alts = mlm.predictions(probs, tokenizer, top_k)  # (n,): the likeliest replacements at each masked position
    n = len(ids)
    replacement: list[str | None] = [None] * n
    replacement_prob: list[float | None] = [None] * n
    alternatives: list[list[tuple[str, float]]] = [[] for _ in range(n)]
    for j, pos in enumerate(masked.nonzero().flatten().tolist()):
        replacement[pos] = tokenizer.convert_ids_to_tokens(int(sampled[j]))
        replacement_prob[pos] = float(probs[j, sampled[j]])
        alternatives[pos] = list(alts[j].raw)
    same = [bool(m) and int(c) == int(o) for m, c, o in zip(masked.tolist(), corrupted.tolist(), ids.tolist())]
    return corrupted, dict(
        replacement=replacement, replacement_prob=replacement_prob, same_as_original=same, alternatives=alternatives
    )


def assemble_round(
    tokenizer, encoded: Encoded, masked: torch.Tensor, corrupted: torch.Tensor, gen_side: dict, scores: torch.Tensor
) -> Round:
    ids = torch.tensor(encoded.input_ids)
    return Round(
        tokens=list(encoded.tokens),
        special=list(encoded.special),
        masked=masked.tolist(),
        corrupted=tokenizer.convert_ids_to_tokens(corrupted.tolist()),
        scores=[float(s) for s in scores],
        labels=replaced_labels(corrupted, ids).tolist(),
        corrupted_ids=corrupted.tolist(),
        **gen_side,
    )


# ----------------------------------------------------------------------------- hand edits


@dataclass(frozen=True)
class Edit:
    """A hand replacement. ok: the edit was applied; input_ids: the edited sentence (the original when
    not ok); piece: the token put in; message: what happened, in words (None when nothing to say)."""

    ok: bool
    input_ids: tuple[int, ...]
    piece: str | None
    message: str | None


def apply_edit(tokenizer, input_ids, position: int, word: str) -> Edit:
    """Replace the token at ``position`` by ``word`` (its first word piece if it splits).

    Refused, with the reason, when the word is empty, is outside the vocabulary ([UNK]), is a special
    token, or when the position is a special token or outside the sentence.
    """
    ids = tuple(int(i) for i in input_ids)
    specials = set(tokenizer.all_special_ids)
    word = (word or "").strip()
    if not word:
        return Edit(False, ids, None, None)
    shown = txt.md(word)
    if not 0 <= position < len(ids) or ids[position] in specials:
        return Edit(False, ids, None, f"Position {position} is not a word piece of this sentence; pick another.")
    if word in tokenizer.all_special_tokens:
        return Edit(
            False, ids, None, f"{shown} is a special token; the generator never proposes those, so pick a word."
        )
    pieces = tokenizer.tokenize(word)
    if not pieces:
        return Edit(
            False, ids, None, f"{shown} has no word pieces in this vocabulary (nothing is left after tokenizing)."
        )
    piece_ids = tokenizer.convert_tokens_to_ids(pieces)
    if piece_ids[0] in specials:
        return Edit(
            False, ids, None, f"{shown} is outside the vocabulary (it becomes {txt.md(pieces[0])}); try another word."
        )
    new = list(ids)
    new[position] = piece_ids[0]
    message = None
    if len(pieces) > 1:
        message = (
            f"{shown} splits into {len(pieces)} word pieces ({txt.md(' '.join(pieces))}); "
            f"one position holds one piece, so the first, {txt.md(pieces[0])}, is used."
        )
    if piece_ids[0] == ids[position]:
        message = (message + " " if message else "") + (
            f"{txt.md(pieces[0])} is the token already there, so nothing is replaced: its label stays *original*."
        )
    return Edit(True, tuple(new), pieces[0], message)


def edit_verdict(piece: str, position: int, scores, others: list[int], threshold: float = DEFAULTS.threshold) -> str:
    """What the discriminator made of a token the visitor swapped in at ``position``, from its scores (markdown):
    its P(replaced), the highest among the untouched word pieces ``others``, its rank among them all, and whether
    it was caught (ranked first and above ``threshold``). A one-piece sentence has nothing to rank it against."""
    mine = float(scores[position])
    caught = "**caught**" if mine > threshold else "not flagged"
    head = f"Your {txt.md(piece)} at position {position} gets **P(replaced) = {mine:.3f}**"
    if not others:
        return (
            f"{head}: {caught} (above {threshold:g} flags a token). It is the sentence's only word piece, so "
            "there is no untouched token to rank it against; type a longer sentence to see it among others."
        )
    rest = [float(scores[i]) for i in others]
    rank = 1 + sum(o > mine for o in rest)
    return f"{head}; the most suspicious untouched token gets {max(rest):.3f}. Rank {rank} of {len(rest) + 1}: " + (
        "**caught**." if rank == 1 and mine > threshold else "the top suspect." if rank == 1 else "it slipped past."
    )


# ----------------------------------------------------------------------------- signal and curves


def signal_counts(n_tokens: int, n_masked: int) -> dict[str, int]:
    """Positions that contribute to the loss for one batch: MLM only at the masked positions,
    replaced-token detection at every real token (the recipe's BCE runs over the attention mask)."""
    return {"tokens": n_tokens, "mlm": n_masked, "rtd": n_tokens}


def _auc_series(curves: dict) -> tuple[list, list] | None:
    steps, auc = curves.get("eval_step") or [], curves.get("disc_auc") or []
    if (
        not isinstance(steps, list)
        or not isinstance(auc, list)
        or not steps
        or len(steps) != len(auc)
        or not all(isinstance(s, int) and not isinstance(s, bool) for s in steps)
    ):
        return None
    return list(steps), [a if isinstance(a, (int, float)) and math.isfinite(a) else None for a in auc]


def _last(values) -> float | None:
    v = values[-1] if isinstance(values, list) and values else None
    return float(v) if isinstance(v, (int, float)) and math.isfinite(v) else None


def read_curves(folder) -> dict | None:
    """The discriminator's training curves (curves.json beside the checkpoint): {"eval_step": [...],
    "disc_auc": [...], "step": [...], "train_loss": [...], "final": {...}, "joint": ...}; None when absent or
    unreadable.

    "joint" is the joint stage that came before (app/training/electra.py), when curves.json has one:
    {"eval_step", "disc_auc", "steps_done", "cloze_top5"} (its generator's last cloze top-5), else None.
    Steps are each stage's own; a figure puts the later stage after the joint one."""
    path = Path(folder) / "curves.json"
    try:
        curves = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(curves, dict) or (series := _auc_series(curves)) is None:
        return None
    joint, stage0 = None, curves.get("joint_stage")
    if isinstance(stage0, dict) and (s0 := _auc_series(stage0)) is not None and any(a is not None for a in s0[1]):
        done = stage0.get("steps_done")
        joint = {
            "eval_step": s0[0],
            "disc_auc": s0[1],
            "cloze_top5": _last(stage0.get("cloze_top5")),
            "steps_done": done if isinstance(done, int) and done > 0 else s0[0][-1],
        }
    final = curves.get("final")
    return {
        "eval_step": series[0],
        "disc_auc": series[1],
        "step": curves.get("step") or [],
        "train_loss": curves.get("train_loss") or [],
        "final": final if isinstance(final, dict) else {},
        "joint": joint,
    }


def curve_story(curves: dict) -> str:
    """The caption of the AUC-by-step figure, its numbers read from ``read_curves``'s dict."""
    points = [a for a in curves["disc_auc"] if a is not None]
    head = (
        "Held-out ROC-AUC on 256 held-out sequences corrupted by the generator, every "
        f"{_every(curves['eval_step'])} steps."
    )
    joint = curves.get("joint")
    if not joint or not points:
        return (
            head + " The generator learns alongside: while it proposes junk the fakes are easy to spot, so the "
            "AUC can start high and fall as its fakes become real words in context."
        )
    j = [a for a in joint["disc_auc"] if a is not None]
    gen_cloze = (curves.get("final") or {}).get("generator", {}).get("cloze_top5")
    cloze = lambda v: f" (cloze top-5 {v:.2f})" if isinstance(v, (int, float)) and math.isfinite(v) else ""  # noqa: E731
    return (
        head + f" **Grey:** trained jointly for {joint['steps_done']} steps, the generator learning beside the "
        f"discriminator. While it proposed junk the fakes were easy to spot ({j[0]:.2f}); as they became real "
        f"words in context the AUC fell to {j[-1]:.2f}, against a generator as good as "
        f"BERT{cloze(joint.get('cloze_top5'))}. "
        f"**Red:** a fresh generator of the same size, trained alone and stopped early{cloze(gen_cloze)}, then "
        f"frozen; the discriminator went on learning on its fakes for {curves['eval_step'][-1]} steps, to "
        f"{points[-1]:.2f}. This page plays that pair: its fakes are still real words, but fewer fool the "
        "discriminator. It is the trade-off behind the paper's smaller generators."
    )


def _every(steps: list) -> int:
    return steps[1] - steps[0] if len(steps) > 1 else steps[0]


# ----------------------------------------------------------------------------- the lesson: inputs -> run -> result


@inputs_from(SPEC)
class Inputs:
    """The page's values as the lesson reads them: one field per SPEC parameter (app.core.lesson.inputs_from)."""


@dataclass(frozen=True)
class Result:
    """One round of the game and the hand edit, as plain data.

    positions: the word pieces a hand edit may replace; edit_pos: the one used (the asked position, or
    the nearest word piece when the asked one is not one). edit_scores / edit_labels: the discriminator
    on the edited sentence, one per token."""

    encoded: Encoded
    round: Round
    detection: Detection
    positions: tuple[int, ...]
    edit_pos: int
    edit: Edit
    edit_scores: tuple[float, ...]
    edit_labels: tuple[bool, ...]
    edited_tokens: tuple[str, ...]
    signal: dict
    notes: tuple[Note, ...]
    curves: dict | None = None  # the bundled discriminator's training curves (read_curves); None from the hub
    threshold: float = DEFAULTS.threshold  # where a score counts as "replaced" (the figures draw it)


def run(models: dict, inputs: Inputs, cache=direct) -> Result:
    """Mask -> the generator samples -> the discriminator scores every token; then the hand edit.

    Masking draws from Generator(seed) and sampling from Generator(seed + 1), so moving the temperature
    re-samples at the same masked positions; the generator's forward (``generator_side``) does not depend
    on the temperature and goes through ``cache``, so only the sampling runs again."""
    gen, disc = models["electra-generator"], models["electra-discriminator"]
    tok = gen.tokenizer
    txt.require_text(inputs.text, DEFAULT_TEXT)
    enc = encode(tok, inputs.text, DEFAULTS.max_tokens)
    notes = []
    if enc.truncated:
        notes.append(
            Note(
                f"Your text has {enc.n_pieces} word pieces; the strip shows the first {enc.n_kept} (a cap "
                f"of {DEFAULTS.max_tokens} tokens with [CLS] and [SEP], so every cell stays readable). "
                "The rest is cut.",
                "warning",
            )
        )
    notes += [
        Note(n)
        for n in txt.input_notes(
            txt.tokenize(tok, inputs.text, DEFAULTS.max_tokens), tok, inputs.text, gen.variant.label
        )
    ]
    if enc.n_content == 0:
        raise Stop(
            "Nothing in this text is a word piece the generator can replace, so there is nothing to mask. "
            f"Try an English sentence, e.g. *{DEFAULT_TEXT}*"
        )
    masked, g_logits = cache(generator_side, gen, enc.input_ids, enc.special, float(inputs.rate), int(inputs.seed))
    corrupted, gen_info = sample_round(tok, enc, masked, g_logits, float(inputs.temperature), int(inputs.seed))
    scores = cache(discriminator_side, disc, tuple(corrupted.tolist()))
    rnd = assemble_round(tok, enc, masked, corrupted, gen_info, scores)
    det = detection_metrics(rnd.scores, rnd.labels, content_positions(rnd.special), DEFAULTS.threshold)

    positions = tuple(i for i, s in enumerate(enc.special) if not s)
    edit_pos = inputs.edit_pos
    if edit_pos not in positions:
        edit_pos = min(positions, key=lambda i: abs(i - edit_pos))
        notes.append(
            Note(f"Position {inputs.edit_pos} is not a word piece of this sentence; using position {edit_pos}.")
        )
    edit = apply_edit(tok, enc.input_ids, edit_pos, inputs.edit_word)
    edit_scores = cache(discriminator_side, disc, edit.input_ids)
    edit_labels = replaced_labels(torch.tensor(edit.input_ids), torch.tensor(enc.input_ids)).tolist()
    return Result(
        enc,
        rnd,
        det,
        positions,
        edit_pos,
        edit,
        tuple(float(x) for x in edit_scores),
        tuple(edit_labels),
        tuple(tok.convert_ids_to_tokens(list(edit.input_ids))),
        signal_counts(len(rnd.tokens), sum(rnd.masked)),
        tuple(notes),
        curves=read_curves(disc.location) if disc.is_bundled else None,
    )


# ----------------------------------------------------------------------------- ask the class


def question(result: Result):
    """ "Which word did the generator replace?": every word piece of the corrupted sentence to tap (and "none"),
    the generator's replacements as the answer, the discriminator's P(replaced) for each piece as the model's."""
    from app.classroom.question import Question, unique_labels, window

    r = result.round
    keep = [i for i, special in enumerate(r.special) if not special]
    if len(keep) < 2:
        return None
    first = next((k for k, i in enumerate(keep) if r.labels[i]), 0)
    keep = [keep[k] for k in window(len(keep), first)]  # a long sentence: the pieces around the first swap
    labels = unique_labels(r.corrupted[i] for i in keep)
    replaced = tuple(label for label, i in zip(labels, keep) if r.labels[i])
    model = tuple((label, float(r.scores[i])) for label, i in zip(labels, keep))
    flagged = [label for label, i in zip(labels, keep) if r.scores[i] >= 0.5]
    said = (
        f"The discriminator flagged {', '.join(flagged)} (P(replaced) ≥ 0.5)."
        if flagged
        else "The discriminator flagged no piece (every P(replaced) < 0.5)."
    )
    return Question(
        "electra",
        "Which word did the generator replace? Tap every word you think was swapped in.",
        "multi",
        (*labels, "none"),
        replaced or ("none",),
        model,
        said,
    )
