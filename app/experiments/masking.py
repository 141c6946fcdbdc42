"""Masking, replayed: static ×1 vs static ×10 vs dynamic (RoBERTa), and token vs whole-word vs span
masking (SpanBERT).

The claims (app/experiments/claims.py, ``MASKING``):

- RoBERTa (Liu et al., 2019), Table 1: BERT masked each sequence once at preprocessing and duplicated
  the data ×10 with different masks, so over 40 epochs each mask was seen 4 times; a fresh mask every
  time (dynamic) was "comparable or slightly better": SQuAD 2.0 F1 78.7 vs 78.3, MNLI-m 84.0 vs 84.3,
  SST-2 92.9 vs 92.5. One static mask reused every epoch (×1) is what the ×10 duplication avoided.
- SpanBERT (Joshi et al., 2020), Table 6: masking random spans of whole words beats masking sub-word
  tokens (SQuAD 2.0 F1 85.4 vs 83.8; whole words 84.3) on every task there except coreference.

The experiment: every arm trains the same tiny BERT (``BertForMaskedLM``, app/training/bert.py's config)
on the same training sequences for the same steps, at the same 15% rate with the 80/10/10 rule:

| arm | targets chosen | masks |
|---|---|---|
| static1 | per token | one mask per sequence, fixed before training (``bert.static_masks``, 1 copy) |
| static10 | per token | 10 masked copies fixed before training (BERT) |
| dynamic | per token | a fresh mask every batch (RoBERTa) — also the *token* arm of the unit comparison |
| word | per whole word | fresh every batch |
| span | spans of whole words, Geometric(0.2) ≤ 10 | fresh every batch, the 80/10/10 split per span |

The training set is a fixed sample of ``steps × batch / epochs`` sequences, so that every arm trains
``epochs`` = 40 epochs — BERT's 40, over which static ×10 shows each mask 4 times and static ×1 forty.
Scored on held-out ``tinystories_valid`` sequences: masked-LM loss and top-1 under token masking (the
static/dynamic comparison), and for the unit comparison a probe every arm takes the same way — the
acceptability probe (app/training/probes.py: original vs two adjacent words swapped, logistic regression
on frozen mean-pooled features) — beside the held-out loss under each masking unit and the cloze set.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from transformers import BertForMaskedLM

from app.experiments.runner import (
    Arm,
    ArmSetup,
    Budget,
    Context,
    DataSpec,
    Shape,
    acceptability,
    eval_sets,
    expected_targets,
    mlm_scores,
)
from app.masking import MaskingConfig
from app.training import bert, common, flops, probes, units


@dataclass(frozen=True)
class MaskingBudget(Budget):
    epochs: int = 40  # passes over the training sample (BERT: 40)
    duplication: int = 10  # BERT's masked copies


FULL = MaskingBudget(steps=1600, eval_every=200)
QUICK = MaskingBudget(
    data=DataSpec(vocab_size=600, seq_len=32, train_chars=60_000, valid_chars=30_000),
    shape=Shape(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64),
    steps=8,
    eval_every=4,
    batch_size=8,
    warmup=2,
    epochs=2,
    eval_sequences=16,
    final_sequences=32,
    probe_train=24,
    probe_test=24,
)
LIVE = MaskingBudget(steps=400, eval_every=25, eval_sequences=128, epochs=40)


def arms(budget: MaskingBudget) -> list[Arm]:
    return [
        Arm(
            "static1", "static ×1: one mask, fixed before training", {"masking": "static", "copies": 1, "unit": "token"}
        ),
        Arm(
            "static10",
            f"static ×{budget.duplication}: BERT's duplicated masks",
            {"masking": "static", "copies": budget.duplication, "unit": "token"},
        ),
        Arm(
            "dynamic",
            "dynamic: a fresh mask every batch (RoBERTa), per token",
            {"masking": "dynamic", "copies": None, "unit": "token"},
        ),
        Arm("word", "whole-word masking, dynamic", {"masking": "dynamic", "copies": None, "unit": "word"}),
        Arm("span", "span masking (SpanBERT), dynamic", {"masking": "dynamic", "copies": None, "unit": "span"}),
    ]


def training_sample(ctx: Context):
    """The sequences every arm trains on: a fixed random sample sized for ``epochs`` passes."""
    b = ctx.budget

    def build():
        n = max(b.batch_size, min(len(ctx.data.train), b.steps * b.batch_size // b.epochs))
        order = torch.randperm(len(ctx.data.train), generator=torch.Generator().manual_seed(0))[:n]
        return ctx.data.train.subset(order)

    return ctx.once("train_sample", build)


def model_for(ctx: Context, seed: int) -> BertForMaskedLM:
    s = ctx.budget.shape
    torch.manual_seed(seed)
    shape = bert.Shape(
        vocab_size=len(ctx.data.tokenizer),
        hidden_size=s.hidden_size,
        num_hidden_layers=s.num_hidden_layers,
        num_attention_heads=s.num_attention_heads,
        intermediate_size=s.intermediate_size,
    )
    return BertForMaskedLM(bert.bert_config(len(ctx.data.tokenizer), shape))


def target_rate(unit: str, train, words, tok, rand_ids, rows: int = 256) -> float:
    """The share of maskable tokens that end up targets under ``unit`` (15% by design), measured on the
    first ``rows`` training sequences."""
    part = slice(0, min(rows, len(train)))
    _, labels = units.unit_batch(
        unit,
        train.input_ids[part],
        train.maskable[part],
        words[part],
        tok.mask_token_id,
        rand_ids,
        MaskingConfig(),
        torch.Generator().manual_seed(99),
    )
    return int((labels != -100).sum()) / max(int(train.maskable[part].sum()), 1)


def setup(arm: Arm, seed: int, ctx: Context) -> ArmSetup:
    b, tok, dev = ctx.budget, ctx.data.tokenizer, ctx.device
    train = training_sample(ctx)
    words = ctx.data.words(train)
    rand_ids, mcfg = ctx.data.random_ids(), MaskingConfig()
    cfg = b.loop(seed, dev)
    model = model_for(ctx, seed).to(dev)
    unit = arm.change["unit"]
    if arm.change["masking"] == "static":
        inputs, labels, att = bert.static_masks(train, tok, arm.change["copies"], mcfg, seed)  # (copies·N, T) each

        def batch(step, gen):
            idx = common.shuffled_batch(len(inputs), b.batch_size, step, seed)
            return inputs[idx], labels[idx], att[idx]
    else:

        def batch(step, gen):
            idx = common.shuffled_batch(len(train), b.batch_size, step, seed)
            x, y = units.unit_batch(
                unit, train.input_ids[idx], train.maskable[idx], words[idx], tok.mask_token_id, rand_ids, mcfg, gen
            )
            return x, y, train.attention_mask[idx]

    def step_loss(step, gen):
        x, y, a = batch(step, gen)
        y = y.to(dev)
        targets = y != -100
        logits = bert.masked_lm_logits(model, x.to(dev), a.to(dev), targets)
        return torch.nn.functional.cross_entropy(logits, y[targets]), {}

    def logits_at(ids, att, targets, types=None):
        return bert.masked_lm_logits(model, ids, att, targets)

    def encode(ids, att, types=None):
        return probes.mean_pooled(model.bert(input_ids=ids, attention_mask=att).last_hidden_state, att)

    during, final_set = eval_sets(ctx)

    def evaluate():
        return mlm_scores(logits_at, during, ctx)

    def final():
        out = mlm_scores(logits_at, final_set, ctx)
        for u in ("word", "span"):
            out.update(mlm_scores(logits_at, final_set, ctx, unit=u, prefix=u))
        out["probe_acc"] = probes.probe(encode, acceptability(ctx), device=dev)["accuracy"]
        model.cpu()
        out.update(common.cloze_top5(model, tok))
        model.to(dev)
        return out

    n_targets = expected_targets(train, b.batch_size)
    return ArmSetup(
        model=model,
        step_loss=step_loss,
        evaluate=evaluate,
        final=final,
        cfg=cfg,
        flops=flops.mlm_step(model.config, b.batch_size, b.data.seq_len, n_targets),
        params=common.count_parameters(model),
        details={
            "train_sequences": len(train),
            "epochs": round(b.steps * b.batch_size / len(train), 2),
            "target_rate": round(target_rate(unit, train, words, tok, rand_ids), 4),
            "distinct_masks_per_sequence": arm.change["copies"] or "one per visit",
        },
    )
