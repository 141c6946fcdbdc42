"""Every figure a lesson page draws has a text alternative under it (issue 52): the lesson's own words where it
wrote them (visible, "In words:"), else the figure's read off it (app/figures/words.py), for a screen reader only.
A future lesson gets them without asking; a projector's stage gets none (the lecturer speaks)."""

from __future__ import annotations

import pytest

from app.lessons import LESSONS


def alts(at) -> list[str]:
    return [m.value for m in at.markdown if m.value.startswith('<p class="bve-alt')]


@pytest.mark.parametrize("page", [lesson.path for lesson in LESSONS])
def test_every_plotly_figure_on_a_lesson_page_has_words_under_it(app_page, page):
    at = app_page(page)
    assert not at.exception
    charts = at.get("plotly_chart")
    words = alts(at)
    assert len(words) == len(charts), (page, len(charts), [w[:80] for w in words])
    hidden = [w for w in words if "bve-sr" in w]
    assert all("position:absolute" in w and "<b>In words:</b> " in w for w in hidden)
    assert all(len(w.split("</b> ", 1)[1]) > len("A figure.</p>") for w in words), words  # more than a shrug


def test_a_typed_word_in_the_figures_words_is_code_and_inert(app_page):
    at = app_page("pages/distillation.py", text="The <b>HACKED</b> girl found a red ball in the park.")
    assert not at.exception
    said = " ".join(alts(at))
    assert "<code>" in said and "<b>HACKED" not in said


def test_the_stage_carries_no_words(app_page):
    at = app_page("pages/distillation.py", presenter="1")
    assert not at.exception and alts(at) == []
