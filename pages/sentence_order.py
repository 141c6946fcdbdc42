"""NSP vs SOP: two sentences scored by ALBERT's sentence-order head and BERT's next-sentence head, in order
and swapped; generated pairs from held-out stories measure each head on each task (whether they show why ALBERT
found NSP easy and SOP not is computed from the grid). All computation is
app/lessons/sentence_order.py (``run``); the figures are app/figures/sentence_order.py."""

import streamlit as st

from app.lessons import sentence_order as lesson
from app import ui
from app.figures import sentence_order as figures

SPEC = lesson.SPEC

st.title("NSP vs SOP: sentence objectives")
ui.intro(
    "Besides filling in masked words, BERT was trained to answer a question about **two segments** A and B: does "
    "B follow A in the text? Its negatives took B from **another document** (*next-sentence prediction*, NSP). "
    "ALBERT (Lan et al., 2020) argued that this is too easy — another document is nearly always another topic — "
    "and replaced it with **sentence-order prediction** (SOP): the negatives are the *same two segments swapped*, "
    "so only their order tells them apart. Type two sentences and see what each model's own sentence head says."
)
values = ui.bind(SPEC)
c1, c2 = st.columns(2)
ui.widget(SPEC.text, c1, height=80)
ui.widget(SPEC.text_b, c2, height=80)

models = {key: ui.try_model(key) for key in lesson.MODELS}  # a head that cannot be loaded is left out, with a note
r = ui.run(lesson.run, models, lesson.Inputs.from_values(values))
ui.show_notes(r.notes)

# ----------------------------------------------------------------------------- your two sentences
st.header("Your two sentences, in order and swapped")
ui.show_figure(figures.key_figure(r), "sentence-order-your-pair", key=True)
cols = st.columns(len(r.heads))
for col, h in zip(cols, r.heads):
    ab, ba = r.user[h.key]
    col.metric(
        f"{h.name}: P({h.says}) for (A, B)",
        f"{ab[1]:.1%}",
        delta=f"{ba[1] - ab[1]:+.1%} when swapped",
        delta_color="off",
    )
st.caption(
    "Bars: each head's softmax probability that B does **not** follow A — *swapped* for the SOP head, *not the "
    "next segment* for the NSP head (index 1 of its two logits; hover for both). "
    + lesson.pair_story(r.heads, r.user)
    + " "
    + " ".join(f"{h.name}: {h.shown_as}." for h in r.heads)
)

# ----------------------------------------------------------------------------- who solves which task
st.header(r.grid.heading)  # computed from the grid: "Why NSP is easy and SOP is not" only when the heads show it
st.markdown(
    "Below, pairs are generated from held-out stories (text none of the models trained on): two consecutive "
    f"segments of {lesson.DEFAULTS.segment_sentences[0]}–{lesson.DEFAULTS.segment_sentences[1]} sentences "
    "**in order**; the same A with B taken from **another story** — NSP's negative, a change of topic; "
    "and the two **swapped** — SOP's negative, the same topic and the same words. *Shared words* counts the "
    "content words A and B have in common: it separates another story from the rest, but says nothing about order."
)
e1, e2 = st.columns([1, 2])
ui.widget(SPEC.seed, e1)
ui.widget(SPEC.examples, e2)
rows = []
for s in r.examples:
    row = {
        "pair": s.pair.base,
        "kind": lesson.KIND_LABELS[s.pair.kind],
        "A": s.pair.a,
        "B": s.pair.b,
        "shared words": s.shared,
    }
    row.update({f"{h.name}: P({h.says})": s.p_not[h.key] for h in r.heads})
    rows.append(row)
st.dataframe(
    rows,
    hide_index=True,
    width="stretch",
    column_config={
        f"{h.name}: P({h.says})": st.column_config.ProgressColumn(
            f"{h.name}: P({h.says})", min_value=0.0, max_value=1.0, format="%.2f"
        )
        for h in r.heads
    },
)
shared = r.mean_shared
topic = (
    "A topic detector can solve NSP from that alone"
    if shared["other story"] < shared["in order"]
    else "Here that does not separate another story from the rest"
)
st.caption(
    f"Over {r.n_pairs} pairs of each kind, A and B share on average {shared['in order']:.2f} content words in order, "
    f"{shared['other story']:.2f} when B comes from another story, and {shared['swapped']:.2f} swapped (the same "
    f"two segments). {topic}; for SOP it has nothing to go on."
)
k1, k2 = st.columns(2)
with k1:
    ui.show_figure(figures.kinds_figure(r), "sentence-order-kinds", key="kinds")
with k2:
    ui.show_figure(figures.accuracy_figure(r), "sentence-order-accuracy", key="accuracy")
st.caption(
    "Left: the mean probability each head gives to *does not follow* on each kind of pair. Right: each head's "
    f"accuracy (probability above 0.5 = *does not follow*) on each task over {2 * r.n_pairs} pairs, half of them "
    "negatives: 50% is chance. A head beats chance when the whole 95% interval (Wilson's, for a binomial "
    f"proportion of {2 * r.n_pairs} pairs) lies above 50%. ALBERT's paper measured the same grid at full scale "
    "(Table 5): the NSP-trained model was at chance on SOP, the SOP-trained one did well on both. The experiment "
    "behind the link below replays it with tiny models trained side by side."
)
st.markdown("\n".join(f"- {line}" for line in r.grid.lines))  # what the grid shows, computed from it

ui.takeaway(lesson.takeaway(r))
ui.claim_line("sentence")
ui.share_link(SPEC)
