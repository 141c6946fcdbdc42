"""The server's warm start: one background thread per server that does, ahead of the visitors, what they would
otherwise wait for — and that yields to them while they are served.

In order: the heavy imports (``app.core.preload``), every catalogue model as a visitor who changed nothing gets
them (``loading.default_settings``; the *warm start* proper, whose end ``warm_progress()["seconds"]`` marks, so
timings taken before it are taken again), then every lesson's default view computed into the pages' own cache
(``app.ui.cache``: the same steps, arguments and model identities a page uses) and its stage figure built
(``app.figures.kept``), so a lesson opened at its defaults finds its expensive steps done and its figure made.
Lecture mode puts the deck's next slide on the same queue while a slide is shown (:func:`precompute`), so →
finds it computed.

Yielding: the router starts the thread at the *end* of the first page run (``streamlit_app.py``), so the first
page a visitor opens is not slowed by it; between two steps the thread waits while any visitor's page is
running (``app.core.visitors``, told by the router), at most ``visitors.YIELD_MAX_S`` a step, so a run
that never reports its end cannot stop it. A visitor who asks for what the thread is computing
waits for that one value only (Streamlit computes a cached value once, under a per-value lock), never for
the queue behind it.

``BVE_WARM_START=0`` turns it off (the unit tests do, to load only what they use).
"""

from __future__ import annotations

import sys
from collections import deque
import threading
import time

import streamlit as st

from app.core import startup
from app.core.visitors import running, yield_to_visitors
from app.models import catalogue
from app.models import device as devices

#: While the thread computes, the interpreter hands the GIL over every 1 ms instead of every 5: the server's event
#: loop, which gives up the GIL at every socket call, otherwise waits 5 ms to get it back each time behind a
#: thread that computes (the "convoy effect"), and a click took seconds to reach its page's script.
BUSY_SWITCH_S = 0.001
IDLE_SWITCH_S = sys.getswitchinterval()
QUEUE_LIMIT = 64  # views waiting to be computed (a deck's next slides), beyond which new ones are dropped


def on() -> bool:
    from app.ui import loading

    return loading.warm_start_on()


# ----------------------------------------------------------------------------- the thread


class Warm:
    """The warm start's state, shared by every session: its progress, and the views waiting to be computed —
    a deck's next slides first, then every lesson's defaults."""

    def __init__(self) -> None:
        self.total = len(catalogue.CATALOGUE)
        self.done: list[str] = []  # models loaded (or failed: the page that needs one says why)
        self.seconds: float | None = None  # imports and models, once done
        self.precomputed: list[str] = []  # the links of the views computed, in order
        self.failed: list[str] = []  # views whose computation raised (the page says why when opened)
        self.urgent: deque = deque()  # (view, settings): a deck's next slide
        self.background: deque = deque()  # (view, settings): every lesson's defaults
        self.seen: set = set()
        self.ready = threading.Condition()
        self.started = False

    def progress(self) -> dict:
        """{"done": [...], "total": n, "seconds": float | None, "precomputed": n} (``measure.warm_done`` reads
        "seconds")."""
        return {
            "done": list(self.done),
            "total": self.total,
            "seconds": self.seconds,
            "precomputed": len(self.precomputed),
        }

    def put(self, view, settings_: tuple[str, str, str], urgent: bool = False) -> bool:
        """Queue ``view`` under ``settings_`` once; False if it was queued before or the queue is full."""
        key = (view.page, view.query, settings_)
        with self.ready:
            if key in self.seen or len(self.urgent) + len(self.background) >= QUEUE_LIMIT:
                return False
            self.seen.add(key)
            (self.urgent if urgent else self.background).append((view, settings_))
            sys.setswitchinterval(BUSY_SWITCH_S)
            self.ready.notify()
        return True

    def take(self) -> tuple:
        """The next (view, settings) to compute, urgent first; waits for one."""
        with self.ready:
            while not (self.urgent or self.background):
                self.ready.wait()
            return (self.urgent or self.background).popleft()

    def idle(self) -> bool:
        with self.ready:
            return not (self.urgent or self.background)


def default_views() -> list:
    """Every lesson's view at its defaults, in teaching order."""
    from app.lecture import deck
    from app.lessons import LESSONS

    return [deck.view(lesson.slug) for lesson in LESSONS]


def compute_view(view, settings_: tuple[str, str, str]) -> None:
    """Run ``view``'s lesson as its page would, on the shared models under ``settings_``, through the pages'
    cache, and build its stage figure: what the page then finds computed and made. Before each expensive step it
    steps aside for visitors' pages. Raises what the lesson raises (a Stop included)."""
    import importlib

    from app.core import state
    from app.figures import stage_figure
    from app.lecture import handout
    from app.ui import loading
    from app.ui.cache import cache, keep_result

    lib = handout.library(view)
    models = {}
    for key in handout.models_for(view):
        try:
            models[key] = loading.shared_model(key, *settings_)
        except Exception:  # a model that cannot be loaded: the page says so when opened
            pass

    def stepping_aside(step, *args):  # before each of the lesson's expensive steps, a visitor's page goes first
        yield_to_visitors()
        return cache(step, *args)

    values = handout.values_of(view)
    inputs = lib.Inputs.from_values(values)
    result = lib.run(models, inputs, stepping_aside)
    keep_result(lib.run, models, inputs, result)  # the page's shared Result (not its in-flight slot: see keep_result)
    build = handout.key_figure_function(view)
    if build is not None:  # and its stage figure, which the page then finds kept (``app.figures.kept``)
        yield_to_visitors()
        stage_figure(importlib.import_module(build.__module__), result, values.get(state.FIGURE))


def _work(w: Warm) -> None:
    from app.core import lesson, preload
    from app.ui import loading

    t = time.perf_counter()
    startup.mark("warm start begin")
    sys.setswitchinterval(BUSY_SWITCH_S)
    preload.load(pause=lambda: yield_to_visitors(unless=preload.waited_for))  # steps aside for pages, not for one
    # that waits for these imports
    devices.use_threads(devices.BACKGROUND_THREADS)  # a core stays for the pages and a browser beside the server
    settings_ = loading.default_settings()
    for key in list(catalogue.CATALOGUE):
        yield_to_visitors()
        try:
            loading.shared_model(key, *settings_)
        except Exception:  # a broken checkpoint shows its message on the page that needs it
            pass
        w.done.append(key)
    yield_to_visitors()  # the first call below walks everything the imports made (see app.core.preload)
    preload.freeze_long_lived(busy=running)  # the models live as long as the server: out of every rerun's GC
    w.seconds = time.perf_counter() - t
    startup.mark("warm start end")
    for view in default_views():
        w.put(view, settings_)
    while True:
        view, got = w.take()
        yield_to_visitors()
        name = view.link()
        try:
            with startup.span("precompute", page=name):
                compute_view(view, got)
            w.precomputed.append(name)
        except lesson.Stop:
            w.precomputed.append(name)
        except Exception:  # the page shows the lesson's own message when it is opened
            w.failed.append(name)
        if w.idle():
            startup.mark("precompute idle")
            preload.freeze_long_lived(busy=running)
            sys.setswitchinterval(IDLE_SWITCH_S)


@st.cache_resource(show_spinner=False)
def _warm() -> Warm:
    """The one warm start of this server (its state; the thread starts on the first :func:`warm_start`)."""
    return Warm()


def warm_start() -> None:
    """Start the server's warm start (once; cheap on every later call). The router calls it after a page."""
    if not on():
        return
    w = _warm()
    with w.ready:
        if w.started:
            return
        w.started = True
    threading.Thread(target=_work, args=(w,), name="bve-warm-start", daemon=True).start()


def warm_progress() -> dict | None:
    """The warm start's progress ({"done", "total", "seconds", "precomputed"}), or None when it is off. Reading it
    does not start it: the first page is drawn before the warm start takes a core."""
    return _warm().progress() if on() else None


def precompute(view, settings_: tuple[str, str, str]) -> bool:
    """Compute ``view`` in the background under ``settings_`` (a deck's next slide), once; False when the warm
    start is off, or the view was already queued."""
    return on() and _warm().put(view, settings_, urgent=True)
