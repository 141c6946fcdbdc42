"""A class opening a fresh server at once: the first page that needs a model while others run loads the whole
catalogue in one go (app.ui.loading.load_all_when_crowded); a lone visitor, other settings and a second call load
nothing more."""

from __future__ import annotations

import threading

import pytest

from app.core import visitors
from app.models import catalogue
from app.ui import loading


@pytest.fixture
def fake(monkeypatch):
    calls = []
    monkeypatch.setattr(loading, "_load", lambda key, *settings: calls.append((key, settings)))
    monkeypatch.setattr(loading, "_all_loaded", set())
    monkeypatch.setattr(loading, "warm_start_on", lambda: True)
    return calls


def crowd(monkeypatch, pages: int) -> None:
    monkeypatch.setattr(visitors, "running", lambda: pages)


def test_a_crowded_first_load_loads_every_catalogue_model_once(fake, monkeypatch):
    crowd(monkeypatch, 3)
    defaults = loading.default_settings()
    assert loading.load_all_when_crowded(*defaults) is True
    assert [k for k, _ in fake] == list(catalogue.CATALOGUE) and {s for _, s in fake} == {defaults}
    assert loading.load_all_when_crowded(*defaults) is False and len(fake) == len(catalogue.CATALOGUE)


def test_a_lone_visitor_other_settings_or_no_warm_start_load_only_their_own(fake, monkeypatch):
    defaults = loading.default_settings()
    crowd(monkeypatch, 1)
    assert loading.load_all_when_crowded(*defaults) is False
    crowd(monkeypatch, 5)
    other = (defaults[0], defaults[1], "bfloat16" if defaults[2] != "bfloat16" else "float16")
    assert loading.load_all_when_crowded(*other) is False
    monkeypatch.setattr(loading, "warm_start_on", lambda: False)  # the unit tests' BVE_WARM_START=0, a script
    assert loading.load_all_when_crowded(*defaults) is False
    assert fake == []


def test_a_broken_checkpoint_does_not_stop_the_others(fake, monkeypatch):
    crowd(monkeypatch, 2)
    first = next(iter(catalogue.CATALOGUE))

    def load(key, *settings):
        if key == first:
            raise OSError("a half-written checkpoint")
        fake.append((key, settings))

    monkeypatch.setattr(loading, "_load", load)
    assert loading.load_all_when_crowded(*loading.default_settings()) is True
    assert [k for k, _ in fake] == [k for k in catalogue.CATALOGUE if k != first]


def test_pages_arriving_together_load_the_catalogue_once(fake, monkeypatch):
    crowd(monkeypatch, 8)
    defaults = loading.default_settings()
    done = []
    threads = [threading.Thread(target=lambda: done.append(loading.load_all_when_crowded(*defaults))) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(done) == [False] * 7 + [True] and len(fake) == len(catalogue.CATALOGUE)
