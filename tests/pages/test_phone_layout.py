"""A phone's layout asked for by the link (``?layout=phone``; app/ui/layout.py), through the router as a student's
phone gets it: the home page's models as a list, the key figures built for the width, presenter mode unchanged."""

import json
import re

import pytest

from app.lessons import LESSONS

from tests.conftest import shown_text


def charts(at) -> dict:
    """plotly chart element id -> its figure spec."""
    return {chart.proto.id: json.loads(chart.proto.spec) for chart in at.get("plotly_chart")}


def chart(at, name: str) -> dict:
    return next(spec for element_id, spec in charts(at).items() if f"fig-{name}" in element_id)


def test_home_on_a_phone_lists_the_models_instead_of_a_five_column_table(app_page):
    from app.models import catalogue

    at = app_page(layout="phone")
    assert not at.exception
    assert not [m for m in at.markdown if m.value.startswith("| variant |")]
    listed = next(m.value for m in at.markdown if m.value.startswith("- **"))
    assert listed.count("\n- **") == len(catalogue.CATALOGUE) - 1  # one block per model, in catalogue order
    assert "google/electra\\-small\\-discriminator" in listed.replace("\\/", "/")
    assert "Lessons" in shown_text(at)


def test_the_masking_grid_is_built_for_a_phone_and_says_what_it_shows(app_page):
    at = app_page("pages/masking.py", layout="phone")
    assert not at.exception
    grid = chart(at, "masking-grid")
    assert grid["layout"]["meta"] == "phone"
    heatmaps = [t for t in grid["data"] if t["type"] == "heatmap"]
    assert len(heatmaps) == 2 and heatmaps[1]["x"] == ["epoch 1: fed"]  # every epoch, then the inspected one
    assert any(
        m.value.startswith('<p class="bve-alt"') and re.search(r"\d+ distinct masks? over", m.value)
        for m in at.markdown
    )


def test_desktop_and_presenter_mode_keep_their_figures(app_page):
    desktop = chart(app_page("pages/masking.py"), "masking-grid")
    assert "meta" not in desktop["layout"] and len(desktop["data"]) == 1
    at = app_page("pages/masking.py", layout="phone", presenter="1")  # the projector's stage wins over the link
    assert not at.exception
    staged = chart(at, "masking-grid")
    assert "meta" not in staged["layout"] and len(staged["data"]) == 1


@pytest.mark.parametrize("page", [lesson.path for lesson in LESSONS])
def test_every_lesson_page_draws_on_a_phone(app_page, page):
    """Every figure a page draws goes through the phone's styling (a table trace has no legend to move: it once
    raised there, on Variants side by side's guide)."""
    at = app_page(page, layout="phone")
    assert not at.exception, (page, at.exception)
    assert at.get("plotly_chart") or page == "pages/attention.py"  # attention's key figure is bertviz's document
