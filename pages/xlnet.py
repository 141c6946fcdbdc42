"""XLNet: permutation language modelling. The factorization order, the content and query streams as
attention masks, the real model's predictions under them, a masked LM beside it, and a check read from
the attentions the model used."""

import streamlit as st

from app import state, ui, xlnet
from app.figures import xlnet as figures

DEFAULT_TEXT = "The little girl found a red ball in the park."
KIND_NAMES = {"random": "Random (seeded)", "left-to-right": "Left to right", "right-to-left": "Right to left",
              "typed": "Type your own"}
SPEC = (
    state.Param("text", "str", DEFAULT_TEXT, max_len=1000),
    state.Param("order", "choice", "random", choices=xlnet.ORDER_KINDS),
    state.Param("seed", "int", 0, lo=0, hi=2**31 - 1),
    state.Param("typed", "str", "", max_len=300),
    state.Param("split", "choice", "k", choices=("k", "count")),
    state.Param("k", "int", xlnet.DEFAULTS.k, lo=1, hi=24),
    state.Param("n_targets", "int", 3, lo=1, hi=xlnet.DEFAULTS.max_pieces),
    state.Param("specials", "bool", True),
    state.Param("top_k", "int", xlnet.DEFAULTS.top_k, lo=1, hi=10),
    state.Param("stream", "choice", "query", choices=("query", "content")),
    state.Param("layer", "int", 0, lo=0, hi=48),  # 0 = the last layer
)
ui.bind(SPEC)


def code(piece: str) -> str:
    """A piece as inline code in markdown (backticks inside cannot close it)."""
    return "`" + str(piece).replace("`", "ˋ") + "`"


def percent(p: float) -> str:
    return f"{100 * p:.2f}%" if p >= 0.0001 else f"{100 * p:.1e}%"


@st.cache_data(max_entries=64, show_spinner=False)
def run_xlnet(_loaded, identity, ids: tuple, order: tuple, n_targets: int, specials_visible: bool, top_k: int) -> dict:
    """XLNetLMHeadModel under this order's perm_mask and target_mapping: plain data for the page."""
    masks = xlnet.masks_from_order(order, n_targets, len(ids), specials_visible)
    out = xlnet.permutation_forward(_loaded.model, ids, masks)
    actual = [float(out.probs[k, ids[t]]) for k, t in enumerate(masks.targets)]
    rank = [int((out.probs[k] > out.probs[k, ids[t]]).sum()) + 1 for k, t in enumerate(masks.targets)]
    return {
        "top": xlnet.top_predictions(out.probs, _loaded.tokenizer, top_k),
        "actual": actual, "rank": rank,
        "checks": xlnet.attention_check(out, masks),
        "heads": out.content_attentions.shape[1],
        "content": out.content_attentions.mean(1).numpy(),  # (L, T, T), mean over heads
        "query": out.query_attentions.mean(1).numpy(),  # (L, T, T)
    }


@st.cache_data(max_entries=64, show_spinner=False)
def run_masked_lm(_loaded, identity, text: str, spans: tuple, top_k: int) -> dict:
    out = xlnet.masked_lm_all_at_once(_loaded.model, _loaded.tokenizer, text, list(spans))
    return {"pieces": out.pieces, "masked": out.masked, "for_target": out.for_target, "actual": out.actual,
            "top": xlnet.top_predictions(out.probs, _loaded.tokenizer, top_k) if out.masked else []}


st.title("XLNet: permutation language modelling")
st.markdown(
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

text = st.text_area("Text", key="text", max_chars=1000, height=80)
loaded = ui.model("xlnet")
if not text.strip():
    st.warning("The text is empty: type a sentence (for example the default one) to see its factorization order.")
    ui.share_link(SPEC)
    st.stop()

pieces = xlnet.xlnet_pieces(loaded.tokenizer, text)
n = pieces.n_content
if pieces.dropped_controls:
    st.info(f"{', '.join(code(t) for t in pieces.dropped_controls)} in your text "
            f"{'is one of' if len(pieces.dropped_controls) == 1 else 'are'} XLNet's control tokens; "
            "they were left out, so the only specials are the `<sep> <cls>` that XLNet appends at the end.")
if n == 0:
    st.warning("The text has no pieces the model can use (only spaces or control tokens). Type a sentence.")
    ui.share_link(SPEC)
    st.stop()
if pieces.capped:
    st.info(f"The text has {pieces.n_before_cap} pieces; this lesson keeps the first {n} so that every mask "
            f"stays readable (the masked LM below reads the same first {pieces.kept_chars} characters).")
unknown = sum(p == loaded.tokenizer.unk_token for p in pieces.pieces)
if unknown:
    st.info(f"{unknown} piece(s) are `{loaded.tokenizer.unk_token}`: the vocabulary has no piece for those "
            "characters (emoji, other scripts). They still take part in the order; a guess for them means little.")

st.subheader("1 · The pieces and the order")
st.markdown(f"{loaded.variant.label}'s SentencePiece splits the text into **{n} content pieces** (`▁` marks the start "
            "of a word) and appends `<sep> <cls>` **at the end** (BERT puts `[CLS]` first). The numbers are the "
            "positions you use to type an order.")
st.code("   ".join(f"{i}:{p}" for i, p in enumerate(pieces.pieces[:n])) + "   |   " + "  ".join(pieces.pieces[n:]),
        language=None, wrap_lines=True)

c1, c2, c3 = st.columns([1.3, 1, 1])
with c1:
    kind = st.radio("Factorization order", xlnet.ORDER_KINDS, key="order", format_func=KIND_NAMES.get, horizontal=True)
    st.number_input("Seed (random order)", key="seed", min_value=0, max_value=2**31 - 1, step=1,
                    disabled=kind != "random")
    st.text_input("Your order (piece numbers, every one once)", key="typed", max_chars=300,
                  placeholder=" ".join(str(i) for i in reversed(range(min(n, 5)))), disabled=kind != "typed")
with c2:
    split = st.radio("How many are predicted", ("k", "count"), key="split", horizontal=True,
                     format_func={"k": "the last 1/K of the order", "count": "a fixed count"}.get)
    st.slider("K (partial prediction)", 1, 24, key="k", disabled=split != "k",
              help="ceil(n / K) targets, as when the bundled model was trained (K = 6).")
    st.number_input("Targets", key="n_targets", min_value=1, max_value=xlnet.DEFAULTS.max_pieces, step=1,
                    disabled=split != "count")
with c3:
    specials_visible = st.toggle("`<sep> <cls>` visible to the targets", key="specials",
                                 help="On: as in training, the two specials are context everyone sees. Off: a "
                                 "target sees only content pieces, so the first target may see nothing at all.")
    top_k = st.slider("Top-k predictions", 1, 10, key="top_k")

try:
    order = xlnet.make_order(kind, n, st.session_state["seed"], st.session_state["typed"])
except xlnet.OrderError as e:
    if st.session_state["typed"].strip():
        st.warning(f"Your order can't be used: {e}. Showing left to right instead.", icon=":material/block:")
    else:
        st.info(f"Type your order above: {e}. Showing left to right until then.", icon=":material/edit:")
    order = xlnet.make_order("left-to-right", n)
if split == "k":
    n_targets = xlnet.n_targets_for(n, k=st.session_state["k"])
else:
    n_targets = xlnet.n_targets_for(n, count=st.session_state["n_targets"])
    if st.session_state["n_targets"] > n:
        st.info(f"The text has only {n} pieces, so {n} are predicted (you asked for {st.session_state['n_targets']}).")
masks = xlnet.masks_from_order(order, n_targets, len(pieces.ids), specials_visible)
free = xlnet.context_free_targets(masks)
n_context = n - n_targets

st.markdown(
    f"**Order:** {' → '.join(str(p) for p in order)}.  \n"
    + (f"**Context** (steps 0–{n_context - 1}, seen by everyone, never predicted): "
       f"{' '.join(code(pieces.pieces[p]) for p in masks.context)}.  \n" if n_context else
       "**Context:** none — every piece is predicted.  \n")
    + f"**Predicted** ({n_targets} = {'ceil(' + str(n) + ' / ' + str(st.session_state['k']) + ')' if split == 'k' else 'your count'}), "
    f"in this order: {' → '.join(code(pieces.pieces[t]) for t in masks.targets)}."
)
if free:
    st.warning(
        f"{', '.join(code(pieces.pieces[t]) for t in free)} comes first among the targets with nothing before it "
        "and `<sep> <cls>` hidden: **its query row is fully blocked**. XLNet subtracts 1e30 from every blocked "
        "score, so that softmax becomes *uniform over every position — its own content included*: a leak, not "
        "a prediction. This page marks it **no context** and shows no guess for it (the check below measures the "
        "uniform row).", icon=":material/warning:")

fig = figures.order_figure(pieces.pieces, masks)
ui.show_figure(fig, "xlnet-order")
st.caption("Each row is one step of the order. Orange: the position at that step — for a target, its position "
           "is known but its content is hidden. Blue: what it may see. Hover a cell for the row in words.")

st.subheader("2 · The two streams as masks")
st.markdown(
    "The same order, written as the masks the model receives. Dark = **1 = blocked** (perm_mask's convention), "
    "green = may attend. The content and query masks differ **only on the diagonal** of the targets: the "
    "content stream sees its own token, the query stream does not. The query stream is computed only for the "
    "targets, so its other rows are empty; `target_mapping` tells the model which positions those are."
)
ui.show_figure(figures.stream_masks_figure(pieces.pieces, masks), "xlnet-stream-masks")

st.subheader("3 · Predictions under this order, and a masked LM beside them")
bert = ui.model("bert")
with ui.timed_forward():
    result = run_xlnet(loaded, loaded.identity, pieces.ids, tuple(order), n_targets, specials_visible, top_k)
    spans = tuple(pieces.spans[t] for t in masks.targets)
    mlm = run_masked_lm(bert, bert.identity, text[: pieces.kept_chars], spans, top_k)

left, right = st.columns(2)
with left:
    st.markdown(f"**{loaded.variant.label}** (`XLNetLMHeadModel`, perm_mask + target_mapping), in the order of prediction")
    rows = []
    for k, t in enumerate(masks.targets):
        sees = len(xlnet.visible(masks.query_mask, t))
        if t in free:
            rows.append({"step": order.index(t), "target": pieces.pieces[t], "sees": "nothing",
                         f"top-{top_k}": "— no context: not predicted (uniform attention would leak the token)",
                         "p(actual)": None, "rank": None})
            continue
        rows.append({"step": order.index(t), "target": pieces.pieces[t], "sees": f"{sees} positions",
                     f"top-{top_k}": " · ".join(f"{p} {percent(q)}" for p, q in result["top"][k]),
                     "p(actual)": result["actual"][k], "rank": result["rank"][k]})
    st.dataframe(rows, hide_index=True, width="stretch",
                 column_config={"p(actual)": st.column_config.NumberColumn(format="%.4f"),
                                f"top-{top_k}": st.column_config.TextColumn(width="large")})
with right:
    st.markdown(f"**{bert.variant.label}** (masked LM): the same words masked **all at once**, each guessed independently")
    rows = []
    for k, t in enumerate(masks.targets):
        cover = mlm["for_target"][k]
        if not cover:
            rows.append({"target": pieces.pieces[t], "masked": "—", f"top-{top_k}": "no WordPiece covers these characters",
                         "p(actual)": None})
            continue
        guesses = [f"{mlm['pieces'][mlm['masked'][m]]}: " + " · ".join(f"{p} {percent(q)}" for p, q in mlm["top"][m])
                   for m in cover]
        rows.append({"target": pieces.pieces[t], "masked": " ".join(mlm["pieces"][mlm["masked"][m]] for m in cover),
                     f"top-{top_k}": "  |  ".join(guesses),
                     "p(actual)": min(mlm["actual"][m] for m in cover)})
    st.dataframe(rows, hide_index=True, width="stretch",
                 column_config={"p(actual)": st.column_config.NumberColumn(format="%.4f"),
                                f"top-{top_k}": st.column_config.TextColumn(width="large")})
st.caption(
    f"The tokenizers differ (SentencePiece, cased vs WordPiece, uncased), so the two are aligned **by characters**: "
    f"every {bert.variant.label} piece sharing a character with a target piece is replaced by `[MASK]` — "
    f"{len(mlm['masked'])} in all, in one input — and each is predicted from the unmasked rest. Where a target spans "
    "several WordPieces, each is listed with its own guesses and p(actual) is the smallest. XLNet's later targets see "
    "the earlier targets' real tokens; the masked LM's guesses cannot see one another — BERT's independence assumption."
)

st.subheader("4 · Check: the attention the model used is zero where the masks block")
checks = result["checks"]
n_layers = len(checks) // 2
worst = max(c["max prob on a blocked cell"] for c in checks)
mass = min(c["min prob mass on visible cells"] for c in checks)
query_rows = checks[1]["rows"]
if worst == 0.0:
    st.success(
        f"✅ Read from the model (`output_attentions=True`: one (content, query) pair per layer): in all {n_layers} "
        f"layers × {result['heads']} heads, the attention probability on every blocked cell is **exactly 0** — "
        f"content stream: all {len(pieces.ids)} rows; query stream: the {query_rows} target row(s) that see "
        f"something. The allowed cells carry all the mass (at least {mass:.6f} per row).")
else:
    st.error(f"✗ Some blocked cell has attention {worst:.3g}: the masks were not respected.")
if free:
    dev = max(c["max distance from uniform"] for c in checks if c["stream"] == "query")
    st.warning(f"The context-free target's query row: every probability is 1/{len(pieces.ids)} "
               f"(largest distance from uniform {dev:.2g}), its own position included — which is why it is not "
               "shown as a prediction.")
st.dataframe(checks, hide_index=True, width="stretch",
             column_config={"max prob on a blocked cell": st.column_config.NumberColumn(format="%.3g"),
                            "min prob mass on visible cells": st.column_config.NumberColumn(format="%.6f"),
                            "max distance from uniform": st.column_config.NumberColumn(format="%.3g")})

a, b = st.columns(2)
stream = a.radio("Stream", ("query", "content"), key="stream", horizontal=True)
if st.session_state["layer"] > n_layers:
    st.info(f"This model has {n_layers} layers; showing the last one (the link asked for layer {st.session_state['layer']}).")
    st.session_state["layer"] = 0
layer = b.selectbox("Layer", list(range(n_layers + 1)), key="layer",
                    format_func=lambda v: f"last ({n_layers})" if v == 0 else str(v))
index = (layer or n_layers) - 1
shown_rows = [t for t in masks.targets] if stream == "query" else list(range(len(pieces.ids)))
mask = masks.query_mask if stream == "query" else masks.content_mask
ui.show_figure(
    figures.attention_figure(pieces.pieces, n, result[stream][index], mask.numpy(), shown_rows,
                             f"{stream} stream, layer {index + 1}, mean over {result['heads']} heads"),
    "xlnet-attention")
st.caption("× marks the cells the mask blocks; hover shows each probability. Query rows exist only for the targets.")

st.markdown(
    "**Takeaway:** XLNet's permutation is only a pair of masks over tokens that never move. Each target is "
    "predicted from what comes before it *in the order*, by a query stream that knows the position but not "
    "the token — so targets condition on one another (later ones see earlier ones), unlike a masked LM whose "
    "masked words are guessed independently. Change a target's word: only the predictions after it in the "
    "order can change."
)
ui.share_link(SPEC)
