"""Attention in every layer: bertviz's head and model views (offline, injection-safe) for any variant,
and the mean and rollout maps that summarise all heads and layers."""

import streamlit as st

from app import attention, bertviz_offline, state, ui
from app.figures.attention import attention_heatmap
from app.models import catalogue

DEFAULT_TEXT = "The little girl found a red ball in the park."
AGGREGATES = {
    "layer": "One layer: the chosen head, or the mean of its heads",
    "mean": "Mean over every layer and head",
    "rollout": "Attention rollout through all layers",
}
VIEWS = {"head": "Head view (one layer, lines per head)", "model": "Model view (every layer × every head)"}
SPEC = (
    state.Param("variant", "choice", "bert", choices=tuple(catalogue.CATALOGUE)),
    state.Param("text", "str", DEFAULT_TEXT, max_len=1000),
    state.Param("text_b", "str", "", max_len=1000),
    state.Param("max_tokens", "int", attention.DEFAULTS.max_tokens,
                lo=attention.DEFAULTS.min_tokens, hi=attention.DEFAULTS.most_tokens),
    state.Param("view", "choice", "head", choices=tuple(VIEWS)),
    state.Param("layer", "int", 1, lo=1, hi=64),
    state.Param("head", "int", 0, lo=0, hi=64),  # 0: every head
    state.Param("agg", "choice", "rollout", choices=tuple(AGGREGATES)),
)
ui.bind(SPEC)


@st.cache_data(max_entries=64, show_spinner=False)
def attentions(_loaded, identity, text_a: str, text_b: str, max_tokens: int) -> attention.AttentionRun:
    return attention.run(_loaded.model, _loaded.tokenizer, text_a, text_b, max_tokens)


@st.cache_data(max_entries=32, show_spinner=False)
def bertviz_document(_run, identity, text_a, text_b, max_tokens, view, layer, head, layers, title) -> str:
    heads = [head] if head else None
    return bertviz_offline.render(view, _run.attentions, _run.tokens, _run.encoded.sentence_b_start,
                                  layer=layer, heads=heads, include_layers=list(layers), title=title)


st.title("Attention in every layer")
st.markdown(
    "Every layer of a BERT-style model has several **attention heads**. Each head lets every token "
    "(a *query*) take a weighted mix of all the tokens (the *keys*); its weights are non-negative and sum "
    "to 1. Below, **bertviz** draws those weights as lines — the darker the line, the larger the weight — "
    "for any variant in the catalogue, and two maps summarise all heads and layers at once."
)

# ----------------------------------------------------------------------------- input

left, right = st.columns([2, 1])
with left:
    text_a = st.text_area("Sentence A", key="text", height=80)
    text_b = st.text_input("Sentence B (optional)", key="text_b",
                           help="A second segment, in the model's own pair format.")
with right:
    variant_key = st.selectbox("Variant", tuple(catalogue.CATALOGUE), key="variant",
                               format_func=lambda k: catalogue.get(k).label)
    max_tokens = st.slider("Token cap", attention.DEFAULTS.min_tokens, attention.DEFAULTS.most_tokens,
                           key="max_tokens",
                           help="Longer inputs are cut to this many tokens (special tokens included).")
st.caption(
    "Inputs longer than the token cap are cut to it (from the longer sentence first) and the page says so: "
    "bertviz draws one line per head for every pair of tokens, so above about 60 tokens it gets slow."
)

variant = catalogue.get(variant_key)
if not text_a.strip():
    st.warning("Sentence A is empty — type a sentence (for example “" + DEFAULT_TEXT + "”) to see its attention.")
    ui.share_link(SPEC)
    st.stop()

loaded = ui.model(variant_key)
with ui.timed_forward():
    run = attentions(loaded, loaded.identity, text_a, text_b, max_tokens)
enc = run.encoded
n_layers, n_heads, length = run.n_layers, run.n_heads, len(run.tokens)

# ----------------------------------------------------------------------------- what was run

if enc.truncated:
    why = "the token cap" if enc.cap == max_tokens else f"{variant.label}'s limit of {enc.cap} positions"
    st.warning(
        f"The input has {enc.n_full} tokens; only the first {len(run.tokens)} are shown ({why}"
        f"{', cut from the longer sentence first' if enc.sentence_b_start is not None else ''}). "
        "Raise the token cap to see more."
    )
if enc.n_unknown:
    unk = loaded.tokenizer.unk_token
    st.info(
        f"{enc.n_unknown} token(s) are not in {variant.label}'s vocabulary and became `{unk}` — emoji, "
        "CJK or other characters its tokenizer never saw. Their attention is real, but it says nothing about "
        "the character itself."
    )
segments = f"Tokens as the model sees them: `{enc.template}`, {length} in all."
if text_b.strip():
    if attention.uses_token_types(loaded.model):
        filled = (" This tokenizer gives no `token_type_ids`, so they were built from its segments "
                  "(0 for A, 1 for B" + (", 2 for `<cls>`" if variant.family == "xlnet" else "") + ")."
                  if enc.filled_token_types else "")
        segments += (f" {variant.label} reads **token types**: sentence A has type 0 and sentence B type 1, "
                     f"so every layer knows which segment a token is in.{filled}")
    else:
        segments += (f" {variant.label} has **no token types** ("
                     + ("`type_vocab_size = 1`" if variant.family == "roberta" else "no segment embedding")
                     + "): sentence B is appended as a second segment with the tokenizer's own pair format, "
                     "and only the separator tokens tell the two apart.")
st.markdown(segments)
if variant.family == "albert":
    groups = getattr(loaded.model.config, "num_hidden_groups", 1)
    st.info(f"ALBERT shares its layers: all {n_layers} layers use the same weights "
            f"(`num_hidden_groups = {groups}`). The maps still differ from layer to layer because each "
            "layer's *input* differs.", icon=":material/repeat:")
if variant.family == "xlnet":
    st.info("XLNet has two attention streams. This shows the **content stream**: with no `target_mapping` "
            "(nothing is being predicted here), `XLNetLMHeadModel` runs only that stream, in which every token "
            "sees every token, itself included. The query stream exists only while predicting tokens in a "
            "factorization order.", icon=":material/shuffle:")

# ----------------------------------------------------------------------------- layer and head

if st.session_state["layer"] > n_layers:
    st.info(f"{variant.label} has {n_layers} layers; showing layer {n_layers} instead of "
            f"{st.session_state['layer']}.")
    st.session_state["layer"] = n_layers
if st.session_state["head"] > n_heads:
    st.info(f"{variant.label} has {n_heads} heads per layer; showing every head instead of head "
            f"{st.session_state['head']}.")
    st.session_state["head"] = 0
c1, c2, c3 = st.columns(3)
layer = c1.selectbox("Layer", list(range(1, n_layers + 1)), key="layer")
head = c2.selectbox("Head", list(range(0, n_heads + 1)), key="head",
                    format_func=lambda h: "every head" if h == 0 else f"head {h}")
view = c3.radio("bertviz view", tuple(VIEWS), key="view", format_func=VIEWS.get)

# ----------------------------------------------------------------------------- bertviz

st.subheader(f"bertviz {view} view · {variant.label}")
title = f"{variant.label} · {' / '.join(t for t in (text_a, text_b) if t.strip())}"
layers = tuple(bertviz_offline.fit_layers(view, n_layers, n_heads, length, enc.sentence_b_start is not None, layer))
if len(layers) < n_layers:
    shown = f"layer {layers[0]}" if len(layers) == 1 else f"layers {layers[0]}–{layers[-1]}"
    st.info(f"This input is long for {n_layers} layers × {n_heads} heads, so bertviz gets only {shown} (choose "
            "the layer above); the maps below still use every layer. A lower token cap brings the rest back.")
doc = bertviz_document(run, loaded.identity, text_a, text_b, max_tokens, view, layer, head, layers, title[:200])
st.iframe(doc, height=bertviz_offline.height_hint(view, len(layers), n_heads, length),
          alt=f"bertviz {view} view of {variant.label}'s attention")
if view == "head":
    st.caption("Left: the attending tokens; right: the tokens they attend to; one colour per head. Hover a "
               "token to see only its lines; click a coloured square to hide or show a head, double-click it "
               "to see that head alone. Change the layer in the view's own menu or above. Layers and heads "
               "count from 1.")
else:
    st.caption("One small picture per layer (rows) and head (columns); click one to enlarge it. Layers and "
               "heads count from 1.")
if enc.sentence_b_start is not None:
    st.caption("With two sentences, bertviz's *Attention* menu also shows A→A, B→B, A→B and B→A on their own.")
st.download_button("⬇️ Download this view (standalone HTML, works offline)", data=doc,
                   file_name=f"bertviz-{view}-{variant_key}.html", mime="text/html", on_click="ignore",
                   key="download-bertviz")

# ----------------------------------------------------------------------------- aggregated maps

st.subheader("All heads and layers at once")
agg = st.radio("Map", tuple(AGGREGATES), key="agg", format_func=AGGREGATES.get, horizontal=True)
if agg == "layer":
    weights = run.attentions[layer - 1, head - 1] if head else attention.mean_over_heads(run.attentions)[layer - 1]
    what = f"layer {layer}, " + (f"head {head}" if head else f"mean of {n_heads} heads")
    st.markdown("One layer's attention as a grid: row = the attending token, column = the token it attends to.")
elif agg == "mean":
    weights = attention.mean_attention(run.attentions)
    what = f"mean over {n_layers} layers × {n_heads} heads"
    st.markdown("The plain average of every head in every layer. Simple, but it treats layers as independent "
                "although each one works on the previous one's output.")
else:
    weights = attention.rollout(run.attentions)
    what = f"rollout through {n_layers} layers"
    st.markdown(
        "**Attention rollout** (Abnar & Zuidema, 2020) follows attention *through* the layers. Each layer also "
        "passes its input straight on (the residual connection), so its effective mixing is "
        "`0.5·A + 0.5·I` (A = the mean of its heads), rows renormalised to sum to 1; multiplying these "
        "through the layers says how much of each input token reaches each position at the top. "
        "Every row still sums to 1."
    )
fig = attention_heatmap(weights, run.tokens, f"{variant.label} · {what}")
ui.show_figure(fig, f"attention-{agg}-{variant_key}")
st.caption("Hover a cell for both tokens and the exact weight. The camera icon saves the map "
           "(PNG or SVG, chosen in the sidebar).")

st.markdown(
    "**Takeaway:** attention is many small maps, one per head per layer — bertviz shows them all. "
    "Averaging heads hides what each one does; rollout respects that layers are stacked, so it is a better "
    "guess at which input tokens reach a position, though still a guess: attention weights are not "
    "explanations by themselves."
)
ui.share_link(SPEC)
