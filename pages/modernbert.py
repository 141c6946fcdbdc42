"""ModernBERT: rotary positions, alternating local and global attention, GeGLU and unpadding, each measured on
the loaded model. All computation is app/lessons/modernbert.py (``run``); the figures are app/figures/modernbert.py."""

import streamlit as st

from app import ui
from app.lessons import modernbert
from app.figures import modernbert as figures
from app.core.text import count, md

SPEC, D = modernbert.SPEC, modernbert.DEFAULTS
KIND = {"full_attention": "global", "sliding_attention": "local"}

st.title("ModernBERT: a 2024 encoder")
ui.intro(
    "Six years after BERT, **ModernBERT** (Warner et al., 2024) keeps the job — a bidirectional encoder trained by "
    "filling in masked words — and rebuilds the machine: positions become **rotations** of queries and keys, most "
    "layers attend only to a **local window** with a global layer every few, the feed-forward is **gated** "
    "(GeGLU), and batches are **unpadded**. That is how it reads 8,192 tokens instead of 512. Each change is "
    "taken apart below on the loaded model's own modules."
)
values = ui.bind(SPEC)
ui.widget(SPEC.text, height=80)
c1, c2, c3 = st.columns([3, 2, 2], vertical_alignment="bottom")
ui.widget(SPEC.seed, c3)

models = ui.models(*modernbert.MODELS)
mb = models["modernbert"]
r = ui.run(modernbert.run, models, modernbert.Inputs.from_values(values, ui.warm_progress(), ui.other_pages()))
ui.show_notes(r.notes)
fill = r.fill
ui.set_value(SPEC.word, fill.word)
ui.widget(SPEC.word, c1, options=range(len(fill.words)), format_func=lambda i: f"{i} · {fill.words[i]}")
ui.set_value(SPEC.layer, r.layer)
ui.widget(SPEC.layer, c2, options=range(len(r.layers)), format_func=lambda i: f"{i} · {KIND[r.layers[i]]}")

# ----------------------------------------------------------------------------- fill the blank
word = fill.words[fill.word]
ui.show_figure(figures.fill_figure(r), "modernbert-fill", height=280)
st.caption(
    f"Word {fill.word}, {md(word)}, is {len(fill.pieces)} piece{'s' if len(fill.pieces) > 1 else ''} "
    f"({' · '.join(md(p) for p in fill.pieces)}), all replaced by `[MASK]`; the bars are the guesses for the "
    f"first. The original piece ranks **{fill.rank}**; P(original word) = {fill.p_word:.4f}. Your text is "
    f"{fill.n_tokens} tokens with `[CLS]` and `[SEP]`. Model: {r.model}."
)
# the settings of one idea sit at the top of its tab (run read them through ui.bind)
tabs = st.tabs(
    [
        "1 · Rotary positions",
        "2 · Local and global attention",
        "3 · GeGLU",
        "4 · Unpadding",
        "5 · What changed from BERT",
    ]
)
ui.widget(SPEC.shift, tabs[0])
ui.widget(SPEC.length, tabs[1])
ui.widget(SPEC.batch, tabs[3])

# ----------------------------------------------------------------------------- 1. RoPE
with tabs[0]:
    rope = r.rope
    st.markdown(
        f"ModernBERT has **no position table**. In every attention layer each query and key (head_dim = "
        f"{rope.head_dim}) is cut into {rope.head_dim // 2} pairs of numbers, and pair *i* of the token at position "
        "*p* is **rotated** by the angle *p · θᵢ*, with θᵢ = base^(−2i / head_dim):"
    )
    st.latex(
        r"\begin{pmatrix} x_i \\ x_{i+d/2} \end{pmatrix} \mapsto \begin{pmatrix} \cos p\theta_i & -\sin p\theta_i "
        r"\\ \sin p\theta_i & \cos p\theta_i \end{pmatrix} \begin{pmatrix} x_i \\ x_{i+d/2} \end{pmatrix}"
    )
    ui.show_figure(figures.spectrum_figure(r), "modernbert-rope-spectrum")
    st.caption(
        "Each point is one pair's θᵢ (`inv_freq` of the model's rotary module), drawn as the positions it takes to "
        "turn once. Global layers use base "
        + " and local layers base ".join(f"{t:,.0f}" for t in rope.theta)
        + ": the larger base slows the slow pairs further, so positions thousands of tokens apart still differ."
    )
    ui.show_figure(figures.rope_figure(r), "modernbert-rope-relative", key="rope")
    st.caption(
        f"One query and one key (random, from seed {values['seed']}), rotated by the model's own "
        "`ModernBertRotaryEmbedding` and `apply_rotary_pos_emb`. Lines: the query at position "
        f"{rope.base}; circles: the same pair {count(rope.shift, 'position')} further along. They coincide — largest "
        f"difference **{rope.max_difference:.2e}**, float32 rounding — because rotating both by the same extra "
        "angle leaves their dot product unchanged. The heatmap is constant along every diagonal for the same reason. "
        f"Model: {r.model}."
    )

# ----------------------------------------------------------------------------- 2. alternating attention
with tabs[1]:
    checks = r.attention.checks
    check = checks[r.layer]
    n_global = sum(1 for c in checks if c.kind == "full_attention")
    st.markdown(
        f"{len(checks)} layers, read from `config.layer_types`: **{n_global} global** and **{len(checks) - n_global} "
        f"local**, whose tokens see at most **{r.half}** tokens on each side (`local_attention` = {2 * r.half}). "
        f"Below, {r.length} tokens of a story go through {mb.variant.label} with `output_attentions=True`."
    )
    ui.show_figure(figures.layers_figure(r), "modernbert-layers", height=190)
    ui.show_figure(figures.key_figure(r), "modernbert-attention", key=True)
    ui.show_figure(figures.all_layers_figure(r), "modernbert-all-layers", key="layers")
    st.caption(
        f"Every layer on the same {r.length} tokens, mean over heads: a global layer's weights spread over the "
        "whole input, a local layer's stay in a band around the diagonal. Hover for the exact numbers."
    )
    m1, m2, m3 = st.columns(3)
    m1.metric("Blocked cells", f"{check.blocked:,}", help="Cells the layer's rule blocks, per head.")
    m2.metric("Largest weight there", f"{check.blocked_max:g}", help="Over every head: 0 means exactly zero.")
    m3.metric(
        "Attention inside the rule",
        f"{check.inside:.6f}",
        help="The smallest share of any query's attention (all heads) that falls in allowed cells.",
    )
    st.dataframe(
        [
            {
                "layer": c.layer,
                "type": KIND[c.kind],
                "reach": "all" if c.half is None else f"±{c.half}",
                "allowed cells": c.allowed,
                "blocked cells": c.blocked,
                "largest blocked weight": c.blocked_max,
                "allowed cells at exactly 0": c.allowed_zero,
            }
            for c in checks
        ],
        hide_index=True,
    )
    st.caption(
        f"Every layer, every head: the blocked cells carry exactly 0 in the model's own attention weights. "
        f"Model: {r.model}."
    )

    st.header("What the window saves")
    cost = r.cost
    ui.show_figure(figures.cost_figure(r), "modernbert-cost")
    st.caption(
        f"Attended (query, key) pairs counted exactly: T² in a global layer, T + 2·Σ(T − d) for d up to {r.half} in "
        f"a local one; FLOPs = 4 · hidden · pairs. At {cost.lengths[-1]:,} tokens this model computes "
        f"{cost.shares[-1]:.1%} of the all-global attention, and ModernBERT-base (its config) "
        f"{cost.base_shares[-1]:.1%}. A local layer's cost grows only linearly with the length, so the share falls "
        f"towards the share of global layers ({cost.global_layers[0]} of {cost.global_layers[1]} here, "
        f"{cost.base_global_layers[0]} of {cost.base_global_layers[1]} in ModernBERT-base): those still grow "
        "quadratically."
    )
    if r.provisional:
        ui.provisional_timings("window")
    ui.show_figure(figures.timing_figure(r), "modernbert-timing")
    st.caption(
        f"Medians of {modernbert.rounds_words(cost.rounds)} in turns (as built, then all global), measured on this "
        f"machine (other sessions share it). {modernbert.timing_story(cost)} The saving needs a kernel that skips "
        f"the blocked cells — flash-attention's sliding window, which ModernBERT was built for. Model: {r.model}."
    )

# ----------------------------------------------------------------------------- 3. GeGLU
with tabs[2]:
    st.markdown(
        "BERT's feed-forward is GELU(x·W₁ + b₁)·W₂ + b₂. ModernBERT's `ModernBertMLP` computes **two** projections "
        "of x at once (`Wi`), passes one through GELU and multiplies it by the other, the **gate**, channel by "
        "channel, then projects back (`Wo`) — with no biases: **Wo( GELU(x·W) ⊙ x·V )**."
    )
    ui.show_figure(figures.ffn_figure(r.feed_forwards), "modernbert-ffn-parameters")
    base_rows = [f for f in r.feed_forwards if f.name.startswith(("ModernBERT-base", "BERT-base"))]
    st.caption(
        "Counted from real modules (`ModernBertMLP` `Wi` and `Wo`; BERT's `intermediate.dense` and `output.dense`; "
        "the base-size ones built from their configs on the meta device). A gate costs a third matrix, so "
        "ModernBERT narrows the layer: "
        + " against ".join(f"{f.name.split(':')[0]} {f.parameters:,}" for f in base_rows)
        + "."
    )
    gate = r.gate
    ui.show_figure(figures.gate_figure(gate), "modernbert-gate")
    g1, g2, g3 = st.columns(3)
    g1.metric("Channels", f"{len(gate.act):,}")
    g2.metric("Sign flipped by the gate", f"{gate.flipped:,}")
    g3.metric(f"Nearly shut (|gate| < {D.gate_closed:g})", f"{gate.closed:,}")
    st.caption(
        f"The feed-forward of layer {gate.layer} at {md(gate.piece)} (token {gate.position} of your sentence). The "
        f"input x is the model's own: the layer replayed from its hidden states matches its next hidden state to "
        f"{gate.replay_error:.1e}. A GELU layer can only pass a channel on (the dotted line) or nearly silence it; "
        f"the gate, computed from the same token, scales each channel, shuts it or flips its sign. Model: {r.model}."
    )

# ----------------------------------------------------------------------------- 4. unpadding
with tabs[3]:
    u = r.unpadding
    st.markdown(
        f"A batch is a rectangle: {len(u.lengths)} sentences padded to the longest ({max(u.lengths)} tokens). "
        "ModernBERT **unpads**: it drops the padding, packs the sentences into one sequence, and keeps them apart "
        "with a block-diagonal attention mask and positions that restart at 0 for each sentence."
    )
    ui.show_figure(figures.batch_figure(u), "modernbert-batch")
    u1, u2, u3, u4 = st.columns(4)
    u1.metric("Token slots, padded", f"{u.padded:,}")
    u2.metric(
        "Tokens, unpadded", f"{u.unpadded:,}", help=f"{1 - u.unpadded / u.padded:.0%} of the padded slots were padding."
    )
    u3.metric("Padded batch", f"{u.ms_padded:.1f} ms", help=f"Median of {count(u.rounds, 'round')} in turns.")
    u4.metric("Packed sequence", f"{u.ms_packed:.1f} ms", help=f"Median of {count(u.rounds, 'round')} in turns.")
    if u.provisional:
        ui.provisional_timings("unpadding")
    st.caption(
        f"Padding is {1 - u.unpadded / u.padded:.0%} of the padded batch. Your text is sentence 0; the others are "
        f"drawn from a story with seed {values['seed']}. Both forwards "
        f"give the same last hidden state at every real token (largest difference **{u.max_difference:.1e}**). "
        f"{modernbert.unpadding_story(u)} Timed on {mb.device.upper()}. Attention pairs of a global layer: "
        f"{u.pairs_padded:,} padded, {u.pairs_packed:,} packed with a mask (what eager attention computes), "
        f"{u.pairs_blocks:,} in a kernel that skips the blocked blocks (flash-attention's variable-length mode, "
        f"which ModernBERT uses). Model: {r.model}."
    )

# ----------------------------------------------------------------------------- 5. what changed
with tabs[4]:
    st.table(
        [{"": c.aspect, "BERT": c.bert, "ModernBERT": c.modernbert, "read from": c.source} for c in r.changes],
        hide_index=True,
    )
    st.caption(
        f"Each row read from the two loaded models' configs and modules — ModernBERT: {r.model}; BERT: "
        f"{r.bert} — except the training tokens, which come from the papers."
    )
    st.header("Published numbers, computed again")
    st.table(
        [
            {
                "": p.aspect,
                "published (Warner et al., 2024)": p.published,
                "from ModernBERT-base's config": p.base,
                f"{mb.variant.label} loaded here": p.this_model,
            }
            for p in r.published
        ],
        hide_index=True,
    )
    st.caption(
        "ModernBERT-base's column is computed live: its parameters counted by building the model from its "
        "configuration on the meta device"
        + (
            " (transformers' ModernBertConfig defaults are answerdotai/ModernBERT-base's config)."
            if mb.is_bundled
            else "."
        )
    )

ui.takeaway(modernbert.takeaway(r))
ui.share_link(SPEC)
