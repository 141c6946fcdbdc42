"""DistilBERT: distillation — teacher and student on one sentence: soft targets, temperature, the three loss
terms, size and speed measured. All computation is app/lessons/distillation.py (``run``); the figures are
app/figures/distillation.py."""

import streamlit as st

from app import ui
from app.lessons import distillation
from app.figures import distillation as figures
from app.core.text import md, visible

import pandas as pd  # after the lesson library: it does the heavy imports in one thread (app/core/preload.py)

SPEC, R = distillation.SPEC, distillation.RECIPE

st.title("DistilBERT: distillation")
ui.intro(
    "DistilBERT is a **student**: half of BERT's layers, trained to imitate a finished BERT (the **teacher**) rather "
    "than only the text. For every token the teacher gives a whole distribution over the vocabulary, and the student "
    "learns to match it. Those *soft targets* say more than the right answer: they also say which wrong answers are "
    "nearly right. Dividing the logits by a **temperature T** flattens both distributions so that this "
    "\"dark knowledge\" counts in the loss. The recipe (Sanh et al., 2019) adds three terms:\n\n"
    f"$L = {R.alpha_ce:g}\\cdot T^2\\,\\mathrm{{KL}}(p_t^T \\,\\|\\, p_s^T) + {R.alpha_mlm:g}\\cdot \\mathrm{{MLM}} + "
    f"{R.alpha_cos:g}\\cdot(1-\\cos(h_s, h_t))$, with $T = {R.temperature:g}$.\n\n"
    "Below, both models read your sentence with one word masked."
)
values = ui.bind(SPEC)
# a new text (typed here or on another page): its word index meant a word of the old one
values["new_text"] = ui.text_changed(SPEC.word, values["text"], distillation.DEFAULT_TEXT)
ui.widget(SPEC.text, height=80)
c1, c2, c3 = st.columns([2, 2, 1])
ui.widget(SPEC.temperature, c2)
ui.widget(SPEC.top_k, c3)

models = ui.models(*distillation.MODELS)
r = ui.run(distillation.run, models, distillation.Inputs.from_values(values, ui.warm_progress(), ui.other_pages()))
ui.set_value(SPEC.word, r.word)
ui.widget(SPEC.word, c1, options=range(len(r.words)), format_func=lambda i: f"{i} · {visible(r.words[i])}")
ui.show_notes(r.notes)
T, soft = r.temperature, r.soft

# ----------------------------------------------------------------------------- 1. soft targets
st.header(f"1 · Soft targets for {md(r.words[r.word])}")
if r.n_pieces > 1:
    st.info(
        f"This word is {r.n_pieces} pieces in the teacher's vocabulary: all of them are masked; the figures show "
        "the first piece, and the loss terms below cover every piece."
    )
ui.show_figure(figures.key_figure(r), "distillation-soft-targets", key=True)
a, b, c = st.columns(3)
a.metric(
    f"Teacher's top token at T = {T:g}",
    f"{soft.teacher_top_t:.1%}",
    distillation.vs_t1(soft.teacher_top_t - soft.teacher_top_1, T),
    delta_color="off",
)
b.metric(
    f"Mass on the other {soft.vocab - 1:,} tokens",
    f"{1 - soft.teacher_top_t:.1%}",
    distillation.vs_t1(soft.teacher_top_1 - soft.teacher_top_t, T),
    delta_color="off",
    help="The dark knowledge: what the teacher says about the wrong answers.",
)
c.metric(f"T² · KL at this token, T = {T:g}", f"{soft.kl:.5f}")
st.caption(
    f"{distillation.bars_caption_start(T)} Each bar is the token's share of the probability the shown tokens "
    f"hold together: over the whole vocabulary of {soft.vocab:,} tokens, T = {T:g} leaves every one of them a "
    "tiny probability, and what the temperature changes — how much the near-misses count against the top "
    f"token — is their ratios, which this keeps. The tokens are the teacher's top {values['top_k']} plus any of "
    "the student's that are not among them; ✓ marks the original word. Hover for the probabilities over the "
    "whole vocabulary. "
    f"Teacher: {r.teacher}; student: {r.student}."
)

# ----------------------------------------------------------------------------- 2. temperature
st.header("2 · What the temperature does")
ui.show_figure(figures.temperature_figure(r), "distillation-temperature", key="temperature")
st.caption(distillation.sweep_story(r.sweep, soft.vocab))

# ----------------------------------------------------------------------------- 3. loss terms
st.header("3 · The recipe's three loss terms on this input")
names = {
    "kl": f"soft targets: T² · KL (α = {R.alpha_ce:g})",
    "mlm": f"masked LM: cross-entropy (α = {R.alpha_mlm:g})",
    "cos": f"hidden states: 1 − cosine (α = {R.alpha_cos:g})",
}
at_recipe, at_yours = r.terms_recipe, r.terms_yours
table = [
    {
        "term": names[k],
        f"at T = {R.temperature:g} (recipe)": at_recipe[k],
        f"weighted, T = {R.temperature:g}": at_recipe["weighted"][k],
        f"at your T = {T:g}": at_yours[k],
    }
    for k in ("kl", "mlm", "cos")
]
table.append(
    {
        "term": "total (weighted sum)",
        f"at T = {R.temperature:g} (recipe)": None,
        f"weighted, T = {R.temperature:g}": at_recipe["total"],
        f"at your T = {T:g}": at_yours["total"],
    }
)
numbers = [k for k in table[0] if k != "term"]
# an empty cell (a total of unweighted terms; a term left out) shows as "—", explained below; the data stay numbers
st.dataframe(pd.DataFrame(table).style.format("{:.5f}", subset=numbers, na_rep="—"), hide_index=True, width="stretch")
if at_recipe["cos"] is None:
    st.info("The cosine term needs hidden states of the same size; this teacher and student differ, so it is left out.")
st.caption(
    "Computed with `app.triple_loss.distillation_losses`, the very function the training recipe imports (here "
    "in float64, so that small values are exact), on the same positions as in training: soft targets and cosine "
    "on every token of the sentence, the MLM cross-entropy only at the masked word. Only the soft-target term "
    "depends on T (the last column uses your T for it, and in the total). **—**: the terms are summed only after "
    "weighting by their α, so the unweighted column has no total"
    + ("; the cosine term is left out here." if at_recipe["cos"] is None else ".")
)
ui.show_figure(figures.position_kl_figure(r), "distillation-kl-per-token")

# ----------------------------------------------------------------------------- 4. size and speed
st.header("4 · Smaller and faster? Measured here")
if r.provisional:
    ui.provisional_timings("speed")
sz = r.size
latency_col = f"encoder, {r.device.upper()} (ms)"  # medians; short: the table fits a projector's width
whole_col = "with MLM head (ms)"
st.dataframe(
    [
        {
            "model": f"teacher ({models['bert'].variant.label})",
            "checkpoint": r.teacher,
            "layers": sz["teacher_layers"],
            "parameters": sz["teacher_params"],
            latency_col: sz["teacher_ms"],
            whole_col: sz.get("teacher_whole_ms"),
        },
        {
            "model": f"student ({models['distilbert'].variant.label})",
            "checkpoint": r.student,
            "layers": sz["student_layers"],
            "parameters": sz["student_params"],
            latency_col: sz["student_ms"],
            whole_col: sz.get("student_whole_ms"),
        },
    ],
    hide_index=True,
    width="stretch",
    column_config={
        "checkpoint": st.column_config.TextColumn(width="medium"),
        "parameters": st.column_config.NumberColumn(format="localized"),
        latency_col: st.column_config.NumberColumn(format="%.2f"),
        whole_col: st.column_config.NumberColumn(format="%.2f"),
    },
)
st.caption(distillation.speed_caption(sz))
ui.show_figure(figures.claims_figure(r.claims), "distillation-claims")
for line in r.summary:
    st.markdown(f"- {line}")

ui.takeaway(distillation.TAKEAWAY)
ui.claim_line("distillation")
ui.share_link(SPEC)
