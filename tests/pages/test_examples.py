"""Every prepared example link opens its lesson in the state it names: no note about ignored values,
no exception, and the widgets hold the linked values."""

import pytest

from app.lecture.examples import EXAMPLES
from app.lessons import LESSONS
from tests.conftest import shown_text


def test_every_example_points_at_a_registered_lesson():
    pages = {lesson.path for lesson in LESSONS}
    assert all(ex.page in pages for ex in EXAMPLES)  # a lesson without an example opens in its default view


@pytest.mark.parametrize("ex", EXAMPLES, ids=lambda ex: ex.label[:40])
def test_example_link_restores_its_state(open_page, ex):
    at = open_page(ex.page, **ex.query)
    assert not at.exception, ex.label
    assert "Ignored `" not in shown_text(at), ex.label
    slug = next(lesson.slug for lesson in LESSONS if lesson.path == ex.page)
    for key, raw in ex.query.items():
        value = at.session_state[key if key == "text" else f"{slug}.{key}"]  # widget keys are scoped to their page
        assert (
            str(value) == raw
            or (isinstance(value, float) and float(raw) == value)
            or (isinstance(value, bool) and raw in ("1", "0"))
        ), (key, value, raw)


def test_an_example_that_names_its_words_shows_those_words(open_page):
    """A caption that names the words a view shows is checked against the view: the DeBERTa example once said
    'girl' looking at 'ball' and showed `found` (its query was girl's token index, 3, where the page counts words from
    0)."""
    ex = next(ex for ex in EXAMPLES if ex.page == "pages/deberta.py" and "query" in ex.query)
    at = open_page(ex.page, **ex.query)
    assert (
        "'girl' looking at 'ball'" in ex.why
        and "`girl` (i = " in shown_text(at)
        and ") → `ball` (j = " in shown_text(at)
    )
