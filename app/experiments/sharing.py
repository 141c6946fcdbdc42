"""Cross-layer sharing and factorized embeddings, replayed (ALBERT Tables 3 and 4).

The claims (app/experiments/claims.py, ``SHARING``), Lan et al. (2020), ALBERT-base (L = 12, H = 768),
average of SQuAD 1.1/2.0, MNLI, SST-2 and RACE (dev):

- Table 4, E = 768: not shared 82.3 (108M parameters), shared attention 81.6 (83M), shared FFN 79.5
  (57M), all shared 79.8 (31M). "Sharing all hurts, less at E = 128 (−1.5) than at E = 768 (−2.5); most of
  the drop comes from sharing the FFN; sharing attention costs nothing at E = 128 (+0.1), a little at
  E = 768 (−0.7)."
- Table 3: not shared, E = 768 vs 128: 82.3 vs 81.7 (108M vs 89M); all shared, E = 128 vs 768: 80.1 vs
  79.8 (12M vs 31M) — with sharing, the small E is as good or better.

The experiment: every arm is an ``AlbertForMaskedLM`` of the budget's depth and width, without dropout
(ALBERT v2), trained on the same sequences with dynamic 15% masking (80/10/10) for the same steps;
only the sharing mode (app/training/sharing.py: ``num_hidden_groups`` for none/all, modules tied across
layers for attention-only and FFN-only, which transformers has no option for) or the embedding size E
changes. Parameters (unique tensors, base model + MLM head) go on the x-axis; the held-out masked-LM
loss and top-1 on the y-axis. Sharing changes parameters, not FLOPs: every arm computes L layers.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from transformers import AlbertForMaskedLM

from app.experiments.runner import (
    Arm,
    ArmSetup,
    Budget,
    Context,
    DataSpec,
    Shape,
    eval_sets,
    expected_targets,
    mlm_scores,
)
from app.masking import MaskingConfig, mlm_batch
from app.training import common, flops, sharing


@dataclass(frozen=True)
class SharingBudget(Budget):
    small_embedding: int = 32  # the factorized E (H / 4; ALBERT-base: 128 = H / 6)


FULL = SharingBudget(
    shape=Shape(hidden_size=128, num_hidden_layers=3, num_attention_heads=4, intermediate_size=512),
    steps=1000,
    eval_every=200,
)
QUICK = SharingBudget(
    data=DataSpec(vocab_size=600, seq_len=32, train_chars=60_000, valid_chars=30_000),
    shape=Shape(hidden_size=32, num_hidden_layers=3, num_attention_heads=2, intermediate_size=64),
    steps=8,
    eval_every=4,
    batch_size=8,
    warmup=2,
    eval_sequences=16,
    final_sequences=32,
    small_embedding=8,
)
LIVE = SharingBudget(shape=FULL.shape, steps=400, eval_every=25, eval_sequences=128)


def arms(budget: SharingBudget) -> list[Arm]:
    h, e = budget.shape.hidden_size, budget.small_embedding
    return [
        Arm("none", f"not shared, E = H = {h} (BERT-style)", {"sharing": "none", "embedding_size": h}),
        Arm("all", f"all layers shared, E = H = {h}", {"sharing": "all", "embedding_size": h}),
        Arm("attention", f"attention shared only, E = H = {h}", {"sharing": "attention", "embedding_size": h}),
        Arm("ffn", f"feed-forward shared only, E = H = {h}", {"sharing": "ffn", "embedding_size": h}),
        Arm("none_small_e", f"not shared, factorized E = {e}", {"sharing": "none", "embedding_size": e}),
        Arm("all_small_e", f"all layers shared, factorized E = {e} (ALBERT)", {"sharing": "all", "embedding_size": e}),
    ]


def build(arm: Arm, ctx: Context, seed: int) -> AlbertForMaskedLM:
    s = ctx.budget.shape
    tok = ctx.data.tokenizer
    torch.manual_seed(seed)
    config = sharing.albert_config(
        len(tok),
        s.hidden_size,
        arm.change["embedding_size"],
        s.num_hidden_layers,
        s.num_attention_heads,
        s.intermediate_size,
        arm.change["sharing"],
        max_position_embeddings=max(128, ctx.budget.data.seq_len),
        pad_token_id=tok.pad_token_id,
    )
    model = AlbertForMaskedLM(config)
    sharing.tie_layers(model.albert, arm.change["sharing"])
    return model


def logits(model: AlbertForMaskedLM, ids, att, targets):
    """Masked-LM logits at the targets only (n, V)."""
    h = model.albert(input_ids=ids, attention_mask=att).last_hidden_state  # (B, T, H)
    return model.predictions(h[targets])


def setup(arm: Arm, seed: int, ctx: Context) -> ArmSetup:
    b, tok, dev = ctx.budget, ctx.data.tokenizer, ctx.device
    train, rand_ids, mcfg = ctx.data.train, ctx.data.random_ids(), MaskingConfig()
    model = build(arm, ctx, seed).to(dev)

    def step_loss(step, gen):
        idx = common.shuffled_batch(len(train), b.batch_size, step, seed)
        x, y = mlm_batch(train.input_ids[idx], train.maskable[idx], tok.mask_token_id, rand_ids, mcfg, gen)
        y = y.to(dev)
        targets = y != -100
        out = logits(model, x.to(dev), train.attention_mask[idx].to(dev), targets)
        return torch.nn.functional.cross_entropy(out, y[targets]), {}

    def logits_at(ids, att, targets, types=None):
        return logits(model, ids, att, targets)

    during, final_set = eval_sets(ctx)

    def final():
        out = mlm_scores(logits_at, final_set, ctx)
        model.cpu()
        out.update(common.cloze_top5(model, tok))
        model.to(dev)
        out["params"] = common.count_parameters(model)
        return out

    n_targets = expected_targets(train, b.batch_size)
    encoder = model.albert.encoder
    return ArmSetup(
        model=model,
        step_loss=step_loss,
        evaluate=lambda: mlm_scores(logits_at, during, ctx),
        final=final,
        cfg=b.loop(seed, dev),
        flops=flops.mlm_step(model.config, b.batch_size, b.data.seq_len, n_targets, family="albert"),
        params=common.count_parameters(model),
        details={
            "base_model_params": common.count_parameters(model.albert),
            "encoder_params": common.count_parameters(encoder),
            "embedding_params": common.count_parameters(model.albert.embeddings),
            "num_hidden_groups": model.config.num_hidden_groups,
            "embedding_size": model.config.embedding_size,
        },
    )
