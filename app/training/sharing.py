"""Cross-layer parameter sharing in an ALBERT encoder, every mode of the ALBERT paper's Table 4:

- ``none``: every layer its own weights (``num_hidden_groups = L``);
- ``all``: one layer's weights used by all L (``num_hidden_groups = 1``, transformers' own option — ALBERT);
- ``attention``: L groups, then every layer's attention sublayer (query, key, value, output projection
  and its LayerNorm: ``AlbertAttention``) *is* layer 0's module;
- ``ffn``: L groups, then every layer's feed-forward sublayer (``ffn``, ``ffn_output`` and
  ``full_layer_layer_norm``) is layer 0's.

transformers has no switch for the last two, so the modules are tied here by assignment: the same
module object sits in every layer, ``model.parameters()`` yields its tensors once, and the optimizer
updates them once with the gradient summed over the layers that use them. Sharing changes parameters,
not arithmetic: every token still passes through L layers. Counts match app/lessons/albert_params.py's (a test).
"""

from __future__ import annotations

from transformers import AlbertConfig

SHARING_MODES = ("none", "all", "attention", "ffn")
FFN_PARTS = ("ffn", "ffn_output", "full_layer_layer_norm")


def groups_for(sharing: str, num_hidden_layers: int) -> int:
    """``num_hidden_groups`` of a sharing mode: 1 for ``all``, else one group per layer."""
    if sharing not in SHARING_MODES:
        raise ValueError(f"unknown sharing {sharing!r}; expected one of {', '.join(SHARING_MODES)}")
    return 1 if sharing == "all" else num_hidden_layers


def tie_layers(albert_model, sharing: str) -> None:
    """Make layers 1..L-1 of an ``AlbertModel`` use layer 0's attention (``attention``) or feed-forward
    (``ffn``) modules. ``none`` and ``all`` need nothing here (their config says it)."""
    groups = albert_model.encoder.albert_layer_groups
    if sharing in ("none", "all"):
        return
    if len(groups) != albert_model.config.num_hidden_layers or albert_model.config.inner_group_num != 1:
        raise ValueError("attention/FFN sharing needs one group of one layer per layer")
    first = groups[0].albert_layers[0]
    for group in groups[1:]:
        layer = group.albert_layers[0]
        if sharing == "attention":
            layer.attention = first.attention
        elif sharing == "ffn":
            for part in FFN_PARTS:
                setattr(layer, part, getattr(first, part))
        else:
            raise ValueError(f"unknown sharing {sharing!r}")


def albert_config(
    vocab_size: int,
    hidden_size: int,
    embedding_size: int,
    num_hidden_layers: int,
    num_attention_heads: int,
    intermediate_size: int,
    sharing: str,
    max_position_embeddings: int,
    pad_token_id: int = 0,
) -> AlbertConfig:
    """An ALBERT config for a sharing mode, without dropout (ALBERT v2)."""
    return AlbertConfig(
        vocab_size=vocab_size,
        embedding_size=embedding_size,
        hidden_size=hidden_size,
        num_hidden_layers=num_hidden_layers,
        num_hidden_groups=groups_for(sharing, num_hidden_layers),
        inner_group_num=1,
        num_attention_heads=num_attention_heads,
        intermediate_size=intermediate_size,
        max_position_embeddings=max_position_embeddings,
        hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
        classifier_dropout_prob=0.0,
        pad_token_id=pad_token_id,
    )
