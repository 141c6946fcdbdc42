"""XLNet: permutation language modelling. The factorization order, the content and query streams as
attention masks, the real model's predictions under them, a masked LM beside it, and a check read from
the attentions the model used. All computation is app/lessons/xlnet.py (``run``); the figures are
app/figures/xlnet.py."""

import streamlit as st

from app import ui
from app.lessons import xlnet
from app.figures import xlnet as figures
from app.core.text import count, md

SPEC = xlnet.SPEC


def percent(p: float) -> str:
    return f"{100 * p:.2f}%" if p >= 0.0001 else f"{100 * p:.1e}%"


def guesses(top) -> str:
    return " · ".join(f"{piece} {percent(q)}" for piece, q in top)


st.title("XLNet: permutation language modelling")
ui.intro(
    "BERT hides words behind `[MASK]` and guesses them all at once. **XLNet** never corrupts its input. "
    "It picks a *factorization order* — a shuffle of the positions — and predicts the tokens one after "
    "another in that order, **while every token stays in its place**. Which token may look at which is "
    "decided entirely by two attention masks:\n"
    "- the **content stream** of a position sees the tokens earlier in the order *and itself*;\n"
    "- the **query stream** of a target — the one that makes the prediction — sees the tokens earlier in "
    "the order but **never its own content**: it knows *where* it is, not *what* it is.\n\n"
    "To keep training cheap XLNet predicts only the **last 1/K of the order** (partial prediction, K = 6 in "
    "XLNet base); the first part is context that everyone sees. In transformers these masks are `perm_mask` "
    "(`perm_mask[i, j] = 1` means *i may **not** attend to j*) and `target_mapping` (row k picks the position "
    "of the k-th prediction)."
)
values = ui.bind(SPEC)
ui.widget(SPEC.text, height=80)
st.header("1 · The pieces and the order")
pieces_slot = st.container()
c1, c2, c3 = st.columns([1.3, 1, 1])
ui.widget(SPEC.order, c1)
ui.widget(SPEC.seed, c1, disabled=values["order"] != "random")
ui.widget(SPEC.typed, c1, disabled=values["order"] != "typed", placeholder="e.g. 4 3 2 1 0 …")
ui.widget(SPEC.split, c2)
ui.widget(SPEC.k, c2, disabled=values["split"] != "k")
ui.widget(SPEC.n_targets, c2, disabled=values["split"] != "count")
ui.widget(SPEC.specials, c3)
ui.widget(SPEC.top_k, c3)

models = ui.models(*xlnet.MODELS)
r = ui.run(xlnet.run, models, xlnet.Inputs.from_values(values))
p, masks, n = r.pieces, r.masks, r.pieces.n_content
with pieces_slot:
    ui.show_notes(r.notes)
    st.markdown(
        f"{r.xlnet_label}'s SentencePiece splits the text into **{count(n, 'content piece')}** (`▁` marks the start "
        "of a word) and appends `<sep> <cls>` **at the end** (BERT puts `[CLS]` first). The numbers are the "
        "positions you use to type an order (counted from 0)."
    )
    st.code(
        "   ".join(f"{i}:{piece}" for i, piece in enumerate(p.pieces[:n])) + "   |   " + "  ".join(p.pieces[n:]),
        language=None,
        wrap_lines=True,
    )
if r.order_note:
    ui.show_notes([r.order_note])

n_context = n - r.n_targets
how_many = f"ceil({n} / {values['k']})" if values["split"] == "k" else "your count"
st.markdown(
    f"**Order:** {' → '.join(str(t) for t in masks.order)}.  \n"
    + (
        f"**Context** (steps 0–{n_context - 1}, seen by everyone, never predicted): "
        f"{' '.join(md(p.pieces[t]) for t in masks.context)}.  \n"
        if n_context
        else "**Context:** none — every piece is predicted.  \n"
    )
    + f"**Predicted** ({r.n_targets} = {how_many}), in this order: "
    f"{' → '.join(md(p.pieces[t]) for t in masks.targets)}."
)
if r.free:
    st.warning(
        f"{', '.join(md(p.pieces[t]) for t in r.free)} comes first among the targets with nothing before it "
        "and `<sep> <cls>` hidden: **its query row is fully blocked**. XLNet subtracts 1e30 from every blocked "
        "score, so that softmax becomes *uniform over every position — its own content included*: a leak, not "
        "a prediction. This page marks it **no context** and shows no guess for it (the check below measures the "
        "uniform row).",
        icon=":material/warning:",
    )
ui.show_figure(figures.key_figure(r, phone=ui.phone()), "xlnet-order", key=True, alt=figures.describe(r))
st.caption(
    "Each row is one step of the order. Orange: the position at that step — for a target, its position "
    "is known but its content is hidden. Blue: what it may see. Hover a cell for the row in words."
)

# ----------------------------------------------------------------------------- the masks
st.header("2 · The two streams as masks")
st.markdown(
    "The same order, written as the masks the model receives. Dark = **1 = blocked** (perm_mask's convention), "
    "green = may attend. The content and query masks differ **only on the diagonal** of the targets: the "
    "content stream sees its own token, the query stream does not. The query stream is computed only for the "
    "targets, so its other rows are empty; `target_mapping` tells the model which positions those are."
)
ui.show_figure(figures.streams_figure(r), "xlnet-stream-masks", key="streams")

# ----------------------------------------------------------------------------- predictions
st.header("3 · Predictions under this order, and a masked LM beside them")
top_k = values["top_k"]
left, right = st.columns(2)
with left:
    st.markdown(f"**{r.xlnet_label}** (`XLNetLMHeadModel`, perm_mask + target_mapping), in the order of prediction")
    st.dataframe(
        [
            {
                "step": q.step,
                "target": q.piece,
                "sees": "nothing" if q.context_free else f"{q.sees} positions",
                f"top-{top_k}": "— no context: not predicted (uniform attention would leak the token)"
                if q.context_free
                else guesses(q.top),
                "p(actual)": q.actual,
                "rank": q.rank,
            }
            for q in r.predictions
        ],
        hide_index=True,
        width="stretch",
        column_config={
            "p(actual)": st.column_config.NumberColumn(format="%.4f"),
            f"top-{top_k}": st.column_config.TextColumn(width="large"),
        },
    )
with right:
    st.markdown(f"**{r.mlm_label}** (masked LM): the same words masked **all at once**, each guessed independently")
    st.dataframe(
        [
            {
                "target": q.piece,
                "masked": " ".join(q.mlm_masked) or "—",
                f"top-{top_k}": "  |  ".join(f"{m}: {guesses(top)}" for m, top in zip(q.mlm_masked, q.mlm_top))
                or "no WordPiece covers these characters",
                "p(actual)": q.mlm_actual,
            }
            for q in r.predictions
        ],
        hide_index=True,
        width="stretch",
        column_config={
            "p(actual)": st.column_config.NumberColumn(format="%.4f"),
            f"top-{top_k}": st.column_config.TextColumn(width="large"),
        },
    )
st.caption(
    f"The tokenizers differ (SentencePiece, cased vs WordPiece, uncased), so the two are aligned **by characters**: "
    f"every {r.mlm_label} piece sharing a character with a target piece is replaced by `[MASK]` — "
    f"{r.n_mlm_masked} in all, in one input — and each is predicted from the unmasked rest. Where a target spans "
    "several WordPieces, each is listed with its own guesses and p(actual) is the smallest. XLNet's later targets see "
    "the earlier targets' real tokens; the masked LM's guesses cannot see one another — BERT's "
    "independence assumption. "
    f"XLNet: {r.xlnet}; masked LM: {r.mlm}."
)

# ----------------------------------------------------------------------------- the check
st.header("4 · Check: the attention the model used is zero where the masks block")
if r.worst_blocked == 0.0:
    st.success(
        f"Read from the model (`output_attentions=True`: one (content, query) pair per layer): in all {r.n_layers} "
        f"layers × {r.n_heads} heads, the attention probability on every blocked cell is **exactly 0** — "
        f"content stream: all {len(p.ids)} rows; query stream: the {r.query_rows} target row(s) that see "
        f"something. The allowed cells carry all the mass (at least {r.least_visible_mass:.6f} per row).",
        icon=":material/check_circle:",
    )
else:
    st.error(
        f"Some blocked cell has attention {r.worst_blocked:.3g}: the masks were not respected.", icon=":material/error:"
    )
if r.free:
    st.warning(
        f"The context-free target's query row: every probability is 1/{len(p.ids)} "
        f"(largest distance from uniform {r.uniform_distance:.2g}), its own position included — which is why "
        "it is not shown as a prediction."
    )
st.dataframe(
    list(r.checks),
    hide_index=True,
    width="stretch",
    column_config={
        "max prob on a blocked cell": st.column_config.NumberColumn(format="%.3g"),
        "min prob mass on visible cells": st.column_config.NumberColumn(format="%.6f"),
        "max distance from uniform": st.column_config.NumberColumn(format="%.3g"),
    },
)
a, b = st.columns(2)
ui.widget(SPEC.stream, a)
ui.set_value(SPEC.layer, r.layer)
ui.widget(
    SPEC.layer, b, options=range(r.n_layers + 1), format_func=lambda v: f"last ({r.n_layers})" if v == 0 else str(v)
)
ui.show_figure(figures.attention_figure(r), "xlnet-attention", key="attention")
st.caption(
    "× marks the cells the mask blocks; hover shows each probability. Query rows exist only for the targets. "
    "Layers count from 1."
)

ui.takeaway(xlnet.takeaway(r))
ui.share_link(SPEC)
