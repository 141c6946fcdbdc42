"""Lecture mode on the page: the deck bar, following the deck a link brings, the QR code of a view, the address
students use, and the handout build.

A deck (app/lecture/deck.py) is a sequence of prepared views. The URL says which deck (``deck``, absent: the
default deck) and which view is on the screen (``slide``); the router draws the deck bar above the page while one
is; Back/Next (and the arrow keys) switch to the neighbouring view's page with that view's state.
"""

from __future__ import annotations

import os

import streamlit as st

from app.core import state, text
from app.lecture import deck
from app.lessons import LESSONS, TOOLS
from app.models import catalogue
from app.ui import console, loading, stage, url, warm
from app.ui.cache import cache
from app.ui.loading import try_model
from app.ui.url import DECK_SPEC, GLOBAL_SPEC

PUBLIC_URL_ENV = "BVE_PUBLIC_URL"
PUBLIC_URL = "public_url"  # the sidebar's box: the address students use
ASKED = "_asked"  # session state: what a button asked of the next draw ({"goto": n, "deck qr": True, "share qr": True})
PAGE_SLUGS = {lesson.slug: lesson.path for lesson in (*LESSONS, *TOOLS)}


def own_deck() -> bool:
    return bool(url.setting("deck"))


def deck_views() -> tuple[deck.View, ...]:
    """The session's deck: its own (validated when it came in), else the default deck."""
    encoded = url.setting("deck")
    return deck.decode(encoded, spec_of=None)[0] if encoded else deck.default_deck()


def set_deck(views) -> None:
    """Make ``views`` this session's deck (an empty one: back to the default deck)."""
    st.session_state["deck"] = deck.encode(views) if views else ""
    st.session_state["slide"] = min(url.setting("slide"), len(views) if views else 0)


def follow_deck(slug: str) -> None:
    """The router's step before the page ``slug``: adopt the deck and slide a link (or Back/Next, or the browser's
    back button) brought. The deck is validated (notes for what was dropped), the slide kept in range, and the
    slide's page reads exactly the view's state from the URL (``url.read``). A link to another page or state than
    its slide's switches to the slide's. Only a URL that changed since the app last wrote it counts: a button that
    changed the deck in this session (End, Remove) is not undone by the URL it has not rewritten yet. Without
    ``deck`` and ``slide`` in the URL (a page switch in the sidebar) the session's carry on."""
    raw = url.raw_query()
    for p in DECK_SPEC:
        st.session_state.setdefault(p.name, p.default)
    if "deck" not in raw and "slide" not in raw:
        return
    wanted = (raw.get("deck", [""])[-1], raw.get("slide", ["0"])[-1])
    if wanted == url.written_deck():
        return
    notes = []
    views = deck.default_deck()
    encoded = ""
    if wanted[0]:
        views, notes = deck.decode(wanted[0])
        encoded = deck.encode(views) if views else ""
        if not views:
            views = deck.default_deck()
            notes.append("The link's deck holds no view this app can show: the default deck is used instead.")
    values, bad = state.parse({"slide": wanted[1]}, (DECK_SPEC.slide,))
    notes += bad
    n = values["slide"]
    if n > len(views):
        notes.append(f"The deck has {len(views)} slides; showing the last one instead of slide {n}.")
        n = len(views)
    st.session_state["deck"], st.session_state["slide"] = encoded, n
    url.add_notes(notes)
    if n:
        view = views[n - 1]
        url.reload_view(view.page)
        if view.page != slug or {k: v[-1] for k, v in raw.items() if k not in url.SHARED} != view.params:
            st.switch_page(PAGE_SLUGS[view.page], query_params=_slide_query(views, n))  # exactly the view's state


def _slide_query(views, n: int) -> dict[str, str]:
    """Slide n's link: its view's state, this session's settings (presenter mode, models), the deck."""
    settings = state.encode({p.name: url.setting(p.name) for p in GLOBAL_SPEC}, GLOBAL_SPEC)
    q = {**views[n - 1].params, **settings, "slide": str(n)}
    if own_deck():
        q["deck"] = url.setting("deck")
    return q


def go_to_slide(n: int, views=None) -> None:
    """Switch to slide n of the deck (its page, in its state)."""
    views = views if views is not None else deck_views()
    url.forget_written_deck()  # a switch to the very slide shown still reloads its view
    st.switch_page(PAGE_SLUGS[views[n - 1].page], query_params=_slide_query(views, n))


def present_link(n: int = 1, base: str | None = None) -> str:
    """The one link that opens the deck at slide n in presenter mode (the deck itself in it when it is this
    session's own; without it, the default deck)."""
    views = deck_views()
    extra = {"presenter": "1", "slide": str(n)}
    if own_deck():
        extra["deck"] = url.setting("deck")
    return views[n - 1].link(public_base() if base is None else base, **extra)


def _end_presentation() -> None:
    st.session_state["slide"] = 0


def _ask(what: str, value=True) -> None:
    """A button's on_click: the request is carried out by the next draw of the deck bar or the page (a
    callback runs even when the run it starts is rerouted; a button's return value would be lost then)."""
    st.session_state.setdefault(ASKED, {})[what] = value


def _asked(what: str, default=None):
    """What a button asked for (once: the request is then done)."""
    return st.session_state.get(ASKED, {}).pop(what, default)


def _asking(what: str) -> bool:
    """Whether a button asked for ``what``, the request kept: a dialog pops it with :func:`_asked` once it has been
    drawn, so that a run interrupted before that (a second event, a URL sync) leaves it for the next run instead of
    losing the click."""
    return what in st.session_state.get(ASKED, {})


def deck_bar() -> None:
    """Above the page while a deck is presented: slide n of m, its title and speaker note, Back and Next (also
    the arrow keys ← →, and a presenter's clicker: Page Up / Page Down), the QR code of the view, and End."""
    n = url.setting("slide")
    target, show_qr = _asked("goto"), _asking("deck qr")
    views = deck_views() if n else []
    if n > len(views):
        n = st.session_state["slide"] = len(views)
    if not n:
        _asked("deck qr")  # no deck bar to show it from: the request lapses
        return
    if target and 1 <= target <= len(views):
        go_to_slide(target, views)
    view, here = views[n - 1], views[n - 1].page == url.page()
    if here:
        stage.on_slide()  # the lesson's figures off the stage are folded (stage.folding)
    back = n - 1 if here else n  # off the deck (another page), Back and Next return to slide n
    forward = n + 1 if here else n
    bar = st.container(key="bve-deck-bar", gap=None)
    with bar, st.container(key="bve-deck-row", horizontal=True, vertical_alignment="center", gap="small", wrap=False):
        st.button(
            "Back",
            icon=":material/arrow_back:",
            key="bve-deck-back",
            disabled=back < 1,
            shortcut="Left",
            on_click=_ask,
            args=("goto", back),
            help="The previous slide (← key)",
        )
        if here:  # the slide's point is the headline (under this row); here, small, where it stands in the deck
            lesson = deck.lesson_of(view.page)
            title = f"<b>{n} / {len(views)}</b> · {text.html(lesson.title if lesson else view.page)}"
        else:
            title = f"<b>Slide {n} / {len(views)}</b> is {text.html(view.title)} — Back or Next returns to the deck"
        st.markdown(f'<div class="bve-deck-title">{title}</div>', unsafe_allow_html=True, width="stretch")
        st.button(
            "Next",
            icon=":material/arrow_forward:",
            key="bve-deck-next",
            icon_position="right",
            disabled=forward > len(views),
            shortcut="Right",
            on_click=_ask,
            args=("goto", forward),
            help="The next slide (→ key)",
        )
        st.button(
            "QR",
            icon=":material/qr_code_2:",
            key="bve-deck-qr",
            on_click=_ask,
            args=("deck qr",),
            help="A QR code of this view, for students to open it on their own devices",
        )
        if here:
            console.console_button(_context_root())
        st.button(
            "",
            icon=":material/close:",
            key="bve-deck-end",
            on_click=_end_presentation,
            help="End the presentation (the deck stays on the Lecture mode page)",
        )
    if here:  # the speaker note is not projected: the presenter console shows it on the lecturer's own screen
        bar.markdown(
            f'<div class="bve-slide-headline" style="font-size:{headline_rem(view.title):.2f}rem" '
            f'title="{text.html(view.title)}">{text.html(view.title)}</div>',
            unsafe_allow_html=True,
        )
    with st.container(key="bve-deck-clicker"):  # hidden; a presenter's clicker sends Page Down / Page Up
        st.markdown(DECK_CSS, unsafe_allow_html=True)
        st.button(
            "Previous slide",
            key="bve-deck-pageup",
            shortcut="PageUp",
            disabled=back < 1,
            on_click=_ask,
            args=("goto", back),
        )
        st.button(
            "Next slide",
            key="bve-deck-pagedown",
            shortcut="PageDown",
            disabled=forward > len(views),
            on_click=_ask,
            args=("goto", forward),
        )
    if show_qr:
        _qr_dialog(qr_link(None, None if here else view))
        _asked("deck qr")
    if here:  # the presenter console: publish this slide, follow the console's moves (app.ui.console)
        console.projector(n, views, url.setting("deck"), lambda slide: go_to_slide(slide, views))
    if here and n < len(views):  # the next slide, computed in the background while this one is shown; not the ones
        warm.precompute(views[n], loading.settings())  # after it: computing those competed with each slide change
        # (scripts/benchmark.py --only deck, 2026-11-26: every slide ahead queued, cold p95 2386 ms; the next only,
        # 1296)


HEADLINE_REM, HEADLINE_CHARS, HEADLINE_MIN_REM = 2.0, 52, 1.25  # a slide's title: 2rem up to ~52 characters


def headline_rem(title: str) -> float:
    """The slide title's type size: ``HEADLINE_REM`` while it fits one line at 1280 px beside the deck's buttons
    (about ``HEADLINE_CHARS`` characters), smaller for a longer one so the whole point is read, never under
    ``HEADLINE_MIN_REM`` (20 px: a stage holds no text under 18); past that, an ellipsis and the title on hover."""
    return max(HEADLINE_MIN_REM, HEADLINE_REM * min(1.0, HEADLINE_CHARS / max(len(title), 1)))


DECK_CSS = """<style>
.st-key-bve-deck-row { border-bottom: 2px solid #ddd; padding-bottom: 0.25rem; }
.st-key-bve-deck-row > div:has(.bve-deck-title) { min-width: 0; flex: 1 1 auto; }
.st-key-bve-deck-row button { padding: 0.1rem 0.6rem; min-height: 2rem; }
.st-key-bve-deck-row a { padding: 0.1rem 0.6rem; min-height: 2rem; }
.bve-deck-title { white-space: nowrap; overflow: hidden; text-overflow: ellipsis; font-size: 1.05rem; color: #333; }
.bve-slide-headline { font-size: 2rem; font-weight: 700; line-height: 1.2; color: #000; white-space: nowrap;
  overflow: hidden; text-overflow: ellipsis; padding-top: 0.15rem; }
body:has(.bve-slide-headline) [data-testid="stMain"] h1 { position: absolute !important; width: 1px; height: 1px;
  overflow: hidden; clip-path: inset(50%); white-space: nowrap; padding: 0 !important; margin: 0; }
body:has(.bve-slide-headline) [data-testid="stMain"] [data-testid="stElementContainer"]:has(h1) {
  position: absolute; }
.st-key-bve-deck-clicker { display: none; }
</style>"""


def _page_lesson():
    return next((lesson for lesson in LESSONS if lesson.slug == url.page()), None)


def _this_view(spec) -> deck.View:
    """The view on the screen: this page in its current state, titled like the gallery's example it is (if any)."""
    from app.lecture.examples import EXAMPLES

    lesson_here = _page_lesson()
    query = {k: v for k, v in url.view_query(spec).items() if k not in ("source", "device", "dtype")}
    example = next(
        (
            ex
            for ex in EXAMPLES
            if ex.page == lesson_here.path and state.encode(state.parse(ex.query, spec)[0], spec) == query
        ),
        None,
    )
    if example is not None:
        return deck.view(lesson_here.slug, query, example.label, example.why)
    return deck.view(lesson_here.slug, query, lesson_here.title, "")


def _add_view(spec) -> None:
    views = deck.add(deck_views() if own_deck() else (), _this_view(spec))
    if len(views) > deck.MAX_VIEWS:
        st.toast(f"A deck holds at most {deck.MAX_VIEWS} views; remove some on the Lecture mode page first.")
        return
    set_deck(views)
    st.toast(f"Added as slide {len(views)} of your deck (see the Lecture mode page).", icon=":material/playlist_add:")


def share_buttons(spec) -> None:
    """Under a lesson's link to this view: "Add this view to my deck" and its QR code for the class."""
    if _page_lesson() is None:
        return
    stage.figure_widget(spec)
    c1, c2 = st.columns(2)
    c1.button(
        "Add this view to my deck",
        icon=":material/playlist_add:",
        key="bve-add-view",
        on_click=_add_view,
        args=(spec,),
        help="Lecture mode: present it as a slide, in order.",
    )
    c2.button(
        "QR code for the class", icon=":material/qr_code_2:", key="bve-share-qr", on_click=_ask, args=("share qr",)
    )
    if _asking("share qr"):
        _qr_dialog(qr_link(spec))
        _asked("share qr")


# ----------------------------------------------------------------------------- the address students use, the QR code


def _context_root() -> str:
    """The app's address as this browser reached it (scheme, host, any path prefix), without the page."""
    try:
        address = st.context.url
    except Exception:  # an older server, or no browser
        return ""
    if not address:
        return ""
    address = str(address).split("?")[0].split("#")[0].rstrip("/")
    head, _, last = address.rpartition("/")
    return head if last in PAGE_SLUGS and "://" in head else address


def public_base() -> str:
    """The address students reach this app at: BVE_PUBLIC_URL when the server sets it, else the one typed in
    the sidebar, else the one this browser uses (st.context.url)."""
    return _public_address()[0] or _context_root()


def _public_address() -> tuple[str, str | None]:
    """The address given (BVE_PUBLIC_URL, else the sidebar's box) if it is an http(s) address, and why not."""
    from app.lecture import qr

    return qr.public_address(os.environ.get(PUBLIC_URL_ENV) or st.session_state.get(PUBLIC_URL) or "")


def address_box(where) -> None:
    """The sidebar's expander where a lecturer sets the address students use (QR codes and handout links)."""
    with where.expander("Lecture: the address students use", icon=":material/qr_code_2:"):
        st.text_input(
            "Public address of this app",
            key=PUBLIC_URL,
            placeholder=_context_root() or "https://…",
            help="What the QR codes and handout links point at. Empty: the address this browser uses "
            f"(or the {PUBLIC_URL_ENV} environment variable, when the server sets it).",
            disabled=bool(os.environ.get(PUBLIC_URL_ENV)),
        )
        problem = _public_address()[1]
        if problem:
            st.warning(problem, icon=":material/link_off:")
        st.caption(f"Now: {text.md(public_base() or '(unknown until the browser says)', 48)}")


def students_cannot_reach(base: str) -> bool:
    """Whether links built on ``base`` would point at this computer itself (or nowhere yet): a student's
    phone cannot open them."""
    from app.lecture import qr

    return not base or qr.is_loopback(base)


def qr_link(spec=None, view: deck.View | None = None) -> str:
    """The link a QR code carries: the public address + this page (or ``view``) in its state — no presenter
    mode, no deck: a student gets the lesson as on the projector, at a size for a laptop or a phone."""
    if view is not None:
        return view.link(public_base())
    return deck.view(url.page(), url.view_query(spec)).link(public_base())


# The code is drawn 460 px square, which with the dialog's title ran past the bottom of a short window (a projector's
# 720 px less the browser's bars, presenter mode's larger type): it shrinks, square, to what the window leaves.
QR_CSS = (
    "<style>.st-key-bve-qr img { max-height: calc(100vh - 200px); width: auto !important; max-width: 100%; }</style>"
)


@st.dialog("Open this view on your own device", width="large")
def _qr_dialog(link: str) -> None:
    from app.lecture import qr

    st.html(QR_CSS)
    left, right = st.columns([3, 2])
    with left.container(key="bve-qr"):
        try:
            st.image(qr.png(link, 560), width=460, alt=f"QR code of {link}")
        except qr.TooLong as too_long:  # a long text typed in the box: no code, the link still works
            st.warning(str(too_long), icon=":material/qr_code_2:")
    right.markdown("Point a phone's camera at the code, or type:")
    right.code(link, language=None, wrap_lines=True)
    if not public_base():
        right.warning(
            "The browser has not said its address yet: set the address students use in the sidebar (*Lecture*)."
        )
    elif qr.is_loopback(link):
        guess = qr.lan_address(link)
        right.warning(
            f"{text.md(qr.host(link))} is this computer itself: students' devices cannot reach it. Set the "
            "address they use in the sidebar (*Lecture: the address students use*)"
            + (f", perhaps {text.md(guess, 80)}" if guess else "")
            + f", or start the server with {PUBLIC_URL_ENV}."
        )
    else:
        right.caption("It opens this lesson in exactly this state (seed included), without presenter mode.")


# ----------------------------------------------------------------------------- the handout


def build_handout(
    views, title: str = "BERT Variants Explorer — lecture handout", answers: list[dict] | None = None
) -> tuple[str, bytes | None, list[str]]:
    """The deck as one offline HTML file (and a PDF when the system's chromium is there): each view's lesson
    run on the models of the sidebar's settings (through the pages' own cache, so views already opened are
    instant), its key figure, takeaway and live link. Shows progress; returns (html, pdf or None, notes)."""
    from app.lecture import handout
    from app.core import preload

    preload.load()
    bar = st.progress(0.0, text="Preparing the handout…")
    sections, notes = [], []
    base = public_base()
    for i, view in enumerate(views):
        bar.progress(i / (len(views) + 1), text=f"Slide {i + 1} of {len(views)}: {text.plain(view.title, 80)}")
        models = {}
        for key in handout.models_for(view):
            loaded = try_model(key)
            if isinstance(loaded, str):
                notes.append(f"Slide {i + 1}: {catalogue.get(key).label} could not be loaded ({text.md(loaded, 80)}).")
            else:
                models[key] = loaded
        sections.append(handout.section(view, models, view.link(base), cache, i + 1))
    bar.progress(len(views) / (len(views) + 1), text="Writing the file…")
    document = handout.document(sections, title, answers=answers)
    pdf = handout.pdf(document)
    bar.empty()
    return document, pdf, notes
