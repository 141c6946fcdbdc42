"""What one forward pass of a Transformer encoder costs: the multiply-accumulates of its matrix products, by family.

The ALBERT parameters lesson (app/lessons/albert_params.py) shows the compute that sharing does not save;
the experiments (app/training/flops.py) draw their curves against the same count. Plain arithmetic: no
torch, no streamlit.
"""

from __future__ import annotations


def macs_per_sequence(family: str, cfg: dict, seq_len: int) -> int:
    """Multiply-accumulates of the matrix products in one forward pass of the base model over seq_len
    tokens (what torch's FlopCounterMode counts, halved): linears, QKᵀ and attention·V. Layer norms,
    softmax, activations and embedding look-ups are left out (a few percent).

    family: "bert" (BERT, RoBERTa, DistilBERT, ELECTRA), "albert", "xlnet", "deberta", "modernbert".
    cfg keys: hidden_size H, intermediate_size I, num_hidden_layers L, and per family embedding_size E,
    pooler (bool), position_buckets / max_position_embeddings (DeBERTa). Sharing changes none of it.
    """
    t, h, i, layers = seq_len, cfg["hidden_size"], cfg["intermediate_size"], cfg["num_hidden_layers"]
    attention_scores = 2 * t * t * h  # QKᵀ and attention·V, all heads together
    if family in ("bert", "albert"):
        per_layer = 4 * t * h * h + 2 * t * h * i + attention_scores
        e = cfg.get("embedding_size", h)
        projection = t * e * h if (family == "albert" or e != h) else 0  # ALBERT always has the E→H linear
        pooler = h * h if cfg.get("pooler", True) else 0  # once per sequence, on [CLS]
        return layers * per_layer + projection + pooler
    if family == "modernbert":  # GLU feed-forward (H→2I, I→H), no pooler; local attention computed densely
        return layers * (4 * t * h * h + 3 * t * h * i + attention_scores)
    if family == "xlnet":  # q,k,v,o; the relative-position projection of 2T positions; content and position scores
        return layers * (4 * t * h * h + 2 * t * h * h + 2 * t * h * i + 4 * t * t * h)
    if family == "deberta":  # plus key/query projections of 2k relative embeddings and c2p, p2c scores
        span = cfg.get("position_buckets", 0) or cfg.get("max_position_embeddings", 512)
        rel = 2 * span
        return layers * (4 * t * h * h + 2 * t * h * i + attention_scores + 2 * rel * h * h + 2 * t * rel * h)
    raise ValueError(f"unknown family {family!r}")


def flops_per_token(family: str, cfg: dict, seq_len: int) -> float:
    """FLOPs (2 per multiply-accumulate) per token of a forward pass over seq_len tokens."""
    return 2 * macs_per_sequence(family, cfg, seq_len) / seq_len
