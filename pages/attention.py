"""Attention in every layer: bertviz's head and model views (offline, injection-safe) for any variant,
and the mean and rollout maps that summarise all heads and layers. All computation is app/lessons/attention.py
(``run``); the figure is app/figures/attention.py."""

import streamlit as st

from app import ui
from app.lessons import attention
from app.figures import attention as figures
from app.core.text import md

SPEC = attention.SPEC

st.title("Attention in every layer")
ui.intro(
    "Every layer of a BERT-style model has several **attention heads**. Each head lets every token "
    "(a *query*) take a weighted mix of all the tokens (the *keys*); its weights are non-negative and sum "
    "to 1. Below, **bertviz** draws those weights as lines — the darker the line, the larger the weight — "
    "for any variant in the catalogue, and two maps summarise all heads and layers at once."
)
values = ui.bind(SPEC)
left, right = st.columns([2, 1])
ui.widget(SPEC.text, left, height=80)
ui.widget(SPEC.text_b, left, height=68)
ui.widget(SPEC.variant, right)
ui.widget(SPEC.max_tokens, right)
st.caption(
    "Inputs longer than the token cap are cut to it (from the longer sentence first) and the page says so: "
    "bertviz draws one line per head for every pair of tokens, so above about 60 tokens it gets slow."
)
controls = st.columns(3)

models = ui.models(values["variant"])
r = ui.run(attention.run, models, attention.Inputs.from_values(values))
enc = r.encoded

# ----------------------------------------------------------------------------- what was run
segments = f"Tokens as the model sees them: {md(enc.template, None)}, {len(r.tokens)} in all (model: {r.shown_as})."
if r.pair:
    if r.reads_token_types:
        filled = (
            " This tokenizer gives no `token_type_ids`, so they were built from its segments "
            "(0 for A, 1 for B" + (", 2 for `<cls>`" if r.family == "xlnet" else "") + ")."
            if enc.filled_token_types
            else ""
        )
        segments += (
            f" {r.label} reads **token types**: sentence A has type 0 and sentence B type 1, "
            f"so every layer knows which segment a token is in.{filled}"
        )
    else:
        segments += (
            f" {r.label} has **no token types** ("
            + (f"`type_vocab_size = {r.type_vocab_size}`" if r.type_vocab_size is not None else "no segment embedding")
            + "): sentence B is appended as a second segment with the tokenizer's own pair format, "
            "and only the separator tokens tell the two apart."
        )
ui.show_notes(r.notes)
st.markdown(segments)

# ----------------------------------------------------------------------------- layer and head
ui.set_value(SPEC.layer, r.layer)
ui.set_value(SPEC.head, r.head)
ui.widget(SPEC.layer, controls[0], options=range(1, r.n_layers + 1))
ui.widget(
    SPEC.head,
    controls[1],
    options=range(0, r.n_heads + 1),
    format_func=lambda h: "every head" if h == 0 else f"head {h}",
)
ui.widget(SPEC.view, controls[2])

# ----------------------------------------------------------------------------- bertviz
view = values["view"]
st.header(f"bertviz {view} view · {r.label}")
ui.show_html(figures.key_figure(r), f"bertviz {view} view of {r.label}'s attention", key=True)
if view == "head":
    st.caption(
        "Left: the attending tokens; right: the tokens they attend to; one colour per head. Hover a "
        "token to see only its lines; click a coloured square to hide or show a head, double-click it "
        "to see that head alone. Change the layer in the view's own menu or above. Layers and heads "
        "count from 1."
    )
else:
    st.caption(
        "One small picture per layer (rows) and head (columns); click one to enlarge it. Layers and heads count from 1."
    )
if r.pair:
    st.caption("With two sentences, bertviz's *Attention* menu also shows A→A, B→B, A→B and B→A on their own.")
st.download_button(
    "Download this view (standalone HTML, works offline)",
    icon=":material/download:",
    data=figures.document(r),
    file_name=f"bertviz-{view}-{r.variant}.html",
    mime="text/html",
    on_click="ignore",
    key="download-bertviz",
)

# ----------------------------------------------------------------------------- aggregated maps
st.header("All heads and layers at once")
ui.widget(SPEC.agg)
agg = values["agg"]
if agg == "layer":
    st.markdown("One layer's attention as a grid: row = the attending token, column = the token it attends to.")
elif agg == "mean":
    st.markdown(
        "The plain average of every head in every layer. Simple, but it treats layers as independent "
        "although each one works on the previous one's output."
    )
else:
    st.markdown(
        "**Attention rollout** (Abnar & Zuidema, 2020) follows attention *through* the layers. Each layer also "
        "passes its input straight on (the residual connection), so its effective mixing is "
        "`0.5·A + 0.5·I` (A = the mean of its heads), rows renormalised to sum to 1; multiplying these "
        "through the layers says how much of each input token reaches each position at the top. "
        "Every row still sums to 1."
    )
ui.show_figure(figures.attention_heatmap(r), f"attention-{agg}-{r.variant}", key="map")
st.caption(
    "Hover a cell for both tokens and the exact weight. The camera icon saves the map "
    "(PNG or SVG, chosen in the sidebar)."
)

# ----------------------------------------------------------------------------- every layer, readable
st.header("Every layer, side by side")
ui.show_figure(figures.layers_figure(r), f"attention-layers-{r.variant}", key="layers")
st.caption(
    "One map per layer, the mean of its heads: row = the attending token, column = the token it attends to. "
    "Hover a cell for both tokens and the exact weight."
)

ui.takeaway(attention.TAKEAWAY)
ui.share_link(SPEC)
