"""Masking lab: static vs dynamic masking, the 80/10/10 rule, whole words and spans — and a real model
filling the blanks. All computation is in app/masking.py; figures in app/figures/masking.py."""

from collections import Counter

import streamlit as st
import torch

from app import masking, state, ui
from app.figures import masking as figs
from app.models import catalogue

DEFAULT_TEXT = "The little girl found a red ball in the park. She kicked it over the puddles to the wobbly treehouse."
SPEC = (
    state.Param("text", "str", DEFAULT_TEXT, max_len=1000),
    state.Param("variant", "choice", "bert", choices=tuple(catalogue.MASKED_LMS)),
    state.Param("strategy", "choice", "static10", choices=masking.STRATEGIES),
    state.Param("unit", "choice", "token", choices=masking.UNITS),
    state.Param("epochs", "int", 20, lo=1, hi=masking.LAB.max_epochs),
    state.Param("rate", "float", 0.15, lo=0.01, hi=0.95),
    state.Param("mask_frac", "float", 0.8, lo=0.0, hi=1.0),
    state.Param("random_frac", "float", 0.1, lo=0.0, hi=1.0),
    state.Param("span_p", "float", 0.2, lo=0.05, hi=1.0),
    state.Param("max_span", "int", 10, lo=1, hi=10),
    state.Param("seed", "int", 0, lo=0, hi=2**31 - 1),
    state.Param("epoch", "int", 1, lo=1, hi=masking.LAB.max_epochs),
    state.Param("topk", "int", 5, lo=1, hi=10),
)
ui.bind(SPEC)
MARKERS = {
    "bert": "WordPiece: `##` marks a piece that continues the word before it.",
    "distilbert": "WordPiece: `##` marks a piece that continues the word before it.",
    "electra": "WordPiece: `##` marks a piece that continues the word before it.",
    "roberta": "Byte-level BPE: `Ġ` stands for the space before a word; characters outside the vocabulary are split into bytes.",
    "albert": "SentencePiece: `▁` marks the start of a word.",
}


# ----------------------------------------------------------------------------- cached per-input work


@st.cache_data(max_entries=64, show_spinner=False)
def encoded(_loaded, identity, text: str) -> masking.Encoded:
    return masking.encode(_loaded.tokenizer, text)


@st.cache_resource(max_entries=16, show_spinner=False)
def random_ids(_loaded, identity) -> torch.Tensor:
    return masking.replacement_ids(_loaded.tokenizer)


@st.cache_data(max_entries=128, show_spinner=False)
def plan(_loaded, identity, text, strategy, unit, epochs, cfg: tuple, seed) -> dict:
    """The epoch plan as plain lists (what the grid and the predictions need)."""
    enc = encoded(_loaded, identity, text)
    tok = _loaded.tokenizer
    p = masking.epoch_plan(enc, strategy, unit, epochs, masking.MaskingConfig(*cfg), seed, tok.mask_token_id,
                           random_ids(_loaded, identity))
    times, distinct = masking.times_targeted(p)
    return {
        "copies": list(p.copies), "kinds": p.kinds.tolist(), "targets": p.targets.tolist(),
        "corrupted": p.corrupted.tolist(), "shown": [tok.convert_ids_to_tokens(row) for row in p.corrupted.tolist()],
        "times": times.tolist(), "distinct": distinct.tolist(),
        "split": masking.split_words(p.targets, enc.word_ids),
    }


@st.cache_data(max_entries=64, show_spinner=False)
def coverage(_loaded, identity, text, unit, rate, span_p, max_span, seed) -> dict:
    """Coverage curves over many draws for all three strategies, to the lab's maximum of epochs."""
    enc = encoded(_loaded, identity, text)
    cfg = masking.MaskingConfig(mlm_probability=rate, span_p=span_p, max_span=max_span)
    sim = masking.simulate(enc, unit, cfg, seed)
    E = masking.LAB.max_epochs
    placed = Counter(sim.span_lengths)
    return {
        "n_draws": sim.targets.shape[0],
        "simulated": {s: masking.coverage_curve(sim, s, E) for s in masking.STRATEGIES},
        "analytic": {s: masking.analytic_coverage(rate, s, E) for s in masking.STRATEGIES},
        "split": masking.split_words(sim.targets, enc.word_ids),
        "placed": [placed.get(k, 0) for k in range(1, max_span + 1)],
        "rate": float(sim.targets[:, :, sim.maskable].float().mean()) if sim.maskable.any() else 0.0,
    }


@st.cache_data(max_entries=32, show_spinner=False)
def drawn_span_lengths(span_p, max_span, seed) -> list[int]:
    lengths = masking.sample_span_lengths(masking.LAB.n_span_samples, span_p, max_span, masking.generator(seed))
    return torch.bincount(lengths, minlength=max_span + 1)[1:].tolist()


@st.cache_data(max_entries=256, show_spinner=False)
def predictions(_loaded, identity, corrupted: tuple, targets: tuple, original: tuple, kinds: tuple, k: int) -> list:
    return masking.fill_masks(_loaded.model, torch.tensor(corrupted), torch.tensor(targets), torch.tensor(original),
                              torch.tensor(kinds), k)


def pct(x: float) -> str:
    return f"{x:.0%}" if abs(x * 100 - round(x * 100)) < 1e-9 else f"{x:.1%}"


# ----------------------------------------------------------------------------- page

st.title("Masking lab")
st.markdown(
    "A masked language model learns by filling in blanks: about **15%** of the positions become *prediction "
    "targets*, and of those **80%** are shown as the mask token, **10%** as a random token and **10%** unchanged, "
    "so the model cannot rely on seeing the mask. *When* the mask is drawn is what separates the variants. "
    "**BERT** masked each sequence once, at preprocessing, and duplicated the data ×10 with different masks — over "
    "40 epochs each mask is seen 4 times. **RoBERTa** draws a fresh mask every time a sequence is fed "
    "(*dynamic masking*). **SpanBERT** masks contiguous spans of whole words; **whole-word masking** never masks "
    "half a word. Try them on your own sentence, then watch a real model fill the blanks."
)

left, right = st.columns([3, 1])
text = left.text_area("Your text", key="text", max_chars=1000, height=90)
variant = right.selectbox("Model (a masked LM)", catalogue.MASKED_LMS, key="variant",
                          format_func=lambda k: catalogue.get(k).label)
right.caption(f"Tokenizer: {catalogue.get(variant).tokenizer_kind}")

c1, c2, c3, c4 = st.columns(4)
strategy = c1.radio("When is the mask drawn?", masking.STRATEGIES, key="strategy",
                    format_func=masking.STRATEGY_LABELS.get)
unit = c1.radio("What is masked?", masking.UNITS, key="unit", format_func=masking.UNIT_LABELS.get, horizontal=True)
epochs = c2.slider("Epochs", 1, masking.LAB.max_epochs, key="epochs")
seed = int(c2.number_input("Seed", 0, 2**31 - 1, step=1, key="seed"))
rate = c3.slider("Masking rate (mlm_probability)", 0.01, 0.95, step=0.01, key="rate", format="percent")
mask_frac = c3.slider("Of the targets: mask token", 0.0, 1.0, step=0.05, key="mask_frac", format="percent")
random_frac = c3.slider("Of the targets: random token", 0.0, 1.0, step=0.05, key="random_frac", format="percent")
span_p = c4.slider("Span length p (geometric)", 0.05, 1.0, step=0.05, key="span_p", disabled=unit != "span",
                   help="SpanBERT draws span lengths in words from Geometric(p) on 1, 2, ..., truncated at the maximum.")
max_span = c4.slider("Longest span (words)", 1, 10, key="max_span", disabled=unit != "span")

if mask_frac + random_frac > 1 + 1e-9:
    st.warning(
        f"Mask {pct(mask_frac)} + random {pct(random_frac)} = {pct(mask_frac + random_frac)} of the targets, more than "
        f"100%: that makes no sense. Using random = {pct(1 - mask_frac)} (and 0% unchanged) until you lower one of them.",
        icon=":material/warning:")
    random_frac = max(0.0, 1.0 - mask_frac)
c3.caption(f"Unchanged: **{pct(max(0.0, 1 - mask_frac - random_frac))}** of the targets.")
cfg = masking.MaskingConfig(rate, mask_frac, random_frac, span_p, max_span)
cfg_key = (cfg.mlm_probability, cfg.mask_fraction, cfg.random_fraction, cfg.span_p, cfg.max_span)

if not text.strip():
    st.info("Type a sentence above — the lab needs some text to mask. "
            f"For example: *{DEFAULT_TEXT}*", icon=":material/edit:")
    ui.share_link(SPEC)
    st.stop()
odd = masking.unusual_characters(text)
if odd:
    kinds = ", ".join(f"{k} ({ui.escape(v[:12])})" for k, v in odd.items())
    st.warning(f"Your text has {kinds}. The bundled models learned simple English only: WordPiece turns such "
               "characters into `[UNK]`, byte-level BPE splits them into byte pieces, so the model has little "
               "to go on there. Masking still works; the predictions will be poor.", icon=":material/translate:")

loaded = ui.model(variant)
identity = loaded.identity
enc = encoded(loaded, identity, text)
if enc.truncated:
    why = "the model's limit" if loaded.tokenizer.model_max_length <= masking.LAB.max_tokens else "the lab's cap"
    st.warning(f"Your text is {enc.n_tokens_full} tokens long; the lab uses the first **{enc.cap}** "
               f"({why}) and drops the rest.", icon=":material/content_cut:")
if enc.n_unknown:
    st.info(f"{enc.n_unknown} piece(s) are the unknown token `{loaded.tokenizer.unk_token}`: "
            "the vocabulary has nothing for them.", icon=":material/help:")
if enc.n_typed_special:
    st.info(f"Your text contains {enc.n_typed_special} of the model's own special tokens (such as "
            f"`{loaded.tokenizer.mask_token}`): they stay special tokens and are never prediction targets.",
            icon=":material/label:")
n_maskable = sum(not s for s in enc.special)
if n_maskable == 0:
    st.info("After tokenization there is nothing to mask (only special tokens). Type a few words.", icon=":material/edit:")
    ui.share_link(SPEC)
    st.stop()

# ----------------------------------------------------------------------------- the pieces
st.subheader("1 · What the model sees")
st.markdown(f"{len(enc.input_ids)} pieces, {enc.n_words} words. {MARKERS.get(loaded.variant.family, '')} "
            "Special tokens (★) are added by the tokenizer and are **never** prediction targets.")
st.dataframe(
    {
        "": ["piece", "id", "word", "special"],
        **{str(i): [t, str(enc.input_ids[i]), "" if enc.word_ids[i] is None else str(enc.word_ids[i]),
                    "★" if enc.special[i] else ""] for i, t in enumerate(enc.tokens)},
    },
    hide_index=True, key="pieces",
)

# ----------------------------------------------------------------------------- epochs × positions
st.subheader("2 · Which positions are targets, epoch by epoch")
if st.session_state.get("epoch", 1) > epochs:
    st.session_state["epoch"] = epochs
epoch = st.slider("Epoch to inspect (outlined below; the model fills its blanks in section 5)", 1,
                  max(epochs, 2), key="epoch", disabled=epochs == 1)
epoch = min(epoch, epochs)
pl = plan(loaded, identity, text, strategy, unit, epochs, cfg_key, seed)
ui.show_figure(figs.epoch_grid_figure(list(enc.tokens), list(enc.special), pl["kinds"], pl["shown"], pl["copies"],
                                      highlight=epoch - 1, title=masking.STRATEGY_LABELS[strategy]), "masking-grid")
n_distinct = len(set(pl["copies"]))
flat = [k for row in pl["kinds"] for k, sp in zip(row, enc.special) if not sp]  # kinds at maskable positions
n_targets = sum(k != masking.KEEP for k in flat)
g1, g2, g3, g4 = st.columns([1, 1, 2, 3])
g1.metric("Distinct masks", n_distinct, help="Different masked versions of the sentence over these epochs.")
g2.metric("Targets per epoch", f"{n_targets / epochs:.1f}", help=f"Of {n_maskable} maskable positions.")
with g3:
    if n_targets:
        st.markdown(
            "Of the targets: "
            f"**{sum(k == masking.MASKED for k in flat) / n_targets:.0%}** mask, "
            f"**{sum(k == masking.RANDOM for k in flat) / n_targets:.0%}** random, "
            f"**{sum(k == masking.UNCHANGED for k in flat) / n_targets:.0%}** unchanged "
            f"(set: {pct(mask_frac)} / {pct(random_frac)} / {pct(max(0.0, 1 - mask_frac - random_frac))}).")
with g4:
    takeaway = {
        "static": "**Takeaway:** one mask, fixed at preprocessing: every epoch asks the same questions, and the "
                  "other positions are never practised.",
        "static10": "**Takeaway:** BERT's 10 copies: the rows repeat every 10 epochs, so after epoch 10 the model "
                    "sees nothing new.",
        "dynamic": "**Takeaway:** RoBERTa: every row is a new mask, so over many epochs nearly every position "
                   "becomes a question.",
    }[strategy]
    st.markdown(takeaway)

# ----------------------------------------------------------------------------- coverage
st.subheader("3 · Coverage: how much of the sentence has been practised")
cov = coverage(loaded, identity, text, unit, rate, span_p, max_span, seed)
cv1, cv2 = st.columns([3, 2])
with cv1:
    ui.show_figure(figs.coverage_figure(cov["simulated"], cov["analytic"], cov["n_draws"], mark_epoch=epochs),
                   "masking-coverage")
with cv2:
    at = {s: cov["simulated"][s][epochs - 1] for s in masking.STRATEGIES}
    st.markdown(
        f"After **{epochs}** epoch(s), the share of positions that have been a target at least once "
        f"(mean of {cov['n_draws']} seeded draws of this sentence; measured rate {cov['rate']:.1%}):\n\n"
        + "\n".join(f"- {masking.STRATEGY_LABELS[s]}: **{at[s]:.1%}** "
                    f"(1 − (1 − p)^{masking.distinct_copies(s, epochs)} = {cov['analytic'][s][epochs - 1]:.1%})"
                    for s in masking.STRATEGIES))
    st.markdown("**Takeaway:** coverage grows with the number of *distinct* masks k, as 1 − (1 − p)^k. "
                "A static mask stays at p; ×10 duplication stops at 1 − (1 − p)^10; dynamic masking keeps climbing.")

plans = {s: plan(loaded, identity, text, s, unit, epochs, cfg_key, seed) for s in masking.STRATEGIES}
dm1, dm2 = st.columns([3, 2])
with dm1:
    ui.show_figure(figs.distinct_masks_figure(list(enc.tokens), list(enc.special),
                                              {s: p["distinct"] for s, p in plans.items()},
                                              {s: p["times"] for s, p in plans.items()}, epochs), "masking-distinct")
with dm2:
    never = {s: sum(1 for d, sp in zip(p["distinct"], enc.special) if not sp and d == 0) for s, p in plans.items()}
    st.markdown(
        f"How many **distinct masks** each position was a target in, over {epochs} epoch(s), this seed. "
        "Positions never chosen: " + ", ".join(f"{masking.STRATEGY_LABELS[s].split(' (')[0]} **{n}**"
                                                for s, n in never.items()) + f" of {n_maskable}.")
    st.markdown("**Takeaway:** with a static mask a position is either always a question or never; "
                "dynamic masking spreads the questions over the whole sentence.")

# ----------------------------------------------------------------------------- words and spans
st.subheader("4 · Whole words and spans")
split_sim, words_sim = cov["split"]
w1, w2 = st.columns([3, 2])
pieces_of = Counter(w for w in enc.word_ids if w is not None)
multi = sum(1 for c in pieces_of.values() if c > 1)
example = next((" ".join(t for t, w in zip(enc.tokens, enc.word_ids) if w == word)
                for word, c in pieces_of.items() if c > 1), "").replace("`", "'")  # shown in a code span
with w2:
    st.metric("Words split by a mask", split_sim,
              help="Words with some but not all of their pieces chosen, over every simulated draw.")
    st.caption(f"of {words_sim:,} words chosen across {cov['n_draws']} draws × {masking.LAB.max_epochs} masks "
               f"({masking.UNIT_LABELS[unit]}); {multi} word(s) in your text have more than one piece.")
    if unit == "token":
        st.markdown(f"**Takeaway:** token masking can hide one piece of `{example}` and leave the others "
                    "in view — an easy question. Whole-word and span masking never do: switch above and this count "
                    "drops to **0**." if multi else "**Takeaway:** every word here is a single piece, so nothing can be split; "
                    "add a long or rare word to see token masking split it.")
    else:
        st.markdown(f"**Takeaway:** {split_sim} split words — {masking.UNIT_LABELS[unit].split(' (')[0].lower()} "
                    "masking chooses whole words, so a word is either hidden entirely or not at all.")
with w1:
    if unit == "span":
        drawn = drawn_span_lengths(span_p, max_span, seed)
        n_drawn = max(1, sum(drawn))
        drawn_mean = sum(k * c for k, c in enumerate(drawn, 1)) / n_drawn
        placed_mean = sum(k * c for k, c in enumerate(cov["placed"], 1)) / max(1, sum(cov["placed"]))
        means = {"expected": masking.clipped_geometric_mean(span_p, max_span), "drawn": drawn_mean,
                 "placed": placed_mean}
        ui.show_figure(figs.span_length_figure(masking.span_length_pmf(span_p, max_span), drawn, cov["placed"], means),
                       "masking-span-lengths")
        st.markdown(
            f"Mean span length: expected **{means['expected']:.2f}** words (Geometric(p = {span_p:g}) truncated at "
            f"{max_span}; the SpanBERT paper reports ≈ 3.8 for p = 0.2, max 10), drawn **{drawn_mean:.2f}** over "
            f"{n_drawn:,} samples, placed in your sentence **{placed_mean:.2f}**.")
        st.markdown("**Takeaway:** spans are drawn long, but the 15% budget of a short sentence cuts them: on a "
                    "long text the placed spans approach the drawn ones.")
    else:
        st.info("Choose **Span (SpanBERT)** under *What is masked?* to see the span lengths.", icon=":material/straighten:")

# ----------------------------------------------------------------------------- live predictions
st.subheader(f"5 · {loaded.variant.label} fills the blanks of epoch {epoch}")
row = epoch - 1
tgt = pl["targets"][row]
if not any(tgt):
    st.info(f"Epoch {epoch} has no targets in this sentence (at {pct(rate)}, short sentences sometimes draw "
            "none). Pick another epoch or seed, or raise the rate.", icon=":material/casino:")
else:
    topk = st.slider("Guesses per blank (top-k)", 1, 10, key="topk")
    with ui.timed_forward():
        preds = predictions(loaded, identity, tuple(pl["corrupted"][row]), tuple(tgt), enc.input_ids,
                            tuple(pl["kinds"][row]), topk)
    tok = loaded.tokenizer
    labels, guesses, probs, hits, table = [], [], [], [], []
    for p in preds:
        shown = tok.convert_ids_to_tokens(p.shown_id)
        original = tok.convert_ids_to_tokens(p.original_id)
        words = tok.convert_ids_to_tokens(list(p.top_ids))
        labels.append(f"{p.position}·{figs.esc(original)} (fed {figs.esc(shown)})")
        guesses.append(words)
        probs.append(list(p.top_probs))
        hits.append([i == p.original_id for i in p.top_ids])
        table.append({"position": p.position, "original": original, "fed as": shown,
                      "kind": masking.KIND_NAMES[p.kind], "top guess": words[0], "p(top guess)": p.top_probs[0],
                      "p(original)": p.p_original, "rank of original": p.rank_original,
                      "guesses": " · ".join(f"{w} {q:.3g}" for w, q in zip(words, p.top_probs))})
    p1, p2 = st.columns([3, 2])
    with p1:
        ui.show_figure(figs.predictions_figure(labels, guesses, probs, hits), "masking-predictions")
    with p2:
        right_top1 = sum(r["rank of original"] == 1 for r in table)
        st.metric("Original token ranked first", f"{right_top1} of {len(table)}")
        st.markdown("**Takeaway:** the model sees only the corrupted row and must recover the original at *every* "
                    "target — including the random and unchanged ones, which is why it cannot trust any token blindly.")
        if loaded.is_bundled:
            st.caption("The bundled models are tiny and trained on children's stories: expect simple, common guesses.")
    st.dataframe(table, hide_index=True, key="predictions",
                 column_config={"p(top guess)": st.column_config.NumberColumn(format="%.3f"),
                                "p(original)": st.column_config.NumberColumn(format="%.4f")})

ui.share_link(SPEC)
