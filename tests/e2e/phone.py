"""What a student's phone (or a screen reader) meets on a page, measured in the browser from the DOM.

Used by tests/e2e/test_phone.py, tests/e2e/test_accessibility.py and scripts/phone_report.py (the before/after
table). Every measure is a plain number or a list read from the page as drawn:

- ``overflow(page)``: how many px the document is wider than the window (a page that pans sideways: > 0);
- ``figure_text(page, name)``: for the plotly figure shown under ``name`` (``ui.show_figure(fig, name)``), the
  smallest font size of its visible text (px), the pairs of labels whose boxes overlap, and the labels that
  stick out of the figure;
- ``axe(page)``: axe-core's violations (vendored, ``assets/vendor/``), injected into the page.
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
AXE = ROOT / "assets" / "vendor" / "axe-core-4.14.1.min.js"
PHONE = (390, 844)  # an iPhone 13's CSS viewport
DESKTOP = (1280, 720)
MIN_PHONE_TEXT_PX = 12  # app.ui.layout.MIN_TEXT_PX: the least text a key figure gets on a phone
OVERLAP_PX = 1.5  # two labels overlap when their boxes share more than this in both directions

#: The figures a lesson exists to show: page slug -> the name its page shows that figure under (the start of the
#: name where the page adds the view's own word: the claims page's curves are "claims-<experiment>-curves"). The
#: first five are issue 52's; every lesson is here (tests/e2e/test_phone.py fails on one that is not), except one
#: whose key figure is not a plotly figure (``NOT_PLOTLY``: bertviz's view, an HTML document of its own).
KEY_FIGURES = {
    "masking": "masking-grid",
    "electra": "electra-pipeline",
    "xlnet": "xlnet-order",
    "deberta": "deberta-terms",
    "compare": "compare-tokens",
    "albert_params": "albert-parameters-by-part",
    "albert_activations": "albert-vs-bert-layers",
    "distillation": "distillation-soft-targets",
    "modernbert": "modernbert-attention",
    "sentence_order": "sentence-order-your-pair",
    "claims": "claims-",
}
NOT_PLOTLY = {
    "attention": "bertviz's head and model views are HTML documents in an iframe (app/figures/bertviz_offline.py)"
}

# Streamlit scrolls its main area, not the document: a page pans sideways when any of these is wider than it shows.
_OVERFLOW = """() => {
  const boxes = [document.documentElement, document.body,
                 ...document.querySelectorAll('[data-testid="stAppViewContainer"], [data-testid="stMain"], '
                                              + '[data-testid="stMainBlockContainer"]')];
  return Math.max(0, document.documentElement.scrollWidth - window.innerWidth,
                  ...boxes.map(b => b.scrollWidth - b.clientWidth));
}"""

# The text of one plotly figure (its tick labels, annotations, cell texts, titles; not the modebar, not hidden
# text): font size, box, and whether it leaves the figure's box. A text plotly drew with a transform scale (it
# does for "uniformtext" shrinking) counts at the size it is shown: the box's height over the nominal size.
_FIGURE_TEXT = """(name) => {
  const box = document.querySelector('[class*="st-key-fig-' + name + '"]');
  if (!box) return null;
  box.scrollIntoView({block: 'start'});
  const plot = box.querySelector('.js-plotly-plot');
  if (!plot) return null;
  const outer = plot.getBoundingClientRect();
  const texts = [...plot.querySelectorAll('svg.main-svg text')].filter(t => {
    if (!t.textContent.trim()) return false;
    if (t.closest('.modebar, .legend, .hoverlayer')) return false;
    const s = getComputedStyle(t);
    if (s.display === 'none' || s.visibility === 'hidden' || +s.opacity === 0) return false;
    const r = t.getBoundingClientRect();
    return r.width > 0 && r.height > 0;
  });
  const items = texts.map(t => {
    const r = t.getBoundingClientRect();
    const nominal = parseFloat(getComputedStyle(t).fontSize) || 0;
    const m = (t.getAttribute('transform') || '').match(/scale\\(([\\d.]+)/);
    const size = m ? nominal * parseFloat(m[1]) : nominal;
    const cls = (t.closest('[class]') || t).getAttribute('class') || '';
    return {text: t.textContent.trim(), size, x: r.left, y: r.top, w: r.width, h: r.height, cls};
  });
  const overlaps = [];
  for (let i = 0; i < items.length; i++) for (let j = i + 1; j < items.length; j++) {
    const a = items[i], b = items[j];
    const dx = Math.min(a.x + a.w, b.x + b.w) - Math.max(a.x, b.x);
    const dy = Math.min(a.y + a.h, b.y + b.h) - Math.max(a.y, b.y);
    if (dx > OVERLAP && dy > OVERLAP) overlaps.push([a.text, b.text]);
  }
  const outside = items.filter(a => a.x < outer.left - 1 || a.x + a.w > outer.right + 1
                                    || a.y < outer.top - 1 || a.y + a.h > outer.bottom + 1).map(a => a.text);
  return {n: items.length, smallest: items.length ? Math.min(...items.map(a => a.size)) : null,
          overlaps, outside, width: outer.width,
          small: items.filter(a => a.size < MIN).map(a => [a.text, a.size])};
}"""


CUT_PX = 4  # a formula's box sized to fit it can be a px or two narrower than KaTeX's glyph boxes: not a cut


def cut_formulas(page) -> list[int]:
    """For every displayed formula (KaTeX) wider than its box by more than ``CUT_PX``, how many px are out of view."""
    return page.evaluate(f"""() => [...document.querySelectorAll('.katex-display')]
        .map(k => k.scrollWidth - k.clientWidth).filter(px => px > {CUT_PX})""")


def heading_skips(page) -> list[str]:
    """Headings in the page's main area that skip a level (an h3 right after the h1), as "h1 → h3: <text>"."""
    return page.evaluate("""() => {
      const hs = [...document.querySelectorAll('[data-testid="stMain"] :is(h1,h2,h3,h4,h5,h6)')]
        .filter(h => h.offsetParent !== null && h.textContent.trim());
      const out = []; let last = 0;
      for (const h of hs) { const n = +h.tagName[1];
        if (n > last + 1) out.push('h' + last + ' → h' + n + ': ' + h.textContent.trim().slice(0, 60));
        last = n; }
      return out; }""")


def overflow(page) -> int:
    """px the document is wider than the window (0: no sideways panning)."""
    return int(page.evaluate(_OVERFLOW))


_REVEAL = """(name) => {
  const box = document.querySelector('[class*="st-key-fig-' + name + '"]');
  const details = box && box.closest('details');
  if (details && !details.open) details.querySelector('summary').click();
  const panel = box && box.closest('[data-testid="stTabPanel"]');
  if (!panel || getComputedStyle(panel).display !== 'none') return null;
  const tabs = panel.closest('[data-testid="stTabs"]');
  const panels = [...tabs.querySelectorAll('[data-testid="stTabPanel"]')]\
.filter(p => p.closest('[data-testid="stTabs"]') === tabs);
  const buttons = [...tabs.querySelectorAll('[role="tab"]')].filter(b => b.closest('[data-testid="stTabs"]') === tabs);
  const tab = buttons[panels.indexOf(panel)];
  return tab ? tab.id : null;
}"""


def figure_text(page, name: str, minimum: float = MIN_PHONE_TEXT_PX) -> dict | None:
    """Scrolled into view and drawn, The text of the plotly figure shown under ``name``: {"n", "smallest" (px),
    "overlaps" (pairs of labels), "outside" (labels past any edge of the figure: cut off), "small" (labels under
    ``minimum``), "width"}; None when the page shows no such figure."""
    box = page.locator(f'[class*="st-key-fig-{name}"]')
    if box.count() == 0:
        return None
    tab = page.evaluate(_REVEAL, name)  # a figure in a tab not shown, or a closed expander: open it
    if tab:
        page.click(f'[id="{tab}"]')
    page.wait_for_timeout(500)
    box.first.scroll_into_view_if_needed()
    try:  # plotly draws a chart once it is on screen
        page.wait_for_selector(f'[class*="st-key-fig-{name}"] .js-plotly-plot svg.main-svg', timeout=20_000)
    except Exception:  # noqa: BLE001 — measured as it is (None: no figure drawn)
        pass
    page.wait_for_timeout(300)
    script = _FIGURE_TEXT.replace("OVERLAP", str(OVERLAP_PX)).replace("MIN", str(minimum))
    return page.evaluate(script, name)


def screenshot(page, path: str, figure: str | None = None) -> None:
    """The whole page at the window's width: the window made as tall as Streamlit's main area for the shot; with
    ``figure``, that figure alone as well (``<path>-figure.png``)."""
    width = page.viewport_size["width"]
    height = page.viewport_size["height"]
    tall = page.evaluate("() => (document.querySelector('[data-testid=stMain]') || document.body).scrollHeight")
    page.set_viewport_size({"width": width, "height": min(max(height, int(tall)), 16000)})
    page.wait_for_timeout(1200)
    page.screenshot(path=path, full_page=True)
    if figure:
        box = page.locator(f'[class*="st-key-fig-{figure}"]').first.bounding_box()
        if box:
            page.screenshot(path=path.replace(".png", "-figure.png"), clip=box)
    page.set_viewport_size({"width": width, "height": height})


SETTLED = """() => { const app = document.querySelector('[data-testid="stApp"]');
  return app && app.getAttribute('data-test-script-state') === 'notRunning'
         && !document.querySelector('[data-stale="true"]'); }"""


def settle(page) -> None:
    """Wait until the script has stopped and no element is stale (Streamlit fades those while it reruns: axe
    would measure the fade's contrast, not the page's), twice, a beat apart (the fade takes a moment to undo)."""
    page.wait_for_function(SETTLED, timeout=120_000, polling=200)
    page.wait_for_timeout(500)
    page.wait_for_function(SETTLED, timeout=120_000, polling=200)


def axe(page, impacts=("serious", "critical")) -> list[dict]:
    """axe-core's violations on the page whose impact is in ``impacts``: [{"id", "impact", "nodes", "help",
    "targets"}] (axe's own rule ids; "nodes" is how many elements fail it)."""
    settle(page)
    if not page.evaluate("() => typeof window.axe !== 'undefined'"):
        page.add_script_tag(path=str(AXE))
    found = page.evaluate("""async () => {
      const r = await axe.run(document, {resultTypes: ['violations']});
      return r.violations.map(v => ({id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.length,
                                     targets: v.nodes.slice(0, 4).map(n => n.target.join(' '))}));
    }""")
    return [v for v in found if v["impact"] in impacts]


PHONE_DRAWN = """() => [...document.querySelectorAll('style')].some(s => s.textContent.includes('bve-layout-phone'))"""


def open_page(context, watcher, base: str, slug: str, query: str = "", phone: bool = False):
    """A new tab on page ``slug`` ("home" is the app's root), waited for until the app has stopped running;
    ``phone``: until it has been drawn for a phone (app/ui/layout.py's mark in the page's style)."""
    from tests.e2e.browser import wait_for_app

    page = watcher.watch(context.new_page())
    path = "/" if slug == "home" else f"/{slug}"
    page.goto(base + path + (f"?{query}" if query else ""))
    wait_for_app(page, timeout_ms=240_000)
    if phone:
        page.wait_for_function(PHONE_DRAWN, timeout=120_000, polling=200)
        wait_for_app(page, timeout_ms=240_000)
    page.wait_for_timeout(600)  # plotly lays out after the script ends
    return page


def pages() -> list[str]:
    """Every page as the router finds it: home, every lesson by convention, then the tools."""
    from app.lessons import LESSONS, TOOLS

    return ["home", *(lesson.slug for lesson in LESSONS), *(tool.slug for tool in TOOLS)]
