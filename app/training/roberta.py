"""RoBERTa at toy scale: byte-level BPE, *dynamic* masking, FULL-SENTENCES packing, no NSP.

Liu et al. (2019): a fresh mask is drawn every time a sequence is fed (here: every batch), inputs
are packed with whole sentences that may cross document boundaries (separated by ``</s>``), and the
next-sentence objective is removed.
"""

from __future__ import annotations

from transformers import RobertaConfig, RobertaForMaskedLM

from app.training import common, data, recipe

LOOP = common.LoopConfig(steps=6000)

Shape = recipe.Shape


def masked_lm_logits(model: RobertaForMaskedLM, ids, att, targets):
    h = model.roberta(input_ids=ids, attention_mask=att).last_hidden_state  # (B, T, H)
    return model.lm_head(h[targets])  # (n_targets, V)


class RobertaRecipe(recipe.MaskedLMRecipe):
    name = "roberta"
    stands_in_for = "FacebookAI/roberta-base"
    cross_documents = True  # FULL-SENTENCES
    logits_at = staticmethod(masked_lm_logits)

    def build_tokenizer(self, train_file):
        return data.build_bpe(train_file, self.shape.vocab_size)

    def build_model(self, tok):
        return RobertaForMaskedLM(
            RobertaConfig(
                vocab_size=len(tok),
                hidden_size=self.shape.hidden_size,
                num_hidden_layers=self.shape.num_hidden_layers,
                num_attention_heads=self.shape.num_attention_heads,
                intermediate_size=self.shape.intermediate_size,
                max_position_embeddings=data.MAX_LENGTH + 2,
                type_vocab_size=1,
                pad_token_id=tok.pad_token_id,
                bos_token_id=tok.bos_token_id,
                eos_token_id=tok.eos_token_id,
            )
        )

    def describe(self, tok):
        return (
            "masked LM with dynamic masking (a fresh 15% mask with the 80/10/10 rule every batch), "
            "FULL-SENTENCES packing across documents, no NSP; byte-level BPE vocabulary of "
            f"{len(tok)} (`<s> </s> <mask>`, the mask absorbing the space before it as in roberta-base); "
            f"{self.shape.num_hidden_layers} layers, hidden {self.shape.hidden_size}"
        )


run = RobertaRecipe().run
