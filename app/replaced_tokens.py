"""ELECTRA's replaced-token detection, the rules: which positions are masked, how replacements are sampled
from the generator, what the discriminator's labels are, and how its detection is scored.

Clark et al. (2020). A small generator (a masked LM) fills the masked positions of a sentence by
*sampling* from its output distribution; the discriminator then reads the corrupted sentence and
predicts, for every token, whether it was replaced. A sampled token that happens to equal the
original counts as **original** (label 0), as in the paper.

Pure functions on tensors with an explicit ``torch.Generator``: a seed reproduces a round exactly. The
lesson (app/lessons/electra.py), the training recipe (app/training/electra.py) and the experiment
(app/experiments/electra.py) share them.

Vocabulary: ``mlm_probability`` is the share of content tokens that are masked; ``labels`` /
``replaced`` are 1 where the corrupted token differs from the original and 0 elsewhere;
``scores`` are the discriminator's P(replaced) = sigmoid(logit).
"""

from __future__ import annotations

from app.core import preload  # noqa: F401  (first: the heavy imports, once, in one thread)

preload.load()  # before torch: a page that imports this module first (or a script) gets the imports in one thread

from dataclasses import dataclass

import torch

THRESHOLD = 0.5  # P(replaced) above which a token is flagged


# ----------------------------------------------------------------------------- corruption


def n_to_mask(n_content: int, mlm_probability: float) -> int:
    """How many positions ELECTRA masks: round(p · n), at least one when there is any content
    (``num_to_predict`` in the official pretrain_helpers.mask)."""
    if n_content <= 0:
        return 0
    return max(1, min(n_content, round(mlm_probability * n_content)))


def mask_positions(special: torch.Tensor, mlm_probability: float, gen: torch.Generator) -> torch.Tensor:
    """Pick ``n_to_mask`` content positions uniformly without replacement.

    special: (T,) bool, True where a position may never be masked. Returns (T,) bool, True = masked.
    """
    content = (~special).nonzero().flatten()  # (n,)
    k = n_to_mask(len(content), mlm_probability)
    chosen = content[torch.randperm(len(content), generator=gen)[:k]]  # (k,)
    masked = torch.zeros_like(special, dtype=torch.bool)
    masked[chosen] = True
    return masked


def masked_input(input_ids: torch.Tensor, masked: torch.Tensor, mask_token_id: int) -> torch.Tensor:
    """The generator's input: the mask token at masked positions. (T,) -> (T,)"""
    return torch.where(masked, torch.full_like(input_ids, mask_token_id), input_ids)


def replacement_probs(logits: torch.Tensor, special_ids: torch.Tensor, temperature: float = 1.0) -> torch.Tensor:
    """softmax(logits / T) with special tokens removed: the distribution replacements are sampled from.
    (n, V) -> (n, V). ELECTRA's own (a temperature, no specials), deliberately not app.mlm.probabilities; its
    top-k is app.mlm's."""
    if not temperature > 0:
        raise ValueError("the sampling temperature must be positive")
    logits = logits.detach().float().clone()
    logits[:, special_ids] = float("-inf")
    return torch.softmax(logits / temperature, dim=-1)


def sample_replacements(
    logits: torch.Tensor, special_ids: torch.Tensor, gen: torch.Generator, temperature: float = 1.0
):
    """One token per row from softmax(logits / T); special tokens are never proposed. (n, V) -> (n,)"""
    probs = replacement_probs(logits, special_ids, temperature)
    return torch.multinomial(probs, 1, generator=gen).squeeze(-1)


def corrupt(input_ids: torch.Tensor, masked: torch.Tensor, replacements: torch.Tensor) -> torch.Tensor:
    """Put the sampled tokens in at the masked positions. input_ids (T,), masked (T,) bool,
    replacements (n,) in the order of ``masked.nonzero()``. Returns (T,)."""
    corrupted = input_ids.clone()
    corrupted[masked] = replacements
    return corrupted


def replaced_labels(corrupted: torch.Tensor, original: torch.Tensor) -> torch.Tensor:
    """The discriminator's targets: 1 where the token differs from the original. (T,) bool"""
    return corrupted != original


# ----------------------------------------------------------------------------- detection quality


def roc_auc(scores: torch.Tensor, labels: torch.Tensor) -> float:
    """Area under the ROC curve = P(score of a random positive > score of a random negative), ties ½."""
    scores, labels = scores.flatten().double(), labels.flatten().bool()
    pos, neg = scores[labels], scores[~labels]
    if len(pos) == 0 or len(neg) == 0:
        return float("nan")
    order = torch.cat([pos, neg]).argsort()
    ranks = torch.empty(len(order), dtype=torch.double)
    ranks[order] = torch.arange(1, len(order) + 1, dtype=torch.double)
    allv = torch.cat([pos, neg])
    for v in allv.unique()[torch.unique(allv, return_counts=True)[1] > 1]:  # average ranks of ties
        same = allv == v
        ranks[same] = ranks[same].mean()
    return float((ranks[: len(pos)].sum() - len(pos) * (len(pos) + 1) / 2) / (len(pos) * len(neg)))


@dataclass(frozen=True)
class Detection:
    """Per-sentence detection quality over the scored tokens. precision is nan when nothing is flagged,
    recall nan when nothing was replaced, auc nan unless both classes are present."""

    n_tokens: int
    n_replaced: int
    n_flagged: int
    true_positives: int
    precision: float
    recall: float
    auc: float

    @property
    def both_classes(self) -> bool:
        return 0 < self.n_replaced < self.n_tokens


def detection_metrics(scores, labels, keep=None, threshold: float = THRESHOLD) -> Detection:
    """Precision and recall of ``scores > threshold`` and ROC-AUC, over positions where ``keep`` is True
    (by default all). scores (T,) float, labels (T,) bool, keep (T,) bool."""
    scores, labels = torch.as_tensor(scores, dtype=torch.double), torch.as_tensor(labels, dtype=torch.bool)
    if keep is not None:
        keep = torch.as_tensor(keep, dtype=torch.bool)
        scores, labels = scores[keep], labels[keep]
    flagged = scores > threshold
    tp = int((flagged & labels).sum())
    n_flagged, n_replaced = int(flagged.sum()), int(labels.sum())
    return Detection(
        n_tokens=len(labels),
        n_replaced=n_replaced,
        n_flagged=n_flagged,
        true_positives=tp,
        precision=tp / n_flagged if n_flagged else float("nan"),
        recall=tp / n_replaced if n_replaced else float("nan"),
        auc=roc_auc(scores, labels) if len(labels) else float("nan"),
    )


def content_positions(special) -> list[bool]:
    """The tokens detection is scored on: every non-special token (as in the recipe's evaluation)."""
    return [not s for s in special]
