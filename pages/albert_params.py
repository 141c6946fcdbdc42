"""ALBERT, part 1: where the parameters go — factorized embeddings and cross-layer sharing, counted
exactly from real transformers modules on the meta device, beside compute and memory."""

from dataclasses import replace

import streamlit as st

from app import params, state, ui
from app.figures import albert as figures

A = params.Arch()  # ALBERT-base
L = params.LIMITS
SPEC = (
    state.Param("vocab_size", "int", A.vocab_size, lo=L.vocab_size[0], hi=L.vocab_size[1]),
    state.Param("hidden_size", "int", A.hidden_size, lo=L.hidden_size[0], hi=L.hidden_size[1]),
    state.Param("embedding_size", "int", A.embedding_size, lo=L.embedding_size[0], hi=L.embedding_size[1]),
    state.Param("num_hidden_layers", "int", A.num_hidden_layers, lo=L.num_hidden_layers[0], hi=L.num_hidden_layers[1]),
    state.Param("num_attention_heads", "int", A.num_attention_heads, lo=L.num_attention_heads[0],
                hi=L.num_attention_heads[1]),
    state.Param("intermediate_size", "int", A.intermediate_size, lo=L.intermediate_size[0], hi=L.intermediate_size[1]),
    state.Param("sharing", "choice", A.sharing, choices=params.SHARING_MODES),
    state.Param("factorized", "bool", A.factorized),
    state.Param("max_position_embeddings", "int", A.max_position_embeddings, lo=L.max_position_embeddings[0],
                hi=L.max_position_embeddings[1]),
    state.Param("type_vocab_size", "int", A.type_vocab_size, lo=L.type_vocab_size[0], hi=L.type_vocab_size[1]),
    state.Param("seq_len", "int", 512, lo=L.seq_len[0], hi=L.seq_len[1]),
)
ui.bind(SPEC)
LOADABLE = [p.name for p in params.PRESETS if p.arch is not None]


@st.cache_data(max_entries=256, show_spinner=False)
def meta_count(arch: params.Arch) -> tuple[int, str]:
    return params.count_on_meta(arch)


@st.cache_data(max_entries=16, show_spinner="Counting every preset on the meta device…")
def preset_rows(seq_len: int) -> list[dict]:
    return params.preset_rows(seq_len)


def load_preset() -> None:
    arch = params.preset(st.session_state["_albert_preset"]).arch
    for name in ("vocab_size", "hidden_size", "embedding_size", "num_hidden_layers", "num_attention_heads",
                 "intermediate_size", "sharing", "factorized", "max_position_embeddings", "type_vocab_size"):
        st.session_state[name] = getattr(arch, name)


def n(x: int) -> str:
    return f"{x:,}"


st.title("ALBERT: where the parameters go")
st.markdown(
    "BERT-base has 110 million parameters; **ALBERT-base** (Lan et al., 2020) has the same depth and width and "
    "**12 million**. Two ideas do it. **Factorized embeddings**: instead of giving each of the V vocabulary "
    "entries a vector of the hidden size H (V·H numbers), ALBERT gives it a short vector of size E and learns "
    "one E×H projection up to H (V·E + E·H). **Cross-layer sharing**: all L layers use *one* set of weights. "
    "Set the sizes below; every count is computed exactly from real `transformers` modules built on PyTorch's "
    "*meta* device, which knows shapes but allocates no memory."
)

# ----------------------------------------------------------------------------- settings

with st.container(border=True):
    p1, p2 = st.columns([3, 1], vertical_alignment="bottom")
    p1.selectbox("Start from a released model", LOADABLE, key="_albert_preset",
                 help="Copies that model's published sizes into the settings below.")
    p2.button("Use its sizes", on_click=load_preset)
    c1, c2, c3, c4 = st.columns(4)
    c1.number_input("Vocabulary V", min_value=L.vocab_size[0], max_value=L.vocab_size[1], step=1000, key="vocab_size")
    c2.number_input("Hidden size H", min_value=L.hidden_size[0], max_value=L.hidden_size[1], step=64,
                    key="hidden_size")
    factorized = c3.toggle("Factorize embeddings (E < H)", key="factorized",
                           help="On: ALBERT's V·E + E·H. Off: BERT's V·H (E is ignored).")
    c3.number_input("Embedding size E", min_value=L.embedding_size[0], max_value=L.embedding_size[1], step=32,
                    key="embedding_size", disabled=not factorized)
    c4.number_input("Layers L", min_value=L.num_hidden_layers[0], max_value=L.num_hidden_layers[1], step=1,
                    key="num_hidden_layers")
    c1.number_input("Attention heads", min_value=L.num_attention_heads[0], max_value=L.num_attention_heads[1], step=1,
                    key="num_attention_heads")
    c2.number_input("Feed-forward size I", min_value=L.intermediate_size[0], max_value=L.intermediate_size[1],
                    step=256, key="intermediate_size")
    c4.selectbox("Cross-layer sharing", params.SHARING_MODES, key="sharing", format_func=params.SHARING_LABELS.get,
                 help="The ALBERT paper's Table 4 ablation: share everything, only attention, only feed-forward, "
                      "or nothing.")
    with st.expander("Positions, segment types and sequence length"):
        e1, e2, e3 = st.columns(3)
        e1.number_input("Position table size", min_value=L.max_position_embeddings[0],
                        max_value=L.max_position_embeddings[1], step=64, key="max_position_embeddings")
        e2.number_input("Segment types", min_value=L.type_vocab_size[0], max_value=L.type_vocab_size[1], step=1,
                        key="type_vocab_size")
        e3.number_input("Sequence length for compute", min_value=L.seq_len[0], max_value=L.seq_len[1], step=64,
                        key="seq_len", help="FLOPs per token depend on it through attention (T² terms).")

arch = params.Arch(
    vocab_size=int(st.session_state["vocab_size"]), hidden_size=int(st.session_state["hidden_size"]),
    embedding_size=int(st.session_state["embedding_size"]),
    num_hidden_layers=int(st.session_state["num_hidden_layers"]),
    num_attention_heads=int(st.session_state["num_attention_heads"]),
    intermediate_size=int(st.session_state["intermediate_size"]), sharing=st.session_state["sharing"],
    factorized=bool(st.session_state["factorized"]),
    max_position_embeddings=int(st.session_state["max_position_embeddings"]),
    type_vocab_size=int(st.session_state["type_vocab_size"]),
)
seq_len = int(st.session_state["seq_len"])
problems = params.problems(arch)

# ----------------------------------------------------------------------------- your model

st.header("Your encoder")
if problems:
    for p in problems:
        st.warning(p, icon=":material/warning:")
    st.info("Fix the settings above to see this encoder's counts; the released models below are always shown.")
else:
    if arch.factorized and arch.embedding_size == arch.hidden_size:
        st.info("E = H: the E→H projection adds H² + H parameters and saves nothing — factorization pays only "
                "when E is well below H.")
    b = params.breakdown(arch)
    counted, how = meta_count(arch)
    bert_like = params.breakdown(replace(arch, factorized=False, sharing="none"))
    m1, m2, m3, m4 = st.columns(4)
    m1.metric("Parameters (base model)", params.human_count(counted), help=f"{n(counted)} exactly")
    m2.metric("Same shape as BERT (V·H, no sharing)", params.human_count(bert_like.total),
              delta=f"{bert_like.total / counted:.1f}× yours" if bert_like.total != counted else "the same",
              delta_color="off")
    m3.metric("+ masked-LM head", params.human_count(b.total_with_head),
              help="Dense + LayerNorm + output bias; the output matrix is tied to the word embeddings.")
    m4.metric("Embeddings' share", f"{b.embedding_total / b.total:.0%}")
    agree = "✅ agrees with" if counted == b.total else "❌ differs from"
    st.caption(f"Counted from {how}: **{n(counted)}** — {agree} the formula below ({n(b.total)}).")

    e, h, v = arch.E, arch.hidden_size, arch.vocab_size
    emb = b.embeddings
    rows = [
        {"part": "word embeddings", "formula": f"V·E = {v:,}·{e:,}" if arch.factorized else f"V·H = {v:,}·{h:,}",
         "parameters": emb["word"]},
        {"part": "E→H projection", "formula": f"E·H + H = {e:,}·{h:,} + {h:,}" if arch.factorized else "— (none)",
         "parameters": emb["projection E→H"]},
        {"part": "positions, segments, LayerNorm", "formula": f"({arch.max_position_embeddings:,} + "
         f"{arch.type_vocab_size}) · {e:,} + 2·{e:,}",
         "parameters": emb["position"] + emb["token type"] + emb["LayerNorm"]},
        {"part": "one attention sublayer", "formula": f"4(H² + H) + 2H, H = {h:,}", "parameters": b.attention},
        {"part": "one feed-forward sublayer", "formula": f"2·H·I + I + H + 2H, I = {arch.intermediate_size:,}",
         "parameters": b.ffn},
        {"part": "one layer", "formula": "attention + feed-forward", "parameters": b.layer},
        {"part": f"all {arch.num_hidden_layers} layers ({params.SHARING_LABELS[arch.sharing]})",
         "formula": f"{b.attention_copies} × attention + {b.ffn_copies} × feed-forward", "parameters": b.encoder},
        {"part": "pooler ([CLS] → H)", "formula": "H² + H", "parameters": b.pooler},
        {"part": "base model total", "formula": "embeddings + layers + pooler", "parameters": b.total},
        {"part": "masked-LM head (beside the base model)",
         "formula": ("H·E + E + 2E + V" if arch.factorized else "H² + H + 2H + V") + " (output matrix tied)",
         "parameters": b.mlm_head},
    ]
    st.dataframe(rows, hide_index=True, width="stretch",
                 column_config={"parameters": st.column_config.NumberColumn(format="localized")})
    word_saving = v * h - (emb["word"] + emb["projection E→H"]) if arch.factorized else 0
    if arch.factorized:
        st.markdown(
            f"Factorizing the word embeddings: V·H = **{n(v * h)}** becomes V·E + E·H + H = "
            f"**{n(emb['word'] + emb['projection E→H'])}** — **{n(word_saving)}** fewer parameters."
        )
    if arch.sharing in ("attention", "ffn"):
        st.caption("`transformers`' ALBERT can share all layers (`num_hidden_groups=1`) or none (`= L`), but not "
                   "only the attention or only the feed-forward parts. Those two modes are counted exactly from the "
                   "real modules instead: the shared part once, the unshared part L times.")

    bars = []
    for mode in ("none", "attention", "ffn", "all"):  # most to fewest parameters
        bm = params.breakdown(replace(arch, sharing=mode))
        label = params.SHARING_LABELS[mode] + (" ◀ yours" if mode == arch.sharing else "")
        bars.append({"label": label, "embeddings": bm.embedding_total, "attention": bm.attention * bm.attention_copies,
                     "ffn": bm.ffn * bm.ffn_copies, "pooler": bm.pooler})
    if arch.factorized:
        bars.insert(0, {"label": "BERT-style: V·H, not shared", "embeddings": bert_like.embedding_total,
                        "attention": bert_like.attention * bert_like.attention_copies,
                        "ffn": bert_like.ffn * bert_like.ffn_copies, "pooler": bert_like.pooler})
    ui.show_figure(figures.params_stacked_bar(bars), "albert-parameters-by-part")
    sweep = params.total_vs_embedding_size(arch, params.embedding_sweep_sizes(h))
    unfactorized = params.breakdown(replace(arch, factorized=False)).total
    ui.show_figure(figures.embedding_sweep_figure(sweep, e if arch.factorized else None, unfactorized, h),
                   "albert-parameters-vs-E")
    st.caption("The line stays flat once E·(V + H) is small next to the layers: past that point a smaller E "
               "saves almost nothing. Where it crosses the dashed line, factorization stops paying.")

with st.expander("The ALBERT paper's sharing ablation (Table 4), recomputed"):
    st.dataframe(params.table4_rows(), hide_index=True, width="stretch")
    st.caption("ALBERT-base shapes (V = 30000, H = 768, L = 12). Our counts include the pooler and, for ALBERT, "
               "the E→H projection (0.6M each at E = 768); the paper does not say whether it counts them, which "
               "fits its E = 768 figures sitting about 1M below ours. Every other row agrees to rounding.")

# ----------------------------------------------------------------------------- released models

st.header("Released models: computed vs published")
st.markdown(
    "Each config below is written by hand from the published sizes and instantiated on the meta device — no "
    "download. *Computed* is the base model (no task head); *published* is the figure usually quoted."
)
rows = preset_rows(seq_len)
st.dataframe(
    [{k: r[k] for k in ("model", "computed (M)", "published (M)", "difference", "note", "source")} for r in rows],
    hide_index=True, width="stretch", column_config={"note": st.column_config.TextColumn(width="large")},
)

st.header("Parameters are not compute")
st.markdown(
    f"Sharing stores one layer but still *runs* it L times, so the arithmetic per token is that of the unshared "
    f"model. Below: forward FLOPs per token (2 per multiply-add, matrix products only) at a sequence length of "
    f"**{seq_len}**, beside parameters and the memory the weights take."
)
user_point = None
if not problems:
    family, cfg = params.arch_compute_cfg(arch)
    user_flops = params.flops_per_token(family, cfg, seq_len)
    user_point = {"model": "your setting", "params": counted, "flops": user_flops}
    k1, k2, k3 = st.columns(3)
    k1.metric("Your setting: GFLOPs per token", f"{user_flops / 1e9:.3f}")
    k2.metric("…with no sharing at all", f"{user_flops / 1e9:.3f}",
              help="Identical: sharing changes which weights are read, not how many multiplications are done.")
    k3.metric("Parameters per GFLOP", params.human_count(counted / (user_flops / 1e9)) if user_flops else "—")
ui.show_figure(figures.compute_scatter(rows, user_point), "albert-parameters-vs-flops")
st.dataframe(
    [{k: r[k] for k in ("model", "computed (M)", "GFLOPs / token", "fp32", "fp16 / bf16")} for r in rows],
    hide_index=True, width="stretch",
)
by_name = {r["model"]: r for r in rows}
if "ALBERT-large" in by_name and "BERT-large" in by_name:
    al, bl = by_name["ALBERT-large"], by_name["BERT-large"]
    st.markdown(
        f"**ALBERT-large** has {al['computed (M)']:.1f}M parameters, {bl['computed (M)'] / al['computed (M)']:.0f}× "
        f"fewer than **BERT-large** ({bl['computed (M)']:.1f}M), yet needs {al['GFLOPs / token']:.3f} GFLOPs per token "
        f"against {bl['GFLOPs / token']:.3f}: the same arithmetic (plus its small E→H projection). The paper's 1.7× "
        "*training* speed-up for ALBERT-large came from moving and synchronising fewer weights across TPUs, not "
        "from doing less math; at inference on one device it is not faster. ALBERT-xxlarge, with fewer parameters "
        "than BERT-large, needs several times its compute."
    )

st.subheader("Memory for the weights")
if not problems:
    st.dataframe(
        [{"precision": d, "bytes per parameter": params.BYTES_PER_PARAM[d],
          "your base model": params.human_bytes(params.memory_bytes(counted, d)),
          "same shape, BERT-style": params.human_bytes(params.memory_bytes(bert_like.total, d))}
         for d in params.BYTES_PER_PARAM],
        hide_index=True, width="stretch",
    )
    st.caption(f"Training in fp32 with Adam keeps weights, gradients and two moments: about "
               f"{params.ADAM_BYTES_PER_PARAM} bytes per parameter = "
               f"{params.human_bytes(counted * params.ADAM_BYTES_PER_PARAM)} here, before activations — which sharing "
               "does not shrink either.")

# ----------------------------------------------------------------------------- the loaded model

st.header("The ALBERT loaded here")
loaded = ui.model("albert")
try:
    real = params.loaded_counts(loaded.model)
except ValueError as err:
    st.info(f"This checkpoint's layer grouping has no setting on this page ({err}).")
else:
    la = real["arch"]
    st.markdown(
        f"`{ui.escape(loaded.location)}` ({loaded.source}, {loaded.device}, {loaded.dtype}): V = {la.vocab_size:,}, "
        f"E = {la.embedding_size}, H = {la.hidden_size}, L = {la.num_hidden_layers}, {la.num_attention_heads} heads, "
        f"I = {la.intermediate_size:,}, sharing: {params.SHARING_LABELS[la.sharing]}."
    )
    r1, r2 = st.columns(2)
    r1.metric("Real count: Σ numel over unique tensors", n(real["real"]))
    r2.metric("Formula from its config", n(real["formula"]),
              delta="equal" if real["real"] == real["formula"] else f"{real['real'] - real['formula']:+,}",
              delta_color="off")
    st.caption(
        f"`{type(loaded.model).__name__}`: the base model {'with' if real['pooler'] else 'without'} its pooler, "
        f"plus the masked-LM head whose output matrix is the word-embedding matrix (one tensor, counted once). "
        f"In memory: {params.human_bytes(params.memory_bytes(real['real'], 'float32'))} in fp32."
    )

st.markdown(
    "**Takeaway:** ALBERT's savings come from two places — the word embeddings (V·H → V·E + E·H) and storing one "
    "layer instead of L. Both cut *parameters and memory*; neither cuts the multiplications per token, so a "
    "shared-layer model is smaller on disk but not faster to run. Sharing only attention or only the "
    "feed-forward part lands in between, with the feed-forward sublayers holding about two thirds of each layer."
)
ui.share_link(SPEC)
