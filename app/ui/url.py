"""URL state: every value a page shows lives in session state under its parameter's key and in the address bar,
so a link restores the view exactly. The settings every page shares (``GLOBAL_SPEC``) and lecture mode's place in
its deck (``DECK_SPEC``) are parameters too.

:func:`read` gives a page's parameters their values (from the link when the page is opened) with a note for
everything in the link it could not use, :func:`write` puts the state back into the address bar, and
:func:`view_query` is the link to this view. Widget keys are scoped to their page (:func:`key_of`).
"""

from __future__ import annotations

import streamlit as st

from app.core import state, text
from app.core.state import Param, Spec
from app.lecture import deck
from app.models import chosen, device as devices

SOURCES = ("auto", "hub", "bundled")
SOURCE_LABELS = (
    ("auto", "Auto: real checkpoint if cached, else bundled (offline)"),
    ("hub", "Hugging Face hub (falls back to bundled)"),
    ("bundled", "Bundled stand-ins (offline)"),
)
GLOBAL_SPEC = Spec(
    Param(
        "device",
        "choice",
        "auto",
        choices=devices.CHOICES,
        label="Device",
        labels=(("auto", "Auto (GPU if available)"), ("cpu", "CPU"), ("cuda", "GPU (CUDA)")),
    ),
    Param("dtype", "choice", "float32", choices=devices.DTYPES, label="Precision"),
    Param("source", "choice", "auto", choices=SOURCES, label="Models", labels=SOURCE_LABELS),
    Param("presenter", "bool", False, label="Presenter mode", help="Large fonts and high contrast for a projector."),
    Param(
        "export",
        "choice",
        "png",
        choices=("png", "svg"),
        label="Download figures as",
        widget="radio",
        labels=(("png", "PNG"), ("svg", "SVG")),
        help="The camera icon on every figure saves it in this format.",
    ),
    Param(
        "layout",
        "choice",
        "auto",
        choices=("auto", "phone", "desktop"),
        label="Layout",
        help="auto: a phone's layout on a narrow window (app/ui/layout.py); phone or desktop: always that one.",
    ),
)
#: Your own checkpoint for the lesson's role ("" = the catalogue; app.models.chosen, app.ui.own): set once for every
#: page like GLOBAL_SPEC, but part of a view's own state — a deck's view keeps it in its query, and its slide's
#: page reads it from the URL with the rest of the view (``own.start``), so it is not among the SHARED settings.
MODEL_SPEC = Spec(chosen.PARAM)
#: Lecture mode: which deck is presented (encoded, app/lecture/deck.py; "" = the default deck) and which of its views
#: is on the screen (from 1; 0 = not presenting). Beside GLOBAL_SPEC: read from the URL whenever a link or
#: the deck's Back/Next changes them, not once per session, and kept across page switches.
DECK_SPEC = Spec(
    Param("deck", "str", "", max_len=deck.MAX_ENCODED, label="Deck"),
    Param("slide", "int", 0, lo=0, hi=deck.MAX_VIEWS, label="Slide"),
)
SHARED = {p.name: p for p in (*GLOBAL_SPEC, *DECK_SPEC)}  # their session-state keys are their names

# The session-state keys of the URL state (a parameter's own key is its name, or key_of's).
PAGE = "_page"  # the slug of the page this run shows (set by the router): its widget keys are scoped to it
BOUND = "_bound"  # the pages whose link this session has read
SPEC = "_page_spec"  # the spec the page last bound: what the link to this view carries
NOTES = "_link_notes"  # notes on what a link brought, shown by the page's next bind (settings, deck, a cut paste)
RELOAD = "_reload_view"  # a deck slide's page: its next bind reads exactly the view's state from the URL
WRITTEN = "_deck_url"  # the (deck, slide) this app last wrote to the URL: a link that still says them is not news
DEFAULTED = "_shared_defaults"  # a shared parameter (the text) whose value is still a page's default: name -> value


def page() -> str:
    """The slug of the page this run shows ("home" until the router says)."""
    return st.session_state.get(PAGE, "home")


def set_page(slug: str) -> None:
    st.session_state[PAGE] = slug


def setting(name: str):
    """A shared setting's value in this session (``GLOBAL_SPEC`` or ``DECK_SPEC``): its widget's, else its default."""
    return st.session_state.get(name, (SHARED.get(name) or MODEL_SPEC.model).default)


def key_of(p: Param) -> str:
    """The session-state key of a page parameter: ``<page>.<name>``, or the bare name when shared."""
    return p.name if p.shared else f"{page()}.{p.name}"


def text_mark(p: Param) -> str:
    """The session-state key that remembers which text the value of ``p`` (a word index) was chosen for."""
    return f"{key_of(p)}@text"


def raw_query() -> dict[str, list[str]]:
    return {k: st.query_params.get_all(k) for k in st.query_params}


def add_notes(notes) -> None:
    """Notes for the page's next :func:`read` to show (they arrive before the page's own)."""
    st.session_state[NOTES] = st.session_state.get(NOTES, []) + list(notes)


def bind_globals() -> None:
    """Read the settings every page shares from the URL once per session; their notes show on whichever
    page was opened."""
    missing = [p for p in (*GLOBAL_SPEC, *MODEL_SPEC) if p.name not in st.session_state]
    if missing:
        values, notes = state.parse(raw_query(), tuple(missing))
        for p in missing:
            st.session_state[p.name] = values[p.name]
        add_notes(notes)


def reload_view(slug: str) -> None:
    """Lecture mode: the next :func:`read` of page ``slug`` takes exactly the view's state from the URL."""
    st.session_state[RELOAD] = slug


def read(spec: Spec) -> tuple[dict, list[str]]:
    """Give every parameter of ``spec`` a value in session state — from the URL when the page is opened, else its
    current or default value. Returns the values by name and the notes for everything in the link that was not
    used (and the notes waiting for this page: :func:`add_notes`)."""
    slug = page()
    opened = slug not in st.session_state.setdefault(BOUND, set())
    st.session_state[BOUND].add(slug)
    raw = raw_query()
    notes = list(st.session_state.pop(NOTES, []))
    if st.session_state.get(RELOAD) == slug:  # a slide of the deck: exactly the view's state, from the URL
        st.session_state.pop(RELOAD)
        opened = True
        for p in spec:
            st.session_state.pop(key_of(p), None)
    defaulted = st.session_state.setdefault(DEFAULTED, {})
    for p in spec:  # a shared value no one chose (another page's default) becomes this page's default
        if p.shared and p.name in defaulted and st.session_state.get(p.name) == defaulted[p.name]:
            st.session_state[p.name] = defaulted[p.name] = p.default
    unset = [p for p in spec if key_of(p) not in st.session_state]
    misfit = [p for p in spec if key_of(p) in st.session_state and not state.fits(p, st.session_state[key_of(p)])]
    if unset:
        values, parse_notes = state.parse(raw, tuple(unset))
        notes += parse_notes
        for p in unset:
            st.session_state[key_of(p)] = values[p.name]
            if p.shared and p.name not in raw:  # the page's default, not the user's or the link's
                defaulted[p.name] = values[p.name]
    for p in misfit:
        notes.append(
            f"{text.md(p.name)} held a value this page cannot use ({text.md(st.session_state[key_of(p)], 30)}); "
            f"using {text.md(state.encode_one(p, p.default), 30)}."
        )
        st.session_state[key_of(p)] = p.default
    if opened:
        notes += state.unknown_keys(raw, {p.name for p in (*GLOBAL_SPEC, *MODEL_SPEC, *DECK_SPEC, *spec)})
        for p in spec:  # a link's (or a slide's) word was chosen for the link's text: forget older texts
            st.session_state.pop(text_mark(p), None)
    for p in spec:  # hand every value to its widget explicitly: a key last drawn on another page's run
        st.session_state[key_of(p)] = st.session_state[key_of(p)]  # would otherwise show the widget's default
    st.session_state[SPEC] = spec
    return {p.name: st.session_state[key_of(p)] for p in spec}, notes


def sent_by_client(key: str) -> bool:
    """Whether the browser sent the value of the widget of ``key`` with this run although this session has never
    drawn it: a tab whose session is new — its app process died behind the load balancer, or its websocket
    reconnected to a fresh session — sends every widget it shows with the new session's first rerun, the one change
    the visitor just made included. (A tab that opens a link sends none; a session knows its own widgets.) Read
    from Streamlit's session state, which keeps such values by widget id until their widgets are drawn; the id ends
    with the widget's key (``streamlit.runtime.state.common.user_key_from_element_id``)."""
    try:
        from streamlit.runtime.scriptrunner import get_script_run_ctx
        from streamlit.runtime.state.common import is_element_id, user_key_from_element_id

        inner = get_script_run_ctx().session_state._state
        mapper = inner._key_id_mapper
        if mapper.get_id_from_key(key, None) is not None:  # drawn by this session: its own value (every rerun)
            return False
        states, drawn = inner._new_widget_state.states, mapper.id_key_mapping
    except Exception:  # noqa: BLE001 — no run context (a bare import) or another Streamlit: the link decides
        return False
    return any(w not in drawn and is_element_id(w) and user_key_from_element_id(w) == key for w in states)


def yield_to_client(key: str) -> tuple[bool, object]:
    """Before drawing the widget of ``key``: when the browser sent its value (:func:`sent_by_client`), that value
    wins over the link's, which :func:`read` put in session state (the URL a reconnected tab still shows is the
    state before its last change): forget the link's value, so the widget takes the browser's. Returns whether it
    did and the link's value, for :func:`settle`."""
    if key not in st.session_state or not sent_by_client(key):
        return False, None
    was = st.session_state[key]
    del st.session_state[key]
    return True, was


def settle(yielded: tuple[bool, object], value) -> None:
    """After drawing the widget that :func:`yield_to_client` let the browser set: when its value is not the one
    this run's page was bound with, run the page again with it (once: the widget is this session's now)."""
    did, was = yielded
    if did and value != was:
        st.rerun()


def bound_spec() -> Spec:
    """The spec the page last bound (empty before any)."""
    return st.session_state.get(SPEC, ())


def current_query(spec) -> dict[str, str]:
    """The page's values and every shared setting, as the URL carries them (defaults left out)."""
    values = {p.name: st.session_state.get(key_of(p), p.default) for p in spec}
    values.update({p.name: setting(p.name) for p in (*GLOBAL_SPEC, *MODEL_SPEC, *DECK_SPEC)})
    return state.encode(values, (*GLOBAL_SPEC, *MODEL_SPEC, *DECK_SPEC, *spec))


def view_query(spec=None) -> dict[str, str]:
    """This page's own state, as a link to it carries: the page's values and the model settings (your own model
    included), without presenter mode, the export format and the deck (what a student opening the view should
    get)."""
    spec = spec if spec is not None else bound_spec()
    values = {p.name: st.session_state.get(key_of(p), p.default) for p in spec}
    model_settings = (*(p for p in GLOBAL_SPEC if p.name in ("source", "device", "dtype")), *MODEL_SPEC)
    values.update({p.name: setting(p.name) for p in model_settings})
    return state.encode(values, (*spec, *model_settings))


def write(spec) -> None:
    """Put the page's state into the address bar (only when it differs: a rewrite is a history entry)."""
    query = current_query(spec)
    raw = raw_query()
    if {k: v[-1] for k, v in raw.items()} != query or any(len(v) > 1 for v in raw.values()):
        st.query_params.from_dict(query)
    st.session_state[WRITTEN] = (query.get("deck", ""), query.get("slide", "0"))


def written_deck() -> tuple[str, str] | None:
    """The (deck, slide) this app last wrote to the URL; None after :func:`forget_written_deck`."""
    return st.session_state.get(WRITTEN)


def forget_written_deck() -> None:
    """The next link that names a deck and slide counts as new, even the very one written last."""
    st.session_state[WRITTEN] = None


def clip(key: str, limit: int) -> None:
    """A text box's on_change: a paste longer than the box's limit is cut to it, and the page says so."""
    value = st.session_state.get(key)
    if isinstance(value, str) and len(value) > limit:
        st.session_state[key] = value[:limit]
        add_notes(
            [f"You pasted {len(value):,} characters; the box keeps the first {limit:,} (its limit) — the rest was cut."]
        )
