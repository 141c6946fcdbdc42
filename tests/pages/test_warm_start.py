"""The warm start computes each lesson's default view into the pages' own cache, so that opening a lesson at its
defaults finds its expensive steps done (issue 30: the tenth lesson in a row in under a second). That holds only
if the warm start asks for exactly what the page asks for: the same lesson ``run`` on models of the same identity
with equal inputs — then every cached step sees the same arguments. Checked for every lesson against its page."""

from __future__ import annotations

import importlib

import pytest

from app.lecture import deck
from app.lessons import LESSONS
from tests.conftest import run_page


def recorder(monkeypatch, lib):
    seen = []
    real = lib.run

    def run(models, inputs, cache=None):
        seen.append(({k: m.identity for k, m in models.items()}, inputs))
        return real(models, inputs, cache) if cache is not None else real(models, inputs)

    monkeypatch.setattr(lib, "run", run)
    return seen


@pytest.mark.parametrize("lesson", LESSONS, ids=[lesson.slug for lesson in LESSONS])
def test_the_warm_start_computes_what_the_page_asks_for(lesson, monkeypatch):
    from app.ui import loading, warm

    lib = importlib.import_module(lesson.library)
    seen = recorder(monkeypatch, lib)
    at = run_page(lesson.path)
    assert not at.exception, at.exception
    assert seen, f"{lesson.path} did not call {lesson.library}.run"
    page_models, page_inputs = seen[-1]
    seen.clear()
    warm.compute_view(deck.view(lesson.slug), loading.default_settings())
    assert len(seen) == 1
    warm_models, warm_inputs = seen[0]
    assert warm_inputs == page_inputs
    assert warm_models == page_models
