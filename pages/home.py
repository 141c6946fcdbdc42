"""Home: what the app is, the map of lessons, and which models are available where."""

import streamlit as st

from app import ui
from app.lecture.examples import EXAMPLES
from app.lessons import LESSONS
from app.models import catalogue
from app.models.device import cuda_available
from app.core import text
from app.core.state import Spec

# a card's title (and an example's) wraps onto a second line instead of ending in "…" (a page link is one line)
CARD_CSS = """<style>[data-testid="stMain"] [data-testid="stPageLink-NavLink"] * {
  white-space: normal !important; overflow: visible !important; text-overflow: clip !important; }</style>"""

st.title("BERT Variants Explorer")
st.markdown(
    "BERT started a family. Each member changed **one idea** — how tokens are masked, how parameters are "
    "shared, what the model is asked to predict — and this app lets you *see* each change, live, on your own "
    "sentence, with real pretrained models. It runs fully offline on a laptop CPU, for students exploring "
    "on their own and for lecturers on a projector."
)
ui.bind(Spec())

st.header("Lessons")
if LESSONS:
    st.html(CARD_CSS)
    per_row = min(3, len(LESSONS))
    for start in range(0, len(LESSONS), per_row):  # row by row: a phone stacks columns, so the cards stay in
        cols = st.columns(per_row)  # teaching order there too (column by column they did not)
        for col, lesson in zip(cols, LESSONS[start : start + per_row]):
            with col.container(border=True):
                st.page_link(lesson.path, label=f"**{lesson.title}**", icon=lesson.icon)
                st.caption(lesson.line)
else:
    st.caption("The lessons arrive as they are finished; the model layer below is what they stand on.")

st.header("Examples to open in class")
st.caption("Each link opens a lesson in exactly this state — seeds included — so it shows the same thing every time.")
st.page_link(
    "pages/lecture.py",
    label="**Lecture mode**: present them in order as a deck, one per screen, with a QR "
    "code for the class and a handout",
    icon=":material/slideshow:",
)
by_page = {}
for ex in EXAMPLES:
    by_page.setdefault(ex.page, []).append(ex)
titles = {lesson.path: lesson for lesson in LESSONS}
shown = [p for p in by_page.items() if p[0] in titles]
for start in range(0, len(shown), 2):  # row by row, like the cards: in order on a phone's one column
    for col, (page, examples) in zip(st.columns(2), shown[start : start + 2]):
        with col:
            st.markdown(f"**{titles[page].title}**")
            for ex in examples:
                st.page_link(
                    page, label=ex.label, icon=":material/play_circle:", query_params=ex.query or None, help=ex.why
                )

st.header("Models")
source, device, dtype = ui.settings()
columns = ("variant", "what it changed", "tokenizer", "bundled stand-in", "real checkpoint")
rows = []
for v in catalogue.CATALOGUE.values():
    params = catalogue.bundled_parameter_count(v)
    rows.append(
        (
            v.label,
            v.idea,
            v.tokenizer_kind,
            f"{params / 1e6:.2f} M parameters" if v.bundled_available() and params else "not built",
            v.hub_id,
        )
    )
if ui.phone():  # one short block per model: five columns made the page 683 px wide on a 390-px phone (issue 52)
    st.markdown(
        "\n".join(
            f"- **{text.plain(label)}**: {text.plain(idea)}  \n  {text.plain(kind)} · "
            f"{text.plain(size)} · {text.plain(hub)}"
            for label, idea, kind, size, hub in rows
        )
    )
else:  # a markdown table, not st.table: that would import pandas (~0.3 s) on the page a server shows first (issue 30)
    st.markdown(
        "\n".join(
            [f"| {' | '.join(columns)} |", "|" + "---|" * len(columns)]
            + [f"| {' | '.join(text.plain(cell) for cell in row)} |" for row in rows]
        )
    )
where = {
    "bundled": "the bundled stand-ins (offline)",
    "auto": "the real checkpoints already in this machine's Hugging Face cache, else the bundled stand-ins (offline)",
    "hub": "the Hugging Face hub when it answers, else the bundled stand-ins",
}[source]
gpu = (
    'A CUDA GPU is present.'
    if cuda_available()
    else 'No GPU here: everything runs on the CPU, which the bundled models are made for.'
)
st.markdown(
    f"Models now come from **{where}** and run on **{device.upper()}**"
    f"{' · ' + dtype if device == 'cuda' else ''}. "
    f"{gpu} "
    "Change either in the sidebar."
)
warm = ui.warm_progress()
if warm and warm["seconds"] is None:
    st.progress(
        len(warm["done"]) / max(1, warm["total"]),
        text=f"Warming up: {len(warm['done'])} of {warm['total']} bundled models loaded, so no lesson waits…",
    )
elif warm:
    st.caption(f"All {warm['total']} bundled models were loaded at server start in {warm['seconds']:.1f} s.")
st.caption(
    "The bundled models are tiny (a few million parameters) and were trained by this project's own recipes on "
    "TinyStories, so they know simple English. Each one follows its real family's conventions — tokenizer, "
    "special tokens, model class — so the same code runs the real checkpoints when the hub is reachable."
)
