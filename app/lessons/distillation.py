"""DistilBERT's distillation, on one sentence: the teacher's soft targets, how the temperature T softens
them, the three loss terms the student was trained on, and how much smaller and faster the student is.

Sanh et al. (2019) train the student on

    L = α_ce · T² · KL(softmax(z_t / T) ‖ softmax(z_s / T)) + α_mlm · MLM + α_cos · (1 − cos(h_s, h_t))

with α = (5, 2, 1) and T = 2. The **teacher** is a finished BERT, the **student** has half its layers.
Dividing the logits by T > 1 flattens both distributions (the **soft targets**), so the small
probabilities the teacher gives to *wrong* words ("ball" is wrong, but "toy" is far less wrong than
"ran") carry weight in the loss: Hinton et al.'s "dark knowledge". The T² keeps the gradient's scale
independent of T. ``distillation_losses`` and ``Recipe`` are app/triple_loss.py's, the ones the training
recipe (app/training/distilbert.py) imports, so the lesson shows exactly what the bundled student optimised.

The lesson (pages/distillation.py) calls :func:`run`: both forward passes go through the page's cache
(``pair_forward``), so the temperature and "tokens shown" sliders only re-soften logits already
computed; the pair's latencies are timed once per sentence (``measure.latencies``).

Shapes: T tokens, V vocabulary, H hidden size; n rows of logits in the loss terms.
"""

from __future__ import annotations

from app.core import preload  # noqa: F401  (first: the heavy imports, once, in one thread)

preload.load()  # the heavy imports, once, in one thread, before this module's own (a page run outside the router too)

from dataclasses import dataclass

import math

import torch

from app import measure, mlm
from app.triple_loss import Recipe, distillation_losses  # the rule the bundled student was trained on
from app.core import text as txt
from app.core.lesson import Note, Stop, direct, inputs_from
from app.models import catalogue, device as devices
from app.core.state import Param, Spec, figure_param, text_param

ORDER = 40  # its place in teaching order (app/lessons/__init__.py lists lessons by it)
TITLE = 'DistilBERT: distillation'
ICON = ':material/science:'
LINE = 'Teacher and student on one sentence: soft targets, temperature and the three loss terms.'


RECIPE = Recipe()
REAL_TEACHER = "google-bert/bert-base-uncased"


@dataclass(frozen=True)
class Paper:
    """DistilBERT's headline numbers (Sanh et al. 2019, abstract and Table 3)."""

    smaller: float = 0.40  # 66 M parameters against BERT-base's 110 M
    faster: float = 0.60  # inference 410 s against 668 s: a speed-up of about 1.6×
    retained: float = 0.97  # of BERT-base's GLUE score


PAPER = Paper()
TEMPERATURES = tuple(round(0.5 + 0.25 * i, 2) for i in range(39))  # 0.5 ... 10.0, for the sweep figure
DEFAULT_TEXT = "The little girl found a red ball in the park."
MODELS = ("bert", "distilbert")  # the teacher, the student
DEFAULT_WORD = 9  # "park", counted from 0
DEFAULT_TOP_K = 8
# the lesson's takeaway, one line: the page's last word (under the key figure on a projector), the handout's
TAKEAWAY = "The student learns the teacher's whole distribution, softened by T so the near-misses count."
SPEC = Spec(
    text_param(DEFAULT_TEXT, "Your sentence"),
    Param(
        "word",
        "int",
        DEFAULT_WORD,
        lo=0,
        hi=999,
        widget="select",
        label="Word to mask",
        help="Teacher and student read the sentence with this word masked (words count from 0).",
    ),
    Param(
        "temperature",
        "float",
        RECIPE.temperature,
        lo=0.5,
        hi=10.0,
        step=0.25,
        label="Temperature T",
        help=f"The recipe used T = {RECIPE.temperature:g}. T = 1 is the plain softmax.",
    ),
    Param(
        "top_k",
        "int",
        DEFAULT_TOP_K,
        lo=3,
        hi=20,
        widget="slider",
        label="Tokens shown",
        help="The teacher's top tokens, and the student's top ones that are not among them.",
    ),
    figure_param((("soft", "Soft targets at T = 1 and at T"), ("temperature", "Entropy and T²·KL against T"))),
)


# ----------------------------------------------------------------------------- the loss


# ----------------------------------------------------------------------------- softening and KL


def soften(logits: torch.Tensor, temperature: float) -> torch.Tensor:
    """softmax(logits / T) over the last axis. (..., V) -> (..., V)"""
    if temperature <= 0:
        raise ValueError("the temperature must be positive")
    return torch.softmax(logits.float() / temperature, dim=-1)


def entropy(probs: torch.Tensor) -> torch.Tensor:
    """Shannon entropy in nats over the last axis (0 · log 0 = 0). (..., V) -> (...)"""
    logp = torch.log(probs.clamp_min(1e-30))
    return -(probs * logp).sum(-1)


def kl_term(s_logits: torch.Tensor, t_logits: torch.Tensor, temperature: float) -> float:
    """The recipe's soft-target term T² · KL(teacher_T ‖ student_T), averaged over rows (batchmean).

    s_logits, t_logits: (n, V). Computed by ``distillation_losses`` itself; its MLM and cosine terms are
    switched off here (no labels, identical hidden states) because only the KL depends on T.
    """
    s, t = s_logits.double(), t_logits.double()  # float64: tiny KLs at high T stay free of rounding noise
    n = s.shape[0]
    no_labels = torch.full((n,), -100, dtype=torch.long)
    same = torch.ones(n, 1, dtype=torch.float64)
    return float(distillation_losses(s, t, no_labels, same, same, temperature)["kl"])


def kl_per_position(s_logits: torch.Tensor, t_logits: torch.Tensor, temperature: float) -> list[float]:
    """T² · KL at each row on its own. (n, V) -> n floats; their mean is ``kl_term``."""
    return [kl_term(s_logits[i : i + 1], t_logits[i : i + 1], temperature) for i in range(s_logits.shape[0])]


def temperature_sweep(s_row: torch.Tensor, t_row: torch.Tensor, temperatures=TEMPERATURES) -> dict[str, list[float]]:
    """For one position's logits (V,): teacher and student entropy, top-1 probability and T²·KL at each T."""
    out = {
        "temperature": list(temperatures),
        "teacher_entropy": [],
        "student_entropy": [],
        "kl_term": [],
        "teacher_top1": [],
        "student_top1": [],
    }
    for temp in temperatures:
        pt, ps = soften(t_row, temp), soften(s_row, temp)
        out["teacher_entropy"].append(float(entropy(pt)))
        out["student_entropy"].append(float(entropy(ps)))
        out["teacher_top1"].append(float(pt.max()))
        out["student_top1"].append(float(ps.max()))
        out["kl_term"].append(kl_term(s_row[None], t_row[None], temp))
    return out


def top_tokens(t_probs: torch.Tensor, s_probs: torch.Tensor, k: int) -> list[int]:
    """Vocabulary ids to show: the teacher's top k, then the student's top k not yet listed. (V,) each.
    The union is this lesson's own; each top k is app.mlm's."""
    ids = mlm.top_ids(t_probs, k)[1].tolist()
    ids += [i for i in mlm.top_ids(s_probs, k)[1].tolist() if i not in ids]
    return ids


# ----------------------------------------------------------------------------- teacher and student on one input


@dataclass(frozen=True)
class PairOutput:
    """Teacher and student on the same masked sentence."""

    tokens: tuple[str, ...]  # (T,) as read, the masked word's pieces shown as the mask token
    masked: tuple[int, ...]  # positions of the masked word's pieces
    gold: tuple[int, ...]  # the original ids there
    labels: torch.Tensor  # (T,) original id at masked positions, -100 elsewhere (as in the recipe)
    t_logits: torch.Tensor  # (T, V)
    s_logits: torch.Tensor  # (T, V)
    t_hidden: torch.Tensor  # (T, H_teacher) last hidden states
    s_hidden: torch.Tensor  # (T, H_student)


def same_vocabulary(t_tokenizer, s_tokenizer) -> bool:
    """Distillation compares distributions id by id, so the two vocabularies must be the same."""
    return t_tokenizer.get_vocab() == s_tokenizer.get_vocab()


def pair_forward(teacher, student, text: str, word: int) -> PairOutput:
    """Mask every piece of word ``word`` (the student's tokenizer, which is the teacher's) and run both
    loaded models, as the recipe does on a training batch: logits and last hidden states at every real
    token. For one unpadded sentence the student's own forward is what the recipe's ``student_logits``
    computes. Raises ValueError when the word has no piece."""
    tokenizer = student.tokenizer
    where = txt.tokenize(tokenizer, text).pieces_of(word)
    if not where:
        raise ValueError(f"word {word} has no word piece in this text")
    enc = tokenizer(text, return_tensors="pt")
    ids = enc["input_ids"].clone()  # (1, T)
    att = enc["attention_mask"]  # (1, T)
    gold = ids[0, where].tolist()
    ids[0, where] = tokenizer.mask_token_id
    labels = torch.full(ids.shape[1:], -100, dtype=torch.long)  # (T,)
    labels[where] = torch.tensor(gold)
    outs = []
    for loaded in (teacher, student):
        device = loaded.model.device
        with devices.forward(loaded.model):
            outs.append(
                loaded.model(input_ids=ids.to(device), attention_mask=att.to(device), output_hidden_states=True)
            )
    t_out, s_out = outs
    return PairOutput(
        tokens=tuple(txt.piece_text(tokenizer, i) for i in ids[0].tolist()),
        masked=tuple(where),
        gold=tuple(gold),
        labels=labels,
        t_logits=t_out.logits[0].float().cpu(),
        s_logits=s_out.logits[0].float().cpu(),  # (T, V) each
        t_hidden=t_out.hidden_states[-1][0].float().cpu(),
        s_hidden=s_out.hidden_states[-1][0].float().cpu(),  # (T, H)
    )


def recipe_terms(pair: PairOutput, temperature: float = RECIPE.temperature, recipe: Recipe = RECIPE) -> dict:
    """The recipe's three terms on this input (every token for KL and cosine, the masked word for MLM),
    their α weights and the weighted total. ``cos`` is None when the hidden sizes differ (a hub pair
    that was never distilled from each other), and the total then leaves it out."""
    comparable = pair.s_hidden.shape[-1] == pair.t_hidden.shape[-1]
    t_hidden = pair.t_hidden if comparable else pair.s_hidden
    terms = distillation_losses(
        pair.s_logits.double(),
        pair.t_logits.double(),
        pair.labels,
        pair.s_hidden.double(),
        t_hidden.double(),
        temperature,
    )
    kl, mlm = float(terms["kl"]), float(terms["mlm"])
    cos = float(terms["cos"]) if comparable else None
    weighted = {
        "kl": recipe.alpha_ce * kl,
        "mlm": recipe.alpha_mlm * mlm,
        "cos": recipe.alpha_cos * cos if cos is not None else None,
    }
    return {
        "kl": kl,
        "mlm": mlm,
        "cos": cos,
        "alpha": {"kl": recipe.alpha_ce, "mlm": recipe.alpha_mlm, "cos": recipe.alpha_cos},
        "weighted": weighted,
        "total": sum(v for v in weighted.values() if v is not None),
        "temperature": temperature,
    }


# ----------------------------------------------------------------------------- size and speed


def size_and_speed(
    teacher: dict,
    student: dict,
    teacher_ms: float,
    student_ms: float,
    whole_ms: tuple[float, float] | None = None,
    samples: dict | None = None,
) -> dict:
    """Parameters, layers and measured latency of the pair (sizes from ``measure.size_of``), as the paper
    reports them: how much smaller (1 − student/teacher parameters) and how much faster (teacher time /
    student time − 1). ``teacher_ms``, ``student_ms``: the encoders' forwards, as the paper timed them (a full
    pass of STS-B: the encoder and a one-number head); ``whole_ms``: (teacher, student) with the masked-LM head
    over the whole vocabulary, which the student keeps whole, when it was timed too. ``samples``: {"encoder":
    (teacher's, student's forwards in ms), "whole": (...)}, timed in turns: each speed-up gets its 95% interval
    ("speedup_interval", "speedup_whole_interval"; measure.ratio_interval; None with too few rounds)."""
    pt, ps = teacher["params"], student["params"]
    out = {
        "teacher_params": pt,
        "student_params": ps,
        "teacher_layers": teacher["layers"],
        "student_layers": student["layers"],
        "teacher_ms": teacher_ms,
        "student_ms": student_ms,
        "smaller": 1 - ps / pt,
        "speedup": teacher_ms / student_ms,
        "faster": teacher_ms / student_ms - 1,
        "embedding_share": teacher["embedding_params"]
        / pt,  # the teacher's word embeddings, which the student keeps whole
    }
    if whole_ms is not None:
        out.update(teacher_whole_ms=whole_ms[0], student_whole_ms=whole_ms[1], speedup_whole=whole_ms[0] / whole_ms[1])
    for key, part in (("speedup_interval", "encoder"), ("speedup_whole_interval", "whole")):
        if samples and part in samples:
            out[key] = measure.ratio_interval(*samples[part])
    return out


def pace(x: float, iv: dict | None = None) -> str:
    """A speed-up in words: "2.01× the speed" / "1.50× slower", with its 95% interval when there is one — and
    "within timing noise on this machine" when that interval contains 1 (no speed-up is concluded then)."""
    said = f"{x:.2f}× the speed" if x >= 1 else f"{1 / x:.2f}× slower"
    if not iv:
        return said
    if measure.clearly(iv) == "noise":
        return f"within timing noise on this machine ({x:.2f}×, {measure.interval_words(iv)})"
    return f"{said} ({measure.interval_words(iv)})"


def speed_caption(sz: dict) -> str:
    """The caption under the size and speed table: the student / teacher ratios, and what the masked-LM head did
    to the speed-up, worded from the numbers."""
    text = (
        f"Student / teacher: layers {sz['student_layers'] / sz['teacher_layers']:.2f}, parameters "
        f"{sz['student_params'] / sz['teacher_params']:.2f}, encoder time {sz['student_ms'] / sz['teacher_ms']:.2f}"
    )
    if "speedup_whole" in sz:
        text += f", with the masked-LM head {sz['student_whole_ms'] / sz['teacher_whole_ms']:.2f}"
    text += (
        " (medians, timed in turns on your sentence, under torch.inference_mode, once per sentence). The paper "
        "timed the encoder's pass (STS-B: one number out)."
    )
    if "speedup_whole" in sz:
        a, b = sz.get("speedup_interval"), sz.get("speedup_whole_interval")
        apart = not (a and b) or b["high"] < a["low"] or a["high"] < b["low"]  # their intervals do not overlap
        effect = (
            "did not clearly change: the two intervals overlap"
            if not apart
            else "narrows"
            if sz["speedup_whole"] < sz["speedup"]
            else "did not narrow in this timing"
        )
        text += (
            " The masked-LM head scores every word of the vocabulary at every position, and the student keeps it "
            f"whole; with it, the speed-up {effect} ({sz['speedup']:.2f}× → {sz['speedup_whole']:.2f}×)."
        )
    return text


def summary_lines(sz: dict, card: dict, student_bundled: bool, repeats: int, paper: Paper = PAPER) -> list[str]:
    """The paper's claims next to what was measured here and what the model card says, as markdown lines.
    Every number comes from the arguments; comparisons are worded from their signs."""
    lines = [
        f"The paper: **{paper.smaller:.0%} smaller, {paper.faster:.0%} faster, {paper.retained:.0%} of BERT's "
        "GLUE score retained** (BERT-base, 12 layers → 6)."
    ]
    if sz["smaller"] >= 0:
        size = f"**{sz['smaller']:.0%} smaller**"
        if sz["smaller"] < paper.smaller:
            size += (
                f" — less than the paper's {paper.smaller:.0%}, because the student keeps the word embeddings "
                f"whole and here they are {sz['embedding_share']:.0%} of the teacher's parameters"
            )
    else:
        size = f"**{sz['student_params'] / sz['teacher_params']:.1f}× larger** than this teacher (not its real one)"
    line = (
        f"Here: {sz['teacher_layers']} layers → {sz['student_layers']}, {size}, and the encoder at "
        f"**{pace(sz['speedup'], sz.get('speedup_interval'))}** on this sentence ({sz['teacher_ms']:.2f} → "
        f"{sz['student_ms']:.2f} ms, median of {txt.count(repeats, 'forward')}; the paper timed STS-B, an encoder "
        "with a one-number head)"
    )
    if "speedup_whole" in sz:
        line += (
            f"; with the masked-LM head over the whole vocabulary, which the student keeps whole, "
            f"{pace(sz['speedup_whole'], sz.get('speedup_whole_interval'))} ({sz['teacher_whole_ms']:.2f} → "
            f"{sz['student_whole_ms']:.2f} ms)"
        )
    lines.append(line + ".")
    if card:
        line = (
            f"The bundled student's model card: masked-word top-1 {card['student_top1']:.1%} against the teacher's "
            f"{card['teacher_top1']:.1%}, **{card['retained_top1']:.0%} retained** (masked-LM accuracy on held-out "
            "TinyStories, not GLUE)"
        )
        if card["retained_top1"] > 1:
            line += (
                " — the student beats its teacher on this measure: it starts as every other layer of the teacher "
                "and trains on, on the same stories (the masked words are one of its three losses), so it has "
                "had more training than the teacher, which is itself small; the paper's teacher, BERT-base, was "
                f"far stronger than its student, which kept {paper.retained:.0%} of it"
            )
        if card.get("speedup"):
            line += (
                f"; the whole model's speed-up (with its masked-LM head) measured when it was trained: "
                f"{card['speedup']:.2f}×"
            )
        lines.append(line + ".")
    elif student_bundled:
        lines.append("The bundled student has no model-card numbers yet.")
    else:
        lines.append(
            "Model-card numbers belong to the bundled pair; these hub models were not trained by this project."
        )
    return lines


def card_summary(final: dict) -> dict:
    """The bundled student's model-card numbers (curves.json 'final'), or {} when there are none."""
    if not final or "retained_top1" not in final:
        return {}
    teacher = final.get("teacher", {})
    return {
        "student_top1": final.get("top1"),
        "teacher_top1": teacher.get("top1"),
        "retained_top1": final["retained_top1"],
        "speedup": final.get("speedup"),
        "faster": final["speedup"] - 1 if final.get("speedup") else None,
    }


def card_of(student) -> dict:
    """The model-card numbers of a loaded student: the bundled one's curves.json, {} for a hub model."""
    return card_summary(catalogue.bundled_card_metrics(student.variant)) if student.is_bundled else {}


def pair_notes(teacher_source: str, teacher_location: str, student_source: str) -> list[str]:
    """What the reader must know about which teacher this is. Sources: 'bundled', 'hub', 'hub cache'."""
    notes = []
    if teacher_source != "bundled":
        notes.append(
            f"The teacher here is {txt.md(teacher_location)} from the hub, **not** DistilBERT's real teacher "
            f"{txt.md(REAL_TEACHER)} (12 layers, 768 wide): the KL and cosine terms compare the student with a "
            "model it never learned from."
        )
    if (teacher_source == "bundled") != (student_source == "bundled"):
        notes.append(
            "Teacher and student come from different places (one bundled, one from the hub), so they were not "
            "distilled from each other; only the bundled pair is a real teacher and student."
        )
    return notes


# ----------------------------------------------------------------------------- the lesson: inputs -> run -> result


@inputs_from(SPEC)
class Inputs:
    settled: bool = True  # the server was quiet (measure.quiet): timings taken while it was busy are taken again
    new_text: bool = False  # the text changed since ``word`` was chosen: mask its nearest content word instead

    @classmethod
    def from_values(cls, values: dict, warm: dict | None = None, others: int = 0) -> "Inputs":
        """From the page's values, ``ui.warm_progress()`` and ``ui.other_pages()``."""
        return measure.timed_inputs(cls, values, warm, others)


@dataclass(frozen=True)
class SoftTargets:
    """The masked word's first piece: the shown tokens' probabilities at T = 1 and at the chosen T."""

    tokens: tuple[str, ...]  # as read: the teacher's top k, then the student's extra ones
    teacher_1: tuple[float, ...]
    teacher_t: tuple[float, ...]
    student_1: tuple[float, ...]
    student_t: tuple[float, ...]
    gold: str  # the original piece, as read
    teacher_top_1: float  # the teacher's largest probability over the whole vocabulary, at T = 1
    teacher_top_t: float  # ... and at the chosen T (1 − it: the mass on every other token)
    kl: float  # T² · KL at this position, at the chosen T
    vocab: int  # V


@dataclass(frozen=True)
class Result:
    """Teacher and student on the sentence, as plain data.

    tokens / kl_per_token / masked: the whole sentence as both models read it (T entries); terms_recipe and
    terms_yours: :func:`recipe_terms` at the recipe's T and at the chosen one; size: :func:`size_and_speed`;
    claims: {"paper" | "measured here" | "model card": {"smaller", "faster", "retained"}} (None: not known)."""

    teacher: str  # which checkpoint (Loaded.shown_as)
    student: str
    words: tuple[str, ...]  # split_words(text), counted from 0
    word: int
    n_pieces: int  # pieces of the masked word, all masked
    temperature: float
    soft: SoftTargets
    sweep: dict
    terms_recipe: dict
    terms_yours: dict
    tokens: tuple[str, ...]
    kl_per_token: tuple[float, ...]
    masked: tuple[int, ...]
    size: dict
    card: dict
    claims: dict
    summary: tuple[str, ...]
    device: str
    provisional: bool  # timed while the server was busy (its warm start loading models, or other visitors' pages)
    notes: tuple[Note, ...]
    recipe_temperature: float = RECIPE.temperature  # the T the bundled student was distilled at (figures mark it)


def run(models: dict, inputs: Inputs, cache=direct) -> Result:
    """Mask one word -> teacher and student read the sentence (``pair_forward``, cached) -> soften both at
    T = 1 and at the chosen T, the loss terms, the sweep over T (cached: it does not depend on the chosen T) -> the
    pair's size, and its latency timed once per sentence."""
    teacher, student = models["bert"], models["distilbert"]
    notes = [Note(n, "warning") for n in pair_notes(teacher.source, teacher.location, student.source)]
    if not same_vocabulary(teacher.tokenizer, student.tokenizer):
        fix = (
            "The bundled student was not distilled from this bundled teacher: rebuild it after BERT with "
            "`python -m app.training --recipe distilbert`."
            if teacher.is_bundled and student.is_bundled
            else "Switch the sidebar to the bundled models."
        )
        raise Stop(
            "Teacher and student use different vocabularies here, so their distributions cannot be compared "
            f"token by token. {fix}",
            "error",
        )
    tok = student.tokenizer
    fitted, words, cut = txt.words_to_mask(
        inputs.text, {teacher.variant.label: teacher.tokenizer, student.variant.label: tok}, DEFAULT_TEXT
    )
    notes += cut
    tk = txt.tokenize(tok, fitted)
    notes += [Note(n) for n in txt.input_notes(tk, tok, fitted, f"{teacher.variant.label} and {student.variant.label}")]
    word, chosen = txt.choose_masked_word(words, [tk], inputs.word, inputs.new_text)
    notes += chosen

    pair = cache(pair_forward, teacher, student, fitted, word)
    temp = float(inputs.temperature)
    m = pair.masked[0]
    t_1, t_temp = soften(pair.t_logits[m], 1.0), soften(pair.t_logits[m], temp)  # (V,) each
    s_1, s_temp = soften(pair.s_logits[m], 1.0), soften(pair.s_logits[m], temp)
    ids = top_tokens(t_1, s_1, int(inputs.top_k))
    soft = SoftTargets(
        tokens=tuple(txt.piece_text(tok, i) for i in ids),
        teacher_1=tuple(t_1[ids].tolist()),
        teacher_t=tuple(t_temp[ids].tolist()),
        student_1=tuple(s_1[ids].tolist()),
        student_t=tuple(s_temp[ids].tolist()),
        gold=txt.piece_text(tok, pair.gold[0]),
        teacher_top_1=float(t_1.max()),
        teacher_top_t=float(t_temp.max()),
        kl=kl_term(pair.s_logits[m : m + 1], pair.t_logits[m : m + 1], temp),
        vocab=t_1.numel(),
    )

    timed = cache(measure.latencies, (teacher, student), fitted, bool(inputs.settled), True)
    t_time, s_time = timed[teacher.variant.key], timed[student.variant.key]
    sz = size_and_speed(
        cache(measure.size_of, teacher),
        cache(measure.size_of, student),
        t_time["encoder_median_ms"],
        s_time["encoder_median_ms"],
        (t_time["median_ms"], s_time["median_ms"]),
        {
            "encoder": (t_time["encoder_samples_ms"], s_time["encoder_samples_ms"]),
            "whole": (t_time["samples_ms"], s_time["samples_ms"]),
        },
    )
    card = cache(card_of, student)
    claims = {
        "paper": {"smaller": PAPER.smaller, "faster": PAPER.faster, "retained": PAPER.retained},
        "measured here": {"smaller": sz["smaller"], "faster": sz["faster"], "retained": None},
    }
    if card:
        # its speed-up was timed with the masked-LM head, not as the paper timed it: not set beside the paper's
        claims["model card"] = {"smaller": None, "faster": None, "retained": card["retained_top1"]}
    return Result(
        teacher=teacher.shown_as,
        student=student.shown_as,
        words=tuple(w for w, _, _ in words),
        word=word,
        n_pieces=len(pair.masked),
        temperature=temp,
        soft=soft,
        sweep=cache(temperature_sweep, pair.s_logits[m], pair.t_logits[m]),  # the same for every T: the slider's
        # reruns find it kept
        terms_recipe=recipe_terms(pair, RECIPE.temperature),
        terms_yours=recipe_terms(pair, temp),
        tokens=pair.tokens,
        kl_per_token=tuple(kl_per_position(pair.s_logits, pair.t_logits, temp)),
        masked=pair.masked,
        size=sz,
        card=card,
        claims=claims,
        summary=tuple(summary_lines(sz, card, student.is_bundled, len(t_time["encoder_samples_ms"]))),
        device=teacher.device,
        provisional=not inputs.settled,
        notes=tuple(notes),
    )


def vs_t1(change: float, temperature: float) -> str | None:
    """A probability's change from T = 1, in percentage points (a difference of two percents is not a percent):
    "-36.2 percentage points vs T = 1"; None at T = 1, where there is nothing to compare."""
    return None if temperature == 1 else f"{change * 100:+.1f} percentage points vs T = 1"


def bars_caption_start(temperature: float) -> str:
    """The soft-target figure's first words: which bars are which temperature (at T = 1 the two are the same)."""
    if temperature == 1:
        return "At T = 1 the pale (T = 1) and solid bars are the same: move the temperature to see it soften them."
    return f"Pale bars: T = 1; solid bars: T = {temperature:g}."


def sweep_story(sweep: dict, vocab: int) -> str:
    """What the temperature figure shows, computed from its sweep: whether both distributions flatten as T grows
    (entropy rising towards log V), whether the gap between their entropies shrinks, and what the T²-scaled
    soft-target term does over the same range."""
    temps, ht, hs, kl = (sweep[k] for k in ("temperature", "teacher_entropy", "student_entropy", "kl_term"))
    lo, hi = f"T = {temps[0]:g}", f"T = {temps[-1]:g}"
    rising = lambda h: all(b >= a - 1e-9 for a, b in zip(h, h[1:]))  # noqa: E731
    both = rising(ht) and rising(hs)
    out = [
        (
            f"As T grows from {temps[0]:g} to {temps[-1]:g}, both distributions flatten, their entropy rising "
            f"towards log V = {math.log(vocab):.2f} nats: "
            if both
            else f"From {lo} to {hi} the entropies do not both rise steadily (log V = {math.log(vocab):.2f} nats): "
        )
        + f"teacher {ht[0]:.2f} → {ht[-1]:.2f}, student {hs[0]:.2f} → {hs[-1]:.2f}."
    ]
    gap0, gap1 = abs(ht[0] - hs[0]), abs(ht[-1] - hs[-1])
    out.append(
        f"The gap between them {'shrinks' if gap1 < gap0 else 'does not shrink'} ({gap0:.2f} → {gap1:.2f} nats)."
    )
    ratio = kl[-1] / kl[0] if kl[0] > 0 else float("inf")
    out.append(
        f"The soft-target term T²·KL goes from {kl[0]:.3g} at {lo} to {kl[-1]:.3g} at {hi}"
        + (
            ": the T² factor keeps it from vanishing as the distributions meet."
            if 0.1 <= ratio <= 10
            else f" ({ratio:.2g}× — the T² factor does not hold it steady here)."
        )
    )
    return " ".join(out)


# ----------------------------------------------------------------------------- ask the class

ASKED_TEMPERATURES = (1.0, 2.0, 4.0, 8.0)


def question(result: Result):
    """ "At which temperature does the student learn most?": the T whose T²·KL term (the soft-target loss the
    student is trained on, :func:`temperature_sweep`) is largest on this sentence, among four of the sweep's."""
    from app.classroom.question import Question

    sweep = result.sweep
    at = {t: k for t, k in zip(sweep["temperature"], sweep["kl_term"]) if t in ASKED_TEMPERATURES}
    if len(at) < 2:
        return None
    best = max(at, key=at.get)
    labels = {t: f"T = {t:g}" for t in at}
    return Question(
        "distillation",
        "At which temperature does the student get the largest soft-target signal "
        "(T²·KL) from the teacher on this word?",
        "choice",
        tuple(labels.values()),
        (labels[best],),
        (),
        "T²·KL here: " + ", ".join(f"{labels[t]}: {at[t]:.3f}" for t in at) + ".",
    )
