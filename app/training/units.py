"""What one masked-LM target is, for a whole batch: a token (BERT), a whole word (BERT-wwm) or a span
of whole words (SpanBERT) — and held-out masked-LM quality measured under any of the three.

The corruption rules themselves live in app/masking.py (one sentence at a time, as the masking lab
shows them); this module applies them row by row to a batch of packed WordPiece sequences:

- ``token``: every maskable piece is a target with probability ``mlm_probability`` (``mlm_batch``);
- ``word``: every word is a target with that probability, and then all of its pieces are
  (``select_word_targets``), the replacement split decided per piece (``corrupt``);
- ``span``: spans of whole words, lengths ~ Geometric(``span_p``) clipped at ``max_span``, until
  ``mlm_probability`` of the tokens are targets (``place_spans``); the split is decided per span
  (``corrupt_spans``), as SpanBERT does.

A *word* here is a WordPiece piece that does not start with ``##`` plus the ``##`` pieces after it.
"""

from __future__ import annotations

from typing import Callable

import torch

from app.masking import MaskingConfig, corrupt, corrupt_spans, mlm_batch, place_spans, select_word_targets

UNITS = ("token", "word", "span")


def word_starts(tokenizer) -> torch.Tensor:
    """(V,) bool: True where a vocabulary piece starts a word (WordPiece: it does not begin with ``##``)."""
    starts = torch.ones(len(tokenizer), dtype=torch.bool)
    for piece, i in tokenizer.get_vocab().items():
        if piece.startswith("##") and i < len(starts):
            starts[i] = False
    return starts


def word_index(input_ids: torch.Tensor, maskable: torch.Tensor, starts: torch.Tensor) -> torch.Tensor:
    """(N, T) long: per position the index (0, 1, ...) of the word it belongs to within its row, -1 where
    the position is not maskable (special tokens, padding). A ``##`` piece right after a non-maskable
    position (a sentence cut by packing) starts a word of its own."""
    prev = torch.zeros_like(maskable)
    prev[:, 1:] = maskable[:, :-1]
    begins = maskable & (starts[input_ids] | ~prev)  # (N, T)
    idx = torch.cumsum(begins.long(), dim=1) - 1
    return torch.where(maskable, idx, torch.full_like(idx, -1))


def _as_word_ids(row: torch.Tensor) -> list[int | None]:
    """A row of word_index as the list ``tokenizer(...).word_ids()`` returns: None where not a word."""
    return [None if w < 0 else w for w in row.tolist()]


def unit_targets(
    unit: str, maskable: torch.Tensor, words: torch.Tensor, cfg: MaskingConfig, gen: torch.Generator
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """(targets (N, T) bool, span ids (N, T) long or None) for one batch. Span ids (span masking only)
    number the spans of a row, -1 where not a target."""
    if unit == "word":
        rows = [select_word_targets(_as_word_ids(w), cfg.mlm_probability, gen) for w in words]
        return torch.stack(rows) & maskable, None
    if unit == "span":
        spans = torch.stack(
            [place_spans(_as_word_ids(w), cfg.mlm_probability, cfg.span_p, cfg.max_span, gen)[0] for w in words]
        )  # (N, T)
        return spans >= 0, spans
    raise ValueError(f"unknown unit {unit!r}; expected one of {', '.join(UNITS)}")


def unit_batch(
    unit: str,
    input_ids: torch.Tensor,
    maskable: torch.Tensor,
    words: torch.Tensor | None,
    mask_token_id: int,
    random_ids: torch.Tensor,
    cfg: MaskingConfig,
    gen: torch.Generator,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Masked-LM corruption of a batch with targets chosen by ``unit``: (corrupted ids (N, T), labels
    (N, T)), labels the original id at targets and -100 elsewhere. ``words`` is :func:`word_index`
    (unused for ``token``)."""
    if unit == "token":
        return mlm_batch(input_ids, maskable, mask_token_id, random_ids, cfg, gen)
    targets, spans = unit_targets(unit, maskable, words, cfg, gen)
    if spans is None:
        corrupted, _ = corrupt(input_ids, targets, mask_token_id, random_ids, cfg, gen)
    else:
        corrupted = torch.stack(
            [corrupt_spans(ids, s, mask_token_id, random_ids, cfg, gen)[0] for ids, s in zip(input_ids, spans)]
        )
    labels = torch.where(targets, input_ids, torch.full_like(input_ids, -100))
    return corrupted, labels


def masked_lm_eval(
    logits_at: Callable[[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor | None], torch.Tensor],
    seqs,
    words: torch.Tensor | None,
    mask_token_id: int,
    unit: str = "token",
    mlm_probability: float = 0.15,
    batch_size: int = 128,
    seed: int = 1234,
    device: str = "cpu",
) -> dict[str, float]:
    """Held-out masked-LM quality with targets chosen by ``unit`` from a fixed seed, every target shown
    as the mask token (no 10/10 noise), so that every model is scored on exactly the same blanks.

    ``logits_at(corrupted_ids, attention_mask, targets, token_type_ids)`` returns (n_targets, V) logits in
    the order of ``targets.nonzero()``; token_type_ids is None when ``seqs`` has no segments.
    Returns loss (mean cross-entropy per target, nats), top1, top5 and n_targets.
    """
    gen = torch.Generator().manual_seed(seed)
    cfg = MaskingConfig(mlm_probability=mlm_probability, mask_fraction=1.0, random_fraction=0.0)
    loss = hits1 = hits5 = total = 0.0
    for start in range(0, len(seqs), batch_size):
        part = slice(start, start + batch_size)
        ids, att = seqs.input_ids[part], seqs.attention_mask[part]
        w = None if words is None else words[part]
        corrupted, labels = unit_batch(unit, ids, seqs.maskable[part], w, mask_token_id, torch.tensor([0]), cfg, gen)
        targets = labels != -100
        if not targets.any():
            continue
        types = None if seqs.token_type_ids is None else seqs.token_type_ids[part].to(device)
        logits = logits_at(corrupted.to(device), att.to(device), targets.to(device), types).float().cpu()  # (n, V)
        gold = labels[targets]  # (n,)
        loss += float(torch.nn.functional.cross_entropy(logits, gold, reduction="sum"))
        top5 = logits.topk(min(5, logits.shape[-1]), dim=-1).indices
        hits1 += int((top5[:, 0] == gold).sum())
        hits5 += int((top5 == gold[:, None]).any(-1).sum())
        total += int(gold.numel())
    n = max(total, 1)
    return {"loss": loss / n, "top1": hits1 / n, "top5": hits5 / n, "n_targets": int(total)}
