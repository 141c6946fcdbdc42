"""XLNet's permutation language modelling, as attention masks.

XLNet keeps the tokens in place and predicts them in a random *factorization order*; which token
may see which is entirely in two masks, in transformers' vocabulary:

- ``perm_mask[b, i, j] = 1`` means position i may **NOT** attend to position j (the reverse of
  ``attention_mask``). It is the *query stream*'s mask: a position never sees its own content.
- The *content stream* uses the same mask with the diagonal opened: a position sees itself.
- ``target_mapping[b, k, j] = 1`` means the k-th prediction is for position j.

With a full order z (``order[t]`` = the position predicted at step t), position i sees j in the
query stream iff j comes strictly earlier in the order, and in the content stream iff j comes
earlier or j == i. Partial prediction (XLNet §2.3) predicts only the last 1/K of the order; the
first part is context that every position may see.

The first half serves the training recipe (``partial_prediction_masks``, batched, random orders); the
second the lesson: masks from an explicit order (``masks_from_order``), a typed order checked with a
clear message (``parse_order``), the model run under those masks (``permutation_forward``), a check
that the attention it used is zero where the masks block (``attention_check``), and a masked LM's
predictions for the same words, masked all at once (``masked_lm_all_at_once``).
"""

from __future__ import annotations

from app import preload  # noqa: F401  (first: the heavy imports, once, in one thread)

import re
from collections import Counter
from dataclasses import dataclass

import torch


def ranks_from_order(order: torch.Tensor, length: int) -> torch.Tensor:
    """rank[p] = the step at which position p comes in the order. order: (T,) -> (T,) long."""
    rank = torch.empty(length, dtype=torch.long)
    rank[order] = torch.arange(len(order))
    return rank


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


# ----------------------------------------------------------------------------- one sentence, a full order
#
# The lesson shows one sentence: its content pieces are followed by ``<sep> <cls>`` (no padding for a
# single sequence, so piece k sits at position k). A full factorization order lists every content
# position once; the last ``n_targets`` of it are predicted, the rest is context. As in
# ``partial_prediction_masks`` (and so as the bundled model was trained): context positions and
# ``<sep> <cls>`` are seen by every position; a context position sees no target; a target sees the
# targets that come strictly earlier in the order (query stream), and itself too (content stream).


@dataclass(frozen=True)
class LessonDefaults:
    max_pieces: int = 24  # content pieces kept from the text (the rest is cut, and the page says so)
    k: int = 6  # partial prediction: the last 1/K of the order is predicted (XLNet base)
    top_k: int = 5


DEFAULTS = LessonDefaults()
ORDER_KINDS = ("random", "left-to-right", "right-to-left", "typed")


class OrderError(ValueError):
    """A typed factorization order that cannot be used; the message says what is wrong, in words."""


def _listed(values: list) -> str:
    shown = ", ".join(str(v) for v in values[:6])
    return shown + (f" and {len(values) - 6} more" if len(values) > 6 else "")


def parse_order(text: str, n: int) -> list[int]:
    """A typed order of piece numbers, ``"3 1 4 2 0"`` (spaces or commas) -> [3, 1, 4, 2, 0].

    It must list every piece number 0..n-1 exactly once. Raises OrderError naming the first problem:
    empty, not a whole number, out of range, repeated, or missing.
    """
    if n <= 0:
        raise OrderError("there are no pieces to order")
    example = " ".join(str(i) for i in reversed(range(min(n, 5))))
    parts = text.replace(",", " ").split()
    if not parts:
        raise OrderError(f"the order is empty: type the piece numbers 0 to {n - 1} in the order they are predicted, e.g. `{example}`")
    bad = [p for p in parts if not re.fullmatch(r"[+-]?[0-9]+", p)]
    if bad:
        shown = [b[:12].replace("`", "'") for b in bad]
        raise OrderError(f"{_listed([f'`{b}`' for b in shown])} {'is not a piece number' if len(bad) == 1 else 'are not piece numbers'}: "
                         f"use whole numbers from 0 to {n - 1}, separated by spaces")
    nums = [int(p) for p in parts]
    outside = sorted({v for v in nums if not 0 <= v < n})
    if outside:
        raise OrderError(f"{_listed(outside)} {'is' if len(outside) == 1 else 'are'} out of range: the text has {n} "
                         f"piece{'s' if n != 1 else ''}, numbered 0 to {n - 1}")
    repeats = sorted(v for v, c in Counter(nums).items() if c > 1)
    if repeats:
        raise OrderError(f"{_listed(repeats)} {'appears' if len(repeats) == 1 else 'appear'} more than once: "
                         "an order lists each piece exactly once")
    missing = sorted(set(range(n)) - set(nums))
    if missing:
        raise OrderError(f"{_listed(missing)} {'is' if len(missing) == 1 else 'are'} missing: an order lists every "
                         f"piece from 0 to {n - 1} once (this is not a permutation of the {n} pieces)")
    return nums


def make_order(kind: str, n: int, seed: int = 0, typed: str = "") -> list[int]:
    """A factorization order over n pieces: "random" (seeded), "left-to-right", "right-to-left" or "typed"."""
    if kind == "random":
        return torch.randperm(n, generator=torch.Generator().manual_seed(int(seed))).tolist()
    if kind == "left-to-right":
        return list(range(n))
    if kind == "right-to-left":
        return list(reversed(range(n)))
    if kind == "typed":
        return parse_order(typed, n)
    raise ValueError(f"kind must be one of {ORDER_KINDS}")


def n_targets_for(n: int, k: int | None = None, count: int | None = None) -> int:
    """How many pieces are predicted: ceil(n / K) as in training, or an explicit count clipped to 1..n."""
    if n <= 0:
        return 0
    if count is not None:
        return max(1, min(int(count), n))
    return -(-n // max(1, int(k or DEFAULTS.k)))


def content_stream_mask(perm_mask: torch.Tensor, attention_mask: torch.Tensor | None = None) -> torch.Tensor:
    """What the content stream uses, as XLNetModel builds it: (..., T, T) float, 1 = i may NOT attend to j.

    ``perm_mask``, plus padding columns (``attention_mask[j] == 0``), with the diagonal opened: a
    position's content stream always sees its own token.
    """
    query = query_stream_mask(perm_mask, attention_mask)
    eye = torch.eye(perm_mask.shape[-1], dtype=torch.bool, device=perm_mask.device)
    return (query.bool() & ~eye).to(perm_mask.dtype)  # (..., T, T)


def query_stream_mask(perm_mask: torch.Tensor, attention_mask: torch.Tensor | None = None) -> torch.Tensor:
    """What the query stream uses: (..., T, T) float, 1 = i may NOT attend to j. ``perm_mask`` plus padding
    columns; a target's own diagonal stays blocked, so it knows its position but never its content."""
    blocked = perm_mask.bool()
    if attention_mask is not None:
        blocked = blocked | (attention_mask[..., None, :] == 0)
    return blocked.to(perm_mask.dtype)


@dataclass(frozen=True)
class OrderMasks:
    """The masks for one sequence of length T under a full factorization order.

    order:          content positions in factorization order (step t predicts or reveals order[t])
    targets:        the predicted positions, in the order they are predicted (the last P of ``order``)
    perm_mask:      (T, T) float, ``perm_mask[i, j] = 1`` means i may NOT attend to j (query stream)
    target_mapping: (P, T) float one-hot, ``target_mapping[k, j] = 1`` means prediction k is position j
    """

    order: tuple[int, ...]
    targets: tuple[int, ...]
    perm_mask: torch.Tensor
    target_mapping: torch.Tensor

    @property
    def content_mask(self) -> torch.Tensor:
        return content_stream_mask(self.perm_mask)  # (T, T)

    @property
    def query_mask(self) -> torch.Tensor:
        return query_stream_mask(self.perm_mask)  # (T, T)

    @property
    def context(self) -> tuple[int, ...]:
        return self.order[: len(self.order) - len(self.targets)]


def masks_from_order(order, n_targets: int, length: int, specials_visible: bool = True) -> OrderMasks:
    """perm_mask and target_mapping for one sequence from an explicit order.

    order: the content positions (each once) in factorization order; positions of the sequence not in
    it (``<sep> <cls>``) are context. The last ``n_targets`` of the order are predicted. Then, with
    1 = may NOT attend (perm_mask's convention):

        perm_mask[i, j] = 1  if j is a target and not (i is a target and j comes before i in the order)
                        = 1  if j is not in the order, i is a target and not specials_visible
                        = 0  otherwise (j is context: seen by all)

    so a target never sees itself or a later target, and context never sees a target. With
    ``specials_visible`` (the default, and how the model was trained) this is exactly the mask
    ``partial_prediction_masks`` draws; without it a target first in the order may see nothing at all
    (see ``context_free_targets``).
    """
    order = [int(p) for p in order]
    if len(set(order)) != len(order) or not all(0 <= p < length for p in order):
        raise ValueError("order must list distinct positions inside the sequence")
    n_targets = max(0, min(int(n_targets), len(order)))
    targets = order[len(order) - n_targets :]
    rank = torch.full((length,), -1, dtype=torch.long)  # -1: context, seen by every position
    rank[targets] = torch.arange(n_targets)
    is_target = rank >= 0  # (T,)
    self_rank = torch.where(is_target, rank, torch.zeros_like(rank))  # context rows: blocked from every target
    perm_mask = is_target[None, :] & (rank[None, :] >= self_rank[:, None])  # (T, T)
    if not specials_visible:
        outside = torch.ones(length, dtype=torch.bool)
        outside[order] = False
        perm_mask |= is_target[:, None] & outside[None, :]  # targets do not see <sep> <cls>
    target_mapping = torch.zeros(n_targets, length)
    target_mapping[torch.arange(n_targets), targets] = 1.0  # (P, T)
    return OrderMasks(tuple(order), tuple(targets), perm_mask.float(), target_mapping)


def context_free_targets(masks: OrderMasks, attention_mask: torch.Tensor | None = None) -> list[int]:
    """Targets whose query-stream row is fully blocked: they may see nothing at all.

    XLNet subtracts 1e30 from every blocked score, so such a row's softmax is *uniform over every
    position, its own content included*: its prediction would leak its own token. Callers must not
    present it as a prediction (the lesson marks it "no context" and shows no guess).
    """
    query = query_stream_mask(masks.perm_mask, attention_mask)  # (T, T)
    return [t for t in masks.targets if bool(query[t].all())]


def visible(mask: torch.Tensor, i: int) -> list[int]:
    """The positions row i may attend to under a (T, T) mask with 1 = blocked."""
    return (mask[i] == 0).nonzero().flatten().tolist()


# ----------------------------------------------------------------------------- the sentence and the model


@dataclass(frozen=True)
class Pieces:
    """An XLNet input for one text: content pieces, then ``<sep> <cls>`` (XLNet puts them at the end).

    ids, pieces, spans: (T,) each; spans are character offsets into the text, (0, 0) for specials.
    """

    ids: tuple[int, ...]
    pieces: tuple[str, ...]
    spans: tuple[tuple[int, int], ...]
    n_content: int
    n_before_cap: int  # content pieces before the cap (== n_content when nothing was cut)
    dropped_controls: tuple[str, ...]  # control tokens typed in the text (e.g. "<sep>"), left out

    @property
    def capped(self) -> bool:
        return self.n_before_cap > self.n_content

    @property
    def kept_chars(self) -> int:
        """How much of the text the kept pieces cover (the masked LM reads the same prefix)."""
        return self.spans[self.n_content - 1][1] if self.n_content else 0


def xlnet_pieces(tokenizer, text: str, max_pieces: int = DEFAULTS.max_pieces) -> Pieces:
    """Tokenize ``text`` into at most ``max_pieces`` content pieces followed by ``<sep> <cls>``.

    The tokenizer reads control tokens typed in the text ("<sep>", "<cls>", ...) as the real ones;
    they are left out of the content (and reported), so the only specials are the two at the end.
    ``<unk>`` pieces (characters the vocabulary lacks: emoji, other scripts) stay: they stand for text.
    """
    enc = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
    special = set(tokenizer.all_special_ids) - {tokenizer.unk_token_id}  # <unk> stands for real text
    kept = [(i, tuple(s)) for i, s in zip(enc["input_ids"], enc["offset_mapping"]) if i not in special]
    dropped = tuple(tokenizer.convert_ids_to_tokens([i for i in enc["input_ids"] if i in special]))
    content = kept[:max_pieces]
    ids = [i for i, _ in content] + [tokenizer.sep_token_id, tokenizer.cls_token_id]
    spans = [s for _, s in content] + [(0, 0), (0, 0)]
    return Pieces(tuple(ids), tuple(tokenizer.convert_ids_to_tokens(ids)), tuple(spans), len(content), len(kept), dropped)


@dataclass
class PermutationOutput:
    """What XLNetLMHeadModel returns for one sequence under perm_mask and target_mapping.

    probs:              (P, V) softmax over the vocabulary; row k predicts masks.targets[k]
    content_attentions: (L, H, T, T) attention probabilities of the content stream
    query_attentions:   (L, H, T, T) of the query stream (only the target rows are computed)
    """

    probs: torch.Tensor
    content_attentions: torch.Tensor
    query_attentions: torch.Tensor


@torch.no_grad()
def permutation_forward(model, input_ids, masks: OrderMasks) -> PermutationOutput:
    """Run XLNetLMHeadModel (eager attention) on one sequence with the order's masks. input_ids: (T,)."""
    device, dtype = model.device, model.dtype
    ids = torch.as_tensor(input_ids, dtype=torch.long, device=device)[None]  # (1, T)
    # transformers 5.23 builds XLNet's relative position embedding in float32 whatever the weights are,
    # so a float16/bfloat16 model fails in its first einsum; autocast casts it to the weights' dtype.
    with torch.autocast(device.type, dtype=dtype, enabled=dtype != torch.float32):
        out = model(input_ids=ids, perm_mask=masks.perm_mask[None].to(device, dtype),
                    target_mapping=masks.target_mapping[None].to(device, dtype), output_attentions=True, use_mems=False)
    probs = out.logits[0].float().softmax(-1).cpu()  # (P, V)
    content = torch.stack([layer[0][0] for layer in out.attentions]).float().cpu()  # (L, H, T, T)
    query = torch.stack([layer[1][0] for layer in out.attentions]).float().cpu()  # (L, H, T, T)
    return PermutationOutput(probs, content, query)


def attention_check(out: PermutationOutput, masks: OrderMasks) -> list[dict]:
    """Read, not assume: per layer and stream, the largest attention probability on a blocked cell.

    Content stream: every row. Query stream: the target rows that see something; the context-free
    ones (see ``context_free_targets``) are counted apart, with how far their row is from uniform.
    One dict per (layer, stream).
    """
    length = masks.perm_mask.shape[-1]
    free = context_free_targets(masks)
    seeing = [t for t in masks.targets if t not in free]
    checks = []
    for layer in range(out.content_attentions.shape[0]):
        for stream, att, mask, rows in (("content", out.content_attentions, masks.content_mask, list(range(length))),
                                        ("query", out.query_attentions, masks.query_mask, seeing)):
            a = att[layer][:, rows]  # (H, R, T)
            blocked = mask[rows].bool()[None].expand_as(a)  # (H, R, T)
            on_blocked = a[blocked]
            uniform = att[layer][:, free] if stream == "query" else att[layer][:, []]  # (H, F, T)
            checks.append({
                "layer": layer + 1,
                "stream": stream,
                "rows": len(rows),
                "blocked cells": int(blocked[0].sum()),
                "max prob on a blocked cell": float(on_blocked.max()) if on_blocked.numel() else 0.0,
                "min prob mass on visible cells": float((a * ~blocked).sum(-1).min()) if a.numel() else 1.0,
                "context-free rows": uniform.shape[1],
                "max distance from uniform": float((uniform - 1.0 / length).abs().max()) if uniform.numel() else 0.0,
            })
    return checks


def top_predictions(probs: torch.Tensor, tokenizer, k: int) -> list[list[tuple[str, float]]]:
    """Per row of (P, V) probabilities, the k most likely pieces with their probabilities."""
    values, ids = probs.topk(min(k, probs.shape[-1]), dim=-1)  # (P, k)
    return [list(zip(tokenizer.convert_ids_to_tokens(row_ids.tolist()), row_values.tolist()))
            for row_ids, row_values in zip(ids, values)]


# ----------------------------------------------------------------------------- the masked LM beside it


def overlapping(spans: list[tuple[int, int]], other: list[tuple[int, int]]) -> list[list[int]]:
    """For each character span in ``spans``, the indices of the spans in ``other`` that share a character."""
    return [[j for j, (c, d) in enumerate(other) if c < d and a < b and c < b and a < d] for a, b in spans]


@dataclass
class MaskedLMOutput:
    """A masked LM's predictions with every piece that overlaps a target masked at once.

    pieces:  its own pieces of the text (WordPiece for BERT); masked: their indices that were masked
    probs:   (M, V) softmax at the masked pieces, in the order of ``masked``
    for_target: per XLNet target (in the order given), the indices into ``masked`` that cover it
    actual:  (M,) probability of the piece that was really there
    """

    pieces: list[str]
    masked: list[int]
    probs: torch.Tensor
    for_target: list[list[int]]
    actual: list[float]


@torch.no_grad()
def masked_lm_all_at_once(model, tokenizer, text: str, target_spans: list[tuple[int, int]]) -> MaskedLMOutput:
    """Mask, in the masked LM's own tokenization, every piece sharing a character with a target span, all
    at once, and predict each from the unmasked rest: BERT's independence assumption, on the same words."""
    enc = tokenizer(text, return_offsets_mapping=True, truncation=True)
    ids = torch.tensor(enc["input_ids"])  # (T',)
    special = set(tokenizer.all_special_ids) - {tokenizer.unk_token_id}
    spans = [tuple(s) if i not in special else (0, 0) for i, s in zip(enc["input_ids"], enc["offset_mapping"])]
    cover = overlapping(list(target_spans), spans)
    masked = sorted({j for js in cover for j in js})
    corrupted = ids.clone()
    corrupted[masked] = tokenizer.mask_token_id
    logits = model(input_ids=corrupted[None].to(model.device)).logits[0, masked].float().cpu()  # (M, V)
    probs = logits.softmax(-1)
    actual = probs[torch.arange(len(masked)), ids[masked]].tolist() if masked else []
    index = {j: m for m, j in enumerate(masked)}
    return MaskedLMOutput(tokenizer.convert_ids_to_tokens(ids.tolist()), masked, probs,
                          [[index[j] for j in js] for js in cover], actual)
