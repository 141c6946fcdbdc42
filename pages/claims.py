"""Does it work? Each paper's claim replayed as a controlled experiment: curves over seeds, final numbers with
their spread, the paper's effect beside ours and a verdict computed from the seeds; and a small run, live.
All computation is app/lessons/claims.py (``run``) and app/experiments/ (results, verdict, live); the figures are
app/figures/claims.py."""

import streamlit as st

from app import ui
from app.lessons import claims
from app.experiments import live
from app.experiments.results import short_label
from app.figures import claims as figures
from app.core.text import md

SPEC = claims.SPEC
POLL_S = 1.0  # how often an open page redraws a live run's progress
OWNER = "claims.live_owner"  # this browser session's token: who may cancel the run it started


def new_claim() -> None:
    """Another claim: its comparisons and curves start from the first and from its own metric."""
    ui.set_value(SPEC.compare, 0)
    ui.set_value(SPEC.metric, "auto")


def start_live(name: str, seed: int, seconds: int) -> None:
    try:
        live.BACKGROUND.start(name, seed, seconds, st.session_state[OWNER])
    except live.Busy as busy:
        st.session_state["claims.live_busy"] = str(busy)


def cancel_live() -> None:
    live.BACKGROUND.cancel(st.session_state[OWNER])


def fmt(v) -> str:
    return "—" if v is None else f"{v:.4g}"


st.title("Does it work?")
ui.intro(
    "Each lesson teaches a recipe a paper said works better: dynamic masking, spans, sentence order, replaced-token "
    "detection, shared layers, soft targets. Here each claim is **replayed**: tiny models trained on TinyStories, "
    "the same data and training steps for every **arm** (ELECTRA's: the same FLOPs), changing only what the arm's "
    "label names — where two arms still spend different compute, the page says so — and several **seeds** per "
    "arm. The verdict is computed from those seeds by a fixed rule: the per-seed differences between "
    "the two arms (paired: a seed sets both arms' initial weights and batch order, so they rise and fall together "
    "across seeds; what an arm's recipe changes differs by design), their 95% interval against what the "
    "claim needs (above 0 for *A beats B*, above −margin for *not worse by more than*, inside ±margin for *about "
    "as good as*), adjusted by Holm for every comparison on this page. *reproduces* when it is clearly on the "
    "claim's side, *reverses* when clearly on the other; *equivalent within ±margin* when neither but the interval "
    "lies clearly inside ± the metric's margin; *inconclusive at this scale* otherwise. First, every "
    "arm must count as trained (a health check on every seed): a comparison with an arm that did not learn its task "
    "gets *no verdict* and is left out of Holm's count. Each effect is counted once: a comparison that measures "
    "what another of the family already tests is shown, *not a separate test*."
)
values = ui.bind(SPEC)
st.session_state.setdefault(OWNER, live.new_owner())
c1, c2 = st.columns([2, 3])
ui.widget(SPEC.claim, c1, on_change=new_claim)

r = ui.run(claims.run, {}, claims.Inputs.from_values(values))
ui.set_value(SPEC.compare, r.chosen)
ui.widget(SPEC.compare, c2, options=range(len(r.comparisons)), format_func=lambda i: f"{i} · {r.comparisons[i].claim}")
ui.show_notes(r.notes)
comp = r.comparison
st.markdown(f"**The claim** ({'; '.join(r.papers)}): {r.claim}")

# ----------------------------------------------------------------------------- the verdict on this comparison
st.header(comp.claim)
st.markdown(
    f"**A** = {comp.better_label} · **B** = {comp.worse_label} · measured by the {comp.metric_label} "
    f"({'higher' if comp.higher_is_better else 'lower'} is better). {claims.claim_line(comp)}"
)
v = comp.verdict
if not r.has_results:
    st.info(
        "This experiment has not been run yet: there are no results to judge. The paper's side is below; the "
        "command that produces ours (the seeds its plan asks for; see BENCHMARKS.md for how long it takes) is:",
        icon=":material/hourglass_empty:",
    )
    st.code(r.command, language="bash")
elif v is None:
    st.warning("No verdict: the results hold no run of one of the two arms.")
else:
    box = {"success": st.success, "info": st.info, "error": st.error, "warning": st.warning}[
        claims.VERDICT_LEVEL[v["verdict"]]
    ]
    box(claims.verdict_text(comp, r.m))
if comp.health:
    with st.expander(
        "Health before verdict: what each arm must reach to count as trained", expanded=bool(v and v.get("health"))
    ):
        st.markdown("\n".join(f"- {line}" for line in comp.health))

if comp.plan:
    with st.expander(f"The plan and its history: looked at {comp.looks} time{'s' if comp.looks != 1 else ''}"):
        st.markdown(claims.looks_text(comp))
        st.dataframe(claims.history_rows(comp), hide_index=True, width="stretch")
        st.caption(
            "Each version of the plan (app/experiments/plans.py): the seeds, the metric, the kind and margin this "
            "comparison was decided with, what changed from the version before, whether it was fixed before the "
            "data it governs, and how many recorded runs were read under it."
        )

# ----------------------------------------------------------------------------- curves
if r.has_results:
    st.subheader("Training curves")
    k1, k2, k3 = st.columns([3, 3, 2])
    ui.set_value(SPEC.metric, r.metric_choice)
    ui.widget(
        SPEC.metric, k1, options=r.metric_options, format_func=lambda m: "auto: " + r.metric if m == "auto" else m
    )  # what the curves show
    ui.widget(SPEC.x, k2)
    ui.widget(SPEC.arms, k3)
    ui.show_figure(figures.key_figure(r), f"claims-{r.name}-curves", key=True)
    st.caption(claims.curves_caption(r))

    # ------------------------------------------------------------------------- final numbers
    st.subheader("Final numbers and their spread")
    ui.show_figure(figures.finals_figure(r), f"claims-{r.name}-finals", key="finals")
    st.dataframe(
        [
            {
                "arm": f.label,
                "seeds": len(f.values),
                "mean": f.mean,
                "sd": f.sd,
                "min": f.lo,
                "max": f.hi,
                "parameters": f.params,
            }
            for f in r.finals
        ],
        hide_index=True,
        width="stretch",
        column_config={k: st.column_config.NumberColumn(format="%.4f") for k in ("mean", "sd", "min", "max")},
    )
    p = r.provenance
    st.caption(
        f"{comp.metric_label}, after training, on the held-out set behind the final numbers. Results: "
        f"{p['seeds']} seed{'s' if p['seeds'] != 1 else ''} per arm, {p['steps']} steps, on {md(p['device'], 80)}, "
        f"finished {md(p['finished'])} at revision {md((p['revision'] or 'unknown')[:10])}"
        f"{' with uncommitted changes' if p['dirty'] else ''}, by {md(p['command'], 120)}."
    )

# ----------------------------------------------------------------------------- the paper beside ours
st.subheader("The paper's effect beside ours")
rows = [
    {"": "paper", "measured": row.measure, "A": fmt(row.better), "B": fmt(row.worse), "A − B": fmt(row.difference)}
    for row in comp.paper
]
if v is not None:
    rows.append(
        {
            "": "here",
            "measured": comp.metric_label,
            "A": f"{v['mean_a']:.4g} ± {v['sd_a']:.2g}",
            "B": f"{v['mean_b']:.4g} ± {v['sd_b']:.2g}",
            "A − B": f"{v['difference']:+.4g}"
            + (f" (95% interval {v['ci_low']:+.3g} to {v['ci_high']:+.3g})" if v["enough_seeds"] else ""),
        }
    )
if rows:
    st.dataframe(rows, hide_index=True, width="stretch")
if not comp.paper:
    st.markdown("The paper reports no number of its own for this comparison (see the note below).")
st.caption(
    f"Source: {comp.source}. The paper's numbers are at full scale (BERT-base-sized models, billions of "
    "tokens, downstream tasks where higher is better); ours are tiny models on TinyStories, so compare the "
    "direction and whether it is clear, not the size. Ours is signed so that a positive A − B is the claimed "
    "direction (for a loss: A lower)." + (f" {comp.note}" if comp.note else "")
)

st.subheader("Every comparison of this claim")
st.dataframe(
    [
        {
            "#": i,
            "claim": c.claim,
            "kind": c.kind + (f", margin {c.margin:g}" if c.margin else ""),
            "verdict": "not run yet" if not r.has_results else (c.verdict or {}).get("label", "—"),
            "here (A − B)": "—" if c.verdict is None else f"{c.verdict['difference']:+.4g}",
            "95% interval": claims.interval_text(c.verdict),
            "in margins": claims.margins_cell(c.verdict),
            "p": claims.p_text(c.verdict),
            "metric": c.metric,
            "looks": c.looks,
            "paper (A − B)": "; ".join(f"{row.measure}: {fmt(row.difference)}" for row in c.paper) or "—",
        }
        for i, c in enumerate(r.comparisons)
    ],
    hide_index=True,
    width="stretch",
)

if any(row.verdict for row in r.family):  # some experiment has results (a no verdict counts: its row is drawn)
    st.subheader(f"All {len(r.family)} comparisons of this page")
    ui.show_figure(figures.family_figure(r), "claims-all-comparisons")
    st.caption(claims.family_caption(r))

# ----------------------------------------------------------------------------- a small one, live
st.header("Run a small one live")
lv = r.live
st.markdown(
    f"Train **{r.labels[lv.pair[0]]}** against **{r.labels[lv.pair[1]]}** "
    f"side by side, one seed each, for at most {values['seconds']} s on this server's CPU, and watch the "
    f"{lv.metric_label} as they learn. One live run at a time for everyone on this server: a second visitor "
    "sees the running one."
)
l1, l2, l3 = st.columns([2, 3, 2], vertical_alignment="bottom")
ui.widget(SPEC.seed, l1)
ui.widget(SPEC.seconds, l2)
snapshot = live.BACKGROUND.snapshot()
l3.button(
    "Run a small one live",
    icon=":material/play_arrow:",
    on_click=start_live,
    args=(r.name, int(values["seed"]), int(values["seconds"])),
    disabled=bool(lv.unavailable) or snapshot.active,
    help="Trains the claim's smallest pair of arms in the background; it stops by itself in time.",
)
if lv.unavailable:
    st.info(f"A live run cannot start here: {lv.unavailable}.", icon=":material/block:")
busy = st.session_state.pop("claims.live_busy", None)
if busy:
    st.warning(busy)


@st.fragment(run_every=POLL_S if snapshot.active else None)
def live_panel(polling: bool) -> None:
    """The server's live run as it is now; redraws itself every POLL_S seconds while it trains."""
    p = live.BACKGROUND.snapshot()
    me = st.session_state[OWNER]
    if p.state == "idle":
        st.caption("No live run on this server yet.")
        return
    st.markdown(p.describe(me))
    if p.active:
        steps = ", ".join(f"{short_label(p.labels.get(a, a))}: {p.steps.get(a, 0)}" for a in p.arms)
        st.progress(p.fraction, text=f"{p.elapsed:.0f} of {p.seconds:.0f} s · steps {steps}")
        if p.owner == me:
            st.button("Cancel", icon=":material/stop:", on_click=cancel_live, key="claims.live_cancel")
    if p.points or p.training:
        ui.show_figure(figures.live_figure(claims.live_curves(p)), "claims-live")
        st.caption(
            "One seed per arm and a minute of training: a live run shows the recipe at work, not a verdict — "
            "the verdict above needs the full runs' seeds."
        )
    if polling and not p.active:
        st.rerun()  # the run ended: one full rerun stops the polling and re-enables the button


live_panel(snapshot.active)

ui.takeaway(claims.TAKEAWAY)
ui.share_link(SPEC)
