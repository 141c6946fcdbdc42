"""Two visitors, one computation: sessions opening the masking lab with the same inputs get the Result the first
one computed (app.ui.cache.shared_result), and a visitor's own sentence is computed for that visitor and never
shows on another's page."""

from __future__ import annotations

import functools
import importlib

import pytest

from app.core.shared import SharedResults
from app.lessons import masking as lab
from tests.conftest import require_bundled, shown_text

PAGE = "pages/masking.py"
ui_cache = importlib.import_module("app.ui.cache")


@pytest.fixture
def counted(monkeypatch):
    """The masking lesson's run, counted, over an empty shared store."""
    monkeypatch.setattr(ui_cache, "_RESULTS", SharedResults())
    calls = []
    real = lab.run

    @functools.wraps(real)
    def run(models, inputs, cache):
        calls.append(inputs)
        return real(models, inputs, cache)

    monkeypatch.setattr(lab, "run", run)
    return calls


def test_two_sessions_same_inputs_one_computation_own_text_stays_own(app_page, counted):
    require_bundled("bert")
    first = app_page(PAGE)
    second = app_page(PAGE)  # another session, the same defaults
    assert not first.exception and not second.exception
    assert len(counted) == 1
    assert first.metric[0].value == second.metric[0].value  # the same Result drawn in both

    mine = "My secret sentence mentions a zebra."
    second.text_area(key="text").set_value(mine).run()
    assert not second.exception and len(counted) == 2 and counted[-1].text == mine
    assert "zebra" in shown_text(second)
    first.run()  # the first visitor's rerun: their own (default) Result, shared, nothing of the other's text
    assert len(counted) == 2 and "zebra" not in shown_text(first)
    assert all("zebra" not in str(chart.proto.spec) for chart in first.get("plotly_chart"))


def test_a_visitors_first_run_of_a_page_is_an_opening_and_a_change_is_a_rerun(app_page, counted, monkeypatch):
    """The router tells openings from reruns (app.core.visitors): a rerun that computes a new Result first lets
    other visitors' openings go; a visitor's first run of the page never waits for anyone."""
    require_bundled("bert")
    seen = []
    monkeypatch.setattr(ui_cache.visitors, "openings_first", lambda: seen.append(ui_cache.visitors.is_rerun()))
    page = app_page(PAGE)
    assert not page.exception and seen == [False]  # the opening computed its Result without waiting
    page.text_area(key="text").set_value("A new sentence about a small red boat.").run()
    assert not page.exception and seen == [False, True] and len(counted) == 2  # the change: a rerun
