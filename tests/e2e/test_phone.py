"""Every page on a phone (390×844, issue 52): the check a new lesson cannot skip. The pages are found as the router
finds them (app/lessons: every lesson by convention, then the tools), each opened in a 390-px window and waited for
until it is drawn for a phone (the window's width, not a link, chooses it). A page fails on

- sideways panning: the document, or Streamlit's main area, wider than the window; a formula cut at the edge;
- its key figure (``phone.KEY_FIGURES``; a lesson must name one there) with text under ``MIN_PHONE_TEXT_PX``,
  labels whose boxes overlap, or labels outside the figure — all read from the DOM plotly drew.
"""

import pytest

from app.lessons import LESSONS
from tests.e2e import phone
from tests.e2e.browser import browser, exception_boxes, streamlit_server

pytestmark = pytest.mark.e2e

PAGES = phone.pages()


@pytest.fixture(scope="module")
def server():
    with streamlit_server(env={"BVE_WARM_START": "0"}) as (base, _):
        yield base


def test_every_lesson_names_the_figure_a_phone_must_show():
    unnamed = [lesson.slug for lesson in LESSONS if lesson.slug not in phone.KEY_FIGURES | phone.NOT_PLOTLY]
    assert unnamed == [], "say which figure carries the lesson in tests/e2e/phone.py's KEY_FIGURES"


@pytest.mark.parametrize("slug", PAGES)
def test_page_reads_on_a_phone(server, slug):
    with browser(phone.PHONE) as (context, watcher):
        page = phone.open_page(context, watcher, server, slug, phone=True)
        assert exception_boxes(page) == []
        assert phone.overflow(page) == 0, "the page pans sideways on a phone"
        assert phone.cut_formulas(page) == [], "a formula runs past the right edge"
        name = phone.KEY_FIGURES.get(slug)
        if name is None:
            return
        fig = phone.figure_text(page, name)
        assert fig is not None and fig["n"] > 0, f"no figure {name!r} drawn on {slug}"
        assert fig["small"] == [], f"text under {phone.MIN_PHONE_TEXT_PX} px"
        assert fig["overlaps"] == [], "labels on top of each other"
        assert fig["outside"] == [], "labels outside the figure"
        assert phone.overflow(page) == 0
        assert watcher.blocked == [] and watcher.page_errors == []
