"""DistilBERT's distillation, on one sentence: the teacher's soft targets, how the temperature T softens
them, and the three loss terms the student was trained on.

Sanh et al. (2019) train the student on

    L = α_ce · T² · KL(softmax(z_t / T) ‖ softmax(z_s / T)) + α_mlm · MLM + α_cos · (1 − cos(h_s, h_t))

with α = (5, 2, 1) and T = 2. Dividing the logits by T > 1 flattens both distributions, so the small
probabilities the teacher gives to *wrong* words ("ball" is wrong, but "toy" is far less wrong than
"ran") carry weight in the loss: Hinton et al.'s "dark knowledge". The T² keeps the gradient's scale
independent of T. The loss terms are not re-implemented here: they come from
``app.training.distilbert.distillation_losses``, the function the bundled student was trained with,
so this page shows exactly what the recipe optimised.
"""

from __future__ import annotations

from app import preload  # noqa: F401  (first: the heavy imports, once, in one thread)

from dataclasses import dataclass

import torch

from app.compare import count_parameters, layer_count, piece_text, tokenize
from app.training.distilbert import Recipe, distillation_losses, student_logits

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
    out = {"temperature": list(temperatures), "teacher_entropy": [], "student_entropy": [], "kl_term": [],
           "teacher_top1": [], "student_top1": []}
    for temp in temperatures:
        pt, ps = soften(t_row, temp), soften(s_row, temp)
        out["teacher_entropy"].append(float(entropy(pt)))
        out["student_entropy"].append(float(entropy(ps)))
        out["teacher_top1"].append(float(pt.max()))
        out["student_top1"].append(float(ps.max()))
        out["kl_term"].append(kl_term(s_row[None], t_row[None], temp))
    return out


def top_tokens(t_probs: torch.Tensor, s_probs: torch.Tensor, k: int) -> list[int]:
    """Vocabulary ids to show: the teacher's top k, then the student's top k not yet listed. (V,) each."""
    ids = t_probs.topk(min(k, t_probs.numel())).indices.tolist()
    ids += [i for i in s_probs.topk(min(k, s_probs.numel())).indices.tolist() if i not in ids]
    return ids


# ----------------------------------------------------------------------------- teacher and student on one input


@dataclass
class PairOutput:
    """Teacher and student on the same masked sentence. T = tokens, V = vocabulary, H = hidden size."""

    tokens: list[str]  # (T,) as read, the masked word's pieces shown as the mask token
    masked: list[int]  # positions of the masked word's pieces
    gold: list[int]  # the original ids there
    labels: torch.Tensor  # (T,) original id at masked positions, -100 elsewhere (as in the recipe)
    t_logits: torch.Tensor  # (T, V)
    s_logits: torch.Tensor  # (T, V)
    t_hidden: torch.Tensor  # (T, H_teacher) last hidden states
    s_hidden: torch.Tensor  # (T, H_student)


def same_vocabulary(t_tokenizer, s_tokenizer) -> bool:
    """Distillation compares distributions id by id, so the two vocabularies must be the same."""
    return t_tokenizer.get_vocab() == s_tokenizer.get_vocab()


def run_pair(teacher, student, tokenizer, text: str, word: int) -> PairOutput | None:
    """Mask every piece of word ``word`` and run both models, as the recipe does on a training batch:
    the teacher's logits and last hidden states (no gradient) and the student's through
    ``student_logits`` on every real token. None when the word has no pieces in this tokenizer."""
    tk = tokenize(tokenizer, text)
    where = tk.pieces_of(word)
    if not where:
        return None
    enc = tokenizer(text, return_tensors="pt")
    ids = enc["input_ids"].clone()  # (1, T)
    att = enc["attention_mask"]  # (1, T)
    gold = ids[0, where].tolist()
    ids[0, where] = tokenizer.mask_token_id
    labels = torch.full(ids.shape[1:], -100, dtype=torch.long)  # (T,)
    labels[where] = torch.tensor(gold)
    real = att.bool().to(student.device)  # (1, T) distil on every real token, as DistilBERT does
    with torch.inference_mode():
        t_out = teacher(input_ids=ids.to(teacher.device), attention_mask=att.to(teacher.device), output_hidden_states=True)
        s_logits, s_hidden = student_logits(student, ids.to(student.device), att.to(student.device), real)
    tokens = [piece_text(tokenizer, i) for i in ids[0].tolist()]
    return PairOutput(
        tokens=tokens, masked=where, gold=gold, labels=labels,
        t_logits=t_out.logits[0].float().cpu(), s_logits=s_logits.float().cpu(),  # (T, V) each
        t_hidden=t_out.hidden_states[-1][0].float().cpu(), s_hidden=s_hidden[0].float().cpu(),  # (T, H)
    )


def recipe_terms(pair: PairOutput, temperature: float = RECIPE.temperature, recipe: Recipe = RECIPE) -> dict:
    """The recipe's three terms on this input (every token for KL and cosine, the masked word for MLM),
    their α weights and the weighted total. ``cos`` is None when the hidden sizes differ (a hub pair
    that was never distilled from each other), and the total then leaves it out."""
    comparable = pair.s_hidden.shape[-1] == pair.t_hidden.shape[-1]
    t_hidden = pair.t_hidden if comparable else pair.s_hidden
    terms = distillation_losses(pair.s_logits.double(), pair.t_logits.double(), pair.labels, pair.s_hidden.double(),
                                t_hidden.double(), temperature)
    kl, mlm = float(terms["kl"]), float(terms["mlm"])
    cos = float(terms["cos"]) if comparable else None
    weighted = {"kl": recipe.alpha_ce * kl, "mlm": recipe.alpha_mlm * mlm,
                "cos": recipe.alpha_cos * cos if cos is not None else None}
    return {"kl": kl, "mlm": mlm, "cos": cos, "alpha": {"kl": recipe.alpha_ce, "mlm": recipe.alpha_mlm, "cos": recipe.alpha_cos},
            "weighted": weighted, "total": sum(v for v in weighted.values() if v is not None), "temperature": temperature}


# ----------------------------------------------------------------------------- size and speed


def size_and_speed(teacher, student, teacher_ms: float, student_ms: float) -> dict:
    """Parameters, layers and measured latency of the pair, as the paper reports them: how much smaller
    (1 − student/teacher parameters) and how much faster (teacher time / student time − 1)."""
    pt, ps = count_parameters(teacher), count_parameters(student)
    emb = teacher.get_input_embeddings().weight.numel()
    return {
        "teacher_params": pt, "student_params": ps, "teacher_layers": layer_count(teacher),
        "student_layers": layer_count(student), "teacher_ms": teacher_ms, "student_ms": student_ms,
        "smaller": 1 - ps / pt, "speedup": teacher_ms / student_ms, "faster": teacher_ms / student_ms - 1,
        "embedding_share": emb / pt,  # the teacher's word embeddings, which the student keeps whole
    }


def summary_lines(sz: dict, card: dict, student_bundled: bool, repeats: int, paper: Paper = PAPER) -> list[str]:
    """The paper's claims next to what was measured here and what the model card says, as markdown lines.
    Every number comes from the arguments; comparisons are worded from their signs."""
    lines = [f"The paper: **{paper.smaller:.0%} smaller, {paper.faster:.0%} faster, {paper.retained:.0%} of BERT's "
             "GLUE score retained** (BERT-base, 12 layers → 6)."]
    if sz["smaller"] >= 0:
        size = f"**{sz['smaller']:.0%} smaller**"
        if sz["smaller"] < paper.smaller:
            size += (f" — less than the paper's {paper.smaller:.0%}, because the student keeps the word embeddings "
                     f"whole and here they are {sz['embedding_share']:.0%} of the teacher's parameters")
    else:
        size = f"**{sz['student_params'] / sz['teacher_params']:.1f}× larger** than this teacher (not its real one)"
    if sz["speedup"] >= 1:
        speed = f"**{sz['speedup']:.2f}× the speed**"
    else:
        speed = f"**{1 / sz['speedup']:.2f}× slower**"
    lines.append(f"Here: {sz['teacher_layers']} layers → {sz['student_layers']}, {size}, and {speed} on this sentence "
                 f"({sz['teacher_ms']:.2f} → {sz['student_ms']:.2f} ms, median of {repeats} forwards).")
    if card:
        line = (f"The bundled student's model card: masked-word top-1 {card['student_top1']:.1%} against the teacher's "
                f"{card['teacher_top1']:.1%}, **{card['retained_top1']:.0%} retained** (masked-LM accuracy on held-out "
                "TinyStories, not GLUE)")
        if card["retained_top1"] > 1:
            line += " — the student beats its teacher on this measure"
        if card.get("speedup"):
            line += f"; the speed-up measured when it was trained: {card['speedup']:.2f}×"
        lines.append(line + ".")
    elif student_bundled:
        lines.append("The bundled student has no model-card numbers yet.")
    else:
        lines.append("Model-card numbers belong to the bundled pair; these hub models were not trained by this project.")
    return lines


def card_summary(final: dict) -> dict:
    """The bundled student's model-card numbers (curves.json 'final'), or {} when there are none."""
    if not final or "retained_top1" not in final:
        return {}
    teacher = final.get("teacher", {})
    return {"student_top1": final.get("top1"), "student_top5": final.get("top5"),
            "teacher_top1": teacher.get("top1"), "teacher_top5": teacher.get("top5"),
            "retained_top1": final["retained_top1"], "speedup": final.get("speedup"),
            "faster": final["speedup"] - 1 if final.get("speedup") else None,
            "teacher_ms": final.get("teacher_ms"), "student_ms": final.get("student_ms")}


def pair_notes(teacher_source: str, teacher_location: str, student_source: str) -> list[str]:
    """What the reader must know about which teacher this is. Sources: 'bundled', 'hub', 'hub cache'."""
    notes = []
    if teacher_source != "bundled":
        notes.append(f"The teacher here is `{teacher_location}` from the hub, **not** DistilBERT's real teacher "
                     f"`{REAL_TEACHER}` (12 layers, 768 wide): the KL and cosine terms compare the student with a model "
                     "it never learned from.")
    if (teacher_source == "bundled") != (student_source == "bundled"):
        notes.append("Teacher and student come from different places (one bundled, one from the hub), so they were not "
                     "distilled from each other; only the bundled pair is a real teacher and student.")
    return notes
