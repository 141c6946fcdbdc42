"""ModernBERT at toy scale: rotary positions, GeGLU, pre-norm without biases, alternating local and global
attention, sequences packed across documents; dynamic masked LM.

Warner et al. (2024): positions enter as rotations of queries and keys (RoPE; θ = 160,000 in global
layers, 10,000 in local ones), every third layer attends globally and the others within a sliding
window, the feed-forward is gated (GeGLU), LayerNorms and linear layers have no bias, and training
packs unpadded sequences. Conventions follow answerdotai/ModernBERT-base: a cased byte-level BPE
with ``[UNK] [CLS] [SEP] [PAD] [MASK]`` at the end of the vocabulary, ``[CLS] x [SEP]``, no token types.
Here the window is 64 tokens (32 each side) so that the bundled model's local layers are visibly
local on a 128-token input; ModernBERT-base's is 128 of 8,192.
"""

from __future__ import annotations

from dataclasses import dataclass
from transformers import ModernBertConfig, ModernBertForMaskedLM

from app.training import common, data, recipe

LOOP = common.LoopConfig(steps=4000)


@dataclass(frozen=True)
class Shape(recipe.Shape):
    num_hidden_layers: int = 4  # layers 0 and 3 global, 1 and 2 local
    intermediate_size: int = 512  # GeGLU: 3·H·I = 8·H² parameters, the same as BERT's 2·H·4H feed-forward
    global_attn_every_n_layers: int = 3
    local_attention: int = 64
    max_position_embeddings: int = 512  # RoPE has no position table; trained on 128-token sequences


def modernbert_config(tok, shape: Shape = Shape()) -> ModernBertConfig:
    return ModernBertConfig(
        vocab_size=len(tok),
        hidden_size=shape.hidden_size,
        intermediate_size=shape.intermediate_size,
        num_hidden_layers=shape.num_hidden_layers,
        num_attention_heads=shape.num_attention_heads,
        global_attn_every_n_layers=shape.global_attn_every_n_layers,
        local_attention=shape.local_attention,
        max_position_embeddings=shape.max_position_embeddings,
        pad_token_id=tok.pad_token_id,
        cls_token_id=tok.cls_token_id,
        sep_token_id=tok.sep_token_id,
        bos_token_id=tok.cls_token_id,
        eos_token_id=tok.sep_token_id,
    )


def masked_lm_logits(model: ModernBertForMaskedLM, ids, att, targets):
    h = model.model(input_ids=ids, attention_mask=att).last_hidden_state  # (B, T, H)
    return model.decoder(model.head(h[targets]))  # (n_targets, V)


class ModernBertRecipe(recipe.MaskedLMRecipe):
    name = "modernbert"
    stands_in_for = "answerdotai/ModernBERT-base"
    shape = Shape()
    cross_documents = True
    logits_at = staticmethod(masked_lm_logits)
    notes = (
        f"\nTrained on 128-token sequences; it accepts up to {Shape.max_position_embeddings} (RoPE has no "
        "position table), but positions past 128 were never seen in training.\n"
    )

    def build_tokenizer(self, train_file):
        return data.build_modernbert(train_file, self.shape.vocab_size, self.shape.max_position_embeddings)

    def build_model(self, tok):
        return ModernBertForMaskedLM(modernbert_config(tok, self.shape))

    def describe(self, tok):
        shape = self.shape
        return (
            "masked LM with dynamic masking (15%, 80/10/10), sequences packed across documents; rotary "
            f"positions (θ 160,000 global / 10,000 local), GeGLU feed-forward ({shape.intermediate_size} wide), no "
            f"biases, global attention every {shape.global_attn_every_n_layers} layers "
            f"and a {shape.local_attention}-token "
            f"sliding window in the others; cased byte-level BPE vocabulary of {len(tok)} with `[CLS] [SEP] [MASK]`; "
            f"{shape.num_hidden_layers} layers, hidden {shape.hidden_size}, {shape.num_attention_heads} heads"
        )


run = ModernBertRecipe().run
