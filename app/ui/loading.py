"""Models for the pages: the sidebar's settings resolved (``app.ui.model_settings``, the one place the app turns a
device choice into a device), the catalogue's variants loaded through ``app.models.loading.load_set`` and shared by
every session (a fallback after a failed hub only until it goes stale), and the time a lesson's computation took
(for the badge). The server's warm start, which loads them ahead of the visitors, is ``app.ui.warm``."""

from __future__ import annotations

import os
import threading
import time
from contextlib import contextmanager

import streamlit as st

from app.core import startup, text, visitors
from app.models import catalogue
from app.ui import url
from app.ui.model_settings import CPU_PAGES, default_settings, settings  # noqa: F401  (loading.settings too)

LOADED = "_loaded"  # session state: {key: badge line} of the models this run's page loaded
LAST_FORWARD = "_last_forward_ms"  # session state: how long the last lesson computation took, in ms


@st.cache_resource(show_spinner=False, max_entries=64)
def _load(key: str, source: str, device: str, dtype: str, _progress=None):
    """The loaded model, shared by every session. A failure raises, so it is never cached: a checkpoint
    that appears later (a training run finishing, a prefetch) loads on the next try. A variant that loads with a
    partner (``loading.paired``: ELECTRA's generator and discriminator) comes from their one entry, tied."""
    from app.models import loading

    keys = loading.paired(key)
    if len(keys) > 1:
        return _load_pair(keys, source, device, dtype, _progress)[key]
    return loading.load_set(keys, source, device, dtype, progress=_progress)[key]


@st.cache_resource(show_spinner=False, max_entries=8)
def _load_pair(keys: tuple[str, ...], source: str, device: str, dtype: str, _progress=None) -> dict:
    from app.models import loading

    return loading.load_set(keys, source, device, dtype, progress=_progress)


def shared_model(key: str, source: str, device: str, dtype: str, progress=None):
    """:func:`_load`, except that a fallback after a failed hub is kept only until it goes stale
    (``loading.HUB_RETRY_S``): then the hub is asked again, so a hub that recovers is used without a restart."""
    from app.models import loading

    load_all_when_crowded(source, device, dtype)
    loaded = _load(key, source, device, dtype, progress)
    if loaded.stale:
        keys = loading.paired(key)
        for each in keys:  # its partner came from the same load: both are asked again, and tied again
            _load.clear(each, source, device, dtype)
        if len(keys) > 1:
            _load_pair.clear(keys, source, device, dtype)
        loaded = _load(key, source, device, dtype, progress)
    return loaded


def warm_start_on() -> bool:
    """Whether this server runs its warm start (``app.ui.warm``); ``BVE_WARM_START=0`` turns it off (the unit tests,
    to load only what they use). Here, below the warm start, which imports this module."""
    return os.environ.get("BVE_WARM_START", "1") != "0"


_all_lock = threading.Lock()
_all_loaded: set[tuple[str, str, str]] = set()  # the settings whose catalogue load_all_when_crowded has loaded


def load_all_when_crowded(source: str, device: str, dtype: str) -> bool:
    """A class opening a fresh server at once: the first page that needs a model while other visitors' pages run
    too loads every catalogue model in one go, and the others wait for it instead of computing meanwhile. Returns
    whether this call loaded them.

    Loaded one at a time as each page asked, between the other pages' computations, each bundled model took
    0.2-0.5 s instead of 0.05 s (the interpreter's lock shared by 20 script threads), and the pages that need the
    last ones (the side-by-side lesson needs all of them) began seconds late: 20 sessions opening the lessons on a
    fresh server, 2 idle cores, 2026-11-28, 2 interleaved runs each way: p95 9.1 s and 9.1 s with it, 9.4 s and
    9.6 s without; every lesson began within 0.1 s of the loads' end. Only on a server (its warm start on, which
    loads the same models anyway) and at the default settings, once per process: a lone visitor still loads only
    the models of their page, and the warm start the rest, after it."""
    if (source, device, dtype) in _all_loaded or visitors.running() <= 1 or not warm_start_on():
        return False
    if (source, device, dtype) != default_settings():
        return False
    with _all_lock:
        if (source, device, dtype) in _all_loaded:
            return False
        with startup.span("load all, crowded"):
            for key in catalogue.CATALOGUE:
                try:
                    _load(key, source, device, dtype)
                except Exception:  # noqa: BLE001 — a broken checkpoint: the page that needs it says so
                    pass
        _all_loaded.add((source, device, dtype))
    return True


def try_model(key: str):
    """The loaded variant (shared by every session), or the reason it could not be loaded (a str): for
    pages that show many variants and go on without the one that failed. A download shows its progress."""
    from app.ui import own

    mine = own.model(key)  # your own checkpoint in place of this key (admitted, downloaded), or None
    if mine is not None:
        st.session_state.setdefault(LOADED, {})[key] = mine.badge_line()
        return mine
    source, device, dtype = settings()
    label = catalogue.get(key).label
    shown = []

    def progress(done: int, total: int | None) -> None:
        shown[:] = shown or [st.empty()]
        of = f" of {total / 1e6:.0f} MB" if total else ""
        shown[0].caption(f"Downloading {label} from the hub: {done / 1e6:.1f} MB{of}")

    with st.spinner(f"Loading {label}…"):
        try:
            loaded = shared_model(key, source, device, dtype, progress)
        except Exception as e:  # a missing or half-written checkpoint: a message, never a traceback
            return str(e) or type(e).__name__
        finally:
            if shown:
                shown[0].empty()
    st.session_state.setdefault(LOADED, {})[key] = loaded.badge_line()
    return loaded


def reload_on_cpu(keys) -> dict:
    """The page's models again, on the CPU in float32, after the GPU ran out of memory in its lesson: the page
    stays there for this session under the settings it failed with (:func:`settings`), and its badge says so."""
    source, device, dtype = settings()
    st.session_state.setdefault(CPU_PAGES, {})[url.page()] = (device, dtype)
    from app.ui import own

    models = {key: own.model(key, "cpu", "float32") or shared_model(key, source, "cpu", "float32") for key in keys}
    for key, loaded in models.items():
        st.session_state.setdefault(LOADED, {})[key] = loaded.badge_line()
    return models


def out_of_memory_notice(moved, why: str) -> str:
    """The one notice of a fallback: which models, why, and how to get the GPU back."""
    names = ", ".join(catalogue.get(k).label for k in moved)
    return (
        f"The GPU ran out of memory while running {names} on this page ({text.md(why, 100)}), so the page "
        "ran on the CPU in float32 instead and stays there for this session. To use the GPU again, free its "
        "memory (close other programs that use it), then pick another device or precision in the sidebar and "
        "back."
    )


def forget_loaded() -> None:
    """A new run: the badge lists the models its page loads."""
    st.session_state[LOADED] = {}


def loaded_this_run() -> dict:
    """{key: (which model, device, dtype, load seconds)} of the models this run's page loaded."""
    return st.session_state.get(LOADED, {})


@contextmanager
def timed_forward():
    """Time a lesson's computation for the sidebar badge."""
    t = time.perf_counter()
    yield
    st.session_state[LAST_FORWARD] = (time.perf_counter() - t) * 1000


def last_forward_ms() -> float | None:
    return st.session_state.get(LAST_FORWARD)
