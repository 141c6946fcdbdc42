"""The one package in app/ that imports streamlit. Pages call ``ui.<name>``; the rest of app/ is pure.

This front module holds the router's steps, a page's widgets bound to its spec, running a lesson (``run``,
``stop``, ``models``), the link to this view and the shared sidebar with its badge. Under it, by job:

    url       the URL state: a page's parameters read from the link and written back, key_of, view_query
    cache     the one cache of every lesson's expensive steps
    loading   the sidebar's settings resolved, models loaded and shared, forward timing
    warm      the server's warm start: imports, models, every lesson's default view, a deck's next slide
    stage     presenter mode: the stage, figures, intro and takeaway
    lecture   lecture mode: the deck bar, following a deck link, QR codes, the handout

A lesson page is

    values = ui.bind(SPEC)                              # URL -> session state (notes for bad links) -> URL
    ui.widget(SPEC.rate, column)                        # each widget drawn from its parameter
    result = ui.run(lesson.run, ui.models(...), lesson.Inputs.from_values(values))
    ...figures and text from result...

and the router (streamlit_app.py) runs it between ``start_page`` and ``finish_page``. Widget keys are scoped to
their page (``electra.seed``), except the text a student types (``text``), which every lesson shares on purpose.
"""

from __future__ import annotations

import threading
from urllib.parse import urlencode

import streamlit as st

from app.core import lesson, startup, text, visitors
from app.models import catalogue, device as devices
from app.core.state import Param, Spec
from app.ui import classroom, keep, layout, lecture, loading, model_settings, own, stage, url, warm
from app.ui.cache import cache, shared_result  # noqa: F401  (ui.cache is the function: it hides the module of its name)
from app.ui.url import GLOBAL_SPEC, SOURCES, key_of

# What pages call from the modules under the front, as ui.<name>:
from app.ui.lecture import (  # noqa: F401
    build_handout,
    deck_bar,
    deck_views,
    follow_deck,
    go_to_slide,
    own_deck,
    present_link,
    public_base,
    set_deck,
    students_cannot_reach,
)
from app.ui.loading import settings, try_model  # noqa: F401
from app.ui.warm import warm_progress, warm_start  # noqa: F401
from app.ui.stage import intro, show_chart, show_figure, show_html, takeaway, user_caption  # noqa: F401
from app.ui.layout import phone  # noqa: F401
from app.ui.stage import presenting  # noqa: F401

IN_ROUTER = "_in_router"  # session state: this run goes through the router (start_page, not yet finish_page)
OPENED = "_opened_pages"  # session state: the pages this session has run to the end (their next runs are reruns)


class Stopped(BaseException):
    """Raised by :func:`stop` to end the page; the router catches it and finishes the page (its link, the badge).
    A BaseException, like ``st.stop``'s: a page's ``except Exception`` does not swallow it."""


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


def start_page(slug: str, is_lesson: bool) -> None:
    """The router's step before the page: scope its widget keys, forget the models and the stage the previous
    run used (the badge lists this page's), and for a lesson do the heavy imports once."""
    startup.mark("page start", page=slug)
    url.set_page(slug)
    visitors.page_opening(  # openings go first (app.core.visitors): a visitor with nothing of the page on screen yet
        slug not in st.session_state.get(OPENED, ()), projector=bool(url.setting("presenter"))
    )
    loading.forget_loaded()
    stage.clear()
    st.session_state[IN_ROUTER] = True
    if is_lesson:
        from app.core import preload
        from app.models import device as devices

        preload.load()
        devices.use_page_threads(crowded=visitors.running() > 1)  # torch's default threads (one each when other
        # pages run too: 2 cores shared by a class's runs, each with its own threads, spun idle waiting for them)
    own.start(slug, is_lesson)  # "Model for this lesson" in the sidebar: this page's role, or why it has none


def finish_page(badge_slot, stopped: bool = False) -> None:
    """The router's step after the page: a page that stopped early (:func:`stop`) gets the link to its view
    under the reason, every page the badge in ``badge_slot``; the routed run ends."""
    stage.draw_below()  # figures still waiting for a stage figure that never came
    if stopped:
        share_link()
    st.session_state[OPENED] = {*st.session_state.get(OPENED, ()), url.page()}  # its next runs are reruns
    st.session_state[IN_ROUTER] = False
    badge(badge_slot)
    startup.mark("page end", page=url.page())


def after_page() -> None:
    """The router's last step, however the page ended (a rerun or an error included): the page no longer
    holds the warm start back, and the warm start begins if this was the server's first page
    (``app.ui.warm``: after it, so the first visitor's page is drawn before the warm start takes a core)."""
    visitors.page_finished()
    warm.warm_start()


def other_pages() -> int:
    """Other visitors' page runs under way on this server now (a lesson's timings are provisional while there
    are: ``measure.quiet``)."""
    return max(0, visitors.running() - 1)


def provisional_timings(key: str) -> None:
    """The notice above timings a lesson took while the server was busy (``measure.quiet``: its ``Result`` is
    ``provisional``), with a button that runs the page again: on a quiet server that takes the full timing. ``key``
    tells a page's notices apart."""
    st.info(
        "The server is busy (models still loading in the background, or other visitors' pages computing), "
        "which slows everything down: these timings are provisional, a short look. They are taken in full the "
        "next time this page runs while the server is quiet: change a setting, or time them again.",
        icon=":material/hourglass_top:",
    )
    st.button("Time again", key=f"retime-{key}", icon=":material/timer:", help="Runs this page again.")


def _reroute_if_unrouted() -> None:
    """A page run without the router in this very run (the first deep link a fresh server sees, a page
    Streamlit's pages-folder mode ran directly) reruns through it."""
    if not st.session_state.get(IN_ROUTER):
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
    if notes and stage.presenting():  # on a projector: one box at the stage's top, in view above the figure
        stage.stage().info("  \n".join(notes), icon=":material/link:")  # (below it, no one would see it)
    else:
        for note in notes:
            st.info(note, icon=":material/link:")
    return values


def widget(p: Param, where=None, **overrides):
    """Draw the widget that sets parameter ``p`` (its key, label, help, range and format from ``p``) in
    ``where`` (the page, a column, the sidebar). ``overrides`` go to the widget: ``options`` for choices
    known only at run time (a sentence's words), ``disabled``, ``format_func``, ``horizontal``."""
    # a reconnected tab's value wins over its URL's; a disabled widget's cannot be the visitor's (the frontend
    # keeps its own default for one whose value the server set, and sends that)
    yielded = url.yield_to_client(key_of(p)) if not overrides.get("disabled") else (False, None)
    value = _draw(p, where or st, overrides)
    url.settle(yielded, value)
    return value


def _draw(p: Param, where, overrides: dict):
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


def text_changed(p: Param, text: str, default_text: str) -> bool:
    """Whether ``text`` is not the text the value of ``p`` (a word index) was chosen for, so that index means
    nothing in it: the text this page last ran with; on the page's first run, the lesson's ``default_text``
    while ``p`` holds its default (chosen for that sentence), else ``text`` itself (a link's word was chosen
    for the link's text). Remembers ``text`` for the next run. Call after :func:`bind`."""
    mark = url.text_mark(p)
    before = st.session_state.get(mark)
    if before is None:
        before = default_text if st.session_state.get(key_of(p)) == p.default else text
    st.session_state[mark] = text
    return before != text


def share_link(spec: Spec | None = None) -> None:
    """A copyable link to exactly this view (st.code has a copy button), its QR code for a class, and
    "Add this view to my deck" (lecture mode). The link and the QR code carry the same thing: the view alone
    (``url.view_query``: the page's state and the model settings), never this browser's deck, slide or
    presenter mode."""
    spec = spec if spec is not None else url.bound_spec()
    query = urlencode(url.view_query(spec))
    base = ""
    try:
        address = st.context.url  # None when the client did not say (AppTest, a scripted client)
        base = str(address).split("?")[0] if address else ""
    except Exception:  # older servers
        pass
    with st.expander("Link to this view", expanded=False, icon=":material/link:"):
        st.code(f"{base}?{query}" if query else base or "(defaults: the page's own address)", language=None)
        st.caption("Open it before class: the page restores every setting, seed included.")
        lecture.share_buttons(spec)


# ----------------------------------------------------------------------------- running a lesson


def run(fn, models: dict, inputs):
    """A lesson's ``run(models, inputs, cache)``, timed for the badge, its Result shared with every session that
    asks for the same inputs on the same models (``app.ui.cache.shared_result``). When the lesson raises
    ``lesson.Stop``, its note is shown with the link to this view and the page stops there. When the GPU
    runs out of memory in it, it runs again on the page's models reloaded on the CPU, with one notice."""
    try:
        with loading.timed_forward(), startup.span("lesson run", page=url.page()):
            result, moved, why = devices.fallback_to_cpu(
                lambda ms: shared_result(fn, ms, inputs), models, loading.reload_on_cpu
            )
    except lesson.Stop as early:
        stop(early.note.text, early.note.level)
    if moved:  # the GPU ran out of memory: the page ran on the CPU, said once
        st.warning(loading.out_of_memory_notice(moved, why), icon=":material/memory:")
    classroom.offer(fn, result)  # on a projector: Ask the class, from this Result
    return result


def claim_line(experiment: str) -> None:
    """One line with the measured result of the experiment that tests this lesson's recipe, linking to it
    on the "Does it work?" page (or saying it has not been run yet)."""
    from app.experiments import results

    line = results.one_line(experiment)
    with st.container(key=f"bve-claim-line-{experiment}"):  # the whole line, wrapped: a link's label is cut to one
        st.markdown(f":material/science: {line}")  # line, which cut the verdict off (our own results' words)
        st.page_link(
            "pages/claims.py",
            label="See the experiment on the Does it work? page",
            query_params={"claim": experiment},
            icon=":material/arrow_forward:",
        )


KEPT_TABLES = 128  # tables kept in their Arrow form, the least recently used dropped first
_tables: dict[bytes, object] = {}  # digest of the plain data -> (its Arrow table, whether Streamlit hides the index)
_tables_lock = threading.Lock()


def dataframe(data, where=None, **kw):
    """``st.dataframe`` of plain data (a dict of columns, a list of records or rows), its Arrow form kept by a digest of
    the data (:func:`arrow_form`): Streamlit turns such data into a pandas DataFrame and that into Arrow on every
    rerun (3–10 ms a table on 2 cores), the same table each time a rerun changes nothing. Kept, it is handed to
    Streamlit as the Arrow table it would have made, with the index hidden where Streamlit hides it for that kind of
    data. Anything else (a DataFrame, a Styler, data that cannot be pickled) goes to ``st.dataframe`` as it is."""
    where = where or st
    kept = arrow_form(data)
    if kept is None:
        return where.dataframe(data, **kw)
    table, hidden = kept
    if hidden and kw.get("hide_index") is None:
        kw["hide_index"] = True
    return where.dataframe(table, **kw)


def arrow_form(data):
    """(the Arrow table Streamlit makes of plain ``data``, whether it hides its index for that kind of data), kept by a
    digest of the data's pickle; None for anything but a dict, list or tuple, or what cannot be pickled."""
    import hashlib
    import pickle

    if type(data) not in (dict, list, tuple):
        return None
    try:
        key = hashlib.blake2b(pickle.dumps(data, protocol=pickle.HIGHEST_PROTOCOL), digest_size=20).digest()
    except Exception:  # noqa: BLE001 — not plain data
        return None
    with _tables_lock:
        kept = _tables.pop(key, None)
        if kept is not None:
            _tables[key] = kept  # most recently used last
            return kept
    from streamlit import dataframe_util
    from streamlit.elements.lib.column_config_utils import INDEX_IDENTIFIER, apply_data_specific_configs

    config: dict = {}
    apply_data_specific_configs(config, dataframe_util.determine_data_format(data))
    frame = dataframe_util.convert_anything_to_pandas_df(data, ensure_copy=False)
    kept = (
        dataframe_util.convert_pandas_df_to_arrow_table(frame),
        bool(config.get(INDEX_IDENTIFIER, {}).get("hidden")),
    )
    with _tables_lock:
        _tables[key] = kept
        while len(_tables) > KEPT_TABLES:
            _tables.pop(next(iter(_tables)))
    return kept


def show_notes(notes) -> None:
    """Notes from a lesson (markdown whose user values went through text.md)."""
    for note in notes:
        {"info": st.info, "warning": st.warning, "error": st.error}[note.level](note.text)


def stop(message: str, level: str = "warning") -> None:
    """Show why there is nothing (more) to show and end the page; the router then adds the link to this view
    and the badge (:func:`finish_page`). Pages stop only through here (tests/test_layering.py checks it), never
    with a bare ``st.stop()``."""
    show_notes([lesson.Note(message, level)])
    if not st.session_state.get(IN_ROUTER):  # no router around this run (a fragment's rerun): nothing to finish
        st.stop()
    raise Stopped


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
    """The settings every page shares: model source, device, dtype, presenter mode, export format. The router's
    first step that asks for them: a new run, whose first ask resolves the device (once, for the whole run)."""
    model_settings.forget()
    url.bind_globals()
    sb = st.sidebar
    g = GLOBAL_SPEC

    def keyed(draw, key: str, *args, **kw):  # a reconnected tab's value wins over its URL's (url.yield_to_client)
        yielded = url.yield_to_client(key)
        url.settle(yielded, draw(*args, key=key, **kw))

    keyed(
        sb.selectbox,
        "source",
        g.source.label,
        SOURCES,
        format_func=g.source.shown,
        help="Auto never uses the network. Prepare a lecture with `python -m app.models.prefetch`.",
    )
    st.session_state[own.SLOT] = sb.container()  # "Model for this lesson", drawn once the page is known
    offered = ["auto", "cpu"] + (["cuda"] if devices.cuda_available() else [])
    if st.session_state.get("device") not in offered:
        st.session_state["device"] = "auto"
    keyed(sb.selectbox, "device", g.device.label, offered, format_func=g.device.shown)
    if settings()[1] == "cuda":
        keyed(sb.selectbox, "dtype", g.dtype.label, devices.DTYPES)
    keyed(sb.toggle, "presenter", g.presenter.label, help=g.presenter.help)
    keyed(
        sb.radio,
        "export",
        g.export.label,
        ("png", "svg"),
        horizontal=True,
        format_func=g.export.shown,
        help=g.export.help,
    )
    keep.keep(sb, lecture.PUBLIC_URL)  # the deck and the address students use, kept in this browser
    lecture.address_box(sb)
    layout.sense(sb)  # is the window a phone's? (and the skip link, first in the Tab order)
    if stage.presenting():
        stage.presenter_css()


def page_config() -> None:
    """Title, icon, wide layout; a presenter link opens with the sidebar collapsed (more room on a projector)."""
    url.bind_globals()
    st.set_page_config(
        page_title="BERT Variants Explorer",
        page_icon=str(catalogue.REPO_ROOT / "assets" / "icon.png"),
        layout="wide",
        initial_sidebar_state="collapsed" if stage.presenting() else "auto",
    )


def badge(slot) -> None:
    """What this page ran on — each model's source, device and dtype as loaded, load and compute times —
    written into the sidebar placeholder the router made (``slot``), after the page."""
    _, device, dtype = settings()
    loaded = loading.loaded_this_run()
    mine = own.active()
    lines = []
    if loaded:
        for key, (where, dev, dt, load_s) in loaded.items():
            label = f"Your model (for {catalogue.get(key).label})" if key in mine else catalogue.get(key).label
            lines.append(f"**{label}** {text.md(where, 48)} · {dev.upper()} · {dt} · loaded in {load_s:.2f} s")
    else:
        lines.append(f"**Device** {device.upper()} · {dtype} (no model on this page)")
    if loaded and loading.last_forward_ms() is not None:
        lines.append(f"**Last computation** {loading.last_forward_ms():.1f} ms")
    slot.markdown("  \n".join(lines))
