"""DeBERTa: every attention score taken apart into content and relative position (disentangled attention).
All computation is app/lessons/deberta.py (``run``); the figures are app/figures/deberta.py."""

import streamlit as st

from app import ui
from app.lessons import deberta
from app.figures import deberta as figures
from app.core.text import md

SPEC, D = deberta.SPEC, deberta.DEFAULTS


def millions(n: int) -> str:
    return f"{n / 1e6:.1f}M"


st.title("DeBERTa: disentangled attention")
ui.intro(
    "BERT adds a position vector to every word's embedding, mixing *what* a word is with *where* it stands. "
    "**DeBERTa** (He et al., 2020) keeps them apart: every attention score is a sum of three terms — content with "
    "content, content with *relative* position, relative position with content — and no absolute position enters "
    "the encoder. Below, the loaded model's own weights take one score apart."
)
values = ui.bind(SPEC)
box, choices = st.columns([3, 2], vertical_alignment="bottom")
ui.widget(SPEC.text, box, height=68)
c1, c2 = choices.columns(2)
c3, c4 = choices.columns(2)

models = ui.models(*deberta.MODELS)
deb, bert = models["deberta"], models["bert"]
r = ui.run(deberta.run, models, deberta.Inputs.from_values(values))
ui.show_notes(r.notes)


def word(w: int) -> str:
    return f"{w} · {r.words[w]}"


for param, used in (
    (SPEC.layer, r.layer),
    (SPEC.head, r.head),
    (SPEC.query, r.query),
    (SPEC.key, r.key),
    (SPEC.word, r.word),
):
    ui.set_value(param, used)
ui.widget(SPEC.layer, c1, options=range(r.n_layers))
ui.widget(SPEC.head, c2, options=range(r.n_heads))
ui.widget(SPEC.query, c3, options=r.choosable, format_func=word)
ui.widget(SPEC.key, c4, options=r.choosable, format_func=word)

# ----------------------------------------------------------------------------- the score, taken apart
t, qi, kj = r.terms, r.query_pos, r.key_pos
st.header(f"The attention score, taken apart: layer {r.layer}, head {r.head}")
ui.show_figure(figures.key_figure(r, phone=ui.phone()), "deberta-terms", key=True, alt=figures.describe(r))
st.caption(
    f"Layer {r.layer}, head {r.head} of {deb.shown_as}. Row i is the query token, column j the key it looks at; red "
    "raises the score, blue lowers it. **content → content** compares the two tokens' vectors (what BERT computes, "
    "minus positions); **content → position** asks how much token i wants a token at distance i − j; **position → "
    "content** how much token j suits a query at that distance. The fourth panel is their sum, the score the model "
    "feeds its softmax. Hover any cell for all three terms, the sum, and the softmax beside the model's own attention."
)
if ui.phone():  # the same sum, one term a line: a phone's width cuts the one-line formula off at the right
    st.latex(
        r"\begin{aligned} A_{ij} = \tfrac{1}{\sqrt{3d}}\Big(\, & "
        r"\underbrace{Q^c_i\cdot K^c_j}_{\text{content}\to\text{content}}"
        r" \\ +\; & \underbrace{Q^c_i\cdot K^r_{\delta(i,j)}}_{\text{content}\to\text{position}}"
        r" \\ +\; & \underbrace{K^c_j\cdot Q^r_{\delta(i,j)}}_{\text{position}\to\text{content}}\,\Big)"
        r" \end{aligned}"
    )
else:
    st.latex(
        r"A_{ij} = \frac{\overbrace{Q^c_i\cdot K^c_j}^{\text{content}\to\text{content}} + "
        r"\overbrace{Q^c_i\cdot K^r_{\delta(i,j)}}^{\text{content}\to\text{position}} + "
        r"\overbrace{K^c_j\cdot Q^r_{\delta(i,j)}}^{\text{position}\to\text{content}}}{\sqrt{3d}}"
    )
st.markdown(
    f"{md(r.tokens[qi])} (i = {qi}) → {md(r.tokens[kj])} (j = {kj}): content→content **{t.c2c[qi, kj]:.4f}** "
    f"+ content→position **{t.c2p[qi, kj]:.4f}** + position→content **{t.p2c[qi, kj]:.4f}** = score "
    f"**{t.total[qi, kj]:.4f}**; after the softmax over row i, attention **{t.probs[qi, kj]:.4f}** (the model's own "
    f"`output_attentions`: {t.model_probs[qi, kj]:.4f})."
)
m1, m2, m3 = st.columns(3)
m1.metric(
    "Every term is divided by",
    f"√({t.scale_factor}·{t.head_size}) = {t.scale:.3f}",
    help=f"Read off the model: head size d = {t.head_size}, and 1 + {len(t.pos_att_type)} position terms "
    f"({', '.join(t.pos_att_type)}) = {t.scale_factor}.",
)
m2.metric(
    "The paper's scale",
    "1 / √(3d)",
    help="He et al. (2020), eq. 4: three terms instead of one, so the sum "
    f"keeps the spread of one BERT score. BERT itself divides by √d = √{t.head_size}.",
)
m3.metric(
    "softmax(sum) vs the model's attention",
    f"{t.max_error:.1e}",
    help="The largest difference over this head's whole matrix: the three terms are the model's score, not a "
    "re-derivation from the paper.",
)

# ----------------------------------------------------------------------------- relative positions
st.header("Relative positions: the only positions in the encoder")
p = r.positions
left, right = st.columns(2)
with left:
    ui.show_figure(figures.positions_figure(r), "deberta-distances")
with right:
    ui.show_figure(figures.buckets_figure(r), "deberta-buckets")
st.caption(
    f"Left: the distance i − j of every pair of your sentence; hover for the row of the relative-position table "
    f"(`rel_embeddings`, {2 * p.max_relative_positions} rows) that the model in use reads for it, and the bucket "
    f"DeBERTa-v3 would use. Right: distance → bucket. **v1** (microsoft/deberta-base and this stand-in) reads row "
    f"k + (i − j), clipped at ±k with k = `max_relative_positions` = {p.max_relative_positions}, its own position "
    f"limit ({p.max_length} tokens): inside anything it can read, every distance has a row of its own. **v3** "
    f"(`position_buckets` = {D.v3_position_buckets}, computed with transformers' `make_log_bucket_position`) keeps "
    f"distances exact up to ±{D.v3_position_buckets // 2} and squeezes the rest, up to ±{D.v3_max_position - 1}, "
    "into logarithmic buckets."
)
st.info(
    r"**Where the code differs from the paper.** The paper writes the position → content term as "
    r"$K^c_j \cdot Q^r_{\delta(j,i)}$, the distance seen from the key. Microsoft's released code and transformers "
    r"both read $Q^r_{\delta(i,j)}$, the same row as content → position (they gather with the sign flipped, then "
    "transpose). This page computes what the model computes; indexing by δ(j, i) would not reproduce its scores.",
    icon=":material/difference:",
)

# ----------------------------------------------------------------------------- shift the sentence
st.header("Put words in front: what stays the same")
ui.widget(SPEC.prefix)
if not r.shifts:
    st.info(
        "Type a few words to put in front of your sentence: every word then moves right, and the first layer's "
        "scores show which model notices."
    )
else:
    ui.show_figure(figures.shift_figure(r.shifts), "deberta-shift", key="shift")
    cols = st.columns(len(r.shifts))
    for col, s in zip(cols, r.shifts):
        col.metric(
            f"{s.model}, first layer: largest change",
            f"{s.max_delta:.2e}",
            help=f"Over every head and every pair of pieces of your sentence (moved {s.offset} tokens right). "
            f"Model: {s.shown_as}.",
        )
        if s.pair is not None:
            a, b = s.pair
            col.caption(
                f"{md(s.pieces[a])} → {md(s.pieces[b])}, head {s.head}: {s.without[s.head, a, b]:.4f} alone, "
                f"{s.shifted[s.head, a, b]:.4f} behind the prefix."
            )
        if s.dropped:
            col.caption(
                f"Not compared: {', '.join(md(x) for x in s.dropped)} — the prefix made "
                f"{'it another token' if len(s.dropped) == 1 else 'them other tokens'} (in byte-level BPE a "
                "word inside a sentence carries its leading space)."
            )
    deb_shift = next((s for s in r.shifts if s.family == "deberta"), None)
    later = ""
    if deb_shift is not None and deb_shift.chosen_delta is not None:
        moved = deb_shift.chosen_delta > deberta.SAME_SCORE
        later = (
            f" At layer {r.layer} (chosen above) DeBERTa's scores "
            + (
                f"do change, by up to {deb_shift.chosen_delta:.2e}: by then every token's vector has mixed in its "
                "context, prefix included."
                if moved
                else f"stay the same too (largest change {deb_shift.chosen_delta:.2e})."
            )
            + " What stays the same in every layer is the row of the position table each pair reads: it "
            "depends on i − j only."
        )
    st.caption(
        "Every dot is one (query, key) pair of your sentence in one head of the first layer: its score alone (x) and "
        "behind the prefix (y). "
        + deberta.shift_story(r.shifts)
        + later
        + " Models: "
        + "; ".join(f"{s.model}, {s.shown_as}" for s in r.shifts)
        + "."
    )

# ----------------------------------------------------------------------------- the enhanced mask decoder
st.header("The enhanced mask decoder, and what this checkpoint does instead")
dec = r.decoder
st.markdown(
    "With relative positions only, a model cannot tell *where* in the sentence a word stands — and sometimes that "
    "matters: in the paper's example *a new **store** opened beside the new **mall***, both masked nouns have the "
    "same neighbours. So the paper adds absolute positions at the very end, in an **enhanced mask decoder (EMD)**: "
    "just before the masked-LM softmax, the encoder's last layer runs twice (the same weights) on the states that "
    "entered it, with queries that add an absolute position embedding, I = H + P — Microsoft's "
    "`EnhancedMaskDecoder`."
)
st.markdown(
    f"**What transformers runs** (and so this page): `DebertaForMaskedLM` puts its head (`{dec.head}`) straight on "
    "the last layer — there is no EMD. Read off the loaded model: absolute positions added to the input: "
    f"**{'yes' if dec.position_biased_input else 'no'}** (`position_biased_input`); an absolute position table at all: "
    f"**{'yes' if dec.position_table else 'no'}**; and transformers ignores "
    f"{', '.join(f'`{k}`' for k in dec.dropped_on_load)} in any checkpoint it loads "
    "(`_keys_to_ignore_on_load_unexpected`), so microsoft/deberta-base's trained absolute position table — the one its "
    "EMD used — is dropped: loaded through transformers, that checkpoint's head reads an input it was never "
    "trained on. The bundled stand-in was trained exactly as transformers runs it, head on the last layer."
)
ui.widget(SPEC.word, options=r.choosable, format_func=word)
pred = r.prediction
fill_left, fill_right = st.columns([3, 2])
with fill_left:
    ui.show_figure(figures.prediction_figure(pred), "deberta-fill-mask", height=80 + 36 * len(pred.first.ids))
with fill_right:
    st.metric(
        f"P({r.words[r.word]})",
        f"{pred.p_word:.2e}",
        help="The product over its pieces' probabilities (each guessed on its own, all masked at once).",
    )
    st.metric("Rank of the original first piece", f"{pred.rank:,}")
    st.caption(
        f"Blank: word {r.word}, {md(r.words[r.word])} = {len(pred.pieces)} piece(s), all [MASK] at once. Best fill: "
        f"{md(pred.best_fill)}. Model: {deb.shown_as}, head on the last layer, no absolute positions."
    )

# ----------------------------------------------------------------------------- the family
st.header("Its place in the family")
use, base = r.sizes
st.markdown(
    "**DeBERTa v2** (2021) brought a 128K SentencePiece vocabulary, shared position/content projections and the log "
    "buckets above. **DeBERTa-v3** keeps the disentangled attention but drops the masked LM: it is pre-trained "
    "ELECTRA-style, a small generator fills masked positions and DeBERTa learns to spot every replaced token "
    "(replaced-token detection), with *gradient-disentangled* embedding sharing between the two."
)
st.page_link(
    "pages/electra.py", label="ELECTRA: spot the fake — replaced-token detection, live", icon=":material/policy:"
)
s1, s2, s3 = st.columns(3)
s1.metric(
    "microsoft/deberta-base, all parameters",
    millions(base.total),
    delta="quoted: 139M",
    delta_color="off",
    delta_arrow="off",
    help="Counted live from its config (DebertaForMaskedLM on the meta device): token table "
    "+ backbone + masked-LM head.",
)
s2.metric(
    "…its backbone (no token table, no head)",
    millions(base.backbone),
    delta=f"published: {deberta.PUBLISHED['backbone_m']}M",
    delta_color="off",
    delta_arrow="off",
    help=f"Source: {deberta.PUBLISHED['source']}.",
)
s3.metric(
    "…its token table",
    millions(base.embeddings),
    delta=f"published vocabulary: {deberta.PUBLISHED['vocab_k']}K tokens",
    delta_color="off",
    delta_arrow="off",
)
st.caption(
    f"The model in use here, {use.name}: {use.total:,} parameters — token table {use.embeddings:,}, backbone "
    f"{use.backbone:,}, head {use.head:,}."
)

ui.takeaway(deberta.TAKEAWAY)
ui.share_link(SPEC)
