"""The handout (app/lecture/handout.py): every lesson of the default deck gives its key figure and takeaway, headless,
on the bundled models; the file is one offline HTML document (nothing fetched from anywhere) with a live link
and QR code per slide; chromium prints it to PDF when it is installed."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import pytest

from app.lecture import deck, handout
from app.figures import Document
from app.lessons import LESSONS
from tests.conftest import ROOT

if TYPE_CHECKING:
    from PIL import Image

BASE = "http://lecture-hall.example:8501"
TINY_JS = "/* plotly.js would be here */"


@pytest.fixture(scope="module")
def sections():
    """Every slide of the default deck, computed as the handout does (models: the bundled stand-ins)."""
    return [
        handout.section(v, handout.load_models(v), v.link(BASE), number=i) for i, v in enumerate(deck.default_deck(), 1)
    ]


@pytest.fixture(scope="module")
def first_sections():
    """The default deck's first two slides, computed as the handout does: what a test of the document's frame
    needs, without building every slide (``sections``: about a minute)."""
    return [
        handout.section(v, handout.load_models(v), v.link(BASE), number=i)
        for i, v in enumerate(deck.default_deck()[:2], 1)
    ]


@pytest.mark.slow  # every lesson's key figure built (78 s)
def test_every_lesson_with_a_key_figure_draws_it_or_says_why(sections):
    lessons = {lesson.slug: lesson for lesson in LESSONS}
    drawn = set()
    for s, v in zip(sections, deck.default_deck()):
        assert s.title == v.title and s.url == v.link(BASE) and s.lesson == lessons[v.page].title
        if s.figure:
            drawn.add(v.page)
            # one paragraph: a takeaway computed from the slide (its numbers) may take two lines on paper, not more
            assert s.takeaway and "\n" not in s.takeaway and len(s.takeaway) <= 220, v.page
        else:  # a lesson without a key figure for the handout yet (test below), or a model not on this machine
            assert s.problem and ("no key figure" in s.problem or "could not be loaded" in s.problem), (
                v.page,
                s.problem,
            )
    assert {
        "masking",
        "albert_params",
        "albert_activations",
        "distillation",
        "electra",
        "xlnet",
        "attention",
        "compare",
    } <= drawn


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda lesson: lesson.slug)
def test_every_lesson_that_puts_a_figure_on_the_stage_gives_it_to_the_handout_too(lesson):
    """A page marks its key figure (``ui.show_figure(..., key=True)``); the handout draws the same figure from
    the lesson's Result: ``Lesson.figure``, ``app/figures/<slug>.py: key_figure``, and the library's TAKEAWAY."""
    import importlib

    if "key=True" in (ROOT / lesson.path).read_text(encoding="utf-8"):
        v = deck.view(lesson.slug)
        assert handout.key_figure_function(v) is not None, f"{lesson.slug}: no key_figure(result) for the handout"
        assert getattr(importlib.import_module(lesson.library), "TAKEAWAY", ""), f"{lesson.library}: no TAKEAWAY"


@pytest.mark.slow  # the default deck's every slide built (sections: ~60 s)
def test_a_figure_is_the_pages_key_figure(sections, bundled):
    """The handout draws with the very function the page puts on the stage, on the same Result."""
    from app.lessons import electra
    from app.figures import electra as figures

    v = next(v for v in deck.default_deck() if v.page == "electra")
    s = next(s for s in sections if s.title == v.title)
    r = electra.run({k: bundled(k) for k in electra.MODELS}, electra.Inputs.from_values(handout.values_of(v)))
    z = figures.key_figure(r).data[4]["z"][0]  # row 5: P(replaced) of the first line
    assert all(f"{x:.2f}" in s.figure or str(x)[:6] in s.figure for x in z[:3])


@pytest.mark.slow  # the default deck's every slide built (sections: ~60 s)
def test_the_attention_slide_is_bertvizs_own_document(sections):
    s = next(s for s, v in zip(sections, deck.default_deck()) if v.page == "attention")
    assert s.figure.startswith('<div class="figure"') and "<iframe" in s.figure and "srcdoc=" in s.figure
    assert "<script" not in s.figure  # escaped inside


@pytest.mark.slow  # the default deck's every slide built (sections: ~60 s)
def test_the_document_is_offline_and_has_one_live_link_per_slide(sections):
    html = handout.document(sections, "My <lecture>", plotly_js=TINY_JS)
    assert html.count(TINY_JS) == 1 and "My &lt;lecture&gt;" in html
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", html.replace(f"href='{BASE}", "")), (
        "nothing is fetched: the only addresses are the slides' own links"
    )
    for s in sections:
        assert f"href='{s.url.replace('&', '&amp;')}'" in html
    assert html.count("<section") == len(sections) and html.count("<svg") >= len(sections)  # a QR code each


def test_takeaway_markdown_is_escaped_then_formatted():
    assert (
        handout.inline_markdown("**bold** <b>x</b> *it* `c<d`")
        == "<b>bold</b> &lt;b&gt;x&lt;/b&gt; <i>it</i> <code>c&lt;d</code>"
    )


def test_a_lesson_that_stops_gives_a_section_that_says_why():
    v = deck.view("electra", {"text": "   "}, "Empty")
    s = handout.section(v, handout.load_models(v), v.link(BASE))
    assert s.figure is None and "sentence" in s.problem.lower()


@pytest.mark.slow  # the default deck's every slide built (sections: ~60 s)
def test_a_figure_is_sized_by_its_page_without_a_toolbar(sections):
    """A figure's box carries the height the figure was made for; the page's script draws it to the box (shrunk,
    not squashed, when taller) with plotly's toolbar off; a document (bertviz) is zoomed to its box."""
    doc = handout._figure_html(Document("<html><head></head><body>x</body></html>", 900), "a")
    assert doc.startswith('<div class="figure" data-height="900"><iframe') and "zoom:" not in doc
    html = handout.document(sections[:2], "Two", plotly_js=TINY_JS)
    assert '"displayModeBar": false' in html and "Plotly.newPlot" in html and "scale(" in html
    electra = next(s for s, v in zip(sections, deck.default_deck()) if v.page == "electra")
    assert re.match(r'<div class="figure" data-height="(\d+)">', electra.figure).group(1) != "450"  # its own height
    assert "</script" not in electra.figure.split('type="application/json">', 1)[1][: -len("</script></div>")]


# ----------------------------------------------------------------------------- the PDF, as printed

needs_chromium = pytest.mark.skipif(not handout.pdf_available(), reason="no chromium on this machine")
DPI = 150  # a modest scan: every code must decode from it


def printed(pdf: bytes, tmp_path) -> list[tuple[str, Image.Image]]:
    """Each page of the PDF as (its text, its image at DPI), by poppler's pdftotext and pdftoppm."""
    import shutil
    import subprocess

    from PIL import Image

    assert shutil.which("pdftoppm") and shutil.which("pdftotext"), (
        "poppler-utils is missing: scripts/test.sh installs it (apt-get install poppler-utils)"
    )
    source = tmp_path / "handout.pdf"
    source.write_bytes(pdf)
    subprocess.run(["pdftoppm", "-r", str(DPI), "-png", str(source), str(tmp_path / "page")], check=True, timeout=120)
    images = sorted(tmp_path.glob("page-*.png"))
    pages = []
    for i, image in enumerate(images, 1):
        text = subprocess.run(
            ["pdftotext", "-f", str(i), "-l", str(i), str(source), "-"],
            check=True,
            timeout=60,
            capture_output=True,
            text=True,
        ).stdout
        pages.append((" ".join(text.split()), Image.open(image).convert("RGB")))
    return pages


#: the default deck's slides whose stage figure is short on paper: a table (compare's selection guide) or one row of
#: square panels (ModernBERT's every layer)
SHORT_SLIDES = {
    n
    for n, v in enumerate(deck.default_deck(), 1)
    if (v.page, dict(v.params).get("figure")) in {("compare", "guide"), ("modernbert", "layers")}
}


def check_page(text: str, image, s: handout.Section):
    """One page holds its slide: the title, a figure above the foot (coloured, at print size), and a square QR
    code of at least 2.5 cm that decodes to the slide's own link (and no other code)."""
    import numpy as np
    import zxingcpp

    assert " ".join(f"{s.number}. {s.title}".split()) in text, (s.number, text[:200])
    assert s.takeaway.split("*")[0][:40] in text.replace("**", ""), s.number
    codes = zxingcpp.read_barcodes(image, formats=zxingcpp.BarcodeFormat.QRCode)
    assert [c.text for c in codes] == [s.url], (s.number, [c.text for c in codes])
    p = codes[0].position
    width, height = p.top_right.x - p.top_left.x, p.bottom_left.y - p.top_left.y
    assert abs(width - height) <= 0.03 * width, (s.number, width, height)  # square
    assert width / DPI * 2.54 >= 2.5, (s.number, width / DPI * 2.54)  # cm, the code itself
    if s.figure:
        above = np.asarray(image)[: min(p.top_left.y, p.top_right.y) - int(DPI / 2.54)].astype(int)  # above the foot
        # coloured: chroma over 30 (the head view's colour-blind-safe heads, sky blue and yellow among them, print
        # their attention lines at a chroma of 30-50 where d3's category10 gave over 50)
        coloured = (above.max(axis=2) - above.min(axis=2)) > 30
        rows = np.nonzero(coloured.any(axis=1))[0]
        # a plot spans a third of the page; a table (the selection guide) is as tall as its rows, a row of square
        # panels (ModernBERT's every layer) as tall as one panel: a sixth
        tall = 0.15 if s.number in SHORT_SLIDES else 0.3
        assert coloured.mean() > 0.002 and rows[-1] - rows[0] > tall * image.height, (s.number, coloured.mean())


@pytest.mark.slow  # chromium prints the PDF
@needs_chromium
def test_a_two_slide_deck_prints_two_pages_each_a_whole_slide(sections, tmp_path):
    two = sections[:2]
    pages = printed(handout.pdf(handout.document(two, "Two slides")), tmp_path)
    assert len(pages) == 2
    assert "Two slides" in pages[0][0]  # the deck's title on the first slide's page, not alone
    for (text, image), s in zip(pages, two):
        check_page(text, image, s)


@pytest.mark.slow  # chromium prints the PDF
@needs_chromium
def test_the_default_deck_prints_one_page_a_slide_and_every_code_decodes(sections, tmp_path):
    pages = printed(handout.pdf(handout.document(sections, "The default deck")), tmp_path)
    assert len(pages) == len(sections)
    for (text, image), s in zip(pages, sections):
        check_page(text, image, s)


@pytest.mark.slow  # the default deck's every slide built (sections: ~60 s)
def test_every_code_in_the_html_is_square_and_decodes_to_its_slides_link(sections):
    import zxingcpp

    from tests.test_qr import svg_image

    html = handout.document(sections, "Codes", plotly_js=TINY_JS)
    codes = re.findall(r'<svg style="width:[^"]*"[^>]*class="qr".*?</svg>', html, re.S)
    assert len(codes) == len(sections)
    for svg, s in zip(codes, sections):
        width, height = re.search(r'width:([\d.]+)mm;height:([\d.]+)mm', svg).groups()
        side = int(re.search(r'viewBox="0 0 (\d+) ', svg).group(1))  # modules, quiet zone included
        assert width == height and float(width) * (side - 8) / side >= 25  # the code itself: ≥ 2.5 cm
        assert [r.text for r in zxingcpp.read_barcodes(svg_image(svg))] == [s.url.replace("&amp;", "&")]


def test_the_class_answers_go_on_a_last_page_only_when_added(first_sections):
    sections = first_sections
    asked = [
        {
            "slide": 1,
            "prompt": "Which word goes in the blank? <script>x</script>",
            "sentence": "61% of you chose ball; the model put 44% on ball.",
        }
    ]
    with_answers = handout.document(sections, "Deck", plotly_js=TINY_JS, answers=asked)
    assert "<h2>The class's answers</h2>" in with_answers and "(slide 1)" in with_answers
    assert "&lt;script&gt;x&lt;/script&gt;" in with_answers and "<script>x</script>" not in with_answers
    assert "61% of you chose ball" in with_answers
    assert "The class's answers" not in handout.document(sections, "Deck", plotly_js=TINY_JS)
