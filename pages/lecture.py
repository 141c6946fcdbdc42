"""Lecture mode: the deck of prepared views a lecturer presents one per screen — see it, reorder and remove
views, title them and give each a speaker note, save and load it as a file, present it, build the handout.
The deck's logic is app/lecture/deck.py, the handout app/lecture/handout.py; presenting is the deck bar (app/ui/)."""

import hashlib

import streamlit as st

from app import ui
from app.ui import classroom
from app.lecture import deck
from app.core.state import Spec
from app.core.text import md, plain


def move(i: int, by: int) -> None:
    ui.set_deck(deck.move(ui.deck_views(), i, by))


def remove(i: int) -> None:
    ui.set_deck(deck.remove(ui.deck_views(), i) or ())
    if not ui.own_deck():
        st.session_state["_lecture_emptied"] = True


def ask(flag: str) -> None:
    st.session_state[flag] = True


def present(n: int) -> None:
    st.session_state["presenter"] = True
    st.session_state["_present_from"] = n


st.title("Lecture mode")
ui.intro(
    "A lecture is a sequence: **a deck** of prepared views — a lesson in exactly the state you chose, with a title "
    "and a one-line speaker note — presented one per screen, the key figure first, in view on a 1280×720 projector. "
    "← and → (or a clicker's Page Up / Page Down) move between slides; the **QR** button shows a code students scan "
    "to open the very view on their own devices. Build your own deck with *Add this view to my deck* under any "
    "lesson's *Link to this view*, or start from the usual lecture below."
)
ui.bind(Spec())
if st.session_state.get("_present_from"):
    ui.go_to_slide(st.session_state.pop("_present_from"))

views, own = ui.deck_views(), ui.own_deck()
if st.session_state.pop("_lecture_emptied", False):
    st.info("Your deck is empty, so the default deck is shown again.")

# ----------------------------------------------------------------------------- present
st.header("Present")
p1, p2 = st.columns([1, 3], vertical_alignment="center")
p1.button(
    "Present from slide 1",
    icon=":material/slideshow:",
    type="primary",
    key="lecture.present",
    on_click=present,
    args=(1,),
)
p2.markdown("Or open this one link on the projector's computer — the whole deck, in presenter mode:")
st.code(ui.present_link(1), language=None, wrap_lines=True)
st.caption(
    "The link holds the deck itself"
    if own
    else "The link opens the default deck (no deck in it: it follows this app's version)"
)

# ----------------------------------------------------------------------------- the deck
st.header(f"Your deck: {len(views)} slides" if own else f"The default deck: {len(views)} slides")
if not own:
    st.caption(
        "The usual lecture on BERT variants, from the examples gallery. Reorder, remove or retitle a slide and "
        "it becomes your deck; *Add this view to my deck* on a lesson starts a deck of your own."
    )
for i, v in enumerate(views):
    lesson = deck.lesson_of(v.page)
    with st.container(border=True, key=f"lecture-slide-{i}"):
        row = st.columns([0.5, 8, 0.7, 0.7, 0.7, 0.9], vertical_alignment="center")
        row[0].markdown(f"**{i + 1}**")
        with row[1]:
            st.page_link(
                lesson.path,
                label=plain(v.title or lesson.title),
                icon=lesson.icon,
                query_params=v.params or None,
                help=f"{lesson.title} in this view's state",
            )
            if v.note:
                ui.user_caption(v.note)  # a deck's notes are user text: shown as typed, never as markdown
        row[2].button(
            "",
            icon=":material/arrow_upward:",
            key=f"lecture.up.{i}",
            on_click=move,
            args=(i, -1),
            disabled=i == 0,
            help="Earlier",
        )
        row[3].button(
            "",
            icon=":material/arrow_downward:",
            key=f"lecture.down.{i}",
            on_click=move,
            args=(i, 1),
            disabled=i == len(views) - 1,
            help="Later",
        )
        row[4].button(
            "",
            icon=":material/delete:",
            key=f"lecture.remove.{i}",
            on_click=remove,
            args=(i,),
            help="Remove from the deck",
        )
        row[5].button(
            "",
            icon=":material/play_arrow:",
            key=f"lecture.present.{i}",
            on_click=present,
            args=(i + 1,),
            help=f"Present from slide {i + 1}",
        )

with st.expander("Titles and speaker notes", icon=":material/edit_note:"):
    version = hashlib.sha1(st.session_state.get("deck", "").encode()).hexdigest()[:10]
    edited = st.data_editor(
        [
            {"slide": i + 1, "lesson": deck.lesson_of(v.page).title, "title": v.title, "speaker note": v.note}
            for i, v in enumerate(views)
        ],
        key=f"lecture.titles.{version}",
        hide_index=True,
        width="stretch",
        disabled=("slide", "lesson"),
        column_config={
            "title": st.column_config.TextColumn(max_chars=deck.TITLE_LIMIT, width="medium"),
            "speaker note": st.column_config.TextColumn(max_chars=deck.NOTE_LIMIT, width="large"),
        },
    )
    retitled = deck.titled(views, [row["title"] for row in edited], [row["speaker note"] for row in edited])
    if retitled != views:
        ui.set_deck(retitled)
        st.rerun()

# ----------------------------------------------------------------------------- save and load
st.subheader("Keep it")
k1, k2 = st.columns(2)
k1.download_button(
    "Download the deck (JSON)",
    deck.to_json(views),
    file_name="lecture-deck.json",
    mime="application/json",
    icon=":material/download:",
    key="lecture.download",
    on_click="ignore",
)
if own:
    k1.button(
        "Back to the default deck", icon=":material/restart_alt:", key="lecture.reset", on_click=ui.set_deck, args=((),)
    )
upload = k2.file_uploader("Load a deck (JSON)", type=["json"], key="lecture.upload", max_upload_size=1)
if upload is not None and st.session_state.get("_lecture_loaded") != upload.file_id:
    st.session_state["_lecture_loaded"] = upload.file_id
    loaded, notes = deck.from_json(upload.getvalue())
    st.session_state["_lecture_notes"] = notes
    if loaded:
        ui.set_deck(loaded)
        st.session_state["_lecture_notes"].insert(0, f"Loaded a deck of {len(loaded)} slides.")
    st.rerun()
for note in st.session_state.pop("_lecture_notes", []):
    st.info(note, icon=":material/upload_file:")

# ----------------------------------------------------------------------------- handout
st.header("Handout")
st.markdown(
    "The deck as one file to share after class: every slide's key figure, its takeaway and the link (and a "
    "QR code) that opens it live. It opens offline; the figures stay interactive in the HTML."
)
key = (st.session_state.get("deck", ""), ui.public_base(), ui.settings())
if ui.students_cannot_reach(ui.public_base()):
    st.warning(
        "The handout's links and QR codes would point at this computer itself "
        f"({md(ui.public_base() or 'an address the browser has not said yet', 60)}): students' devices cannot "
        "reach it. Set *the address students use* in the sidebar (*Lecture*), or start the server with "
        "BVE_PUBLIC_URL, before building it.",
        icon=":material/wifi_off:",
    )
made = st.session_state.get("_handout")
st.button(
    "Build the handout",
    icon=":material/description:",
    key="lecture.handout",
    on_click=ask,
    args=("_build",),
    help="Runs every slide's lesson on this server's models: tens of seconds for the whole deck.",
)
asked = classroom.answers()
with_answers = st.checkbox(
    f"Add the class's answers ({len(asked)} questions revealed in this session)",
    key="lecture.handout.answers",
    disabled=not asked,
    help="Off by default: the handout then holds the deck alone.",
)
if st.session_state.pop("_build", False):
    document, pdf, notes = ui.build_handout(views, answers=asked if with_answers else None)
    made = st.session_state["_handout"] = {"key": key, "html": document, "pdf": pdf, "notes": notes}
if made and made["key"] == key:
    for note in made["notes"]:
        st.warning(note)
    h1, h2 = st.columns(2)
    h1.download_button(
        "Download the handout (HTML)",
        made["html"],
        file_name="lecture-handout.html",
        mime="text/html",
        icon=":material/download:",
        key="lecture.handout.html",
        on_click="ignore",
    )
    if made["pdf"]:
        h2.download_button(
            "Download the handout (PDF)",
            made["pdf"],
            file_name="lecture-handout.pdf",
            mime="application/pdf",
            icon=":material/picture_as_pdf:",
            key="lecture.handout.pdf",
            on_click="ignore",
        )
    else:
        h2.caption("PDF: no chromium on this server to print it with; open the HTML and print it from a browser.")
elif made:
    st.caption("The deck or the settings changed since the last handout: build it again.")
