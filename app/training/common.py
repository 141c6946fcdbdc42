"""What every recipe shares: the resumable training loop, masked-token evaluation, saving, model cards."""

from __future__ import annotations

import json
import math
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable

import torch
from torch import nn

from app.masking import MaskingConfig, corrupt, select_token_targets


@dataclass(frozen=True)
class LoopConfig:
    steps: int = 6000
    batch_size: int = 32
    seq_len: int = 128  # = the bundled models' position limit, so every position they accept was trained
    lr: float = 8e-4
    warmup: int = 300
    weight_decay: float = 0.01
    eval_every: int = 250
    time_budget_s: float = 1e9  # stop early (and save) once this much training time has been spent
    seed: int = 0
    device: str = "cpu"
    # "bf16": the forward and backward run under bfloat16 autocast (weights, optimizer and evaluation stay
    # float32). On a CPU with AMX/AVX512-bf16 that is ~1.5-2x faster; on a GPU it is the usual mixed precision.
    precision: str = "bf16"


def autocast(cfg: LoopConfig):
    """The mixed-precision context of a training step (a no-op for precision="fp32")."""
    device_type = cfg.device.split(":")[0]
    return torch.autocast(device_type=device_type, dtype=torch.bfloat16, enabled=cfg.precision == "bf16")


def lr_at(step: int, cfg: LoopConfig) -> float:
    """Linear warm-up, then cosine decay to a tenth of the peak at ``cfg.steps``."""
    if step < cfg.warmup:
        return cfg.lr * (step + 1) / cfg.warmup
    progress = min(1.0, (step - cfg.warmup) / max(1, cfg.steps - cfg.warmup))
    return cfg.lr * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * progress)))


def batch_generator(cfg: LoopConfig, step: int) -> torch.Generator:
    """Each step's randomness depends on (seed, step) only, so a resumed run draws the same batches."""
    return torch.Generator().manual_seed(cfg.seed * 1_000_003 + step)


def train_loop(
    name: str,
    model: nn.Module,
    step_loss: Callable[[int, torch.Generator], tuple[torch.Tensor, dict[str, float]]],
    evaluate: Callable[[], dict[str, float]],
    cfg: LoopConfig,
    work: Path,
    stop_when: Callable[[dict[str, float]], bool] | None = None,
) -> dict:
    """Train ``model`` for ``cfg.steps`` steps (or until the time budget), resuming from ``work``.

    ``step_loss(step, gen)`` draws a batch and returns (loss, numbers to log). ``evaluate()`` returns
    held-out metrics; it runs every ``cfg.eval_every`` steps with the model in eval mode.
    ``stop_when(metrics)``, if given, ends training at the first evaluation it accepts (early stopping on
    held-out metrics; the learning-rate schedule stays the one of ``cfg.steps``); ``curves["stopped_at"]``
    records the step, and a resumed run does not train on.
    Returns the curves: {"step": [...], "train_loss": [...], "eval_step": [...], <metric>: [...]}.
    """
    work.mkdir(parents=True, exist_ok=True)
    state_path = work / "state.pt"
    decay = [p for n, p in model.named_parameters() if p.ndim >= 2]
    no_decay = [p for n, p in model.named_parameters() if p.ndim < 2]
    opt = torch.optim.AdamW(
        [{"params": decay, "weight_decay": cfg.weight_decay}, {"params": no_decay, "weight_decay": 0.0}],
        lr=cfg.lr,
        betas=(0.9, 0.98),
        eps=1e-6,
    )
    step, spent, curves = 0, 0.0, {"step": [], "train_loss": [], "eval_step": []}
    if state_path.exists():
        state = torch.load(state_path, map_location=cfg.device, weights_only=False)
        model.load_state_dict(state["model"])
        opt.load_state_dict(state["opt"])
        step, spent, curves = state["step"], state["spent"], state["curves"]
        print(f"[{name}] resumed at step {step} ({spent:.0f} s spent)", flush=True)
        before = state.get("config", {}).get("steps")
        if before is not None and before != cfg.steps and step < cfg.steps:  # an extension: a new schedule's total
            runs = curves.setdefault("runs", [{"to_step": before, "threads": None}])
            runs.append({"from_step": step, "to_step": cfg.steps, "threads": torch.get_num_threads()})

    def save_state():
        torch.save(
            {
                "model": model.state_dict(),
                "opt": opt.state_dict(),
                "step": step,
                "spent": spent,
                "curves": curves,
                "config": asdict(cfg),
            },
            state_path,
        )

    model.train()
    first_step = step
    t_last_save = time.time()
    window: list[float] = []
    while step < cfg.steps and spent < cfg.time_budget_s and "stopped_at" not in curves:
        t0 = time.time()
        for group in opt.param_groups:
            group["lr"] = lr_at(step, cfg)
        with autocast(cfg):
            loss, logs = step_loss(step, batch_generator(cfg, step))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        step += 1
        spent += time.time() - t0
        window.append(float(loss.detach()))
        if step % 20 == 0:
            curves["step"].append(step)
            curves["train_loss"].append(sum(window) / len(window))
            window = []
        if step % cfg.eval_every == 0 or step == cfg.steps:
            model.eval()
            with torch.no_grad():
                metrics = evaluate()
            model.train()
            curves["eval_step"].append(step)
            for k, v in metrics.items():
                curves.setdefault(k, []).append(v)
            extra = " ".join(f"{k}={v:.3f}" for k, v in {**logs, **metrics}.items())
            print(f"[{name}] step {step} loss {float(loss.detach()):.3f} {extra} ({spent:.0f} s)", flush=True)
            if stop_when is not None and stop_when(metrics):
                curves["stopped_at"] = step
                print(f"[{name}] stopped early at step {step}", flush=True)
        if time.time() - t_last_save > 120:
            save_state()
            t_last_save = time.time()
    if step > first_step:  # what trained these steps, for the card and the README's table (a resume may move)
        devices = curves.setdefault("devices", [])
        if not devices or devices[-1] != device_label(cfg.device):
            devices.append(device_label(cfg.device))
    save_state()
    model.eval()
    curves["steps_done"] = step
    curves["train_seconds"] = spent
    return curves


def masked_topk(
    logits_at: Callable[[torch.Tensor, torch.Tensor, torch.Tensor], torch.Tensor],
    seqs,
    mask_token_id: int,
    mlm_probability: float = 0.15,
    batch_size: int = 128,
    seed: int = 1234,
    device: str = "cpu",
) -> dict[str, float]:
    """Top-1/top-5 accuracy at masked positions: ``mlm_probability`` of the maskable tokens are
    replaced by the mask token (all of them, no 10/10 noise), with a fixed seed.

    ``logits_at(corrupted_ids, attention_mask, targets)`` returns (n_targets, V) logits in the order
    of ``targets.nonzero()``.
    """
    gen = torch.Generator().manual_seed(seed)
    cfg = MaskingConfig(mlm_probability=mlm_probability, mask_fraction=1.0, random_fraction=0.0)
    hits1 = hits5 = total = 0
    for start in range(0, len(seqs), batch_size):
        ids = seqs.input_ids[start : start + batch_size]
        att = seqs.attention_mask[start : start + batch_size]
        targets = select_token_targets(seqs.maskable[start : start + batch_size], mlm_probability, gen)
        corrupted, _ = corrupt(ids, targets, mask_token_id, torch.tensor([0]), cfg, gen)
        logits = logits_at(corrupted.to(device), att.to(device), targets.to(device)).cpu()  # (n, V)
        gold = ids[targets]  # (n,)
        top5 = logits.topk(5, dim=-1).indices
        hits1 += int((top5[:, 0] == gold).sum())
        hits5 += int((top5 == gold[:, None]).any(-1).sum())
        total += int(gold.numel())
    return {"top1": hits1 / max(total, 1), "top5": hits5 / max(total, 1), "n_targets": total}


def unigram_baseline(train_seqs, valid_seqs, vocab_size: int) -> dict[str, float]:
    """Always guess the training set's most frequent tokens; scored on the held-out maskable tokens."""
    counts = torch.bincount(train_seqs.input_ids[train_seqs.maskable], minlength=vocab_size)
    top5 = counts.topk(5).indices
    gold = valid_seqs.input_ids[valid_seqs.maskable]
    return {"top1": float((gold == top5[0]).float().mean()), "top5": float(torch.isin(gold, top5).float().mean())}


def count_parameters(model: nn.Module) -> int:
    return sum(p.numel() for p in {id(p): p for p in model.parameters()}.values())


def save_checkpoint(model: nn.Module, tokenizer, out: Path, curves: dict, card: str) -> None:
    """Hugging Face format (safetensors + config + tokenizer), the curves, and the model card.

    Weights are stored as float16 (half the bytes: assets/ stays small) while config.json says float32,
    so ``from_pretrained`` and ``pipeline(...)`` load float32 on any machine (float16 keeps ~3 significant
    digits of every weight: no measurable change in the held-out numbers)."""
    import copy

    out.mkdir(parents=True, exist_ok=True)
    copy.deepcopy(model).to(torch.float16).save_pretrained(out)
    config_file = out / "config.json"
    config = json.loads(config_file.read_text())
    config["dtype"] = "float32"
    config_file.write_text(json.dumps(config, indent=2, sort_keys=True) + "\n")
    tokenizer.save_pretrained(out)
    (out / "curves.json").write_text(json.dumps(curves, indent=1))
    (out / "README.md").write_text(card)


def cloze_top5(model: nn.Module, tokenizer, permutation: bool = False) -> dict[str, float]:
    """The project's content-word cloze set (app/cloze.py): top-5 hit rate, overall and per part of speech."""
    from app import cloze

    r = cloze.evaluate(model, tokenizer, cloze.load_items(), k=5, permutation=permutation)
    return {"cloze_top5": r.rate, **{f"cloze_top5_{p}": v for p, v in r.as_dict()["by_pos"].items()}}


def processor_name() -> str:
    """The CPU's model name (from /proc/cpuinfo on Linux), for model cards and benchmark rows."""
    import platform

    try:
        for line in open("/proc/cpuinfo", encoding="utf-8"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def describe_runs(cfg: LoopConfig, curves: dict, rebuild: str, default_steps: int | None = None) -> str:
    """The card's schedule and rebuild lines: one run of ``cfg.steps`` (with ``--steps`` in the rebuild command
    when that is not the recipe's own ``default_steps``), or, when later runs extended a finished one with a
    larger ``--steps`` (``curves["runs"]``, recorded by train_loop), each total in turn."""
    runs = curves.get("runs") or []
    schedule = f"AdamW, peak learning rate {cfg.lr}, warm-up {cfg.warmup} steps, cosine decay to a tenth"
    if len(runs) < 2:
        steps = f" --steps {cfg.steps}" if default_steps is not None and cfg.steps != default_steps else ""
        return f"- Optimiser: {schedule}\n- Rebuild: `{rebuild}{steps}`"
    totals = [r["to_step"] for r in runs]
    starts = [str(r["from_step"]) for r in runs[1:]]
    restarts = starts[0] if len(starts) == 1 else ", ".join(starts[:-1]) + " and " + starts[-1]
    threads = "; ".join(
        f"to {r['to_step']} on {r['threads']} thread{'s' if r['threads'] != 1 else ''}"
        for r in runs
        if r.get("threads")
    )
    return (
        f"- Optimiser: {schedule} over each run's total: trained to {totals[0]} steps, then extended "
        + ", then ".join(f"to {t}" for t in totals[1:])
        + f" by resuming, and each extension recomputed the cosine over its new total, so the learning rate "
        f"rose again at step{'s' if len(runs) > 2 else ''} {restarts} (warm restart{'s' if len(runs) > 2 else ''})"
        + (f" ({threads})" if threads else "")
        + "\n"
        + f"- Rebuild: `{rebuild} --steps {totals[0]}`, then the same with "
        + ", then ".join(f"`--steps {t}`" for t in totals[1:])
        + " (each resumes the work folder)"
    )


def describe_compute(cfg: LoopConfig, curves: dict) -> str:
    """Steps, tokens seen, device and time, for the model card."""
    steps = curves.get("steps_done", 0)
    counts = sorted({r["threads"] for r in curves.get("runs") or [] if r.get("threads")} | {torch.get_num_threads()})
    threads = "–".join(map(str, counts))
    if cfg.device == "cpu":
        machine = f"CPU, {threads} thread{'s' if counts != [1] else ''} ({processor_name()})"
    else:
        machine = f"GPU ({device_name(cfg.device)}; host {processor_name()})"
    return (
        f"{steps} steps at batch {cfg.batch_size} × {cfg.seq_len} tokens "
        f"({steps * cfg.batch_size * cfg.seq_len / 1e6:.1f} M "
        f"token positions seen), {'bf16 autocast' if cfg.precision == 'bf16' else 'float32'}, "
        f"{curves.get('train_seconds', 0) / 60:.0f} min of training on "
        f"{machine}"
    )


def _gpu_name(device: str) -> str | None:
    """A CUDA device's name ("NVIDIA H100 80GB HBM3"), None for any other device."""
    if device.startswith("cuda") and torch.cuda.is_available():
        return torch.cuda.get_device_name(torch.device(device))
    return None


def device_label(device: str) -> str:
    """A short name of a training device for tables: "CPU", or the GPU's name ("H100 80GB HBM3 GPU")."""
    gpu = _gpu_name(device)
    return "CPU" if device == "cpu" else gpu.removeprefix("NVIDIA ") + " GPU" if gpu else device


def device_name(device: str) -> str:
    """What a training device is, for model cards: a CUDA device's name and CUDA version ("NVIDIA H100 80GB HBM3,
    CUDA 13.0"), else the device string as given."""
    gpu = _gpu_name(device)
    return f"{gpu}, CUDA {torch.version.cuda}" if gpu else device


def recipe_steps(recipe: str) -> int | None:
    """The step count recipe ``recipe`` (``python -m app.training --recipe``) trains for unless ``--steps`` says
    otherwise; None for a name that is not a recipe module with a ``LOOP``."""
    import importlib

    try:
        return importlib.import_module(f"app.training.{recipe.replace('-', '_')}").LOOP.steps
    except (ImportError, AttributeError):
        return None


def model_card(
    *,
    name: str,
    family: str,
    stands_in_for: str,
    recipe: str,
    model: nn.Module,
    cfg: LoopConfig,
    curves: dict,
    metrics: dict,
    baseline: dict | None,
    corpus: str,
    notes: str = "",
    recipe_name: str = "",
    starts_from: str | None = None,
) -> str:
    """A model card in the Hugging Face format: front matter, what it is, how it was trained, quality.
    ``starts_from``: what a recipe that does not train from scratch starts from (its card says so)."""
    rows = "\n".join(f"| {k} | {v:.4f} |" if isinstance(v, float) else f"| {k} | {v} |" for k, v in metrics.items())
    base = ""
    if baseline:
        base = "\n\nUnigram-frequency baseline (always guess the most frequent training tokens): " + ", ".join(
            f"{k} {v:.4f}" for k, v in baseline.items()
        )
    return f"""---
language: en
license: mit
library_name: transformers
tags: [{family}, tiny, teaching, tinystories]
datasets: [roneneldan/TinyStories]
---

# {name}

A tiny **{family}** trained {
        f"by this project's own recipe from {starts_from},"
        if starts_from
        else "from scratch by this project's own recipe,"
    } bundled with the BERT Variants
Explorer so that every lesson works offline on a CPU. It stands in for `{stands_in_for}` and follows
the same conventions (tokenizer, special tokens, model class), so the app's code serves both.
It is a teaching model: it knows simple children's-story English and little else.

## Training

- Recipe: {recipe}
- Corpus: {corpus} (TinyStories, Eldan & Li 2023, CDLA-Sharing-1.0)
- Parameters: {count_parameters(model):,}
- Compute: {describe_compute(cfg, curves)}
{
        describe_runs(
            cfg,
            curves,
            f"python -m app.training --recipe {recipe_name or family} --corpus ../shared/corpus --out assets/models",
            recipe_steps(recipe_name or family),
        )
    }

## Quality

Held-out text is `tinystories_valid.txt`; the cloze set is `tests/data/cloze.jsonl` (content words —
nouns, verbs, adjectives — blanked in sentences written for this project; top-5 hit rate).

| metric | value |
|---|---|
{rows}{base}

Training curves (loss and the held-out metric by step) are in `curves.json`.
{notes}
"""


def cached(path: Path, build: Callable[[], object]):
    """Load ``path`` if an earlier run (or resume) made it, else build and save it."""
    if path.exists():
        return torch.load(path, weights_only=False)
    obj = build()
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.save(obj, path)
    return obj


def cached_tokenizer(work: Path, build: Callable[[], object]):
    """The tokenizer is built once per work folder so that a resumed run keeps the same vocabulary."""
    from transformers import AutoTokenizer

    folder = work / "tokenizer"
    if (folder / "tokenizer_config.json").exists():
        return AutoTokenizer.from_pretrained(folder)
    tok = build()
    tok.save_pretrained(folder)
    return AutoTokenizer.from_pretrained(folder)


def shuffled_batch(n: int, batch_size: int, step: int, seed: int) -> torch.Tensor:
    """Indices of the step-th batch of a pass over n items in an order reshuffled every epoch."""
    per_epoch = max(1, n // batch_size)
    epoch, k = divmod(step, per_epoch)
    order = torch.randperm(n, generator=torch.Generator().manual_seed(seed * 7919 + epoch))
    return order[k * batch_size : (k + 1) * batch_size]


def mlm_evaluation(logits_at, model: nn.Module, tok, seqs, device: str = "cpu") -> dict[str, float]:
    """Masked top-1/top-5 on ``seqs`` (``masked_topk``) and the cloze set's numbers, of ``model`` whose logits at
    the targets ``logits_at(model, ids, attention_mask, targets)`` gives: the evaluation of every masked-LM recipe."""
    r = masked_topk(lambda i, a, t: logits_at(model, i, a, t), seqs, tok.mask_token_id, device=device)
    return {**r, **cloze_top5(model, tok)}


def train_masked_lm(
    name: str, model: nn.Module, evaluation, step_loss_of, valid, cfg: LoopConfig, work: Path
) -> tuple[dict, dict]:
    """Training (``step_loss_of(model)`` gives the step) evaluated on 256 held-out sequences, then the held-out and
    cloze numbers on the CPU. ``evaluation(model, seqs, device)`` gives {"top1", "top5", "n_targets", cloze...}
    (``mlm_evaluation`` for a masked LM). Returns (curves, final metrics); the model ends on the CPU in eval
    mode."""
    model.to(cfg.device)
    eval_set = valid.subset(slice(0, 256))

    def evaluate():
        r = evaluation(model, eval_set, cfg.device)
        del r["n_targets"]
        return {"valid_top1": r.pop("top1"), "valid_top5": r.pop("top5"), **r}

    curves = train_loop(name, model, step_loss_of(model), evaluate, cfg, work)
    model.cpu()
    with torch.no_grad():
        final = evaluation(model, valid, "cpu")
    return curves, final


def masked_lm_evaluation(logits_at, tok):
    """``evaluation(model, seqs, device)`` of a masked LM whose logits at the targets ``logits_at`` gives."""
    return lambda model, seqs, device: mlm_evaluation(logits_at, model, tok, seqs, device)


def train_dynamic_mlm(
    name: str, model: nn.Module, logits_at, tok, train, valid, cfg: LoopConfig, work: Path
) -> tuple[dict, dict]:
    """Masked-LM training with a fresh 15% mask (80/10/10) every batch — RoBERTa's dynamic masking, also
    DeBERTa's and ModernBERT's objective — then the held-out and cloze numbers. ``logits_at(model, ids,
    attention_mask, targets)`` returns (n_targets, V) logits in the order of ``targets.nonzero()``.
    Returns (curves, final metrics); the model ends on the CPU in eval mode."""
    step_loss_of = lambda m: dynamic_mlm_step(m, logits_at, tok, train, cfg)  # noqa: E731
    return train_masked_lm(name, model, masked_lm_evaluation(logits_at, tok), step_loss_of, valid, cfg, work)


def dynamic_mlm_step(model: nn.Module, logits_at, tok, train, cfg: LoopConfig):
    """``step_loss(step, gen)`` with a fresh 15% mask (80/10/10) every batch — RoBERTa's dynamic masking, also
    DeBERTa's and ModernBERT's. ``logits_at(model, ids, attention_mask, targets)`` returns (n_targets, V) logits."""
    from app.masking import mlm_batch
    from app.training import data

    mcfg, rand_ids = MaskingConfig(), data.random_ids(tok)

    def step_loss(step, gen):
        idx = shuffled_batch(len(train), cfg.batch_size, step, cfg.seed)
        ids, labels = mlm_batch(train.input_ids[idx], train.maskable[idx], tok.mask_token_id, rand_ids, mcfg, gen)
        ids, labels = ids.to(cfg.device), labels.to(cfg.device)
        targets = labels != -100
        logits = logits_at(model, ids, train.attention_mask[idx].to(cfg.device), targets)
        return torch.nn.functional.cross_entropy(logits, labels[targets]), {}

    return step_loss
