"""A small experiment run live: the two arms of a claim trained side by side for a minute, seeded,
cancellable, one at a time per process. Pure: no streamlit (the page draws what :func:`live_run` reports).

How it trains: each arm is set up exactly as in the full experiment (its module's ``setup`` with the
``LIVE`` budget: the same model and data, fewer steps, smaller evaluation sets) and trained by
``app.training.common.train_loop`` in turns of ``turn_s`` seconds — the loop's own time budget and
resume — so both curves grow together. Each evaluation (every ``eval_every`` steps, and before the
first step) calls ``progress(step, metrics)``; ``should_stop()`` is checked before every step.

The page's contract::

    from app.experiments import live
    result = live.live_run("masking", seconds=60, seed=0, progress=on_point, should_stop=lambda: flag)

- ``on_point(step: int, metrics: dict)``: metrics holds ``arm`` (the arm's name), ``label``, the arm's
  evaluation metrics (e.g. ``valid_loss``, ``valid_top1``; ``probe_acc`` for ELECTRA), ``flops`` (training
  FLOPs spent by that arm so far), ``elapsed_s`` (since the start) and ``fraction`` (of the time budget).
- The return value (:class:`LiveResult`): per arm the same points as lists, whether it was cancelled
  or ran out of time, and the seconds spent.
- :class:`Busy` when another live run holds the lock; :class:`Unavailable` when the run cannot start
  (no corpus; the distillation pair needs the experiment's teacher, trained by its full run).
- Before the first run the data is prepared once (tokenizer and sequences, ~10-20 s on a CPU, cached
  under ``.train/experiments``): call :func:`prepare` first (e.g. behind a spinner) to keep it out of the
  minute.
"""

from __future__ import annotations

import shutil
import tempfile
import threading
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable

from app.experiments import get, runner

LOCK = threading.Lock()


class Busy(RuntimeError):
    """Another live run is in progress (one at a time per server)."""


class Unavailable(RuntimeError):
    """The live run cannot start here; the message says why, in plain words."""


class Cancelled(Exception):
    pass


@dataclass
class LiveResult:
    experiment: str
    arms: tuple[str, str]
    points: dict[str, dict[str, list]] = field(default_factory=dict)  # arm -> {"step": [...], metric: [...]}
    seconds: float = 0.0
    cancelled: bool = False
    finished: bool = False  # both arms reached the live budget's steps
    steps: dict[str, int] = field(default_factory=dict)


def prepare(name: str, corpus=runner.DEFAULT_CORPUS, work: Path = runner.DEFAULT_WORK, device: str = "cpu"):
    """The live run's data (and checks): a Context for the experiment's LIVE budget."""
    corpus = Path(corpus)
    if not corpus.exists():
        raise Unavailable(f"the training text is not on this machine ({corpus}): a live run needs the TinyStories corpus")
    module = get(name).load()
    ctx = runner.context(name, runner.budget_of(module, live=True), device, corpus, Path(work))
    if name == "distillation":
        from app.experiments import distillation

        if not (distillation.teacher_folder(ctx) / "model" / "config.json").exists():
            raise Unavailable("the distillation pair needs the experiment's teacher: run "
                              "`python -m app.experiments run distillation` once")
    return module, ctx


def live_run(name: str, seconds: float = 60.0, progress: Callable[[int, dict], None] | None = None,
             should_stop: Callable[[], bool] | None = None, seed: int = 0, device: str = "cpu",
             corpus=runner.DEFAULT_CORPUS, work: Path = runner.DEFAULT_WORK, turn_s: float = 2.0,
             pair: tuple[str, str] | None = None) -> LiveResult:
    """Train the experiment's live pair (``Experiment.live_pair``) for at most ``seconds`` of wall time."""
    if not LOCK.acquire(blocking=False):
        raise Busy("a live run is already in progress on this server; try again when it has finished")
    try:
        return _run(name, seconds, progress, should_stop, seed, device, corpus, work, turn_s, pair)
    finally:
        LOCK.release()


def _run(name, seconds, progress, should_stop, seed, device, corpus, work, turn_s, pair) -> LiveResult:
    module, ctx = prepare(name, corpus, work, device)
    pair = pair or get(name).live_pair
    by_name = {a.name: a for a in module.arms(ctx.budget)}
    result = LiveResult(name, tuple(pair), {a: {} for a in pair})
    start = time.time()
    deadline = start + seconds
    Path(work).mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=f"live-{name}-", dir=Path(work)))
    runs: dict[str, _Run] = {}
    try:
        for arm_name in pair:
            arm = by_name[arm_name]
            s = module.setup(arm, seed, ctx)
            runs[arm_name] = _Run(arm_name, arm.label, s, scratch / arm_name)
        for r in runs.values():  # the untrained models: step 0
            r.report(0, r.evaluate_now(), start, seconds, progress, result)
        while time.time() < deadline:
            active = [r for r in runs.values() if r.step < r.setup.cfg.steps]
            if not active:
                result.finished = True
                break
            for r in active:
                left = deadline - time.time()
                if left <= 0:
                    break
                r.train(min(turn_s, left), start, seconds, progress, should_stop, result)
    except Cancelled:
        result.cancelled = True
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    result.seconds = time.time() - start
    result.steps = {n: r.step for n, r in runs.items()}
    return result


class _Run:
    """One arm of a live run: its setup, where its loop state lives, how far it got."""

    def __init__(self, name: str, label: str, setup: runner.ArmSetup, folder: Path):
        self.name, self.label, self.setup, self.folder = name, label, setup, folder
        self.step, self.spent = 0, 0.0

    def evaluate_now(self) -> dict:
        import torch

        self.setup.model.eval()
        with torch.no_grad():
            out = self.setup.evaluate()
        self.setup.model.train()
        return out

    def report(self, step, metrics, start, seconds, progress, result):
        point = {"arm": self.name, "label": self.label, **metrics, "flops": step * self.setup.flops_per_step,
                 "elapsed_s": round(time.time() - start, 2), "fraction": min(1.0, (time.time() - start) / seconds)}
        series = result.points[self.name]
        series.setdefault("step", []).append(step)
        for k, v in point.items():
            if k not in ("arm", "label"):
                series.setdefault(k, []).append(v)
        if progress:
            progress(step, point)

    def train(self, budget_s, start, seconds, progress, should_stop, result):
        from app.training import common

        s = self.setup

        def step_loss(step, gen):
            if should_stop and should_stop():
                raise Cancelled()
            self.step = step + 1
            return s.step_loss(step, gen)

        def evaluate():
            metrics = s.evaluate()
            self.report(self.step, metrics, start, seconds, progress, result)
            return metrics

        cfg = replace(s.cfg, time_budget_s=self.spent + budget_s)
        curves = common.train_loop(f"live/{self.name}", s.model, step_loss, evaluate, cfg, self.folder)
        self.spent = curves["train_seconds"]
        self.step = curves["steps_done"]
        s.model.train()
