"""Replaced-token detection vs masked LM at equal training compute (ELECTRA), and ELECTRA's "15%" ablation.

The claims (app/experiments/claims.py, ``ELECTRA_CLAIM``), Clark et al. (2020):

- Table 1 / Figure 1: at the same pre-training compute ELECTRA beats BERT — ELECTRA-Small 79.9 vs
  BERT-Small 75.1 GLUE (dev), both 1.4e18 training FLOPs; the gap is widest for small models.
- Table 5: most of the gain comes from learning from *all* input tokens: ELECTRA 85.0, ELECTRA 15%
  (the discriminator's loss only on the 15% masked positions) 82.4, BERT 82.2 GLUE.

The experiment: the same encoder shape for every arm — the discriminator of the ELECTRA arms and the
masked LM of the BERT arm are the same ``ElectraModel`` (no pooler, embedding size = hidden size) — on the
same single-segment training sequences, with dynamic 15% masking (80/10/10):

| arm | objective | loss |
|---|---|---|
| mlm | masked LM (BERT), ``ElectraForMaskedLM`` | cross-entropy at the 15% targets |
| electra | replaced-token detection: a generator ¼ the width (the paper's Small setting: hidden, FFN and heads × ¼, same depth), embeddings shared, replacements *sampled* from it | MLM(generator) + 50 · BCE(discriminator) over every token |
| electra15 | the same, the discriminator's loss only at the masked positions | MLM(generator) + 50 · BCE at the targets |

Compute is matched in FLOPs, not steps (app/training/flops.py): an ELECTRA step costs the generator's
step *and* the discriminator's, so the ELECTRA arms take fewer steps; every arm is evaluated at the same
fractions of the FLOP budget, and the curves are drawn against FLOPs. The measure both objectives can
take is the acceptability probe (app/training/probes.py): frozen mean-pooled features of the encoder
(the discriminator for ELECTRA), a logistic regression telling a held-out sentence from the same
sentence with two adjacent words swapped — the same code for every arm, at every evaluation point.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from transformers import ElectraConfig, ElectraForMaskedLM, ElectraForPreTraining

from app.replaced_tokens import roc_auc, sample_replacements
from app.experiments.runner import (
    Arm, ArmSetup, Budget, Context, DataSpec, Shape, acceptability, eval_sets, expected_targets, mlm_scores,
)
from app.masking import MaskingConfig, mlm_batch
from app.training import common, flops, probes
from app.training import electra as recipe


@dataclass(frozen=True)
class ElectraBudget(Budget):
    # ``steps`` is the masked-LM arm's; the others get the steps that cost the same FLOPs
    evaluations: int = 8  # points along the FLOP budget where every arm is evaluated
    generator_fraction: float = 0.25  # of hidden size, FFN size and heads (ELECTRA-Small: 1/4)
    rtd_weight: float = 50.0  # λ


FULL = ElectraBudget(steps=2000, eval_every=250, probe_train=1000, probe_test=1000)
QUICK = ElectraBudget(data=DataSpec(vocab_size=600, seq_len=32, train_chars=60_000, valid_chars=30_000),
                      shape=Shape(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64),
                      steps=8, eval_every=4, batch_size=8, warmup=2, eval_sequences=16, final_sequences=32,
                      probe_train=24, probe_test=24, evaluations=2)
LIVE = ElectraBudget(steps=400, eval_every=50, eval_sequences=128, probe_train=200, probe_test=200, evaluations=8)


def arms(budget: ElectraBudget) -> list[Arm]:
    return [
        Arm("mlm", "masked LM (BERT)", {"objective": "mlm", "discriminator_loss_on": None}),
        Arm("electra", "replaced-token detection (ELECTRA)", {"objective": "rtd", "discriminator_loss_on": "all tokens"}),
        Arm("electra15", "ELECTRA 15%: detection loss on the masked positions only",
            {"objective": "rtd", "discriminator_loss_on": "masked positions"}),
    ]


def configs(ctx: Context) -> tuple[ElectraConfig, ElectraConfig]:
    """(generator, discriminator) configs: the discriminator is the budget's shape; the generator the
    same depth at ``generator_fraction`` of its width, FFN and heads; both embed at the discriminator's
    width (shared embeddings)."""
    b, s = ctx.budget, ctx.budget.shape
    f = b.generator_fraction
    shape = recipe.Shape(
        embedding_size=s.hidden_size, hidden_size=s.hidden_size, num_hidden_layers=s.num_hidden_layers,
        num_attention_heads=s.num_attention_heads, intermediate_size=s.intermediate_size,
        generator_hidden_size=max(1, int(s.hidden_size * f)), generator_heads=max(1, int(s.num_attention_heads * f)),
        generator_intermediate_size=max(1, int(s.intermediate_size * f)), rtd_weight=b.rtd_weight, init_from_bert=False,
    )
    return recipe.configs(len(ctx.data.tokenizer), shape)


def step_flops(ctx: Context, objective: str) -> dict[str, float]:
    b = ctx.budget
    gcfg, dcfg = configs(ctx)
    n_targets = expected_targets(ctx.data.train, b.batch_size)
    if objective == "mlm":
        return flops.mlm_step(dcfg, b.batch_size, b.data.seq_len, n_targets)
    return flops.rtd_step(gcfg, dcfg, b.batch_size, b.data.seq_len, n_targets)


def steps_for(ctx: Context, objective: str) -> int:
    """Steps that spend the masked-LM arm's FLOPs (``budget.steps`` × its step cost)."""
    b = ctx.budget
    total = b.steps * sum(step_flops(ctx, "mlm").values())
    return max(1, round(total / sum(step_flops(ctx, objective).values())))


def corrupt(generator, ids, att, maskable, tok, rand_ids, gen, cfg=MaskingConfig()):
    """ELECTRA's input: mask 15% (80/10/10), let the generator predict the targets, *sample* a token
    there. Returns (generator loss, corrupted ids (B, T), replaced (B, T) float: 1 where the sampled token
    differs from the original, targets (B, T) bool), all on the model's device. The recipe's
    ``corrupt_with_generator`` with the targets returned too (ELECTRA 15% scores only them)."""
    dev = next(generator.parameters()).device
    masked, labels = mlm_batch(ids, maskable, tok.mask_token_id, rand_ids, cfg, gen)
    targets = labels != -100
    g_logits = recipe.generator_logits(generator, masked.to(dev), att.to(dev), targets.to(dev))  # (n, V)
    g_loss = torch.nn.functional.cross_entropy(g_logits, labels[targets].to(dev))
    corrupted = ids.clone()
    corrupted[targets] = sample_replacements(g_logits.detach().float().cpu(), torch.tensor(tok.all_special_ids), gen)
    return g_loss, corrupted.to(dev), (corrupted != ids).float().to(dev), targets.to(dev)


def setup(arm: Arm, seed: int, ctx: Context) -> ArmSetup:
    b, tok, dev = ctx.budget, ctx.data.tokenizer, ctx.device
    train, rand_ids = ctx.data.train, ctx.data.random_ids()
    objective, loss_on = arm.change["objective"], arm.change["discriminator_loss_on"]
    gcfg, dcfg = configs(ctx)
    steps = steps_for(ctx, objective)
    cfg = b.loop(seed, dev, steps=steps, eval_every=max(1, steps // b.evaluations))
    torch.manual_seed(seed)
    if objective == "mlm":
        mlm = ElectraForMaskedLM(dcfg)
        model, encoder = mlm, mlm.electra
    else:
        generator, discriminator = ElectraForMaskedLM(gcfg), ElectraForPreTraining(dcfg)
        recipe.tie_embeddings(generator, discriminator)
        model = torch.nn.ModuleDict({"generator": generator, "discriminator": discriminator})
        encoder = discriminator.electra
    model.to(dev)
    mcfg = MaskingConfig()

    def step_loss(step, gen):
        idx = common.shuffled_batch(len(train), b.batch_size, step, seed)
        ids, att, maskable = train.input_ids[idx], train.attention_mask[idx], train.maskable[idx]
        if objective == "mlm":
            x, y = mlm_batch(ids, maskable, tok.mask_token_id, rand_ids, mcfg, gen)
            y = y.to(dev)
            targets = y != -100
            logits = recipe.generator_logits(mlm, x.to(dev), att.to(dev), targets)
            return torch.nn.functional.cross_entropy(logits, y[targets]), {}
        g_loss, corrupted, replaced, targets = corrupt(generator, ids, att, maskable, tok, rand_ids, gen, mcfg)
        att = att.to(dev)
        d_logits = discriminator(input_ids=corrupted, attention_mask=att).logits  # (B, T)
        scored = att.bool() if loss_on == "all tokens" else targets
        d_loss = torch.nn.functional.binary_cross_entropy_with_logits(d_logits[scored], replaced[scored])
        return g_loss + b.rtd_weight * d_loss, {"gen_loss": float(g_loss.detach()), "disc_loss": float(d_loss.detach())}

    def encode(ids, att, types=None):
        return probes.mean_pooled(encoder(input_ids=ids, attention_mask=att).last_hidden_state, att)

    masked_lm = mlm if objective == "mlm" else generator

    def logits_at(ids, att, targets, types=None):
        return recipe.generator_logits(masked_lm, ids, att, targets)

    def detection(seqs) -> float:
        """ROC-AUC of the discriminator on held-out text corrupted by its generator (content tokens)."""
        if objective == "mlm":
            return float("nan")
        gen = torch.Generator().manual_seed(99)
        scores, labels = [], []
        for s in range(0, len(seqs), 128):
            part = seqs.subset(slice(s, s + 128))
            _, corrupted, replaced, _ = corrupt(generator, part.input_ids, part.attention_mask, part.maskable, tok, rand_ids, gen)
            d = discriminator(input_ids=corrupted, attention_mask=part.attention_mask.to(dev)).logits.float().cpu()
            keep = part.maskable
            scores.append(d[keep])
            labels.append(replaced.cpu()[keep])
        return roc_auc(torch.cat(scores), torch.cat(labels))

    during, final_set = eval_sets(ctx)

    def evaluate():
        return {"probe_acc": probes.probe(encode, acceptability(ctx), device=dev)["accuracy"], "rtd_auc": detection(during),
                "valid_top1": mlm_scores(logits_at, during, ctx)["valid_top1"]}

    def final():
        return {"probe_acc": probes.probe(encode, acceptability(ctx), device=dev)["accuracy"], "rtd_auc": detection(final_set),
                **mlm_scores(logits_at, final_set, ctx)}

    parts = step_flops(ctx, objective)
    details = {"steps": steps, "flop_budget": b.steps * sum(step_flops(ctx, "mlm").values()),
               "encoder_params": common.count_parameters(encoder)}
    if objective != "mlm":
        details["generator"] = {"hidden_size": gcfg.hidden_size, "intermediate_size": gcfg.intermediate_size,
                                "num_attention_heads": gcfg.num_attention_heads, "params": common.count_parameters(generator)}
    return ArmSetup(model=model, step_loss=step_loss, evaluate=evaluate, final=final, cfg=cfg, flops=parts,
                    params=common.count_parameters(model), details=details)


