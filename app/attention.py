"""Attention in every layer: run any catalogue variant with ``output_attentions=True``, and aggregate.

``model(**inputs, output_attentions=True).attentions`` is a tuple with one tensor per layer, each
``(batch, heads, T, T)``; row i of a head's matrix says how token i (the query) spreads its attention over
all tokens (the keys): non-negative, summing to 1. The models are loaded with eager attention
(transformers 5's sdpa returns none).

Two ways to see many heads and layers at once:

- the **mean** over heads (one map per layer) or over heads and layers (one map);
- **attention rollout** (Abnar & Zuidema 2020, "Quantifying Attention Flow in Transformers"): each layer
  also passes its input on through the residual connection, so its effective mixing is
  ``Â = 0.5·A + 0.5·I`` (A = the mean over heads), rows renormalised; token-to-token flow through layers
  1..L is the product ``Â_L ··· Â_2 · Â_1``. A product of row-stochastic matrices is row-stochastic, so
  rollout rows sum to 1 like attention rows.

Family notes (the page says them): ALBERT's layers share one set of weights, so its layers differ only in
their input. XLNet has two streams; without ``target_mapping`` XLNetLMHeadModel runs only the content
stream (every token sees every token, itself included), and its attentions come back as
``(batch, heads, T, T)`` like the others (transformers permutes them from XLNet's ``ijbn`` layout).
"""

from __future__ import annotations

from app import preload  # noqa: F401  (first: the heavy imports, once, in one thread)

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class AttentionDefaults:
    max_tokens: int = 40  # the cap on tokens (specials included) a view shows
    min_tokens: int = 8
    most_tokens: int = 128
    residual: float = 0.5  # rollout's weight on the identity: Â = (1 - residual)·A + residual·I


DEFAULTS = AttentionDefaults()


# ----------------------------------------------------------------------------- tokens in


@dataclass(frozen=True)
class Encoded:
    input_ids: list[int]
    token_type_ids: list[int] | None  # None: the model takes no token types
    tokens: list[str]
    sentence_b_start: int | None  # the first position of segment B; None for a single sentence
    template: str  # the pair/single format, e.g. "[CLS] A [SEP] B [SEP]"
    n_full: int  # tokens the input has without the cap
    cap: int  # the cap that applied (the asked cap, or the model's own limit if lower)
    n_unknown: int  # tokens the vocabulary does not know (the tokenizer's unk token)
    filled_token_types: bool  # token_type_ids were built here because the tokenizer gave none

    @property
    def truncated(self) -> bool:
        return self.n_full > len(self.input_ids)


def uses_token_types(model) -> bool:
    """Whether the model reads ``token_type_ids`` (a segment embedding or XLNet's segment encoding).

    BERT, ALBERT and ELECTRA have ``type_vocab_size = 2``; XLNet compares segments in every layer;
    RoBERTa (``type_vocab_size = 1``) and DistilBERT (no segment embedding) do not.
    """
    config = model.config
    if config.model_type == "xlnet":
        return True
    return int(getattr(config, "type_vocab_size", 0) or 0) > 1


def model_limit(tokenizer, model) -> int | None:
    """The most tokens the model takes (its positions), or None when it has no fixed limit."""
    limits = []
    tok_max = getattr(tokenizer, "model_max_length", None)
    if isinstance(tok_max, int) and 0 < tok_max < 100_000:
        limits.append(tok_max)
    pos = getattr(model.config, "max_position_embeddings", None)
    if isinstance(pos, int) and pos > 0:
        limits.append(pos - (2 if model.config.model_type in ("roberta", "xlm-roberta") else 0))
    return min(limits) if limits else None


def _template(tokens: list[str], sequence_ids: list[int | None]) -> str:
    """'[CLS] A [SEP] B [SEP]': special tokens as they are, each run of sentence tokens as A or B."""
    out: list[str] = []
    for tok, sid in zip(tokens, sequence_ids):
        word = tok if sid is None else "AB"[sid]
        if sid is None or not out or out[-1] != word:
            out.append(word)
    return " ".join(out)


def encode(tokenizer, model, text_a: str, text_b: str = "", max_tokens: int = DEFAULTS.max_tokens) -> Encoded:
    """Tokenize sentence A (and B, if not blank) with the tokenizer's own single/pair format, capped.

    The cap counts special tokens; a pair is cut from its longer side first (``longest_first``). When the
    model reads token types and the tokenizer gives none (a saved tokenizer that dropped them), they are
    built from its segments in the family's convention: 0 for A and its separator, 1 for B and its
    separator, and 2 for XLNet's trailing ``<cls>``.
    Raises ValueError when sentence A is blank.
    """
    if not text_a or not text_a.strip():
        raise ValueError("Sentence A is empty.")
    pair = (text_a, text_b) if text_b and text_b.strip() else (text_a,)
    limit = model_limit(tokenizer, model)
    cap = max(DEFAULTS.min_tokens, int(max_tokens))
    cap = min(cap, limit) if limit else cap
    n_full = len(tokenizer(*pair, add_special_tokens=True, verbose=False)["input_ids"])
    enc = tokenizer(*pair, truncation="longest_first" if len(pair) == 2 else True, max_length=cap)
    ids = list(enc["input_ids"])
    tokens = tokenizer.convert_ids_to_tokens(ids)
    try:
        sequence_ids = list(enc.sequence_ids(0))
    except Exception:  # a slow tokenizer: no segment map
        sequence_ids = [None if i in tokenizer.all_special_ids else 0 for i in ids]
    b_start = next((i for i, s in enumerate(sequence_ids) if s == 1), None)

    token_type_ids, filled = None, False
    if uses_token_types(model):
        if "token_type_ids" in enc:
            token_type_ids = list(enc["token_type_ids"])
        else:
            filled = True
            token_type_ids = [0] * len(ids) if b_start is None else [0] * b_start + [1] * (len(ids) - b_start)
            if model.config.model_type == "xlnet" and tokenizer.cls_token_id is not None:
                token_type_ids = [2 if i == tokenizer.cls_token_id else t for i, t in zip(ids, token_type_ids)]
    unk = tokenizer.unk_token_id
    return Encoded(
        input_ids=ids,
        token_type_ids=token_type_ids,
        tokens=list(tokens),
        sentence_b_start=b_start,
        template=_template(list(tokens), sequence_ids),
        n_full=n_full,
        cap=cap,
        n_unknown=sum(1 for i in ids if unk is not None and i == unk),
        filled_token_types=filled,
    )


# ----------------------------------------------------------------------------- the forward pass


@dataclass(frozen=True)
class AttentionRun:
    encoded: Encoded
    attentions: np.ndarray  # (layers, heads, T, T) float32; rows (queries) sum to 1

    @property
    def tokens(self) -> list[str]:
        return self.encoded.tokens

    @property
    def n_layers(self) -> int:
        return self.attentions.shape[0]

    @property
    def n_heads(self) -> int:
        return self.attentions.shape[1]


def stack_attentions(attentions) -> np.ndarray:
    """transformers' per-layer tuple of (1, heads, T, T) tensors -> one (layers, heads, T, T) float32 array."""
    if not attentions or any(a is None for a in attentions):
        raise RuntimeError("the model returned no attentions: load it with attn_implementation='eager'")
    import torch

    stacked = torch.stack([a[0] for a in attentions])  # (layers, heads, T, T)
    return stacked.detach().to(device="cpu", dtype=torch.float32).numpy()


def run(model, tokenizer, text_a: str, text_b: str = "", max_tokens: int = DEFAULTS.max_tokens) -> AttentionRun:
    """Every layer's and head's attention for sentence A (and B): (layers, heads, T, T).

    For XLNet this is the content stream (no ``target_mapping`` is given, so there is no query stream).
    """
    import torch

    enc = encode(tokenizer, model, text_a, text_b, max_tokens)
    device = next(model.parameters()).device
    inputs = {"input_ids": torch.tensor([enc.input_ids], device=device)}
    inputs["attention_mask"] = torch.ones_like(inputs["input_ids"])
    if enc.token_type_ids is not None:
        inputs["token_type_ids"] = torch.tensor([enc.token_type_ids], device=device)
    with torch.no_grad():
        out = model(**inputs, output_attentions=True)
    return AttentionRun(enc, stack_attentions(out.attentions))


# ----------------------------------------------------------------------------- aggregation


def _check(att: np.ndarray) -> np.ndarray:
    att = np.asarray(att, dtype=np.float64)
    if att.ndim != 4 or att.shape[-1] != att.shape[-2]:
        raise ValueError(f"expected attentions of shape (layers, heads, T, T), got {att.shape}")
    return att


def mean_over_heads(att: np.ndarray) -> np.ndarray:
    """(layers, heads, T, T) -> (layers, T, T): each layer's heads averaged. Rows still sum to 1."""
    return _check(att).mean(axis=1)


def mean_attention(att: np.ndarray) -> np.ndarray:
    """(layers, heads, T, T) -> (T, T): the mean over every layer and head. Rows sum to 1."""
    return _check(att).mean(axis=(0, 1))


def residual_attention(layer_att: np.ndarray, residual: float = DEFAULTS.residual) -> np.ndarray:
    """(T, T) -> (T, T): ``(1 - residual)·A + residual·I`` with rows renormalised to sum to 1."""
    length = layer_att.shape[-1]
    mixed = (1.0 - residual) * layer_att + residual * np.eye(length)
    return mixed / mixed.sum(axis=-1, keepdims=True)


def rollout(att: np.ndarray, residual: float = DEFAULTS.residual, upto: int | None = None) -> np.ndarray:
    """Attention rollout through layers 1..``upto`` (default: all): (layers, heads, T, T) -> (T, T).

    rollout[i, j] = how much of token j's input reaches position i after those layers, following every
    path through the (mean-over-heads, residual-adjusted) attention graphs: ``Â_L ··· Â_2 · Â_1``.
    """
    per_layer = mean_over_heads(att)  # (layers, T, T)
    upto = per_layer.shape[0] if upto is None else upto
    if not 1 <= upto <= per_layer.shape[0]:
        raise ValueError(f"upto must be from 1 to {per_layer.shape[0]}")
    result = np.eye(per_layer.shape[-1])
    for layer_att in per_layer[:upto]:
        result = residual_attention(layer_att, residual) @ result  # (T, T): this layer after the ones below
    return result
