"""The experiments' results as JSON: writing them, reading them, and the summaries a page draws
(the mean and a band over seeds, per step or per FLOP; final numbers with their spread; verdicts).

Schema (``schema`` = 1), one file per experiment, ``assets/experiments/<name>.json``::

    {
      "schema": 1, "experiment": "masking", "quick": false,
      "claim": {...},                  # app/experiments/claims.py as data: title, claim, papers, metrics
                                       #   {key: {label, higher_is_better, unit}}, comparisons [{key, claim,
                                       #   better, worse, metric, higher_is_better, source, note,
                                       #   paper: [{measure, better, worse, change, difference}]}], x_axis
      "meta": {"command", "git": {"revision", "dirty"}, "device", "jobs", "torch",
               "started", "finished", "wall_seconds"},
      "budget": {...},                 # the shared setup: data, shape, steps, batch, lr, probe sizes, ...
      "arms": {
        "<arm>": {
          "label": "...", "change": {...},          # the one setting this arm changes
          "params": 123456, "flops_per_step": 1.2e9, "flops_parts": {...},
          "seeds": [
            {"seed": 0, "steps": 1500, "train_seconds": 95.1, "wall_seconds": 120.3, "details": {...},
             "final": {"valid_loss": 3.1, "valid_top1": 0.41, ...},
             "curves": {"step": [20, 40, ...], "flops": [...], "train_loss": [...],      # every 20 steps
                        "eval_step": [0, 100, ...], "eval_flops": [...], "<metric>": [...]}}  # every evaluation
          ]
        }
      },
      "verdicts": [{"key", "better", "worse", "metric", "verdict", "difference", "mean_a", "mean_b",
                    "sd_a", "sd_b", "n_a", "n_b", "pooled_sd", "se", "threshold", "enough_seeds", "reason"}]
    }

``verdicts`` is a convenience copy: :func:`verdicts` recomputes them from the seeds (what the page should
trust). The pages read from :func:`folder` (``BVE_EXPERIMENTS_DIR``, else ``assets/experiments``);
:func:`one_line` is what a recipe lesson shows of its experiment. Pure Python: no torch.
"""

from __future__ import annotations

import functools
import json
import math
import os
import statistics
from pathlib import Path

from app.experiments import verdict as verdict_rule

SCHEMA = 1
BUNDLED = Path(__file__).resolve().parents[2] / "assets" / "experiments"  # where `run` writes by default


def seed_curves(curves: dict, step0: dict, flops_per_step: float) -> dict:
    """A run's curves from ``train_loop`` with the evaluation before training (step 0) in front, and the
    FLOPs of every step beside it."""
    out = {"step": list(curves.get("step", [])), "train_loss": list(curves.get("train_loss", []))}
    eval_steps = list(curves.get("eval_step", []))
    metrics = [k for k in curves if k not in ("step", "train_loss", "eval_step", "steps_done", "train_seconds")]
    if step0:
        eval_steps = [0] + eval_steps
    out["eval_step"] = eval_steps
    for k in metrics:
        values = list(curves[k])
        out[k] = ([step0.get(k)] if step0 else []) + values
    out["flops"] = [s * flops_per_step for s in out["step"]]
    out["eval_flops"] = [s * flops_per_step for s in eval_steps]
    return out


def assemble(name: str, claim: dict, arms, records: dict, budget: dict, meta: dict, quick: bool) -> dict:
    doc = {"schema": SCHEMA, "experiment": name, "quick": quick, "claim": claim, "meta": meta, "budget": budget, "arms": {}}
    for arm in arms:
        seeds = [records[arm.name][s] for s in sorted(records[arm.name])]
        first = seeds[0] if seeds else {}
        doc["arms"][arm.name] = {
            "label": arm.label, "change": arm.change, "params": first.get("params"),
            "flops_per_step": first.get("flops_per_step"), "flops_parts": first.get("flops_parts"),
            "seeds": [{k: v for k, v in r.items() if k not in ("params", "flops_per_step", "flops_parts")} for r in seeds],
        }
    doc["verdicts"] = [dict(key=key, **v) for key, v in verdicts(doc).items()]
    return doc


def _clean(obj):
    """JSON without NaN/inf (written as null)."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: _clean(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_clean(v) for v in obj]
    return obj


def write(doc: dict, path: Path) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(_clean(doc), indent=1, sort_keys=False) + "\n", encoding="utf-8")
    tmp.replace(path)


def read(path: Path) -> dict:
    doc = json.loads(Path(path).read_text(encoding="utf-8"))
    if doc.get("schema") != SCHEMA:
        raise ValueError(f"{path}: schema {doc.get('schema')!r}, expected {SCHEMA}")
    return doc


def folder() -> Path:
    """Where the page reads results: ``BVE_EXPERIMENTS_DIR`` when set (a quick run's output, a test's
    folder), else the bundled ``assets/experiments``. Read at every call, so a test or a host can point it
    elsewhere without reloading the module."""
    where = os.environ.get("BVE_EXPERIMENTS_DIR", "").strip()
    return Path(where) if where else BUNDLED


def path_of(name: str, where: Path | None = None) -> Path:
    """The results file of experiment ``name`` (it may not exist yet)."""
    return Path(where if where is not None else folder()) / f"{name}.json"


def bundled(name: str, where: Path | None = None) -> dict | None:
    """The results of one experiment (``<folder()>/<name>.json``), or None before its run."""
    path = path_of(name, where)
    return read(path) if path.exists() else None


def command(name: str) -> str:
    """The command that writes the results of experiment ``name`` (3 seeds, into assets/experiments)."""
    return f"python -m app.experiments run {name}"


def validate(doc: dict) -> list[str]:
    """What is wrong with a results document (empty when it is well formed)."""
    problems = []
    for key in ("schema", "experiment", "claim", "meta", "budget", "arms", "verdicts"):
        if key not in doc:
            problems.append(f"missing {key}")
    for name, arm in doc.get("arms", {}).items():
        if not arm.get("seeds"):
            problems.append(f"arm {name} has no seeds")
        for r in arm.get("seeds", []):
            c = r.get("curves", {})
            if len(c.get("step", [])) != len(c.get("train_loss", [])) or len(c.get("step", [])) != len(c.get("flops", [])):
                problems.append(f"arm {name} seed {r.get('seed')}: train curves of different lengths")
            n = len(c.get("eval_step", []))
            for k, v in c.items():
                if k not in ("step", "train_loss", "flops") and isinstance(v, list) and len(v) != n:
                    problems.append(f"arm {name} seed {r.get('seed')}: {k} has {len(v)} points, eval_step {n}")
            for metric in doc.get("claim", {}).get("metrics", {}):
                if metric in ("params",):
                    continue
                if metric not in r.get("final", {}):
                    problems.append(f"arm {name} seed {r.get('seed')}: final has no {metric}")
    for key in ("command", "git", "device", "started", "finished"):
        if key not in doc.get("meta", {}):
            problems.append(f"meta has no {key}")
    return problems


# ----------------------------------------------------------------------------- summaries


def finals(doc: dict, arm: str, metric: str) -> list[float]:
    """The final value of ``metric`` for every seed of ``arm`` (``params`` is the arm's parameter count)."""
    a = doc["arms"][arm]
    if metric == "params":
        return [float(a["params"])] * len(a["seeds"])
    values = [r["final"].get(metric) for r in a["seeds"]]
    return [float(v) for v in values if v is not None and math.isfinite(v)]


def spread(values: list[float]) -> dict:
    """mean, sd (0 with one value), min, max and n."""
    if not values:
        return {"mean": None, "sd": None, "min": None, "max": None, "n": 0}
    return {"mean": statistics.fmean(values), "sd": statistics.stdev(values) if len(values) > 1 else 0.0,
            "min": min(values), "max": max(values), "n": len(values)}


def band(doc: dict, arm: str, metric: str, x: str = "step") -> dict:
    """The mean over seeds of a curve and its band, at the points every seed has.

    metric: ``train_loss`` (every 20 steps) or an evaluation metric; x: ``step`` or ``flops``.
    Returns {"x": [...], "mean": [...], "sd": [...], "lo": [...], "hi": [...], "n": seeds}: lo/hi are
    mean ∓ one standard deviation over seeds (with one seed, sd = 0 and the band is the line)."""
    if x not in ("step", "flops"):
        raise ValueError("x is 'step' or 'flops'")
    runs = doc["arms"][arm]["seeds"]
    train = metric == "train_loss"
    xkey = ("step" if x == "step" else "flops") if train else ("eval_step" if x == "step" else "eval_flops")
    skey = "step" if train else "eval_step"
    per_seed = [dict(zip(r["curves"][skey], zip(r["curves"][xkey], r["curves"].get(metric, [])))) for r in runs]
    present = [{k for k, (_, v) in d.items() if v is not None and math.isfinite(v)} for d in per_seed]
    common_steps = sorted(set.intersection(*present)) if present else []
    out = {"x": [], "mean": [], "sd": [], "lo": [], "hi": [], "n": len(runs)}
    for s in common_steps:
        values = [d[s][1] for d in per_seed]
        sp = spread(values)
        out["x"].append(per_seed[0][s][0])
        out["mean"].append(sp["mean"])
        out["sd"].append(sp["sd"])
        out["lo"].append(sp["mean"] - sp["sd"])
        out["hi"].append(sp["mean"] + sp["sd"])
    return out


def summary(doc: dict, metric: str) -> dict[str, dict]:
    """Per arm: the spread of the final ``metric`` over seeds."""
    return {arm: spread(finals(doc, arm, metric)) for arm in doc["arms"]}


def verdicts(doc: dict) -> dict[str, dict]:
    """Per comparison of the claim: the verdict computed from the arms' final numbers (verdict.py's rule).
    Comparisons whose arms are not in the document are left out."""
    out = {}
    metrics = doc["claim"]["metrics"]
    for comp in doc["claim"]["comparisons"]:
        if comp["better"] not in doc["arms"] or comp["worse"] not in doc["arms"]:
            continue
        a, b = finals(doc, comp["better"], comp["metric"]), finals(doc, comp["worse"], comp["metric"])
        if not a or not b:
            continue
        v = verdict_rule.decide(a, b, metrics[comp["metric"]]["higher_is_better"])
        out[comp["key"]] = {"better": comp["better"], "worse": comp["worse"], "metric": comp["metric"], **v.as_dict()}
    return out


def short_label(label: str) -> str:
    """An arm's or a metric's label cut to its head: "dynamic: a fresh mask ..." -> "dynamic",
    "held-out masked-LM loss (15% token masking)" -> "held-out masked-LM loss"."""
    return label.split(": ")[0].split(" (")[0].strip()


def fmt(value: float | None, digits: int = 3) -> str:
    """A measured number as the pages print it: 3 significant digits, "—" when missing."""
    if value is None or not math.isfinite(value):
        return "—"
    return f"{value:.{digits}g}" if abs(value) < 1000 else f"{value:,.0f}"


@functools.lru_cache(maxsize=32)
def _read_once(path: str, mtime_ns: int) -> dict:
    return read(Path(path))


def read_current(name: str, where: Path | None = None) -> dict | None:
    """:func:`bundled`, read once per version of the file (its modification time): what the lesson pages
    call on every rerun. The document is shared: do not mutate it."""
    path = path_of(name, where)
    try:
        mtime = path.stat().st_mtime_ns
    except OSError:
        return None
    try:
        return _read_once(str(path), mtime)
    except (OSError, ValueError):
        return None


def headline(doc: dict) -> dict | None:
    """The claim's first comparison (the one a recipe lesson links to) with its verdict from the seeds, or
    None when its arms are not in the document."""
    found = verdicts(doc)
    for comp in doc["claim"]["comparisons"]:
        v = found.get(comp["key"])
        if v is not None:
            return {**comp, **v}
    return None


def one_line(name: str, where: Path | None = None) -> str:
    """The measured result of experiment ``name`` in one line, for the lesson that teaches its recipe:
    the headline comparison's two means, the seeds behind them and the computed verdict — or, before the
    experiment has run, "not run yet" and the command that runs it."""
    doc = read_current(name, where)
    if doc is None:
        return f"Does it work? Not run yet: `{command(name)}`"
    h = headline(doc)
    if h is None:
        return f"Does it work? No comparison of this claim was run: `{command(name)}`"
    arms, metric = doc["arms"], doc["claim"]["metrics"][h["metric"]]
    better, worse = short_label(arms[h["better"]]["label"]), short_label(arms[h["worse"]]["label"])
    seeds = min(h["n_a"], h["n_b"])
    smoke = ", a --quick smoke run" if doc.get("quick") else ""
    return (f"Does it work? {better} vs {worse}, {short_label(metric['label'])}: {fmt(h['mean_a'])} vs "
            f"{fmt(h['mean_b'])} ({seeds} seed{'s' if seeds != 1 else ''}{smoke}) — {h['verdict']}")
