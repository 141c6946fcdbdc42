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
      "verdicts": [{"key", "better", "worse", "metric", **verdict.Verdict}]  # as app/experiments/verdict.py
    }

``verdicts`` is a convenience copy from when the file was written: :func:`verdicts` recomputes them from the
seeds with today's claims (app/experiments/claims.py: each comparison's kind, margin and arms) and today's
family (Holm over every experiment's comparisons in the same folder) — what the page trusts. The pages read from :func:`folder` (``BVE_EXPERIMENTS_DIR``, else ``assets/experiments``);
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
from app.experiments.claims import CLAIMS

SCHEMA = 1
BUNDLED = Path(__file__).resolve().parents[2] / "assets" / "experiments"  # where `run` writes by default


def seed_curves(curves: dict, step0: dict, flops_per_step: float) -> dict:
    """A run's curves from ``train_loop`` with the evaluation before training (step 0) in front, and the
    FLOPs of every step beside it."""
    out = {"step": list(curves.get("step", [])), "train_loss": list(curves.get("train_loss", []))}
    eval_steps = list(curves.get("eval_step", []))
    not_metrics = ("step", "train_loss", "eval_step", "steps_done", "train_seconds", "devices", "runs")  # run facts
    metrics = [k for k in curves if k not in not_metrics]
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


def plan(doc: dict) -> tuple[list[dict], dict]:
    """(comparisons, metrics) as judged today: a known experiment's from app/experiments/claims.py (the kind,
    margin and arms of each claim are the analysis plan, not part of the data), else as the document recorded
    them (superiority when it says no kind)."""
    claim = CLAIMS[doc["experiment"]].as_dict() if doc.get("experiment") in CLAIMS else doc["claim"]
    return claim["comparisons"], claim["metrics"]


def per_seed(doc: dict, arm: str, metric: str) -> dict:
    """{seed: final value} of ``metric`` for every seed of ``arm`` with a finite value: what pairs the arms."""
    out = {}
    for i, r in enumerate(doc["arms"][arm]["seeds"]):
        v = r["final"].get(metric)
        if v is not None and math.isfinite(v):
            out[r.get("seed", i)] = float(v)
    return out


def scale(doc: dict, comp: dict, seeds: int | None = None) -> str:
    """The scale a comparison was measured at, from the document's budget and the arms' changes:
    "hidden 128, 3 layers, E = 32 vs 128, 1000 steps, 3 seeds" (what it knows of it)."""
    budget, parts = doc.get("budget") or {}, []
    shape = budget.get("shape") or {}
    if shape.get("hidden_size"):
        parts.append(f"hidden {shape['hidden_size']}")
    if shape.get("num_hidden_layers"):
        parts.append(f"{shape['num_hidden_layers']} layers")
    arms = doc.get("arms", {})
    e = [(arms.get(a) or {}).get("change", {}).get("embedding_size") for a in (comp["better"], comp["worse"])]
    if all(e) and e[0] != e[1]:
        parts.append(f"E = {e[0]} vs {e[1]}")
    if budget.get("steps"):
        parts.append(f"{budget['steps']} steps")
    if seeds:
        parts.append(f"{seeds} seed{'s' if seeds != 1 else ''}")
    return ", ".join(parts)


def tests(doc: dict) -> dict[str, verdict_rule.Verdict]:
    """Per comparison whose arms are in ``doc``: its test judged alone (verdict.compare, paired by seed), before
    the family's adjustment."""
    out = {}
    comparisons, metrics = plan(doc)
    for comp in comparisons:
        if comp["better"] not in doc["arms"] or comp["worse"] not in doc["arms"]:
            continue
        a, b = per_seed(doc, comp["better"], comp["metric"]), per_seed(doc, comp["worse"], comp["metric"])
        if not a or not b:
            continue
        seeds = len(set(a) & set(b)) or min(len(a), len(b))
        out[comp["key"]] = verdict_rule.compare(a, b, metrics[comp["metric"]]["higher_is_better"],
                                                comp.get("kind", verdict_rule.SUPERIORITY), comp.get("margin", 0.0),
                                                scale(doc, comp, seeds))
    return out


def family(where: Path | None = None) -> dict[str, dict]:
    """The page's family: every experiment's results document in ``where`` (default :func:`folder`), by name."""
    docs = {name: read_current(name, where) for name in CLAIMS}
    return {name: d for name, d in docs.items() if d is not None}


def judged(docs: dict[str, dict]) -> dict[str, dict[str, dict]]:
    """Every comparison of every document in ``docs`` ({name: doc}), adjusted together by Holm: name -> key ->
    {better, worse, metric, **Verdict}."""
    found, rows = {}, {}
    for name, doc in docs.items():
        comparisons, _ = plan(doc)
        by_key = {c["key"]: c for c in comparisons}
        for key, v in tests(doc).items():
            found[(name, key)] = v
            rows[(name, key)] = by_key[key]
    decided = verdict_rule.judge(found)
    out: dict[str, dict[str, dict]] = {name: {} for name in docs}
    for (name, key), v in decided.items():
        c = rows[(name, key)]
        out[name][key] = {"better": c["better"], "worse": c["worse"], "metric": c["metric"], **v.as_dict()}
    return out


def verdicts(doc: dict, others: dict[str, dict] | None = None) -> dict[str, dict]:
    """Per comparison of the claim: the verdict computed from the arms' per-seed final numbers (verdict.py's
    rule), adjusted by Holm over the page's family — this document's comparisons and those of the other
    experiments' results (``others``, {name: doc}; default: the documents in :func:`folder`). Comparisons whose
    arms are not in the document are left out."""
    name = doc.get("experiment", "")
    docs = {k: d for k, d in (family() if others is None else others).items() if k != name}
    docs[name] = doc
    return judged(docs)[name]


MEASURED_START, MEASURED_END = "<!-- verdicts:start -->", "<!-- verdicts:end -->"


def measured_table(where: Path | None = None) -> str:
    """docs/results.md's "Measured" table: every comparison of every claim with results in ``where`` (default
    :func:`folder`), judged together (Holm over the m with results), as markdown."""
    docs = family(where)
    found = judged(docs)
    m = max((v["m"] for d in found.values() for v in d.values()), default=0)
    lines = [f"{m} comparisons with results, recomputed from `assets/experiments/*.json` by "
             "`python -m app.experiments verdicts --readme docs/results.md` (a full `run` rewrites it): paired t-tests on the "
             "per-seed differences A − B (positive = the claimed direction), the 95% interval against the claim's "
             "boundary (0; −margin for *not worse by more than*; ±margin for *about as good as*), Holm's step-down at "
             "5% over all of them (rank k needs p ≤ 0.05/(m − k + 1)).",
             "",
             "| experiment | claim (A vs B) | kind, margin | metric | A − B, 95% interval | seeds | p (Holm needs) | verdict |",
             "|---|---|---|---|---|---|---|---|"]
    for name, claim in CLAIMS.items():
        for c in claim.comparisons:
            v = found.get(name, {}).get(c.key)
            metric = claim.metrics[c.metric]
            unit = f" {metric.unit}" if metric.unit else ""
            kind = c.kind + (f", margin {c.margin:g}{unit}" if c.margin else "")
            head = f"| {name} | {c.claim} (`{c.better}` vs `{c.worse}`) | {kind} | {short_label(metric.label)} |"
            if v is None:
                lines.append(f"{head} — | — | — | not run yet |")
            elif not v["enough_seeds"]:
                lines.append(f"{head} {signed(v['difference'])} | {v['n_a']}/{v['n_b']} | — | {v['label']} |")
            else:
                n = f"{v['n']} paired" if v["design"] == "paired" else f"{v['n_a']}+{v['n_b']} (Welch)"
                lines.append(f"{head} {signed(v['difference'])} [{signed(v['ci_low'])}, {signed(v['ci_high'])}] | {n} | "
                             f"{v['p']:.2g} (≤ {v['holm_threshold']:.2g}, rank {v['rank']}) | {v['label']} |")
    return "\n".join(lines)


def write_measured(path: Path, where: Path | None = None) -> None:
    """Put :func:`measured_table` between the verdicts markers of ``path`` (docs/results.md)."""
    path = Path(path)
    body = path.read_text(encoding="utf-8")
    if MEASURED_START not in body or MEASURED_END not in body:
        raise ValueError(f"{path} has no {MEASURED_START} … {MEASURED_END} markers")
    block = f"{MEASURED_START}\n{measured_table(where)}\n{MEASURED_END}"
    path.write_text(body[: body.index(MEASURED_START)] + block + body[body.index(MEASURED_END) + len(MEASURED_END):],
                    encoding="utf-8")


def short_label(label: str) -> str:
    """An arm's or a metric's label cut to its head: "dynamic: a fresh mask ..." -> "dynamic",
    "held-out masked-LM loss (15% token masking)" -> "held-out masked-LM loss"."""
    return label.split(": ")[0].split(" (")[0].strip()


def fmt(value: float | None, digits: int = 3) -> str:
    """A measured number as the pages print it: 3 significant digits, trailing zeros kept ("9.00" beside
    "5.32", not "9"), "—" when missing."""
    if value is None or not math.isfinite(value):
        return "—"
    return _sig(value, digits) if abs(value) < 1000 else f"{value:,.0f}"


def _sig(value: float, digits: int) -> str:
    return f"{value:#.{digits}g}".rstrip(".").replace(".e", "e")


def signed(value: float | None, digits: int = 3) -> str:
    """A difference as the pages print it: "+0.0123", "−0.45" (a real minus sign), "—" when missing."""
    if value is None or not math.isfinite(value):
        return "—"
    return ("+" if value >= 0 else "−") + _sig(abs(value), digits)


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
    experiment has run, "not run yet" and the command that runs it. Every lesson page shows it on every rerun:
    it is computed again only when a results file it depends on changes (the verdicts of the whole family, Holm
    over all of them, took ~20 ms a rerun)."""
    return _one_line(name, None if where is None else str(where), _versions(where))


def _versions(where: Path | None) -> tuple:
    """(path, modification time or None) of every results file :func:`one_line` reads: this claim's in ``where``
    and the page family's in :func:`folder`."""
    def mtime(path: Path) -> int | None:
        try:
            return path.stat().st_mtime_ns
        except OSError:
            return None

    paths = {path_of(n, w) for n in CLAIMS for w in (where, None)}
    return tuple(sorted((str(p), mtime(p)) for p in paths))


@functools.lru_cache(maxsize=64)
def _one_line(name: str, where: str | None, versions: tuple) -> str:
    doc = read_current(name, None if where is None else Path(where))
    if doc is None:
        return f"Does it work? Not run yet: `{command(name)}`"
    h = headline(doc)
    if h is None:
        return f"Does it work? No comparison of this claim was run: `{command(name)}`"
    arms, metric = doc["arms"], doc["claim"]["metrics"][h["metric"]]
    better, worse = short_label(arms[h["better"]]["label"]), short_label(arms[h["worse"]]["label"])
    seeds = h["n"] if h["design"] == "paired" else min(h["n_a"], h["n_b"])
    smoke = ", a --quick smoke run" if doc.get("quick") else ""
    interval = (f"; {signed(h['difference'])} in the claimed direction, 95% interval {signed(h['ci_low'])} to "
                f"{signed(h['ci_high'])}, p {h['p']:.2g} where Holm over {h['m']} comparisons needs ≤ "
                f"{h['holm_threshold']:.2g}" if h["enough_seeds"] else "")
    return (f"Does it work? {better} vs {worse}, {short_label(metric['label'])}: {fmt(h['mean_a'])} vs "
            f"{fmt(h['mean_b'])} ({seeds} seed{'s' if seeds != 1 else ''}{smoke}{interval}) — {h['label']}")
