"""ALBERT, part 2: one block applied L times — activations layer by layer, ALBERT beside BERT, and what
happens if the shared block keeps going past L."""

import math

import streamlit as st

from app import albert, state, ui
from app.figures import albert as figures

D = albert.DEFAULTS
SPEC = (
    state.Param("text", "str", D.text, max_len=1000),
    state.Param("word", "int", 2, lo=0, hi=999),
    state.Param("measure", "choice", "cka", choices=("cka", "cosine")),
    state.Param("repeat", "int", D.repeat, lo=1, hi=D.max_repeat),
)
ui.bind(SPEC)
MEASURES = {"cka": "linear CKA", "cosine": "mean cosine"}


@st.cache_data(max_entries=64, show_spinner=False)
def analyse(_loaded, identity, text: str, cap: int) -> dict:
    """Everything per model and text: tokens, hidden states, attentions, and the measures over them."""
    model, tok = _loaded.model, _loaded.tokenizer
    inputs, tokens, offsets, n_full = albert.encode(tok, text, cap)
    trace = albert.layer_trace(model, inputs)
    log = albert.count_layer_calls(model, inputs)
    t = albert.transitions(trace.hidden)
    return {
        "inputs": inputs, "tokens": tokens, "offsets": offsets, "n_full": n_full, "hidden": trace.hidden,
        "series": {**t, "norm": albert.hidden_norms(trace.hidden),
                   "entropy": albert.attention_entropy(trace.attentions)},
        "cosine": albert.cosine_matrix(trace.hidden), "cka": albert.cka_matrix(trace.hidden),
        "modules": log.modules, "calls": log.calls, "distinct_modules": log.distinct_modules_called,
        "distinct_storages": log.distinct_storages, "parameters": albert.layer_parameters(model, 0),
        "unk": sum(1 for i in inputs["input_ids"][0].tolist() if i == tok.unk_token_id),
    }


@st.cache_data(max_entries=64, show_spinner=False)
def unrolled(_loaded, identity, text: str, cap: int, applications: int):
    inputs, *_ = albert.encode(_loaded.tokenizer, text, cap)
    return albert.unroll(_loaded.model, inputs, applications)  # (applications + 1, T, H)


st.title("ALBERT: one block, applied L times")
st.markdown(
    "BERT stacks L *different* transformer layers. ALBERT keeps **one** layer and applies it L times: the "
    "output of one pass is the input of the next, through the very same weights. What does that do to the "
    "representation? The ALBERT paper (Figure 1) measured, for every layer, how far its output moves from its "
    "input, and found ALBERT's transitions *smoother* than BERT's — the shared block acts more like one step "
    "of an iterative process. Here are the same measures, live, for your sentence, with ALBERT and BERT side "
    "by side. You can also keep applying ALBERT's block **past** L and watch whether the tokens settle."
)

text = st.text_area("Your text", key="text", max_chars=1000, height=80)
if not text.strip():
    st.warning("Type a sentence to start (the box is empty or only whitespace).")
    ui.share_link(SPEC)
    st.stop()

words = albert.word_spans(text)
c1, c2, c3 = st.columns([2, 2, 3])
if words and st.session_state.get("word", 0) >= len(words):
    st.info(f"Word {st.session_state['word'] + 1} does not exist in this text ({len(words)} words); following "
            f"the first word instead.")
    st.session_state["word"] = 0
if words:
    c1.selectbox("Follow the word", list(range(len(words))), key="word",
                 format_func=lambda i: f"{words[i][0]} (word {i + 1})",
                 help="Its first word piece is traced through the layers below.")
c2.radio("Layer × layer similarity", list(MEASURES), key="measure", format_func=MEASURES.get, horizontal=True,
         help="Cosine compares each token with itself at two depths. Linear CKA compares the whole sentence's "
              "representations and ignores rotations and scale.")
c3.slider("Unroll ALBERT's block to this many × L applications", 1, D.max_repeat, key="repeat")

loaded = {"ALBERT": ui.model("albert"), "BERT": ui.model("bert")}
results, caps = {}, {}
with ui.timed_forward():
    for name, lm in loaded.items():
        caps[name] = albert.model_limit(lm.model, lm.tokenizer)
        results[name] = analyse(lm, lm.identity, text, caps[name])
for name, r in results.items():
    if r["n_full"] > caps[name]:
        st.warning(f"{name}: your text is {r['n_full']} tokens; only the first {caps[name]} (its limit here, "
                   "specials included) are used.")
    if r["unk"]:
        st.info(f"{name}: {r['unk']} piece(s) became `{ui.escape(loaded[name].tokenizer.unk_token)}` — outside its "
                "vocabulary (emoji, CJK, right-to-left scripts and rare symbols do; the bundled models know simple "
                "English). They still flow through the layers, as one shared unknown vector.")
a, b = results["ALBERT"], results["BERT"]
L_albert, L_bert = len(a["hidden"]) - 1, len(b["hidden"]) - 1

# ----------------------------------------------------------------------------- one block

st.header("It really is one block")
m = st.columns(3)
m[0].metric("ALBERT: layer modules", len(a["modules"]), help=", ".join(a["modules"]))
m[1].metric("…called in one forward pass", len(a["calls"]))
m[2].metric("…distinct weight storages used", a["distinct_storages"])
m = st.columns(3)
m[0].metric("BERT: layer modules", len(b["modules"]))
m[1].metric("…called in one forward pass", len(b["calls"]))
m[2].metric("…distinct weight storages used", b["distinct_storages"])
where = ("the same module and the same memory" if a["distinct_storages"] == 1
         else f"{a['distinct_storages']} storages")
st.caption(
    f"A forward hook on every layer module counts its calls and records where its query weights live "
    f"(`data_ptr`); the hooks are removed afterwards. ALBERT's {len(a['calls'])} calls all go to {where}; "
    f"BERT's {len(b['calls'])} go to {b['distinct_storages']} different ones."
)
with st.expander("The shared block's parameters (stored once) and every call"):
    st.dataframe(a["parameters"], hide_index=True, width="stretch",
                 column_config={"numel": st.column_config.NumberColumn(format="localized")})
    st.caption(f"{sum(p['numel'] for p in a['parameters']):,} parameters, used {len(a['calls'])} times per token.")
    st.dataframe([{"call": c["call"], "module": c["module"], "id(module)": hex(c["module_id"]),
                   "query.weight data_ptr": hex(c["query_weight_ptr"])} for c in a["calls"]],
                 hide_index=True, width="stretch")

# ----------------------------------------------------------------------------- layer by layer

st.header("Layer by layer")
st.markdown(
    "For every layer: the **L2 distance** and the **angle** between each token's vector going in and coming "
    "out (averaged over tokens; hover for the cosine), the average **length** of the token vectors, and the "
    "**entropy** of the attention — 0 bits when every token looks at a single token, "
    f"log₂ T = {math.log2(len(a['tokens'])):.2f} bits (ALBERT's T = {len(a['tokens'])}) when it "
    "spreads evenly."
)
ui.show_figure(figures.layer_metrics_figure({f"ALBERT ({L_albert} applications of one block)": a["series"],
                                             f"BERT ({L_bert} layers)": b["series"]}), "albert-vs-bert-layers")
st.caption(
    "ALBERT's first layer starts from the embeddings projected from E up to H, which are not yet normalized at "
    "width H, so its first jump is usually the largest; compare the layers after it."
)

st.subheader("Which depths look alike")
measure = st.session_state["measure"]
ui.show_figure(figures.similarity_heatmaps({"ALBERT": a[measure], "BERT": b[measure]}, measure),
               f"albert-vs-bert-{measure}")
st.caption(
    "Depth 0 is the input to the first layer; depth k the output of layer k. A bright band along the diagonal "
    "means neighbouring layers compute similar things; a bright block means the representation has stopped "
    "changing much."
)

# ----------------------------------------------------------------------------- past L

st.header(f"Keep going past L = {L_albert}")
albert_model = loaded["ALBERT"]
if not albert.is_fully_shared(albert_model.model):
    st.info("This ALBERT checkpoint does not share one block across all layers (num_hidden_groups ≠ 1), so "
            "there is no single block to keep applying.")
    unroll_states = None
else:
    applications = int(st.session_state["repeat"]) * L_albert
    with ui.timed_forward():
        unroll_states = unrolled(albert_model, albert_model.identity, text, caps["ALBERT"], applications)
    check = float((unroll_states[L_albert] - a["hidden"][L_albert]).abs().max())
    s = albert.steps(unroll_states, L_albert)
    ui.show_figure(figures.unroll_figure(s, L_albert), "albert-unrolled")
    st.caption(
        f"Applying the shared block ourselves, from the embeddings, {applications} times (the cached model is "
        f"only read). Check: after {L_albert} applications the result equals the model's own output "
        f"(largest difference {check:.1e})."
    )
    if applications > L_albert:
        c = albert.convergence_summary(s["l2"], L_albert)
        trend = {
            "settling": "keep shrinking — the block is settling towards a fixed point, where one more application "
                        "changes little",
            "slowing": "shrink, but slowly — the tokens are still drifting when we stop",
            "not settling": "do not shrink — the block keeps moving the tokens, with no fixed point in sight",
        }[c["trend"]]
        st.markdown(
            f"Each application moves the tokens by {c['first']:.3f} at first, {c['at_L']:.3f} at application "
            f"{L_albert} (where the model stops) and {c['last']:.3f} at application {applications}: the steps {trend}. "
            "Training only ever saw L applications, so what happens after is the block's own dynamics, untrained."
        )

# ----------------------------------------------------------------------------- a token's path

st.header("One token's path")
if not words:
    st.info("There is no word in this text to follow (only symbols or spaces).")
else:
    wi = int(st.session_state["word"])
    word, start, end = words[wi]
    paths, missing = {}, []
    for name, r in results.items():
        idx = albert.token_for_span(r["offsets"], start, end)
        if idx is None:
            missing.append(name)
            continue
        extra = unroll_states[L_albert + 1:] if (name == "ALBERT" and unroll_states is not None) else None
        paths[f"{name} · piece “{r['tokens'][idx]}”"] = albert.trajectory(r["hidden"], idx, extra)
    for name in missing:
        st.info(f"{name}: “{ui.escape(word)}” lies beyond the part of the text it read (truncated).")
    if paths:
        ui.show_figure(figures.trajectory_figure(paths, ui.escape(word)), "albert-vs-bert-trajectory")
        st.caption(
            "Each panel is that model's own 2-D view: a PCA of every token at every layer output, with the input "
            "(depth 0) projected into it; the axes of the two panels are not comparable. Numbers are depths; grey "
            "points are the other tokens. ALBERT's dotted continuation is the block applied past L, projected into "
            "the same view."
        )

# ----------------------------------------------------------------------------- takeaway

aa, ba = a["series"]["angle"], b["series"]["angle"]
later_a = aa[1:] if len(aa) > 1 else aa
st.markdown(
    f"**Takeaway:** ALBERT's encoder is one block run {L_albert} times — the hooks saw {len(a['calls'])} calls to "
    f"{a['distinct_storages']} set of weights. After its first layer, ALBERT turns each token by "
    f"{float(later_a.min()):.1f}°–{float(later_a.max()):.1f}° per layer; BERT's {L_bert} separate layers turn them "
    f"by {float(ba.min()):.1f}°–{float(ba.max()):.1f}°. The paper reports ALBERT's layer-to-layer changes as "
    "smoother and oscillating rather than converging; the unrolled steps above show whether this checkpoint's "
    "block settles when you keep applying it. Sharing saves parameters, not passes: every application costs a "
    "full layer of compute."
)
ui.share_link(SPEC)
