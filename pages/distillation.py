"""DistilBERT: distillation — teacher and student on one sentence: soft targets, temperature, the three loss terms."""

import streamlit as st

from app import compare, distillation, state, ui
from app.figures import distillation as figs
from app.models import catalogue

R = distillation.RECIPE
SPEC = (
    state.Param("text", "str", compare.DEFAULTS.text, max_len=1000),
    state.Param("word", "int", compare.DEFAULTS.word, lo=0, hi=1000),
    state.Param("temperature", "float", R.temperature, lo=0.5, hi=10.0),
    state.Param("top_k", "int", 8, lo=3, hi=20),
)
ui.bind(SPEC)

st.title("DistilBERT: distillation")
st.markdown(
    "DistilBERT is a **student**: half of BERT's layers, trained to imitate a finished BERT (the **teacher**) rather "
    "than only the text. For every token the teacher gives a whole distribution over the vocabulary, and the student "
    "learns to match it. Those *soft targets* say more than the right answer: they also say which wrong answers are "
    "nearly right. Dividing the logits by a **temperature T** flattens both distributions so that this "
    "\"dark knowledge\" counts in the loss. The recipe (Sanh et al., 2019) adds three terms:\n\n"
    f"$L = {R.alpha_ce:g}\\cdot T^2\\,\\mathrm{{KL}}(p_t^T \\,\\|\\, p_s^T) + {R.alpha_mlm:g}\\cdot \\mathrm{{MLM}} + "
    f"{R.alpha_cos:g}\\cdot(1-\\cos(h_s, h_t))$, with $T = {R.temperature:g}$.\n\n"
    "Below, both models read your sentence with one word masked."
)

text = st.text_area("Your sentence", key="text", max_chars=1000, height=80)
teacher = ui.model("bert")
student = ui.model("distilbert")
for note in distillation.pair_notes(teacher.source, teacher.location, student.source):
    st.warning(note)
if not distillation.same_vocabulary(teacher.tokenizer, student.tokenizer):
    fix = ("The bundled student was not distilled from this bundled teacher: rebuild it after BERT with "
           "`python -m app.training --recipe distilbert`." if teacher.is_bundled and student.is_bundled
           else "Switch the sidebar to the bundled models.")
    st.error("Teacher and student use different vocabularies here, so their distributions cannot be compared token by "
             f"token. {fix}")
    st.stop()
if not text.strip():
    st.warning("Type a sentence above (for example: *The little girl found a red ball in the park.*).")
    st.stop()
fitted, words = ui.words_to_mask(text, {"BERT": teacher.tokenizer, "DistilBERT": student.tokenizer})
index, word_note = compare.choose_word(len(words), st.session_state.get("word", compare.DEFAULTS.word))
if word_note:
    st.info(word_note)
    st.session_state["word"] = index

c1, c2, c3 = st.columns([2, 2, 1])
word = c1.selectbox("Word to mask", list(range(len(words))), key="word",
                    format_func=lambda i: f"{words[i][0]}  (word {i})")
temperature = c2.slider("Temperature T", 0.5, 10.0, step=0.25, key="temperature",
                        help=f"The recipe used T = {R.temperature:g}. T = 1 is the plain softmax.")
top_k = c3.slider("Tokens shown", 3, 20, key="top_k")


@st.cache_data(max_entries=128, show_spinner=False)
def pair_for(_teacher, _student, identities, text, word):
    return distillation.run_pair(_teacher.model, _student.model, _student.tokenizer, text, word)


@st.cache_data(max_entries=128, show_spinner=False)
def latencies(_teacher, _student, identities, text, settled):
    """Teacher and student timed in turns on this sentence (again once the background warm start ends)."""
    return compare.forward_latencies({"teacher": (_teacher.model, _teacher.tokenizer),
                                      "student": (_student.model, _student.tokenizer)}, text)


with ui.timed_forward():
    pair = pair_for(teacher, student, (teacher.identity, student.identity), fitted, word)
if pair is None:
    st.warning("This word left no piece in the tokenizer's output (a lone space or control character); pick another word.")
    st.stop()

# ----------------------------------------------------------------------------- 1. soft targets
m = pair.masked[0]
gold = compare.piece_text(student.tokenizer, pair.gold[0])
st.header(f"1 · Soft targets for {compare.md_code(words[word][0])}")
if len(pair.masked) > 1:
    st.info(f"This word is {len(pair.masked)} pieces in BERT's vocabulary: all of them are masked; the figures show "
            "the first piece, and the loss terms below cover every piece.")
t1, tT = distillation.soften(pair.t_logits[m], 1.0), distillation.soften(pair.t_logits[m], temperature)
s1, sT = distillation.soften(pair.s_logits[m], 1.0), distillation.soften(pair.s_logits[m], temperature)
ids = distillation.top_tokens(t1, s1, top_k)
shown = [compare.piece_text(student.tokenizer, i) for i in ids]
ui.show_figure(figs.soft_targets_figure(shown, t1[ids].tolist(), tT[ids].tolist(), s1[ids].tolist(), sT[ids].tolist(),
                                        temperature, gold), "distillation-soft-targets")
a, b, c = st.columns(3)
a.metric(f"Teacher's top token at T = {temperature:g}", f"{float(tT.max()):.1%}", f"{float(tT.max() - t1.max()):+.1%} vs T = 1",
         delta_color="off")
b.metric(f"Mass on the other {t1.numel() - 1:,} tokens", f"{float(1 - tT.max()):.1%}",
         f"{float(t1.max() - tT.max()):+.1%} vs T = 1", delta_color="off", help="The dark knowledge: what the teacher says about the wrong answers.")
c.metric(f"T² · KL at this token, T = {temperature:g}",
         f"{distillation.kl_term(pair.s_logits[m:m + 1], pair.t_logits[m:m + 1], temperature):.5f}")
st.caption(f"Pale bars: T = 1; solid bars: T = {temperature:g}. The tokens are the teacher's top {top_k} plus any of "
           "the student's that are not among them; ✓ marks the original word. Hover for exact probabilities.")

# ----------------------------------------------------------------------------- 2. temperature
st.header("2 · What the temperature does")
sweep = distillation.temperature_sweep(pair.s_logits[m], pair.t_logits[m])
ui.show_figure(figs.temperature_figure(sweep, temperature, R.temperature), "distillation-temperature")
st.caption("As T grows, both distributions flatten (their entropy rises towards log V) and the gap between them "
           "shrinks; the T² factor in the recipe keeps the soft-target term from vanishing with it.")

# ----------------------------------------------------------------------------- 3. loss terms
st.header("3 · The recipe's three loss terms on this input")
at_recipe = distillation.recipe_terms(pair, R.temperature)
at_yours = distillation.recipe_terms(pair, temperature)
names = {"kl": f"soft targets: T² · KL (α = {R.alpha_ce:g})", "mlm": f"masked LM: cross-entropy (α = {R.alpha_mlm:g})",
         "cos": f"hidden states: 1 − cosine (α = {R.alpha_cos:g})"}
table = [{"term": names[k], f"at T = {R.temperature:g} (recipe)": at_recipe[k],
          f"weighted, T = {R.temperature:g}": at_recipe["weighted"][k], f"at your T = {temperature:g}": at_yours[k]}
         for k in ("kl", "mlm", "cos")]
table.append({"term": "total (weighted sum)", f"at T = {R.temperature:g} (recipe)": None,
              f"weighted, T = {R.temperature:g}": at_recipe["total"], f"at your T = {temperature:g}": at_yours["total"]})
st.dataframe(table, hide_index=True, width="stretch",
             column_config={k: st.column_config.NumberColumn(format="%.5f") for k in table[0] if k != "term"})
if at_recipe["cos"] is None:
    st.info("The cosine term needs hidden states of the same size; this teacher and student differ, so it is left out.")
st.caption("Computed with `app.training.distilbert.distillation_losses`, the function the bundled student was "
           "trained with (here in float64, so that small values are exact), on the same positions as in training: soft targets and cosine on every token of the sentence, the MLM "
           "cross-entropy only at the masked word. Only the soft-target term depends on T (the last column uses "
           "your T for it, and in the total).")
kl_pos = distillation.kl_per_position(pair.s_logits, pair.t_logits, temperature)
ui.show_figure(figs.position_kl_figure(pair.tokens, kl_pos, pair.masked, temperature), "distillation-kl-per-token")

# ----------------------------------------------------------------------------- 4. size and speed
st.header("4 · Smaller and faster? Measured here")
warm = ui.warm_progress()
settled = warm is None or warm.get("seconds") is not None
timed = latencies(teacher, student, (teacher.identity, student.identity), fitted, settled)
if not settled:
    st.info("Models are still loading in the background, which slows everything down: these timings are "
            "provisional and are measured again once loading has finished.", icon=":material/hourglass_top:")
lt, ls = timed["teacher"], timed["student"]
sz = distillation.size_and_speed(teacher.model, student.model, lt["median_ms"], ls["median_ms"])
card = distillation.card_summary(catalogue.bundled_card_metrics(student.variant)) if student.is_bundled else {}
latency_col = f"forward on {teacher.device.upper()}, median (ms)"
st.dataframe([
    {"model": f"teacher ({teacher.variant.label})", "layers": sz["teacher_layers"], "parameters": sz["teacher_params"],
     latency_col: sz["teacher_ms"]},
    {"model": f"student ({student.variant.label})", "layers": sz["student_layers"], "parameters": sz["student_params"],
     latency_col: sz["student_ms"]},
], hide_index=True, width="stretch", column_config={
    "parameters": st.column_config.NumberColumn(format="localized"),
    latency_col: st.column_config.NumberColumn(format="%.2f"),
})
st.caption(f"Student / teacher: layers {sz['student_layers'] / sz['teacher_layers']:.2f}, parameters "
           f"{sz['student_params'] / sz['teacher_params']:.2f}, time {sz['student_ms'] / sz['teacher_ms']:.2f} "
           "(both timed in turns on your sentence, under torch.inference_mode).")
claims = {"paper": {"smaller": distillation.PAPER.smaller, "faster": distillation.PAPER.faster,
                    "retained": distillation.PAPER.retained},
          "measured here": {"smaller": sz["smaller"], "faster": sz["faster"], "retained": None}}
if card:
    claims["model card"] = {"smaller": None, "faster": card["faster"], "retained": card["retained_top1"]}
ui.show_figure(figs.claims_figure(claims), "distillation-claims")
lines = distillation.summary_lines(sz, card, student.is_bundled, compare.DEFAULTS.repeats)
for line in lines:
    st.markdown(f"- {line}")

st.markdown("**Takeaway:** the student does not only learn the right word, it learns the teacher's whole opinion — "
            "softened by T so the near-misses count — and half the layers buy the speed. How much smaller and faster "
            "it ends up depends on how much of the model the layers are; measure it, as above.")
ui.share_link(SPEC)
