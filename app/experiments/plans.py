"""The analysis plan of every experiment, fixed before its data, and every earlier version of it.

A :class:`Plan` says, for one experiment, what will be decided and how: each comparison's metric, kind and
margin (the same as app/experiments/claims.py, which a test holds them to), how many seeds, why that many
(:class:`Power`: the power calculation, computed here, never written down), the budget it runs at, and the
date it was fixed. ``python -m app.experiments run`` reads the current version (its seeds are the run's
default, and a run that asks for another count is refused), and the results file records it as ``plan``.

A plan is never edited in place: a change is a new version, appended to :data:`PLANS` with the date it was
made, why, and when it was fixed (``fixed``): before the data it governs, after looking at results, or never
written down (the first runs, which followed the code's defaults). Every run whose results were recorded is a
:class:`Look`, listed under the version it ran under: a reader can count how many times each claim was looked at and
what moved between looks. The versions before this module existed are written from the git history of
``assets/experiments/*.json`` and ``app/experiments/claims.py`` (commits and dates in ``Look.recorded`` and
``Plan.why``), as they happened: seeds raised 3 → 5 → 10 where a verdict sat near its threshold, kinds and margins
written the day after the 3-seed results, distillation's metric switched from held-out loss to top-1 after a reversal on
loss, two runs recorded from a tree with uncommitted changes.

Pure Python (no torch): the page reads it.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

from app.experiments import verdict as verdict_rule

ALPHA = verdict_rule.ALPHA
BEFORE, AFTER, UNWRITTEN = "before the data", "after the data", "not written down (the code's defaults at the time)"


@dataclass(frozen=True)
class Planned:
    """One comparison as planned: the claim's key, the metric it is decided on, its kind and margin (for a
    superiority claim the margin is the ± of the equivalence outcome, 0 where the plan had none)."""

    key: str
    metric: str
    kind: str = verdict_rule.SUPERIORITY
    margin: float = 0.0


def _normal_sf(x: float) -> float:
    return 0.5 * math.erfc(x / math.sqrt(2.0))


def noncentral_t_power(crit: float, df: int, shift: float, points: int = 2000) -> float:
    """P(|T'| ≥ crit) for T' = (Z + shift) / √(V/df), Z standard normal, V chi-square on df: a two-sided t test's
    power when the true standardised difference is ``shift``. Integrated over u = √V (Simpson's rule, ``points``
    intervals), where the density of u is finite for every df ≥ 1."""
    top = math.sqrt(df + 12.0 * math.sqrt(2.0 * df) + 40.0)
    h = top / points
    log_norm = (df / 2.0) * math.log(2.0) + math.lgamma(df / 2.0)

    def f(u: float) -> float:
        if u <= 0.0:
            return 0.0
        density = math.exp(math.log(2.0) + (df - 1.0) * math.log(u) - u * u / 2.0 - log_norm)  # of u = √V
        c = crit * u / math.sqrt(df)
        return density * (_normal_sf(c - shift) + _normal_sf(c + shift))

    total = f(0.0) + f(top) + sum((4.0 if i % 2 else 2.0) * f(i * h) for i in range(1, points))
    return min(1.0, total * h / 3.0)


@dataclass(frozen=True)
class Power:
    """A paired t test's power to see ``effect`` (in the metric's units) when the per-seed differences have
    standard deviation ``sd``: with n seeds the test statistic is noncentral t on n − 1 degrees of freedom with
    noncentrality effect / (sd / √n), and the power is its chance of passing the two-sided critical value
    (:func:`noncentral_t_power`, exact up to the integration). ``alpha`` is two-sided; Holm's least strict rank tests at
    α itself, its strictest at α / m (``family``, counted from app/experiments/claims.py at the time of the plan)."""

    metric: str
    effect: float
    sd: float
    sd_from: str  # where the sd comes from (a pilot, an earlier run's seeds)
    target: float = 0.8
    alpha: float = ALPHA
    family: int = 1  # m: the comparisons Holm adjusts over

    def power(self, n: int, alpha: float | None = None) -> float:
        if n < 2 or self.sd <= 0:
            return float("nan")
        a = self.alpha if alpha is None else alpha
        df = n - 1
        return noncentral_t_power(verdict_rule.t_quantile(1 - a / 2, df), df, self.effect / (self.sd / math.sqrt(n)))

    def seeds_needed(self, alpha: float | None = None, most: int = 200) -> int | None:
        """The fewest seeds whose power reaches ``target`` (None beyond ``most``)."""
        for n in range(2, most + 1):
            if self.power(n, alpha) >= self.target:
                return n
        return None

    def as_dict(self, seeds: int) -> dict:
        strict = self.alpha / max(1, self.family)
        return {
            **asdict(self),
            "seeds": seeds,
            "power": self.power(seeds),
            "power_strictest": self.power(seeds, strict),
            "alpha_strictest": strict,
            "seeds_needed": self.seeds_needed(),
            "seeds_needed_strictest": self.seeds_needed(strict),
            "text": power_text(self, seeds),
        }


def power_text(p: Power, seeds: int) -> str:
    strict = p.alpha / max(1, p.family)
    need, need_strict = p.seeds_needed(), p.seeds_needed(strict)

    def n(x):
        return str(x) if x is not None else "more than 200"

    return (
        f"to see a difference of {p.effect:g} on {p.metric} with per-seed differences of sd {p.sd:g} ({p.sd_from}): "
        f"{seeds} seeds give power {p.power(seeds):.2f} at α = {p.alpha:g} (Holm's least strict rank) and "
        f"{p.power(seeds, strict):.2f} at α/m = {strict:.2g} (its strictest, m = {p.family}); power {p.target:g} "
        f"needs {n(need)} and {n(need_strict)} seeds"
    )


@dataclass(frozen=True)
class Look:
    """One run whose results were recorded: the page's verdicts were (or could be) read from it."""

    finished: str  # the run's end, UTC (its results file's meta.finished)
    seeds: int
    revision: str  # the commit its code came from (meta.git.revision, short)
    dirty: bool  # uncommitted changes to app/ when it started
    recorded: str  # the commit that recorded its results (short)
    note: str = ""


@dataclass(frozen=True)
class Plan:
    experiment: str
    version: int
    date: str  # when this version was fixed, UTC
    seeds: int
    comparisons: tuple[Planned, ...]
    budget: str  # the budget it runs at, in words
    fixed: str  # BEFORE: before any result it governs; AFTER: after looking at results; UNWRITTEN: no plan written
    why: str  # what changed from the version before, and what prompted it
    power: Power | None = None  # None: no power calculation was stated
    looks: tuple[Look, ...] = ()  # runs recorded under this version
    commit: str = ""  # where the change entered the code, when known
    settings: tuple[tuple[str, object], ...] = ()  # budget fields this version fixes over the module's FULL (and
    # QUICK) budget, which the runner applies (runner.planned_budget): distillation v6 (("teachers", 2),)

    def comparison(self, key: str) -> Planned | None:
        return next((c for c in self.comparisons if c.key == key), None)

    def budget_settings(self) -> dict:
        """{budget field: value} this version fixes ({} : the module's budget as it is)."""
        return dict(self.settings)

    @property
    def teachers(self) -> int:
        """Distillation: how many independently trained teachers the students distil (1 before version 6)."""
        return int(self.budget_settings().get("teachers", 1))

    def as_dict(self) -> dict:
        d = asdict(self)
        d["power"] = self.power.as_dict(self.seeds) if self.power else None
        return d


# ----------------------------------------------------------------------------- the plans and their history

S, NI, EQ = verdict_rule.SUPERIORITY, verdict_rule.NONINFERIORITY, verdict_rule.EQUIVALENCE
LOSS, PROBE, TOP1 = 0.05, 0.02, 0.01  # the metrics' margins (app/experiments/claims.py MARGINS)

KINDS_AFTER = (
    "kinds and margins written after the 3-seed results (commit 9119d5e, 2026-11-24, the day after): "
    "before it every comparison was read as 'A beats B'"
)
THREE_OUTCOMES = (
    "health floors before any verdict (a76fcd0) and three outcomes against the margin — different, "
    "equivalent within ± the margin, inconclusive (9326ccc): a superiority claim gains an equivalence "
    "test at its metric's margin. Written after every result above"
)
NO_POWER = "3 seeds: the runner's default, no power calculation stated"
MORE_SEEDS = (
    "seeds raised where a verdict sat near its threshold (issue 26), after seeing it; no power calculation stated"
)

MASKING_3 = (
    Planned("dynamic_vs_static1", "valid_loss"),
    Planned("dynamic_vs_static10", "valid_loss"),
    Planned("span_vs_token", "probe_acc"),
    Planned("word_vs_token", "probe_acc"),
)
MASKING_K = (
    Planned("dynamic_vs_static1", "valid_loss"),
    Planned("dynamic_vs_static10", "valid_loss", NI, LOSS),
    Planned("span_vs_token", "probe_acc"),
    Planned("word_vs_token", "probe_acc"),
)
MASKING_3O = (
    Planned("dynamic_vs_static1", "valid_loss", S, LOSS),
    Planned("dynamic_vs_static10", "valid_loss", NI, LOSS),
    Planned("span_vs_token", "probe_acc", S, PROBE),
    Planned("word_vs_token", "probe_acc", S, PROBE),
)
MASKING_BUDGET = "hidden 128, 2 layers, 1600 steps, batch 32, 64 tokens"

SENTENCE_3 = (
    Planned("sop_solves_sop", "sop_probe"),
    Planned("sop_does_nsp", "nsp_probe"),
    Planned("nsp_does_not_help_mlm", "valid_top1"),
)
SENTENCE_K = SENTENCE_3[:2] + (Planned("nsp_does_not_help_mlm", "valid_top1", NI, TOP1),)
SENTENCE_3O = (
    Planned("sop_solves_sop", "sop_probe", S, PROBE),
    Planned("sop_does_nsp", "nsp_probe", S, PROBE),
    Planned("nsp_does_not_help_mlm", "valid_top1", NI, TOP1),
)
SENTENCE_BUDGET = "hidden 128, 2 layers, sentence pairs, the runner's FULL budget"

ELECTRA_3 = (
    Planned("rtd_beats_mlm", "probe_acc"),
    Planned("all_tokens_matter", "probe_acc"),
    Planned("electra15_vs_mlm", "probe_acc"),
)
ELECTRA_K = ELECTRA_3[:2] + (Planned("electra15_vs_mlm", "probe_acc", EQ, PROBE),)
ELECTRA_3O = (
    Planned("rtd_beats_mlm", "probe_acc", S, PROBE),
    Planned("all_tokens_matter", "probe_acc", S, PROBE),
    Planned("electra15_vs_mlm", "probe_acc", EQ, PROBE),
)
ELECTRA_OLD_BUDGET = "hidden 128, 2 layers, 2000 masked-LM steps of FLOPs from scratch, lr 1e-3, generator ¼"

ELECTRA_BUDGET = (
    "hidden 128, 2 layers, 2000 masked-LM steps of FLOPs from scratch, lr 5e-4 (warm-up 200), generator ¼ "
    "sampling at T = 2, λ = 50; the probe on 1,000 + 1,000 sentences"
)
ELECTRA_REBUILT = (
    "rebuilt so the discriminator learns (issue 49), before any of its results: at T = 1 the ¼-width generator reaches "
    "the unigram level within ~100 steps (held-out top-1 0.095), its fakes then differ from the originals only in "
    "context, and the from-scratch discriminator stayed at ROC-AUC 0.54-0.56, below a detector that sees only the "
    "token's identity (0.57-0.60 on the same fakes; at lr 3e-4 it peaked at 0.77 at step 90, while the generator was "
    "still worse than unigram, then fell to 0.60; λ = 1 (0.55 at step 400) and a shared 1,500-step masked-LM warm "
    "start (0.54 at step 200, identity 0.57) did no better). A one-seed pilot at T = 2, lr 5e-4 — the "
    "discriminator's ROC-AUC and the generator's top-1 only, "
    "no probe and no comparison looked at — reached 0.84 and 0.83 at steps 225 and 450 (identity alone 0.79, 0.77). "
    "Comparisons, kinds and margins as version 3; 10 seeds from the power calculation (one margin, α = 0.05)"
)
SHARING_3 = tuple(
    Planned(k, "valid_loss")
    for k in (
        "sharing_costs_quality",
        "attention_cheaper_than_ffn",
        "attention_sharing_is_cheap",
        "factorized_not_shared",
        "factorized_all_shared",
    )
)
SHARING_K = (
    SHARING_3[0],
    SHARING_3[1],
    Planned("attention_sharing_is_cheap", "valid_loss", NI, LOSS),
    SHARING_3[3],
    Planned("factorized_all_shared", "valid_loss", NI, LOSS),
)
SHARING_3O = (
    Planned("sharing_costs_quality", "valid_loss", S, LOSS),
    Planned("attention_cheaper_than_ffn", "valid_loss", S, LOSS),
    Planned("attention_sharing_is_cheap", "valid_loss", NI, LOSS),
    Planned("factorized_not_shared", "valid_loss", S, LOSS),
    Planned("factorized_all_shared", "valid_loss", NI, LOSS),
)
SHARING_BUDGET = "hidden 128, 3 layers, E = 32 vs 128, 1000 steps"

DISTIL_LOSS = (
    Planned("soft_beats_hard", "valid_loss"),
    Planned("student_beats_teacher_free", "valid_loss"),
    Planned("temperature_above_one", "valid_loss"),
)
DISTIL_TOP1 = (
    Planned("soft_beats_hard", "valid_top1"),
    Planned("init_from_teacher", "valid_top1"),
    Planned("student_beats_teacher_free", "valid_top1"),
    Planned("temperature_above_one", "valid_top1"),
)
DISTIL_3O = tuple(Planned(c.key, "valid_top1", S, TOP1) for c in DISTIL_TOP1)
DISTIL_OLD_BUDGET = "student 2 layers from a 2000-step teacher"
DISTIL_BUDGET = "student 2 layers, teacher 4 layers × 10000 steps (held-out top-1 0.529)"
DISTIL_TEACHERS_BUDGET = (
    "student 2 layers, 2 teachers of 4 layers × 10000 steps, teacher k trained with seed k (teacher 0 is the "
    "one before, held-out top-1 0.529); student seed s distils teacher s mod 2: 5 seeds per teacher"
)
DISTIL_TEACHERS = (
    "a second teacher seed (issue 49): whether each claim replicates with an independent teacher. Until now every "
    "student of every seed distilled one teacher, so each verdict held for one teacher draw only. Comparisons, "
    "kinds, margins and seeds as version 5; each verdict's direction must also hold within each teacher's 5 seeds "
    "(a teacher whose mean difference lies on the other side of the boundary, or whose own 95% interval clearly "
    "contradicts, makes it inconclusive: depends on the teacher; app/experiments/verdict.py across_teachers); each "
    "seed's recipe counts its own teacher's training; the health check is per teacher. Fixed before any "
    "2-teacher result"
)

PLANS: dict[str, tuple[Plan, ...]] = {
    "masking": (
        Plan(
            "masking",
            1,
            "2026-11-23",
            3,
            MASKING_3,
            MASKING_BUDGET,
            UNWRITTEN,
            NO_POWER + "; every comparison read as 'A beats B'",
            looks=(
                Look(
                    "2026-11-23T14:51:30Z",
                    3,
                    "94c46c9",
                    True,
                    "8d6befb",
                    "recorded from a tree with uncommitted changes to app/",
                ),
            ),
            commit="484607a",
        ),
        Plan(
            "masking",
            2,
            "2026-11-24",
            3,
            MASKING_K,
            MASKING_BUDGET,
            AFTER,
            KINDS_AFTER + ": dynamic vs static ×10 became noninferiority at 0.05 nats",
            commit="9119d5e",
        ),
        Plan(
            "masking",
            3,
            "2026-11-26",
            5,
            MASKING_K,
            MASKING_BUDGET,
            AFTER,
            MORE_SEEDS + ": dynamic vs static ×1 and ×10 were 'not settled by 3 seeds'",
            looks=(Look("2026-11-26T11:00:38Z", 5, "02be593", False, "f276d6e"),),
            commit="f276d6e",
        ),
        Plan(
            "masking",
            4,
            "2026-11-26",
            10,
            MASKING_K,
            MASKING_BUDGET,
            AFTER,
            MORE_SEEDS + ": span vs token had p = 0.027 at 5 seeds against a Holm bound of 0.005; at 10 it reversed",
            looks=(
                Look(
                    "2026-11-26T22:41:22Z",
                    10,
                    "3c912cb",
                    True,
                    "9ce724b",
                    "recorded from a tree with uncommitted changes to app/",
                ),
            ),
            commit="9ce724b",
        ),
        Plan("masking", 5, "2026-11-28", 10, MASKING_3O, MASKING_BUDGET, AFTER, THREE_OUTCOMES, commit="9326ccc"),
    ),
    "sentence": (
        Plan(
            "sentence",
            1,
            "2026-11-23",
            3,
            SENTENCE_3,
            SENTENCE_BUDGET,
            UNWRITTEN,
            NO_POWER,
            looks=(Look("2026-11-23T14:04:27Z", 3, "b095c1d", False, "88f2786"),),
            commit="484607a",
        ),
        Plan(
            "sentence",
            2,
            "2026-11-24",
            3,
            SENTENCE_K,
            SENTENCE_BUDGET,
            AFTER,
            KINDS_AFTER + ": removing NSP became noninferiority at 0.01 top-1",
            commit="9119d5e",
        ),
        Plan(
            "sentence",
            3,
            "2026-11-26",
            5,
            SENTENCE_K,
            SENTENCE_BUDGET,
            AFTER,
            MORE_SEEDS,
            looks=(Look("2026-11-26T08:12:22Z", 5, "73745a0", False, "3b6c641"),),
            commit="3b6c641",
        ),
        Plan(
            "sentence",
            4,
            "2026-11-26",
            10,
            SENTENCE_K,
            SENTENCE_BUDGET,
            AFTER,
            MORE_SEEDS + ": SOP vs NSP on SOP had p = 0.005 at 5 seeds against Holm's 0.0036",
            looks=(Look("2026-11-26T17:03:22Z", 10, "198440e", False, "a354eea"),),
            commit="a354eea",
        ),
        Plan(
            "sentence",
            5,
            "2026-11-28",
            10,
            SENTENCE_3O,
            SENTENCE_BUDGET,
            AFTER,
            THREE_OUTCOMES + "; the NSP and SOP "
            "heads must beat chance; 'an NSP-trained model cannot solve SOP' labelled untested (848f9ad)",
            commit="9326ccc",
        ),
    ),
    "electra": (
        Plan(
            "electra",
            1,
            "2026-11-23",
            3,
            ELECTRA_3,
            ELECTRA_OLD_BUDGET,
            UNWRITTEN,
            NO_POWER,
            looks=(Look("2026-11-23T14:58:19Z", 3, "527fcdb", False, "7b17e9f"),),
            commit="484607a",
        ),
        Plan(
            "electra",
            2,
            "2026-11-24",
            3,
            ELECTRA_K,
            ELECTRA_OLD_BUDGET,
            AFTER,
            KINDS_AFTER + ": ELECTRA 15% vs BERT became equivalence within ±0.02",
            commit="9119d5e",
        ),
        Plan(
            "electra",
            3,
            "2026-11-28",
            3,
            ELECTRA_3O,
            ELECTRA_OLD_BUDGET,
            AFTER,
            THREE_OUTCOMES + "; the discriminator "
            "must reach held-out ROC-AUC 0.75 — none of the 3-seed run's did (0.54-0.56), so no verdict",
            commit="a76fcd0",
        ),
        Plan(
            "electra",
            4,
            "2026-11-28",
            10,
            ELECTRA_3O,
            ELECTRA_BUDGET,
            BEFORE,
            ELECTRA_REBUILT,
            power=Power(
                "probe_acc",
                effect=PROBE,
                sd=0.0199,
                family=19,
                sd_from="the largest sd of the per-seed probe differences in version 1's 3 seeds, electra vs "
                "electra15 (0.0176 for electra vs mlm, 0.0047 for electra15 vs mlm)",
            ),
            looks=(Look("2026-11-28T19:07:10Z", 10, "32f7379", False, "2bee213"),),
        ),
    ),
    "sharing": (
        Plan(
            "sharing",
            1,
            "2026-11-23",
            3,
            SHARING_3,
            SHARING_BUDGET,
            UNWRITTEN,
            NO_POWER,
            looks=(Look("2026-11-23T15:52:13Z", 3, "531bd3b", False, "fb02972"),),
            commit="484607a",
        ),
        Plan(
            "sharing",
            2,
            "2026-11-24",
            3,
            SHARING_K,
            SHARING_BUDGET,
            AFTER,
            KINDS_AFTER + ": sharing attention and a small E with all layers shared became noninferiority at 0.05 nats",
            commit="9119d5e",
        ),
        Plan(
            "sharing",
            3,
            "2026-11-26",
            5,
            SHARING_K,
            SHARING_BUDGET,
            AFTER,
            MORE_SEEDS + ": the all-shared small-E claim was not settled by 3 seeds",
            looks=(Look("2026-11-26T14:01:48Z", 5, "839824f", False, "0d1a014"),),
            commit="0d1a014",
        ),
        Plan(
            "sharing",
            4,
            "2026-11-28",
            5,
            SHARING_3O,
            SHARING_BUDGET,
            AFTER,
            THREE_OUTCOMES + "; the two claims tested away from where ALBERT made them labelled as ours (848f9ad)",
            commit="9326ccc",
        ),
    ),
    "distillation": (
        Plan(
            "distillation",
            1,
            "2026-11-23",
            3,
            DISTIL_LOSS,
            DISTIL_OLD_BUDGET,
            UNWRITTEN,
            NO_POWER + "; judged on held-out masked-LM loss",
            looks=(
                Look(
                    "2026-11-23T15:40:56Z",
                    3,
                    "9db7c4a",
                    False,
                    "531bd3b",
                    "3 arms: soft T = 2, hard, scratch; hard labels beat soft targets on loss",
                ),
                Look("2026-11-23T16:58:20Z", 3, "8c00d95", False, "32e91db", "the T sweep added"),
            ),
            commit="484607a",
        ),
        Plan(
            "distillation",
            2,
            "2026-11-26",
            3,
            DISTIL_TOP1,
            DISTIL_BUDGET,
            AFTER,
            "after the reversal on loss: the metric "
            "switched from held-out masked-LM loss to held-out top-1 (the loss is the hard arm's own objective), the "
            "teacher retrained 10× longer (the 2000-step one was weaker than its students) and the random-init arm "
            "added; kinds all superiority (9119d5e named none for distillation)",
            looks=(
                Look(
                    "2026-11-26T07:47:01Z",
                    3,
                    "6dc07a6",
                    True,
                    "73745a0",
                    "recorded from a tree with uncommitted changes to app/",
                ),
            ),
            commit="68dcb21",
        ),
        Plan(
            "distillation",
            3,
            "2026-11-26",
            5,
            DISTIL_TOP1,
            DISTIL_BUDGET,
            AFTER,
            MORE_SEEDS + ": soft vs hard had p = 0.03 at 3 seeds",
            looks=(Look("2026-11-26T08:40:26Z", 5, "3b6c641", False, "46855f0"),),
            commit="46855f0",
        ),
        Plan(
            "distillation",
            4,
            "2026-11-26",
            10,
            DISTIL_TOP1,
            DISTIL_BUDGET,
            AFTER,
            MORE_SEEDS + ": soft vs hard had p = 0.002 at 5 seeds against Holm's 0.0045",
            looks=(Look("2026-11-26T19:57:15Z", 10, "525af6c", False, "f2497e1"),),
            commit="f2497e1",
        ),
        Plan(
            "distillation",
            5,
            "2026-11-28",
            10,
            DISTIL_3O,
            DISTIL_BUDGET,
            AFTER,
            THREE_OUTCOMES + "; every student starting from the teacher needs a teacher stronger than itself",
            commit="9326ccc",
        ),
        Plan(
            "distillation",
            6,
            "2026-11-28",
            10,
            DISTIL_3O,
            DISTIL_TEACHERS_BUDGET,
            BEFORE,
            DISTIL_TEACHERS,
            looks=(
                Look(
                    "2026-11-29T11:05:42Z",
                    10,
                    "540af80",
                    False,
                    "ce13e63",
                    "teacher 0 trained again from seed 0 (the earlier folder was lost with a machine): held-out "
                    "top-1 0.524, not the 0.529 of the one before",
                ),
            ),
            commit="0083504",
            settings=(("teachers", 2),),
        ),
    ),
}
"""experiment -> every version of its plan, oldest first; the last is the one a run follows."""


def history(name: str) -> tuple[Plan, ...]:
    if name not in PLANS:
        raise KeyError(f"no plan for experiment {name!r}")
    return PLANS[name]


def current(name: str) -> Plan:
    return history(name)[-1]


def looks(name: str) -> list[Look]:
    """Every recorded run of the experiment, in order."""
    return [look for plan in history(name) for look in plan.looks]


def claim_history(name: str, key: str) -> list[dict]:
    """The versions of one comparison's plan, oldest first: one row per version it exists in, with what
    changed against the row before (seeds, metric, kind, margin) and the looks under that version."""
    rows, before = [], None
    for plan in history(name):
        c = plan.comparison(key)
        if c is None:
            continue
        now = {"seeds": plan.seeds, "metric": c.metric, "kind": c.kind, "margin": c.margin}
        changed = [k for k in now if before is not None and before[k] != now[k]]
        rows.append(
            {
                "version": plan.version,
                "date": plan.date,
                **now,
                "changed": changed,
                "fixed": plan.fixed,
                "why": plan.why,
                "looks": len(plan.looks),
                "dirty_looks": sum(look.dirty for look in plan.looks),
            }
        )
        before = now
    return rows


def claim_looks(name: str, key: str) -> int:
    """How many recorded runs this comparison was read from."""
    return sum(r["looks"] for r in claim_history(name, key))


def disagreements(plan: Plan, claim) -> list[str]:
    """Where the plan and the claim (app/experiments/claims.py) differ on what is decided: each comparison's
    metric, kind and margin (a superiority claim's margin is its metric's, claims.MARGINS). [] when they agree."""
    from app.experiments.claims import MARGINS

    out = []
    planned = {c.key: c for c in plan.comparisons}
    for comp in claim.comparisons:
        p = planned.pop(comp.key, None)
        if p is None:
            out.append(f"{comp.key}: in the claim, not in the plan")
            continue
        margin = comp.margin if comp.kind != S else MARGINS.get(comp.metric, (0.0, ""))[0]
        for what, want, have in (
            ("metric", comp.metric, p.metric),
            ("kind", comp.kind, p.kind),
            ("margin", margin, p.margin),
        ):
            if want != have:
                out.append(f"{comp.key}: the claim's {what} is {want!r}, the plan's {have!r}")
    out += [f"{k}: in the plan, not in the claim" for k in planned]
    return out


def family_size() -> int:
    from app.experiments.claims import CLAIMS

    return sum(len(c.comparisons) for c in CLAIMS.values())


def version_of(name: str, doc: dict | None) -> Plan:
    """The plan version a results document's run followed: its own ``plan`` entry when it has one, else the
    version whose looks include its finish time, else the current one."""
    if doc and isinstance(doc.get("plan"), dict) and doc["plan"].get("version"):
        v = doc["plan"]["version"]
        return next((p for p in history(name) if p.version == v), current(name))
    finished = ((doc or {}).get("meta") or {}).get("finished")
    return next((p for p in history(name) for look in p.looks if look.finished == finished), current(name))


def record(name: str, plan: Plan | None = None) -> dict:
    """The ``plan`` entry of a results file: the version followed (default: the current one), with its power
    numbers, and a short history (every version's number, date, seeds, and when it was fixed)."""
    plan = plan or current(name)
    return {
        **plan.as_dict(),
        "versions": [
            {
                "version": p.version,
                "date": p.date,
                "seeds": p.seeds,
                "fixed": p.fixed,
                "why": p.why,
                "looks": len(p.looks),
            }
            for p in history(name)
        ],
        "looks_before": len(looks(name)),
    }


def record_in_results(where=None) -> list:
    """Write into every results file the plan version its run followed (``plan``); nothing else changes."""
    from app.experiments import results

    written = []
    for name in PLANS:
        path = results.path_of(name, where)
        if not path.exists():
            continue
        doc = results.read(path)
        doc["plan"] = record(name, version_of(name, doc))
        results.write(doc, path)
        written.append(path)
    return written


def table() -> str:
    """Every experiment's plan history as Markdown: one row per version."""
    lines = ["| experiment | version | date | seeds | fixed | what changed | looks |", "|---|---|---|---|---|---|---|"]
    for name, versions in PLANS.items():
        for p in versions:
            fixed = p.fixed.split(" (")[0]
            dirty = sum(look.dirty for look in p.looks)
            seen = f"{len(p.looks)}" + (f" ({dirty} from a dirty tree)" if dirty else "")
            lines.append(f"| {name} | {p.version} | {p.date} | {p.seeds} | {fixed} | {p.why} | {seen} |")
    return "\n".join(lines)
