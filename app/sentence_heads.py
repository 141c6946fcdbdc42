"""The sentence heads, scored: next-sentence prediction (NSP, BERT's ``cls.seq_relationship``) and sentence-order
prediction (SOP, ALBERT's pooler and ``sop_classifier``, read from the checkpoint file) on pairs ``(A, B)``, and
their accuracy on the NSP vs SOP page's own pool of story pairs. Shared by the lesson
(app/lessons/sentence_order.py), the NSP stand-in's recipe (app/training/bert_nsp.py) and the quality report
(app/training/report.py), so all three score a head the same way.

Index 0 of a head means "B follows A", index 1 "it does not" (NotNext for NSP, swapped for SOP); a head is right on
a pair when P(it does not) > 0.5 matches the pair's label (app/sentence_pairs.py makes the pairs).
"""

from __future__ import annotations

from app.core import preload  # noqa: F401  (first: the router calls preload.load() before a lesson runs)

preload.load()  # the heavy imports, once, in one thread, before this module's own

import json
from pathlib import Path

import torch

from app.models import device as devices
from app.sentence_pairs import TASKS, Pair, generate_pairs, load_stories

MAX_TOKENS = 96  # a pair's tokens, specials included: the NSP stand-in was trained on pairs of at most 96
POOL_PAIRS = 60  # base pairs of the page's pool (each gives an in-order, an other-story and a swapped pair)
POOL_SEED = 0  # the pool is fixed: scored once per model


def _checkpoint_folder(loaded) -> Path | None:
    """The folder the loaded model's weights were read from (bundled folder or hub-cache snapshot)."""
    if loaded.is_bundled:
        return Path(loaded.location)
    from app.models.loading import cached_snapshot

    return cached_snapshot(loaded.variant.hub_id)


SOP_KEYS = (
    "albert.pooler.weight",
    "albert.pooler.bias",
    "sop_classifier.classifier.weight",
    "sop_classifier.classifier.bias",
)


def sop_head_weights(folder: Path | None) -> dict[str, torch.Tensor] | None:
    """ALBERT's pooler and sentence-order classifier, read from the checkpoint's safetensors file(s), in
    float32 on the CPU; None when the checkpoint does not ship them (a masked-LM-only export)."""
    from safetensors import safe_open

    if folder is None:
        return None
    folder = Path(folder)
    index = folder / "model.safetensors.index.json"
    if index.exists():
        where = json.loads(index.read_text())["weight_map"]
        files = {k: folder / where[k] for k in SOP_KEYS if k in where}
    else:
        files = {k: folder / "model.safetensors" for k in SOP_KEYS}
    if len(files) < len(SOP_KEYS) or not all(f.exists() for f in files.values()):
        return None
    out = {}
    for key, f in files.items():
        with safe_open(str(f), framework="pt") as fh:
            if key not in fh.keys():
                return None
            out[key] = fh.get_tensor(key).float()
    return out


def encode_pairs(tokenizer, pairs: tuple[tuple[str, str], ...], max_tokens: int, device) -> dict:
    """``[CLS] A [SEP] B [SEP]`` for every (A, B), padded, cut to ``max_tokens`` (longest side first)."""
    enc = tokenizer(
        [a for a, _ in pairs],
        [b for _, b in pairs],
        padding=True,
        truncation="longest_first",
        max_length=max_tokens,
        return_tensors="pt",
    )
    return {k: enc[k].to(device) for k in ("input_ids", "attention_mask", "token_type_ids") if k in enc}


def in_length_order(inputs: dict, chunk: int, right_padded: bool):
    """A padded batch in chunks of ``chunk`` rows of similar length, longest first, each cut to its longest row
    (only where padding is on the right): (the chunk's row indices, its inputs). The pool's pairs are 53 tokens
    long on average and padded to 87: a forward over the chunks reads 40% fewer positions, and holds less at once."""
    lengths = inputs["attention_mask"].sum(1)
    order = torch.argsort(lengths, descending=True, stable=True)
    for start in range(0, len(order), chunk):
        rows = order[start : start + chunk]
        width = int(lengths[rows].max()) if right_padded else inputs["attention_mask"].shape[1]
        yield rows, {k: v[rows, :width] for k, v in inputs.items()}


def sentence_logits(loaded, pairs: tuple[tuple[str, str], ...], max_tokens: int = MAX_TOKENS):
    """The sentence head's logits for every (A, B): (N, 2) float32 on the CPU, index 0 = B follows A,
    1 = it does not; or None when the checkpoint has no sentence head.

    NSP: ``BertForPreTraining``'s ``seq_relationship_logits``, computed as it computes them (its encoder's pooled
    ``[CLS]``, then ``cls.seq_relationship``) without its masked-LM logits over the vocabulary, which this page
    does not read. SOP: ALBERT's encoder (the loaded masked LM's ``albert``), then the checkpoint's pooler (tanh
    of a dense layer on ``[CLS]``) and ``sop_classifier``, as ``AlbertForPreTraining`` computes ``sop_logits``.
    Pairs go through in chunks of similar length (:func:`in_length_order`)."""
    model = loaded.model
    if hasattr(model, "cls") and hasattr(model.cls, "seq_relationship") and hasattr(model, "bert"):

        def head(x):
            return model.cls.seq_relationship(model.bert(**x).pooler_output).float().cpu()  # (n, 2)
    else:
        weights = sop_head_weights(_checkpoint_folder(loaded))
        if weights is None or not hasattr(model, "albert"):
            return None

        def head(x):
            cls = model.albert(**x).last_hidden_state[:, 0].float().cpu()  # (n, H)
            pooled = torch.tanh(cls @ weights["albert.pooler.weight"].T + weights["albert.pooler.bias"])  # (n, H)
            return pooled @ weights["sop_classifier.classifier.weight"].T + weights["sop_classifier.classifier.bias"]

    inputs = encode_pairs(loaded.tokenizer, pairs, max_tokens, model.device)
    logits = torch.empty(len(pairs), 2)
    with devices.forward(model):
        for rows, chunk in in_length_order(inputs, CHUNK, loaded.tokenizer.padding_side == "right"):
            logits[rows.cpu()] = head(chunk)
    return logits


#: pairs a forward reads at once (:func:`in_length_order`)
CHUNK = 32


def head_probs(loaded, pairs: tuple[tuple[str, str], ...]) -> tuple[tuple[float, float], ...] | None:
    """softmax of :func:`sentence_logits`: (P(B follows A), P(it does not)) per pair, or None without a head.
    The expensive step: cached by the page per model and pairs."""
    logits = sentence_logits(loaded, pairs)
    if logits is None:
        return None
    return tuple((float(p0), float(p1)) for p0, p1 in torch.softmax(logits, dim=-1).tolist())


def page_pool(pairs: int = POOL_PAIRS) -> tuple[Pair, ...]:
    """The page's pool: its first ``pairs`` base pairs of the held-out stories, each in its three versions."""
    return generate_pairs(load_stories(), POOL_PAIRS, POOL_SEED)[: 3 * pairs]  # (3 · pairs,)


def task_accuracy(sample, p_not) -> dict[str, float]:
    """A head's accuracy on each task's pairs of ``sample`` (``p_not[i]``: its P(B does not follow A) for
    ``sample[i]``): the share where P > 0.5 matches the label, over the kinds of pair the task tells apart."""
    out = {}
    for task, kinds in TASKS.items():
        hits = [(q > 0.5) == bool(p.label) for p, q in zip(sample, p_not) if p.kind in kinds]
        out[task] = sum(hits) / len(hits) if hits else float("nan")
    return out


def pool_accuracy(loaded) -> dict[str, float] | None:
    """A head's accuracy on each task of the page's whole pool, scored as the page scores it (:func:`head_probs`):
    ``{"nsp": ..., "sop": ...}``; None when the model has no sentence head. ``loaded``: a loaded model (``model``,
    ``tokenizer``; an ALBERT one also says where its checkpoint is, for the SOP head)."""
    sample = page_pool()
    probs = head_probs(loaded, tuple((p.a, p.b) for p in sample))
    return None if probs is None else task_accuracy(sample, [p1 for _, p1 in probs])
