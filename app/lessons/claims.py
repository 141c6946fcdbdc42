"""Does it work? Each paper's claim replayed as a controlled experiment: the curves of its arms (the mean and
a band of ± one standard deviation over seeds, per training step or per training FLOP), the final numbers
with their spread, the paper's reported effect beside ours, and a verdict computed from the seeds.

The experiments themselves live in app/experiments/ (one module per claim; ``python -m app.experiments
run NAME`` writes ``assets/experiments/NAME.json``). This lesson only reads them. Terms:

- an **arm** is one training recipe setting (static vs dynamic masking, NSP vs SOP, ...); every arm of an
  experiment trains the same model on the same data for the same steps (ELECTRA's: the same FLOPs), and
  differs in the setting its label names; where two compared arms spend different compute (distillation's
  soft arms also run the teacher) the page says so with both numbers (:func:`compute_note`), and the
  distillation page sets the teacher's score beside its students' (:func:`teacher_note`);
- a **seed** is one independent training run of an arm (its own initialisation and batch order); the
  spread over seeds is how much an arm's result moves by chance alone;
- a **comparison** is the paper's claim about arm A against arm B on metric m, with the paper's own numbers
  (app/experiments/claims.py), in one of three kinds: A beats B (*superiority*), A is not worse than B by
  more than a stated margin (*noninferiority*), A and B are within ± the margin (*equivalence*);
- the **verdict** is app/experiments/verdict.py's rule applied to the per-seed final numbers: a paired t-test
  on the per-seed differences A − B (Welch's where the arms share no seeds), its 95% interval against the
  claim's boundary (0, −margin or ±margin), adjusted by Holm over every comparison of the page that has a
  test (m, counted from the results). Three outcomes against the margin: *different* (*reproduces* when
  the difference is clearly on the claim's side, *reverses* when clearly on the other, with the scale it
  was measured at), *equivalent within ±margin* (not different, and the interval clearly inside ± the
  metric's margin: TOST, Holm at the same level), *inconclusive at this scale* (neither); every difference is
  also shown as a multiple of its margin. No conclusion on this page is written by hand;
- **health before verdict**: each experiment states what an arm must reach to count as trained
  (app/experiments/claims.py ``Health``: ELECTRA's discriminator a held-out ROC-AUC floor, a probe clearly above
  chance, a teacher stronger than its students, a training loss that fell), checked on every seed; a comparison
  with an arm that fails gets *no verdict* (with the arm and its numbers) and leaves Holm's family
  (:func:`health_lines` says every check of the two arms).

When no results are there yet (before the full runs), the lesson shows the paper's side, the command that
produces ours, and the live run (app/experiments/live.py: the smallest pair of arms, trained for a minute).
``BVE_EXPERIMENTS_DIR`` points the lesson at another results folder (a ``--quick`` run's output).
"""

from __future__ import annotations

from app.core import preload  # noqa: F401  (first: the router calls preload.load() before a lesson runs)

preload.load()  # the heavy imports, once, in one thread, before this module's own (a page run outside the router too)

import math
from dataclasses import dataclass
from pathlib import Path

from app.core import text as txt
from app.experiments import EXPERIMENTS, plans, results
from app.experiments.results import short_label
from app.experiments import verdict as rule
from app.experiments.claims import CLAIMS, MARGINS
from app.core.lesson import Note, direct, inputs_from
from app.core.state import Param, Spec, figure_param, seed_param

ORDER = 100  # its place in teaching order (app/lessons/__init__.py lists lessons by it)
TITLE = 'Does it work?'
ICON = ':material/science:'
LINE = "Each paper's claim replayed as a controlled experiment: curves over seeds and a verdict computed from them."

NAMES = tuple(EXPERIMENTS)
CURVE_METRICS = ("train_loss",) + tuple(dict.fromkeys(m for c in CLAIMS.values() for m in c.metrics if m != "params"))
TRAIN_LOSS_LABEL = "training loss (every 20 steps; the arms' losses differ in what they add to the masked LM)"
MODELS: tuple[str, ...] = ()  # it runs no model: it reads the stored experiment results
TAKEAWAY = "A claim holds only when A − B over paired seeds clears its bound after Holm's adjustment."
SPEC = Spec(
    Param(
        "claim",
        "choice",
        "masking",
        choices=NAMES,
        widget="select",
        label="Claim",
        labels=tuple((n, CLAIMS[n].title) for n in NAMES),
        help="Which paper's claim to look at.",
    ),
    Param(
        "compare",
        "int",
        0,
        lo=0,
        hi=19,
        widget="select",
        label="Comparison",
        help="The claim's comparisons: arm A beats arm B on one metric, as the paper said.",
    ),
    Param(
        "metric",
        "choice",
        "auto",
        choices=("auto",) + CURVE_METRICS,
        widget="select",
        label="Curves of",
        help="What the curves show; *auto* is the comparison's own metric.",
    ),
    Param(
        "x",
        "choice",
        "auto",
        choices=("auto", "step", "flops"),
        widget="radio",
        label="Curves against",
        labels=(("auto", "as the paper compares"), ("step", "training steps"), ("flops", "training FLOPs")),
        help="ELECTRA's claim is per unit of compute: its arms take different numbers of steps for the same FLOPs.",
    ),
    Param(
        "arms",
        "choice",
        "pair",
        choices=("pair", "all"),
        widget="radio",
        label="Arms",
        labels=(("pair", "the two compared"), ("all", "every arm")),
        help="Draw the two compared arms, or all of them.",
    ),
    seed_param(label="Seed of the live run", help="The live run's models and batches come from this seed."),
    Param(
        "seconds",
        "int",
        60,
        lo=10,
        hi=60,
        step=5,
        widget="slider",
        label="Live run length (s)",
        help="Training wall time of the live run (at most 60 s), after its data is prepared.",
    ),
    figure_param(
        (("curves", "The comparison's curves and its verdict"), ("finals", "Final numbers: every seed, mean ± sd"))
    ),
)
VERDICT_LEVEL = {
    rule.REPRODUCES: "success",
    rule.EQUIVALENT: "info",
    rule.TOO_SMALL: "info",
    rule.REVERSES: "error",
    rule.NO_VERDICT: "warning",
    rule.NOT_COUNTED: "info",
}


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


def shared_key(inputs) -> tuple:
    """What a Result depends on besides its Inputs: the results files as they are now (every experiment's: the
    family is judged together). app/ui/cache.result_key adds it to the key of the Result every session shares, so a
    file a run rewrites gives a new Result, not the one computed from the old file."""
    return tuple(_version(name) for name in CLAIMS)


# ----------------------------------------------------------------------------- what the page shows


PAIRING = (
    "a seed sets both arms' initial weights (the same where their shapes match) and the random stream that "
    "orders their batches; what an arm's recipe changes — its masks, its copies of the data, its objective — "
    "differs by design, so their batches and masks need not be the same"
)


def pairing_text(doc: dict | None, better: str, worse: str) -> str:
    """What pairing A and B by seed means for these two arms: :data:`PAIRING`, and their step counts when they
    differ (ELECTRA's arms spend the same FLOPs in different numbers of steps)."""
    arms = (doc or {}).get("arms", {})
    steps = [
        sorted({r.get("steps") for r in arms.get(k, {}).get("seeds", []) if isinstance(r.get("steps"), int)})
        for k in (better, worse)
    ]
    if all(len(x) == 1 for x in steps) and steps[0] != steps[1]:
        return (
            f"{PAIRING}; and A trained {steps[0][0]:,} steps, B {steps[1][0]:,}, so even the number of batches differs"
        )
    return PAIRING


@dataclass(frozen=True)
class PaperRow:
    measure: str
    better: float | None  # the paper's value for the arm claimed better (None when it reports only the change)
    worse: float | None
    difference: float | None  # better − worse, as the paper measured it (higher is better there)


@dataclass(frozen=True)
class Comparison:
    """One of the claim's comparisons, with the paper's numbers and (when results exist) the verdict.

    verdict: app/experiments/verdict.py's Verdict as a dict (verdict, label, kind, margin, boundary, design,
    seeds, diffs, difference — positive in the claimed direction —, sd, se, df, t, p, ci_low, ci_high, m, rank,
    holm_threshold, p_holm, enough_seeds, scale, reason; mean_a, mean_b, sd_a, sd_b, n_a, n_b), None before a
    run. kind, margin, margin_why: the claim's kind and margin (app/experiments/claims.py)."""

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
    kind: str = rule.SUPERIORITY
    margin: float = 0.0
    margin_why: str = ""
    health: tuple[str, ...] = ()  # every health check of A and B, one markdown line each (health_lines)
    pairing: str = PAIRING  # what pairing by seed shares between A and B, and what it does not (pairing_text)
    ours: str = ""  # tested away from where the paper made it: where the paper did and where we do ("" otherwise)
    others: str = ""  # the two arms on the experiment's other metrics, described (results.other_metrics_text)
    plan: tuple[dict, ...] = ()  # the comparison's plan, version by version (plans.claim_history): what changed, when
    looks: int = 0  # recorded runs it was read from, the results on the page included (plan_looks)
    dirty_looks: int = 0  # ... of them from a tree with uncommitted changes to app/
    followed: str = ""  # the plan version the page's results followed, in words (followed_text)


@dataclass(frozen=True)
class FamilyRow:
    """One comparison of the page's family (every claim's), for the overview of all of them: its verdict (None
    before its experiment ran), and the unit its difference is drawn in (its metric's margin)."""

    experiment: str
    key: str
    claim: str
    kind: str
    metric: str
    metric_label: str
    unit: str
    higher_is_better: bool
    margin: float
    scale_unit: float  # the metric's margin (claims.MARGINS): differences are drawn in units of it
    verdict: dict | None
    chosen: bool  # the comparison the page is on


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
    family: tuple[FamilyRow, ...] = ()  # every comparison of the page, every claim's, with its Holm-adjusted verdict
    m: int = 0  # comparisons Holm adjusts over (those with results and enough seeds)

    @property
    def comparison(self) -> Comparison:
        return self.comparisons[self.chosen]


@inputs_from(SPEC)
class Inputs:
    """The page's values as the lesson reads them: one field per SPEC parameter (app.core.lesson.inputs_from)."""


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


def comparisons(name: str, doc: dict | None, found: dict | None = None) -> tuple[Comparison, ...]:
    """The claim's comparisons with the paper's numbers, and the verdicts recomputed from ``doc``'s seeds
    (``found``: {key: verdict} already computed, e.g. by :func:`family`)."""
    claim = CLAIMS[name]
    if found is None:
        found = results.verdicts(doc) if doc else {}
    labels = arm_labels(name, doc)
    checks = results.health(doc) if doc else {}
    out = []
    for c in claim.comparisons:
        m = claim.metrics[c.metric]
        out.append(
            Comparison(
                c.key,
                c.claim,
                c.better,
                c.worse,
                labels[c.better],
                labels[c.worse],
                c.metric,
                m.label,
                m.higher_is_better,
                m.unit,
                c.source,
                c.note,
                tuple(PaperRow(r.measure, r.better, r.worse, r.difference) for r in c.paper),
                found.get(c.key),
                c.kind,
                c.margin,
                c.margin_why,
                health_lines(checks, c.better, c.worse, c.metric),
                pairing_text(doc, c.better, c.worse),
                c.ours_for(doc),
                results.other_metrics_text(results.other_metrics(doc, c.better, c.worse, c.metric)) if doc else "",
                *plan_parts(name, c.key, doc),
            )
        )
    return tuple(out)


def plan_looks(name: str, key: str, doc: dict | None) -> tuple[int, int]:
    """(recorded runs the comparison was read from, those from a dirty tree): the plan history's looks, and the
    page's own results when they are a run the history does not list yet (matched by when it finished)."""
    history = plans.claim_history(name, key)
    n, dirty = sum(r["looks"] for r in history), sum(r["dirty_looks"] for r in history)
    finished = ((doc or {}).get("meta") or {}).get("finished")
    if doc and not doc.get("quick") and finished not in {look.finished for look in plans.looks(name)}:
        n += 1
        dirty += bool(((doc.get("meta") or {}).get("git") or {}).get("dirty"))
    return n, dirty


def followed_text(name: str, doc: dict | None) -> str:
    """Which plan version the results followed and when it was fixed, in words ("" before a run)."""
    if not doc:
        return ""
    p = plans.version_of(name, doc)
    last = plans.current(name)
    now = "" if p.version == last.version else f" (the current plan is version {last.version}, {last.date})"
    return f"plan version {p.version} of {p.date}, fixed {p.fixed}{now}"


def plan_parts(name: str, key: str, doc: dict | None) -> tuple:
    """(plan history rows, looks, dirty looks, followed) for :class:`Comparison`."""
    looks, dirty = plan_looks(name, key, doc)
    return tuple(plans.claim_history(name, key)), looks, dirty, followed_text(name, doc)


def history_rows(c: Comparison) -> list[dict]:
    """The comparison's plan history as table rows: one per version, what it decided on and what changed."""
    rows = []
    for h in c.plan:
        changed = ", ".join(h["changed"]) or ("—" if h["version"] > c.plan[0]["version"] else "first")
        rows.append(
            {
                "version": h["version"],
                "date": h["date"],
                "seeds": h["seeds"],
                "metric": h["metric"],
                "kind": h["kind"] + (f" ±{h['margin']:g}" if h["margin"] else ""),
                "changed": changed,
                "fixed": h["fixed"],
                "looks": h["looks"],
                "why": h["why"],
            }
        )
    return rows


def looks_text(c: Comparison) -> str:
    """How many times the comparison was looked at and what moved between looks (markdown, one paragraph)."""
    if not c.plan:
        return ""
    seeds = " → ".join(str(s) for s in dict.fromkeys(h["seeds"] for h in c.plan))
    metrics = " → ".join(dict.fromkeys(h["metric"] for h in c.plan))
    after = sum(h["fixed"] == plans.AFTER for h in c.plan)
    parts = [
        f"**Looked at {txt.count(c.looks, 'time')}** (recorded runs read for this comparison"
        + (f", {c.dirty_looks} of them from a tree with uncommitted changes" if c.dirty_looks else "")
        + ")."
    ]
    parts.append(f"Seeds {seeds}" + (f"; metric {metrics}" if "→" in metrics else "") + ".")
    parts.append(
        f"{txt.count(len(c.plan), 'plan version')}, {after} of them written after looking at results"
        + (f"; the results on this page followed {c.followed}." if c.followed else ".")
    )
    if c.looks > 1:
        parts.append(
            "Each look is another chance to see a difference by chance: Holm's adjustment counts the "
            "comparisons of one look, not the looks."
        )
    return " ".join(parts)


def health_lines(checks: dict[str, list[dict]], better: str, worse: str, metric: str) -> tuple[str, ...]:
    """Every health check that applies to a comparison's two arms (results.health), one markdown line each: what
    the arm must reach, its number on every seed, and whether it passed. Empty before a run."""
    lines = []
    for side, arm in (("A", better), ("B", worse)):
        for row in checks.get(arm, []):
            if row["on"] and metric not in row["on"]:
                continue
            floor = "—" if row["floor"] is None else results.fmt(row["floor"])
            values = ", ".join(f"{'not recorded' if v is None else results.fmt(v)}" for v in row["values"].values())
            verdict = "passes" if row["passed"] else f"**fails** on {txt.count(len(row['failed']), 'seed')}"
            lines.append(
                f"{side} ({txt.md(arm)}): {row['what']} ≥ {floor} on every seed — {values}: {verdict}. "
                f"Why: {row['why']}."
            )
    return tuple(lines)


def _n(x: float, digits: int = 3) -> str:
    """A number as the verdict box prints it: signed, 3 significant digits, a real minus sign."""
    if x is None or not math.isfinite(x):
        return "—" if x is None or math.isnan(x) else ("+∞" if x > 0 else "−∞")
    return ("+" if x >= 0 else "−") + f"{abs(x):.{digits}g}"


def claim_line(c: Comparison) -> str:
    """The claim's kind in words and numbers, and why its margin (markdown)."""
    unit = f" {c.unit}" if c.unit else ""
    if c.kind == rule.NONINFERIORITY:
        what = (
            f"**noninferiority**: A is not worse than B by more than {c.margin:g}{unit} "
            f"(A − B > −{c.margin:g}, with A − B positive in the claimed direction)"
        )
    elif c.kind == rule.EQUIVALENCE:
        what = f"**equivalence**: A and B are within ±{c.margin:g}{unit} (−{c.margin:g} < A − B < +{c.margin:g})"
    else:
        what = "**superiority**: A beats B (A − B > 0, with A − B positive in the claimed direction)"
    return f"The claim is of the kind {what}." + (f" Why this margin: {c.margin_why}." if c.margin_why else "")


def verdict_text(c: Comparison, m: int) -> str:
    """The verdict box (markdown): what was measured, the interval, the test with Holm's threshold, the
    verdict and why — every number a student needs to check it by hand."""
    v = c.verdict
    if v.get("health"):
        said = (
            f"**Verdict: {rule.NO_VERDICT}** — {v['why']}. Measured, not tested: A {results.fmt(v['mean_a'], 4)} "
            f"vs B {results.fmt(v['mean_b'], 4)}, A − B = {_n(v['difference'])} in the claimed direction, paired by "
            f"seed ({c.pairing})."
        )
        if _finite(v.get("p_items")):
            said += "  \n" + items_line(v)
        elif v.get("enough_seeds"):
            said += f"  \nOver the seeds alone, 95% interval {_n(v['ci_low'])} to {_n(v['ci_high'])}."
        if c.others:
            said += f"  \n**On the experiment's other metrics** (described, not tested): {c.others}."
        return said + teacher_line(v)
    if v.get("counted_in"):
        return (
            f"**Verdict: {rule.NOT_COUNTED}** — {v['why']}. Measured, not tested: A {results.fmt(v['mean_a'], 4)} "
            f"vs B {results.fmt(v['mean_b'], 4)}, A − B = {_n(v['difference'])} in the claimed direction, 95% "
            f"interval {_n(v['ci_low'])} to {_n(v['ci_high'])}, paired by seed ({c.pairing})."
        ) + teacher_line(v)
    if not v["enough_seeds"]:
        return f"**Verdict: {v['label']}** — {v['why']}."
    sign = "A − B" if c.higher_is_better else "B − A (a loss: lower is better)"
    if v["design"] == "paired":
        per_seed = ", ".join(
            f"seed {s}: {results.fmt(a, 4)} vs {results.fmt(b, 4)} → {_n(d)}"
            for s, a, b, d in zip(v["seeds"], v["a"], v["b"], v["diffs"])
        )
        measured = (
            f"**Measured**, paired by seed ({c.pairing}), A vs B "
            f"and the difference {sign}: {per_seed}. Mean {_n(v['difference'])}, sd {v['sd']:.3g}, "
            f"se = sd/√{v['n']} = {v['se']:.3g}, df = {v['n']} − 1 = {v['df']:g}."
        )
    else:
        measured = (
            f"**Measured**, unpaired (the arms share no seeds): A {results.fmt(v['mean_a'], 4)} (sd {v['sd_a']:.3g}, "
            f"{v['n_a']} seeds) vs B {results.fmt(v['mean_b'], 4)} (sd {v['sd_b']:.3g}, {v['n_b']} seeds): {sign} = "
            f"{_n(v['difference'])}, se = √(sA²/nA + sB²/nB) = {v['se']:.3g}, Welch's df = {v['df']:.3g}."
        )
    where = {
        rule.SUPERIORITY: "above 0",
        rule.NONINFERIORITY: f"above −{v['margin']:g}",
        rule.EQUIVALENCE: f"inside ±{v['margin']:g}",
    }[v["kind"]]
    interval = (
        f"**95% interval** of the difference: {_n(v['ci_low'])} to {_n(v['ci_high'])} (mean ± "
        f"{v['t95']:.3g} × se); the claim holds when it lies {where}."
    )
    boundary = "mean" if not v["boundary"] else f"(mean − ({_n(v['boundary'])}))"
    test = (
        f"**Test**: t = {boundary} / se = {_n(v['t'])}, p = 2·P(T ≥ |t|) = {v['p']:.2g} for Student's T on "
        f"{v['df']:.3g} df{' (on 2 df, P(T ≥ t) = ½(1 − t/√(t² + 2)))' if v['df'] == 2 else ''}. This page makes {m} "
        f"comparison{'s' if m != 1 else ''}, adjusted by Holm: this one's p ranks {v['rank']} of {v['m']}, so it "
        f"must be ≤ 0.05/({v['m']} − {v['rank']} + 1) = {v['holm_threshold']:.2g}."
    )
    lines = [f"**Verdict: {v['label']}**", measured, interval, test]
    if _finite(v.get("p_items")):
        lines.append(items_line(v))
    return "  \n".join(lines + [margin_line(v), f"**Why**: {v['why']}."]) + teacher_line(v)


def teacher_line(v: dict) -> str:
    """With more than one teacher, the verdict box's line on each teacher's seeds (verdict.across_teachers): each
    teacher's mean difference and its own interval, and whether the label holds with each; "" with one teacher, or
    where the why already says it (a label the teachers withdrew)."""
    if not v.get("teacher_check") or rule.DEPENDS in (v.get("label") or ""):
        return ""
    return f"  \n**Across teachers**: {v['teacher_check']}."


def items_line(v: dict) -> str:
    """The verdict box's line on a probe's items: the bootstrap over its test items × the seeds, how it was drawn
    (and its limits), and its interval and p beside the seeds' own — for a comparison without a verdict, the
    intervals only (described, not tested)."""
    said = (
        f"**Over the probe's {v['items']:,} test items × the seeds** (a bootstrap that also redraws the items every "
        f"arm and seed was scored on; {v['items_how']}): A − B 95% interval {_n(v['items_low'])} to "
        f"{_n(v['items_high'])}"
    )
    if v.get("health") or v.get("counted_in"):
        return said + f", where the seeds alone give {_n(v['ci_low'])} to {_n(v['ci_high'])}. No verdict rests on it."
    boundary = _n(v["boundary"]) if v["boundary"] else "0"
    return (
        said + f", p = {v['p_items']:.2g} against {boundary}, where the seeds alone give {_n(v['ci_low'])} to "
        f"{_n(v['ci_high'])}, p = {v['p']:.2g}. Holm ranks the larger p."
    )


def margin_line(v: dict) -> str:
    """The verdict box's line on the margin: the difference and its interval in margins, and the equivalence test
    (TOST) with the threshold Holm gives it — the third outcome, *equivalent within ±margin*."""
    m = v.get("eq_margin") or 0.0
    if not m > 0:
        return "**Against the margin**: no margin is stated for this metric, so there is no equivalence test."
    said = (
        f"**Against the margin** (±{m:g}): A − B = {results.margins_text(v)} margins (mean [95% interval]); "
        f"outcome **{v['outcome']}**"
    )
    if v["kind"] == rule.EQUIVALENCE:
        return said + " (the claim's own test is the equivalence test)."
    return (
        said + f"; TOST (two one-sided tests, the 95% interval inside ±{m:g}) p = {v['p_equiv']:.2g}, Holm over "
        f"the {v['m']} equivalence tests needs ≤ {v['equiv_threshold']:.2g}."
    )


def interval_text(v: dict | None) -> str:
    """A verdict's 95% interval of A − B for a table ("—" without one)."""
    if not v or not v.get("enough_seeds"):
        return "—"
    return f"{_n(v['ci_low'])} to {_n(v['ci_high'])}"


def margins_cell(v: dict | None) -> str:
    """A verdict's A − B and interval in margins of its metric for a table ("—" without a verdict)."""
    return results.margins_text(v) if v else "—"


def p_text(v: dict | None) -> str:
    """A verdict's p and what Holm needs of it for a table: "0.0052 (Holm: ≤ 0.0038, rank 6 of 14)"."""
    if not v or not v.get("enough_seeds") or v.get("health"):
        return "—"
    if v.get("counted_in"):
        return f"{v['p']:.2g} (not a separate test)"
    return f"{v['p']:.2g} (Holm: ≤ {v['holm_threshold']:.2g}, rank {v['rank']} of {v['m']})"


def family_caption(r) -> str:
    """What the overview of every comparison shows, with the units it draws them in."""
    units = "; ".join(
        f"{short_label(CLAIMS[row.experiment].metrics[row.metric].label)} {row.scale_unit:g}"
        + (f" {row.unit}" if row.unit else "")
        for row in {row.metric: row for row in r.family}.values()
    )
    return (
        f"Every comparison of every claim on this page: A − B (positive = the claimed direction) in units of its "
        f"metric's margin ({units}), its 95% interval as a bar, and the boundary its claim needs (a black tick): "
        f"above 0 for *A beats B*, above −1 margin for *not worse by more than*, inside ±1 margin (shaded) for "
        f"*about as good as*. The colour is the verdict after Holm's adjustment over the {r.m} comparisons tested "
        f"(green reproduces, blue equivalent within ± the margin, grey inconclusive, red reverses), so an interval "
        f"that clears its boundary can still be grey; a comparison with an arm that failed its health check, or "
        f"not run yet, has no dot. Intervals past the edge are cut "
        f"there (the number is written at the edge); hover for every number."
    )


def family(name: str, doc: dict | None) -> dict[str, dict[str, dict]]:
    """Every claim's verdicts, adjusted together by Holm: this claim's from ``doc``, the others' from their
    results in the same folder (name -> key -> verdict)."""
    bundled = results.family()
    if bundled.get(name) is doc:  # the bundled documents as they are: judged once per version (results.judged_family)
        return results.judged_family()
    docs = {k: d for k, d in bundled.items() if k != name}
    if doc is not None:
        docs[name] = doc
    return results.judged({k: docs[k] for k in CLAIMS if k in docs})  # the page's order: Holm's ties keep it


def family_rows(found: dict[str, dict[str, dict]], name: str, chosen_key: str) -> tuple[FamilyRow, ...]:
    """The overview's rows: every comparison of every claim in the page's order, with its verdict from
    ``found`` (:func:`family`) or None, and the unit it is drawn in (its metric's margin)."""
    rows = []
    for exp, claim in CLAIMS.items():
        for c in claim.comparisons:
            m = claim.metrics[c.metric]
            rows.append(
                FamilyRow(
                    exp,
                    c.key,
                    c.claim,
                    c.kind,
                    c.metric,
                    m.label,
                    m.unit,
                    m.higher_is_better,
                    c.margin,
                    MARGINS.get(c.metric, (1.0, ""))[0],
                    found.get(exp, {}).get(c.key),
                    exp == name and c.key == chosen_key,
                )
            )
    return tuple(rows)


def live_of(name: str) -> Live:
    """The live pair's comparison (the one whose arms are the pair), its metric and the claim's x-axis."""
    from app.experiments import live

    e = EXPERIMENTS[name]
    claim = CLAIMS[name]
    comp = next((c for c in claim.comparisons if (c.better, c.worse) == tuple(e.live_pair)), claim.comparisons[0])
    m = claim.metrics[comp.metric]
    return Live(
        tuple(e.live_pair),
        comp.metric,
        m.label,
        m.higher_is_better,
        "flops" if claim.x_axis == "flops" else "step",
        live.availability(name),
    )


def provenance(doc: dict) -> dict:
    """Where the numbers come from, in a few plain values."""
    meta, budget = doc.get("meta", {}), doc.get("budget", {})
    seeds = {len(a["seeds"]) for a in doc["arms"].values()}
    return {
        "quick": bool(doc.get("quick")),
        "seeds": min(seeds) if seeds else 0,
        "steps": budget.get("steps"),
        "device": meta.get("device"),
        "finished": meta.get("finished"),
        "command": meta.get("command"),
        "revision": (meta.get("git") or {}).get("revision"),
        "dirty": (meta.get("git") or {}).get("dirty"),
        "wall_seconds": meta.get("wall_seconds"),
    }


def _has_curve(doc: dict, metric: str) -> bool:
    return any(metric in r["curves"] for a in doc["arms"].values() for r in a["seeds"])


def _finite(v) -> bool:
    return v is not None and isinstance(v, (int, float)) and math.isfinite(v)


def _training_flops(arm: dict) -> tuple[float, int] | None:
    """(FLOPs per training step, steps) of an arm's runs, when its results record both."""
    steps = [r.get("steps") for r in arm.get("seeds", [])]
    f = arm.get("flops_per_step")
    if not (_finite(f) and f > 0 and steps and all(isinstance(k, int) and k > 0 for k in steps)):
        return None
    return float(f), max(steps)


def compute_note(doc: dict, comp: Comparison) -> Note | None:
    """What the two arms of a comparison spent, the whole recipe counted (results.recipe_flops): its own steps (the
    teacher's forward included where the arm runs one) and, for an arm that needs a trained teacher, the teacher's
    training too. When the totals differ by more than 5% the page says so with both numbers: "the same compute" is
    not taken for granted. Arms that trade steps for cost per step to spend the same in all (ELECTRA's) get no note;
    two arms that both need the teacher say so, with what the teacher cost."""
    a, b = (results.recipe_flops(doc, k) for k in (comp.better, comp.worse))
    if a is None or b is None:
        return None

    def spent(side: str, arm: str, r: dict) -> str:
        own = f"{r['training'] / 1e12:.1f} TFLOP in {r['steps']:,} steps of {r['per_step'] / 1e9:.1f} GFLOP"
        if not r["teacher"]:
            return f"{side} ({txt.md(arm)}) {own}, no teacher"
        return (
            f"{side} ({txt.md(arm)}) {r['total'] / 1e12:.1f} TFLOP: {own}, plus the teacher's training, "
            f"{r['teacher'] / 1e12:.1f} TFLOP"
        )

    both = f"{spent('A', comp.better, a)}; {spent('B', comp.worse, b)}"
    if abs(a["total"] / b["total"] - 1) <= 0.05:
        if a["teacher"] and b["teacher"]:
            return Note(
                f"Compute, the whole recipe counted: {both}. Both arms need the same trained teacher, so "
                "this comparison holds the teacher fixed; what the teacher cost is in neither difference."
            )
        return None
    return Note(
        f"The two arms did not spend the same compute, the whole recipe counted: {both} "
        f"({a['total'] / b['total']:.1f}×)."
    )


def other_metrics_note(name: str, doc: dict, comp: Comparison) -> Note | None:
    """When a comparison has no verdict (an arm failed its health check), what the same two arms show on the
    experiment's other metrics (results.other_metrics): the mean paired difference A − B, signed so that positive is
    the claimed direction, and on how many seeds it has that sign — described, not tested (no verdict rests on it)."""
    v = comp.verdict or {}
    if not v.get("health"):
        return None
    rows = results.other_metrics(doc, comp.better, comp.worse, comp.metric)
    if not rows:
        return None
    return Note(
        "No verdict here, so described, not tested: the same two arms on the experiment's other metrics, A − B "
        "with positive the claimed direction: " + results.other_metrics_text(rows) + "."
    )


def nsp_on_sop_note(doc: dict) -> Note | None:
    """The sentence experiment's NSP arm on SOP, beside chance and the arm without a sentence objective: ALBERT's
    "an NSP-trained model cannot solve SOP" is not what sop_solves_sop tests, so its numbers are shown, not judged."""
    arms = doc.get("arms", {})
    if "nsp" not in arms:
        return None
    probe = results.spread(results.finals(doc, "nsp", "sop_probe"))
    head = results.spread(results.finals(doc, "nsp", "sop_head"))
    none = results.spread(results.finals(doc, "none", "sop_probe")) if "none" in arms else {"n": 0}
    if not probe["n"]:
        return None
    said = (
        f"Not tested here: ALBERT's \"an NSP-trained model cannot solve SOP\" (52.0 in its Table 5, near chance). "
        f"This experiment's NSP arm has SOP probe {probe['mean']:.3f} (sd {probe['sd']:.3f}, "
        f"{txt.count(probe['n'], 'seed')}; chance 0.5)"
    )
    if none["n"]:
        said += f", where the arm without a sentence objective has {none['mean']:.3f}"
    if head["n"]:
        said += f", and its own NSP head scores {head['mean']:.3f} on SOP pairs"
    n = (doc.get("budget") or {}).get("probe_test")
    if not isinstance(n, int) or n <= 0:
        return Note(said + ".")
    floor = 0.5 + 1.96 * (0.25 / n) ** 0.5  # clearly above chance on the probe's n test pairs, one-sided 2.5%
    if probe["min"] > floor:
        return Note(
            said + f": every seed is clearly above chance (≥ {floor:.3f} on {n:,} test pairs), so that half "
            "of the claim does not hold here as stated."
        )
    return Note(
        said + f": not every seed is clearly above chance (≥ {floor:.3f} on {n:,} test pairs), in line with "
        "that half of the claim, which no verdict here tests."
    )


def teacher_note(doc: dict) -> Note | None:
    """Distillation only: each teacher's held-out top-1 beside its own students' (the same 15% masking of the same
    held-out sequences), so the premise — a teacher much stronger than the student — is checked per teacher, not
    assumed; with more than one teacher, which seeds distilled which (student seed s: teacher s mod K)."""
    found = {
        k: t for k, t in results.teachers(doc).items() if _finite((t["final"] or {}).get("top1")) and t["students"]
    }
    if not found:
        return None
    first = next(iter(found.values()))
    layers, steps, student_layers = first["layers"], first["steps"], None
    for a in doc.get("arms", {}).values():
        for r in a.get("seeds", []):
            student_layers = student_layers or (r.get("details") or {}).get("student_layers")
    students = doc.get("budget", {}).get("steps")
    shape = (
        (
            f" ({layers} layers, {txt.count(steps, 'training step')}; the students have {student_layers} layers and "
            f"{txt.count(students, 'step') if isinstance(students, int) else '? steps'})"
        )
        if layers and steps
        else ""
    )
    weak = [k for k, t in found.items() if float(t["final"]["top1"]) <= max(t["students"])]
    if len(found) == 1:
        t = first
        top1, students = float(t["final"]["top1"]), t["students"]
        said = (
            f"The teacher{shape} scores held-out masked top-1 {top1:.3f}; its students reach "
            f"{min(students):.3f}–{max(students):.3f}."
        )
    else:
        per = "; ".join(
            f"teacher {k} (seed {k}) {float(t['final']['top1']):.3f}, its students (seeds "
            f"{', '.join(map(str, t['seeds']))}) {min(t['students']):.3f}–{max(t['students']):.3f}"
            for k, t in found.items()
        )
        said = (
            f"{len(found)} teachers{shape}, each trained with its own seed; student seed s distils teacher s mod "
            f"{len(found)}. Held-out masked top-1: {per}."
        )
    t = results.teacher_flops(doc)
    if t:
        arms = doc.get("arms", {})
        free = [txt.md(k) for k, a in arms.items() if not results.uses_teacher(a)]
        needs = f"which {len(arms) - len(free)} of the {len(arms)} arms need" + (
            f" (all but {', '.join(free)})" if free else ""
        )
        if t["count"] == 1:
            said += (
                f" One teacher, trained once ({t['steps']:,} steps, {t['total'] / 1e12:.1f} TFLOP by the same count "
                f"as the arms'), {needs}: its training counts in their compute, and its own "
                "seed-to-seed spread is in none of these intervals — a second teacher seed is another full "
                "teacher training, not run here."
            )
            plan = plans.current("distillation")
            if plan.teachers > 1 and (doc.get("plan") or {}).get("version") != plan.version:
                said += (
                    f" The current plan (version {plan.version}, {plan.date}, fixed {plan.fixed}) trains "
                    f"{plan.teachers} teachers; these results come from an earlier version."
                )
        else:
            said += (
                f" Each teacher was trained once ({t['steps']:,} steps, {t['total'] / 1e12:.1f} TFLOP by the same "
                f"count as the arms', {t['all'] / 1e12:.1f} TFLOP for all {t['count']}), {needs}: each seed's "
                "recipe counts its own teacher's training. Every verdict is also checked within each teacher's "
                f"seeds: a label must hold with each teacher, else it is inconclusive ({rule.DEPENDS}); the spread "
                f"between {t['count']} teachers is not estimated."
            )
    if weak:
        who = (
            "The teacher is"
            if len(found) == 1
            else f"Teacher {weak[0]} is"
            if len(weak) == 1
            else f"Teachers {', '.join(map(str, weak))} are"
        )
        return Note(
            said + f" {who} not stronger than every student {'they' if len(weak) > 1 else 'it'} taught: "
            "distillation's premise (a teacher much better than its student) does not hold in these runs, so soft "
            "targets may pull a student toward a worse model. Read these verdicts with that in mind.",
            "warning",
        )
    lead = min(float(t["final"]["top1"]) - max(t["students"]) for t in found.values())
    it = "It is" if len(found) == 1 else "Each is"
    return Note(said + f" {it} stronger than every student it taught by {lead:.3f} or more, as distillation assumes.")


def run(models: dict, inputs: Inputs, cache=direct) -> Result:
    """Read the claim's results (through ``cache``, keyed by the file's version), choose the comparison,
    the curves' metric and x-axis, and summarise every arm: curves over seeds and final numbers."""
    name = inputs.claim
    claim = CLAIMS[name]
    doc = cache(load_results, name, *_version(name))
    notes: list[Note] = _file_notes(doc)
    found = family(name, doc)
    comps = comparisons(name, doc, found.get(name, {}))
    chosen = inputs.compare
    if not 0 <= chosen < len(comps):
        notes.append(
            Note(
                f"This claim has {len(comps)} comparisons (counted from 0): comparison {chosen} does not "
                "exist, showing comparison 0."
            )
        )
        chosen = 0
    comp = comps[chosen]
    x = ("flops" if claim.x_axis == "flops" else "step") if inputs.x == "auto" else inputs.x
    options = ("auto",) + (tuple(m for m in CURVE_METRICS if _has_curve(doc, m)) if doc is not None else ())
    metric = comp.metric if inputs.metric == "auto" else inputs.metric
    if doc is not None and not _has_curve(doc, metric):
        if inputs.metric != "auto":
            notes.append(
                Note(
                    f"This claim's runs have no curve of {txt.md(inputs.metric)}; showing its comparison's "
                    f"metric, {txt.md(comp.metric)}."
                )
            )
        metric = comp.metric if _has_curve(doc, comp.metric) else "train_loss"
        if inputs.metric == "auto" and metric != comp.metric:
            notes.append(
                Note(
                    f"The comparison's {comp.metric_label} is measured once, after training, so it has no "
                    f"curve: the curves show the {_metric_label(name, metric)}; the comparison's own final "
                    "numbers are under them."
                )
            )
    curves, finals = [], []
    if doc is not None:
        pair = {comp.better, comp.worse}
        shown = [a for a in doc["arms"] if inputs.arms == "all" or a in pair]
        for arm in shown:
            b = results.band(doc, arm, metric, x)
            label = doc["arms"][arm]["label"]
            if x == "flops":  # the whole recipe: an arm that needs a trained teacher starts at the teacher's cost
                start = (results.recipe_flops(doc, arm) or {}).get("teacher", 0.0)
                b["x"] = [v + start for v in b["x"]]
            curves.append(
                Curve(arm, label, tuple(b["x"]), tuple(b["mean"]), tuple(b["lo"]), tuple(b["hi"]), b["n"], arm in pair)
            )
        finals = _finals(doc, comp.metric, pair)
        for note in (
            teacher_note(doc) if name == "distillation" else None,
            other_metrics_note(name, doc, comp),
            nsp_on_sop_note(doc) if (name, comp.key) == ("sentence", "sop_solves_sop") else None,
            Note(f"Ours, not the paper's setting: {comp.ours}") if comp.ours else None,
            compute_note(doc, comp),
        ):
            if note is not None:
                notes.append(note)
        missing = [a for a in (comp.better, comp.worse) if a not in doc["arms"]]
        if missing:
            notes.append(
                Note(
                    f"The results hold no run of {', '.join(txt.md(a) for a in missing)}: this comparison "
                    "has no verdict (run the experiment with every arm)."
                )
            )
    return Result(
        name=name,
        title=claim.title,
        claim=claim.claim,
        papers=claim.papers,
        labels=arm_labels(name, doc),
        has_results=doc is not None,
        command=results.command(name),
        provenance=provenance(doc) if doc else {},
        comparisons=comps,
        chosen=chosen,
        metric=metric,
        metric_label=_metric_label(name, metric),
        metric_options=options,
        metric_choice=inputs.metric if inputs.metric in options else "auto",
        x=x,
        curves=tuple(curves),
        finals=tuple(finals),
        params_axis=claim.x_axis == "params",
        live=live_of(name),
        notes=tuple(notes),
        family=family_rows(found, name, comp.key),
        m=max((v["m"] for d in found.values() for v in d.values()), default=0),
    )


def _file_notes(doc) -> list[Note]:
    """Warnings about the results file itself: its problems, a ``--quick`` smoke run."""
    notes: list[Note] = []
    if doc is not None:
        problems = results.validate(doc)
        if problems:
            notes.append(
                Note(
                    "The results file has problems ("
                    + "; ".join(txt.md(p, 80) for p in problems[:3])
                    + ("; …" if len(problems) > 3 else "")
                    + "): what can be read is shown.",
                    "warning",
                )
            )
        if doc.get("quick"):
            notes.append(
                Note(
                    "These results come from a `--quick` smoke run (a handful of steps on a sample of the "
                    "corpus): they show that the experiment runs, not whether the claim holds.",
                    "warning",
                )
            )
    return notes


def _finals(doc, metric: str, pair: set) -> list[Final]:
    """Every arm's final numbers of ``metric`` over its seeds (the compared pair marked)."""
    finals = []
    for arm, a in doc["arms"].items():
        kept = [(r["seed"], r["final"].get(metric)) for r in a["seeds"]]
        kept = [(s, float(v)) for s, v in kept if _finite(v)]
        sp = results.spread([v for _, v in kept])
        finals.append(
            Final(
                arm,
                a["label"],
                tuple(s for s, _ in kept),
                tuple(v for _, v in kept),
                sp["mean"],
                sp["sd"],
                sp["min"],
                sp["max"],
                a.get("params"),
                arm in pair,
            )
        )
    return finals


def curves_caption(r: Result) -> str:
    """The caption under the training curves, true of the metric they show: held-out metrics are measured at every
    evaluation; the training loss is logged every 20 steps on the batches trained on."""
    where = (
        "on the batches trained on, not on held-out text"
        if r.metric == "train_loss"
        else "on held-out text at every evaluation"
    )
    return (
        f"{r.metric_label}, {where}. Lines: the mean over seeds; shaded: ± one standard deviation over seeds — "
        "where two bands overlap, the seeds alone could move one arm onto the other. Blue is A, orange B, grey the "
        "claim's other arms. Hover for the numbers."
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
    return LiveCurves(
        live_training(progress, run_live.x),
        live_points(progress, run_live.metric, run_live.x),
        dict(progress.labels),
        run_live.x,
        run_live.metric_label,
        run_live.pair,
        run_live.higher_is_better,
    )


def _finite_pairs(series: dict, x: str, y: str) -> tuple[list[float], list[float]]:
    kept = [(a, b) for a, b in zip(series.get(x, []), series.get(y, [])) if _finite(a) and _finite(b)]
    return [a for a, _ in kept], [b for _, b in kept]
