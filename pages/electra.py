"""ELECTRA: a generator swaps words, a discriminator scores every token (replaced-token detection).
All computation is app/lessons/electra.py (``run``); the figures are app/figures/electra.py."""

import math

import streamlit as st

from app import ui
from app.lessons import electra
from app.figures import electra as figures
from app.core.text import count, md

SPEC, D = electra.SPEC, electra.DEFAULTS


def resample() -> None:
    key = ui.key_of(SPEC.seed)
    st.session_state[key] = (int(st.session_state.get(key, 0)) + 1) % 2**31


def fmt(x: float) -> str:
    return "—" if math.isnan(x) else f"{x:.2f}"


st.title("ELECTRA: spot the fake")
ui.intro(
    "BERT learns by filling in the ~15% of tokens that were masked, so only those positions teach it anything. "
    "**ELECTRA** (Clark et al., 2020) turns pre-training into a game with two players. A **generator** "
    "(itself a masked LM) fills each masked position by *sampling* a plausible word. A **discriminator** then "
    "reads the corrupted sentence and says, for **every** token, how likely it is that the token was replaced. "
    "The discriminator is the model you keep. Below, the real pair plays the game on your sentence."
)
values = ui.bind(SPEC)
ui.widget(SPEC.text, height=80)
c1, c2, c3, c4 = st.columns([3, 3, 2, 1.8], vertical_alignment="bottom")
ui.widget(SPEC.rate, c1)
ui.widget(SPEC.temperature, c2)
ui.widget(SPEC.seed, c3)
c4.button(
    "Resample", icon=":material/casino:", on_click=resample, help="Next seed: new masked positions and new samples."
)

models = ui.models(*electra.MODELS)
gen, disc = models["electra-generator"], models["electra-discriminator"]
r = ui.run(electra.run, models, electra.Inputs.from_values(values))
ui.show_notes(r.notes)
rnd, det = r.round, r.detection

# ----------------------------------------------------------------------------- the game, stage by stage
st.header("One round of the game")
ui.show_figure(
    figures.key_figure(r, phone=ui.phone(), stage=ui.presenting()),
    "electra-pipeline",
    key=True,
    alt=figures.describe(r),
)
st.caption(
    "Follow a column down. **2** amber: masked. **3** what the generator sampled there (red: a real replacement, "
    "green with (=): it sampled the original word back). **4** the sentence the discriminator reads. **5** its "
    "P(replaced) for every token, blue = looks original, red = looks replaced. **6** the truth it is trained on. "
    f"Hover a cell for exact values; on row 3, for the generator's top {D.top_k} proposals at temperature "
    f"{values['temperature']:g}. Generator: {gen.shown_as}; discriminator: {disc.shown_as}."
)
same = [i for i, s in enumerate(rnd.same_as_original) if s]
if same:
    listed = ", ".join(f"{md(rnd.tokens[i])} (position {i})" for i in same)
    st.info(
        f"The generator sampled the original token back at {listed}. As in the paper, such a token counts as "
        "**original** (label 0): the discriminator is asked whether the token is *wrong*, not whether it was masked."
    )

# ----------------------------------------------------------------------------- detection quality
st.subheader("How well did the discriminator spot the fakes?")
m1, m2, m3, m4 = st.columns(4)
m1.metric("Replaced tokens", f"{det.n_replaced} of {det.n_tokens}")
m2.metric(
    f"Precision at {D.threshold:g}", fmt(det.precision), help="Of the tokens it flagged, the share really replaced."
)
m3.metric(f"Recall at {D.threshold:g}", fmt(det.recall), help="Of the replaced tokens, the share it flagged.")
m4.metric("ROC-AUC", fmt(det.auc), help="Chance that a random replaced token scores above a random original one.")
note = f"Scored on the {count(det.n_tokens, 'word piece')} of the sentence ([CLS], [SEP] and [UNK] are never replaced)."
if det.n_flagged == 0:
    note += f" No token scored above {D.threshold:g}, so precision is undefined (—)."
st.caption(note)
if not det.both_classes:
    st.info(
        "ROC-AUC needs both replaced and original tokens, and this round has "
        + ("no replaced token (every sample equalled the original)" if det.n_replaced == 0 else "only replaced tokens")
        + ": resample, or raise the temperature or the masking rate."
    )

# ----------------------------------------------------------------------------- hand edits
st.header("Your turn: fake a word")
st.markdown(
    "Replace one token of your sentence by a word of your own and watch the discriminator judge every "
    "token again. No generator is involved: you are the forger."
)
ui.set_value(SPEC.edit_pos, r.edit_pos)
e1, e2 = st.columns(2)
ui.widget(SPEC.edit_pos, e1, options=r.positions, format_func=lambda i: f"{i} · {r.encoded.tokens[i]}")
ui.widget(SPEC.edit_word, e2)
edit = r.edit
if edit.message:
    (st.info if edit.ok else st.warning)(edit.message)
if not values["edit_word"].strip():
    st.caption("Type a word to replace the chosen token; below, the discriminator reads your sentence untouched.")
ui.show_figure(figures.edit_figure(r, phone=ui.phone()), "electra-edit")
if edit.ok and r.edit_labels[r.edit_pos]:
    st.markdown(
        electra.edit_verdict(
            edit.piece, r.edit_pos, r.edit_scores, [i for i in r.positions if i != r.edit_pos], D.threshold
        )
    )
elif edit.ok:
    st.markdown(
        f"The sentence is unchanged, so every label is *original*; the highest P(replaced) is "
        f"{max(r.edit_scores[i] for i in r.positions):.3f}."
    )

# ----------------------------------------------------------------------------- the signal count
st.header("Why this is efficient: every token teaches")
counts = r.signal
ui.show_figure(figures.signal_of(r), "electra-signal", height=260, key="signal")
st.markdown(
    "For this very sentence, the masked LM gets a loss term at the "
    f"**{count(counts['mlm'], 'masked position')}** only; "
    f"replaced-token detection gets one at **all {counts['rtd']}** tokens ([CLS] and [SEP] included, as in "
    "training). Clark et al.'s efficiency analysis traces much of ELECTRA's advantage to this: a discriminator "
    "trained on the masked 15% only (*ELECTRA 15%*) loses much of the gain."
)

# ----------------------------------------------------------------------------- training curves
st.header("How the bundled discriminator learned")
curves = r.curves
if not disc.is_bundled:
    st.caption(
        f"The discriminator is {md(disc.location)} from the hub; training curves are bundled only "
        "with the offline stand-in (switch the sidebar to bundled models to see them)."
    )
elif curves is None:
    st.caption("No training curves were saved beside this checkpoint.")
else:
    ui.show_figure(figures.auc_curve_figure(curves), "electra-auc-curve")
    final = curves["final"].get("discriminator", {})
    line = electra.curve_story(curves)
    if final:
        line += (
            f" Final, on the whole held-out set: ROC-AUC {final.get('auc', float('nan')):.3f}, precision "
            f"{final.get('precision', float('nan')):.3f}, recall {final.get('recall', float('nan')):.3f}."
        )
    st.caption(line)

ui.takeaway(electra.TAKEAWAY)
ui.claim_line("electra")
ui.share_link(SPEC)
