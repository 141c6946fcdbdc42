"""The one module in app/ that imports streamlit: URL binding and widgets from a page's spec, the generic
result cache, cached model loaders, the shared sidebar and badge, and how figures and notes are shown.
Pages call these; the rest of app/ is pure.

A lesson page is

    values = ui.bind(SPEC)                              # URL -> session state (notes for bad links) -> URL
    ui.widget(SPEC.rate, column)                        # each widget drawn from its parameter
    result = ui.run(lesson.run, ui.models(...), lesson.Inputs.from_values(values))
    ...figures and text from result...

Widget keys are scoped to their page (``electra.seed``), except the text a student types (``text``),
which every lesson shares on purpose.
"""

from __future__ import annotations

import os
from urllib.parse import urlencode

import streamlit as st

from app.lecture import deck
from app.core import lesson, state, text
from app.lessons import LESSONS, TOOLS
from app.models import catalogue, device as devices
from app.core.state import Param, Spec
from app.ui import loading, stage, url
from app.ui.cache import cache  # ui.cache is the function (it hides the module of its name on the package)
from app.ui.url import DECK_SPEC, GLOBAL_SPEC, SOURCES, key_of, view_query

# What pages call from the modules under the front, as ui.<name>:
from app.ui.loading import settings, try_model, warm_progress, warm_start  # noqa: F401
from app.ui.stage import intro, show_chart, show_figure, show_html, takeaway  # noqa: F401


# ----------------------------------------------------------------------------- routing


def routed_by_navigation() -> None:
    """Called first by the router. Streamlit 1.67 treats a top-level ``pages/`` folder (part of this
    project's required layout) as a legacy multipage folder even beside ``st.navigation``: it would map a
    deep link such as ``/electra`` straight to ``pages/electra.py`` and skip the router (no sidebar). This
    switches that mode off for the server; st.navigation is the only router. The very first request of a
    fresh server still goes through that mode, which knows pages by file name: so every lesson's URL is
    its file name, the file runs, and :func:`bind` reroutes it here (tests/e2e pins both cases)."""
    from streamlit.runtime.pages_manager import PagesManager

    PagesManager.uses_pages_directory = False


def start_page(slug: str, is_lesson: bool, badge_slot) -> None:
    """The router's last step before running a page: scope its widget keys, forget the models the
    previous run used (the badge lists this page's), and for a lesson do the heavy imports once."""
    url.set_page(slug)
    st.session_state["_badge_slot"] = badge_slot
    loading.forget_loaded()
    st.session_state["_in_router"] = True
    stage.clear()
    if is_lesson:
        from app.core import preload

        preload.load()
    follow_deck(slug)


def finish_page() -> None:
    """The router's step after the page: the badge, and the end of a routed run. (A page that stops early
    goes through :func:`stop`, which draws the badge first: after ``st.stop`` nothing more is drawn.)"""
    st.session_state["_in_router"] = False
    badge()


def _reroute_if_unrouted() -> None:
    """A page run without the router in this very run (the first deep link a fresh server sees, a page
    Streamlit's pages-folder mode ran directly) reruns through it."""
    if not st.session_state.get("_in_router"):
        routed_by_navigation()
        st.rerun()


# ----------------------------------------------------------------------------- URL state and widgets


def bind(spec: Spec) -> dict:
    """Give every parameter of ``spec`` a value in session state — from the URL when the page is opened,
    else its current or default value — write the values back to the URL, show a note for everything in
    the link that was not used, and return the values by name. Call before the page's widgets."""
    _reroute_if_unrouted()
    values, notes = url.read(spec)
    url.write(spec)
    stage.make()
    for note in notes:
        st.info(note, icon=":material/link:")
    return values


def widget(p: Param, where=None, **overrides):
    """Draw the widget that sets parameter ``p`` (its key, label, help, range and format from ``p``) in
    ``where`` (the page, a column, the sidebar). ``overrides`` go to the widget: ``options`` for choices
    known only at run time (a sentence's words), ``disabled``, ``format_func``, ``horizontal``."""
    where = where or st
    key = key_of(p)
    kw = dict(label=p.label or p.name, key=key, help=p.help)
    kw.update({k: v for k, v in overrides.items() if k not in ("options", "format_func", "horizontal")})
    if p.kind == "str":
        box = where.text_input if p.widget == "line" else where.text_area
        return box(on_change=url.clip, args=(key, p.max_len), **kw)
    if p.kind == "bool":
        return where.toggle(**kw)
    options = overrides.get("options")
    if p.kind == "choice" or options is not None:
        options = list(p.choices if options is None else options)
        fmt = overrides.get("format_func", p.shown)
        if p.widget == "radio":
            return where.radio(options=options, format_func=fmt, horizontal=overrides.get("horizontal", True), **kw)
        return where.selectbox(options=options, format_func=fmt, **kw)
    number = int if p.kind == "int" else float
    lo, hi = number(p.lo), number(p.hi)
    step = number(p.step) if p.step is not None else (1 if p.kind == "int" else None)
    fmt = {} if p.fmt is None else {"format": p.fmt}
    if p.widget == "slider" or (p.kind == "float" and p.widget != "number"):
        return where.slider(min_value=lo, max_value=hi, step=step, **fmt, **kw)
    return where.number_input(min_value=lo, max_value=hi, step=step, **fmt, **kw)


def set_value(p: Param, value) -> None:
    """Set a parameter before its widget is drawn (a value that no longer fits this sentence)."""
    st.session_state[key_of(p)] = value


def share_link(spec: Spec | None = None) -> None:
    """A copyable link to exactly this view (st.code has a copy button), its QR code for a class, and
    "Add this view to my deck" (lecture mode)."""
    spec = spec if spec is not None else url.bound_spec()
    query = urlencode(url.current_query(spec))
    base = ""
    try:
        address = st.context.url  # None when the client did not say (AppTest, a scripted client)
        base = str(address).split("?")[0] if address else ""
    except Exception:  # older servers
        pass
    with st.expander("Link to this view", expanded=False, icon=":material/link:"):
        st.code(f"{base}?{query}" if query else base or "(defaults: the page's own address)", language=None)
        st.caption("Open it before class: the page restores every setting, seed included.")
        if _page_lesson() is not None:
            c1, c2 = st.columns(2)
            c1.button("Add this view to my deck", icon=":material/playlist_add:", key="bve-add-view",
                      on_click=_add_view, args=(spec,), help="Lecture mode: present it as a slide, in order.")
            c2.button("QR code for the class", icon=":material/qr_code_2:", key="bve-share-qr", on_click=_ask,
                      args=("_share_qr",))
            if st.session_state.pop("_share_qr", False):
                _qr_dialog(qr_link(spec))


# ----------------------------------------------------------------------------- running a lesson


def run(fn, models: dict, inputs):
    """A lesson's ``run(models, inputs, cache)``, timed for the badge. When the lesson raises
    ``lesson.Stop``, its note is shown with the link to this view and the page stops there."""
    try:
        with loading.timed_forward():
            return fn(models, inputs, cache)
    except lesson.Stop as early:
        stop(early.note.text, early.note.level)


def claim_line(experiment: str) -> None:
    """One line with the measured result of the experiment that tests this lesson's recipe, linking to it
    on the "Does it work?" page (or saying it has not been run yet)."""
    from app.experiments import results

    line = results.one_line(experiment)
    st.page_link("pages/claims.py", label=line, query_params={"claim": experiment}, icon=":material/science:")


def show_notes(notes) -> None:
    """Notes from a lesson (markdown whose user values went through text.md)."""
    for note in notes:
        {"info": st.info, "warning": st.warning, "error": st.error}[note.level](note.text)


def stop(message: str, level: str = "warning") -> None:
    """Show why there is nothing to show, the link to this view and the badge, and stop the page. Pages
    stop only through here (tests/test_layering.py checks it), never with a bare ``st.stop()``."""
    show_notes([lesson.Note(message, level)])
    share_link()
    st.session_state["_in_router"] = False
    badge()
    st.stop()


# ----------------------------------------------------------------------------- models


def model(key: str):
    """The loaded variant, or stop the page with a clear message. Says when it is not what was asked for."""
    loaded = try_model(key)
    if isinstance(loaded, str):
        stop(f"{catalogue.get(key).label} could not be loaded: {loaded}", "error")
    if loaded.notice:
        st.info(loaded.notice, icon=":material/info:")
    return loaded


def models(*keys: str) -> dict:
    """{key: loaded variant} for a lesson's run; stops the page if one cannot be loaded."""
    return {k: model(k) for k in keys}


# ----------------------------------------------------------------------------- sidebar and badge


def sidebar() -> None:
    """The settings every page shares: model source, device, dtype, presenter mode, export format."""
    url.bind_globals()
    sb = st.sidebar
    g = GLOBAL_SPEC
    sb.selectbox(g.source.label, SOURCES, key="source", format_func=g.source.shown,
                 help="Auto never uses the network. Prepare a lecture with `python -m app.models.prefetch`.")
    offered = ["auto", "cpu"] + (["cuda"] if devices.cuda_available() else [])
    if st.session_state.get("device") not in offered:
        st.session_state["device"] = "auto"
    sb.selectbox(g.device.label, offered, key="device", format_func=g.device.shown)
    if settings()[1] == "cuda":
        sb.selectbox(g.dtype.label, devices.DTYPES, key="dtype")
    sb.toggle(g.presenter.label, key="presenter", help=g.presenter.help)
    sb.radio(g.export.label, ("png", "svg"), key="export", horizontal=True, format_func=g.export.shown,
             help=g.export.help)
    with sb.expander("Lecture: the address students use", icon=":material/qr_code_2:"):
        st.text_input("Public address of this app", key="public_url", placeholder=_context_root() or "https://…",
                      help="What the QR codes and handout links point at. Empty: the address this browser uses "
                           f"(or the {PUBLIC_URL_ENV} environment variable, when the server sets it).",
                      disabled=bool(os.environ.get(PUBLIC_URL_ENV)))
        st.caption(f"Now: {text.md(public_base() or '(unknown until the browser says)', 48)}")
    if stage.presenting():
        stage.presenter_css()


def page_config() -> None:
    """Title, icon, wide layout; a presenter link opens with the sidebar collapsed (more room on a projector)."""
    url.bind_globals()
    st.set_page_config(page_title="BERT Variants Explorer", page_icon=str(catalogue.REPO_ROOT / "assets" / "icon.png"),
                       layout="wide", initial_sidebar_state="collapsed" if stage.presenting() else "auto")


def badge() -> None:
    """What this page ran on — each model's source, device and dtype as loaded, load and compute times —
    written into the sidebar placeholder the router made. Drawn after the page, or before it stops."""
    slot = st.session_state.get("_badge_slot")
    if slot is None:
        return
    _, device, dtype = settings()
    loaded = loading.loaded_this_run()
    lines = []
    if loaded:
        for key, (where, dev, dt, load_s) in loaded.items():
            lines.append(f"**{catalogue.get(key).label}** {text.md(where, 48)} · {dev.upper()} · {dt} · loaded in {load_s:.2f} s")
    else:
        lines.append(f"**Device** {device.upper()} · {dtype} (no model on this page)")
    if loaded and loading.last_forward_ms() is not None:
        lines.append(f"**Last computation** {loading.last_forward_ms():.1f} ms")
    slot.markdown("  \n".join(lines))


# ----------------------------------------------------------------------------- lecture mode: the deck
#
# A deck (app/lecture/deck.py) is a sequence of prepared views. The URL says which deck (``deck``, absent: the default
# deck) and which view is on the screen (``slide``); the router draws the deck bar above the page while one
# is; Back/Next (and the arrow keys) switch to the neighbouring view's page with that view's state.

PUBLIC_URL_ENV = "BVE_PUBLIC_URL"
PAGE_SLUGS = {lesson.slug: lesson.path for lesson in (*LESSONS, *TOOLS)}


def own_deck() -> bool:
    return bool(st.session_state.get("deck"))


def deck_views() -> tuple[deck.View, ...]:
    """The session's deck: its own (validated when it came in), else the default deck."""
    encoded = st.session_state.get("deck")
    return deck.decode(encoded, spec_of=None)[0] if encoded else deck.default_deck()


def set_deck(views) -> None:
    """Make ``views`` this session's deck (an empty one: back to the default deck)."""
    st.session_state["deck"] = deck.encode(views) if views else ""
    st.session_state["slide"] = min(st.session_state.get("slide", 0), len(views) if views else 0)


def follow_deck(slug: str) -> None:
    """Adopt the deck and slide a link (or Back/Next, or the browser's back button) brought: the deck is
    validated (notes for what was dropped), the slide kept in range, and the slide's page reads exactly the
    view's state from the URL (``bind``). A link to another page or state than its slide's switches to the
    slide's. Only a URL that changed since the app last wrote it counts: a button that changed the deck in
    this session (End, Remove) is not undone by the URL it has not rewritten yet. Without ``deck`` and
    ``slide`` in the URL (a page switch in the sidebar) the session's carry on."""
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
        settings = {p.name for p in (*GLOBAL_SPEC, *DECK_SPEC)}
        if view.page != slug or {k: v[-1] for k, v in raw.items() if k not in settings} != view.params:
            st.switch_page(PAGE_SLUGS[view.page], query_params=_slide_query(views, n))  # exactly the view's state


def _slide_query(views, n: int) -> dict[str, str]:
    """Slide n's link: its view's state, this session's settings (presenter mode, models), the deck."""
    settings = state.encode({p.name: st.session_state.get(p.name, p.default) for p in GLOBAL_SPEC}, GLOBAL_SPEC)
    q = {**views[n - 1].params, **settings, "slide": str(n)}
    if own_deck():
        q["deck"] = st.session_state["deck"]
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
        extra["deck"] = st.session_state["deck"]
    return views[n - 1].link(public_base() if base is None else base, **extra)


def _end_presentation() -> None:
    st.session_state["slide"] = 0


def _ask(flag: str, value=True) -> None:
    """A button's on_click: the request is carried out by the next draw of the deck bar or the page (a
    callback runs even when the run it starts is rerouted; a button's return value would be lost then)."""
    st.session_state[flag] = value


def deck_bar() -> None:
    """Above the page while a deck is presented: slide n of m, its title and speaker note, Back and Next (also
    the arrow keys ← →, and a presenter's clicker: Page Up / Page Down), the QR code of the view, and End."""
    n = st.session_state.get("slide", 0)
    target, show_qr = st.session_state.pop("_goto_slide", None), st.session_state.pop("_show_qr", False)
    if not n:
        return
    views = deck_views()
    if n > len(views):
        n = st.session_state["slide"] = len(views)
        if not n:
            return
    if target and 1 <= target <= len(views):
        go_to_slide(target, views)
    view, here = views[n - 1], views[n - 1].page == url.page()
    back = n - 1 if here else n  # off the deck (another page), Back and Next return to slide n
    forward = n + 1 if here else n
    with st.container(key="bve-deck-bar", horizontal=True, vertical_alignment="center", gap="small", wrap=False):
        st.button("Back", icon=":material/arrow_back:", key="bve-deck-back", disabled=back < 1, shortcut="Left",
                  on_click=_ask, args=("_goto_slide", back), help="The previous slide (← key)")
        title = (f"<b>{n} / {len(views)}</b> · {text.html(view.title)}" if here else
                 f"<b>Slide {n} / {len(views)}</b> is {text.html(view.title)} — Back or Next returns to the deck")
        note = f'<span class="bve-deck-note">{text.html(view.note)}</span>' if view.note and here else ""
        st.markdown(f'<div class="bve-deck-title" title="{text.html(view.note)}">{title} {note}</div>',
                    unsafe_allow_html=True, width="stretch")
        st.button("Next", icon=":material/arrow_forward:", key="bve-deck-next", icon_position="right",
                  disabled=forward > len(views), shortcut="Right", on_click=_ask, args=("_goto_slide", forward),
                  help="The next slide (→ key)")
        st.button("QR", icon=":material/qr_code_2:", key="bve-deck-qr", on_click=_ask, args=("_show_qr",),
                  help="A QR code of this view, for students to open it on their own devices")
        st.button("", icon=":material/close:", key="bve-deck-end", on_click=_end_presentation,
                  help="End the presentation (the deck stays on the Lecture mode page)")
    with st.container(key="bve-deck-clicker"):  # hidden; a presenter's clicker sends Page Down / Page Up
        st.markdown(DECK_CSS, unsafe_allow_html=True)
        st.button("Previous slide", key="bve-deck-pageup", shortcut="PageUp", disabled=back < 1,
                  on_click=_ask, args=("_goto_slide", back))
        st.button("Next slide", key="bve-deck-pagedown", shortcut="PageDown", disabled=forward > len(views),
                  on_click=_ask, args=("_goto_slide", forward))
    if show_qr:
        _qr_dialog(qr_link(None, None if here else view))


DECK_CSS = """<style>
.st-key-bve-deck-bar { border-bottom: 2px solid #ddd; padding-bottom: 0.25rem; }
.st-key-bve-deck-bar > div:has(.bve-deck-title) { min-width: 0; flex: 1 1 auto; }
.st-key-bve-deck-bar button { padding: 0.1rem 0.6rem; min-height: 2rem; }
.bve-deck-title { white-space: nowrap; overflow: hidden; text-overflow: ellipsis; font-size: 1.05rem; }
.bve-deck-note { color: #555; font-size: 0.85em; margin-left: 0.6rem; }
.st-key-bve-deck-clicker { display: none; }
</style>"""


def _page_lesson():
    return next((lesson for lesson in LESSONS if lesson.slug == url.page()), None)


def _this_view(spec) -> deck.View:
    """The view on the screen: this page in its current state, titled like the gallery's example it is (if any)."""
    from app.lecture.examples import EXAMPLES

    lesson_here = _page_lesson()
    query = {k: v for k, v in view_query(spec).items() if k not in ("source", "device", "dtype")}
    example = next((ex for ex in EXAMPLES if ex.page == lesson_here.path
                    and state.encode(state.parse(ex.query, spec)[0], spec) == query), None)
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


# ----------------------------------------------------------------------------- lecture mode: the QR code


def _context_root() -> str:
    """The app's address as this browser reached it (scheme, host, any path prefix), without the page."""
    try:
        url = st.context.url
    except Exception:  # an older server, or no browser
        return ""
    if not url:
        return ""
    url = str(url).split("?")[0].split("#")[0].rstrip("/")
    head, _, last = url.rpartition("/")
    return head if last in PAGE_SLUGS and "://" in head else url


def public_base() -> str:
    """The address students reach this app at: BVE_PUBLIC_URL when the server sets it, else the one typed in
    the sidebar, else the one this browser uses (st.context.url)."""
    given = os.environ.get(PUBLIC_URL_ENV) or st.session_state.get("public_url") or ""
    given = given.strip().rstrip("/")
    if given and "://" not in given:
        given = "http://" + given
    return given or _context_root()


def qr_link(spec=None, view: deck.View | None = None) -> str:
    """The link a QR code carries: the public address + this page (or ``view``) in its state — no presenter
    mode, no deck: a student gets the lesson as on the projector, at a size for a laptop or a phone."""
    if view is not None:
        return view.link(public_base())
    return deck.view(url.page(), view_query(spec)).link(public_base())


@st.dialog("Open this view on your own device", width="large")
def _qr_dialog(url: str) -> None:
    from app.lecture import qr

    left, right = st.columns([3, 2])
    with left.container(key="bve-qr"):
        st.image(qr.png(url, 560), width=460, alt=f"QR code of {url}")
    right.markdown("Point a phone's camera at the code, or type:")
    right.code(url, language=None, wrap_lines=True)
    if not public_base():
        right.warning("The browser has not said its address yet: set the address students use in the sidebar "
                      "(*Lecture*).")
    elif qr.is_loopback(url):
        guess = qr.lan_address(url)
        right.warning(f"{text.md(qr.host(url))} is this computer itself: students' devices cannot reach it. Set the "
                      "address they use in the sidebar (*Lecture: the address students use*)"
                      + (f", perhaps {text.md(guess, 80)}" if guess else "")
                      + f", or start the server with {PUBLIC_URL_ENV}.")
    else:
        right.caption("It opens this lesson in exactly this state (seed included), without presenter mode.")


# ----------------------------------------------------------------------------- lecture mode: the handout


def build_handout(views, title: str = "BERT Variants Explorer — lecture handout") -> tuple[str, bytes | None, list[str]]:
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
        bar.progress(i / (len(views) + 1), text=f"Slide {i + 1} of {len(views)}: {view.title}")
        models = {}
        for key in handout.models_for(view):
            loaded = try_model(key)
            if isinstance(loaded, str):
                notes.append(f"Slide {i + 1}: {catalogue.get(key).label} could not be loaded ({text.md(loaded, 80)}).")
            else:
                models[key] = loaded
        sections.append(handout.section(view, models, view.link(base), cache, i + 1))
    bar.progress(len(views) / (len(views) + 1), text="Writing the file…")
    document = handout.document(sections, title)
    pdf = handout.pdf(document)
    bar.empty()
    return document, pdf, notes
