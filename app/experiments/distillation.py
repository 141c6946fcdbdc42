"""Distillation, replayed: a student on the teacher's soft targets vs the same student on hard labels
only vs the same model trained without a teacher, and the effect of the temperature T.

The claims (app/experiments/claims.py, ``DISTILLATION``):

- DistilBERT (Sanh et al., 2019), Table 4 (ablation, GLUE macro-score relative to the full recipe):
  without the soft-target loss L_ce −2.96; without the hidden-state cosine loss −1.46; without the
  masked-LM loss −0.31; random initialisation instead of the teacher's layers −3.69. It trains at T = 2.
- Hinton et al. (2015): soft targets at a raised temperature carry the teacher's "dark knowledge"
  (which wrong answers are nearly right); for small students intermediate temperatures work best.

The experiment is self-contained: it first trains its own teachers (each a 2× deeper ``BertForMaskedLM`` of the
same width, dynamic masking, ``common.train_dynamic_mlm``; see "Teachers" below) for 10× the students' steps,
so that each is clearly stronger than any student (DistilBERT's premise: a teacher much better than the student;
issue 26 found a 2000-step teacher at held-out top-1 0.20 under students at 0.28-0.32, and soft targets then pull
a student toward a worse model). The page sets each teacher's score beside its students'. Students are
DistilBERT's (``distilbert.student_from_teacher``: half the teacher's layers, initialised from every other teacher
layer); every arm trains for the same steps on the same batches with the
same 15% masking (80/10/10), and each comparison changes one thing:

| arm | initialisation | loss |
|---|---|---|
| soft_t1, soft_t2, soft_t4, soft_t8 | teacher's layers | 5 · T² · KL(teacher_T ‖ student_T) on every token + 2 · MLM¹ |
| hard | teacher's layers | 2 · MLM only |
| soft_t2_random | random (same shape) | as soft_t2: DistilBERT's "random initialisation" ablation |
| scratch | random (same shape) | 2 · MLM only: the student's size without a teacher (differs from soft_t2 in both) |

¹ MLM: the masked-LM loss on the hard labels at the targets.

The soft arms follow the recipe's loss (app/training/distilbert.py: α_ce = 5, α_mlm = 2) without its
cosine term, so that soft vs hard differs in the soft targets alone. They also run the teacher's forward at
every step: more compute per step than the hard arms (the page shows both arms' FLOPs per step). Judged on
held-out masked top-1 against the true token (token masking), which no arm trains on (the masked-LM loss is
the hard arm's own objective); also scored: masked-LM loss and top-5, the cloze probe, and how often the
student's top-1 agrees with the teacher's.

Teachers (issue 49; plan version 6, app/experiments/plans.py, fixed before its data). With one teacher, "soft
beats hard" or "starting from the teacher beats random" is shown for one teacher draw only. The budget's
``teachers`` (K; 1 by default, which keeps every earlier run reproducible: the plan's version 6 sets 2) trains K
teachers, teacher k with seed k (its initialisation, batch order and masks). Teacher k's folder key names k only
when k > 0, so teacher 0's folder and digest are those of the one teacher before. Student seed s distils teacher
s mod K — a nested design, seeds within teachers: with K = 2 and 10 seeds, 5 per teacher — and every arm of seed
s shares that teacher, so the paired comparisons still pair like with like. Each seed records which teacher it used
(``details.teacher``) and that teacher's own held-out scores (``details.teacher_final``); the page sets each
teacher's score beside its own students'.

- Verdicts: the seed-level paired test over all seeds stays the test (Holm as before). Then each teacher's seeds
  alone give a mean difference and its own 95% interval (app/experiments/verdict.py ``across_teachers``): a label
  (reproduces, reverses, equivalent) must hold with every teacher — a teacher whose mean lies on the other side
  of the boundary (the teachers disagree in sign), or whose own interval lies wholly there (it clearly
  contradicts), makes it "inconclusive: depends on the teacher". Why this and not a test of the between-teacher
  variance: with 2 teachers that variance has 1 degree of freedom (a t on two teacher means, t₀.₉₇₅(1) = 12.7),
  so it cannot be estimated usefully; what 2 teachers can show is whether the effect replicates with an
  independent teacher, in direction — not that each half of the seeds is significant alone, which 5 seeds
  rarely give.
- Health: "the teacher must be stronger than its students" is checked per seed against that seed's own teacher.
- Compute: each seed's recipe counts its own teacher's training once (app/experiments/results.py
  ``recipe_flops``); the experiment's total counts each teacher once (``teacher_flops``: ``count`` × one teacher).
  The teachers are independent: with ``--jobs`` > 1 they train at once (``prepare_parts``).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, replace
from typing import ClassVar
from pathlib import Path

import torch
from transformers import BertForMaskedLM, DistilBertForMaskedLM

from app.experiments.runner import (
    Arm,
    ArmSetup,
    Budget,
    Context,
    DataSpec,
    Shape,
    digest,
    eval_sets,
    expected_targets,
    mlm_scores,
    real_tokens,
)
from app.masking import MaskingConfig, mlm_batch
from app.training import bert, common, distilbert, flops, units


@dataclass(frozen=True)
class DistillationBudget(Budget):
    teacher_layers: int = 4  # the student has half
    teacher_steps: int = 10_000  # 10x the students' steps: a teacher clearly stronger than they get (2000: weaker)
    alpha_ce: float = distilbert.Recipe.alpha_ce
    alpha_mlm: float = distilbert.Recipe.alpha_mlm
    teachers: int = 1  # teacher k trains with seed k; student seed s distils teacher s % teachers (plan v6: 2)

    # added after runs were recorded: at 1 it is left out of the work folder's hash (runner.work_key), so a
    # 1-teacher budget keeps the folder its runs had before the field existed
    LATER_FIELDS: ClassVar[dict] = {"teachers": 1}


FULL = DistillationBudget(steps=1000, eval_every=200)
QUICK = DistillationBudget(
    data=DataSpec(vocab_size=600, seq_len=32, train_chars=60_000, valid_chars=30_000),
    shape=Shape(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64),
    steps=8,
    eval_every=4,
    batch_size=8,
    warmup=2,
    eval_sequences=16,
    final_sequences=32,
    teacher_layers=2,
    teacher_steps=10,
)
LIVE = replace(FULL, steps=400, eval_every=25, eval_sequences=128)
TEMPERATURES = (1.0, 2.0, 4.0, 8.0)


def arms(budget: DistillationBudget) -> list[Arm]:
    soft = [
        Arm(
            f"soft_t{t:g}",
            f"soft targets, T = {t:g}" + (" (DistilBERT)" if t == 2 else ""),
            {"targets": "soft + hard", "temperature": t, "init": "teacher"},
        )
        for t in TEMPERATURES
    ]
    return soft + [
        Arm(
            "hard",
            "hard labels only (masked LM), from the teacher's layers",
            {"targets": "hard", "temperature": None, "init": "teacher"},
        ),
        Arm(
            "soft_t2_random",
            "soft targets, T = 2, from random weights",
            {"targets": "soft + hard", "temperature": 2.0, "init": "random"},
        ),
        Arm(
            "scratch",
            "no teacher: the same shape from random weights, masked LM",
            {"targets": "hard", "temperature": None, "init": "random"},
        ),
    ]


# ----------------------------------------------------------------------------- the teacher


def teacher_of(seed: int, budget: DistillationBudget) -> int:
    """The teacher student seed ``seed`` distils: ``seed % teachers`` (seeds nested within teachers)."""
    return seed % max(1, budget.teachers)


def teacher_folder(ctx: Context, k: int = 0) -> Path:
    """Teacher ``k``'s folder. Its key names ``k`` only when k > 0, so teacher 0's folder (and digest) is the one the
    single teacher of every earlier run had."""
    b = ctx.budget
    key = {
        "data": b.data,
        "shape": b.shape,
        "layers": b.teacher_layers,
        "steps": b.teacher_steps,
        "batch": b.batch_size,
        "lr": b.lr,
        "warmup": b.warmup,
    }
    if k > 0:
        key["teacher"] = k
    return ctx.root / "distillation" / f"teacher-{digest(key)}"


def new_teacher(ctx: Context, k: int = 0) -> BertForMaskedLM:
    """Teacher ``k``, untrained: its initialisation drawn from seed ``k`` (teacher 0: seed 0, as before)."""
    b, s, tok = ctx.budget, ctx.budget.shape, ctx.data.tokenizer
    torch.manual_seed(k)
    shape = bert.Shape(
        vocab_size=len(tok),
        hidden_size=s.hidden_size,
        num_hidden_layers=b.teacher_layers,
        num_attention_heads=s.num_attention_heads,
        intermediate_size=s.intermediate_size,
    )
    return BertForMaskedLM(bert.bert_config(len(tok), shape))


def train_teacher(ctx: Context, k: int = 0) -> None:
    """Train teacher ``k`` once (resumable): its own seed ``k`` for the initialisation, the batch order and the
    masks."""
    folder = teacher_folder(ctx, k)
    if (folder / "model" / "config.json").exists():
        return
    b, tok = ctx.budget, ctx.data.tokenizer
    teacher = new_teacher(ctx, k)
    cfg = b.loop(k, ctx.device, steps=b.teacher_steps, eval_every=max(1, b.teacher_steps // 4))
    during, final_set = eval_sets(ctx)
    name = "distillation/teacher" + (f"{k}" if k else "")
    curves, final = common.train_dynamic_mlm(
        name, teacher, bert.masked_lm_logits, tok, ctx.data.train, final_set, cfg, folder
    )
    teacher.save_pretrained(folder / "model")
    (folder / "model" / "final.json").write_text(
        json.dumps({"final": final, "steps": curves["steps_done"], "train_seconds": curves["train_seconds"], "seed": k})
    )
    (folder / "state.pt").unlink(missing_ok=True)


def prepare(ctx: Context) -> None:
    """Train every teacher once (resumable), before any student: each student seed distils its own teacher."""
    for k in range(max(1, ctx.budget.teachers)):
        train_teacher(ctx, k)


def prepare_parts(ctx: Context) -> list[int]:
    """The teachers not trained yet: independent, so ``--jobs`` trains them at once (runner.run_experiment)."""
    return [
        k for k in range(max(1, ctx.budget.teachers)) if not (teacher_folder(ctx, k) / "model" / "config.json").exists()
    ]


def prepare_part(ctx: Context, k: int) -> None:
    train_teacher(ctx, k)


def time_prepare(ctx: Context, steps: int, jobs: int = 1) -> float:
    """Wall seconds the teachers would take before any student (app/experiments/timing.py), from ``steps`` timed
    steps of teacher 0's training: ``jobs`` teachers at once, in ⌈teachers / jobs⌉ rounds (their CPU time is
    ``teachers`` × one teacher's); an untrained teacher stands in for the students' timing."""
    from app.experiments import timing
    from app.experiments.runner import ArmSetup

    b, tok, dev = ctx.budget, ctx.data.tokenizer, ctx.device
    teacher = new_teacher(ctx).to(dev)
    train, rand_ids, mcfg = ctx.data.train, ctx.data.random_ids(), MaskingConfig()

    def step_loss(step, gen):
        idx = common.shuffled_batch(len(train), b.batch_size, step, 0)
        x, y = mlm_batch(train.input_ids[idx], train.maskable[idx], tok.mask_token_id, rand_ids, mcfg, gen)
        targets = (y != -100).to(dev)
        logits = bert.masked_lm_logits(teacher, x.to(dev), train.attention_mask[idx].to(dev), targets)
        return torch.nn.functional.cross_entropy(logits, y.to(dev)[targets]), {}

    s = ArmSetup(teacher, step_loss, dict, dict, b.loop(0, dev, steps=b.teacher_steps), {}, 0)
    step_s = timing.time_steps(s, steps)
    n = max(1, b.teachers)
    for k in range(n):  # every student distils this one stand-in while timing
        ctx.cache[_key("teacher", k)] = teacher.eval().requires_grad_(False)
        ctx.cache[_key("teacher_final", k)] = {"final": {}, "steps": 0}
    at_once = max(1, min(n, jobs))  # --jobs trains the teachers at once (runner.run_experiment)
    return math.ceil(n / at_once) * b.teacher_steps * step_s * 1.05  # + their four evaluations, about 5%


def _key(what: str, k: int) -> str:
    """The context cache's key of teacher ``k``'s model or scores ("teacher", "teacher1", ...)."""
    return what if k == 0 else f"{what}{k}"


def load_teacher(ctx: Context, k: int = 0) -> BertForMaskedLM:
    folder = teacher_folder(ctx, k) / "model"
    if not (folder / "config.json").exists():
        raise FileNotFoundError(
            f"no teacher {k} at {folder}: run the distillation experiment (it trains its teachers first)"
        )
    teacher = BertForMaskedLM.from_pretrained(folder).eval()
    for p in teacher.parameters():
        p.requires_grad_(False)
    return teacher


# ----------------------------------------------------------------------------- the students


def setup(arm: Arm, seed: int, ctx: Context) -> ArmSetup:
    b, tok, dev = ctx.budget, ctx.data.tokenizer, ctx.device
    train, rand_ids, mcfg = ctx.data.train, ctx.data.random_ids(), MaskingConfig()
    k = teacher_of(seed, b)  # this seed's teacher
    teacher = ctx.once(_key("teacher", k), lambda: load_teacher(ctx, k)).to(dev)
    student = distilbert.student_from_teacher(teacher.cpu())
    teacher.to(dev)
    if arm.change["init"] == "random":
        torch.manual_seed(seed)
        student = DistilBertForMaskedLM(student.config)
    student.to(dev)
    t = arm.change["temperature"]
    soft = arm.change["targets"] == "soft + hard"

    def step_loss(step, gen):
        idx = common.shuffled_batch(len(train), b.batch_size, step, seed)
        att = train.attention_mask[idx].to(dev)
        ids, labels = mlm_batch(train.input_ids[idx], train.maskable[idx], tok.mask_token_id, rand_ids, mcfg, gen)
        ids, labels = ids.to(dev), labels.to(dev)
        if not soft:
            targets = labels != -100
            s_logits, _ = distilbert.student_logits(student, ids, att, targets)
            mlm = torch.nn.functional.cross_entropy(s_logits, labels[targets])
            return b.alpha_mlm * mlm, {"mlm": float(mlm.detach())}
        real = att.bool()  # soft targets on every real token, as DistilBERT does
        with torch.no_grad():
            t_hidden = teacher.bert(input_ids=ids, attention_mask=att).last_hidden_state  # (B, T, H)
            t_logits = teacher.cls(t_hidden[real])  # (n_real, V): the teacher's head at the real tokens only
        s_logits, s_hidden = distilbert.student_logits(student, ids, att, real)
        # in float32: from bfloat16 logits the KL is off by ~1% (negative near convergence at T = 8)
        terms = distilbert.distillation_losses(
            s_logits.float(), t_logits.float(), labels[real], s_hidden[real], t_hidden[real], t
        )
        return b.alpha_ce * terms["kl"] + b.alpha_mlm * terms["mlm"], {
            "kl": float(terms["kl"].detach()),
            "mlm": float(terms["mlm"].detach()),
        }

    def logits_at(ids, att, targets, types=None):
        return distilbert.student_logits(student, ids, att, targets)[0]

    def teacher_at(ids, att, targets, types=None):
        return bert.masked_lm_logits(teacher, ids, att, targets)

    def agreement(seqs) -> float:
        """Share of held-out targets where the student's top-1 is the teacher's."""
        gen = torch.Generator().manual_seed(1234)
        cfg = MaskingConfig(mask_fraction=1.0, random_fraction=0.0)
        same = total = 0
        for s in range(0, len(seqs), 128):
            part = seqs.subset(slice(s, s + 128))
            x, y = units.unit_batch(
                "token", part.input_ids, part.maskable, None, tok.mask_token_id, torch.tensor([0]), cfg, gen
            )
            targets = (y != -100).to(dev)
            x, att = x.to(dev), part.attention_mask.to(dev)
            same += int((logits_at(x, att, targets).argmax(-1) == teacher_at(x, att, targets).argmax(-1)).sum())
            total += int(targets.sum())
        return same / max(total, 1)

    during, final_set = eval_sets(ctx)

    def final():
        out = mlm_scores(logits_at, final_set, ctx)
        out["teacher_agreement"] = agreement(final_set)
        student.cpu()
        out.update(common.cloze_top5(student, tok))
        student.to(dev)
        return out

    n_scored = real_tokens(train, b.batch_size) if soft else expected_targets(train, b.batch_size)
    teacher_final = ctx.once(
        _key("teacher_final", k), lambda: json.loads((teacher_folder(ctx, k) / "model" / "final.json").read_text())
    )
    return ArmSetup(
        model=student,
        step_loss=step_loss,
        evaluate=lambda: mlm_scores(logits_at, during, ctx),
        final=final,
        cfg=b.loop(seed, dev),
        flops=flops.distillation_step(
            student.config, teacher.config, b.batch_size, b.data.seq_len, n_scored, teacher=soft
        ),
        params=common.count_parameters(student),
        details={
            "teacher_params": common.count_parameters(teacher),
            "teacher_layers": teacher.config.num_hidden_layers,
            "student_layers": student.config.n_layers,
            "teacher_final": teacher_final["final"],
            "teacher_steps": teacher_final["steps"],
            "teacher": k,  # which teacher this seed distilled (teacher k trained with seed k)
            "teachers": max(1, b.teachers),
        },
    )
