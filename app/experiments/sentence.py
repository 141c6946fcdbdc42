"""Sentence objectives, replayed: no sentence loss vs next-sentence prediction (NSP) vs sentence-order
prediction (SOP), and ALBERT's cross-evaluation of the two tasks.

The claims (app/experiments/claims.py, ``SENTENCE``):

- RoBERTa (Liu et al., 2019), Table 2: without NSP, quality matches or improves (MNLI-m 84.7 for
  FULL-SENTENCES without NSP vs 84.0 for BERT's SEGMENT-PAIR with NSP).
- ALBERT (Lan et al., 2020), Table 5: NSP is solved by topic, not coherence. Intrinsic accuracies —
  trained without a sentence loss: NSP 52.4, SOP 53.3; NSP-trained: NSP 90.5, SOP 52.0 (it cannot solve
  SOP); SOP-trained: NSP 78.9, SOP 86.5 (it does well on NSP too). Masked-LM accuracy 54.9 / 54.5 / 54.0.

The experiment: one tiny ``BertForPreTraining`` (app/training/bert.py's config: the MLM head and the
two-way ``seq_relationship`` head) per arm, the same ``[CLS] A [SEP] B [SEP]`` inputs built from the same
cut points (app/training/pairs.py), dynamic 15% masking (80/10/10) for every arm; the arms differ only in
the sentence-level negatives and loss:

| arm | negatives (half the pairs) | loss |
|---|---|---|
| none | — (A, B always in order) | MLM |
| nsp | B from another story | MLM + NSP cross-entropy |
| sop | A and B swapped | MLM + SOP cross-entropy |

Every arm is scored the same way on held-out pairs (``tinystories_valid``): masked-LM loss/top-1 on
in-order pairs; NSP and SOP accuracy of a *linear probe* on the frozen ``[CLS]`` vector and pooled
output (fitted on one half of the held-out pairs, scored on the other); and, where the arm trained a
head, that head's own accuracy on both tasks (the NSP head read on SOP pairs: "NotNext" = "swapped").

``after`` keeps the seed-0 NSP and SOP models as Hugging Face ``BertForPreTraining`` folders with a
WordPiece tokenizer in BERT's conventions (``[PAD]=0 [UNK]=1 [CLS]=2 [SEP]=3 [MASK]=4``, uncased);
``export_checkpoints`` copies them out (``python -m app.experiments run sentence --checkpoints DIR``).
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path

import torch
from transformers import BertForPreTraining

from app.experiments.runner import Arm, ArmSetup, Budget, Context, DataSpec, Shape, expected_targets
from app.masking import MaskingConfig, mlm_batch
from app.training import bert, common, flops, pairs, probes, units


@dataclass(frozen=True)
class SentenceBudget(Budget):
    pair_seed: int = 1  # cut points and negatives of the training pairs (the same for every arm)


FULL = SentenceBudget(steps=1500, eval_every=250, probe_train=1200, probe_test=1200)
QUICK = SentenceBudget(
    data=DataSpec(vocab_size=600, seq_len=32, train_chars=60_000, valid_chars=30_000),
    shape=Shape(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64),
    steps=8,
    eval_every=4,
    batch_size=8,
    warmup=2,
    eval_sequences=16,
    final_sequences=32,
    probe_train=16,
    probe_test=16,
)
LIVE = SentenceBudget(steps=400, eval_every=50, eval_sequences=128, probe_train=300, probe_test=300)
EVAL_PROBE = 400  # pairs per half behind the probes during training (the final ones use the budget's)


def arms(budget: SentenceBudget) -> list[Arm]:
    return [
        Arm("none", "no sentence objective (RoBERTa)", {"objective": "none"}),
        Arm("nsp", "next-sentence prediction (BERT)", {"objective": "nsp"}),
        Arm("sop", "sentence-order prediction (ALBERT)", {"objective": "sop"}),
    ]


def pair_sets(ctx: Context) -> dict:
    """Training pairs per objective and the held-out pairs every arm is scored on (built once)."""
    b = ctx.budget

    def build():
        content = b.data.seq_len - 3
        train_chunks = pairs.story_chunks(ctx.data.train_encoded, content)
        valid_chunks = pairs.story_chunks(ctx.data.valid_encoded, content)
        tok, T = ctx.data.tokenizer, b.data.seq_len
        return {
            "train": {o: pairs.make_pairs(tok, train_chunks, T, o, b.pair_seed) for o in pairs.OBJECTIVES},
            "valid": {o: pairs.make_pairs(tok, valid_chunks, T, o, 2) for o in pairs.OBJECTIVES},
        }

    return ctx.once("pairs", build)


def halves(p: pairs.Pairs, n: int) -> tuple[pairs.Pairs, pairs.Pairs]:
    """(probe-training pairs, probe-test pairs): the first n and the n after them (fewer if there are fewer)."""
    n = min(n, len(p) // 2)
    return p.subset(slice(0, n)), p.subset(slice(n, 2 * n))


def setup(arm: Arm, seed: int, ctx: Context) -> ArmSetup:
    b, tok, dev = ctx.budget, ctx.data.tokenizer, ctx.device
    objective = arm.change["objective"]
    sets = pair_sets(ctx)
    train = sets["train"][objective]
    s = b.shape
    torch.manual_seed(seed)
    shape = bert.Shape(
        vocab_size=len(tok),
        hidden_size=s.hidden_size,
        num_hidden_layers=s.num_hidden_layers,
        num_attention_heads=s.num_attention_heads,
        intermediate_size=s.intermediate_size,
    )
    model = BertForPreTraining(bert.bert_config(len(tok), shape)).to(dev)
    rand_ids, mcfg = ctx.data.random_ids(), MaskingConfig()
    seqs = train.seqs

    def forward(ids, att, types, targets):
        """(MLM logits at the targets (n, V), sentence logits (B, 2): 0 = B continues A, 1 = it does not)."""
        out = model.bert(input_ids=ids, attention_mask=att, token_type_ids=types)
        return model.cls.predictions(out.last_hidden_state[targets]), model.cls.seq_relationship(out.pooler_output)

    def step_loss(step, gen):
        idx = common.shuffled_batch(len(train), b.batch_size, step, seed)
        ids, labels = mlm_batch(seqs.input_ids[idx], seqs.maskable[idx], tok.mask_token_id, rand_ids, mcfg, gen)
        labels = labels.to(dev)
        targets = labels != -100
        mlm, sent = forward(ids.to(dev), seqs.attention_mask[idx].to(dev), seqs.token_type_ids[idx].to(dev), targets)
        loss = torch.nn.functional.cross_entropy(mlm, labels[targets])
        if objective == "none":
            return loss, {}
        sent_loss = torch.nn.functional.cross_entropy(sent, train.labels[idx].to(dev))
        return loss + sent_loss, {f"{objective}_loss": float(sent_loss.detach())}

    def logits_at(ids, att, targets, types):
        return forward(ids, att, types, targets)[0]

    def encode(ids, att, types):
        """[CLS]'s last hidden state beside the pooler's output (B, 2H): what the sentence head reads."""
        out = model.bert(input_ids=ids, attention_mask=att, token_type_ids=types)
        return torch.cat([out.last_hidden_state[:, 0], out.pooler_output], dim=-1)

    def head_accuracy(p: pairs.Pairs) -> float:
        correct = 0
        for start in range(0, len(p), 256):
            part = p.subset(slice(start, start + 256))
            q = part.seqs
            _, sent = forward(
                q.input_ids.to(dev),
                q.attention_mask.to(dev),
                q.token_type_ids.to(dev),
                torch.zeros_like(q.input_ids, dtype=torch.bool, device=dev),
            )
            correct += int((sent.argmax(-1).cpu() == part.labels).sum())
        return correct / max(1, len(p))

    def scores(n_mlm: int, n_probe: int) -> dict:
        inorder = sets["valid"]["none"].seqs.subset(slice(0, n_mlm))
        r = units.masked_lm_eval(logits_at, inorder, None, tok.mask_token_id, device=dev)
        out = {"valid_loss": r["loss"], "valid_top1": r["top1"], "valid_top5": r["top5"]}
        for task in ("nsp", "sop"):
            fit, test = halves(sets["valid"][task], n_probe)
            out[f"{task}_probe"] = probes.logistic_probe(
                probes.features(encode, fit.seqs, device=dev),
                fit.labels,
                probes.features(encode, test.seqs, device=dev),
                test.labels,
            )["accuracy"]
            out[f"{task}_head"] = float("nan") if objective == "none" else head_accuracy(test)  # no head: null in JSON
        return out

    def evaluate():
        return scores(b.eval_sequences, min(EVAL_PROBE, b.probe_train))

    def final():
        return scores(b.final_sequences, b.probe_train)

    n_targets = expected_targets(seqs, b.batch_size)
    parts = flops.mlm_step(model.config, b.batch_size, b.data.seq_len, n_targets, pooler=True)
    if objective != "none":
        parts["sentence head"] = flops.TRAIN * b.batch_size * 2.0 * 2 * model.config.hidden_size
    return ArmSetup(
        model=model,
        step_loss=step_loss,
        evaluate=evaluate,
        final=final,
        cfg=b.loop(seed, dev),
        flops=parts,
        params=common.count_parameters(model),
        details={
            "train_pairs": len(train),
            "negatives": float(train.labels.float().mean()),
            "held_out_pairs": len(sets["valid"]["none"]),
        },
    )


# ----------------------------------------------------------------------------- the NSP / SOP stand-ins

CHECKPOINT_NAMES = {"nsp": "bert-nsp-tinystories", "sop": "bert-sop-tinystories"}


def card(objective: str, model, ctx: Context, final: dict, curves: dict) -> str:
    task = {
        "nsp": "next-sentence prediction (NSP: is B the text that follows A, or from another story?)",
        "sop": "sentence-order prediction (SOP: are A and B in their order, or swapped?)",
    }[objective]
    b = ctx.budget
    return f"""---
language: en
license: mit
library_name: transformers
tags: [bert, tiny, teaching, tinystories, {objective}]
datasets: [roneneldan/TinyStories]
---

# {CHECKPOINT_NAMES[objective]}

A tiny BERT (`BertForPreTraining`: the masked-LM head and the two-way sentence head) trained from scratch
by the BERT Variants Explorer's sentence-objective experiment. It stands in for
`google-bert/bert-base-uncased`, which is published with both heads (`BertForPreTraining`), for the
sentence-objectives lesson; it is made by (`python -m app.experiments run sentence`),
seed 0 of its `{objective}` arm: masked LM (dynamic 15%, 80/10/10) + {task}.

- Inputs: `[CLS] A [SEP] B [SEP]` with token types 0 / 1, at most {b.data.seq_len} tokens (it never saw longer pairs).
- The sentence head (`seq_relationship`): logit 0 = B continues A in order, logit 1 = it does not
  ({'B comes from another story' if objective == 'nsp' else 'A and B were swapped'}).
- Tokenizer: WordPiece, uncased, BERT's special tokens (`[PAD]=0 [UNK]=1 [CLS]=2 [SEP]=3 [MASK]=4`), \
{len(ctx.data.tokenizer)} pieces.
- Shape: {b.shape.num_hidden_layers} layers, hidden {b.shape.hidden_size}, {b.shape.num_attention_heads} heads,
  {common.count_parameters(model):,} parameters; {b.steps} steps at batch {b.batch_size}.
- Compute: {common.describe_compute(b.loop(0, ctx.device), curves)}.

Held-out (`tinystories_valid.txt`) numbers: \
{json.dumps({k: round(v, 4) for k, v in final.items() if isinstance(v, float)})}
"""


def after(arm: Arm, seed: int, s: ArmSetup, ctx: Context, folder: Path, final: dict, curves: dict) -> None:
    """Keep the seed-0 NSP and SOP models as Hugging Face checkpoints in their work folder, with their
    training curves (curves.json, as every bundled checkpoint has)."""
    objective = arm.change["objective"]
    if seed != 0 or objective not in CHECKPOINT_NAMES:
        return
    model = s.model.cpu().eval()
    model.config.architectures = ["BertForPreTraining"]
    common.save_checkpoint(
        model,
        ctx.data.tokenizer,
        folder / "checkpoint",
        {**curves, "final": final},
        card(objective, model, ctx, final, curves),
    )
    s.model.to(ctx.device)


def export_checkpoints(
    out: Path, quick: bool = False, device: str = "cpu", corpus=None, work: Path | None = None
) -> list[Path]:
    """Copy the seed-0 NSP and SOP checkpoints of the last ``run sentence`` to ``out/<name>``."""
    import sys

    from app.experiments import runner

    module = sys.modules[__name__]
    ctx = runner.context(
        "sentence",
        runner.budget_of(module, quick),
        device,
        corpus or runner.DEFAULT_CORPUS,
        work or runner.DEFAULT_WORK,
    )
    written = []
    for objective, name in CHECKPOINT_NAMES.items():
        src = ctx.work / objective / "seed0" / "checkpoint"
        if not (src / "config.json").exists():
            raise FileNotFoundError(f"{src} is missing: run the sentence experiment (seed 0 of {objective}) first")
        dst = Path(out) / name
        shutil.copytree(src, dst, dirs_exist_ok=True)
        written.append(dst)
    return written
