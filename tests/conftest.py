"""Shared fixtures: the bundled checkpoints loaded once per test session, and an AppTest runner.

Tests never download anything: models come from the bundled folder (``BVE_BUNDLED_DIR`` overrides
``assets/models``) or are built from configs.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import settings as hypothesis_settings

ROOT = Path(__file__).resolve().parents[1]
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("BVE_WARM_START", "0")
# Under pytest-xdist (the fast tier: -n auto) each worker is a process with its share of the cores: torch's default
# (as many threads as cores) in every worker puts more threads than cores to work, and its OpenMP threads spin while
# they wait for each other. Measured single-process on the loaded 2-core machine, tests/test_questions.py took 29.0 s
# of CPU with 2 threads and 8.9 s with 1 (the same tests, the same results). Set before torch is imported (its
# thread count is read then: app.core.preload.torch_threads); a run without xdist keeps torch's default.
_WORKERS = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1") or 1)
if _WORKERS > 1:
    os.environ.setdefault("OMP_NUM_THREADS", str(max(1, (os.cpu_count() or 1) // _WORKERS)))
# Hypothesis's default deadline (200 ms an example) is a wall-clock limit: on a loaded machine it failed
# test_compare.py::test_word_window_holds_the_chosen_word (DeadlineExceeded). No example is timed here.
hypothesis_settings.register_profile("bve", deadline=None)
hypothesis_settings.load_profile("bve")


def _by_value(arg):
    if type(arg).__module__.startswith("torch") and hasattr(arg, "numpy"):  # a tensor: by dtype, shape, bytes
        return ("tensor", str(arg.dtype), tuple(arg.shape), arg.detach().cpu().numpy().tobytes())
    return getattr(arg, "identity", arg)


class CountingCache:
    """A cache like the page's: memoizes by arguments (a loaded model by its identity, a tensor by its
    contents) and counts real calls."""

    def __init__(self):
        self.memo, self.calls = {}, []

    def __call__(self, step, *args):
        key = (step.__name__, *[_by_value(a) for a in args])
        if key not in self.memo:
            self.calls.append(step.__name__)
            self.memo[key] = step(*args)
        return self.memo[key]


@pytest.fixture(scope="session")
def bundled():
    """bundled("bert") -> app.models.loading.Loaded, loaded once per session, on CPU."""
    from app.models import loading

    cache: dict = {}

    def get(key: str):
        if key not in cache:
            cache.update(loading.load_set(loading.paired(key)))  # ELECTRA's pair together, tied
        return cache[key]

    return get


def lesson_models(lib, inputs, bundled) -> dict:
    """{key: the bundled model} a lesson's ``run`` is given on ``inputs``: its ``MODELS``, else the variant chosen
    in ``inputs`` (a lesson whose model is the visitor's choice states no MODELS)."""
    keys = tuple(getattr(lib, "MODELS", ())) or ((inputs.variant,) if hasattr(inputs, "variant") else ())
    return {k: bundled(k) for k in keys}


def page_models(models: dict) -> dict | None:
    """The models a page loads on the default settings (``app.ui.loading``, shared by every AppTest run in this
    process), when they are the very checkpoints in ``models`` (the same identity: key, source, folder, device,
    dtype); else None (a real checkpoint in the local Hugging Face cache, which a page on "auto" would use)."""
    from app.ui import loading as ui_loading

    settings = ui_loading.default_settings()
    try:
        page = {k: ui_loading.shared_model(k, *settings) for k in models}
    except Exception:
        return None
    same = all(getattr(page[k], "identity", None) == getattr(models[k], "identity", ()) for k in models)
    return page if same else None


@pytest.fixture(scope="session")
def default_result(bundled):
    """default_result("masking") -> the lesson's Result on its defaults (``Inputs()``) with the bundled models,
    computed once per test process (a lesson's default view costs up to 14 s of CPU: sentence_order's pair pools,
    compare's every variant) and shared by every test that reads it — and by the pages: it is the Result a page
    opened on its defaults gets from ``app.ui.cache.shared_result`` (the app's store of whole Results, on the
    models the page loaded), whichever of the two asks first. A Result is a frozen dataclass, but it may hold lists
    and arrays: at the end of the session each one is checked against a digest taken when it was computed, so a
    test that changed one fails instead of misleading the tests after it."""
    import hashlib
    import importlib
    import pickle

    kept: dict = {}

    def digest(result) -> str | None:
        try:
            return hashlib.sha256(pickle.dumps(result)).hexdigest()
        except Exception:  # a Result that cannot be pickled (a closure inside): not checked
            return None

    def get(slug: str):
        if slug not in kept:
            from app.ui.cache import shared_result

            lib = importlib.import_module(f"app.lessons.{slug}")
            inputs = lib.Inputs()
            models = lesson_models(lib, inputs, bundled)
            page = page_models(models)
            result = lib.run(models, inputs) if page is None else shared_result(lib.run, page, inputs)
            kept[slug] = (result, digest(result))
        return kept[slug][0]

    yield get
    changed = [slug for slug, (result, before) in kept.items() if before is not None and digest(result) != before]
    assert not changed, f"a test changed the shared default Result of {changed}: copy it before changing it"


def app_device_label() -> str:
    """The device the app resolves by default, as the sidebar badge writes it ("CPU" here, "CUDA" on a GPU
    host): badge tests read it instead of assuming a CPU machine."""
    from app.ui.loading import default_settings

    return default_settings()[1].upper()


def require_bundled(*keys: str) -> None:
    """Fail (never skip) when a catalogue key has no bundled checkpoint: every stand-in is committed in
    assets/models/, so a missing one is a lost checkpoint, not work in progress."""
    from app.models import catalogue

    missing = [k for k in keys if not catalogue.get(k).bundled_available()]
    if missing:
        pytest.fail(f"the bundled checkpoint for {', '.join(missing)} is missing from assets/models/")


def run_page(page: str | None = None, timeout: int = 180, **query):
    """Home, then ``page`` through the router (when given), with those query parameters on both runs: an AppTest
    run from the repository root, with a timeout fit for a cold torch (``timeout`` seconds a run)."""
    from streamlit.testing.v1 import AppTest

    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        at = AppTest.from_file(str(ROOT / "streamlit_app.py"), default_timeout=timeout)
        for k, v in query.items():
            at.query_params[k] = v
        at.run()
        if page:
            at.switch_page(page)
            for k, v in query.items():
                at.query_params[k] = v
            at.run()
        return at
    finally:
        os.chdir(cwd)


@pytest.fixture
def app_page():
    """app_page("pages/masking.py", seed="3") -> an AppTest that has run that page through the router,
    with those query parameters (:func:`run_page`)."""
    return run_page


@pytest.fixture
def open_page():
    """open_page("pages/masking.py", seed="3") -> an AppTest whose FIRST run opens that page by its URL with
    those query parameters (as a link does: the page's file name is its URL; a list value repeats the key).
    Unlike app_page, nothing ran before, so notes about the link's global settings show on this page."""
    from streamlit.testing.v1 import AppTest

    def run(page: str, **query):
        cwd = os.getcwd()
        os.chdir(ROOT)
        try:
            at = AppTest.from_file(str(ROOT / "streamlit_app.py"), default_timeout=180)
            at.switch_page(page)
            for k, v in query.items():
                at.query_params[k] = v
            return at.run()
        finally:
            os.chdir(cwd)

    return run


def shown_text(at) -> str:
    """Everything a person reads on the page (markdown, captions, alerts, titles), as one string."""
    parts = []
    for kind in ("title", "header", "subheader", "markdown", "caption", "info", "warning", "error", "success", "code"):
        parts += [str(getattr(e, "value", "")) for e in getattr(at, kind)]
    return "\n".join(parts)


def pytest_collection_modifyitems(config, items):
    """A ``trained`` test (what the bundled checkpoints' quality lets a person see) or a ``basesize`` one (every
    page on checkpoints of the real models' size) is also ``slow``: the fast tier, ``-m "not slow and not e2e"``,
    leaves it to the full run."""
    for item in items:
        if item.get_closest_marker("trained") or item.get_closest_marker("basesize"):
            item.add_marker(pytest.mark.slow)
