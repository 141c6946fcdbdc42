"""Readable from the back (issue 51): the default deck presented at a projector's 1280×720, no text inside the stage
— the stage figure, its takeaway, whatever else stands there — under ``MIN_PX`` (18 px as drawn on the screen: a
plotly text's font size times its SVG transform's scale, a bertviz document's times the zoom that fits it to the
stage). A failure lists every slide with text under it, its smallest sizes and what they say (the figures' own type
sizes are the slides' business: app/figures/, app/ui/stage.py ``presenter_style``)."""

from __future__ import annotations

import pytest

from app.lecture import deck
from tests.e2e.browser import browser, exception_boxes, streamlit_server, wait_for_app

pytestmark = pytest.mark.e2e
W, H = 1280, 720
MIN_PX = 18
DEFAULT = deck.default_deck()
STAGE_FIGURE = ".st-key-bve-stage .js-plotly-plot .main-svg, .st-key-bve-stage iframe"

# [where, text, px] for every visible text inside the stage, as drawn
MEASURE = """() => {
  const out = [], stage = document.querySelector('.st-key-bve-stage');
  if (!stage) return out;
  const visit = (root, zoom, where) => {
    const doc = root.ownerDocument, view = doc.defaultView;
    const walk = doc.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    let n;
    while ((n = walk.nextNode())) {
      const text = n.textContent.trim(), el = n.parentElement;
      if (!text || !el) continue;
      const cs = view.getComputedStyle(el);
      if (cs.visibility === 'hidden' || cs.display === 'none' || +cs.opacity === 0) continue;
      const r = el.getBoundingClientRect();
      if (!r.width || !r.height || el.closest('.hoverlayer, .modebar, [data-testid="stTooltipHoverTarget"]')) continue;
      let px = parseFloat(cs.fontSize) * zoom;
      if (el instanceof view.SVGElement && el.getScreenCTM && el.getScreenCTM()) {
        const m = el.getScreenCTM();
        px *= Math.sqrt(Math.abs(m.a * m.d - m.b * m.c));
      }
      out.push([where, text.slice(0, 40), Math.round(px * 10) / 10]);
    }
  };
  visit(stage, 1, 'page');
  stage.querySelectorAll('iframe').forEach(f => {
    try {
      const d = f.contentDocument;
      if (d && d.body) visit(d.body, parseFloat(d.documentElement.style.zoom || '1'), 'frame');
    } catch (e) {}
  });
  return out;
}"""


def test_no_text_under_18_px_on_any_stage_of_the_default_deck():
    small, measured = {}, 0
    with streamlit_server() as (base, _), browser((W, H)) as (context, watcher):
        page = watcher.watch(context.new_page())
        page.goto(DEFAULT[0].link(base, presenter="1", slide="1"))
        for n, view in enumerate(DEFAULT, 1):
            try:
                page.wait_for_function(
                    f"() => new URLSearchParams(location.search).get('slide') === '{n}'", timeout=120_000
                )
            except Exception as stuck:
                raise AssertionError(
                    f"→ from slide {n - 1} never reached slide {n} ({view.title}): {page.url}"
                ) from stuck
            wait_for_app(page)
            try:
                page.wait_for_selector(STAGE_FIGURE, timeout=60_000)
            except Exception:  # a slide without a stage figure: its stage's text is still measured
                pass
            page.wait_for_timeout(1200)  # a bertviz document zooms itself to the stage once loaded
            texts = page.evaluate(MEASURE)
            assert texts, (n, view.title)
            measured += len(texts)
            under = sorted((px, text) for _, text, px in texts if px < MIN_PX - 0.05)
            if under:
                small[n] = (view.title, len(under), len(texts), under[:4])
            assert exception_boxes(page) == [], n
            if n < len(DEFAULT):
                page.keyboard.press("ArrowRight")
    report = "\n".join(
        f"slide {n} ({title}): {k} of {total} texts under {MIN_PX} px, e.g. {eg}"
        for n, (title, k, total, eg) in small.items()
    )
    print(f"\n{measured} texts measured on {len(DEFAULT)} stages\n{report}")
    assert not small, report
