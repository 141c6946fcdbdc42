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
      "plan": {...},                   # app/experiments/plans.py: the plan version the run followed (seeds, each
                                       #   comparison's metric, kind, margin, the power calculation, the date it
                                       #   was fixed, whether before the data) and every earlier version, briefly
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
family (Holm over every experiment's comparisons in the same folder) — what the page trusts. The pages read from
:func:`folder` (``BVE_EXPERIMENTS_DIR``, else ``assets/experiments``); :func:`one_line` is what a recipe lesson shows of
its experiment. Pure Python: no torch.
"""

from __future__ import annotations

import functools
import json
from dataclasses import replace
import math
import os
import statistics
import threading
from pathlib import Path

from app.experiments import verdict as verdict_rule
from app.core.text import count
from app.experiments.claims import CLAIMS, ITEMS, MARGINS

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


def assemble(
    name: str, claim: dict, arms, records: dict, budget: dict, meta: dict, quick: bool, plan: dict | None = None
) -> dict:
    doc = {"schema": SCHEMA, "experiment": name, "quick": quick, "claim": claim, "meta": meta, "budget": budget}
    if plan is not None:
        doc["plan"] = plan  # app/experiments/plans.py: the version this run followed
    doc["arms"] = {}
    for arm in arms:
        seeds = [records[arm.name][s] for s in sorted(records[arm.name])]
        first = seeds[0] if seeds else {}
        doc["arms"][arm.name] = {
            "label": arm.label,
            "change": arm.change,
            "params": first.get("params"),
            "flops_per_step": first.get("flops_per_step"),
            "flops_parts": first.get("flops_parts"),
            "seeds": [
                {k: v for k, v in r.items() if k not in ("params", "flops_per_step", "flops_parts")} for r in seeds
            ],
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
            if len(c.get("step", [])) != len(c.get("train_loss", [])) or len(c.get("step", [])) != len(
                c.get("flops", [])
            ):
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
    return {
        "mean": statistics.fmean(values),
        "sd": statistics.stdev(values) if len(values) > 1 else 0.0,
        "min": min(values),
        "max": max(values),
        "n": len(values),
    }


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
    "hidden 128, 3 layers, E = 32 vs 128, 1000 steps, 3 seeds" (what it knows of it; "…, 10 seeds, 2 teachers"
    where the students distilled more than one teacher)."""
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
    if teacher_count(doc) > 1:
        parts.append(f"{teacher_count(doc)} teachers")
    return ", ".join(parts)


def uses_teacher(arm: dict) -> bool:
    """Whether an arm's recipe needs a trained teacher: it starts from the teacher's layers or learns from its soft
    targets (distillation's arms record both in ``change``)."""
    change = arm.get("change") or {}
    return change.get("init") == "teacher" or "soft" in str(change.get("targets") or "")


def teacher_flops(doc: dict) -> dict | None:
    """The training compute of the experiment's teacher, recomputed from the budget by the same count as every arm
    (app/training/flops.py ``mlm_step``: a masked-LM step of the teacher's shape, ``teacher_layers`` deep, at the
    arms' batch, sequence length and expected targets per batch): {"steps", "per_step", "total"} in FLOPs, or None
    when the document has no teacher (or does not record what the count needs). The expected targets per batch are
    read back from a hard-label arm's MLM head FLOPs (3 × targets × the head's 2·(H·H + H·V))."""
    from types import SimpleNamespace

    from app.training import flops

    budget = doc.get("budget") or {}
    shape, data = budget.get("shape") or {}, budget.get("data") or {}
    layers, steps = budget.get("teacher_layers"), budget.get("teacher_steps")
    need = (
        shape.get("hidden_size"),
        shape.get("intermediate_size"),
        data.get("vocab_size"),
        data.get("seq_len"),
        budget.get("batch_size"),
        layers,
        steps,
    )
    if not all(isinstance(x, int) and x > 0 for x in need):
        return None
    config = SimpleNamespace(
        hidden_size=shape["hidden_size"],
        intermediate_size=shape["intermediate_size"],
        num_hidden_layers=layers,
        embedding_size=shape["hidden_size"],
        vocab_size=data["vocab_size"],
    )
    head = flops.mlm_head_flops(config)
    targets = None
    for arm in (doc.get("arms") or {}).values():
        part = (arm.get("flops_parts") or {}).get("student head")
        if (arm.get("change") or {}).get("targets") == "hard" and isinstance(part, (int, float)) and part > 0:
            targets = part / (flops.TRAIN * head)
            break
    if targets is None:
        return None
    per_step = sum(flops.mlm_step(config, budget["batch_size"], data["seq_len"], targets).values())
    n = teacher_count(doc)
    return {
        "steps": steps,
        "per_step": per_step,
        "total": per_step * steps,
        "layers": layers,
        "count": n,
        "all": n * per_step * steps,
    }


def teacher_count(doc: dict) -> int:
    """How many teachers the experiment trained: the budget's ``teachers`` (1 when it does not say: every run
    before plan version 6 of distillation)."""
    n = (doc.get("budget") or {}).get("teachers", 1)
    return n if isinstance(n, int) and n >= 1 else 1


def teacher_of_seeds(doc: dict) -> dict:
    """{seed: the teacher it distilled} from the seeds' ``details.teacher`` (0 where a seed does not say: one
    teacher); {} for an experiment without a teacher."""
    out = {}
    for arm in (doc.get("arms") or {}).values():
        for i, r in enumerate(arm.get("seeds", [])):
            d = r.get("details") or {}
            if "teacher_final" not in d and "teacher" not in d:
                continue
            out.setdefault(r.get("seed", i), int(d.get("teacher", 0)))
    return out


def teachers(doc: dict) -> dict[int, dict]:
    """Each teacher's own numbers and its students: teacher -> {"final" (its held-out scores: top1, top5, ...),
    "steps", "layers", "seeds" (the student seeds that distilled it), "students" (their held-out top-1, every arm's:
    as the page has always set them beside the teacher)}. {} for an experiment without a teacher."""
    out: dict[int, dict] = {}
    for arm in (doc.get("arms") or {}).values():
        for i, r in enumerate(arm.get("seeds", [])):
            d = r.get("details") or {}
            if not isinstance(d.get("teacher_final"), dict):
                continue
            k = int(d.get("teacher", 0))
            t = out.setdefault(
                k,
                {
                    "final": d["teacher_final"],
                    "steps": d.get("teacher_steps"),
                    "layers": d.get("teacher_layers"),
                    "seeds": set(),
                    "students": [],
                },
            )
            t["seeds"].add(r.get("seed", i))
            top1 = (r.get("final") or {}).get("valid_top1")
            if isinstance(top1, (int, float)) and math.isfinite(top1):
                t["students"].append(float(top1))
    for t in out.values():
        t["seeds"] = sorted(t["seeds"])
    return dict(sorted(out.items()))


def recipe_flops(doc: dict, arm: str) -> dict | None:
    """The whole recipe's training compute of one arm, in FLOPs: {"steps", "per_step", "training" (its own steps:
    per_step × steps, the teacher's forward included where it runs one), "teacher" (the teacher's training when the
    arm needs a teacher — :func:`uses_teacher` —, else 0), "total"}; None when the arm does not record its cost."""
    a = (doc.get("arms") or {}).get(arm) or {}
    steps = [r.get("steps") for r in a.get("seeds", [])]
    f = a.get("flops_per_step")
    if not (
        isinstance(f, (int, float))
        and math.isfinite(f)
        and f > 0
        and steps
        and all(isinstance(k, int) and k > 0 for k in steps)
    ):
        return None
    own = float(f) * max(steps)
    t = teacher_flops(doc) if uses_teacher(a) else None
    teacher = t["total"] if t else 0.0
    return {"steps": max(steps), "per_step": float(f), "training": own, "teacher": teacher, "total": own + teacher}


def health_checks(doc: dict) -> list[dict]:
    """What each arm must reach to count as trained (app/experiments/claims.py ``Health``, as data): a known
    experiment's from today's claims, else as the document recorded them (none when it says nothing)."""
    if doc.get("experiment") in CLAIMS:
        return CLAIMS[doc["experiment"]].as_dict()["health"]
    return list(doc.get("claim", {}).get("health") or [])


def health_value(record: dict, measure: str) -> float | None:
    """One seed's number for a health check: a final number, or "train_loss_drop" (the first logged training
    loss minus the last) or "teacher_gap" (the teacher's held-out masked top-1 minus this student's); None when
    the seed does not record it."""
    if measure == "train_loss_drop":
        losses = [x for x in (record.get("curves") or {}).get("train_loss", []) if x is not None and math.isfinite(x)]
        return losses[0] - losses[-1] if len(losses) >= 2 else None
    if measure == "teacher_gap":
        teacher = ((record.get("details") or {}).get("teacher_final") or {}).get("top1")
        student = (record.get("final") or {}).get("valid_top1")
        ok = all(isinstance(x, (int, float)) and math.isfinite(x) for x in (teacher, student))
        return float(teacher) - float(student) if ok else None
    v = (record.get("final") or {}).get(measure)
    return float(v) if isinstance(v, (int, float)) and math.isfinite(v) else None


def health(doc: dict) -> dict[str, list[dict]]:
    """Every arm's health checks, seed by seed: arm -> [{what, measure, floor, why, on, values: {seed: value or
    None}, failed: [seeds below the floor or without the number], passed, failure}] where ``failure`` is the
    sentence a comparison with this arm shows instead of a verdict ("electra did not learn its task
    (discriminator ROC-AUC on held-out replaced tokens 0.561, 0.541, 0.544 on seeds 0, 1, 2; needs ≥ 0.75)")."""
    out: dict[str, list[dict]] = {arm: [] for arm in doc.get("arms", {})}
    for h in health_checks(doc):
        floor = _floor(h, doc.get("budget") or {})
        for arm in h["arms"] or list(out):
            if arm not in out:
                continue
            values = {r.get("seed", i): health_value(r, h["measure"]) for i, r in enumerate(doc["arms"][arm]["seeds"])}
            failed = [s for s, v in values.items() if v is None or floor is None or v < floor]
            row = {
                "what": h["what"],
                "measure": h["measure"],
                "floor": floor,
                "why": h["why"],
                "on": tuple(h["on"]),
                "values": values,
                "failed": failed,
                "passed": not failed,
                "failure": "",
            }
            if failed:
                row["failure"] = f"{h['fails'].format(arm=arm)} ({_failed_text(h['what'], values, failed, floor)})"
            out[arm].append(row)
    return out


def _failed_text(what: str, values: dict, failed: list, floor: float | None) -> str:
    """ "discriminator ROC-AUC 0.561, 0.541, 0.544 on seeds 0, 1, 2 of 3, needs ≥ 0.750"; more than 3 seeds as a
    range: "probe accuracy 0.515 to 0.526 on 10 of 10 seeds, needs ≥ 0.531"."""
    known = [values[s] for s in failed if values[s] is not None]
    if len(known) < len(failed):
        shown = "not recorded"
    elif len(failed) <= 3:
        shown = ", ".join(fmt(v) for v in known)
    else:
        shown = f"{fmt(min(known))} to {fmt(max(known))}"
    where = (
        f"seed{'s' if len(failed) != 1 else ''} {', '.join(str(s) for s in failed)} of {len(values)}"
        if len(failed) <= 3
        else f"{len(failed)} of {len(values)} seeds"
    )
    needs = f"needs ≥ {fmt(floor)}" if floor is not None else "its floor needs a count the budget does not record"
    return f"{what} {shown} on {where}, {needs}"


def _floor(h: dict, budget: dict) -> float | None:
    from app.experiments.claims import Health

    return Health(**{**h, "arms": tuple(h["arms"]), "on": tuple(h["on"])}).floor_of(budget)


def failures(checks: dict[str, list[dict]], comp: dict) -> str:
    """Why ``comp``'s arms do not count as trained ("" when both do): the failed checks that apply to it (a
    check limited to some metrics applies only to comparisons on them), A's first."""
    found = []
    for arm in (comp["better"], comp["worse"]):
        for row in checks.get(arm, []):
            if row["failure"] and (not row["on"] or comp["metric"] in row["on"]):
                found.append(row["failure"])
    return "; ".join(found)


def tests(doc: dict) -> dict[str, verdict_rule.Verdict]:
    """Per comparison whose arms are in ``doc``: its test judged alone (verdict.compare, paired by seed), before
    the family's adjustment — or no verdict (verdict.unhealthy) when an arm failed its health check."""
    out = {}
    comparisons, metrics = plan(doc)
    checks = health(doc)
    for comp in comparisons:
        if comp["better"] not in doc["arms"] or comp["worse"] not in doc["arms"]:
            continue
        a, b = per_seed(doc, comp["better"], comp["metric"]), per_seed(doc, comp["worse"], comp["metric"])
        if not a or not b:
            continue
        seeds = len(set(a) & set(b)) or min(len(a), len(b))
        v = verdict_rule.compare(
            a,
            b,
            metrics[comp["metric"]]["higher_is_better"],
            comp.get("kind", verdict_rule.SUPERIORITY),
            comp.get("margin", 0.0),
            scale(doc, comp, seeds),
            MARGINS.get(comp["metric"], (0.0, ""))[0],
        )
        v = verdict_rule.with_items(v, items_test(doc, comp, v, metrics[comp["metric"]]["higher_is_better"]))
        failure = failures(checks, comp)
        if failure:
            v = verdict_rule.unhealthy(v, failure)
        elif comp.get("counted_in"):
            other = next((c for c in comparisons if c["key"] == comp["counted_in"]), None)
            named = f"“{other['claim'].rstrip('.')}” ({comp['counted_in']})" if other else comp["counted_in"]
            v = verdict_rule.counted_once(v, named, comp.get("counted_why") or "it measures the same effect")
        out[comp["key"]] = v
    return out


def item_outcomes(doc: dict, arm: str, metric: str) -> dict:
    """{seed: "0101…"} a probe's per-item outcomes on its test items, for the seeds of ``arm`` that record them
    (``details["items"][metric]``); empty today: no stored result records them yet."""
    out = {}
    for i, r in enumerate(doc["arms"][arm]["seeds"]):
        bits = ((r.get("details") or {}).get("items") or {}).get(metric)
        if isinstance(bits, str) and bits:
            out[r.get("seed", i)] = bits
    return out


def items_test(doc: dict, comp: dict, v: verdict_rule.Verdict, higher_is_better: bool = True):
    """The bootstrap over a probe's test items × the seeds for a comparison on a probe (claims.ITEMS), or None (not a
    probe, too few seeds, or a budget that does not count the items)."""
    key = ITEMS.get(comp["metric"])
    n = (doc.get("budget") or {}).get(key) if key else None
    if not isinstance(n, int) or n <= 0 or v.design != "paired":
        return None
    from app.experiments import bootstrap

    a, b = per_seed(doc, comp["better"], comp["metric"]), per_seed(doc, comp["worse"], comp["metric"])
    return bootstrap.items_bootstrap(
        a,
        b,
        n,
        higher_is_better,
        v.boundary,
        v.eq_margin,
        item_outcomes(doc, comp["better"], comp["metric"]),
        item_outcomes(doc, comp["worse"], comp["metric"]),
    )


def other_metrics(doc: dict, better: str, worse: str, metric: str) -> list[dict]:
    """What arms ``better`` (A) and ``worse`` (B) show on the experiment's other metrics (all but ``metric`` and the
    parameter count), paired by seed: [{metric, label, unit, difference (mean A − B, positive = the claimed
    direction), same (seeds with that sign), seeds}] — described, not tested. Metrics with fewer than 2 shared seeds
    are left out."""
    name = doc.get("experiment")
    metrics = CLAIMS[name].as_dict()["metrics"] if name in CLAIMS else (doc.get("claim") or {}).get("metrics", {})
    out = []
    for key, m in metrics.items():
        if key in (metric, "params") or better not in doc["arms"] or worse not in doc["arms"]:
            continue
        a, b = per_seed(doc, better, key), per_seed(doc, worse, key)
        seeds = [s for s in a if s in b]
        if len(seeds) < 2:
            continue
        sign = 1.0 if m["higher_is_better"] else -1.0
        diffs = [sign * (a[s] - b[s]) for s in seeds]
        mean = statistics.fmean(diffs)
        same = sum(1 for d in diffs if (d > 0) == (mean > 0) and d != 0)
        out.append(
            {
                "metric": key,
                "label": m["label"],
                "unit": m.get("unit", ""),
                "difference": mean,
                "same": same,
                "seeds": len(seeds),
            }
        )
    return out


def other_metrics_text(rows: list[dict]) -> str:
    """:func:`other_metrics` in words: "held-out masked-LM loss −0.194 nats (that sign on 10 of 10 seeds); …"."""
    return "; ".join(
        f"{short_label(r['label'])} {signed(r['difference'])}{' ' + r['unit'] if r['unit'] else ''} "
        f"(that sign on {r['same']} of {count(r['seeds'], 'seed')})"
        for r in rows
    )


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
        by_teacher = teacher_of_seeds(docs[name])
        if len(set(by_teacher.values())) > 1:  # more than one teacher: the label must hold within each one's seeds
            v = verdict_rule.across_teachers(v, by_teacher)
        if c.get("ours"):  # tested away from where the paper made it: the label says whose claim it judges
            v = replace(v, label=f"{v.label} {OURS}")
        out[name][key] = {"better": c["better"], "worse": c["worse"], "metric": c["metric"], **v.as_dict()}
    return out


_family_lock = threading.RLock()  # one_line holds it around judged_family


def judged_family() -> dict[str, dict[str, dict]]:
    """:func:`judged` of the bundled :func:`family`, computed once per version of its files and by one thread at a
    time: a class opening the lessons at once asked for it from 20 sessions together (every lesson's claim line),
    and each computed the whole family's tests (50-200 ms with the interpreter's lock held) before the first had
    kept it."""
    with _family_lock:
        return _judged_family(_versions(None))


@functools.lru_cache(maxsize=4)
def _judged_family(versions: tuple) -> dict[str, dict[str, dict]]:
    return judged(family())


def verdicts(doc: dict, others: dict[str, dict] | None = None) -> dict[str, dict]:
    """Per comparison of the claim: the verdict computed from the arms' per-seed final numbers (verdict.py's
    rule), adjusted by Holm over the page's family — this document's comparisons and those of the other
    experiments' results (``others``, {name: doc}; default: the documents in :func:`folder`). Comparisons whose
    arms are not in the document are left out."""
    name = doc.get("experiment", "")
    if others is None and family().get(name) is doc:  # the bundled document itself: the family judged once
        return judged_family()[name]
    docs = {k: d for k, d in (family() if others is None else others).items() if k != name}
    docs[name] = doc
    order = list(CLAIMS) + sorted(k for k in docs if k not in CLAIMS)  # the page's order: Holm's ties keep it
    return judged({k: docs[k] for k in order if k in docs})[name]


OURS = "(our setting, not the paper's)"

MEASURED_START, MEASURED_END = "<!-- verdicts:start -->", "<!-- verdicts:end -->"


def measured_table(where: Path | None = None) -> str:
    """docs/results.md's "Measured" table: every comparison of every claim with results in ``where`` (default
    :func:`folder`), judged together (Holm over the m with results), as markdown."""
    docs = family(where)
    found = judged(docs)
    rows = [v for d in found.values() for v in d.values()]
    m = max((v["m"] for v in rows), default=0)
    unhealthy = sum(bool(v["health"]) for v in rows)
    once = sum(bool(v.get("counted_in")) and not v["health"] for v in rows)
    lines = [
        f"{len(rows)} comparisons with results, recomputed from `assets/experiments/*.json` by "
        "`python -m app.experiments verdicts --readme docs/results.md` (a full `run` rewrites it). First, health "
        "before verdict: every arm must reach, on every seed, what its experiment requires to count as trained "
        "(`Health` in `app/experiments/claims.py`); "
        f"{count(unhealthy, 'comparison')} with an arm that does not get *no verdict* and "
        f"leave{'s' if unhealthy == 1 else ''} "
        f"the family. "
        + (
            f"{count(once, 'comparison')} that measure{'s' if once == 1 else ''} the same effect as another "
            "comparison of the family (the teacher's inheritance, in distillation) "
            f"{'is' if once == 1 else 'are'} counted once, there: shown, *not a separate test*. "
            if once
            else ""
        )
        + f"The other {m}: paired t-tests on the "
        "per-seed differences A − B (positive = the claimed direction), the 95% interval against the claim's "
        "boundary (0; −margin for *not worse by more than*; ±margin for *about as good as*), Holm's step-down at "
        f"5% over those {m} (rank k needs p ≤ 0.05/(m − k + 1)). Three outcomes against the margin: *different* "
        "(Holm passes the claim's test: *reproduces* or *reverses*), *equivalent within ±margin* (not different, "
        "but the 95% interval lies inside ± the metric's margin: TOST, Holm's step-down at the same 5% over the "
        f"{m} equivalence tests), *inconclusive* (neither; *not settled by N seeds* where the interval clears "
        "the boundary alone but not after Holm). A − B is also given in margins of its metric.",
        "",
        "| experiment | claim (A vs B) | kind, margin | metric | A − B, 95% interval | in margins | seeds | "
        "p (Holm needs) | TOST p (Holm needs) | verdict |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name, claim in CLAIMS.items():
        for c in claim.comparisons:
            v = found.get(name, {}).get(c.key)
            metric = claim.metrics[c.metric]
            unit = f" {metric.unit}" if metric.unit else ""
            kind = c.kind + (f", margin {c.margin:g}{unit}" if c.margin else "")
            ours = "*(ours)* " if c.ours_for(docs.get(name)) else ""
            head = f"| {name} | {ours}{c.claim} (`{c.better}` vs `{c.worse}`) | {kind} | {short_label(metric.label)} |"
            if v is None:
                lines.append(f"{head} — | — | — | — | — | not run yet |")
                continue
            margins = margins_text(v)
            if not v["enough_seeds"]:
                lines.append(
                    f"{head} {signed(v['difference'])} | {margins} | {v['n_a']}/{v['n_b']} | — | — | {v['label']} |"
                )
                continue
            n = f"{v['n']} paired" if v["design"] == "paired" else f"{v['n_a']}+{v['n_b']} (Welch)"
            interval = f"{signed(v['difference'])} [{signed(v['ci_low'])}, {signed(v['ci_high'])}]"
            if v["health"] or v.get("counted_in"):
                lines.append(
                    f"{head} {interval} | {margins} | {n} | {v['p']:.2g} (not tested) | — | {v['label']} |"
                    if v.get("counted_in")
                    else f"{head} {interval} | {margins} | {n} | — (not tested) | — | {v['label']} |"
                )
            else:
                lines.append(
                    f"{head} {interval} | {margins} | {n} | {v['p']:.2g} (≤ {v['holm_threshold']:.2g}, rank "
                    f"{v['rank']}) | {tost_text(v)} | {v['label']} |"
                )
    return "\n".join(lines + ["", *items_table(found), *compute_lines(docs), *teacher_lines(found)])


def teacher_lines(found: dict[str, dict[str, dict]]) -> list[str]:
    """The measured table's across-teachers check (verdict.across_teachers), one line per comparison of an
    experiment with more than one teacher; [] when none has."""
    rows = [(name, key, v) for name, d in found.items() for key, v in d.items() if v.get("teacher_check")]
    if not rows:
        return []
    out = [
        "",
        "**Across teachers.** Each verdict of an experiment with more than one teacher, checked within each "
        "teacher's seeds (`verdict.across_teachers`): a label that a teacher's mean or whole interval contradicts "
        f"becomes *{verdict_rule.INCONCLUSIVE}: {verdict_rule.DEPENDS}*.",
        "",
    ]
    return out + [f"- {name}, `{key}` ({v['label']}): {v['teacher_check']}." for name, key, v in rows]


def compute_lines(docs: dict[str, dict]) -> list[str]:
    """The whole recipe's compute of every arm of an experiment with a teacher (:func:`recipe_flops`), as a paragraph
    for docs/results.md: the teacher's training and each arm's total."""
    out = []
    for name, doc in docs.items():
        t = teacher_flops(doc)
        if not t:
            continue
        arms = {arm: recipe_flops(doc, arm) for arm in doc["arms"]}
        parts = ", ".join(
            f"`{arm}` {r['total'] / 1e12:.1f}" + (" (no teacher)" if not r["teacher"] else "")
            for arm, r in arms.items()
            if r
        )
        if t["count"] == 1:
            out += [
                "",
                f"**Compute, the whole recipe counted ({name}).** The teacher's training, by the arms' own count "
                f"(`flops.mlm_step`, {t['layers']} layers, {t['steps']:,} steps): {t['total'] / 1e12:.1f} TFLOP, "
                f"counted in every arm that needs the teacher (its layers or its soft targets). Each arm's total, "
                f"in TFLOP: {parts}. One teacher, trained once: its own seed-to-seed spread is in none of the "
                "intervals above.",
            ]
            continue
        out += [
            "",
            f"**Compute, the whole recipe counted ({name}).** {t['count']} teachers, teacher k trained with seed k; "
            f"each one's training, by the arms' own count (`flops.mlm_step`, {t['layers']} layers, {t['steps']:,} "
            f"steps): {t['total'] / 1e12:.1f} TFLOP, counted in every seed's recipe that needs a teacher (its "
            f"layers or its soft targets) once, its own teacher's. Each arm's total per seed, in TFLOP: {parts}. "
            f"The experiment trained its teachers once each: {t['all'] / 1e12:.1f} TFLOP in all. Student seed s "
            f"distilled teacher s mod {t['count']}; every verdict's direction is also checked within each "
            f"teacher's seeds (below); the spread between {t['count']} teachers is not estimated.",
        ]
    return out


def items_table(found: dict[str, dict[str, dict]]) -> list[str]:
    """The measured table's companion: every comparison that rests on a probe (claims.ITEMS), its interval over the
    seeds alone beside the bootstrap over the probe's test items × the seeds (app/experiments/bootstrap.py), and, where
    the comparison has no verdict, what its arms show on the experiment's other metrics (described, not tested)."""
    rows = [
        (name, c, found.get(name, {}).get(c.key))
        for name, claim in CLAIMS.items()
        for c in claim.comparisons
        if c.metric in ITEMS
    ]
    rows = [(name, c, v) for name, c, v in rows if v and v.get("p_items") is not None and math.isfinite(v["p_items"])]
    if not rows:
        return []
    from app.experiments import bootstrap

    exact = sum("per-item outcomes stored" in v["items_how"] for _, _, v in rows)
    how = (
        "from the stored accuracies (no per-item outcomes are stored): each arm's accuracy on n resampled items is "
        "Binomial(n, p)/n, one draw shared by every seed, the two arms drawn independently — both assumptions widen "
        f"the interval — with the seeds resampled, {bootstrap.DRAWS:,} draws"
        if not exact
        else f"exactly, from per-item outcomes, for {exact} of these {len(rows)} and from the stored accuracies "
        "for the rest"
    )
    lines = [
        "**Where a probe decides: items × seeds.** A probe's number is an accuracy on one fixed set of test items, "
        "the same for every arm and seed; the seed-level test above ignores that another draw of items would move "
        "every accuracy. A bootstrap over the probe's items × the seeds (`app/experiments/bootstrap.py`) puts "
        "that back, and Holm ranks the larger of its p and the t-test's. Today it is drawn " + how + ": exact "
        "needs each seed's 0/1 outcome on every test item, which no stored result records yet (a rerun that "
        "stores them).",
        "",
        "| experiment | claim (A vs B) | A − B | seeds alone: 95% interval, p | items × seeds: 95% interval, p | "
        "verdict | the other metrics (described, not tested) |",
        "|---|---|---|---|---|---|---|",
    ]
    docs = family()
    for name, c, v in rows:
        others = "—"
        if (v.get("health") or v.get("counted_in")) and name in docs:
            others = other_metrics_text(other_metrics(docs[name], c.better, c.worse, c.metric)) or "—"
        lines.append(
            f"| {name} | {c.claim} (`{c.better}` vs `{c.worse}`) | {signed(v['difference'])} | "
            f"[{signed(v['ci_low'])}, {signed(v['ci_high'])}], {v['p']:.2g} | [{signed(v['items_low'])}, "
            f"{signed(v['items_high'])}], {v['p_items']:.2g} | {v['verdict']} | {others} |"
        )
    return lines


def rewrite_verdicts(where: Path | None = None) -> list[Path]:
    """Rewrite the ``verdicts`` convenience copy of every results file in ``where`` (default :func:`folder`) from
    its seeds with today's claims, health checks and family, so the stored JSON says what the page and README
    say; nothing else in a file changes. Returns the files rewritten."""
    docs, done = family(where), []
    found = judged(docs)
    for name, doc in docs.items():
        doc = dict(doc)
        doc["verdicts"] = [dict(key=key, **v) for key, v in found[name].items()]
        write(doc, path_of(name, where))
        done.append(path_of(name, where))
    return done


def margins_text(v: dict) -> str:
    """A difference and its interval as multiples of the margin it is judged against: "+0.63 [+0.10, +1.17]"
    ("—" when no margin is stated for its metric)."""
    m = v.get("eq_margin") or 0.0
    if not m > 0 or v.get("difference") is None:
        return "—"
    if not v.get("enough_seeds"):
        return f"{signed(v['difference'] / m, 2)}"
    return f"{signed(v['difference'] / m, 2)} [{signed(v['ci_low'] / m, 2)}, {signed(v['ci_high'] / m, 2)}]"


def tost_text(v: dict) -> str:
    """The equivalence test in a table cell: "2.0e-07 (≤ 0.0036)", or "—" (no margin, no test, or the claim is
    itself an equivalence claim, whose p is the claim's)."""
    pe, thr = v.get("p_equiv"), v.get("equiv_threshold")
    if (
        v.get("kind") == verdict_rule.EQUIVALENCE
        or pe is None
        or thr is None
        or not math.isfinite(pe)
        or not math.isfinite(thr)
    ):
        return "—"
    return f"{pe:.2g} (≤ {thr:.2g})"


def write_measured(path: Path, where: Path | None = None) -> None:
    """Put :func:`measured_table` between the verdicts markers of ``path`` (docs/results.md)."""
    path = Path(path)
    body = path.read_text(encoding="utf-8")
    if MEASURED_START not in body or MEASURED_END not in body:
        raise ValueError(f"{path} has no {MEASURED_START} … {MEASURED_END} markers")
    block = f"{MEASURED_START}\n{measured_table(where)}\n{MEASURED_END}"
    path.write_text(
        body[: body.index(MEASURED_START)] + block + body[body.index(MEASURED_END) + len(MEASURED_END) :],
        encoding="utf-8",
    )


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
    with _family_lock:  # one thread computes a line; the others then find it kept
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
    interval = (
        f"; {signed(h['difference'])} in the claimed direction, 95% interval {signed(h['ci_low'])} to "
        f"{signed(h['ci_high'])}, p {h['p']:.2g} where Holm over {h['m']} comparisons needs ≤ "
        f"{h['holm_threshold']:.2g}"
        if h["enough_seeds"] and not h["health"] and not h.get("counted_in")
        else ""
    )
    return (
        f"Does it work? {better} vs {worse}, {short_label(metric['label'])}: {fmt(h['mean_a'])} vs "
        f"{fmt(h['mean_b'])} ({seeds} seed{'s' if seeds != 1 else ''}{smoke}{interval}) — {h['label']}"
    )
