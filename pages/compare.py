"""Variants side by side: every catalogue variant on one sentence — tokens, guesses, ELECTRA's view, cost.
All computation is app/lessons/compare.py (``run``); the figures are app/figures/compare.py."""

import streamlit as st

from app import ui
from app.lessons import compare
from app import measure
from app.figures import compare as figures
from app.core.text import md, visible

SPEC = compare.SPEC

st.title("Variants side by side")
ui.intro(
    "Every variant in the catalogue reads **your** sentence at once. You will see how each tokenizer cuts it "
    "(WordPiece `##`, byte-level BPE `Ġ`, SentencePiece `▁`), what each masked language model guesses for a word you "
    "hide, what ELECTRA's discriminator thinks of each token, what XLNet predicts without any mask token — and what "
    "each model **costs on this machine**: parameters, memory, load time and forward latency, measured here rather "
    "than quoted from papers."
)
values = ui.bind(SPEC)
# a new text (typed here or on another page): its word index meant a word of the old one
values["new_text"] = ui.text_changed(SPEC.word, values["text"], compare.DEFAULT_TEXT)
ui.widget(SPEC.text, height=80)
left, right = st.columns([2, 1])
ui.widget(SPEC.top_k, right)

models = {k: ui.try_model(k) for k in compare.MODELS}  # a variant that cannot be loaded is left out, with a note
r = ui.run(compare.run, models, compare.Inputs.from_values(values, ui.warm_progress(), ui.other_pages()))
ui.set_value(SPEC.word, r.word)
ui.widget(SPEC.word, left, options=range(len(r.words)), format_func=lambda i: f"{i} · {visible(r.words[i])}")
ui.show_notes(r.notes)
chosen = r.words[r.word]

# ----------------------------------------------------------------------------- 1. tokens
st.header("1 · How each tokenizer cuts it")
start, stop = r.window
ui.show_figure(
    figures.token_grid_figure(r, phone=ui.phone()), "compare-tokens", key="tokens", alt=figures.describe_tokens(r)
)
if stop - start < len(r.words):
    st.caption(
        f"Showing words {start}–{stop - 1} of {len(r.words)} (counted from 0), around the masked word; the "
        "token counts in the row labels are for the whole text."
    )
st.caption(
    "A cell lists the pieces a word became; its colour says how many. Hover for the exact pieces. The same "
    "word can be one piece for one model and several for another: that is why 'mask one word' means "
    "different things to different models."
)

# ----------------------------------------------------------------------------- 2. guesses
st.header(f"2 · Guessing the hidden word: {md(chosen)}")
if r.masking_note:
    st.info(r.masking_note)
if r.vanished:
    st.warning(f"{', '.join(r.vanished)} kept no piece of word {r.word}, so there is nothing to mask there.")
if r.guesses:
    ui.show_figure(figures.fill_mask_figure(r, phone=ui.phone()), "compare-fill-mask")
    st.dataframe(
        [
            {
                "model": g.label,
                "checkpoint": g.shown_as,
                "pieces": g.prediction.n_pieces,
                "top guess": g.prediction.first.words[0] if g.prediction.first.words else "",
                "best fill": g.prediction.best_fill,
                "rank of the original (first piece)": g.prediction.rank,
                "P(word)": g.prediction.p_word,
                "note": "unknown token: the 'original' is the unknown piece" if g.prediction.unknown else "",
            }
            for g in r.guesses
        ],
        hide_index=True,
        width="stretch",
        column_config={"P(word)": st.column_config.NumberColumn(format="%.2e")},
    )
masked_lms = [g.label for g in r.guesses if not g.permutation]
st.caption(
    f"The masked LMs ({', '.join(masked_lms) or 'none here'}) see their mask token where the word was. "
    "XLNet has no mask token: the word's pieces come last in its factorization order, so they see every other "
    "token, on both sides."
)

# ----------------------------------------------------------------------------- 3. ELECTRA
if r.electra is not None:
    st.header("3 · ELECTRA's discriminator: which tokens look replaced?")
    ui.show_figure(figures.discriminator_figure(r.electra, phone=ui.phone()), "compare-electra")
    swap = (
        " The second row puts the generator's best guess (other than the word itself) in place of your word, "
        f"which the discriminator is trained to flag. {r.electra_says}"
        if r.electra_says
        else ""
    )
    st.caption(
        "Red cells look replaced to the discriminator, blue ones original." + swap + " It judges every token "
        "in one pass, which is why ELECTRA learns from all of them."
    )

# ----------------------------------------------------------------------------- 4. cost
st.header("4 · What each costs here, measured")
if r.provisional:
    ui.provisional_timings("cost")
ui.show_figure(figures.key_figure(r), "compare-cost", key=True)
st.dataframe(
    [
        {
            "variant": c["label"],
            "checkpoint": c["shown_as"],
            "tokenizer": c["tokenizer"],
            "device": c["device"],
            "tokens": c["n_tokens"],
            "parameters (M)": c["params"] / 1e6,
            "memory (MiB)": c["memory_bytes"] / 2**20,
            "load (s)": c["load_s"],
            "forward, median (ms)": c["latency_ms"],
            "interval (ms)": f"{c['latency_low_ms']:.2f}–{c['latency_high_ms']:.2f}",
            "spread (ms)": c["spread_ms"],
        }
        for c in r.costs
    ],
    hide_index=True,
    width="stretch",
    column_config={
        "parameters (M)": st.column_config.NumberColumn(format="%.3f"),
        "memory (MiB)": st.column_config.NumberColumn(format="%.2f"),
        "load (s)": st.column_config.NumberColumn(format="%.2f"),
        "forward, median (ms)": st.column_config.NumberColumn(format="%.2f"),
        "spread (ms)": st.column_config.NumberColumn(format="%.2f"),
    },
)
st.caption(
    f"Latency: the median of {r.costs[0]['timed']} forward passes (after {measure.DEFAULTS.warmup} warm-up "
    f"passes) on {r.device.upper()} under `torch.inference_mode`, for this sentence only, the models taking "
    "turns so that background load falls on all of them alike; interval: the median's "
    f"{r.costs[0]['latency_coverage']:.0%} interval (order statistics of the rounds), the whisker on the bars — "
    "variants whose intervals overlap are not ranked; spread = slowest − fastest. "
    "Memory counts parameter and buffer bytes (tied weights once; the ELECTRA pair's shared embeddings appear in "
    "both). Load time is once per server, and the first model loaded also pays for importing the libraries. "
    "Timings are taken once per sentence, so moving a slider shows the same numbers."
)

# ----------------------------------------------------------------------------- 5. guide
st.header("5 · Which one should I use? What these numbers say")
if r.guide:
    ui.show_figure(figures.guide_figure(r), "compare-guide", key="guide")
for line in r.guide:
    st.markdown(f"- {line}")
if r.any_bundled:
    st.caption(
        "These are the tiny bundled stand-ins: their sizes follow this project's recipes, not the real "
        "checkpoints'. Switch the sidebar to the hub to measure the real ones."
    )

ui.takeaway(compare.TAKEAWAY)
ui.share_link(SPEC)
