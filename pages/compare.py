"""Variants side by side: every catalogue variant on one sentence — tokens, predictions, size, latency, memory."""

import streamlit as st

from app import compare, state, ui
from app.figures import compare as figs
from app.models import catalogue

D = compare.DEFAULTS
SPEC = (
    state.Param("text", "str", D.text, max_len=1000),
    state.Param("word", "int", D.word, lo=0, hi=1000),
    state.Param("top_k", "int", D.top_k, lo=1, hi=10),
)
ui.bind(SPEC)

st.title("Variants side by side")
st.markdown(
    "Every variant in the catalogue reads **your** sentence at once. You will see how each tokenizer cuts it "
    "(WordPiece `##`, byte-level BPE `Ġ`, SentencePiece `▁`), what each masked language model guesses for a word you "
    "hide, what ELECTRA's discriminator thinks of each token, what XLNet predicts without any mask token — and what each "
    "model **costs on this machine**: parameters, memory, load time and forward latency, measured here rather than "
    "quoted from papers."
)

text = st.text_area("Your sentence", key="text", max_chars=1000, height=80)

# ----------------------------------------------------------------------------- models
source, _, _ = ui.settings()
keys = list(catalogue.CATALOGUE)
missing = [k for k in keys if source == "bundled" and not catalogue.get(k).bundled_available()]
if missing:
    st.warning("Not built yet, so left out: " + ", ".join(catalogue.get(k).label for k in missing) + ".")
models = {k: ui.model(k) for k in keys if k not in missing}
if not models:
    st.error("No model is available to compare.")
    st.stop()

if not text.strip():
    st.warning("Type a sentence above (for example: *The little girl found a red ball in the park.*).")
    st.stop()
fitted, words = ui.words_to_mask(text, {m.variant.label: m.tokenizer for m in models.values()})

index, word_note = compare.choose_word(len(words), st.session_state.get("word", D.word))
if word_note:
    st.info(word_note)
    st.session_state["word"] = index
left, right = st.columns([2, 1])
word = left.selectbox("Word to mask", list(range(len(words))), key="word",
                      format_func=lambda i: f"{words[i][0]}  (word {i})")
top_k = right.slider("Guesses shown per model", 1, 10, key="top_k")
chosen = words[word][0]


# ----------------------------------------------------------------------------- cached per input
@st.cache_data(max_entries=256, show_spinner=False)
def tokenized(_loaded, identity, text):
    return compare.tokenize(_loaded.tokenizer, text)


@st.cache_data(max_entries=256, show_spinner=False)
def predict(_loaded, identity, text, word, k):
    if _loaded.variant.family == "xlnet":
        return compare.xlnet_predict(_loaded.model, _loaded.tokenizer, text, word, k)
    return compare.fill_mask(_loaded.model, _loaded.tokenizer, text, word, k)


@st.cache_data(max_entries=256, show_spinner=False)
def latencies(_models, identities, text, settled):
    """Every model timed in turns on this sentence (cached per sentence, set of models, and whether the
    server's background warm start had finished: timings taken during it are taken again after it)."""
    return compare.forward_latencies({k: (m.model, m.tokenizer) for k, m in _models.items()}, text)


@st.cache_data(max_entries=64, show_spinner=False)
def size(_loaded, identity):
    return compare.count_parameters(_loaded.model), compare.memory_bytes(_loaded.model)["total_bytes"]


@st.cache_data(max_entries=256, show_spinner=False)
def replaced(_loaded, identity, ids):
    return compare.replaced_probability(_loaded.model, _loaded.tokenizer, list(ids))


toks = {k: tokenized(m, m.identity, fitted) for k, m in models.items()}
predictors = [k for k in models if catalogue.get(k).is_masked_lm or k == "xlnet"]
with ui.timed_forward():
    preds = {k: predict(models[k], models[k].identity, fitted, word, top_k) for k in predictors}

# ----------------------------------------------------------------------------- 1. tokens
st.header("1 · How each tokenizer cuts it")
labels = [m.variant.label for m in models.values()]
window = compare.word_window(len(words), word)
cells = [[[tk.pieces[i] for i in tk.pieces_of(j)] for j in window] for tk in toks.values()]
ui.show_figure(figs.token_grid_figure(labels, [words[j][0] for j in window], cells, [len(tk.ids) for tk in toks.values()],
                                      word - window.start, first=window.start), "compare-tokens")
if len(window) < len(words):
    st.caption(f"Showing words {window.start}–{window.stop - 1} of {len(words)}, around the masked word; the token "
               "counts in the row labels are for the whole text.")
unknown = {models[k].variant.label: sorted({words[tk.word_of[i]][0] for i in tk.unknown if tk.word_of[i] is not None})
           for k, tk in toks.items()}
unknown = {label: ws for label, ws in unknown.items() if ws}
if unknown:
    st.info("Some characters are not in every vocabulary and became the unknown token: "
            + "; ".join(f"{label}: {', '.join(compare.md_code(w) for w in ws)}" for label, ws in unknown.items())
            + ". Byte-level BPE (RoBERTa) never needs one: any text is bytes.")
st.caption("A cell lists the pieces a word became; its colour says how many. Hover for the exact pieces. The same "
           "word can be one piece for one model and several for another: that is why 'mask one word' means "
           "different things to different models.")

# ----------------------------------------------------------------------------- 2. predictions
st.header(f"2 · Guessing the hidden word: {compare.md_code(chosen)}")
note = compare.masking_note({models[k].variant.label: p.pieces for k, p in preds.items() if p.n_pieces}, chosen)
if note:
    st.info(note)
vanished = [models[k].variant.label for k, p in preds.items() if not p.n_pieces]
if vanished:
    st.warning(f"{', '.join(vanished)} kept no piece of this word, so there is nothing to mask there; pick another word.")
shown = {k: p for k, p in preds.items() if p.n_pieces}
if shown:
    ui.show_figure(figs.fill_mask_figure(
        [models[k].variant.label + (" (permutation)" if k == "xlnet" else "") for k in shown],
        [p.top for p in shown.values()],
        [compare.piece_text(models[k].tokenizer, toks[k].ids[toks[k].pieces_of(word)[0]]) for k in shown]),
        "compare-fill-mask")
    st.dataframe([{
        "model": models[k].variant.label, "pieces": p.n_pieces, "top guess": p.top[0][0] if p.top else "",
        "best fill": p.best_fill, "rank of the original (first piece)": p.rank_first, "P(word)": p.p_word,
        "note": "unknown token: the 'original' is [UNK]" if p.unknown else "",
    } for k, p in shown.items()], hide_index=True, width="stretch",
        column_config={"P(word)": st.column_config.NumberColumn(format="%.2e")})
st.caption("BERT, RoBERTa, ALBERT, DistilBERT and the ELECTRA generator see their mask token where the word was. "
           "XLNet has no mask token: the word's pieces come last in its factorization order, so they see every other "
           "token, on both sides.")

# ----------------------------------------------------------------------------- 3. ELECTRA
if "electra-discriminator" in models:
    st.header("3 · ELECTRA's discriminator: which tokens look replaced?")
    disc = models["electra-discriminator"]
    dtk = toks["electra-discriminator"]
    rows = [("as written", dtk.pieces, replaced(disc, disc.identity, tuple(dtk.ids)))]
    where = dtk.pieces_of(word)
    if "electra-generator" in models and where:
        gen = models["electra-generator"]
        candidates = predict(gen, gen.identity, fitted, word, 10).top_raw
        swapped = compare.swap_in(disc.tokenizer, dtk.ids, where, candidates)
        if swapped:
            ids, put = swapped
            rows.append((f"{chosen} → {put} (generator's guess)", disc.tokenizer.convert_ids_to_tokens(ids),
                         replaced(disc, disc.identity, tuple(ids))))
    ui.show_figure(figs.discriminator_figure(rows), "compare-electra")
    st.caption("Red cells look replaced to the discriminator, blue ones original. The second row puts the generator's "
               "best guess (other than the word itself) in place of your word: a trained discriminator should "
               "light it up. It judges every token in one pass, which is why ELECTRA learns from all of them.")

# ----------------------------------------------------------------------------- 4. cost
st.header("4 · What each costs here, measured")
rows = []
warm = ui.warm_progress()
settled = warm is None or warm.get("seconds") is not None
timed = latencies(models, tuple(m.identity for m in models.values()), fitted, settled)
if not settled:
    st.info("Models are still loading in the background, which slows everything down: these timings are "
            "provisional and are measured again once loading has finished.", icon=":material/hourglass_top:")
for k, m in models.items():
    params, mem = size(m, m.identity)
    lat = timed[k]
    p = preds.get(k)
    rows.append({"key": k, "label": m.variant.label, "tokenizer": m.variant.tokenizer_kind, "source": m.source,
                 "device": f"{m.device} · {m.dtype}", "n_tokens": lat["n_tokens"], "params": params,
                 "memory_bytes": mem, "load_s": m.load_seconds,
                 "latency_ms": lat["median_ms"], "spread_ms": max(lat["samples_ms"]) - min(lat["samples_ms"]),
                 "rank_first": p.rank_first if p and p.n_pieces else None,
                 "p_word": p.p_word if p and p.n_pieces else None})
device = next(iter(models.values())).device
ui.show_figure(figs.cost_figure([r["label"] for r in rows], [r["params"] for r in rows],
                                [r["memory_bytes"] for r in rows], [r["latency_ms"] for r in rows], device.upper()),
               "compare-cost")
st.dataframe([{
    "variant": r["label"], "tokenizer": r["tokenizer"], "from": r["source"], "device": r["device"],
    "tokens": r["n_tokens"],
    "parameters (M)": r["params"] / 1e6, "memory (MiB)": r["memory_bytes"] / 2**20, "load (s)": r["load_s"],
    "forward, median (ms)": r["latency_ms"], "spread (ms)": r["spread_ms"],
} for r in rows], hide_index=True, width="stretch", column_config={
    "parameters (M)": st.column_config.NumberColumn(format="%.3f"),
    "memory (MiB)": st.column_config.NumberColumn(format="%.2f"),
    "load (s)": st.column_config.NumberColumn(format="%.2f"),
    "forward, median (ms)": st.column_config.NumberColumn(format="%.2f"),
    "spread (ms)": st.column_config.NumberColumn(format="%.2f"),
})
st.caption(f"Latency: the median of {D.repeats} forward passes (after {D.warmup} warm-up passes) on "
           f"{device.upper()} under `torch.inference_mode`, for this sentence only, the models taking turns so that "
           "background load falls on all of them alike; spread = slowest − fastest. "
           "Memory counts parameter and buffer bytes (tied weights once; the ELECTRA pair's shared embeddings appear in "
           "both). Load time is once per server, and the first model loaded also pays for importing the libraries. "
           "Results are cached per sentence, so a rerun shows the same numbers.")

# ----------------------------------------------------------------------------- 5. guide
st.header("5 · Which one should I use? What these numbers say")
for line in compare.selection_guide(rows):
    st.markdown(f"- {line}")
if any(m.is_bundled for m in models.values()):
    st.caption("These are the tiny bundled stand-ins: their sizes follow this project's recipes, not the real "
               "checkpoints'. Switch the sidebar to the hub to measure the real ones.")

st.markdown("**Takeaway:** 'BERT variants' differ in how they cut text, what they were trained to predict and what "
            "they cost to run — and the cheapest model on paper is not always the quickest on your machine. "
            "Measure on your own sentences and hardware before you choose.")
ui.share_link(SPEC)
