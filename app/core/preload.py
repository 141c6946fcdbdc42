"""The heavy imports, done once per process in one thread, by one explicit call: :func:`load`.

A class opening the app at once runs many page scripts in parallel threads on a fresh server, and two
first-time imports race there (tests/e2e/test_class.py reproduced both before this module existed):
transformers resolves its classes lazily, so a thread asking for ``BertForMaskedLM`` while another is
still importing it got ``ImportError: cannot import name 'BertForMaskedLM'``; and plotly looks pandas up
in ``sys.modules``, so a thread drawing a figure while another was importing pandas got "partially
initialized module 'pandas' has no attribute 'Series'".

Who calls :func:`load`: the router, before it runs any lesson page (never for the home page, which
stays free of torch), and the warm-start thread before it loads models. The first caller does all the
work under a lock; every other thread waits for it, then returns at once. Lesson libraries import this
module first (tests/test_layering.py checks it) and may call :func:`load` themselves: a script or a
test that uses a library without the router gets the same imports in the same order.

It also takes what it imported out of the garbage collector's way. Streamlit runs a full collection
after every script run (``runner.postScriptGC``), and with torch, transformers, pandas and plotly loaded
that walks ~470,000 objects: 270 ms with the GIL held, on every rerun of every session — nearly half of
the server's CPU time with a class of 20 (py-spy). These objects live as long as the process, so they
are moved to the collector's permanent generation (``gc.freeze``); a collection then takes ~1 ms. (That
collection after every run is now off, ``.streamlit/config.toml``: with a class's sessions and caches alive it still
cost 3-13 ms a rerun; Python's own generational collector walks these objects no more either.)
:func:`load` freezes them without collecting first: that one collection walks all ~700,000 objects
(0.2-0.35 s with the GIL held on 2 cores) to find ~11,000 objects of garbage (~8 MB, the imports' own reference
cycles), and the first lesson of a fresh server waits for :func:`load`. The warm start's first
:func:`freeze_long_lived`, after the models are loaded and off any page's path, collects that garbage.
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import threading
from typing import Callable

from app.core import startup

#: Every class the app takes from transformers by name (tests/test_layering.py keeps this list whole).
TRANSFORMERS_NAMES = (
    "AutoModelForCausalLM",
    "AutoModelForMaskedLM",
    "AutoTokenizer",
    "AlbertConfig",
    "AlbertForMaskedLM",
    "AlbertForPreTraining",
    "AlbertTokenizer",
    "BertConfig",
    "BertForMaskedLM",
    "BertForPreTraining",
    "BertTokenizer",
    "DebertaConfig",
    "DebertaForMaskedLM",
    "DebertaTokenizer",
    "DistilBertConfig",
    "DistilBertForMaskedLM",
    "DistilBertTokenizer",
    "ElectraConfig",
    "ElectraForMaskedLM",
    "ElectraForPreTraining",
    "ElectraTokenizer",
    "ModernBertConfig",
    "ModernBertForMaskedLM",
    "PreTrainedTokenizerFast",
    "RobertaConfig",
    "RobertaForMaskedLM",
    "RobertaTokenizer",
    "XLNetConfig",
    "XLNetLMHeadModel",
    "XLNetTokenizer",
)
PLOTLY_NAMES = ("Bar", "Figure", "Heatmap", "Scatter")
MODULES = (
    "numpy",
    "pandas",
    "plotly.graph_objects",
    "plotly.subplots",
    "torch",
    "transformers",
)  # pandas before plotly

_lock = threading.Lock()
_done = False
_waiting = 0  # threads blocked in load() while another thread holds the lock
_garbage_frozen = False  # load() froze the imports' garbage with them; the next freeze_long_lived() collects it
_torch_threads = 0  # torch's intra-op threads as imported (its default: one per core, or OMP_NUM_THREADS)


def load(pause: Callable[[], object] | None = None) -> None:
    """Import numpy, pandas, plotly, torch and transformers (and resolve the lazy classes the app uses),
    then freeze what they allocated. Thread-safe and idempotent: later calls return at once.

    ``pause()``, when given, is called between two imports: background callers (``app.serve`` begins the
    imports as the process starts) step aside there for visitors' pages that do not need them. It should
    return at once while :func:`waited_for` — a page is blocked here, waiting for these very imports."""
    global _done, _waiting, _garbage_frozen, _torch_threads
    if _done:
        return
    with _count:
        _waiting += 1
    try:
        _lock.acquire()
    finally:
        with _count:
            _waiting -= 1
    try:
        if _done:
            return
        startup.mark("preload start")
        step = pause or (lambda: None)
        mods = {}
        with collector_paused():
            for name in MODULES:
                step()
                mods[name] = importlib.import_module(name)
            _torch_threads = mods["torch"].get_num_threads()  # before anything sets it (app.models.device.use_threads)
            for name in sorted(TRANSFORMERS_NAMES):  # the app's and the catalogue's (tests/test_layering.py)
                step()
                getattr(mods["transformers"], name)  # resolves the lazy attribute: imports the model's module now
            for name in PLOTLY_NAMES:
                getattr(mods["plotly.graph_objects"], name)
            gc.freeze()  # not collected first: see the module text
        _garbage_frozen = True
        _done = True
        startup.mark("preload end")
    finally:
        _lock.release()


_count = threading.Lock()


def waited_for() -> bool:
    """Whether a thread is blocked in :func:`load`, waiting for the imports another thread is doing."""
    return _waiting > 0


def done() -> bool:
    return _done


def torch_threads() -> int:
    """torch's intra-op threads as it was imported (0 before :func:`load`): what a visitor's page computes with."""
    return _torch_threads


@contextlib.contextmanager
def collector_paused():
    """The garbage collector off for the block, as it was after it. The imports allocate ~470,000 objects that
    live as long as the process; with the collector on, they set off ~8 full collections on the way, each
    walking everything imported so far (a fifth of the imports' CPU time, measured). The little garbage they
    leave is collected later, off a page's path (:func:`freeze_long_lived`). The collector is
    off for the whole process meanwhile (Python has one), which only delays the freeing of reference cycles in
    other threads by those seconds."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def freeze_long_lived(busy: Callable[[], bool] | None = None) -> int:
    """Collect once, then exempt everything alive now from future collections (see the module text); returns
    the number of unreachable objects found. Call when what was just created lives as long as the server (models
    after loading). The first call after :func:`load` also collects the garbage :func:`load` froze with the
    libraries, so it walks everything (0.2-0.6 s with the GIL held, every page run of the process stopped
    meanwhile): call it where no page waits (the warm start, after stepping aside for visitors). ``busy()`` true
    (visitors' pages running all the same: a class opening a fresh server at once): only the freeze, which costs
    nothing, and the walk is left to a later call that finds the server quiet (a py-spy of 20 sessions opening at
    once, 2026-11-29, caught the walk holding the GIL for 0.61 s amid their first pages)."""
    global _garbage_frozen
    if busy is not None and busy():
        gc.freeze()  # the new long-lived objects out of the collector's way; a little garbage with them, for now
        return 0
    if _garbage_frozen:
        gc.unfreeze()
        _garbage_frozen = False
    found = gc.collect()
    gc.freeze()
    return found
