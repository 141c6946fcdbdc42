"""The presenter console on the page (``app.lecture.console`` holds its rules): the projector's side — publish the
slide it shows, follow the console's moves, the deck bar's *Console* link — and the console page itself.

Both sides poll the room once a second in a fragment (``st.fragment(run_every=...)``): one small read of the room
store, no page rerun unless the slide changed; a move in one window shows in the other within about a second. A
projector polls that often only while a console is open (the console says so in the room at each poll); with none,
it looks every ``IDLE_POLL_S`` — a poll that lands in a slide change cost it ~0.1 s (BENCHMARKS.md, deck rows).
"""

from __future__ import annotations

import time

import streamlit as st

from app.core import text
from app.core.state import Param, Spec
from app.figures.words import figure_words
from app.lecture import console, deck

# session state: (code, secret) of this presenter's room, shared with Ask the class (app.ui.classroom)
ROOM = "_class_room"
SEEN = "_console_seen"  # session state: the position version this window last saw or wrote
DECKS = "_console_decks"  # session state (the console's): digest -> the deck's views, read once
SPEC = Spec(
    Param("room", "str", "", max_len=8, label="Room", pattern=r"[A-Z0-9]{6}", expects="a six-letter room code"),
    Param("key", "str", "", max_len=64, label="Key", pattern=r"[A-Za-z0-9_-]{8,64}", expects="the console's key"),
)
NOTE_STYLE = "font-size:1.7rem;line-height:1.4;margin:0.2rem 0 0.6rem 0;color:#111"
NEXT_STYLE = "font-size:1.25rem;line-height:1.35;margin:0;color:#222"
CLOCK_STYLE = "font-size:2.4rem;font-weight:700;font-variant-numeric:tabular-nums;margin:0;line-height:1.1"


def _rooms():
    from app.classroom.rooms import rooms

    return rooms()


def room() -> tuple[str, str]:
    """This presenter's room (code, secret): the one *Ask the class* uses, made on first use."""
    store = _rooms()
    made = st.session_state.get(ROOM)
    if made is None or store.view(made[0]) is None:
        made = st.session_state[ROOM] = store.create()
    return made


def _stored(code: str) -> console.Position | None:
    return console.Position.from_dict(_rooms().get(code, console.KEY))


# ----------------------------------------------------------------------------- the projector's side


def projector(n: int, views, encoded: str, go) -> None:
    """On a projector showing slide ``n`` of ``views`` (``encoded``: the session's own deck, "" for the default):
    follow a move the console made since this window last looked (``go(slide)`` switches, and does not return),
    else publish this slide when the room says another; then poll for the console's next move."""
    code, secret = room()
    store = _rooms()
    name = console.digest(encoded)
    stored = _stored(code)
    target = console.follow(st.session_state.get(SEEN), n, stored)
    if target is not None and stored.digest == name and target <= len(views):
        st.session_state[SEEN] = stored.version
        go(target)
    if stored is None or stored.slide != n or stored.digest != name or stored.total != len(views):
        if stored is None or stored.digest != name:
            for i, part in enumerate(console.parts(encoded)):
                store.put(code, secret, console.DECK_KEY.format(i), part)
        stored = console.moved(stored, n, len(views), name, time.time())
        store.put(code, secret, console.KEY, stored.to_dict())
    st.session_state[SEEN] = stored.version
    if console.console_open(store.get(code, console.ALIVE_KEY), time.time()):
        _follow(code, n, name, go)
    else:
        _look_for_console(code, n, name, go)


def _follow_once(code: str, n: int, name: str, go) -> None:
    """The console moved → this window shows that slide (a full rerun of the page)."""
    stored = _stored(code)
    target = console.follow(st.session_state.get(SEEN), n, stored)
    if target is not None and stored.digest == name:
        st.session_state[SEEN] = stored.version
        go(target)


@st.fragment(run_every=console.POLL_S)
def _follow(code: str, n: int, name: str, go) -> None:
    """The projector's poll while a console is open."""
    _follow_once(code, n, name, go)


@st.fragment(run_every=console.IDLE_POLL_S)
def _look_for_console(code: str, n: int, name: str, go) -> None:
    """The projector's poll while no console is open: follow a move, and once a console opens, rerun the page so
    that the quick poll takes over."""
    _follow_once(code, n, name, go)
    if console.console_open(_rooms().get(code, console.ALIVE_KEY), time.time()):
        st.rerun(scope="app")


def console_button(base: str) -> None:
    """The deck bar's link that opens the console in a new window (its own address: the room's code and key)."""
    code, secret = room()
    st.link_button(
        "Console",
        console.link(base, code, secret),
        icon=":material/co_present:",
        help="Open the presenter console in a new window on your own screen: the speaker note, the next "
        "slide, the time, the slide list. → and ← there move this window too.",
    )


# ----------------------------------------------------------------------------- the console page


def _deck_of(code: str, position: console.Position):
    """The views of the deck the projector shows, or None when the room does not hold it (yet)."""
    if not position.digest:
        return deck.default_deck()
    known = st.session_state.setdefault(DECKS, {})
    if position.digest not in known:
        stored = [_rooms().get(code, console.DECK_KEY.format(i)) for i in range(console.PARTS)]
        encoded = console.joined([s for s in stored if s is not None], position.digest)
        if encoded is None:
            return None
        known[position.digest] = deck.decode(encoded, spec_of=None)[0]
    return known[position.digest]


def _move(code: str, secret: str, slide: int) -> None:
    """A console button's on_click: the projector's next position (it follows within a second)."""
    stored = _stored(code)
    if stored is None:
        return
    moved = console.moved(stored, slide, stored.total, stored.digest, time.time())
    if _rooms().put(code, secret, console.KEY, moved.to_dict()):
        st.session_state[SEEN] = moved.version


def page() -> None:
    """The console: the room from the address (``?room=&key=``), then the live panel; a clear sentence when the
    address names no presentation."""
    from app import ui

    values = ui.bind(SPEC)
    code, secret = values["room"], values["key"]
    stored = _stored(code) if code and secret else None
    if stored is not None and _rooms().tally(code, secret) is None:  # the room's code alone (students see it when
        stored = None  # the class is asked) opens no console: its key is the presenter's secret
    if stored is None:
        st.info(
            "This console follows a presentation: open it from the projector's window — the **Console** button in "
            "the deck bar (Lecture mode → *Present from slide 1*). Its address carries the room's code and key.",
            icon=":material/co_present:",
        )
        st.page_link("pages/lecture.py", label="Lecture mode", icon=":material/slideshow:")
        return
    _panel(code, secret, stored.slide)
    views = _deck_of(code, stored)
    forward = console.neighbours(min(stored.slide, len(views)), len(views))[1] if views else None
    if forward is not None:
        _thumbnail(views[forward - 1], forward)


THUMB_HEIGHT = 260  # px: the next slide's stage figure on the console, small enough to sit under the panel


def _thumbnail(view, n: int) -> None:
    """The next slide's stage figure, small and still: what the projector will show after →. Its Result is the one
    every session shares (``app.ui.cache.shared_result``): the projector's warm start has usually made it already.
    Drawn at the console's full runs only (the panel's poll reruns the page when the slide changes), so the second-
    by-second poll never resends a figure."""
    import importlib

    from app.core import state
    from app.figures import stage_figure
    from app.lecture import handout
    from app.ui import loading, stage
    from app.ui.cache import shared_result

    st.markdown(f'<p style="{NEXT_STYLE}"><b>Slide {n} will show:</b></p>', unsafe_allow_html=True)
    build = handout.key_figure_function(view)
    try:
        lib, values = handout.library(view), handout.values_of(view)
        settings_ = loading.settings()
        models = {key: loading.shared_model(key, *settings_) for key in handout.models_for(view)}
        result = shared_result(lib.run, models, lib.Inputs.from_values(values))
        fig = (
            stage_figure(importlib.import_module(build.__module__), result, values.get(state.FIGURE)) if build else None
        )
    except Exception as failed:  # a model that cannot load, a view with nothing to show: say so, never a traceback
        st.caption(f"No preview: {text.md(str(failed) or type(failed).__name__, 120)}")
        return
    if not hasattr(fig, "update_layout"):  # bertviz's document (attention): a page of its own, not a thumbnail
        st.caption("No preview: this slide's stage is an interactive document (bertviz).")
        return
    fig.update_layout(height=THUMB_HEIGHT, showlegend=False)  # its own margins: the tick labels keep their room
    fig.update_xaxes(automargin=True)
    fig.update_yaxes(automargin=True)
    st.plotly_chart(
        fig,
        key="bve-console-thumbnail",
        config={"staticPlot": True, "displayModeBar": False},
        theme=None,
        on_select="ignore",
    )
    stage.alt_text(figure_words(fig), hidden=True)


@st.fragment(run_every=console.POLL_S)
def _panel(code: str, secret: str, drawn: int) -> None:
    """The live part of the console, polled each second; ``drawn``: the slide the page's last full run drew (its
    thumbnail of the next slide): another slide now reruns the whole page."""
    _rooms().put(
        code, secret, console.ALIVE_KEY, console.alive(time.time())
    )  # the projector polls quickly while this is recent
    stored = _stored(code)
    if stored is not None and stored.slide != drawn:
        st.rerun(scope="app")
    views = _deck_of(code, stored) if stored is not None else None
    if stored is None or not views:
        st.warning(
            "The presentation's room is gone (it ended, or the server restarted): open the console again "
            "from the projector's deck bar.",
            icon=":material/link_off:",
        )
        return
    n = min(stored.slide, len(views))
    here, (back, forward) = views[n - 1], console.neighbours(n, len(views))
    left, right = st.columns([3, 2], gap="medium")
    lesson = deck.lesson_of(here.page)
    left.markdown(
        f'<p style="{NEXT_STYLE}"><b>Slide {n} / {len(views)}</b> · {text.html(lesson.title)}</p>'
        f'<p class="bve-console-title" style="font-size:2rem;font-weight:700;margin:0;line-height:1.2">'
        f"{text.html(here.title)}</p>",
        unsafe_allow_html=True,
    )
    with left.container(key="bve-console-note", border=True):
        st.markdown(
            f'<p class="bve-console-note" style="{NOTE_STYLE}">'
            f'{text.html(here.note) or "<i>No speaker note for this slide.</i>"}</p>',
            unsafe_allow_html=True,
        )
    buttons = left.columns(2)
    buttons[0].button(
        "Previous",
        icon=":material/arrow_back:",
        key="bve-console-back",
        disabled=back is None,
        on_click=_move,
        args=(code, secret, back or n),
        shortcut="Left",
        width="stretch",
        help="The previous slide, on the projector too (← key)",
    )
    buttons[1].button(
        "Next",
        icon=":material/arrow_forward:",
        key="bve-console-next",
        icon_position="right",
        disabled=forward is None,
        on_click=_move,
        args=(code, secret, forward or n),
        shortcut="Right",
        type="primary",
        width="stretch",
        help="The next slide, on the projector too (→ key)",
    )
    with left.container(key="bve-console-next-slide", border=True):
        if forward is None:
            st.markdown(f'<p style="{NEXT_STYLE}"><b>Next:</b> the end of the deck.</p>', unsafe_allow_html=True)
        else:
            after = views[forward - 1]
            nxt = deck.lesson_of(after.page)
            st.markdown(
                f'<p style="{NEXT_STYLE}"><b>Next, slide {forward}:</b> '
                f'<span class="bve-console-next-title">{text.html(after.title)}</span></p>'
                f'<p style="{NEXT_STYLE};color:#444">{text.html(nxt.title)} — {text.html(nxt.line)}</p>'
                + (
                    f'<p style="{NEXT_STYLE};color:#444;font-style:italic">{text.html(after.note)}</p>'
                    if after.note
                    else ""
                ),
                unsafe_allow_html=True,
            )
    right.markdown(
        f'<p class="bve-console-clock" style="{CLOCK_STYLE}">'
        f'{console.clock(time.time() - stored.started)}</p><p style="margin:0 0 0.5rem 0;color:#555">'
        "since the presentation began</p>",
        unsafe_allow_html=True,
    )
    with right.container(key="bve-console-list", height=420):
        for i, v in enumerate(views, 1):
            st.button(
                f"{i}. {text.plain(v.title, 90)}",
                key=f"bve-console-slide-{i}",
                on_click=_move,
                args=(code, secret, i),
                type="primary" if i == n else "tertiary",
                width="stretch",
                help=f"Show slide {i} on the projector",
            )
