"""What a loaded model costs on this machine, measured here rather than quoted from papers: its size
(distinct parameters, bytes held, layers, word-embedding parameters) and the latency of its forward pass.

Timing takes the models in turns (a, b, c, a, b, c, ...) after untimed warm-up rounds, so a burst of
background load falls on every model alike rather than on whichever happened to be timed then; each
timed forward runs in the forward context (app.models.device.forward), the one every lesson's model call
runs in, and on a GPU the device is synchronised so queued kernels are counted. A lesson times a sentence
once through its cache (:func:`latencies`); timings taken while the server's warm start was still loading
models, or while other visitors' pages were computing, are provisional (:func:`quiet` keys the cache): a short
look, taken again once, when the server is quiet. The
side-by-side lesson measures every variant here, DistilBERT's lesson its teacher and student.

Pure (no streamlit); runs on any device the models are on.
"""

from __future__ import annotations

from app.core import preload  # noqa: F401  (first: the heavy imports, once, in one thread)

preload.load()  # before torch: a page that imports this module first (or a script) gets the imports in one thread

import math
import statistics
import time
from dataclasses import dataclass
from typing import Callable

import torch

from app.core import text as txt
from app.experiments.verdict import t_critical
from app.models import device as devices

MIN_ROUNDS = 3  # rounds in turns behind a ratio's interval (2 degrees of freedom at least)


@dataclass(frozen=True)
class Defaults:
    repeats: int = 9  # timed forwards per (sentence, variant); the median is reported
    budget_ms: float = 1500.0  # ... but rounds stop once this much was timed (base-size models: a round takes ~1 s)
    least: int = 5  # ... after at least this many rounds: enough for an interval of a ratio (ratio_interval, 4 df)
    warmup: int = 2  # untimed rounds first (allocations, lazy init); one when it already took a third of the budget


DEFAULTS = Defaults()


# ----------------------------------------------------------------------------- size


def count_parameters(model) -> int:
    """Distinct parameters: a tied weight (ELECTRA's shared embeddings, an LM head) counts once."""
    return sum(p.numel() for p in {id(p): p for p in model.parameters()}.values())


def memory_bytes(model) -> dict[str, int]:
    """Bytes held by the model's parameters and buffers (distinct tensors), on its device."""
    params = {id(p): p for p in model.parameters()}.values()
    buffers = {id(b): b for b in model.buffers()}.values()
    p = sum(t.numel() * t.element_size() for t in params)
    b = sum(t.numel() * t.element_size() for t in buffers)
    return {"parameter_bytes": p, "buffer_bytes": b, "total_bytes": p + b}


def layer_count(model) -> int:
    """Transformer layers, whatever the family calls them (num_hidden_layers, n_layers, n_layer)."""
    c = model.config
    for name in ("num_hidden_layers", "n_layers", "n_layer"):
        if getattr(c, name, None) is not None:
            return int(getattr(c, name))
    raise AttributeError("the config names no layer count")


def size_of(loaded) -> dict[str, int]:
    """A loaded variant's size: parameters, bytes in memory, layers, and the word-embedding parameters."""
    model = loaded.model
    return {
        "params": count_parameters(model),
        "memory_bytes": memory_bytes(model)["total_bytes"],
        "layers": layer_count(model),
        "embedding_params": model.get_input_embeddings().weight.numel(),
    }


# ----------------------------------------------------------------------------- latency, timed in turns


def measure_interleaved(
    forwards: dict[str, Callable[[], object]],
    repeats: int = DEFAULTS.repeats,
    warmup: int = DEFAULTS.warmup,
    clock: Callable[[], float] = time.perf_counter,
    sync: Callable[[], None] | None = None,
    budget_ms: float | None = None,
    least: int = DEFAULTS.least,
) -> dict[str, list[float]]:
    """Milliseconds of ``repeats`` calls of each forward, taken in turns (a, b, c, a, b, c, ...) after
    ``warmup`` untimed rounds, so a burst of background load falls on every model alike rather than on
    whichever happened to be timed then. ``sync`` waits for the device (torch.cuda.synchronize on GPU)
    so queued kernels are counted. ``budget_ms``: stop after the round that brings the time measured to it,
    once ``least`` rounds are taken (models of the real checkpoints' size on a CPU take ~1 s a round: nine
    rounds would keep a page waiting for ten seconds; small models still get every round). With a budget, the
    warm-up also stops after the round that took a third of it: one untimed forward of a base-size model
    already pays for the allocations and the lazy initialisation."""
    warmed = 0.0
    for done in range(warmup):
        if budget_ms is not None and done >= 1 and warmed >= budget_ms / 3:
            break
        t = clock()
        for forward in forwards.values():
            forward()
        warmed += (clock() - t) * 1000.0
    if sync:
        sync()
    samples: dict[str, list[float]] = {name: [] for name in forwards}
    spent = 0.0
    for done in range(repeats):
        if budget_ms is not None and done >= least and spent >= budget_ms:
            break
        for name, forward in forwards.items():
            t = clock()
            forward()
            if sync:
                sync()
            samples[name].append((clock() - t) * 1000.0)
            spent += samples[name][-1]
    return samples


def forward_latencies(
    models: dict[str, tuple[object, object]],
    text: str,
    repeats: int = DEFAULTS.repeats,
    clock: Callable[[], float] = time.perf_counter,
    budget_ms: float | None = None,
    least: int = DEFAULTS.least,
    warmup: int = DEFAULTS.warmup,
) -> dict[str, dict]:
    """Time each model's plain forward pass on ``text`` in the forward context (app.models.device.forward), in turns
    (:func:`measure_interleaved`: ``repeats``, ``budget_ms``, ``least`` and ``warmup`` are its).

    models: name -> (model, tokenizer). Returns name -> {"median_ms", "samples_ms", "n_tokens"}.
    """
    forwards, n_tokens, cuda = {}, {}, False
    for name, (model, tokenizer) in models.items():
        enc = tokenizer(text, return_tensors="pt")
        inputs = {k: v.to(model.device) for k, v in txt.model_inputs(enc).items()}
        forwards[name] = lambda m=model, x=inputs: _timed_forward(m, x)
        n_tokens[name] = int(inputs["input_ids"].shape[1])
        cuda = cuda or model.device.type == "cuda"
    with devices.timing():  # at a page's threads, whichever thread times (the warm start computes lessons ahead)
        samples = measure_interleaved(
            forwards,
            repeats=repeats,
            warmup=warmup,
            clock=clock,
            sync=torch.cuda.synchronize if cuda else None,
            budget_ms=budget_ms,
            least=least,
        )
    return {
        name: {"median_ms": statistics.median(s), "samples_ms": s, "n_tokens": n_tokens[name]}
        for name, s in samples.items()
    }


def _timed_forward(model, inputs: dict):
    """One plain forward pass, in the forward context (what every lesson's model call runs in)."""
    with devices.forward(model):
        return model(**inputs)


def in_turns(
    settled: bool,
    repeats: int = DEFAULTS.repeats,
    budget_ms: float = DEFAULTS.budget_ms,
    warmup: int = DEFAULTS.warmup,
) -> dict:
    """:func:`measure_interleaved`'s settings for a timing a page concludes from. ``settled`` (:func:`quiet`: the
    server was quiet): up to ``repeats`` rounds in turns after ``warmup``, stopping within ``budget_ms`` once
    ``DEFAULTS.least`` were taken (enough for a ratio's interval). Otherwise a provisional short look, taken again
    once the server is quiet: the fewest rounds an interval needs (``MIN_ROUNDS``) after one warm-up round,
    whatever the page's own settings (a class opening a fresh server at once spent 1.5 s of its 2 cores on timings
    of the other pages' work, the side-by-side lesson's on 2026-11-28, which it then threw away)."""
    if settled:
        return {"repeats": repeats, "least": DEFAULTS.least, "budget_ms": budget_ms, "warmup": warmup}
    return {"repeats": MIN_ROUNDS, "least": MIN_ROUNDS, "warmup": 1}


def latencies(models: tuple, text: str, settled: bool, encoders: bool = False) -> dict[str, dict]:
    """Every loaded variant in ``models`` timed in turns on ``text``, by catalogue key. ``settled``
    (:func:`quiet`: the server's warm start had finished loading models and no other visitor's page was computing)
    keys the cache: a timing taken while the server was busy is provisional, a short look (:func:`in_turns`), and
    is taken again once, when it is quiet; otherwise a sentence is timed once, whatever else changes. ``encoders``:
    also time each model's encoder alone (:func:`with_encoders`)."""
    pairs = {m.variant.key: (m.model, m.tokenizer) for m in models}
    timing = in_turns(settled)
    if encoders:
        return with_encoders(pairs, text, **timing)
    return forward_latencies(pairs, text, **timing)


def with_encoders(models: dict[str, tuple[object, object]], text: str, **timing) -> dict[str, dict]:
    """:func:`forward_latencies` of each model whole and of its encoder alone (``base_model``: no masked-LM head
    over the vocabulary, what a downstream task with a small head runs), all in the same turns; each name's entry
    gets ``"encoder_median_ms"`` too."""
    forwards = {(name, "whole"): pair for name, pair in models.items()}
    forwards.update({(name, "encoder"): (model.base_model, tok) for name, (model, tok) in models.items()})
    timed = forward_latencies(forwards, text, **timing)
    return {
        name: {
            **timed[name, "whole"],
            "encoder_median_ms": timed[name, "encoder"]["median_ms"],
            "encoder_samples_ms": timed[name, "encoder"]["samples_ms"],
        }
        for name in models
    }


# ----------------------------------------------------------------------------- a median, with its interval


def median_interval(samples: list[float], confidence: float = 0.95) -> dict | None:
    """The median of ``samples`` with a distribution-free interval: the order statistics x(k) and x(n + 1 − k), with
    k the largest rank for which the interval still covers the true median with at least ``confidence`` (the number
    of samples below the median is Binomial(n, ½)); with too few samples for that, the whole range and its lower
    coverage (5 samples: 93.8%). {"median", "low", "high", "coverage", "n"}; None without samples."""
    xs = sorted(float(x) for x in samples)
    n = len(xs)
    if not n:
        return None
    tail = [math.comb(n, j) / 2**n for j in range(n + 1)]  # P(exactly j samples below the median)
    k, coverage = 1, 1 - 2 * tail[0]
    while k < n + 1 - k - 1:
        wider = 1 - 2 * sum(tail[: k + 1])  # coverage of [x(k + 1), x(n − k)]
        if wider < confidence:
            break
        k, coverage = k + 1, wider
    return {"median": statistics.median(xs), "low": xs[k - 1], "high": xs[n - k], "coverage": coverage, "n": n}


def overlapping(intervals: dict[str, dict]) -> list[list[str]]:
    """The names whose intervals (``median_interval``'s, by name) overlap, in groups of two or more, fastest first:
    names chained by overlapping intervals, in order of their medians. Within a group the times cannot be ranked on
    this evidence; a name alone in its group is told apart from its neighbours."""
    order = sorted(intervals, key=lambda k: intervals[k]["median"])
    groups, reach = [], -math.inf
    for name in order:
        if groups and intervals[name]["low"] <= reach:
            groups[-1].append(name)
        else:
            groups.append([name])
            reach = -math.inf
        reach = max(reach, intervals[name]["high"])
    return [g for g in groups if len(g) > 1]


# ----------------------------------------------------------------------------- how much quicker, with its interval


def ratio_interval(slow: list[float], fast: list[float]) -> dict | None:
    """How many times longer ``slow`` takes than ``fast``, from rounds timed in turns (round i of each ran back to
    back, so a burst of load falls on both): the per-round ratios slow_i / fast_i, their geometric mean and its 95%
    interval (Student's t on the logs, n − 1 df). {"ratio", "low", "high", "n"}; None with fewer than
    :data:`MIN_ROUNDS` rounds or a non-positive time."""
    n = min(len(slow), len(fast))
    if n < MIN_ROUNDS or any(x <= 0 for x in (*slow[:n], *fast[:n])):
        return None
    logs = [math.log(a / b) for a, b in zip(slow[:n], fast[:n])]
    mean, half = statistics.fmean(logs), t_critical(n - 1) * statistics.stdev(logs) / math.sqrt(n)
    return {"ratio": math.exp(mean), "low": math.exp(mean - half), "high": math.exp(mean + half), "n": n}


def clearly(iv: dict | None) -> str:
    """What an interval of slow/fast supports: "quicker" (all of it above 1), "slower" (all below 1), or "noise"
    (it contains 1: within noise on this machine); "" without an interval."""
    if not iv:
        return ""
    return "quicker" if iv["low"] > 1 else "slower" if iv["high"] < 1 else "noise"


def interval_words(iv: dict) -> str:
    """ "95% interval 1.82–2.41×, 5 rounds in turns"."""
    return f"95% interval {iv['low']:.2f}–{iv['high']:.2f}×, {iv['n']} rounds in turns"


def warm_done(progress: dict | None) -> bool:
    """Whether the server's warm start (``ui.warm_progress()``) has finished, or was never started."""
    return progress is None or progress.get("seconds") is not None


def quiet(progress: dict | None, others: int = 0) -> bool:
    """Whether a timing taken now measures the models rather than the server's other work: its warm start
    (``ui.warm_progress()``) has finished or never began, and no other visitor's page is computing (``others``:
    ``ui.other_pages()``). Otherwise a lesson's timings are provisional (:func:`latencies`)."""
    return warm_done(progress) and others <= 0


def timed_inputs(cls, values: dict, warm: dict | None = None, others: int = 0):
    """A timing lesson's ``Inputs`` (``cls``) from the page's values, ``settled`` by :func:`quiet` (``warm``:
    ``ui.warm_progress()``, ``others``: ``ui.other_pages()``)."""
    from dataclasses import fields

    kept = {f.name: values[f.name] for f in fields(cls) if f.name in values}
    return cls(**kept, settled=quiet(warm, others))
