"""XLNet at toy scale: SentencePiece (cased), permutation LM with two-stream attention, partial prediction.

Yang et al. (2019): for each sequence a random factorization order is drawn; the model predicts the
last 1/K of it (K = 6 here, as in the paper's base setting) through the *query stream*, which knows
a target's position but not its content, while the *content stream* carries what each position may
see. Both are driven by ``perm_mask`` and ``target_mapping`` (see app/lessons/xlnet.py). Inputs end with
``<sep> <cls>`` and are padded on the left, as in xlnet-base-cased.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from transformers import XLNetConfig, XLNetLMHeadModel

from app.training import common, data, recipe
from app.permutation import partial_prediction_masks

LOOP = common.LoopConfig(steps=3000)


@dataclass(frozen=True)
class Shape:
    vocab_size: int = 4000
    d_model: int = 192
    n_layer: int = 4
    n_head: int = 4
    d_inner: int = 768
    k: int = 6  # partial prediction: the last 1/K of the order is predicted


def forward(model: XLNetLMHeadModel, ids, att, k: int, gen):
    """(logits (B, P, V), gold ids (B, P) with -100 for unused rows)."""
    perm_mask, target_mapping, target_pos = partial_prediction_masks(
        data_maskable(ids, att), k, gen
    )  # drawn on the CPU
    dev = next(model.parameters()).device
    logits = model(
        input_ids=ids.to(dev),
        attention_mask=att.to(dev),
        perm_mask=perm_mask.to(dev),
        target_mapping=target_mapping.to(dev),
    ).logits
    gold = torch.where(target_pos >= 0, ids.gather(1, target_pos.clamp_min(0)), torch.full_like(target_pos, -100))
    return logits, gold.to(dev)


_SPECIAL: torch.Tensor | None = None


def data_maskable(ids, att):
    return (att == 1) & ~torch.isin(ids, _SPECIAL)


def permutation_topk(model, seqs, k: int, seed: int = 1234, batch_size: int = 128) -> dict:
    gen = torch.Generator().manual_seed(seed)
    hits1 = hits5 = n = 0
    for s in range(0, len(seqs), batch_size):
        logits, gold = forward(
            model, seqs.input_ids[s : s + batch_size], seqs.attention_mask[s : s + batch_size], k, gen
        )
        logits, gold = logits.cpu(), gold.cpu()
        keep = gold != -100
        top5 = logits[keep].topk(5, dim=-1).indices
        hits1 += int((top5[:, 0] == gold[keep]).sum())
        hits5 += int((top5 == gold[keep][:, None]).any(-1).sum())
        n += int(keep.sum())
    return {"top1": hits1 / max(n, 1), "top5": hits5 / max(n, 1), "n_targets": n}


class XLNetRecipe(recipe.MaskedLMRecipe):
    """The base recipe with XLNet's objective: permutation LM on sequences ending ``<sep> <cls>``, scored on the
    permutation targets."""

    name = "xlnet"
    stands_in_for = "xlnet/xlnet-base-cased"
    shape = Shape()
    specials_at_end = True
    notes = "\nLoad with `AutoModelForCausalLM` (gives `XLNetLMHeadModel`); XLNet is not a masked LM.\n"

    def build_tokenizer(self, train_file):
        return data.build_xlnet(train_file, self.shape.vocab_size)

    def prepare(self, corpus, work, cfg):
        global _SPECIAL
        tok, train, valid = super().prepare(corpus, work, cfg)
        _SPECIAL = torch.tensor(tok.all_special_ids)  # what forward() never draws as a target
        return tok, train, valid

    def build_model(self, tok):
        shape = self.shape
        return XLNetLMHeadModel(
            XLNetConfig(
                vocab_size=len(tok),
                d_model=shape.d_model,
                n_layer=shape.n_layer,
                n_head=shape.n_head,
                d_inner=shape.d_inner,
                ff_activation="gelu",
                dropout=0.0,
                untie_r=True,
                attn_type="bi",
                mem_len=None,
                pad_token_id=tok.pad_token_id,
                bos_token_id=tok.bos_token_id,
                eos_token_id=tok.eos_token_id,
            )
        )

    def step_loss(self, model, tok, train, cfg, work):
        k = self.shape.k

        def step_loss(step, gen):
            idx = common.shuffled_batch(len(train), cfg.batch_size, step, cfg.seed)
            logits, gold = forward(model, train.input_ids[idx], train.attention_mask[idx], k, gen)
            return torch.nn.functional.cross_entropy(logits.flatten(0, 1), gold.flatten(), ignore_index=-100), {}

        return step_loss

    def evaluation(self, tok):
        def evaluation(model, seqs, device):
            return {**permutation_topk(model, seqs, self.shape.k), **common.cloze_top5(model, tok, permutation=True)}

        return evaluation

    def metrics(self, final):
        return {
            "permutation-target top-1": final["top1"],
            "permutation-target top-5": final["top5"],
            "held-out targets": final["n_targets"],
            "cloze top-5 (content words; the blank the only target, everything else visible)": final["cloze_top5"],
        }

    def describe(self, tok):
        shape = self.shape
        return (
            f"permutation language modelling with two-stream attention (perm_mask + target_mapping), "
            f"partial prediction of the last 1/{shape.k} of a random factorization order; SentencePiece "
            f"Unigram vocabulary of {len(tok)}, cased, `<sep> <cls>` at the end, left padding; "
            f"{shape.n_layer} layers, d_model {shape.d_model}"
        )


run = XLNetRecipe().run
