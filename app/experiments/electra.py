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
| electra | replaced-token detection¹ | MLM(generator) + 50 · BCE(discriminator) over every token |
| electra15 | the same, discriminator's loss only at the masked positions | MLM(generator) + 50 · BCE at the targets |

¹ A generator ¼ the width (the paper's Small setting: hidden, FFN and heads × ¼, same depth), embeddings
shared, replacements *sampled* from it at temperature T = 2 (see ``FULL``).

Compute is matched in FLOPs, not steps (app/training/flops.py): an ELECTRA step costs the generator's
step *and* the discriminator's, so the ELECTRA arms take fewer steps; every arm is evaluated at the same
fractions of the FLOP budget, and the curves are drawn against FLOPs. The final numbers also keep
``rtd_auc_identity``: the ROC-AUC of a detector that sees only each token's identity on the same held-out fakes
(:func:`identity_auc`), so the part of the discriminator's that needs context can be read off. The measure both
objectives can take is the acceptability probe (app/training/probes.py): frozen mean-pooled features of the encoder (the
discriminator for ELECTRA), a logistic regression telling a held-out sentence from the same sentence with two adjacent
words swapped — the same code for every arm, at every evaluation point.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from transformers import ElectraConfig, ElectraForMaskedLM, ElectraForPreTraining

from app.replaced_tokens import roc_auc, sample_replacements
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
from app.masking import MaskingConfig, mlm_batch
from app.training import common, flops, probes
from app.training import electra as recipe


@dataclass(frozen=True)
class ElectraBudget(Budget):
    # ``steps`` is the masked-LM arm's; the others get the steps that cost the same FLOPs
    evaluations: int = 8  # points along the FLOP budget where every arm is evaluated
    generator_fraction: float = 0.25  # of hidden size, FFN size and heads (ELECTRA-Small: 1/4)
    rtd_weight: float = 50.0  # λ
    # A shared warm start (0: none, every arm from scratch): ``warm_start`` masked-LM steps of the discriminator's
    # shape, at ``warm_lr``, trained once per seed and the starting point of every arm of that seed — the masked LM
    # goes on with masked LM, the ELECTRA arms' discriminators start from its encoder and embeddings (their
    # generator from scratch on those embeddings). Its FLOPs are in every arm's total, the same for each, so the
    # arms still spend equal compute and differ only in the objective after it (see warm_start).
    warm_start: int = 0
    warm_lr: float = 1e-3
    # T of softmax(logits / T) the generator's replacements are sampled at (ELECTRA's code has the knob, default 1):
    # training and the held-out detection both sample at it
    generator_temperature: float = 1.0


# The discriminator must learn its task before any verdict (claims.py: held-out ROC-AUC ≥ 0.75). At T = 1 it did
# not (plan version 3, app/experiments/plans.py): the ¼-width generator reaches the unigram level within ~100 steps
# (held-out top-1 0.095) and stays there, its samples then differ from the originals only in context, and a
# 2-layer, 128-wide encoder from scratch stayed at ROC-AUC 0.54-0.56 — below a detector that sees only each token's
# identity (0.57-0.60 on the same fakes). At T = 2 the generator's samples lean to rarer words, so its fakes carry
# a signal in the token itself as well: a one-seed pilot (the discriminator's ROC-AUC only) reached 0.84 and 0.83
# at steps 225 and 450 (identity alone 0.79, 0.77). The paper's ELECTRA-Small learning rate, 5e-4, for every arm.
FULL = ElectraBudget(
    steps=2000, eval_every=250, probe_train=1000, probe_test=1000, lr=5e-4, warmup=200, generator_temperature=2.0
)
QUICK = ElectraBudget(
    data=DataSpec(vocab_size=600, seq_len=32, train_chars=60_000, valid_chars=30_000),
    shape=Shape(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64),
    steps=8,
    eval_every=4,
    batch_size=8,
    warmup=2,
    eval_sequences=16,
    final_sequences=32,
    probe_train=24,
    probe_test=24,
    evaluations=2,
    generator_temperature=2.0,
)
LIVE = ElectraBudget(
    steps=400,
    eval_every=50,
    eval_sequences=128,
    probe_train=200,
    probe_test=200,
    evaluations=8,
    lr=5e-4,
    warmup=40,
    generator_temperature=2.0,
)


def arms(budget: ElectraBudget) -> list[Arm]:
    return [
        Arm("mlm", "masked LM (BERT)", {"objective": "mlm", "discriminator_loss_on": None}),
        Arm(
            "electra", "replaced-token detection (ELECTRA)", {"objective": "rtd", "discriminator_loss_on": "all tokens"}
        ),
        Arm(
            "electra15",
            "ELECTRA 15%: detection loss on the masked positions only",
            {"objective": "rtd", "discriminator_loss_on": "masked positions"},
        ),
    ]


def configs(ctx: Context) -> tuple[ElectraConfig, ElectraConfig]:
    """(generator, discriminator) configs: the discriminator is the budget's shape; the generator the
    same depth at ``generator_fraction`` of its width, FFN and heads; both embed at the discriminator's
    width (shared embeddings)."""
    b, s = ctx.budget, ctx.budget.shape
    f = b.generator_fraction
    shape = recipe.Shape(
        embedding_size=s.hidden_size,
        hidden_size=s.hidden_size,
        num_hidden_layers=s.num_hidden_layers,
        num_attention_heads=s.num_attention_heads,
        intermediate_size=s.intermediate_size,
        generator_hidden_size=max(1, int(s.hidden_size * f)),
        generator_heads=max(1, int(s.num_attention_heads * f)),
        generator_intermediate_size=max(1, int(s.intermediate_size * f)),
        rtd_weight=b.rtd_weight,
        init_from_bert=False,
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


def warm_start(seed: int, ctx: Context) -> dict | None:
    """The shared warm start of ``seed`` (None when the budget has none): {"state": the masked LM's state dict
    (``ElectraForMaskedLM`` of the discriminator's shape), "curves", "flops", "steps"}. Trained once per seed under
    ``<work>/warm/seed<k>/`` (resumable, like every run) and read by every arm of that seed; its batches come from
    the same shuffled order the arms then continue (the arms start at batch ``warm_start``)."""
    b, tok, dev = ctx.budget, ctx.data.tokenizer, ctx.device
    if not b.warm_start:
        return None

    def build():
        folder = ctx.work / "warm" / f"seed{seed}"
        done = folder / "warm.pt"
        if not done.exists():
            _, dcfg = configs(ctx)
            torch.manual_seed(seed)
            mlm = ElectraForMaskedLM(dcfg).to(dev)
            train, rand_ids, mcfg = ctx.data.train, ctx.data.random_ids(), MaskingConfig()

            def step_loss(step, gen):
                idx = common.shuffled_batch(len(train), b.batch_size, step, seed)
                x, y = mlm_batch(train.input_ids[idx], train.maskable[idx], tok.mask_token_id, rand_ids, mcfg, gen)
                y = y.to(dev)
                targets = y != -100
                logits = recipe.generator_logits(mlm, x.to(dev), train.attention_mask[idx].to(dev), targets)
                return torch.nn.functional.cross_entropy(logits, y[targets]), {}

            during, _ = eval_sets(ctx)
            cfg = b.loop(
                seed,
                dev,
                steps=b.warm_start,
                lr=b.warm_lr,
                eval_every=b.warm_start,
                warmup=min(b.warmup, max(1, b.warm_start // 10)),
            )
            curves = common.train_loop(
                f"{ctx.experiment}/warm/seed{seed}",
                mlm,
                step_loss,
                lambda: mlm_scores(lambda i, a, t, types=None: recipe.generator_logits(mlm, i, a, t), during, ctx),
                cfg,
                folder,
            )
            tmp = done.with_suffix(".tmp")
            torch.save(
                {
                    "state": {k: v.cpu() for k, v in mlm.state_dict().items()},
                    "curves": curves,
                    "steps": b.warm_start,
                    "flops": b.warm_start * sum(step_flops(ctx, "mlm").values()),
                },
                tmp,
            )
            tmp.replace(done)
            (folder / "state.pt").unlink(missing_ok=True)
        return torch.load(done, map_location="cpu", weights_only=False)

    return ctx.once(f"warm{seed}", build)


def corrupt(generator, ids, att, maskable, tok, rand_ids, gen, cfg=MaskingConfig(), temperature: float = 1.0):
    """ELECTRA's input: mask 15% (80/10/10), let the generator predict the targets, *sample* a token
    there (from softmax(logits / ``temperature``)). Returns (generator loss, corrupted ids (B, T), replaced (B, T)
    float: 1 where the sampled token differs from the original, targets (B, T) bool), all on the model's device. The
    recipe's ``corrupt_with_generator`` with the targets returned too (ELECTRA 15% scores only them)."""
    dev = next(generator.parameters()).device
    masked, labels = mlm_batch(ids, maskable, tok.mask_token_id, rand_ids, cfg, gen)
    targets = labels != -100
    g_logits = recipe.generator_logits(generator, masked.to(dev), att.to(dev), targets.to(dev))  # (n, V)
    g_loss = torch.nn.functional.cross_entropy(g_logits, labels[targets].to(dev))
    corrupted = ids.clone()
    corrupted[targets] = sample_replacements(
        g_logits.detach().float().cpu(), torch.tensor(tok.all_special_ids), gen, temperature
    )
    return g_loss, corrupted.to(dev), (corrupted != ids).float().to(dev), targets.to(dev)


def identity_auc(tokens: torch.Tensor, replaced: torch.Tensor, vocab_size: int) -> float:
    """ROC-AUC of a detector that sees only each token's identity, never its context: the replaced rate of every
    token id, counted on the first half of the held-out tokens (add-½ smoothed), scores the second half. What a
    discriminator gets without reading the sentence; the part of its ROC-AUC above this is context."""
    n = len(tokens) // 2
    if n == 0:
        return float("nan")
    hits = torch.bincount(tokens[:n], weights=replaced[:n].double(), minlength=vocab_size) + 0.5
    seen = torch.bincount(tokens[:n], minlength=vocab_size).double() + 1.0
    return roc_auc((hits / seen)[tokens[n:]], replaced[n:])


def detection_aucs(generator, discriminator, tok, rand_ids, seqs, temperature: float, identity: bool = False) -> dict:
    """ROC-AUC of the discriminator on held-out text corrupted by its generator (content tokens), and with
    ``identity`` that of the token-identity-only detector on the same fakes (:func:`identity_auc`)."""
    dev = next(discriminator.parameters()).device
    gen = torch.Generator().manual_seed(99)
    scores, labels, tokens = [], [], []
    for s in range(0, len(seqs), 128):
        part = seqs.subset(slice(s, s + 128))
        _, corrupted, replaced, _ = corrupt(
            generator, part.input_ids, part.attention_mask, part.maskable, tok, rand_ids, gen, temperature=temperature
        )
        d = discriminator(input_ids=corrupted, attention_mask=part.attention_mask.to(dev)).logits.float().cpu()
        keep = part.maskable
        scores.append(d[keep])
        labels.append(replaced.cpu()[keep])
        tokens.append(corrupted.cpu()[keep])
    out = {"rtd_auc": roc_auc(torch.cat(scores), torch.cat(labels))}
    if identity:
        out["rtd_auc_identity"] = identity_auc(torch.cat(tokens), torch.cat(labels), len(tok))
    return out


def arm_details(ctx: Context, objective: str, steps: int, warm, encoder, gcfg, generator) -> dict:
    """What the results file records of an arm beside its numbers: steps, budget, sizes, the warm start."""
    b = ctx.budget
    details = {
        "steps": steps,
        "flop_budget": b.steps * sum(step_flops(ctx, "mlm").values()),
        "encoder_params": common.count_parameters(encoder),
    }
    if warm:
        details["warm_start"] = {
            "steps": warm["steps"],
            "flops": warm["flops"],
            "valid_top1": (warm["curves"].get("valid_top1") or [None])[-1],
            "total_flops": warm["flops"] + details["flop_budget"],
        }
    if generator is not None:
        details["generator"] = {
            "hidden_size": gcfg.hidden_size,
            "intermediate_size": gcfg.intermediate_size,
            "num_attention_heads": gcfg.num_attention_heads,
            "params": common.count_parameters(generator),
        }
    return details


def setup(arm: Arm, seed: int, ctx: Context) -> ArmSetup:
    b, tok, dev = ctx.budget, ctx.data.tokenizer, ctx.device
    train, rand_ids = ctx.data.train, ctx.data.random_ids()
    objective, loss_on = arm.change["objective"], arm.change["discriminator_loss_on"]
    gcfg, dcfg = configs(ctx)
    steps = steps_for(ctx, objective)
    cfg = b.loop(seed, dev, steps=steps, eval_every=max(1, steps // b.evaluations))
    warm = warm_start(seed, ctx)
    offset = b.warm_start  # the arms continue the warm start's batch order
    torch.manual_seed(seed)
    if objective == "mlm":
        mlm = ElectraForMaskedLM(dcfg)
        if warm:
            mlm.load_state_dict(warm["state"])
        model, encoder = mlm, mlm.electra
    else:
        generator, discriminator = ElectraForMaskedLM(gcfg), ElectraForPreTraining(dcfg)
        if warm:
            discriminator.electra.load_state_dict(
                {k.removeprefix("electra."): v for k, v in warm["state"].items() if k.startswith("electra.")}
            )
        recipe.tie_embeddings(generator, discriminator)
        model = torch.nn.ModuleDict({"generator": generator, "discriminator": discriminator})
        encoder = discriminator.electra
    model.to(dev)
    mcfg = MaskingConfig()

    def step_loss(step, gen):
        idx = common.shuffled_batch(len(train), b.batch_size, offset + step, seed)
        ids, att, maskable = train.input_ids[idx], train.attention_mask[idx], train.maskable[idx]
        if objective == "mlm":
            x, y = mlm_batch(ids, maskable, tok.mask_token_id, rand_ids, mcfg, gen)
            y = y.to(dev)
            targets = y != -100
            logits = recipe.generator_logits(mlm, x.to(dev), att.to(dev), targets)
            return torch.nn.functional.cross_entropy(logits, y[targets]), {}
        g_loss, corrupted, replaced, targets = corrupt(
            generator, ids, att, maskable, tok, rand_ids, gen, mcfg, b.generator_temperature
        )
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

    def detection(seqs, identity: bool = False) -> dict[str, float]:
        if objective == "mlm":
            return {"rtd_auc": float("nan")} | ({"rtd_auc_identity": float("nan")} if identity else {})
        return detection_aucs(generator, discriminator, tok, rand_ids, seqs, b.generator_temperature, identity)

    during, final_set = eval_sets(ctx)

    def evaluate():
        return {
            "probe_acc": probes.probe(encode, acceptability(ctx), device=dev)["accuracy"],
            **detection(during),
            "valid_top1": mlm_scores(logits_at, during, ctx)["valid_top1"],
        }

    def final():
        return {
            "probe_acc": probes.probe(encode, acceptability(ctx), device=dev)["accuracy"],
            **detection(final_set, identity=True),
            **mlm_scores(logits_at, final_set, ctx),
        }

    parts = step_flops(ctx, objective)
    details = arm_details(ctx, objective, steps, warm, encoder, gcfg, None if objective == "mlm" else generator)
    return ArmSetup(
        model=model,
        step_loss=step_loss,
        evaluate=evaluate,
        final=final,
        cfg=cfg,
        flops=parts,
        params=common.count_parameters(model),
        details=details,
    )
