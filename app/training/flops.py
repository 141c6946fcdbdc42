"""Training compute per step, in FLOPs (2 per multiply-accumulate of the matrix products), for each
objective the experiments compare — so that curves can be drawn against compute, not steps.

A training step of a model costs its forward pass plus the backward pass (about twice the forward):
3 × forward. A frozen model (DistilBERT's teacher) costs its forward only. The encoder's forward is
``app.macs.macs_per_sequence`` over the whole padded sequence (layer norms, softmax, activations and
embedding look-ups left out, a few percent); heads are counted on the positions they actually score.

- masked LM (BERT, ALBERT, RoBERTa): encoder + the MLM head at the ~15% targets;
- replaced-token detection (ELECTRA): the *generator's* step (its encoder + its MLM head at the targets)
  **plus** the *discriminator's* (its encoder + its one-logit head at every position); sampling the
  replacements is not a matrix product and is not counted;
- distillation (DistilBERT): the student's step (encoder + MLM head wherever a loss is taken) plus the
  teacher's forward (encoder + MLM head at the same positions).

Each function returns ``{part: FLOPs}`` per step; ``sum(parts.values())`` is the step's cost.
"""

from __future__ import annotations

from app.macs import macs_per_sequence

TRAIN = 3  # forward + backward ≈ 3 forward passes
FORWARD = 1


def shape(config) -> dict:
    """The numbers macs_per_sequence needs from a transformers config (BERT, ALBERT, ELECTRA, DistilBERT)."""
    h = getattr(config, "hidden_size", None) or config.dim
    return {
        "hidden_size": h,
        "intermediate_size": getattr(config, "intermediate_size", None) or config.hidden_dim,
        "num_hidden_layers": getattr(config, "num_hidden_layers", None) or config.n_layers,
        "embedding_size": getattr(config, "embedding_size", h) or h,
        "vocab_size": config.vocab_size,
    }


def encoder_flops(config, seq_len: int, family: str = "bert", pooler: bool = False) -> float:
    """Forward FLOPs of the base encoder over one sequence of seq_len tokens (padding included).
    family "albert" counts the E→H projection; "bert" counts it only when embedding_size != hidden_size
    (ELECTRA's small generator)."""
    return 2.0 * macs_per_sequence(family, {**shape(config), "pooler": pooler}, seq_len)


def mlm_head_flops(config, family: str = "bert") -> float:
    """Forward FLOPs of the masked-LM head at one position: BERT/ELECTRA transform at H then project to
    V (H·H + H·V; ELECTRA's generator H→E then E→V), ALBERT H→E then E→V."""
    s = shape(config)
    h, e, v = s["hidden_size"], s["embedding_size"], s["vocab_size"]
    if family == "albert" or e != h:
        return 2.0 * (h * e + e * v)
    return 2.0 * (h * h + h * v)


def mlm_step(
    config, batch_size: int, seq_len: int, n_targets: float, family: str = "bert", pooler: bool = False
) -> dict[str, float]:
    """A masked-LM training step over batch_size sequences with n_targets targets in the batch."""
    return {
        "encoder": TRAIN * batch_size * encoder_flops(config, seq_len, family, pooler),
        "mlm head": TRAIN * n_targets * mlm_head_flops(config, family),
    }


def rtd_step(
    generator_config, discriminator_config, batch_size: int, seq_len: int, n_targets: float
) -> dict[str, float]:
    """An ELECTRA step: the generator's masked-LM step and the discriminator's detection step (its head,
    dense H→H then H→1, at every position)."""
    h = shape(discriminator_config)["hidden_size"]
    gen = mlm_step(generator_config, batch_size, seq_len, n_targets)
    return {
        "generator encoder": gen["encoder"],
        "generator head": gen["mlm head"],
        "discriminator encoder": TRAIN * batch_size * encoder_flops(discriminator_config, seq_len),
        "discriminator head": TRAIN * batch_size * seq_len * 2.0 * (h * h + h),
    }


def sentence_head_flops(config) -> float:
    """BERT's pooler (H·H on [CLS]) and its two-way NSP/SOP classifier (2H), per sequence."""
    h = shape(config)["hidden_size"]
    return 2.0 * (h * h + 2 * h)


def distillation_step(
    student_config, teacher_config, batch_size: int, seq_len: int, n_scored: float, teacher: bool
) -> dict[str, float]:
    """A student step with its MLM head at n_scored positions (every real token with soft targets, the
    ~15% targets on hard labels only), plus the frozen teacher's forward at the same positions when it is
    asked (``teacher``)."""
    parts = mlm_step(student_config, batch_size, seq_len, n_scored)
    out = {"student encoder": parts["encoder"], "student head": parts["mlm head"]}
    if teacher:
        out["teacher encoder"] = FORWARD * batch_size * encoder_flops(teacher_config, seq_len)
        out["teacher head"] = FORWARD * n_scored * mlm_head_flops(teacher_config)
    return out
