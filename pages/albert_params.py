"""ALBERT, part 1: where the parameters go — factorized embeddings and cross-layer sharing, counted
exactly from real transformers modules on the meta device, beside compute and memory.
All computation is app/lessons/albert_params.py (``run``); the figures are app/figures/albert_params.py."""

import streamlit as st

from app import ui
from app.lessons import albert_params as params
from app.figures import albert_params as figures
from app.core.text import md

SPEC = params.SPEC


def use_preset(name: str | None = None) -> None:
    """Copy a released model's sizes (``name``, else the one just picked) into this page's settings (before they
    are drawn): on picking one, and on "Use its sizes" after a size was changed."""
    for field, value in params.preset_values(name or st.session_state[ui.key_of(params.PRESET)]).items():
        ui.set_value(getattr(SPEC, field), value)


def n(x: int) -> str:
    return f"{x:,}"


st.title("ALBERT: where the parameters go")
ui.intro(
    "BERT-base has 110 million parameters; **ALBERT-base** (Lan et al., 2020) has the same depth and width and "
    "**12 million**. Two ideas do it. **Factorized embeddings**: instead of giving each of the V vocabulary "
    "entries a vector of the hidden size H (V·H numbers), ALBERT gives it a short vector of size E and learns "
    "one E×H projection up to H (V·E + E·H). **Cross-layer sharing**: all L layers use *one* set of weights. "
    "Set the sizes below; every count is computed exactly from real `transformers` modules built on PyTorch's "
    "*meta* device, which knows shapes but allocates no memory."
)
values = ui.bind(SPEC)

# ----------------------------------------------------------------------------- settings

with st.container(border=True):
    p1, p2 = st.columns([3, 1], vertical_alignment="bottom")
    if ui.key_of(params.PRESET) not in st.session_state:  # on opening: the model these sizes are, if any
        ui.set_value(params.PRESET, params.matching_preset(values) or params.DEFAULT_PRESET)
    chosen = ui.widget(params.PRESET, p1, on_change=use_preset)  # not in the link: the sizes it copies are
    p2.button("Use its sizes", on_click=use_preset, args=(chosen,))
    c1, c2, c3, c4 = st.columns(4)
    ui.widget(SPEC.vocab_size, c1)
    ui.widget(SPEC.hidden_size, c2)
    ui.widget(SPEC.factorized, c3)
    ui.widget(SPEC.embedding_size, c3, disabled=not values["factorized"])
    ui.widget(SPEC.num_hidden_layers, c4)
    ui.widget(SPEC.num_attention_heads, c1)
    ui.widget(SPEC.intermediate_size, c2)
    ui.widget(SPEC.sharing, c4)
    with st.expander("Positions, segment types and sequence length"):
        e1, e2, e3 = st.columns(3)
        ui.widget(SPEC.max_position_embeddings, e1)
        ui.widget(SPEC.type_vocab_size, e2)
        ui.widget(SPEC.seq_len, e3)

albert = ui.try_model("albert")  # only the last section needs it: the counts stand without a model
models = {} if isinstance(albert, str) else {"albert": albert}
r = ui.run(params.run, models, params.Inputs.from_values(values))
arch, y = r.arch, r.yours

# ----------------------------------------------------------------------------- your model

st.header("Your encoder")
ui.show_notes(r.notes)
if y is None:
    st.info("Fix the settings above to see this encoder's counts; the released models below are always shown.")
else:
    b = y.breakdown
    m1, m2, m3, m4 = st.columns(4)
    m1.metric("Parameters (base model)", params.human_count(y.counted), help=f"{n(y.counted)} exactly")
    m2.metric(
        "Same shape as BERT (V·H, no sharing)",
        params.human_count(y.bert_like.total),
        delta=f"{y.bert_like.total / y.counted:.1f}× yours" if y.bert_like.total != y.counted else "the same",
        delta_color="off",
    )
    m3.metric(
        "+ masked-LM head",
        params.human_count(b.total_with_head),
        help="Dense + LayerNorm + output bias; the output matrix is tied to the word embeddings.",
    )
    m4.metric("Embeddings' share", f"{b.embedding_total / b.total:.0%}")
    agree = ":material/check_circle: agrees with" if y.counted == b.total else ":material/error: differs from"
    st.caption(f"Counted from {y.how}: **{n(y.counted)}** — {agree} the formula below ({n(b.total)}).")
    st.dataframe(
        list(y.table),
        hide_index=True,
        width="stretch",
        column_config={"parameters": st.column_config.NumberColumn(format="localized")},
    )
    if arch.factorized:
        emb = b.embeddings
        st.markdown(
            f"Factorizing the word embeddings: V·H = **{n(arch.vocab_size * arch.hidden_size)}** becomes "
            f"V·E + E·H + H = **{n(emb['word'] + emb['projection E→H'])}** — **{n(y.word_saving)}** fewer parameters."
        )
    if arch.sharing in ("attention", "ffn"):
        st.caption(
            "`transformers`' ALBERT can share all layers (`num_hidden_groups=1`) or none (`= L`), but not "
            "only the attention or only the feed-forward parts. Those two modes are counted exactly from the "
            "real modules instead: the shared part once, the unshared part L times."
        )
    ui.show_figure(figures.key_figure(r, phone=ui.phone()), "albert-parameters-by-part", key=True)
    ui.show_figure(figures.embedding_sweep_figure(r), "albert-parameters-vs-E", key="embedding")
    st.caption(
        "The line stays flat once E·(V + H) is small next to the layers: past that point a smaller E "
        "saves almost nothing. Where it crosses the dashed line, factorization stops paying."
    )

with st.expander("The ALBERT paper's sharing ablation (Table 4), recomputed"):
    st.dataframe(list(r.table4), hide_index=True, width="stretch")
    st.caption(
        "ALBERT-base shapes (V = 30000, H = 768, L = 12); our counts include the pooler and, for ALBERT, "
        f"the E→H projection. {params.table4_story(list(r.table4))}"
    )

# ----------------------------------------------------------------------------- released models

st.header("Released models: computed vs published")
st.markdown(
    "Each config below is written by hand from the published sizes and instantiated on the meta device — no "
    "download. *Computed* is the base model (no task head); *published* is the figure usually quoted."
)
st.dataframe(
    [
        {k: row[k] for k in ("model", "computed (M)", "published (M)", "difference", "note", "source")}
        for row in r.presets
    ],
    hide_index=True,
    width="stretch",
    column_config={"note": st.column_config.TextColumn(width="large")},
)

st.header("Parameters are not compute")
st.markdown(
    f"Sharing stores one layer but still *runs* it L times, so the arithmetic per token is that of the unshared "
    f"model. Below: forward FLOPs per token (2 per multiply-add, matrix products only) at a sequence length of "
    f"**{r.seq_len}**, beside parameters and the memory the weights take."
)
if y is not None:
    k1, k2, k3 = st.columns(3)
    k1.metric("Your setting: GFLOPs per token", f"{y.flops / 1e9:.3f}")
    k2.metric(
        "…with no sharing at all",
        f"{y.flops_unshared / 1e9:.3f}",
        help="Identical: sharing changes which weights are read, not how many multiplications are done.",
    )
    k3.metric("Parameters per GFLOP", params.human_count(y.counted / (y.flops / 1e9)) if y.flops else "—")
ui.show_figure(figures.compute_scatter(r), "albert-parameters-vs-flops", key="compute")
st.dataframe(
    [{k: row[k] for k in ("model", "computed (M)", "GFLOPs / token", "fp32", "fp16 / bf16")} for row in r.presets],
    hide_index=True,
    width="stretch",
)
al, bl = r.preset("ALBERT-large"), r.preset("BERT-large")
if al and bl:
    st.markdown(
        f"**ALBERT-large** has {al['computed (M)']:.1f}M parameters, {bl['computed (M)'] / al['computed (M)']:.0f}× "
        f"fewer than **BERT-large** ({bl['computed (M)']:.1f}M), yet needs {al['GFLOPs / token']:.3f} GFLOPs per token "
        f"against {bl['GFLOPs / token']:.3f}: the same arithmetic (plus its small E→H projection). The paper's 1.7× "
        "*training* speed-up for ALBERT-large came from moving and synchronising fewer weights across TPUs, not "
        "from doing less math; at inference on one device it is not faster. ALBERT-xxlarge, with fewer parameters "
        "than BERT-large, needs several times its compute."
    )

st.subheader("Memory for the weights")
if y is not None:
    st.dataframe(list(y.memory), hide_index=True, width="stretch")
    st.caption(
        f"Training in fp32 with Adam keeps weights, gradients and two moments: about "
        f"{params.ADAM_BYTES_PER_PARAM} bytes per parameter = "
        f"{params.human_bytes(y.counted * params.ADAM_BYTES_PER_PARAM)} here, before activations — which "
        "sharing does not shrink either."
    )

# ----------------------------------------------------------------------------- the loaded model

st.header("The ALBERT loaded here")
real = r.loaded
if real is None:
    st.info(f"No ALBERT could be loaded ({albert}); every count above stands without it.")
elif real.problem:
    st.info(
        f"{real.shown_as}: this checkpoint's layer grouping has no setting on this page ({real.problem}); "
        f"it holds {n(real.real)} parameters."
    )
else:
    if albert.notice:
        st.info(albert.notice, icon=":material/info:")
    la = real.arch
    st.markdown(
        f"{md(real.shown_as)} ({albert.device}, {albert.dtype}): V = {la.vocab_size:,}, E = {la.embedding_size}, "
        f"H = {la.hidden_size}, L = {la.num_hidden_layers}, {la.num_attention_heads} heads, "
        f"I = {la.intermediate_size:,}, sharing: {params.SHARING_LABELS[la.sharing]}."
    )
    r1, r2 = st.columns(2)
    r1.metric("Real count: Σ numel over unique tensors", n(real.real))
    r2.metric(
        "Formula from its config",
        n(real.formula),
        delta="equal" if real.real == real.formula else f"{real.real - real.formula:+,}",
        delta_color="off",
    )
    st.caption(
        f"`{real.model_class}`: the base model {'with' if real.pooler else 'without'} its pooler"
        + (
            ", plus the masked-LM head whose output matrix is the word-embedding matrix (one tensor, counted once)"
            if real.with_head
            else ""
        )
        + f". In memory: {params.human_bytes(params.memory_bytes(real.real, 'float32'))} in fp32."
    )

ui.takeaway(params.TAKEAWAY)
ui.claim_line("sharing")
ui.share_link(SPEC)
