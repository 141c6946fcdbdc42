"""The handout (app/lecture/handout.py): every lesson of the default deck gives its key figure and takeaway, headless,
on the bundled models; the file is one offline HTML document (nothing fetched from anywhere) with a live link
and QR code per slide; chromium prints it to PDF when it is installed."""

from __future__ import annotations

import re

import pytest

from app.lecture import deck, handout
from app.figures import Document
from app.lessons import LESSONS
from tests.conftest import ROOT

BASE = "http://lecture-hall.example:8501"
TINY_JS = "/* plotly.js would be here */"


@pytest.fixture(scope="module")
def sections():
    """Every slide of the default deck, computed as the handout does (models: the bundled stand-ins)."""
    return [handout.section(v, handout.load_models(v), v.link(BASE), number=i)
            for i, v in enumerate(deck.default_deck(), 1)]


def test_every_lesson_with_a_key_figure_draws_it_or_says_why(sections):
    lessons = {lesson.slug: lesson for lesson in LESSONS}
    drawn = set()
    for s, v in zip(sections, deck.default_deck()):
        assert s.title == v.title and s.url == v.link(BASE) and s.lesson == lessons[v.page].title
        if s.figure:
            drawn.add(v.page)
            assert s.takeaway and "\n" not in s.takeaway and len(s.takeaway) <= 110, v.page  # one line
        else:  # a lesson without a key figure for the handout yet (test below), or a model not on this machine
            assert s.problem and ("no key figure" in s.problem or "could not be loaded" in s.problem), (v.page, s.problem)
    assert {"masking", "albert_params", "albert_activations", "distillation", "electra", "xlnet", "attention",
            "compare"} <= drawn


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda lesson: lesson.slug)
def test_every_lesson_that_puts_a_figure_on_the_stage_gives_it_to_the_handout_too(lesson):
    """A page marks its key figure (``ui.show_figure(..., key=True)``); the handout draws the same figure from
    the lesson's Result: ``Lesson.figure``, ``app/figures/<slug>.py: key_figure``, and the library's TAKEAWAY."""
    import importlib

    if "key=True" in (ROOT / lesson.path).read_text(encoding="utf-8"):
        v = deck.view(lesson.slug)
        assert handout.key_figure_function(v) is not None, f"{lesson.slug}: no key_figure(result) for the handout"
        assert getattr(importlib.import_module(lesson.library), "TAKEAWAY", ""), f"{lesson.library}: no TAKEAWAY"


def test_a_figure_is_the_pages_key_figure(sections, bundled):
    """The handout draws with the very function the page puts on the stage, on the same Result."""
    from app.lessons import electra
    from app.figures import electra as figures

    v = next(v for v in deck.default_deck() if v.page == "electra")
    s = next(s for s in sections if s.title == v.title)
    r = electra.run({k: bundled(k) for k in electra.MODELS}, electra.Inputs.from_values(handout.values_of(v)))
    z = figures.key_figure(r).data[4]["z"][0]  # row 5: P(replaced) of the first line
    assert all(f"{x:.2f}" in s.figure or str(x)[:6] in s.figure for x in z[:3])


def test_the_attention_slide_is_bertvizs_own_document(sections):
    s = next(s for s, v in zip(sections, deck.default_deck()) if v.page == "attention")
    assert s.figure.startswith("<iframe") and "srcdoc=" in s.figure and "<script" not in s.figure  # escaped inside


def test_the_document_is_offline_and_has_one_live_link_per_slide(sections):
    html = handout.document(sections, "My <lecture>", plotly_js=TINY_JS)
    assert html.count(TINY_JS) == 1 and "My &lt;lecture&gt;" in html
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", html.replace(f"href='{BASE}", "")), \
        "nothing is fetched: the only addresses are the slides' own links"
    for s in sections:
        assert f"href='{s.url.replace('&', '&amp;')}'" in html
    assert html.count("<section") == len(sections) and html.count("<svg") >= len(sections)  # a QR code each


def test_takeaway_markdown_is_escaped_then_formatted():
    assert handout.inline_markdown("**bold** <b>x</b> *it* `c<d`") == \
        "<b>bold</b> &lt;b&gt;x&lt;/b&gt; <i>it</i> <code>c&lt;d</code>"


def test_a_lesson_that_stops_gives_a_section_that_says_why():
    v = deck.view("electra", {"text": "   "}, "Empty")
    s = handout.section(v, handout.load_models(v), v.link(BASE))
    assert s.figure is None and "sentence" in s.problem.lower()


def test_a_taller_document_is_zoomed_to_fit():
    html = handout._figure_html(Document("<html><head></head><body>x</body></html>", handout.FIGURE_HEIGHT * 2), "a")
    assert "zoom: 0.500" in html and f"height:{handout.FIGURE_HEIGHT + 10}px" in html


@pytest.mark.skipif(not handout.pdf_available(), reason="no chromium on this machine")
def test_chromium_prints_it_to_pdf(sections):
    pdf = handout.pdf(handout.document(sections[:3], "Three slides"))
    assert pdf is not None and pdf.startswith(b"%PDF") and len(pdf) > 10_000
    assert len(re.findall(rb"/Type\s*/Page[^s]", pdf)) >= 3  # a page per slide
