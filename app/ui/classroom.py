"""Ask the class, on the projector (issue 50): the lecturer presses **Ask the class**, the lesson's question is made
from this run's Result (its ``question(result)``, :mod:`app.classroom.question`), and the stage shows the question,
a join QR with the room's code and a live count — never the model's answer, whose figure is held back until
**Reveal**. Reveal draws the hall's answers beside the model's (``app.figures.classroom``) with one computed
sentence; **Next question** (or another slide) clears it.

The room lives in the one room store (``app.classroom.rooms.rooms()``: this process, or Redis with
``BVE_REDIS_URL``); this session keeps only its code and secret. The students' page is served beside Streamlit on
the same port (``app.classroom.mount.attach``), at ``<address students use>/class/<code>``.
"""

from __future__ import annotations

import sys

import streamlit as st

from app.classroom import question as questions
from app.core import text
from app.ui import stage
from app.ui.console import ROOM  # noqa: F401 — the presenter's room: the console's too

ASKED = "_class_asked"  # session state: the question asked (Question.to_dict()), answer held back; None: none open
REVEALED = "_class_revealed"  # session state: the reveal's payload once revealed
CURRENT = "_class_current"  # session state: the question this run's Result makes (None: the lesson has none)
SERVED = "_class_served"  # session state: whether the students' page is served by this server (mount.attach)
WHERE = "_class_where"  # session state: (page, slide) the open question was asked on
ANSWERS = "_class_answers"  # session state: this lecture's revealed questions, for the handout (opt-in)
BOX = "bve-class"  # the stage's class panel (CSS class st-key-bve-class)
ASK_BOX = "bve-class-ask-box"
PROMPT_STYLE = "font-size:1.6rem;line-height:1.3;font-weight:600;margin:0"
JOIN_STYLE = "font-size:1.25rem;line-height:1.4;margin:0"
CHOICES_STYLE = "font-size:1.25rem;margin:0;color:#333"
#: the Ask button sits level with the page's title (the stage's top right), so the stage figure keeps its height
ASK_CSS = (
    f"<style>.st-key-{stage.STAGE_KEY} {{ position: relative; }} .st-key-{ASK_BOX} {{ position: absolute; "
    "top: -3.7rem; right: 0; width: auto !important; z-index: 5; }}</style>"
)


def _rooms():
    from app.classroom.rooms import rooms

    return rooms()


HELD = "The lesson's figure shows the model's answer: it comes back with *Next question*."


def holding() -> bool:
    """Whether a question to the class has this projector's stage (open, or revealed): the lesson's stage figure
    and takeaway (which show the model's answer) wait for *Next question*."""
    return stage.presenting() and st.session_state.get(ASKED) is not None


def offer(fn, result) -> None:
    """After a lesson's run, on a projector: the question its Result makes (the lesson module's ``question``) and
    the class panel — the sidebar's button, and on the stage the open question, its QR, count and reveal."""
    if not stage.presenting():
        return
    maker = getattr(sys.modules.get(getattr(fn, "__module__", "")), "question", None)
    made = None
    if maker is not None:
        try:
            made = maker(result)
        except Exception:  # noqa: BLE001 — a question that cannot be made is no question, never a traceback
            made = None
    st.session_state[CURRENT] = None if made is None else made.to_dict()
    asked = st.session_state.get(ASKED)
    if asked is not None and st.session_state.get(WHERE) != _where():
        clear()  # another page or another slide: the question asked on the last one closes
        asked = None
    if made is not None and asked is None:  # on the stage's top right, level with the title: the stage stays whole
        st.html(ASK_CSS)
        stage.stage().container(key=ASK_BOX).button(
            "Ask the class",
            key="bve-class-ask",
            on_click=ask,
            icon=":material/how_to_vote:",
            help="Students answer on their phones before the model's answer is shown.",
        )
    st.session_state[stage.HOLD] = holding()
    if asked is not None:
        panel(questions.Question.from_dict(asked))


def ask() -> None:
    """Open this run's question in this presenter's room (made on first use), answers from nobody yet."""
    made = st.session_state.get(CURRENT)
    if made is None:
        return
    from app.classroom import mount

    st.session_state[SERVED] = mount.attach()
    store = _rooms()
    room = st.session_state.get(ROOM)
    if room is None or store.view(room[0]) is None:
        room = st.session_state[ROOM] = store.create()
    if store.ask(room[0], room[1], made):
        st.session_state[ASKED], st.session_state[REVEALED] = made, None
        st.session_state[WHERE] = _where()


def _where() -> tuple:
    """This run's page and deck slide: a question belongs to the view it was asked on."""
    from app.ui import url

    return url.page(), url.setting("slide")


def reveal() -> None:
    """Close the question and show the hall's answers beside the model's, on the stage and on every phone."""
    asked, room = st.session_state.get(ASKED), st.session_state.get(ROOM)
    if asked is None or room is None:
        return
    store = _rooms()
    tally = store.tally(*room) or {}
    payload = questions.reveal(questions.Question.from_dict(asked), tally)
    store.reveal(room[0], room[1], payload)
    st.session_state[REVEALED] = payload
    slide = st.session_state.get(WHERE, (None, None))[1]
    st.session_state.setdefault(ANSWERS, []).append(
        {"slide": slide, "prompt": asked["prompt"], "sentence": payload["sentence"]}
    )


def answers() -> list[dict]:
    """The questions revealed in this session's lecture, in order: {slide, prompt, sentence}."""
    return list(st.session_state.get(ANSWERS, []))


def clear() -> None:
    """Next question, or another slide: no question open."""
    room = st.session_state.get(ROOM)
    if room is not None and st.session_state.get(ASKED) is not None:
        _rooms().clear(*room)
    st.session_state[ASKED], st.session_state[REVEALED] = None, None


def join_link() -> str:
    """Where students answer: the address they use (lecture mode's) and the room's code."""
    from app.ui import lecture

    room = st.session_state.get(ROOM)
    return f"{lecture.public_base().rstrip('/')}/class/{room[0]}" if room else ""


def panel(question: questions.Question) -> None:
    """The stage's class panel: the question, the join QR and code, the live count; after Reveal, the histogram
    and its sentence. Every word of the question is escaped HTML (it carries the user's sentence)."""
    from app.figures.classroom import reveal_figure
    from app.lecture import qr
    from app.ui import lecture

    room = st.session_state.get(ROOM)
    box = stage.stage().container(key=BOX, border=True)
    box.html(f'<p style="{PROMPT_STYLE}">{text.html(question.prompt)}</p>')
    payload = st.session_state.get(REVEALED)
    if payload is None:
        left, right = box.columns([1, 3], vertical_alignment="center")
        link = join_link()
        try:
            left.image(qr.png(link, 320), width=180, alt=f"QR code to answer at {link}")
        except Exception:  # noqa: BLE001 — a link too long for a code still works typed
            pass
        right.html(
            f'<p style="{JOIN_STYLE}">Answer on your phone: <b>{text.html(link)}</b> · room '
            f'<b style="letter-spacing:0.08em">{text.html(room[0])}</b></p>'
        )
        if lecture.students_cannot_reach(link.rsplit("/class/", 1)[0]):
            guess = qr.lan_address(link) if link else None
            right.warning(
                "This address is this computer itself: phones cannot reach it. Set the address students "
                "use in the sidebar (*Lecture*)" + (f", perhaps {text.md(guess, 80)}" if guess else "") + ".",
                icon=":material/link_off:",
            )
        if st.session_state.get(SERVED) is False:
            right.warning(
                "The students' page could not be added to this server; start it with `python -m app.serve`.",
                icon=":material/error:",
            )
        with right:
            _count(room[0])
        a, b = right.columns(2)
        a.button("Reveal", key="bve-class-reveal", on_click=reveal, icon=":material/visibility:", type="primary")
        b.button("Next question", key="bve-class-next", on_click=clear, icon=":material/skip_next:")
        if question.choices:
            box.html(f'<p style="{CHOICES_STYLE}">' + " · ".join(text.html(c) for c in question.choices) + "</p>")
        box.caption(HELD)
    else:
        with box:
            stage.show_figure(reveal_figure(payload), "class-reveal")
        box.html(f'<p style="{JOIN_STYLE}">{text.html(payload["sentence"])}</p>')
        box.button("Next question", key="bve-class-next", on_click=clear, icon=":material/skip_next:")


@st.fragment(run_every=1.0)
def _count(code: str) -> None:
    """The live count, refreshed every second without rerunning the page."""
    view = _rooms().view(code) or {}
    st.html(
        f'<p class="bve-class-count" style="{JOIN_STYLE}"><b style="font-size:2rem">{int(view.get("count", 0))}'
        "</b> answered</p>"
    )
