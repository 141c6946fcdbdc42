"""ALBERT, part 2: one block applied L times — activations layer by layer, ALBERT beside BERT, and what
happens if the shared block keeps going past L. All computation is app/lessons/albert_activations.py (``run``); the
figures are app/figures/albert_activations.py."""

import math

import streamlit as st

from app import ui
from app.lessons import albert_activations as albert
from app.figures import albert_activations as figures
from app.core.text import md, visible

SPEC = albert.SPEC
st.title("ALBERT: one block, applied L times")
ui.intro(albert.INTRO)
values = ui.bind(SPEC)
# a new text (typed here or on another page): its word index meant a word of the old one
values["new_text"] = ui.text_changed(SPEC.word, values["text"], albert.DEFAULT_TEXT)
ui.widget(SPEC.text, height=80)
c1, c2, c3 = st.columns([2, 2, 3])
ui.widget(SPEC.measure, c2)
ui.widget(SPEC.repeat, c3)

models = ui.models(*albert.MODELS)
r = ui.run(albert.run, models, albert.Inputs.from_values(values))
ui.set_value(SPEC.word, r.word)
ui.widget(SPEC.word, c1, options=range(len(r.words)), format_func=lambda i: f"{i} · {visible(r.words[i])}")
ui.show_notes(r.notes)
a, b = r.albert, r.bert

# ----------------------------------------------------------------------------- one block

st.header("It really is one block")
m = st.columns(3)
m[0].metric("ALBERT: layer modules", len(a.calls.modules), help=", ".join(a.calls.modules))
m[1].metric("…called in one forward pass", len(a.calls.calls))
m[2].metric("…distinct weight storages used", a.calls.distinct_storages)
m = st.columns(3)
m[0].metric("BERT: layer modules", len(b.calls.modules))
m[1].metric("…called in one forward pass", len(b.calls.calls))
m[2].metric("…distinct weight storages used", b.calls.distinct_storages)
where = (
    "the same module and the same memory"
    if a.calls.distinct_modules_called == a.calls.distinct_storages == 1
    else f"{a.calls.distinct_modules_called} modules and {a.calls.distinct_storages} storages"
)
st.caption(
    f"A forward hook on every layer module counts its calls and records where its query weights live "
    f"(`data_ptr`); the hooks are removed afterwards. ALBERT's {len(a.calls.calls)} calls all go to {where}; "
    f"BERT's {len(b.calls.calls)} go to {b.calls.distinct_storages} different ones. "
    f"ALBERT: {a.shown_as}; BERT: {b.shown_as}."
)
with st.expander("The shared block's parameters (stored once) and every call"):
    st.dataframe(
        list(a.parameters),
        hide_index=True,
        width="stretch",
        column_config={"numel": st.column_config.NumberColumn(format="localized")},
    )
    st.caption(f"{sum(p['numel'] for p in a.parameters):,} parameters, used {len(a.calls.calls)} times per token.")
    st.dataframe(
        [
            {
                "call": c["call"],
                "module": c["module"],
                "id(module)": hex(c["module_id"]),
                "query.weight data_ptr": hex(c["query_weight_ptr"]),
            }
            for c in a.calls.calls
        ],
        hide_index=True,
        width="stretch",
    )

# ----------------------------------------------------------------------------- layer by layer

st.header("Layer by layer")
st.markdown(
    "For every layer: the **L2 distance** and the **angle** between each token's vector going in and coming "
    "out (averaged over tokens; hover for the cosine), the average **length** of the token vectors, and the "
    "**entropy** of the attention — 0 bits when every token looks at a single token, "
    f"log₂ T = {math.log2(len(a.tokens)):.2f} bits (ALBERT's T = {len(a.tokens)}) when it spreads evenly."
)
ui.show_figure(figures.key_figure(r), "albert-vs-bert-layers", key=True)
st.caption(albert.layers_story(r))

st.subheader("Which depths look alike")
ui.show_figure(figures.similarity_heatmaps(r), f"albert-vs-bert-{r.measure}")
st.caption(
    "Depth 0 is the input to the first layer; depth k the output of layer k. A bright band along the diagonal "
    "means neighbouring layers compute similar things; a bright block means the representation has stopped "
    "changing much."
)

# ----------------------------------------------------------------------------- past L

st.header(f"Keep going past L = {a.layers}")
u = r.unrolled
if u is None:
    st.info(
        "This ALBERT checkpoint does not share one block across all layers (num_hidden_groups ≠ 1), so "
        "there is no single block to keep applying."
    )
else:
    ui.show_figure(figures.unroll_figure(r), "albert-unrolled", key="unrolled")
    st.caption(
        f"Applying the shared block ourselves, from the embeddings, {u.applications} times (the loaded model is "
        f"only read). Check: after {a.layers} applications the result equals the model's own output "
        f"(largest difference {u.check:.1e})."
    )
    if u.summary:
        c = u.summary
        st.markdown(
            f"Each application moves the tokens by {c['first']:.3f} at first, {c['at_L']:.3f} at application "
            f"{a.layers} (where the model stops) and {c['last']:.3f} at application {u.applications}: the steps "
            f"{albert.TRENDS[c['trend']]}. Training only ever saw L applications, so what happens after is the "
            "block's own dynamics, untrained."
        )

# ----------------------------------------------------------------------------- a token's path

st.header("One token's path")
followed = {v.name: v for v in (a, b) if v.path is not None}
word = r.words[r.word]
if not followed:
    st.info(f"Neither model has a word piece for word {r.word}, {md(word)}: pick another word to follow.")
else:
    ui.show_figure(figures.trajectory_figure(r), "albert-vs-bert-trajectory")
    st.caption(
        f"Word {r.word}, {md(word)}, through the layers. Each panel is that model's own 2-D view: a PCA of every "
        "token at every layer output, with the input (depth 0) projected into it; the axes of the two panels are "
        "not comparable. Numbers are depths; grey points are the other tokens. ALBERT's dotted continuation is the "
        "block applied past L, projected into the same view."
    )

# ----------------------------------------------------------------------------- takeaway

ui.takeaway(albert.TAKEAWAY)
ui.share_link(SPEC)
