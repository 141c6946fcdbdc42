"""Every slide of the default deck on a projector, in a real browser (Debian's chromium), at 1280×720 and at
1920×1080, with every non-loopback request blocked: the figure on the stage is the one the slide's view names (its
``figure`` parameter, else the lesson's key figure), it fills at least 60% of the window's height — drawn at that
size, not only boxed — and the takeaway under it is still in view, without scrolling.

One server for the module and one browser page: each slide is opened from its own link at 1280×720, measured, then
the same window is resized to 1920×1080 (a lecturer moving it to the projector) and measured again; the last slide
is also opened fresh at 1920×1080."""

from __future__ import annotations

import pytest

from app.core import state
from app.lecture import deck
from tests.e2e.browser import browser, exception_boxes, settle, streamlit_server, wait_for_app

pytestmark = pytest.mark.e2e
DEFAULT = deck.default_deck()
SIZES = ((1280, 720), (1920, 1080))
FILL = 0.6  # of the window's height, at least

MEASURE = """() => {
    const box = document.querySelector('.st-key-bve-stage [class*="st-key-bve-stage-figure-"]');
    if (!box) return null;
    const name = [...box.classList].find(c => c.startsWith('st-key-bve-stage-figure-')).slice(24);
    const figure = box.querySelector('.js-plotly-plot, iframe');
    const drawn = box.querySelector('.main-svg') || figure;
    const takeaway = [...document.querySelectorAll('.st-key-bve-stage [data-testid="stMarkdownContainer"]')]
        .find(e => e.innerText.startsWith('Takeaway:'));
    const rect = e => { if (!e) return null; const r = e.getBoundingClientRect(); return [r.top, r.bottom, r.height]; };
    return {name, figure: rect(figure), drawn: rect(drawn), takeaway: rect(takeaway), scrolled: window.scrollY,
            others: document.querySelectorAll('.st-key-bve-stage .js-plotly-plot, .st-key-bve-stage iframe').length};
}"""


def expected_figure(view: deck.View) -> str:
    """The name of the stage figure a view names: its ``figure`` value, else its lesson's key figure's name (the
    parameter's default), or "key" for a lesson that offers no choice."""
    spec = deck.lesson_spec(view.page)
    offered = next((p for p in spec if p.name == state.FIGURE), None)
    return view.params.get(state.FIGURE, offered.default) if offered is not None else "key"


def measure(page, width: int, height: int) -> dict:
    """The stage once the figure is drawn at the window's size (plotly redraws on a resize, a beat later) and the page
    above it has settled: the figure filling the window as the check requires, or, failing that within 30 s, as it is
    then (the check says what is wrong). A fresh-clone CI run on 2 busy cores (2026-11-29) measured NSP vs SOP's
    figure 55 px lower than it is drawn (top 198 px, not 143) while something above it was still being drawn, and the
    same slide passed in the CI run before and alone."""
    drawn = """m && m.figure && m.drawn && m.takeaway && Math.abs(m.drawn[2] - m.figure[2]) < 2"""
    page.wait_for_function(
        f"() => {{ const m = ({MEASURE})(); return {drawn} && m.figure[2] > {0.5 * height}; }}",
        timeout=30_000,
        polling=100,
    )
    settle(  # else measured as it is: check() names what does not fit
        page,
        f"() => {{ const m = ({MEASURE})(); return {drawn} && m.figure[2] >= {FILL * height} "
        f"&& m.takeaway[1] <= {height}; }}",
    )
    return page.evaluate(MEASURE)


def check(m: dict, view: deck.View, width: int, height: int) -> None:
    where = (view.page, view.title[:30], f"{width}×{height}", m)
    assert m["name"] == expected_figure(view), where
    assert m["others"] == 1, where  # one figure on the stage
    top, bottom, tall = m["figure"]
    assert top >= 0 and tall >= FILL * height, where
    assert m["drawn"][2] >= FILL * height, where  # plotly drew at the box's size (or the frame is that tall)
    assert m["takeaway"][0] >= bottom - 1 and m["takeaway"][1] <= height, where  # under it, in view
    assert m["scrolled"] == 0, where


@pytest.fixture(scope="module")
def screen():
    with streamlit_server() as (base, _), browser(SIZES[0]) as (context, watcher):
        page = watcher.watch(context.new_page())
        yield base, page, watcher
        assert watcher.console_errors == [] and watcher.page_errors == []
        assert watcher.blocked == [] and watcher.failed == []


@pytest.mark.parametrize("n", range(1, len(DEFAULT) + 1), ids=lambda n: f"slide{n}-{DEFAULT[n - 1].page}")
def test_the_slides_figure_fills_the_screen_at_both_sizes_with_the_takeaway_in_view(screen, n):
    base, page, _ = screen
    view = DEFAULT[n - 1]
    (w, h), (W, H) = SIZES
    page.set_viewport_size({"width": w, "height": h})
    page.goto(view.link(base, presenter="1", slide=str(n)))
    page.wait_for_function(f"() => new URLSearchParams(location.search).get('slide') === '{n}'", timeout=60_000)
    wait_for_app(page)
    assert exception_boxes(page) == [], view.page
    check(measure(page, w, h), view, w, h)
    page.set_viewport_size({"width": W, "height": H})
    check(measure(page, W, H), view, W, H)
    if n == len(DEFAULT):  # and opened at the projector's size, not only resized to it
        page.goto(view.link(base, presenter="1", slide=str(n)))
        wait_for_app(page)
        check(measure(page, W, H), view, W, H)


def test_a_slide_that_names_a_figure_these_settings_do_not_draw_keeps_the_key_figure(screen):
    """DeBERTa's view names the prefix comparison, but with nothing put in front there is nothing to compare: the
    stage shows the lesson's key figure (the score taken apart), as the handout does."""
    base, page, _ = screen
    page.set_viewport_size({"width": SIZES[0][0], "height": SIZES[0][1]})
    page.goto(f"{base}/deberta?presenter=1&prefix=&figure=shift")
    wait_for_app(page)
    m = measure(page, *SIZES[0])
    assert m["name"] == "terms" and m["others"] == 1, m


def test_a_bad_links_note_is_in_view_above_the_figure_on_a_projector(screen):
    """A link with parts the page cannot use says so (issue 27): on a projector the note sits at the stage's top,
    one box for all of them, above the figure — below it, under a full-screen stage, no one would see it."""
    base, page, _ = screen
    w, h = SIZES[0]
    page.set_viewport_size({"width": w, "height": h})
    page.goto(f"{base}/masking?presenter=1&seed=abc&rate=7")
    wait_for_app(page)
    page.wait_for_function(
        "() => document.querySelector('.st-key-bve-stage [data-testid=\"stAlert\"]')", timeout=30_000
    )
    # the note and the figure measured together, once the layout has settled: on busy cores the figure is placed
    # first, then pushed down, and a CI run once measured the note as it appeared, 97 px below where it settled
    # (the figure in its final place under the settled note); comparing those two moments failed a right layout
    both = f"""() => {{ const e = document.querySelector('.st-key-bve-stage [data-testid="stAlert"]');
        const m = ({MEASURE})(); if (!e || !m) return null; const r = e.getBoundingClientRect();
        return {{text: e.innerText, top: r.top, bottom: r.bottom, m,
                 said: document.body.innerText.split('Ignored rate=7').length - 1}}; }}"""
    try:
        page.wait_for_function(
            f"() => {{ const b = ({both})(); return b && b.m.figure && b.m.takeaway "
            "&& b.m.figure[0] >= b.bottom - 1; }",
            timeout=30_000,
            polling=100,
        )
    except Exception:  # noqa: BLE001 — the assertions below say what was measured
        pass
    note = page.evaluate(both)
    assert note is not None, "the stage has no note or no figure"
    m = note["m"]
    assert "Ignored rate=7 in the link" in note["text"] and "Ignored seed=abc in the link" in note["text"], note
    assert note["said"] == 1 and 0 <= note["top"] and note["bottom"] <= h, note  # once, in view
    assert m["figure"][0] >= note["bottom"] - 1, note  # the figure under it
    assert m["takeaway"][1] <= h and m["scrolled"] == 0, m  # and the takeaway still in view
