"""XLNet's permutation language modelling, the rules: which position may see which, as the masks transformers'
XLNetLMHeadModel takes.

XLNet (Yang et al., 2019) keeps the tokens in place and predicts them in a *factorization order*:
``perm_mask[b, i, j] = 1`` means position i may **NOT** attend to position j (the reverse of
``attention_mask``); ``target_mapping[b, k, j] = 1`` means the k-th prediction is for position j.

- :func:`partial_prediction_masks`: pre-training's masks for a batch (random orders, the last 1/K of
  each predicted: partial prediction, XLNet §2.3), used by the training recipe;
- :func:`last_targets_masks`: one sentence whose given positions are predicted last, left to right,
  every other token visible to them: how a student asks XLNet for a hidden word (the variants
  comparison, the cloze check).

The lesson (app/lessons/xlnet.py) builds its explicit orders on the same rule. Pure: no streamlit.
"""

from __future__ import annotations

from app.core import preload  # noqa: F401  (first: the heavy imports, once, in one thread)

preload.load()  # before torch: a page that imports this module first (or a script) gets the imports in one thread

from dataclasses import dataclass

import numpy as np
import torch


def partial_prediction_masks(maskable: torch.Tensor, k: int, gen: torch.Generator):
    """Training masks for a batch, as in XLNet's pre-training data pipeline.

    maskable: (B, T) bool, the content tokens (not special, not padding). For each row a random
    order over its content tokens is drawn and its last ceil(n / k) positions become targets.
    Non-target tokens are context: they see each other and no target. A target sees the context
    and the targets that come before it in the order.

    Returns
      perm_mask:      (B, T, T) float, 1 = may not attend (query stream)
      target_mapping: (B, P, T) float one-hot rows, P = the most targets in a row; unused rows 0
      target_pos:     (B, P) long, the target positions, -1 for unused rows
    """
    bsz, length = maskable.shape
    rank = torch.full((bsz, length), -1, dtype=torch.long)  # -1: context (non-target)
    target_lists = []
    for b in range(bsz):
        content = maskable[b].nonzero().flatten()  # (n,)
        n = len(content)
        n_targets = -(-n // k) if n else 0
        order = content[torch.randperm(n, generator=gen)]  # a random factorization order
        targets = order[n - n_targets :]  # the last 1/K of the order is predicted
        rank[b, targets] = torch.arange(n_targets)
        target_lists.append(targets)
    is_target = rank >= 0  # (B, T)
    self_rank = torch.where(is_target, rank, torch.zeros_like(rank))  # context rows: blocked from every target
    perm_mask = (is_target[:, None, :] & (rank[:, None, :] >= self_rank[:, :, None])).float()  # (B, T, T)
    n_pred = max((len(t) for t in target_lists), default=0)
    target_mapping = torch.zeros(bsz, max(n_pred, 1), length)
    target_pos = torch.full((bsz, max(n_pred, 1)), -1, dtype=torch.long)
    for b, targets in enumerate(target_lists):
        targets = targets.sort().values
        target_mapping[b, torch.arange(len(targets)), targets] = 1.0
        target_pos[b, : len(targets)] = targets
    return perm_mask, target_mapping, target_pos


def last_targets_masks(length: int, targets: list[int]) -> tuple[torch.Tensor, torch.Tensor]:
    """perm_mask (1, T, T) and target_mapping (1, n, T) to predict ``targets`` last, left to right.

    ``perm_mask[0, i, j] = 1``: position i may NOT see position j. Every non-target token comes first
    in the order (seen by everyone); target j is seen only by targets after it (query stream), so
    no position sees a target's content before it is predicted. ``target_mapping[0, k, targets[k]] = 1``.
    """
    perm_mask = torch.zeros(1, length, length)
    for r, j in enumerate(targets):
        perm_mask[0, :, j] = 1.0  # nobody sees target j ...
        perm_mask[0, targets[r + 1 :], j] = 0.0  # ... except the targets that come after it
    target_mapping = torch.zeros(1, len(targets), length)
    target_mapping[0, torch.arange(len(targets)), torch.tensor(targets)] = 1.0
    return perm_mask, target_mapping


# ----------------------------------------------------------------------------- one order's masks, as drawn

HIDDEN, CONTEXT, EARLIER, OWN = 0, 1, 2, 3  # what a step of the order sees at a position (MaskView.steps)


@dataclass(frozen=True)
class MaskView:
    """One order's masks as the figures draw them, computed once (``mask_view``): numpy arrays and tuples.

    pieces: (T,) the pieces, content then ``<sep> <cls>``; n_content: the content pieces (numbered in a typed
    order); order, targets: as in OrderMasks; free: the context-free targets (``context_free_targets``).
    steps: (n, T), row s = step s of the order, column j a position: OWN (the position at that step), HIDDEN,
    CONTEXT (visible context or a special) or EARLIER (a visible earlier target). A target's row is its query
    stream, a context row its content stream.
    sees: {"query" | "content": for every position i, the positions row i may attend to in that stream}.
    content, query: (T, T) the two streams' masks, 1 = blocked; query is NaN on the rows it never computes
    (context). perm_mask: (T, T). target_mapping: (P, T)."""

    pieces: tuple[str, ...]
    n_content: int
    order: tuple[int, ...]
    targets: tuple[int, ...]
    free: tuple[int, ...]
    steps: np.ndarray
    sees: dict[str, tuple[tuple[int, ...], ...]]
    content: np.ndarray
    query: np.ndarray
    perm_mask: np.ndarray
    target_mapping: np.ndarray
