"""DistilBERT's triple loss, the rule the student is trained on (Sanh et al., 2019):

    L = α_ce · T² · KL(softmax(z_t / T) ‖ softmax(z_s / T)) + α_mlm · MLM + α_cos · (1 − cos(h_s, h_t))

with α = (5, 2, 1) and T = 2 (:class:`Recipe`). The training recipe (app/training/distilbert.py), the
experiment (app/experiments/distillation.py) and the lesson (app/lessons/distillation.py) all compute it
with :func:`distillation_losses`, so the lesson shows exactly what the bundled student optimised.

Shapes: V vocabulary, H hidden size; n rows of logits in the loss terms. Pure: no streamlit.
"""

from __future__ import annotations

from app.core import preload  # noqa: F401  (first: the heavy imports, once, in one thread)

preload.load()  # before torch: a page that imports this module first (or a script) gets the imports in one thread

from dataclasses import dataclass

import torch


@dataclass(frozen=True)
class Recipe:
    """DistilBERT's loss: the temperature T and the weights α_ce (soft targets), α_mlm, α_cos."""

    temperature: float = 2.0
    alpha_ce: float = 5.0
    alpha_mlm: float = 2.0
    alpha_cos: float = 1.0


def distillation_losses(s_logits, t_logits, labels, s_hidden, t_hidden, temperature: float) -> dict[str, torch.Tensor]:
    """The three loss terms of the recipe on the selected positions: logits (n, V), labels (n,) with -100
    where there is no MLM target, hidden states (n, H). Returns {"kl": T²·KL(teacher_T ‖ student_T)
    averaged over rows, "mlm": cross-entropy at the labelled rows, "cos": mean 1 − cos(h_s, h_t)}.
    Computed in float32 even under bfloat16 autocast: a KL from bfloat16 logits is off by ~1% and can go
    negative near convergence at high T."""
    t = temperature
    wide = torch.promote_types(s_logits.dtype, torch.float32)  # float32, or float64 where the caller asked for it
    s_logits, t_logits = s_logits.to(wide), t_logits.to(wide)
    kl = (
        torch.nn.functional.kl_div(
            torch.log_softmax(s_logits / t, -1), torch.softmax(t_logits / t, -1), reduction="batchmean"
        )
        * t**2
    )
    keep = labels != -100
    mlm = torch.nn.functional.cross_entropy(s_logits[keep], labels[keep]) if keep.any() else s_logits.sum() * 0
    cos = (1 - torch.nn.functional.cosine_similarity(s_hidden, t_hidden, dim=-1)).mean()
    return {"kl": kl, "mlm": mlm, "cos": cos}
