"""Running an experiment: the shared toy setup (data, model shape, budget), every arm × seed through
``app.training.common.train_loop`` (resumable), and the JSON of results.

An experiment module provides:

- ``FULL``, ``QUICK`` and ``LIVE``: its :class:`Budget` (what the bundled results, the tests' smoke run and
  the page's live run train for);
- ``arms(budget) -> list[Arm]``: the arms, each with the one setting it changes (``Arm.change``);
- ``setup(arm, seed, ctx) -> ArmSetup``: the model, the step loss and the evaluations of one arm;
- optionally ``prepare(ctx)`` (something all arms need first: DistilBERT's teachers), with
  ``prepare_parts(ctx) -> list`` and ``prepare_part(ctx, part)`` where it splits into independent parts that
  ``--jobs`` trains at once (one teacher each), and
  ``after(arm, seed, setup, ctx, folder, final, curves)`` (something to keep from a finished run: the NSP/SOP
  checkpoints).

Work folders: ``<work>/<experiment>/<budget hash>/<arm>/seed<k>/`` hold the loop's ``state.pt`` while a
run trains and ``result.json`` once it is done, so ``run`` again skips finished runs and resumes the
rest; a changed budget gets a new folder, never a stale state.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import subprocess
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable

import torch
from torch import nn

from app.experiments import get, results
from app.models import device as devices
from app.training import common, data, probes, units

REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_CORPUS = REPO_ROOT.parent / "shared" / "corpus"
DEFAULT_WORK = REPO_ROOT / ".train" / "experiments"
DEFAULT_OUT = REPO_ROOT / "assets" / "experiments"


@dataclass(frozen=True)
class DataSpec:
    """The text every arm trains on: a WordPiece vocabulary (BERT's conventions, uncased) built on the
    training file, and sequences of ``seq_len`` tokens packed from whole sentences within a story."""

    vocab_size: int = 4096
    seq_len: int = 64
    train_chars: int | None = None  # read only the first this many characters (None: the whole file)
    valid_chars: int | None = None


@dataclass(frozen=True)
class Shape:
    """The toy encoder every arm of an experiment shares (BERT's names)."""

    hidden_size: int = 128
    num_hidden_layers: int = 2
    num_attention_heads: int = 4
    intermediate_size: int = 512


@dataclass(frozen=True)
class Budget:
    data: DataSpec = DataSpec()
    shape: Shape = Shape()
    steps: int = 1000
    eval_every: int = 100
    batch_size: int = 32
    lr: float = 1e-3
    warmup: int = 100
    eval_sequences: int = 256  # held-out sequences scored at every evaluation during training
    final_sequences: int = 2000  # held-out sequences behind the final numbers
    probe_train: int = 1000  # sentences (or pairs) the probes are fitted on ...
    probe_test: int = 1000  # ... and scored on (held-out text, disjoint)

    def loop(self, seed: int, device: str, **over) -> common.LoopConfig:
        base = dict(
            steps=self.steps,
            batch_size=self.batch_size,
            seq_len=self.data.seq_len,
            lr=self.lr,
            warmup=min(self.warmup, max(1, self.steps // 10)),
            eval_every=self.eval_every,
            seed=seed,
            device=device,
        )
        return common.LoopConfig(**{**base, **over})


@dataclass(frozen=True)
class Arm:
    name: str
    label: str
    change: dict = field(default_factory=dict)  # the setting(s) this arm differs in; everything else is the budget's


@dataclass
class ArmSetup:
    """What the runner needs to train and score one arm × seed."""

    model: nn.Module
    step_loss: Callable[[int, torch.Generator], tuple[torch.Tensor, dict]]
    evaluate: Callable[[], dict[str, float]]  # cheap, every eval_every steps
    final: Callable[[], dict[str, float]]  # the final numbers, once at the end
    cfg: common.LoopConfig
    flops: dict[str, float]  # training FLOPs per step, by part
    params: int
    details: dict = field(default_factory=dict)  # anything else worth recording (configs, realised rates)

    @property
    def flops_per_step(self) -> float:
        return float(sum(self.flops.values()))


@dataclass
class Data:
    tokenizer: object
    train: data.Sequences  # (N, T) single segment: [CLS] x [SEP]
    valid: data.Sequences
    train_encoded: list  # per story, per sentence, ids (for the two-segment inputs)
    valid_encoded: list
    valid_stories: list[str]  # held-out stories as text (for the acceptability probe)
    starts: torch.Tensor  # (V,) bool: the piece starts a word

    def words(self, seqs: data.Sequences) -> torch.Tensor:
        return units.word_index(seqs.input_ids, seqs.maskable, self.starts)

    def random_ids(self) -> torch.Tensor:
        return data.random_ids(self.tokenizer)


@dataclass
class Context:
    experiment: str
    budget: Budget
    data: Data
    device: str
    work: Path  # <work>/<experiment>/<budget hash>
    root: Path  # <work>: shared things (data, DistilBERT's teacher) live here
    cache: dict = field(default_factory=dict)  # built once per context: probe sets, training subsets

    def once(self, key: str, build: Callable[[], object]):
        if key not in self.cache:
            self.cache[key] = build()
        return self.cache[key]


def digest(obj) -> str:
    """A short stable hash of a dataclass or dict (the work folder of a budget)."""
    payload = json.dumps(asdict(obj) if hasattr(obj, "__dataclass_fields__") else obj, sort_keys=True, default=str)
    return hashlib.sha1(payload.encode()).hexdigest()[:10]


def work_key(budget: Budget) -> dict:
    """What names a budget's work folder: its fields, less those added after runs were recorded (a budget class's
    ``LATER_FIELDS``, {field: the value every earlier run had}) while they keep that value — so a budget that
    gains a field keeps the folder its earlier runs trained in (distillation's ``teachers`` at 1)."""
    key = asdict(budget)
    for name, before in getattr(type(budget), "LATER_FIELDS", {}).items():
        if key.get(name) == before:
            key.pop(name)
    return key


# ----------------------------------------------------------------------------- data


def prepare_data(corpus: str | Path, spec: DataSpec, work: Path) -> Data:
    """Tokenizer and sequences, built once per (corpus, spec) under ``work/data/<hash>`` and loaded after."""
    train_file, valid_file = data.corpus_files(corpus)
    folder = Path(work) / "data" / digest({**asdict(spec), "corpus": str(Path(corpus).resolve())})
    folder.mkdir(parents=True, exist_ok=True)

    def vocabulary_source() -> Path:
        if spec.train_chars is None:
            return train_file
        part = folder / "train_part.txt"
        part.write_text(train_file.read_text(encoding="utf-8")[: spec.train_chars], encoding="utf-8")
        return part

    tok = common.cached_tokenizer(folder, lambda: data.build_wordpiece(vocabulary_source(), spec.vocab_size))

    def encode():
        valid_stories = data.read_stories(valid_file, spec.valid_chars)
        return {
            "train": data.encode_sentences(tok, data.read_stories(train_file, spec.train_chars)),
            "valid": data.encode_sentences(tok, valid_stories),
            "valid_stories": valid_stories,
        }

    enc = common.cached(folder / "encoded.pt", encode)

    def single(stories):
        return data.single_segment(tok, data.pack(stories, spec.seq_len - 2, False), spec.seq_len)

    train = common.cached(folder / "train.pt", lambda: single(enc["train"]))
    valid = common.cached(folder / "valid.pt", lambda: single(enc["valid"]))
    return Data(tok, train, valid, enc["train"], enc["valid"], enc["valid_stories"], units.word_starts(tok))


def expected_targets(seqs: data.Sequences, batch_size: int, p: float = 0.15) -> float:
    """Masked-LM targets in a batch, on average: p × the maskable tokens of batch_size sequences."""
    return p * float(seqs.maskable.sum()) / max(1, len(seqs)) * batch_size


def real_tokens(seqs: data.Sequences, batch_size: int) -> float:
    """Non-padding tokens in a batch, on average."""
    return float(seqs.attention_mask.sum()) / max(1, len(seqs)) * batch_size


# ----------------------------------------------------------------------------- evaluations every experiment shares

PROBE_SEQ_LEN = 40  # the acceptability sentences have at most 16 words


def acceptability(ctx: Context, live: bool = False) -> probes.ProbeSet:
    """The acceptability probe's held-out sentences (the same for every arm and seed of a budget)."""
    b = ctx.budget
    return ctx.once(
        "acceptability",
        lambda: probes.acceptability_pairs(
            ctx.data.tokenizer,
            ctx.data.valid_stories,
            min(PROBE_SEQ_LEN, b.data.seq_len),
            b.probe_train,
            b.probe_test,
            seed=0,
        ),
    )


def mlm_scores(
    logits_at, seqs: data.Sequences, ctx: Context, unit: str = "token", prefix: str = "valid"
) -> dict[str, float]:
    """Held-out masked-LM loss, top-1 and top-5 under ``unit`` masking, keyed ``<prefix>_loss`` etc."""
    words = None if unit == "token" else ctx.data.words(seqs)
    r = units.masked_lm_eval(logits_at, seqs, words, ctx.data.tokenizer.mask_token_id, unit=unit, device=ctx.device)
    return {f"{prefix}_loss": r["loss"], f"{prefix}_top1": r["top1"], f"{prefix}_top5": r["top5"]}


def eval_sets(ctx: Context) -> tuple[data.Sequences, data.Sequences]:
    """(the held-out sequences scored during training, those behind the final numbers)."""
    v = ctx.data.valid
    return v.subset(slice(0, ctx.budget.eval_sequences)), v.subset(slice(0, ctx.budget.final_sequences))


# ----------------------------------------------------------------------------- one arm × seed


def run_one(module, arm: Arm, seed: int, ctx: Context) -> dict:
    """Train one arm with one seed (resuming), score it, and return its record (also kept as result.json)."""
    folder = ctx.work / arm.name / f"seed{seed}"
    done = folder / "result.json"
    if done.exists():
        return json.loads(done.read_text())
    folder.mkdir(parents=True, exist_ok=True)
    t0 = time.time()
    s = module.setup(arm, seed, ctx)
    first = folder / "step0.json"
    if not (folder / "state.pt").exists():
        s.model.eval()
        with torch.no_grad():
            first.write_text(json.dumps(s.evaluate()))
    step0 = json.loads(first.read_text()) if first.exists() else {}
    curves = common.train_loop(
        f"{ctx.experiment}/{arm.name}/seed{seed}", s.model, s.step_loss, s.evaluate, s.cfg, folder
    )
    s.model.eval()
    with torch.no_grad():
        final = s.final()
    if hasattr(module, "after"):
        module.after(arm, seed, s, ctx, folder, final, curves)
    record = {
        "seed": seed,
        "curves": results.seed_curves(curves, step0, s.flops_per_step),
        "final": final,
        "steps": curves["steps_done"],
        "train_seconds": round(curves["train_seconds"], 2),
        "wall_seconds": round(time.time() - t0, 2),
        "params": s.params,
        "flops_per_step": s.flops_per_step,
        "flops_parts": s.flops,
        "details": s.details,
        "git": ctx.cache.get("git"),  # the code this arm × seed trained with (a resumed run may span commits)
    }
    done.write_text(json.dumps(record, default=float))
    (folder / "state.pt").unlink(missing_ok=True)  # the result is kept; the optimizer state is not needed
    return record


def context(name: str, budget: Budget, device: str, corpus, work: Path) -> Context:
    d = prepare_data(corpus, budget.data, work)
    return Context(name, budget, d, device, Path(work) / name / digest(work_key(budget)), Path(work))


def budget_of(module, quick: bool = False, live: bool = False) -> Budget:
    return module.LIVE if live else module.QUICK if quick else module.FULL


def planned_budget(name: str, module, quick: bool = False) -> Budget:
    """The budget a run trains at: the module's FULL (or QUICK, its scale for a smoke run) with the settings the
    current plan fixes (app/experiments/plans.py ``Plan.settings``: distillation's version 6 sets ``teachers`` = 2).
    A quick run follows the plan's design too, at the quick scale."""
    from dataclasses import fields, replace

    from app.experiments import plans

    budget = budget_of(module, quick)
    known = {f.name for f in fields(budget)}
    settings = {k: v for k, v in plans.current(name).budget_settings().items() if k in known}
    return replace(budget, **settings) if settings else budget


_WORKER_CONTEXTS: dict[tuple, Context] = {}


def _worker(
    name: str,
    quick: bool,
    arm_name: str,
    seed: int,
    device: str,
    corpus: str,
    work: str,
    threads: int,
    code: dict | None = None,
) -> dict:
    """One arm × seed in a worker process (``--jobs``): the data and prerequisites are already on disk; a
    worker keeps its context (data, pairs, probe sets) for the next run it is given."""
    torch.set_num_threads(threads)
    module = get(name).load()
    key = (name, quick, device, corpus, work)
    if key not in _WORKER_CONTEXTS:
        _WORKER_CONTEXTS.clear()
        _WORKER_CONTEXTS[key] = context(name, planned_budget(name, module, quick), device, corpus, Path(work))
        _WORKER_CONTEXTS[key].cache["git"] = code or git_revision()
        if hasattr(module, "prepare"):
            module.prepare(_WORKER_CONTEXTS[key])
    ctx = _WORKER_CONTEXTS[key]
    arm = next(a for a in module.arms(ctx.budget) if a.name == arm_name)
    return run_one(module, arm, seed, ctx)


def _prepare_worker(name: str, quick: bool, part, device: str, corpus: str, work: str, threads: int) -> None:
    """One independent part of an experiment's prerequisites (``module.prepare_part``: one of distillation's
    teachers) in a worker process; the data is already on disk."""
    torch.set_num_threads(threads)
    module = get(name).load()
    module.prepare_part(context(name, planned_budget(name, module, quick), device, corpus, Path(work)), part)


class Refused(RuntimeError):
    """A run the plan or the tree does not allow (the message says why and what to do)."""


def check_run(name: str, seeds: int | None, quick: bool, allow_dirty: bool, code: dict) -> int:
    """The seeds a run uses, after the two rules every run that writes results obeys:

    - **the plan fixed before the data** (app/experiments/plans.py): a full run uses the current plan's seeds (the
      default) and refuses another count — a change is a new plan version, dated, not a command-line flag;
    - **no results from uncommitted code**: a full run refuses a tree with changes to ``app/`` (tracked or new
      files), since its results could not be traced to a commit. ``allow_dirty`` is for quick (smoke and test)
      runs only, which never write the bundled results.
    """
    from app.experiments import plans

    if allow_dirty and not quick:
        raise Refused("--allow-dirty is for --quick runs only: a full run's results must come from committed code")
    if code.get("dirty") and not allow_dirty:
        raise Refused(
            "uncommitted changes under app/ (git status app): commit them first, so the results can be "
            "traced to the code that made them" + (" (or pass --allow-dirty to a --quick run)" if quick else "")
        )
    if quick:
        return seeds or 1
    planned = plans.current(name).seeds
    if seeds is not None and seeds != planned:
        raise Refused(
            f"the plan for {name} (version {plans.current(name).version}, app/experiments/plans.py) says "
            f"{planned} seeds, not {seeds}: a change of plan is a new version there, dated, before the run"
        )
    return planned


def run_experiment(
    name: str,
    seeds: int | None = None,
    device: str = "cpu",
    quick: bool = False,
    corpus=DEFAULT_CORPUS,
    work: Path = DEFAULT_WORK,
    out: Path = DEFAULT_OUT,
    jobs: int = 1,
    threads: int | None = None,
    command: str = "",
    arms: list[str] | None = None,
    allow_dirty: bool = False,
) -> Path:
    """Every arm × seed (resuming), then ``<out>/<name>.json``. Returns that path. ``seeds``: the plan's when
    None (a quick run: 1); refused when the plan or the tree does not allow the run (:func:`check_run`)."""
    started = time.time()
    code = git_revision()  # the code that runs is the code at the start: what is committed later is not in it
    seeds = check_run(name, seeds, quick, allow_dirty, code)
    command = command or " ".join(
        ["python -m app.experiments run", name, f"--seeds {seeds}", f"--device {device}"]
        + (["--quick"] if quick else [])
        + ([f"--jobs {jobs}"] if jobs > 1 else [])
        + ([f"--arms {' '.join(arms)}"] if arms else [])
    )
    from app.experiments import plans

    module = get(name).load()
    ctx = context(name, planned_budget(name, module, quick), device, corpus, Path(work))
    ctx.cache["git"] = code
    parts = module.prepare_parts(ctx) if jobs > 1 and hasattr(module, "prepare_parts") else []
    if len(parts) > 1:  # independent prerequisites (distillation's teachers): one per process, at once
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(min(jobs, len(parts)), mp_context=multiprocessing.get_context("spawn")) as pool:
            for fut in [
                pool.submit(_prepare_worker, name, quick, part, device, str(corpus), str(work), threads or 1)
                for part in parts
            ]:
                fut.result()
    if hasattr(module, "prepare"):
        module.prepare(ctx)  # what is left of it (nothing, after the parts)
    chosen = [a for a in module.arms(ctx.budget) if arms is None or a.name in arms]
    # seed by seed (every arm of seed 0, then of seed 1, ...): a run stopped part-way leaves complete pairs
    tasks = [(arm, seed) for seed in range(seeds) for arm in chosen]
    records: dict[str, dict[int, dict]] = {a.name: {} for a in chosen}
    if jobs > 1:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("spawn")) as pool:
            futures = {
                pool.submit(_worker, name, quick, arm.name, seed, device, str(corpus), str(work), threads or 1, code): (
                    arm,
                    seed,
                )
                for arm, seed in tasks
            }
            for fut, (arm, seed) in futures.items():
                records[arm.name][seed] = fut.result()
    else:
        for arm, seed in tasks:
            records[arm.name][seed] = run_one(module, arm, seed, ctx)
    doc = results.assemble(
        name=name,
        claim=get(name).claim.as_dict(),
        arms=chosen,
        records=records,
        budget=asdict(ctx.budget),
        meta=meta(command, device, started, jobs, (threads or 1) if jobs > 1 else threads, code),
        quick=quick,
        plan=plans.record(name),
    )
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{name}.json"
    results.write(doc, path)
    return path


# ----------------------------------------------------------------------------- provenance


def git_revision() -> dict:
    def git(*args):
        try:
            return subprocess.run(
                ["git", *args], cwd=REPO_ROOT, capture_output=True, text=True, timeout=10
            ).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            return ""

    # dirty: uncommitted changes to what an experiment runs (app/, the lessons' libraries and the training code),
    # a new file there included (it may be imported); an edit elsewhere (a benchmark script, the README) does not
    # change a result
    return {
        "revision": git("rev-parse", "HEAD") or None,
        "dirty": bool(git("status", "--porcelain", "--untracked-files=all", "--", "app")),
    }


def device_description(device: str, threads: int | None = None) -> str:
    if device.startswith("cuda") and devices.cuda_available():
        return f"{device} ({torch.cuda.get_device_name(torch.device(device))})"
    cpu = platform.processor() or platform.machine()
    return f"cpu ({os.cpu_count()} cores, {threads or torch.get_num_threads()} threads per run, {cpu})"


def meta(
    command: str, device: str, started: float, jobs: int = 1, threads: int | None = None, code: dict | None = None
) -> dict:
    return {
        "command": command,
        "git": code or git_revision(),
        "device": device_description(device, threads),
        "jobs": jobs,
        "torch": torch.__version__,
        "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started)),
        "finished": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "wall_seconds": round(time.time() - started, 1),
    }
