"""The one module in app/ that imports streamlit: cached model loaders, the shared sidebar, URL binding,
and how figures are shown (export format, presenter styling). Pages call these; the rest of app/ is pure.
"""

from __future__ import annotations

import html
import os
import threading
import time
from contextlib import contextmanager
from urllib.parse import urlencode

import streamlit as st

from app import state
from app.models import catalogue
from app.models.device import DTYPES, cuda_present

DEVICE_CHOICES = ("auto", "cpu", "cuda")
GLOBAL_SPEC = (
    state.Param("device", "choice", "auto", choices=DEVICE_CHOICES),
    state.Param("dtype", "choice", "float32", choices=DTYPES),
    state.Param("source", "choice", "bundled", choices=("bundled", "hub")),
    state.Param("presenter", "bool", False),
    state.Param("export", "choice", "png", choices=("png", "svg")),
)
PRESENTER_FONT = 22


# ----------------------------------------------------------------------------- routing


def routed_by_navigation() -> None:
    """Called first by the router. A ``pages/`` folder beside the entry file makes Streamlit 1.67 run
    every script through its legacy pages-folder mode, which maps a deep link such as ``/electra``
    straight to ``pages/electra.py`` and skips the router (no shared sidebar, no layout). Turn that
    mode off for this server; st.navigation is the only router. The very first request of a fresh
    server still goes through that mode, which knows pages by file name: so every lesson's URL is its
    file name, the file runs, and ui.bind reroutes it here (tests/e2e checks both cases)."""
    from streamlit.runtime.pages_manager import PagesManager

    PagesManager.uses_pages_directory = False
    st.session_state["_routed"] = True


def _reroute_if_unrouted() -> None:
    """A page reached without the router (the first deep link a fresh server sees) reruns through it."""
    if not st.session_state.get("_routed"):
        routed_by_navigation()
        st.rerun()


# ----------------------------------------------------------------------------- URL state


def bind(spec: tuple[state.Param, ...]) -> None:
    """Give every parameter of ``spec`` a value in session state, from the URL when the page is opened
    (or from its default), and write the current values back to the URL. Call before the widgets, whose
    ``key=`` is the parameter's name. Malformed values in the link are reported, never raised."""
    _reroute_if_unrouted()
    # lessons share key names (text, word, temperature, ...) with their own ranges: a value carried over
    # from another page that does not fit this page's parameter is re-read from the URL or the default
    missing = [p for p in spec if p.name not in st.session_state or not _fits(p, st.session_state[p.name])]
    if missing:
        values, notes = state.parse(st.query_params.to_dict(), tuple(missing))
        for p in missing:
            st.session_state[p.name] = values[p.name]
        for note in notes:
            st.info(note, icon=":material/link:")
    for p in spec:  # hand every value to its widget explicitly: a key last drawn by another page's widget
        st.session_state[p.name] = st.session_state[p.name]  # would otherwise show that widget's default
    st.session_state["_page_spec"] = spec
    _write_url(spec)


def _fits(p: state.Param, value) -> bool:
    try:
        return state.parse_one(p, state.encode_one(p, value)) == value
    except (ValueError, TypeError, AttributeError):
        return False


def _current_query(spec) -> dict[str, str]:
    values = {p.name: st.session_state.get(p.name, p.default) for p in (*GLOBAL_SPEC, *spec)}
    return state.encode(values, (*GLOBAL_SPEC, *spec))


def _write_url(spec) -> None:
    query = _current_query(spec)
    if dict(st.query_params.to_dict()) != query:
        st.query_params.from_dict(query)


def share_link(spec: tuple[state.Param, ...]) -> None:
    """A copyable link to exactly this view (st.code has a copy button)."""
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


def words_to_mask(text: str, tokenizers: dict) -> tuple[str, list]:
    """(the text cut to fit every tokenizer, its words) for a page that masks one word; says when the
    text was cut, and stops the page with a clear message when there is no word to mask."""
    from app import compare

    fitted, cut_note = compare.fit_text(text, tokenizers)
    if cut_note:
        st.info(cut_note, icon=":material/content_cut:")
    words = compare.split_words(fitted)
    if not words:
        st.warning("There is no word in this text to mask: type a sentence with some letters in it.")
        st.stop()
    return fitted, words


# ----------------------------------------------------------------------------- models


def settings() -> tuple[str, str, str]:
    """(source, device, dtype) chosen in the sidebar, with 'auto' resolved."""
    dev = st.session_state.get("device", "auto")
    if dev == "auto":
        dev = "cuda" if cuda_present() else "cpu"
    return st.session_state.get("source", "bundled"), dev, st.session_state.get("dtype", "float32")


@st.cache_resource(show_spinner=False, max_entries=48)
def _load(key: str, source: str, device: str, dtype: str):
    from app.models import loading

    try:
        if key.startswith("electra-"):
            gen, disc = _load_electra_pair(source, device, dtype)
            return gen if key == "electra-generator" else disc
        return loading.load(key, source=source, device=device, dtype=dtype)
    except loading.ModelUnavailable as e:
        return str(e)


@st.cache_resource(show_spinner=False, max_entries=8)
def _load_electra_pair(source: str, device: str, dtype: str):
    from app.models import loading

    gen = loading.load("electra-generator", source=source, device=device, dtype=dtype)
    disc = loading.load("electra-discriminator", source=source, device=device, dtype=dtype)
    loading.tie_electra_pair(gen, disc)
    return gen, disc


def model(key: str):
    """The loaded variant (shared by every session), or stop the page with a clear message."""
    source, device, dtype = settings()
    label = catalogue.get(key).label
    with st.spinner(f"Loading {label}…"):
        loaded = _load(key, source, device, dtype)
    if isinstance(loaded, str):
        st.error(f"{label} could not be loaded: {loaded}")
        st.stop()
    if loaded.notice:
        st.info(loaded.notice, icon=":material/info:")
    st.session_state.setdefault("_loaded", {})[key] = (loaded.source, loaded.device, loaded.dtype, loaded.load_seconds)
    return loaded


def try_model(key: str):
    """Like model(), but returns the error message (a str) instead of stopping the page: for pages
    that show many variants and should go on without the one that failed."""
    source, device, dtype = settings()
    with st.spinner(f"Loading {catalogue.get(key).label}…"):
        loaded = _load(key, source, device, dtype)
    if not isinstance(loaded, str):
        st.session_state.setdefault("_loaded", {})[key] = (loaded.source, loaded.device, loaded.dtype, loaded.load_seconds)
    return loaded


@contextmanager
def timed_forward():
    """Time a forward pass for the sidebar badge."""
    t = time.perf_counter()
    yield
    st.session_state["_last_forward_ms"] = (time.perf_counter() - t) * 1000


def warm_progress() -> dict | None:
    """{"done": [...], "total": n, "seconds": float | None} of the server's warm start, if it runs."""
    return st.session_state.get("_warm")


def warm_start() -> None:
    """Load every bundled model once per server in a background thread, so no lesson waits on stage.

    ``BVE_WARM_START=0`` turns it off (the unit tests do, to load only what they use). Cheap on every
    rerun after the first: the thread and its progress are one cached resource."""
    if os.environ.get("BVE_WARM_START", "1") != "0":
        st.session_state["_warm"] = _start_warm_thread()


@st.cache_resource(show_spinner=False)
def _start_warm_thread() -> dict:
    keys = [k for k, v in catalogue.CATALOGUE.items() if v.bundled_available()]
    progress = {"done": [], "total": len(keys), "seconds": None}
    source, device, dtype = "bundled", ("cuda" if cuda_present() else "cpu"), "float32"

    def work():
        t = time.perf_counter()
        for key in keys:
            try:
                _load(key, source, device, dtype)
            except Exception:  # a broken checkpoint shows its message on the page that needs it
                pass
            progress["done"].append(key)
        from app.preload import freeze_long_lived

        freeze_long_lived()  # the models live as long as the server: keep them out of every rerun's GC
        progress["seconds"] = time.perf_counter() - t

    threading.Thread(target=work, name="bve-warm-start", daemon=True).start()
    return progress


# ----------------------------------------------------------------------------- sidebar


def sidebar() -> None:
    """The settings every page shares: model source, device, dtype, presenter mode, export format."""
    bind_globals()
    sb = st.sidebar
    sb.selectbox("Models", ("bundled", "hub"), key="source",
                 format_func=lambda s: "Bundled (offline)" if s == "bundled" else "Hugging Face hub (falls back to bundled)")
    devices = ["auto", "cpu"] + (["cuda"] if cuda_present() else [])
    if st.session_state.get("device") not in devices:
        st.session_state["device"] = "auto"
    sb.selectbox("Device", devices, key="device", format_func=lambda d: {"auto": "Auto (GPU if present)", "cpu": "CPU", "cuda": "GPU (CUDA)"}[d])
    if settings()[1] == "cuda":
        sb.selectbox("Precision", DTYPES, key="dtype")
    sb.toggle("Presenter mode", key="presenter", help="Large fonts and high contrast for a projector.")
    sb.radio("Download figures as", ("png", "svg"), key="export", horizontal=True,
             format_func=str.upper, help="The camera icon on every figure saves it in this format.")
    if st.session_state.get("presenter"):
        presenter_css()


def page_config() -> None:
    """Title, icon, wide layout; a presenter link opens with the sidebar collapsed (more room on a projector)."""
    bind_globals()
    st.set_page_config(page_title="BERT Variants Explorer", page_icon=str(catalogue.REPO_ROOT / "assets" / "icon.png"),
                       layout="wide", initial_sidebar_state="collapsed" if st.session_state.get("presenter") else "auto")


def bind_globals() -> None:
    missing = [p for p in GLOBAL_SPEC if p.name not in st.session_state]
    if missing:
        values, notes = state.parse(st.query_params.to_dict(), tuple(missing))
        for p in missing:
            st.session_state[p.name] = values[p.name]
        st.session_state["_global_notes"] = notes


def badge(slot) -> None:
    """Device, dtype, load time and last forward time, written into a sidebar placeholder."""
    source, device, dtype = settings()
    loaded = st.session_state.get("_loaded", {})
    lines = [f"**Device** {device.upper()} · {dtype}", f"**Models** {'bundled' if source == 'bundled' else 'hub → bundled'}"]
    if loaded:
        load_s = sum(v[3] for v in loaded.values())
        lines.append(f"**Loaded** {len(loaded)} model(s) in {load_s:.2f} s (once per server)")
    if "_last_forward_ms" in st.session_state:
        lines.append(f"**Last forward** {st.session_state['_last_forward_ms']:.1f} ms")
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


# ----------------------------------------------------------------------------- figures


def show_figure(fig, name: str, height: int | None = None) -> None:
    """A plotly figure with the page's export format on its camera button, styled for presenter mode."""
    if st.session_state.get("presenter"):
        fig.update_layout(font=dict(size=PRESENTER_FONT, color="#000"), template="simple_white")
    if height:
        fig.update_layout(height=height)
    fmt = st.session_state.get("export", "png")
    st.plotly_chart(
        fig, width="stretch", key=f"fig-{name}",
        config={"displaylogo": False, "toImageButtonOptions": {"format": fmt, "filename": name, "scale": 2}},
    )


def show_chart(chart, name: str) -> None:
    """An altair chart: its ••• menu saves SVG and PNG (vega-embed, no network)."""
    if st.session_state.get("presenter"):
        chart = chart.configure_axis(labelFontSize=PRESENTER_FONT - 4, titleFontSize=PRESENTER_FONT).configure_legend(
            labelFontSize=PRESENTER_FONT - 4, titleFontSize=PRESENTER_FONT)
    st.altair_chart(chart, width="stretch", key=f"chart-{name}")


def escape(text: str) -> str:
    return html.escape(str(text), quote=True)
