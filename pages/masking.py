"""Masking lab: static vs dynamic masking, the 80/10/10 rule, whole words and spans — and a real model filling
the blanks. All computation is app/lessons/masking.py (``run``); the figures are app/figures/masking.py."""

import streamlit as st

from app import ui
from app.lessons import masking as lab
from app.figures import masking as figs
from app.masking import KIND_NAMES
from app.core.text import count, md

SPEC = lab.SPEC

st.title("Masking lab")
ui.intro(
    "A masked language model learns by filling in blanks: about **15%** of the positions become *prediction "
    "targets*, and of those **80%** are shown as the mask token, **10%** as a random token and **10%** unchanged, so "
    "the model cannot rely on seeing the mask. *When* the mask is drawn separates **BERT**, which masked each "
    "sequence once at preprocessing and duplicated the data ×10 with different masks, from **RoBERTa**, which draws "
    "a fresh mask every time a sequence is fed (*dynamic masking*); *what* is masked separates single pieces from "
    "**whole words** and **SpanBERT**'s spans of whole words. Try them on your own sentence, then watch a real "
    "model fill the blanks."
)
values = ui.bind(SPEC)
left, right = st.columns([3, 1])
ui.widget(SPEC.text, left, height=90)
ui.widget(SPEC.variant, right)
c1, c2, c3, c4 = st.columns(4)
ui.widget(SPEC.strategy, c1, horizontal=False)
ui.widget(SPEC.unit, c1)
ui.widget(SPEC.epochs, c2)
ui.widget(SPEC.seed, c2)
ui.widget(SPEC.rate, c3)
ui.widget(SPEC.mask_frac, c3)
ui.widget(SPEC.random_frac, c3)
ui.widget(SPEC.span_p, c4, disabled=values["unit"] != "span")
ui.widget(SPEC.max_span, c4, disabled=values["unit"] != "span")

models = ui.models(values["variant"])
r = ui.run(lab.run, models, lab.Inputs.from_values(values))
right.caption(f"Tokenizer: {r.tokenizer_kind}")
c3.caption(f"Unchanged: **{lab.pct(r.cfg.unchanged_fraction)}** of the targets.")
ui.show_notes(r.notes)
s = r.sentence

# ----------------------------------------------------------------------------- the pieces
st.header("1 · What the model sees")
st.markdown(
    f"{count(len(s.ids), 'piece')}, {count(r.n_words, 'word')} (counted from 0; tokenizer of {r.shown_as}). {r.marker} "
    "Special tokens (★) are added by the tokenizer, or typed as one, and are **never** prediction targets."
)
ui.dataframe(
    {
        "": ["piece", "id", "word", "special"],
        **{
            str(i): [t, str(s.ids[i]), "" if s.word_of[i] is None else str(s.word_of[i]), "★" if s.special[i] else ""]
            for i, t in enumerate(s.pieces)
        },
    },
    hide_index=True,
    key="pieces",
)

# ----------------------------------------------------------------------------- epochs × positions
st.header("2 · Which positions are targets, epoch by epoch")
ui.set_value(SPEC.epoch, r.epoch)
ui.widget(SPEC.epoch, options=range(1, r.epochs + 1))
ui.show_figure(figs.key_figure(r, phone=ui.phone()), "masking-grid", key=True, alt=figs.describe(r))
g1, g2, g3 = st.columns([1, 1, 3])
g1.metric("Distinct masks", r.n_distinct, help="Different masked versions of the sentence over these epochs.")
g2.metric("Targets per epoch", f"{r.targets_per_epoch:.1f}", help=f"Of {r.n_maskable} maskable positions.")
if r.shares:
    g3.markdown(lab.split_text(r))
st.caption(
    "Rows are epochs, columns the pieces; a coloured cell is a target, labelled with what the model is fed "
    f"there (hover for the original and the masked copy). {lab.STRATEGY_READING[r.strategy]}"
)

# ----------------------------------------------------------------------------- coverage
st.header("3 · Coverage: how much of the sentence has been practised")
cov = r.coverage
cv1, cv2 = st.columns([3, 2])
with cv1:
    ui.show_figure(figs.coverage_figure(r), "masking-coverage", key="coverage")
with cv2:
    st.markdown(
        f"After **{r.epochs}** epoch(s), the share of positions that have been a target at least once "
        f"(mean of {cov.n_draws} seeded draws of this sentence; measured rate {cov.rate:.1%}):\n\n"
        + "\n".join(
            f"- {SPEC.strategy.shown(k)}: **{sim:.1%}** (1 − (1 − p)^{n} = {law:.1%})"
            for k, (sim, law, n) in r.coverage_now.items()
        )
    )
    st.caption(
        "Coverage grows with the number of *distinct* masks k, as 1 − (1 − p)^k: a static mask stays at p, "
        "×10 duplication stops at 1 − (1 − p)^10, dynamic masking keeps climbing."
    )
dm1, dm2 = st.columns([3, 2])
with dm1:
    ui.show_figure(figs.distinct_masks_figure(r), "masking-distinct")
with dm2:
    st.markdown(
        f"How many **distinct masks** each position was a target in, over {r.epochs} epoch(s), this seed. "
        "Positions never chosen: "
        + ", ".join(f"{lab.STRATEGY_SHORT[k]} **{n}**" for k, n in r.never.items())
        + f" of {r.n_maskable}."
    )
    st.caption(lab.spread_story(r.never, r.n_maskable, r.epochs))

# ----------------------------------------------------------------------------- words and spans
st.header("4 · Whole words and spans")
w1, w2 = st.columns([3, 2])
with w2:
    st.metric(
        "Words split by a mask",
        cov.split,
        help="Words with some but not all of their pieces chosen, over every simulated draw.",
    )
    st.caption(
        f"of {cov.chosen:,} words chosen across {cov.n_draws} draws × {lab.LAB.max_epochs} masks "
        f"({SPEC.unit.shown(r.unit)}); {r.multi_piece_words} word(s) in your text have more than one piece."
    )
    if r.unit == "token" and r.multi_piece_words:
        st.markdown(
            f"Token masking can hide one piece of {md(r.example_word)} and leave the others in view — an "
            "easy question. Whole-word and span masking never do: switch above and this count drops to **0**."
        )
    elif r.unit == "token":
        st.markdown(
            "Every word here is a single piece, so nothing can be split; add a long or rare word to see "
            "token masking split it."
        )
    else:
        st.markdown(
            f"{cov.split} split words: {SPEC.unit.shown(r.unit)} chooses whole words, so a word is either "
            "hidden entirely or not at all."
        )
with w1:
    if r.spans:
        sp = r.spans
        ui.show_figure(figs.span_length_figure(sp), "masking-span-lengths")
        st.markdown(
            f"Mean span length: expected **{sp.means['expected']:.2f}** words (Geometric(p = {r.cfg.span_p:g}) "
            f"truncated at {r.cfg.max_span}; the SpanBERT paper reports ≈ 3.8 for p = 0.2, max 10), drawn "
            f"**{sp.means['drawn']:.2f}** over {sum(sp.drawn):,} samples, placed in your sentence "
            f"**{sp.means['placed']:.2f}**."
        )
        st.caption(lab.span_story(sp.means))
    else:
        st.info(
            "Choose **Span (SpanBERT)** under *What is masked?* to see the span lengths.", icon=":material/straighten:"
        )

# ----------------------------------------------------------------------------- live predictions
st.header(f"5 · {r.label} fills the blanks of epoch {r.epoch}")
if not r.epoch_targets:
    st.info(
        f"Epoch {r.epoch} has no targets in this sentence (at {lab.pct(r.cfg.mlm_probability)}, short sentences "
        "sometimes draw none). Pick another epoch or seed, or raise the rate.",
        icon=":material/casino:",
    )
elif r.predictions:
    ui.widget(SPEC.topk)
    p1, p2 = st.columns([3, 2])
    with p1:
        ui.show_figure(figs.predictions_figure(r, phone=ui.phone()), "masking-predictions")
    with p2:
        st.metric(
            "Original token ranked first", f"{sum(p.rank_original == 1 for p in r.predictions)} of {len(r.predictions)}"
        )
        st.caption(
            f"Guesses by {r.shown_as}. The model sees only the corrupted row and must recover the original at "
            "*every* target — the random and unchanged ones included, so it cannot trust any token blindly."
        )
    ui.dataframe(
        [
            {
                "position": p.position,
                "original": p.original,
                "fed as": p.fed,
                "kind": KIND_NAMES[p.kind],
                "top guess": p.guesses.pieces[0],
                "p(top guess)": p.guesses.probabilities[0],
                "p(original)": p.p_original,
                "rank of original": p.rank_original,
                "guesses": " · ".join(f"{w} {q:.3g}" for w, q in p.guesses.raw),
            }
            for p in r.predictions
        ],
        hide_index=True,
        key="predictions",
        column_config={
            "p(top guess)": st.column_config.NumberColumn(format="%.3f"),
            "p(original)": st.column_config.NumberColumn(format="%.4f"),
        },
    )

# ----------------------------------------------------------------------------- SpanBERT's second half: SBO
st.header("6 · SpanBERT's span-boundary objective")
st.markdown(
    "SpanBERT's other change: besides the masked-LM loss, every token of a masked span is also predicted from "
    "only the encoder's outputs at the span's two **boundary** tokens, $x_{s-1}$ just before it and $x_{e+1}$ "
    "just after it, and its **relative position** $p_{i-s+1}$ in the span — so the boundaries must learn to carry "
    "the whole span."
)
if r.sbo is None:
    st.info(
        "Choose **Span (SpanBERT)** under *What is masked?* (with an epoch that masks a span) to see what the "
        "span-boundary objective predicts each token from.",
        icon=":material/join_inner:",
    )
else:
    ui.set_value(SPEC.span, r.sbo.span.number)
    ui.widget(SPEC.span, options=range(1, r.sbo.n_spans + 1))
    ui.show_figure(figs.sbo_figure(r), "masking-sbo", key="sbo")
    st.markdown(lab.sbo_text(r.sbo))
    st.caption(
        "Rows: the span's tokens, one prediction each; columns: the positions around the span, with what the "
        "encoder is fed there. Blue: the two boundary outputs SBO reads; orange: the token it predicts, with "
        "its relative position p; pale: the span's other tokens and the context, which this prediction does "
        "not use. At the right: the lesson model's masked-LM guess at the same token. Hover for the original."
    )
    st.markdown(lab.sbo_model_text(r.sbo, r.label))

ui.takeaway(lab.takeaway(r))
ui.claim_line("masking")
ui.share_link(SPEC)
