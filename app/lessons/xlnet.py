"""XLNet's permutation language modelling, as attention masks.

XLNet (Yang et al., 2019) keeps the tokens in place and predicts them in a random *factorization
order*; which token may see which is entirely in two masks, in transformers' vocabulary:

- ``perm_mask[b, i, j] = 1`` means position i may **NOT** attend to position j (the reverse of
  ``attention_mask``). It is the *query stream*'s mask: a position never sees its own content.
- The *content stream* uses the same mask with the diagonal opened: a position sees itself.
- ``target_mapping[b, k, j] = 1`` means the k-th prediction is for position j.

With a full order z (``order[t]`` = the position predicted at step t), position i sees j in the
query stream iff j comes strictly earlier in the order, and in the content stream iff j comes
earlier or j == i. Partial prediction (XLNet §2.3) predicts only the last 1/K of the order; the
first part is context that every position may see.

The training recipe's masks (``partial_prediction_masks``, batched, random orders) are app/permutation.py;
here the lesson: masks from an explicit order (``masks_from_order``), a typed order checked with a
clear message (``parse_order``), the model run under those masks (``permutation_forward``), a check
that the attention it used is zero where the masks block (``attention_check``), and a masked LM's
predictions for the same words, masked all at once (``masked_lm_all_at_once``). ``run`` is the lesson
(pages/xlnet.py): SPEC -> Inputs -> run -> Result.
"""

from __future__ import annotations

from app.core import preload  # noqa: F401  (first: the heavy imports, once, in one thread)

preload.load()  # the heavy imports, once, in one thread, before this module's own (a page run outside the router too)

from collections import Counter
from dataclasses import dataclass, replace

import numpy as np
import torch

from app import mlm
from app.permutation import partial_prediction_masks  # noqa: F401  (the training rule the lesson's masks follow)
from app.permutation import CONTEXT, EARLIER, HIDDEN, OWN, MaskView  # noqa: F401  (also xlnet.*: the figures' view)
from app.core import text as txt
from app.core.lesson import Note, Stop, direct, inputs_from
from app.core.state import INT, Param, Spec, figure_param, seed_param, text_param
from app.models import device as devices

ORDER = 60  # its place in teaching order (app/lessons/__init__.py lists lessons by it)
TITLE = 'XLNet: permutation LM'
ICON = ':material/shuffle:'
LINE = 'Predict tokens in any order: the content and query streams as attention masks, with live predictions.'


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
    most_top_k: int = 10  # the forward passes keep this many guesses; the top-k slider only shows fewer
    n_targets: int = 3  # the fixed count's default


DEFAULTS = LessonDefaults()
DEFAULT_TEXT = "The little girl found a red ball in the park."
MODELS = ("xlnet", "bert")  # the permutation LM, and a masked LM guessing the same words all at once
ORDER_KINDS = ("random", "left-to-right", "right-to-left", "typed")
ORDER_LABELS = (
    ("random", "Random (seeded)"),
    ("left-to-right", "Left to right"),
    ("right-to-left", "Right to left"),
    ("typed", "Type your own"),
)
# the lesson's takeaway, one line: the page's last word (under the key figure on a projector), the handout's
TAKEAWAY = 'XLNet predicts in a shuffled order through two attention masks; the tokens never move.'
SPEC = Spec(
    text_param(DEFAULT_TEXT, "Text"),
    Param(
        "order",
        "choice",
        "random",
        choices=ORDER_KINDS,
        labels=ORDER_LABELS,
        widget="radio",
        label="Factorization order",
        help="Which shuffle of the positions the tokens are predicted in.",
    ),
    seed_param(label="Seed (random order)", help="The random order is torch.randperm(n) drawn from this seed."),
    Param(
        "typed",
        "str",
        "",
        max_len=300,
        widget="line",
        label="Your order (piece numbers, every one once)",
        help="The piece numbers shown above, each once, separated by spaces: e.g. 4 3 2 1 0 ...",
    ),
    Param(
        "split",
        "choice",
        "k",
        choices=("k", "count"),
        widget="radio",
        label="How many are predicted",
        labels=(("k", "the last 1/K of the order"), ("count", "a fixed count")),
    ),
    Param(
        "k",
        "int",
        DEFAULTS.k,
        lo=1,
        hi=24,
        widget="slider",
        label="K (partial prediction)",
        help=f"ceil(n / K) targets, as when the bundled model was trained (K = {DEFAULTS.k}).",
    ),
    Param("n_targets", "int", DEFAULTS.n_targets, lo=1, hi=DEFAULTS.max_pieces, widget="number", label="Targets"),
    Param(
        "specials",
        "bool",
        True,
        label="`<sep> <cls>` visible to the targets",
        help="On: as in training, the two specials are context everyone sees. Off: a target sees only content "
        "pieces, so the first target may see nothing at all.",
    ),
    Param("top_k", "int", DEFAULTS.top_k, lo=1, hi=DEFAULTS.most_top_k, widget="slider", label="Top-k predictions"),
    Param("stream", "choice", "query", choices=("query", "content"), widget="radio", label="Stream"),
    Param(
        "layer",
        "int",
        0,
        lo=0,
        hi=48,
        widget="select",
        label="Layer",
        help="Layers count from 1; 0 is the last layer, whatever the model's depth.",
    ),
    figure_param(
        (
            ("order", "The factorization order, step by step"),
            ("streams", "The two streams as masks (perm_mask, target_mapping)"),
            ("attention", "The attention the model used, one layer"),
        )
    ),
)


class OrderError(ValueError):
    """A typed factorization order that cannot be used; the message says what is wrong, in words."""


def _listed(values: list) -> str:
    shown = ", ".join(str(v) for v in values[:6])
    return shown + (f" and {len(values) - 6} more" if len(values) > 6 else "")


def parse_order(text: str, n: int) -> list[int]:
    """A typed order of piece numbers, ``"3 1 4 2 0"`` (spaces or commas) -> [3, 1, 4, 2, 0].

    It must list every piece number 0..n-1 exactly once. Raises OrderError naming the first problem:
    empty, not a whole number, out of range, repeated, or missing (a markdown message: what was typed
    appears only through ``text.md``).
    """
    if n <= 0:
        raise OrderError("there are no pieces to order")
    example = " ".join(str(i) for i in reversed(range(min(n, 5))))
    parts = text.replace(",", " ").split()
    if not parts:
        raise OrderError(
            f"the order is empty: type the piece numbers 0 to {n - 1} in the order they are predicted, "
            f"e.g. {txt.md(example)}"
        )
    bad = [p for p in parts if not INT.fullmatch(p)]
    if bad:
        raise OrderError(
            f"{_listed([txt.md(b, 12) for b in bad])} "
            f"{'is not a piece number' if len(bad) == 1 else 'are not piece numbers'}: "
            f"use whole numbers from 0 to {n - 1}, separated by spaces"
        )
    nums = [int(p) for p in parts]
    outside = sorted({v for v in nums if not 0 <= v < n})
    if outside:
        raise OrderError(
            f"{_listed(outside)} {'is' if len(outside) == 1 else 'are'} out of range: the text has {n} "
            f"piece{'s' if n != 1 else ''}, numbered 0 to {n - 1}"
        )
    repeats = sorted(v for v, c in Counter(nums).items() if c > 1)
    if repeats:
        raise OrderError(
            f"{_listed(repeats)} {'appears' if len(repeats) == 1 else 'appear'} more than once: "
            "an order lists each piece exactly once"
        )
    missing = sorted(set(range(n)) - set(nums))
    if missing:
        raise OrderError(
            f"{_listed(missing)} {'is' if len(missing) == 1 else 'are'} missing: an order lists every "
            f"piece from 0 to {n - 1} once (this is not a permutation of the {n} pieces)"
        )
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


def mask_view(pieces, masks: OrderMasks) -> MaskView:
    """What every row of ``masks`` sees, for the order and stream-mask figures (see MaskView)."""
    length, n = masks.perm_mask.shape[-1], len(masks.order)
    targets = set(masks.targets)
    content, query = masks.content_mask, masks.query_mask
    sees = {
        "content": tuple(tuple(visible(content, i)) for i in range(length)),
        "query": tuple(tuple(visible(query, i)) for i in range(length)),
    }
    steps = np.zeros((n, length))
    for step, i in enumerate(masks.order):
        mask = query if i in targets else content
        for j in range(length):
            steps[step, j] = OWN if j == i else HIDDEN if mask[i, j] == 1 else EARLIER if j in targets else CONTEXT
    shown_query = query.numpy().copy()
    for i in range(length):
        if i not in targets:
            shown_query[i] = np.nan
    return MaskView(
        tuple(pieces),
        n,
        tuple(masks.order),
        tuple(masks.targets),
        tuple(context_free_targets(masks)),
        steps,
        sees,
        content.numpy(),
        shown_query,
        masks.perm_mask.numpy(),
        masks.target_mapping.numpy(),
    )


# ----------------------------------------------------------------------------- the sentence and the model


@dataclass(frozen=True)
class Pieces:
    """An XLNet input for one text: content pieces, then ``<sep> <cls>`` (XLNet puts them at the end).

    ids, pieces, spans: (T,) each; spans are character offsets into the text, (0, 0) for specials.
    Piece k of the content sits at position k (no padding for one sequence), so piece numbers are
    positions, counted from 0.
    """

    ids: tuple[int, ...]
    pieces: tuple[str, ...]
    spans: tuple[tuple[int, int], ...]
    n_content: int
    n_before_cap: int  # content pieces before the cap (== n_content when nothing was cut)
    dropped_controls: tuple[str, ...]  # control tokens typed in the text (e.g. "<sep>"), left out
    tokenized: txt.Tokenized  # the whole text as the tokenizer read it, no specials added

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
    ``<unk>`` pieces (characters the vocabulary lacks) stay: they stand for text.
    """
    tk = txt.tokenize(tokenizer, text, add_special_tokens=False)
    kept = [i for i, special in enumerate(tk.special) if not special]  # typed control tokens are special
    content = kept[:max_pieces]
    ids = [tk.ids[i] for i in content] + [tokenizer.sep_token_id, tokenizer.cls_token_id]
    spans = [tk.offsets[i] for i in content] + [(0, 0), (0, 0)]
    n_before_cap = len(kept) + tk.n_full - len(tk.ids)  # pieces past the tokenizer's own limit are content
    return Pieces(
        tuple(ids),
        tuple(tokenizer.convert_ids_to_tokens(ids)),
        tuple(spans),
        len(content),
        n_before_cap,
        tk.typed_special,
        tk,
    )


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


def permutation_forward(model, input_ids, masks: OrderMasks) -> PermutationOutput:
    """Run XLNetLMHeadModel (eager attention) on one sequence with the order's masks. input_ids: (T,)."""
    device, dtype = model.device, model.dtype
    ids = torch.as_tensor(input_ids, dtype=torch.long, device=device)[None]  # (1, T)
    # transformers 5.23 builds XLNet's relative position embedding in float32 whatever the weights are, so a
    # float16/bfloat16 model fails in its first einsum: the forward context autocasts it to the weights' dtype.
    with devices.forward(model):
        out = model(
            input_ids=ids,
            perm_mask=masks.perm_mask[None].to(device, dtype),
            target_mapping=masks.target_mapping[None].to(device, dtype),
            output_attentions=True,
            use_mems=False,
        )
    probs = mlm.probabilities(out.logits[0])  # (P, V)
    content = torch.stack([layer[0][0] for layer in out.attentions]).float().cpu()  # (L, H, T, T)
    query = torch.stack([layer[1][0] for layer in out.attentions]).float().cpu()  # (L, H, T, T)
    return PermutationOutput(probs, content, query)


def attention_check(out: PermutationOutput, masks: OrderMasks) -> list[dict]:
    """Read, not assume: per layer and stream, the largest attention probability on a blocked cell.

    Content stream: every row. Query stream: the target rows that see something; the context-free
    ones (see ``context_free_targets``) are counted apart, with how far their row is from uniform.
    One dict per (layer, stream); layers count from 1.
    """
    length = masks.perm_mask.shape[-1]
    free = context_free_targets(masks)
    seeing = [t for t in masks.targets if t not in free]
    checks = []
    for layer in range(out.content_attentions.shape[0]):
        for stream, att, mask, rows in (
            ("content", out.content_attentions, masks.content_mask, list(range(length))),
            ("query", out.query_attentions, masks.query_mask, seeing),
        ):
            a = att[layer][:, rows]  # (H, R, T)
            blocked = mask[rows].bool()[None].expand_as(a)  # (H, R, T)
            on_blocked = a[blocked]
            uniform = att[layer][:, free] if stream == "query" else att[layer][:, []]  # (H, F, T)
            checks.append(
                {
                    "layer": layer + 1,
                    "stream": stream,
                    "rows": len(rows),
                    "blocked cells": int(blocked[0].sum()),
                    "max prob on a blocked cell": float(on_blocked.max()) if on_blocked.numel() else 0.0,
                    "min prob mass on visible cells": float((a * ~blocked).sum(-1).min()) if a.numel() else 1.0,
                    "context-free rows": uniform.shape[1],
                    "max distance from uniform": float((uniform - 1.0 / length).abs().max())
                    if uniform.numel()
                    else 0.0,
                }
            )
    return checks


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


def masked_lm_all_at_once(model, tokenizer, text: str, target_spans: list[tuple[int, int]]) -> MaskedLMOutput:
    """Mask, in the masked LM's own tokenization, every piece sharing a character with a target span, all
    at once, and predict each from the unmasked rest: BERT's independence assumption, on the same words."""
    tk = txt.tokenize(tokenizer, text)  # specials have the span (0, 0): never masked
    ids = torch.tensor(tk.ids)  # (T',)
    cover = overlapping(list(target_spans), list(tk.offsets))
    masked = sorted({j for js in cover for j in js})
    corrupted = mlm.with_masks(ids[None], masked, tokenizer.mask_token_id)  # (1, T')
    probs = mlm.probabilities_at(model, {"input_ids": corrupted.to(model.device)}, masked)  # (M, V)
    actual = probs[torch.arange(len(masked)), ids[masked]].tolist() if masked else []
    index = {j: m for m, j in enumerate(masked)}
    return MaskedLMOutput(list(tk.pieces), masked, probs, [[index[j] for j in js] for js in cover], actual)


# ----------------------------------------------------------------------------- the lesson: inputs -> run -> result


@inputs_from(SPEC)
class Inputs:
    """The page's values as the lesson reads them: one field per SPEC parameter (app.core.lesson.inputs_from)."""


@dataclass(frozen=True)
class PermutationSide:
    """XLNet under one order, as plain data (what ``xlnet_side`` caches). Row k is masks.targets[k].

    top: the ``most_top_k`` likeliest pieces per target; actual / rank: the probability of the piece really
    there and its rank (1 = the top guess); checks: ``attention_check``; content / query: (L, T, T) the
    attention probabilities of each stream, mean over the H heads."""

    top: tuple[tuple[tuple[str, float], ...], ...]
    actual: tuple[float, ...]
    rank: tuple[int, ...]
    checks: tuple[dict, ...]
    n_heads: int
    content: np.ndarray
    query: np.ndarray


def xlnet_side(loaded, ids: tuple, order: tuple, n_targets: int, specials_visible: bool) -> PermutationSide:
    """XLNetLMHeadModel (a loaded catalogue "xlnet") under this order's perm_mask and target_mapping: the
    expensive half of the lesson, independent of top-k, stream and layer."""
    masks = masks_from_order(order, n_targets, len(ids), specials_visible)
    out = permutation_forward(loaded.model, ids, masks)
    gold = torch.tensor(ids)[list(masks.targets)]  # (P,)
    actual = out.probs[torch.arange(len(gold)), gold]  # (P,)
    rank = (out.probs > actual[:, None]).sum(-1) + 1  # (P,)
    top = mlm.predictions(out.probs, loaded.tokenizer, DEFAULTS.most_top_k)  # P of them
    return PermutationSide(
        tuple(p.raw for p in top),
        tuple(actual.tolist()),
        tuple(rank.tolist()),
        tuple(attention_check(out, masks)),
        out.content_attentions.shape[1],
        out.content_attentions.mean(1).numpy(),
        out.query_attentions.mean(1).numpy(),
    )


@dataclass(frozen=True)
class MaskedSide:
    """The masked LM on the same characters (what ``masked_lm_side`` caches): see MaskedLMOutput; top holds
    the ``most_top_k`` likeliest pieces per masked piece."""

    pieces: tuple[str, ...]
    masked: tuple[int, ...]
    for_target: tuple[tuple[int, ...], ...]
    actual: tuple[float, ...]
    top: tuple[tuple[tuple[str, float], ...], ...]


def masked_lm_side(loaded, text: str, spans: tuple) -> MaskedSide:
    """A loaded masked LM (catalogue "bert") guessing every piece that overlaps ``spans``, all at once."""
    out = masked_lm_all_at_once(loaded.model, loaded.tokenizer, text, list(spans))
    top = mlm.predictions(out.probs, loaded.tokenizer, DEFAULTS.most_top_k)  # M of them
    return MaskedSide(
        tuple(out.pieces),
        tuple(out.masked),
        tuple(tuple(c) for c in out.for_target),
        tuple(out.actual),
        tuple(p.raw for p in top),
    )


@dataclass(frozen=True)
class Target:
    """One target, in the order of prediction: XLNet's guess and the masked LM's for the same characters.

    context_free: its query row is fully blocked (nothing to see): no guess is given (top empty, actual
    and rank None). mlm_masked: the masked LM's pieces masked for it (empty: none covers these
    characters), each with its top guesses in mlm_top; mlm_actual: the smallest p(actual) among them."""

    position: int
    step: int  # its step in the order, from 0
    piece: str
    sees: int  # positions its query stream may attend to
    context_free: bool
    top: tuple[tuple[str, float], ...]
    actual: float | None
    rank: int | None
    mlm_masked: tuple[str, ...]
    mlm_top: tuple[tuple[tuple[str, float], ...], ...]
    mlm_actual: float | None


@dataclass(frozen=True)
class Result:
    """The lesson for one text and one order, as plain data.

    order_kind: the kind of order used ("left-to-right" when a typed one could not be used, and then
    order_note says why). layer: the layer shown, 0 = the last (a link's layer past the model's depth is
    0). attention: (T, T) that layer's attention in ``stream``, mean over heads, with its (T, T) mask
    (1 = blocked) and the rows the stream computes."""

    pieces: Pieces
    masks: OrderMasks
    order_kind: str
    order_note: Note | None
    n_targets: int
    free: tuple[int, ...]
    predictions: tuple[Target, ...]  # XLNet's guesses and the masked LM's, one target at a time
    n_mlm_masked: int
    checks: tuple[dict, ...]
    n_layers: int
    n_heads: int
    layer: int
    stream: str
    attention: np.ndarray
    attention_mask: np.ndarray
    attention_rows: tuple[int, ...]
    xlnet: str  # which models produced this (``Loaded.shown_as``) and their labels
    xlnet_label: str
    mlm: str
    mlm_label: str
    notes: tuple[Note, ...]
    view: MaskView  # the order and the masks as the figures draw them (mask_view)

    @property
    def worst_blocked(self) -> float:
        """The largest attention probability on any blocked cell, any layer and stream: 0 when the masks held."""
        return max(c["max prob on a blocked cell"] for c in self.checks)

    @property
    def least_visible_mass(self) -> float:
        return min(c["min prob mass on visible cells"] for c in self.checks)

    @property
    def query_rows(self) -> int:
        """Target rows of the query stream that see something (the checked ones)."""
        return next(c["rows"] for c in self.checks if c["stream"] == "query")

    @property
    def uniform_distance(self) -> float:
        """How far the context-free rows are from uniform (0 when there are none)."""
        return max(c["max distance from uniform"] for c in self.checks if c["stream"] == "query")


def _text_notes(pieces: Pieces, tokenizer, text: str, who: str) -> list[Note]:
    """Notes about the text, naming the real cause: control tokens typed in it (left out), the cap on pieces,
    and pieces the vocabulary lacks (with the characters they stand for)."""
    notes = []
    if pieces.dropped_controls:
        typed = list(dict.fromkeys(pieces.dropped_controls))
        notes.append(
            Note(
                f"Your text types {', '.join(txt.md(t) for t in typed)}: {who}'s tokenizer reads "
                + ("it as its own control token" if len(typed) == 1 else "them as its own control tokens")
                + ", not as words. Left out here, so the only specials are the `<sep> <cls>` that XLNet "
                "appends at the end."
            )
        )
    if pieces.capped:
        notes.append(
            Note(
                f"The text has {pieces.n_before_cap} pieces; this lesson keeps the first {pieces.n_content} "
                f"so that every mask stays readable (the masked LM below reads the same first "
                f"{pieces.kept_chars} characters)."
            )
        )
    unknown_only = replace(pieces.tokenized, typed_special=())  # the typed ones are said above
    notes += [Note(n) for n in txt.input_notes(unknown_only, tokenizer, text, who)]
    return notes


def choose_order(inputs: Inputs, n: int) -> tuple[list[int], str, Note | None]:
    """(the order, its kind, a note when the typed order could not be used and left to right stands in)."""
    try:
        return make_order(inputs.order, n, inputs.seed, inputs.typed), inputs.order, None
    except OrderError as e:
        if inputs.typed.strip():
            note = Note(f"Your order can't be used: {e}. Showing left to right instead.", "warning")
        else:
            note = Note(f"Type your order above: {e}. Showing left to right until then.")
        return make_order("left-to-right", n), "left-to-right", note


def run(models: dict, inputs: Inputs, cache=direct) -> Result:
    """Pieces -> an order -> its masks -> XLNet under them, and the masked LM on the same characters.

    The two forward passes (``xlnet_side``, ``masked_lm_side``) go through ``cache``: top-k, the stream and
    the layer shown only pick from their results."""
    xl, bert = models["xlnet"], models["bert"]
    tok = xl.tokenizer
    txt.require_text(inputs.text, DEFAULT_TEXT)
    pieces = xlnet_pieces(tok, inputs.text)
    notes = _text_notes(pieces, tok, inputs.text, xl.variant.label)
    n = pieces.n_content
    if n == 0:
        raise Stop(
            "The text has no pieces the model can use (only control tokens such as "
            f"{txt.md(tok.sep_token)}): type a sentence."
        )
    order, kind, order_note = choose_order(inputs, n)
    if inputs.split == "k":
        n_targets = n_targets_for(n, k=inputs.k)
    else:
        n_targets = n_targets_for(n, count=inputs.n_targets)
        if inputs.n_targets > n:
            notes.append(
                Note(f"The text has only {n} pieces, so {n} are predicted (you asked for {inputs.n_targets}).")
            )
    masks = masks_from_order(order, n_targets, len(pieces.ids), bool(inputs.specials))
    free = context_free_targets(masks)

    side = cache(xlnet_side, xl, pieces.ids, tuple(order), n_targets, bool(inputs.specials))
    spans = tuple(pieces.spans[t] for t in masks.targets)
    mside = cache(masked_lm_side, bert, inputs.text[: pieces.kept_chars], spans)

    top_k = max(1, min(int(inputs.top_k), DEFAULTS.most_top_k))
    predictions = []
    for k, t in enumerate(masks.targets):
        cover = mside.for_target[k]
        is_free = t in free
        predictions.append(
            Target(
                position=t,
                step=order.index(t),
                piece=pieces.pieces[t],
                sees=len(visible(masks.query_mask, t)),
                context_free=is_free,
                top=() if is_free else side.top[k][:top_k],
                actual=None if is_free else side.actual[k],
                rank=None if is_free else side.rank[k],
                mlm_masked=tuple(mside.pieces[mside.masked[m]] for m in cover),
                mlm_top=tuple(mside.top[m][:top_k] for m in cover),
                mlm_actual=min(mside.actual[m] for m in cover) if cover else None,
            )
        )

    n_layers = side.content.shape[0]
    layer = inputs.layer
    if layer > n_layers:
        notes.append(
            Note(f"{xl.variant.label} has {n_layers} layers; showing the last one (the link asked for layer {layer}).")
        )
        layer = 0
    index = (layer or n_layers) - 1
    stream = inputs.stream
    rows = tuple(masks.targets) if stream == "query" else tuple(range(len(pieces.ids)))
    mask = masks.query_mask if stream == "query" else masks.content_mask
    return Result(
        pieces,
        masks,
        kind,
        order_note,
        n_targets,
        tuple(free),
        tuple(predictions),
        len(mside.masked),
        side.checks,
        n_layers,
        side.n_heads,
        layer,
        stream,
        (side.query if stream == "query" else side.content)[index],
        mask.numpy(),
        rows,
        xl.shown_as,
        xl.variant.label,
        bert.shown_as,
        bert.variant.label,
        tuple(notes),
        view=mask_view(pieces.pieces, masks),
    )


# ----------------------------------------------------------------------------- ask the class


def question(result: Result):
    """ "In this factorization order, which tokens may position k see?": the middle target of the order, every
    content piece to tap; the answer is its query stream's row of ``perm_mask`` (0: may attend), computed, not
    written: the pieces that come before it in the order."""
    from app.classroom.question import Question, reads, unique_labels, window

    masks, n = result.masks, result.pieces.n_content
    if not masks.targets or n < 2:
        return None
    visible = {t: [j for j in range(n) if float(masks.perm_mask[t][j]) == 0.0] for t in masks.targets}
    target = min(masks.targets, key=lambda t: (abs(len(visible[t]) - n / 2), t))  # sees about half: not obvious
    shown = list(window(n, target))
    labels = dict(zip(shown, unique_labels(reads(result.pieces.pieces[j]) or result.pieces.pieces[j] for j in shown)))
    sees = tuple(labels[j] for j in visible[target] if j in labels)
    order = " → ".join(labels[j] for j in masks.order if j in labels)
    return Question(
        "xlnet",
        f"Order: {order}. Which tokens may position {target} ({labels[target]}) see when it is predicted?",
        "multi",
        (*labels.values(), "none"),
        sees or ("none",),
        (),
        f"{labels[target]} is step {list(masks.order).index(target) + 1} of {len(masks.order)}: its query "
        f"stream sees the {len(visible[target])} pieces before it in the order, never itself.",
    )


# ----------------------------------------------------------------------------- the takeaway


ORDER_WORDS = {"left-to-right": "first to last", "right-to-left": "last to first"}  # a handout's one line: ≤ 110


def takeaway(r: Result) -> str:
    """The slide's takeaway, computed from this view's order: how many pieces it predicts and in which order
    (``TAKEAWAY`` is the general version)."""
    v = r.view
    how = ORDER_WORDS.get(r.order_kind, "in a shuffled order")
    return (
        f"XLNet predicts {len(v.targets)} of {txt.count(len(v.order), 'piece')}, {how}, through two "
        "attention masks; the tokens never move."
    )
