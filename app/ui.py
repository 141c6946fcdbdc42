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

import functools
import os
import threading
import time
from contextlib import contextmanager
from urllib.parse import urlencode

import streamlit as st

from app import lesson, state, text
from app.models import catalogue, device as devices
from app.state import Param, Spec

SOURCES = ("auto", "hub", "bundled")
SOURCE_LABELS = (("auto", "Auto: real checkpoint if cached, else bundled (offline)"),
                 ("hub", "Hugging Face hub (falls back to bundled)"), ("bundled", "Bundled stand-ins (offline)"))
GLOBAL_SPEC = Spec(
    Param("device", "choice", "auto", choices=devices.CHOICES, label="Device",
          labels=(("auto", "Auto (GPU if available)"), ("cpu", "CPU"), ("cuda", "GPU (CUDA)"))),
    Param("dtype", "choice", "float32", choices=devices.DTYPES, label="Precision"),
    Param("source", "choice", "auto", choices=SOURCES, label="Models", labels=SOURCE_LABELS),
    Param("presenter", "bool", False, label="Presenter mode", help="Large fonts and high contrast for a projector."),
    Param("export", "choice", "png", choices=("png", "svg"), label="Download figures as", widget="radio",
          labels=(("png", "PNG"), ("svg", "SVG")), help="The camera icon on every figure saves it in this format."),
)
PRESENTER_FONT = 22


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
    st.session_state["_routed"] = True


def start_page(slug: str, is_lesson: bool, badge_slot) -> None:
    """The router's last step before running a page: scope its widget keys, forget the models the
    previous run used (the badge lists this page's), and for a lesson do the heavy imports once."""
    st.session_state["_page"] = slug
    st.session_state["_badge_slot"] = badge_slot
    st.session_state["_loaded"] = {}
    st.session_state["_in_router"] = True
    if is_lesson:
        from app import preload

        preload.load()


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


def key_of(p: Param) -> str:
    """The session-state key of a page parameter: ``<page>.<name>``, or the bare name when shared."""
    return p.name if p.shared else f"{st.session_state.get('_page', 'home')}.{p.name}"


def _raw_query() -> dict[str, list[str]]:
    return {k: st.query_params.get_all(k) for k in st.query_params}


def bind(spec: Spec) -> dict:
    """Give every parameter of ``spec`` a value in session state — from the URL when the page is opened,
    else its current or default value — write the values back to the URL, show a note for everything in
    the link that was not used, and return the values by name. Call before the page's widgets."""
    _reroute_if_unrouted()
    page = st.session_state.get("_page", "home")
    opened = page not in st.session_state.setdefault("_bound", set())
    st.session_state["_bound"].add(page)
    raw = _raw_query()
    notes = list(st.session_state.pop("_global_notes", []))
    unset = [p for p in spec if key_of(p) not in st.session_state]
    misfit = [p for p in spec if key_of(p) in st.session_state and not state.fits(p, st.session_state[key_of(p)])]
    if unset:
        values, parse_notes = state.parse(raw, tuple(unset))
        notes += parse_notes
        for p in unset:
            st.session_state[key_of(p)] = values[p.name]
    for p in misfit:
        notes.append(f"{text.md(p.name)} held a value this page cannot use ({text.md(st.session_state[key_of(p)], 30)}); "
                     f"using {text.md(state.encode_one(p, p.default), 30)}.")
        st.session_state[key_of(p)] = p.default
    if opened:
        notes += state.unknown_keys(raw, {p.name for p in (*GLOBAL_SPEC, *spec)})
    clip = st.session_state.pop("_clip_note", None)
    if clip:
        notes.append(clip)
    for p in spec:  # hand every value to its widget explicitly: a key last drawn on another page's run
        st.session_state[key_of(p)] = st.session_state[key_of(p)]  # would otherwise show the widget's default
    st.session_state["_page_spec"] = spec
    _write_url(spec)
    st.session_state["_stage"] = st.container() if presenting() else None  # the key figure's place on a projector
    for note in notes:
        st.info(note, icon=":material/link:")
    return {p.name: st.session_state[key_of(p)] for p in spec}


def _current_query(spec) -> dict[str, str]:
    values = {p.name: st.session_state.get(key_of(p), p.default) for p in spec}
    values.update({p.name: st.session_state.get(p.name, p.default) for p in GLOBAL_SPEC})
    return state.encode(values, (*GLOBAL_SPEC, *spec))


def _write_url(spec) -> None:
    query = _current_query(spec)
    if {k: v[-1] for k, v in _raw_query().items()} != query or any(len(v) > 1 for v in _raw_query().values()):
        st.query_params.from_dict(query)


def _clip(key: str, limit: int) -> None:
    """A text box's on_change: a paste longer than the box's limit is cut to it, and the page says so."""
    value = st.session_state.get(key)
    if isinstance(value, str) and len(value) > limit:
        st.session_state[key] = value[:limit]
        st.session_state["_clip_note"] = (f"You pasted {len(value):,} characters; the box keeps the first {limit:,} "
                                          "(its limit) — the rest was cut.")


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
        return box(on_change=_clip, args=(key, p.max_len), **kw)
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
    """A copyable link to exactly this view (st.code has a copy button)."""
    spec = spec if spec is not None else st.session_state.get("_page_spec", ())
    query = urlencode(_current_query(spec))
    base = ""
    try:
        url = st.context.url  # None when the client did not say (AppTest, a scripted client)
        base = str(url).split("?")[0] if url else ""
    except Exception:  # older servers
        pass
    with st.expander("Link to this view", expanded=False, icon=":material/link:"):
        st.code(f"{base}?{query}" if query else base or "(defaults: the page's own address)", language=None)
        st.caption("Open it before class: the page restores every setting, seed included.")


# ----------------------------------------------------------------------------- running a lesson


def _identity(loaded) -> tuple:
    return loaded.identity


_HASH_FUNCS = {"app.models.loading.Loaded": _identity}


@functools.cache
def _cached(step):
    return st.cache_data(step, max_entries=128, show_spinner=False, hash_funcs=_HASH_FUNCS)


def cache(step, *args):
    """``step(*args)``, cached by its arguments (a loaded model by its identity: key, source, location,
    device, dtype). The one cache of every lesson's expensive steps; no page writes its own."""
    return _cached(step)(*args)


def run(fn, models: dict, inputs):
    """A lesson's ``run(models, inputs, cache)``, timed for the badge. When the lesson raises
    ``lesson.Stop``, its note is shown with the link to this view and the page stops there."""
    try:
        with timed_forward():
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


def settings() -> tuple[str, str, str]:
    """(source, device, dtype) chosen in the sidebar, resolved: "auto" is CUDA only when torch says it is
    available, and CPU runs in float32."""
    dev, dtype, _ = devices.resolve(st.session_state.get("device", "auto"), st.session_state.get("dtype", "float32"))
    return st.session_state.get("source", "auto"), dev, dtype


@st.cache_resource(show_spinner=False, max_entries=64)
def _load(key: str, source: str, device: str, dtype: str):
    """The loaded model, shared by every session. A failure raises, so it is never cached: a checkpoint
    that appears later (a training run finishing, a prefetch) loads on the next try."""
    from app.models import loading

    if key.startswith("electra-"):
        gen, disc = _load_electra_pair(source, device, dtype)
        return gen if key == "electra-generator" else disc
    return loading.load(key, source=source, device=device, dtype=dtype)


@st.cache_resource(show_spinner=False, max_entries=8)
def _load_electra_pair(source: str, device: str, dtype: str):
    from app.models import loading

    gen = loading.load("electra-generator", source=source, device=device, dtype=dtype)
    disc = loading.load("electra-discriminator", source=source, device=device, dtype=dtype)
    loading.tie_electra_pair(gen, disc)
    return gen, disc


def try_model(key: str):
    """The loaded variant (shared by every session), or the reason it could not be loaded (a str): for
    pages that show many variants and go on without the one that failed."""
    source, device, dtype = settings()
    label = catalogue.get(key).label
    with st.spinner(f"Loading {label}…"):
        try:
            loaded = _load(key, source, device, dtype)
        except Exception as e:  # a missing or half-written checkpoint: a message, never a traceback
            return str(e) or type(e).__name__
    st.session_state.setdefault("_loaded", {})[key] = loaded.badge_line()
    return loaded


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


@contextmanager
def timed_forward():
    """Time a lesson's computation for the sidebar badge."""
    t = time.perf_counter()
    yield
    st.session_state["_last_forward_ms"] = (time.perf_counter() - t) * 1000


def warm_progress() -> dict | None:
    """{"done": [...], "total": n, "seconds": float | None} of the server's warm start, if it runs."""
    return st.session_state.get("_warm")


def warm_start() -> None:
    """Load every catalogue model once per server in a background thread, so no lesson waits on stage,
    from the default source (Auto: a cached real checkpoint, else the bundled stand-in).

    ``BVE_WARM_START=0`` turns it off (the unit tests do, to load only what they use). Cheap on every
    rerun after the first: the thread and its progress are one cached resource."""
    if os.environ.get("BVE_WARM_START", "1") != "0":
        st.session_state["_warm"] = _start_warm_thread()


@st.cache_resource(show_spinner=False)
def _start_warm_thread() -> dict:
    keys = list(catalogue.CATALOGUE)
    progress = {"done": [], "total": len(keys), "seconds": None}

    def work():
        from app import preload

        t = time.perf_counter()
        preload.load()
        device, dtype, _ = devices.resolve("auto", "float32")
        for key in keys:
            try:
                _load(key, "auto", device, dtype)
            except Exception:  # a broken checkpoint shows its message on the page that needs it
                pass
            progress["done"].append(key)
        preload.freeze_long_lived()  # the models live as long as the server: keep them out of every rerun's GC
        progress["seconds"] = time.perf_counter() - t

    threading.Thread(target=work, name="bve-warm-start", daemon=True).start()
    return progress


# ----------------------------------------------------------------------------- sidebar and badge


def bind_globals() -> None:
    """Read the settings every page shares from the URL once per session; their notes show on whichever
    page was opened (bind pops them)."""
    missing = [p for p in GLOBAL_SPEC if p.name not in st.session_state]
    if missing:
        values, notes = state.parse(_raw_query(), tuple(missing))
        for p in missing:
            st.session_state[p.name] = values[p.name]
        st.session_state["_global_notes"] = notes


def sidebar() -> None:
    """The settings every page shares: model source, device, dtype, presenter mode, export format."""
    bind_globals()
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
    if st.session_state.get("presenter"):
        presenter_css()


def page_config() -> None:
    """Title, icon, wide layout; a presenter link opens with the sidebar collapsed (more room on a projector)."""
    bind_globals()
    st.set_page_config(page_title="BERT Variants Explorer", page_icon=str(catalogue.REPO_ROOT / "assets" / "icon.png"),
                       layout="wide", initial_sidebar_state="collapsed" if st.session_state.get("presenter") else "auto")


def badge() -> None:
    """What this page ran on — each model's source, device and dtype as loaded, load and compute times —
    written into the sidebar placeholder the router made. Drawn after the page, or before it stops."""
    slot = st.session_state.get("_badge_slot")
    if slot is None:
        return
    _, device, dtype = settings()
    loaded = st.session_state.get("_loaded", {})
    lines = []
    if loaded:
        for key, (where, dev, dt, load_s) in loaded.items():
            lines.append(f"**{catalogue.get(key).label}** {text.md(where, 48)} · {dev.upper()} · {dt} · loaded in {load_s:.2f} s")
    else:
        lines.append(f"**Device** {device.upper()} · {dtype} (no model on this page)")
    if loaded and "_last_forward_ms" in st.session_state:
        lines.append(f"**Last computation** {st.session_state['_last_forward_ms']:.1f} ms")
    slot.markdown("  \n".join(lines))


def presenter_css() -> None:
    st.markdown(
        f"""<style>
        html, body, [data-testid="stAppViewContainer"] {{ font-size: {PRESENTER_FONT}px; }}
        [data-testid="stMarkdownContainer"] p, [data-testid="stMarkdownContainer"] li {{ font-size: {PRESENTER_FONT}px; line-height: 1.45; color: #000; }}
        h1 {{ font-size: 2.4rem !important; }} h2, h3 {{ font-size: 1.8rem !important; }}
        [data-testid="stHeader"], [data-testid="stToolbar"], footer {{ display: none; }}
        .block-container {{ padding-top: 1rem; max-width: 100% !important; }}
        </style>""",
        unsafe_allow_html=True,
    )


# ----------------------------------------------------------------------------- presenter layout and figures
#
# On a projector (presenter mode) a lesson shows its idea first: the page's intro prose is folded away,
# and its key figure with a one-line takeaway sits on the "stage", right under the title, in view at
# 1280x720 without scrolling; widgets and the rest of the page follow below.

PRESENTER_FIGURE_HEIGHT = 430  # px: the key figure with the title and one takeaway line fit 1280x720


def presenting() -> bool:
    return bool(st.session_state.get("presenter"))


def intro(markdown: str) -> None:
    """The lesson's idea in two or three sentences: shown, or folded away on a projector."""
    if presenting():
        with st.expander("What this lesson shows", icon=":material/menu_book:"):
            st.markdown(markdown)
    else:
        st.markdown(markdown)


def takeaway(markdown: str) -> None:
    """The lesson's one takeaway: at the end of the page, or under the key figure on a projector."""
    stage = st.session_state.get("_stage") if presenting() else None
    (stage or st).markdown(f"**Takeaway:** {markdown}")


def show_figure(fig, name: str, height: int | None = None, key: bool = False) -> None:
    """A plotly figure with the page's export format on its camera button, styled for presenter mode.
    ``key=True`` marks the lesson's key figure: on a projector it goes on the stage, sized to fit."""
    stage = st.session_state.get("_stage") if key and presenting() else None
    if presenting():
        fig.update_layout(font=dict(size=PRESENTER_FONT, color="#000"), template="simple_white")
        if stage is not None:
            height = min(height or fig.layout.height or PRESENTER_FIGURE_HEIGHT, PRESENTER_FIGURE_HEIGHT)
    if height:
        fig.update_layout(height=height)
    fmt = st.session_state.get("export", "png")
    (stage or st).plotly_chart(
        fig, width="stretch", key=f"fig-{name}",
        config={"displaylogo": False, "toImageButtonOptions": {"format": fmt, "filename": name, "scale": 2}},
    )


def show_chart(chart, name: str) -> None:
    """An altair chart: its ••• menu saves SVG and PNG (vega-embed, no network)."""
    if st.session_state.get("presenter"):
        chart = chart.configure_axis(labelFontSize=PRESENTER_FONT - 4, titleFontSize=PRESENTER_FONT).configure_legend(
            labelFontSize=PRESENTER_FONT - 4, titleFontSize=PRESENTER_FONT)
    st.altair_chart(chart, width="stretch", key=f"chart-{name}")
