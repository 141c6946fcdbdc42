"""Does it work? Each paper's claim replayed as a controlled experiment: the curves of its arms (the mean and
a band of ± one standard deviation over seeds, per training step or per training FLOP), the final numbers
with their spread, the paper's reported effect beside ours, and a verdict computed from the seeds.

The experiments themselves live in app/experiments/ (one module per claim; ``python -m app.experiments
run NAME`` writes ``assets/experiments/NAME.json``). This lesson only reads them. Terms:

- an **arm** is one training recipe setting (static vs dynamic masking, NSP vs SOP, ...); every arm of an
  experiment trains the same model on the same data for the same compute, and differs in that one setting;
- a **seed** is one independent training run of an arm (its own initialisation and batch order); the
  spread over seeds is how much an arm's result moves by chance alone;
- a **comparison** is the paper's claim "arm A beats arm B on metric m", with the paper's own numbers
  (app/experiments/claims.py);
- the **verdict** is app/experiments/verdict.py's rule applied to the per-seed final numbers: *reproduces*
  when A beats B by more than the seeds' spread allows by chance (a two-sample t-test at 5%), *reverses*
  when B beats A that clearly, and *too small to tell at this scale* otherwise. No conclusion on this page
  is written by hand.

When no results are there yet (before the full runs), the lesson shows the paper's side, the command that
produces ours, and the live run (app/experiments/live.py: the smallest pair of arms, trained for a minute).
``BVE_EXPERIMENTS_DIR`` points the lesson at another results folder (a ``--quick`` run's output).
"""

from __future__ import annotations

from app.core import preload  # noqa: F401  (first: the router calls preload.load() before a lesson runs)

import math
from dataclasses import dataclass
from pathlib import Path

from app.core import text as txt
from app.experiments import EXPERIMENTS, results
from app.experiments import verdict as rule
from app.experiments.claims import CLAIMS
from app.core.lesson import Note, direct, from_values
from app.core.state import Param, Spec, seed_param

ORDER = 100  # its place in teaching order (app/lessons/__init__.py lists lessons by it)
TITLE = 'Does it work?'
ICON = ':material/science:'
LINE = "Each paper's claim replayed as a controlled experiment: curves over seeds and a verdict computed from them."

NAMES = tuple(EXPERIMENTS)
CURVE_METRICS = ("train_loss",) + tuple(dict.fromkeys(m for c in CLAIMS.values() for m in c.metrics if m != "params"))
TRAIN_LOSS_LABEL = "training loss (every 20 steps; the arms' losses differ in what they add to the masked LM)"
TAKEAWAY = "A claim holds here only when arms differ by more than seeds of one arm do — computed, not written."
SPEC = Spec(
    Param("claim", "choice", "masking", choices=NAMES, widget="select", label="Claim",
          labels=tuple((n, CLAIMS[n].title) for n in NAMES), help="Which paper's claim to look at."),
    Param("compare", "int", 0, lo=0, hi=19, widget="select", label="Comparison",
          help="The claim's comparisons: arm A beats arm B on one metric, as the paper said."),
    Param("metric", "choice", "auto", choices=("auto",) + CURVE_METRICS, widget="select", label="Curves of",
          help="What the curves show; *auto* is the comparison's own metric."),
    Param("x", "choice", "auto", choices=("auto", "step", "flops"), widget="radio", label="Curves against",
          labels=(("auto", "as the paper compares"), ("step", "training steps"), ("flops", "training FLOPs")),
          help="ELECTRA's claim is per unit of compute: its arms take different numbers of steps for the same FLOPs."),
    Param("arms", "choice", "pair", choices=("pair", "all"), widget="radio", label="Arms",
          labels=(("pair", "the two compared"), ("all", "every arm")), help="Draw the two compared arms, or all of them."),
    seed_param(label="Seed of the live run", help="The live run's models and batches come from this seed."),
    Param("seconds", "int", 60, lo=10, hi=60, step=5, widget="slider", label="Live run length (s)",
          help="Training wall time of the live run (at most 60 s), after its data is prepared."),
)
VERDICT_LEVEL = {rule.REPRODUCES: "success", rule.TOO_SMALL: "info", rule.REVERSES: "error"}


# ----------------------------------------------------------------------------- reading the results


def load_results(name: str, folder: str, mtime_ns: int) -> dict | None:
    """The results document of experiment ``name`` in ``folder`` (``mtime_ns`` keys the page's cache to
    the file's version), or None when it is missing or unreadable."""
    try:
        return results.bundled(name, Path(folder))
    except (OSError, ValueError):
        return None


def _version(name: str) -> tuple[str, int]:
    """(results folder, the file's modification time in ns; 0 when there is no file)."""
    folder = results.folder()
    try:
        return str(folder), results.path_of(name, folder).stat().st_mtime_ns
    except OSError:
        return str(folder), 0


# ----------------------------------------------------------------------------- what the page shows


@dataclass(frozen=True)
class PaperRow:
    measure: str
    better: float | None  # the paper's value for the arm claimed better (None when it reports only the change)
    worse: float | None
    difference: float | None  # better − worse, as the paper measured it (higher is better there)


@dataclass(frozen=True)
class Comparison:
    """One of the claim's comparisons, with the paper's numbers and (when results exist) the verdict.

    verdict: app/experiments/verdict.py's numbers as a dict (verdict, difference — positive in the claimed
    direction —, mean_a, mean_b, sd_a, sd_b, n_a, n_b, threshold, enough_seeds, reason), None before a run."""

    key: str
    claim: str
    better: str
    worse: str
    better_label: str
    worse_label: str
    metric: str
    metric_label: str
    higher_is_better: bool
    unit: str
    source: str
    note: str
    paper: tuple[PaperRow, ...]
    verdict: dict | None


@dataclass(frozen=True)
class Curve:
    """One arm's curve: the mean over seeds at the points every seed has, and mean ∓ sd (lo, hi)."""

    arm: str
    label: str
    x: tuple[float, ...]
    mean: tuple[float, ...]
    lo: tuple[float, ...]
    hi: tuple[float, ...]
    n: int  # seeds
    compared: bool  # one of the two arms of the chosen comparison


@dataclass(frozen=True)
class Final:
    """One arm's final numbers on the comparison's metric: one per seed, and their spread."""

    arm: str
    label: str
    seeds: tuple[int, ...]
    values: tuple[float, ...]
    mean: float | None
    sd: float | None
    lo: float | None  # min over seeds
    hi: float | None
    params: int | None
    compared: bool


@dataclass(frozen=True)
class Live:
    """The live run this claim offers: its pair of arms, the metric and x-axis its curve uses, and why it
    cannot run here (None when it can)."""

    pair: tuple[str, str]
    metric: str
    metric_label: str
    higher_is_better: bool
    x: str  # "step" | "flops"
    unavailable: str | None


@dataclass(frozen=True)
class Result:
    name: str
    title: str
    claim: str
    papers: tuple[str, ...]
    labels: dict[str, str]  # every arm's label, by arm name
    has_results: bool
    command: str  # what writes this experiment's results
    provenance: dict  # from the results: quick, seeds, steps, device, finished, revision, dirty, command
    comparisons: tuple[Comparison, ...]
    chosen: int  # index into comparisons
    metric: str  # the curves' metric
    metric_label: str
    metric_options: tuple[str, ...]  # the curves this claim's results can draw ("auto" first)
    metric_choice: str  # what the "Curves of" widget holds: the asked metric when it is an option, else "auto"
    x: str  # "step" | "flops"
    curves: tuple[Curve, ...]
    finals: tuple[Final, ...]  # on comparisons[chosen].metric, every arm
    params_axis: bool  # the claim is about parameters (sharing): the finals go against each arm's count
    live: Live
    notes: tuple[Note, ...]

    @property
    def comparison(self) -> Comparison:
        return self.comparisons[self.chosen]


@dataclass(frozen=True)
class Inputs:
    claim: str = "masking"
    compare: int = 0
    metric: str = "auto"
    x: str = "auto"
    arms: str = "pair"
    seed: int = 0
    seconds: int = 60

    from_values = classmethod(from_values)


def _metric_label(name: str, metric: str) -> str:
    if metric == "train_loss":
        return TRAIN_LOSS_LABEL
    m = CLAIMS[name].metrics.get(metric)
    return m.label if m else metric


def arm_labels(name: str, doc: dict | None = None) -> dict[str, str]:
    """Every arm's label: as the results recorded it, else as the experiment defines it today."""
    module = EXPERIMENTS[name].load()
    labels = {a.name: a.label for a in module.arms(module.FULL)}
    if doc:
        labels.update({a: v["label"] for a, v in doc["arms"].items()})
    return labels


def comparisons(name: str, doc: dict | None) -> tuple[Comparison, ...]:
    """The claim's comparisons with the paper's numbers, and the verdicts recomputed from ``doc``'s seeds."""
    claim = CLAIMS[name]
    found = results.verdicts(doc) if doc else {}
    labels = arm_labels(name, doc)
    out = []
    for c in claim.comparisons:
        m = claim.metrics[c.metric]
        out.append(Comparison(
            c.key, c.claim, c.better, c.worse, labels[c.better], labels[c.worse],
            c.metric, m.label, m.higher_is_better, m.unit, c.source, c.note,
            tuple(PaperRow(r.measure, r.better, r.worse, r.difference) for r in c.paper), found.get(c.key),
        ))
    return tuple(out)


def live_of(name: str) -> Live:
    """The live pair's comparison (the one whose arms are the pair), its metric and the claim's x-axis."""
    from app.experiments import live

    e = EXPERIMENTS[name]
    claim = CLAIMS[name]
    comp = next((c for c in claim.comparisons if (c.better, c.worse) == tuple(e.live_pair)), claim.comparisons[0])
    m = claim.metrics[comp.metric]
    return Live(tuple(e.live_pair), comp.metric, m.label, m.higher_is_better,
                "flops" if claim.x_axis == "flops" else "step", live.availability(name))


def provenance(doc: dict) -> dict:
    """Where the numbers come from, in a few plain values."""
    meta, budget = doc.get("meta", {}), doc.get("budget", {})
    seeds = {len(a["seeds"]) for a in doc["arms"].values()}
    return {"quick": bool(doc.get("quick")), "seeds": min(seeds) if seeds else 0, "steps": budget.get("steps"),
            "device": meta.get("device"), "finished": meta.get("finished"), "command": meta.get("command"),
            "revision": (meta.get("git") or {}).get("revision"), "dirty": (meta.get("git") or {}).get("dirty"),
            "wall_seconds": meta.get("wall_seconds")}


def _has_curve(doc: dict, metric: str) -> bool:
    return any(metric in r["curves"] for a in doc["arms"].values() for r in a["seeds"])


def _finite(v) -> bool:
    return v is not None and isinstance(v, (int, float)) and math.isfinite(v)


def run(models: dict, inputs: Inputs, cache=direct) -> Result:
    """Read the claim's results (through ``cache``, keyed by the file's version), choose the comparison,
    the curves' metric and x-axis, and summarise every arm: curves over seeds and final numbers."""
    name = inputs.claim
    claim = CLAIMS[name]
    notes: list[Note] = []
    doc = cache(load_results, name, *_version(name))
    if doc is not None:
        problems = results.validate(doc)
        if problems:
            notes.append(Note("The results file has problems (" + "; ".join(txt.md(p, 80) for p in problems[:3])
                              + ("; …" if len(problems) > 3 else "") + "): what can be read is shown.", "warning"))
        if doc.get("quick"):
            notes.append(Note("These results come from a `--quick` smoke run (a handful of steps on a sample of the "
                              "corpus): they show that the experiment runs, not whether the claim holds.", "warning"))
    comps = comparisons(name, doc)
    chosen = inputs.compare
    if not 0 <= chosen < len(comps):
        notes.append(Note(f"This claim has {len(comps)} comparisons (counted from 0): comparison {chosen} does not "
                          "exist, showing comparison 0."))
        chosen = 0
    comp = comps[chosen]
    x = ("flops" if claim.x_axis == "flops" else "step") if inputs.x == "auto" else inputs.x
    options = ("auto",) + (tuple(m for m in CURVE_METRICS if _has_curve(doc, m)) if doc is not None else ())
    metric = comp.metric if inputs.metric == "auto" else inputs.metric
    if doc is not None and not _has_curve(doc, metric):
        if inputs.metric != "auto":
            notes.append(Note(f"This claim's runs have no curve of {txt.md(inputs.metric)}; showing its comparison's "
                              f"metric, {txt.md(comp.metric)}."))
        metric = comp.metric if _has_curve(doc, comp.metric) else "train_loss"
    curves, finals = [], []
    if doc is not None:
        pair = {comp.better, comp.worse}
        shown = [a for a in doc["arms"] if inputs.arms == "all" or a in pair]
        for arm in shown:
            b = results.band(doc, arm, metric, x)
            label = doc["arms"][arm]["label"]
            curves.append(Curve(arm, label, tuple(b["x"]), tuple(b["mean"]), tuple(b["lo"]), tuple(b["hi"]), b["n"],
                                arm in pair))
        for arm, a in doc["arms"].items():
            kept = [(r["seed"], r["final"].get(comp.metric)) for r in a["seeds"]]
            kept = [(s, float(v)) for s, v in kept if _finite(v)]
            sp = results.spread([v for _, v in kept])
            finals.append(Final(arm, a["label"], tuple(s for s, _ in kept), tuple(v for _, v in kept), sp["mean"],
                                sp["sd"], sp["min"], sp["max"], a.get("params"), arm in pair))
        missing = [a for a in (comp.better, comp.worse) if a not in doc["arms"]]
        if missing:
            notes.append(Note(f"The results hold no run of {', '.join(txt.md(a) for a in missing)}: this comparison "
                              "has no verdict (run the experiment with every arm)."))
    return Result(
        name=name, title=claim.title, claim=claim.claim, papers=claim.papers, labels=arm_labels(name, doc),
        has_results=doc is not None,
        command=results.command(name), provenance=provenance(doc) if doc else {}, comparisons=comps, chosen=chosen,
        metric=metric, metric_label=_metric_label(name, metric), metric_options=options,
        metric_choice=inputs.metric if inputs.metric in options else "auto", x=x, curves=tuple(curves),
        finals=tuple(finals), params_axis=claim.x_axis == "params", live=live_of(name), notes=tuple(notes),
    )


def live_points(progress, metric: str, x: str) -> dict[str, tuple[list[float], list[float]]]:
    """A live run's held-out curve so far: arm -> (x values, metric values) at its evaluations, where the
    metric is finite. ``progress``: app.experiments.live.Progress; x: "step" or "flops"."""
    return {arm: _finite_pairs(progress.points.get(arm, {}), x, metric) for arm in progress.arms}


def live_training(progress, x: str) -> dict[str, tuple[list[float], list[float]]]:
    """A live run's training loss so far, one point per step: arm -> (x values, losses)."""
    return {arm: _finite_pairs(progress.training.get(arm, {}), x, "train_loss") for arm in progress.arms}


@dataclass(frozen=True)
class LiveCurves:
    """A live run's curves so far, as its figure draws them: training[arm] / points[arm] = (x values, y values)
    (``live_training``, ``live_points``), every arm's label, and the live pair's x-axis, metric and arms."""

    training: dict[str, tuple[list[float], list[float]]]
    points: dict[str, tuple[list[float], list[float]]]
    labels: dict[str, str]
    x: str  # "step" | "flops"
    metric_label: str
    pair: tuple[str, str]  # (the arm the paper says is better, the other)
    higher_is_better: bool


def live_curves(progress) -> LiveCurves:
    """What the live figure shows of ``progress`` (app.experiments.live.Progress): its experiment's live pair
    (``live_of``), each arm's training loss and held-out curve so far."""
    run_live = live_of(progress.experiment)
    return LiveCurves(live_training(progress, run_live.x), live_points(progress, run_live.metric, run_live.x),
                      dict(progress.labels), run_live.x, run_live.metric_label, run_live.pair, run_live.higher_is_better)


def _finite_pairs(series: dict, x: str, y: str) -> tuple[list[float], list[float]]:
    kept = [(a, b) for a, b in zip(series.get(x, []), series.get(y, [])) if _finite(a) and _finite(b)]
    return [a for a, _ in kept], [b for _, b in kept]
