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
