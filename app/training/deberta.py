"""DeBERTa at toy scale: disentangled attention with relative positions only, dynamic masked LM.

He et al. (2020): every token carries two vectors, its content and its *relative* position to each
other token; the attention score of i -> j is the sum of content->content, content->position and
position->content terms, scaled by 1/sqrt(3d). No absolute position enters the encoder
(``position_biased_input=False``); the paper's *enhanced mask decoder* adds absolute positions just
before the MLM head — transformers implements no such decoder (DebertaForMaskedLM puts its head on the
last layer), so this stand-in is trained exactly as transformers runs it. Conventions follow
microsoft/deberta-base (v1): GPT-2 style byte-level BPE with ``[CLS] [SEP] [MASK]``, no token types,
relative distances up to the model's length (``max_relative_positions=-1``), and the MLM head named
``lm_predictions.lm_head`` (``legacy=False``, the layout of the original checkpoint).
"""

from __future__ import annotations

from transformers import DebertaConfig, DebertaForMaskedLM

from app.training import common, data, recipe

LOOP = common.LoopConfig(steps=3000, precision="fp32")  # bf16 autocast overflows DeBERTa's masked_fill (float32 min)


Shape = recipe.Shape


def deberta_config(tok, shape: Shape = Shape()) -> DebertaConfig:
    return DebertaConfig(
        vocab_size=len(tok),
        hidden_size=shape.hidden_size,
        num_hidden_layers=shape.num_hidden_layers,
        num_attention_heads=shape.num_attention_heads,
        intermediate_size=shape.intermediate_size,
        max_position_embeddings=data.MAX_LENGTH,
        relative_attention=True,
        max_relative_positions=-1,
        pos_att_type=["c2p", "p2c"],
        position_biased_input=False,
        type_vocab_size=0,
        layer_norm_eps=1e-7,
        legacy=False,
        pad_token_id=tok.pad_token_id,
    )


def masked_lm_logits(model: DebertaForMaskedLM, ids, att, targets):
    h = model.deberta(input_ids=ids, attention_mask=att).last_hidden_state  # (B, T, H)
    return model.lm_predictions(h[targets], model.deberta.embeddings.word_embeddings)  # (n_targets, V)


class DebertaRecipe(recipe.MaskedLMRecipe):
    name = "deberta"
    stands_in_for = "microsoft/deberta-base"
    logits_at = staticmethod(masked_lm_logits)
    notes = (
        "\nThe masked-LM head is `lm_predictions.lm_head` (`legacy=False` in config.json), as in "
        "microsoft/deberta-base, whose hub config does not say so: load that checkpoint with "
        "`DebertaForMaskedLM.from_pretrained('microsoft/deberta-base', legacy=False)` or its head is left random.\n"
    )

    def build_tokenizer(self, train_file):
        return data.build_deberta(train_file, self.shape.vocab_size)

    def build_model(self, tok):
        return DebertaForMaskedLM(deberta_config(tok, self.shape))

    def describe(self, tok):
        shape = self.shape
        return (
            "masked LM with dynamic masking (15%, 80/10/10); disentangled attention (c2p + p2c, relative "
            f"distances up to {data.MAX_LENGTH}), no absolute positions in the encoder, no enhanced mask decoder "
            f"(transformers has none); GPT-2 style byte-level BPE vocabulary of {len(tok)}, "
            "cased, `[CLS] [SEP] [MASK]`; "
            f"{shape.num_hidden_layers} layers, hidden {shape.hidden_size}, {shape.num_attention_heads} heads"
        )


run = DebertaRecipe().run
