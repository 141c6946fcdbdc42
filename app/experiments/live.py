"""A small experiment run live: the two arms of a claim trained side by side for a minute, seeded,
cancellable, one at a time per server (per deployment with several app processes: ``BVE_REDIS_URL``). Pure: no
streamlit (the page draws what :func:`live_run` reports).

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
- ``on_step(arm: str, step: int, point: dict)`` (optional): after every training step, with the step's
  ``train_loss`` (the arm's own objective), ``flops`` and ``elapsed_s`` — a curve that moves between
  evaluations.
- :class:`Busy` when another live run holds the lock; :class:`Unavailable` when the run cannot start
  (no corpus; the distillation pair needs the experiment's teacher, trained by its full run).
- Before the first run the data is prepared once (tokenizer and sequences, ~10-20 s on a CPU, cached
  under ``.train/experiments``). That time counts in ``seconds``: the budget is the wall time from the
  call to the last point, so "at most 60 s" holds from the click. Call :func:`prepare` first (e.g. at
  start-up) to leave the whole minute to training.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable

from app.core import locks
from app.experiments import get, runner

LOCK = locks.lock(
    "live-run"
)  # one live run at a time: in this process, or in Redis for the deployment (app.core.locks)


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
        raise Unavailable(
            f"the training text is not on this machine ({corpus}): a live run needs the TinyStories corpus"
        )
    module = get(name).load()
    ctx = runner.context(name, runner.budget_of(module, live=True), device, corpus, Path(work))
    if name == "distillation":
        from app.experiments import distillation

        if not (distillation.teacher_folder(ctx) / "model" / "config.json").exists():
            raise Unavailable(
                "the distillation pair needs the experiment's teacher: run "
                "`python -m app.experiments run distillation` once"
            )
    return module, ctx


def live_run(
    name: str,
    seconds: float = 60.0,
    progress: Callable[[int, dict], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
    seed: int = 0,
    device: str = "cpu",
    corpus=runner.DEFAULT_CORPUS,
    work: Path = runner.DEFAULT_WORK,
    turn_s: float = 2.0,
    pair: tuple[str, str] | None = None,
    on_step: Callable[[str, int, dict], None] | None = None,
) -> LiveResult:
    """Train the experiment's live pair (``Experiment.live_pair``) for at most ``seconds`` of wall time."""
    try:
        if not LOCK.acquire(blocking=False, about=name):
            raise Busy("a live run is already in progress on this server; try again when it has finished")
    except locks.Unreachable as e:
        raise Unavailable(str(e)) from e
    try:
        return _run(name, seconds, progress, should_stop, seed, device, corpus, work, turn_s, pair, on_step)
    finally:
        LOCK.release()


def _run(name, seconds, progress, should_stop, seed, device, corpus, work, turn_s, pair, on_step=None) -> LiveResult:
    # The budget is the wall time from the click to the last point: preparing the data (the first run's
    # ~10 s), building the arms and the evaluations are in it, and training stops early enough to leave
    # the closing evaluation its time (measured on the step-0 evaluation).
    start = time.time()
    deadline = start + seconds
    module, ctx = prepare(name, corpus, work, device)
    pair = pair or get(name).live_pair
    by_name = {a.name: a for a in module.arms(ctx.budget)}
    result = LiveResult(name, tuple(pair), {a: {} for a in pair})
    Path(work).mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=f"live-{name}-", dir=Path(work)))
    runs: dict[str, _Run] = {}
    try:
        for arm_name in pair:
            arm = by_name[arm_name]
            s = module.setup(arm, seed, ctx)
            runs[arm_name] = _Run(arm_name, arm.label, s, scratch / arm_name)
        closing = 0.0  # seconds the closing evaluation of every arm takes, as the step-0 one did
        for r in runs.values():  # the untrained models: step 0
            t0 = time.time()
            r.report(0, r.evaluate_now(), start, seconds, progress, result)
            closing += time.time() - t0
        train_until = deadline - closing
        while time.time() < train_until:
            active = [r for r in runs.values() if r.step < r.setup.cfg.steps]
            if not active:
                result.finished = True
                break
            for r in active:
                left = train_until - time.time()
                if left <= 0:
                    break
                r.train(min(turn_s, left), start, seconds, progress, should_stop, result, on_step)
        for (
            r
        ) in runs.values():  # where the time ran out between two evaluations: one more, so every arm ends on a point
            if r.reported != r.step:
                r.report(r.step, r.evaluate_now(), start, seconds, progress, result)
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
        self.step, self.spent, self.reported = 0, 0.0, None  # reported: the last step evaluated

    def evaluate_now(self) -> dict:
        import torch

        self.setup.model.eval()
        with torch.no_grad():
            out = self.setup.evaluate()
        self.setup.model.train()
        return out

    def report(self, step, metrics, start, seconds, progress, result):
        self.reported = step
        point = {
            "arm": self.name,
            "label": self.label,
            **metrics,
            "flops": step * self.setup.flops_per_step,
            "elapsed_s": round(time.time() - start, 2),
            "fraction": min(1.0, (time.time() - start) / seconds),
        }
        series = result.points[self.name]
        series.setdefault("step", []).append(step)
        for k, v in point.items():
            if k not in ("arm", "label"):
                series.setdefault(k, []).append(v)
        if progress:
            progress(step, point)

    def train(self, budget_s, start, seconds, progress, should_stop, result, on_step=None):
        from app.training import common

        s = self.setup

        def step_loss(step, gen):
            if should_stop and should_stop():
                raise Cancelled()
            self.step = step + 1
            out = s.step_loss(step, gen)
            if on_step:
                on_step(
                    self.name,
                    self.step,
                    {
                        "train_loss": float(out[0].detach()),
                        "flops": self.step * s.flops_per_step,
                        "elapsed_s": round(time.time() - start, 2),
                    },
                )
            return out

        def evaluate():
            metrics = s.evaluate()
            self.report(self.step, metrics, start, seconds, progress, result)
            return metrics

        cfg = replace(s.cfg, time_budget_s=self.spent + budget_s)
        curves = common.train_loop(f"live/{self.name}", s.model, step_loss, evaluate, cfg, self.folder)
        self.spent = curves["train_seconds"]
        self.step = curves["steps_done"]
        s.model.train()


# ----------------------------------------------------------------------------- the server's one background run
#
# A Streamlit page must not train in its script thread (every rerun would wait, and a visitor leaving would
# kill the run). ``BACKGROUND`` is the one live run of this server process: ``start`` trains the pair in a
# daemon thread through :func:`live_run` (so ``LOCK`` still makes it one at a time), every visitor's page
# polls ``snapshot()`` (a copy: the steps, the curves so far, the time used, how it ended), and ``cancel``
# sets the stop flag the loop checks before every step.
#
# Who may cancel: only the visitor who started the run (``owner``, an opaque token the page keeps per
# browser session). With a class watching one run — often the lecturer's, on the projector — any student's
# click would end it for everyone; and an abandoned run costs nothing lasting, since it stops by itself
# within ``MAX_SECONDS``.

MAX_SECONDS = 60.0  # of training wall time: a live run never takes longer
STATES = ("idle", "preparing", "running", "finished", "cancelled", "error")


@dataclass
class Progress:
    """What every visitor sees of the server's live run (a copy; the background thread keeps the original).

    points[arm]: {"step": [...], "flops": [...], "elapsed_s": [...], <metric>: [...]} — one entry per
    evaluation, step 0 first; training[arm]: {"step", "train_loss", "flops"} — one entry per training step
    (the arm's own objective: not comparable across arms whose losses differ); labels[arm]: the arm's label."""

    run_id: int = 0
    experiment: str = ""
    arms: tuple[str, ...] = ()
    labels: dict[str, str] = field(default_factory=dict)
    seed: int = 0
    seconds: float = 0.0  # the training budget it was given
    owner: str = ""
    state: str = "idle"  # one of STATES
    started: float = 0.0  # time.time() when it was started (data preparation included)
    elapsed: float = 0.0  # seconds of the training budget used so far
    fraction: float = 0.0  # elapsed / seconds, in [0, 1]
    points: dict[str, dict[str, list]] = field(default_factory=dict)
    training: dict[str, dict[str, list]] = field(default_factory=dict)
    steps: dict[str, int] = field(default_factory=dict)
    message: str = ""  # why it could not run (state "error")

    @property
    def active(self) -> bool:
        return self.state in ("preparing", "running")

    def describe(self, viewer: str = "") -> str:
        """One sentence about this run for ``viewer`` (an owner token): what, whose, how far."""
        if self.state == "idle":
            return "No live run has been started on this server yet."
        who = "you" if viewer and viewer == self.owner else "another visitor"
        pair = " vs ".join(self.labels.get(a, a) for a in self.arms)
        since = max(0.0, time.time() - self.started)
        head = f"The live run of {self.experiment} ({pair}, seed {self.seed}) started {since:.0f} s ago by {who}"
        if self.state == "preparing":
            return f"{head} is preparing its data; then it trains for at most {self.seconds:.0f} s."
        if self.state == "running":
            return f"{head} is training: {self.elapsed:.0f} of at most {self.seconds:.0f} s used."
        if self.state == "error":
            return f"{head} could not run: {self.message}"
        return f"{head} was {self.state} after {self.elapsed:.0f} s of training."


class Background:
    """The server's one live run, in a background thread. ``corpus``, ``work``, ``device`` and ``turn_s``
    are where and how it trains (tests point them at a small corpus).

    ``threads``: torch threads of the training thread (1). The setting is the thread's own (OpenMP keeps it
    per thread; the pages' threads keep theirs): one core trains, the other stays for the pages of everyone
    watching. Measured on a busy 2-core machine, two threads made the live run ~20× slower, fighting the
    other processes for both cores."""

    def __init__(self):
        self._guard = threading.Lock()  # guards _progress and _stop
        self._progress = Progress()
        self._stop = threading.Event()
        # BVE_CORPUS / BVE_EXPERIMENTS_WORK: where a host keeps the training text and the live runs' state
        self.corpus = Path(os.environ.get("BVE_CORPUS") or runner.DEFAULT_CORPUS)
        self.work = Path(os.environ.get("BVE_EXPERIMENTS_WORK") or runner.DEFAULT_WORK)
        self.device, self.turn_s = "cpu", 2.0
        self.threads = 1

    def snapshot(self) -> Progress:
        """A copy of the current (or last) run's progress: safe to read while it trains."""
        import copy

        with self._guard:
            return copy.deepcopy(self._progress)

    def start(self, name: str, seed: int, seconds: float, owner: str) -> Progress:
        """Start training experiment ``name``'s live pair for at most ``seconds`` (capped at MAX_SECONDS),
        seeded. Raises :class:`Busy`, saying who runs what, while a run is in progress."""
        pair = get(name).live_pair
        module = get(name).load()
        labels = {a.name: a.label for a in module.arms(module.LIVE) if a.name in pair}
        with self._guard:
            if self._progress.active:
                raise Busy(self._progress.describe(owner))
            try:
                held = LOCK.about()  # a live_run called directly (a script, a test), or another app process's run
            except locks.Unreachable as e:
                raise Busy(f"The live run cannot start: {e}.") from e
            if held is not None:
                raise Busy(
                    "A live run" + (f" ({held})" if held else "") + " is already in progress on this server; "
                    "try again when it has finished."
                )
            run_id = self._progress.run_id + 1
            seconds = float(min(max(seconds, 1.0), MAX_SECONDS))
            self._progress = Progress(
                run_id, name, tuple(pair), labels, int(seed), seconds, owner, "preparing", time.time()
            )
            self._stop = threading.Event()
            stop = self._stop
        threading.Thread(
            target=self._work,
            args=(run_id, name, int(seed), seconds, stop),
            daemon=True,
            name=f"bve-live-{name}-{run_id}",
        ).start()
        return self.snapshot()

    def cancel(self, owner: str) -> bool:
        """Stop the run if ``owner`` started it and it is still going; whether it was asked to stop."""
        with self._guard:
            if not self._progress.active or owner != self._progress.owner:
                return False
            self._stop.set()
            return True

    def _work(self, run_id: int, name: str, seed: int, seconds: float, stop: threading.Event) -> None:
        def progress(step: int, point: dict) -> None:
            with self._guard:
                p = self._progress
                if p.run_id != run_id:
                    return
                p.state = "running"
                arm = point["arm"]
                p.labels[arm] = point.get("label", arm)
                series = p.points.setdefault(arm, {"step": []})
                series["step"].append(step)
                for k, v in point.items():
                    if k not in ("arm", "label"):
                        series.setdefault(k, []).append(v)
                p.steps[arm] = max(step, p.steps.get(arm, 0))
                p.elapsed = max(p.elapsed, float(point.get("elapsed_s", p.elapsed)))
                p.fraction = max(p.fraction, float(point.get("fraction", p.fraction)))

        def on_step(arm: str, step: int, point: dict) -> None:
            with self._guard:
                p = self._progress
                if p.run_id != run_id:
                    return
                series = p.training.setdefault(arm, {"step": [], "train_loss": [], "flops": []})
                series["step"].append(step)
                series["train_loss"].append(point["train_loss"])
                series["flops"].append(point["flops"])
                p.steps[arm] = step
                p.elapsed = float(point["elapsed_s"])
                p.fraction = min(1.0, p.elapsed / p.seconds) if p.seconds else 1.0

        try:
            import torch

            torch.set_num_threads(self.threads)  # this thread's own (see the class text)
            result = live_run(
                name,
                seconds,
                progress,
                stop.is_set,
                seed,
                self.device,
                self.corpus,
                self.work,
                self.turn_s,
                on_step=on_step,
            )
        except (Busy, Unavailable) as e:
            self._finish(run_id, "error", message=str(e))
        except Exception as e:  # a page shows the message, never a traceback
            self._finish(run_id, "error", message=f"{type(e).__name__}: {e}")
        else:
            self._finish(run_id, "cancelled" if result.cancelled else "finished", result)

    def _finish(self, run_id: int, state: str, result: LiveResult | None = None, message: str = "") -> None:
        with self._guard:
            p = self._progress
            if p.run_id != run_id:
                return
            p.state, p.message = state, message
            if result is not None:
                p.elapsed = result.seconds
                p.fraction = min(1.0, result.seconds / p.seconds) if p.seconds else 1.0
                p.steps = dict(result.steps)


BACKGROUND = Background()


def availability(name: str, corpus=None, work: Path | None = None) -> str | None:
    """Why experiment ``name`` cannot run live here (plain words), or None when it can — cheap: no data
    is prepared. (No corpus on a host that ships only the app; the distillation pair needs the full run's
    teacher.)"""
    corpus = Path(corpus if corpus is not None else BACKGROUND.corpus)
    work = Path(work if work is not None else BACKGROUND.work)
    if not corpus.exists():
        return (
            f"the training text is not on this machine ({corpus}): a live run needs the TinyStories corpus "
            "(see ../shared/corpus/README.md)"
        )
    if name == "distillation":
        from types import SimpleNamespace

        from app.experiments import distillation

        teacher = distillation.teacher_folder(SimpleNamespace(budget=distillation.LIVE, root=work))
        if not (teacher / "model" / "config.json").exists():
            return (
                "the distillation pair needs the experiment's teacher, trained once by "
                "`python -m app.experiments run distillation`"
            )
    return None


def new_owner() -> str:
    """An opaque token that names one visitor's session as a run's owner (who may cancel it)."""
    import secrets

    return secrets.token_hex(8)
