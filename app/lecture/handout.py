"""The handout: a lecture deck as one offline file — for every view its key figure, its takeaway and the link
that opens it live (with its QR code, square, at least 2.5 cm printed) — as self-contained HTML (plotly.js inlined
once, no request to anywhere), and as PDF when the system's chromium can print it: one slide a page (A4
landscape; the deck's title on the first slide's page), its title, figure, takeaway, notes and code together, no
toolbar. tests/test_handout.py rasterises the PDF and reads every page back.

Each view runs its lesson exactly as its page does, without streamlit: the lesson's library parses the
view's URL state with its ``SPEC``, builds ``Inputs``, calls ``run(models, inputs, cache)``; the figure is the one
the page puts on the stage: the key figure (``Lesson.figure``, "module:function" taking the Result), or the
figure the view names (its ``figure`` parameter: ``app.figures.stage_figure``); the takeaway is the library's
``takeaway(result)`` where it computes one from the view's own result (as its page does), else its ``TAKEAWAY``.

    sections = [section(v, load_models(v), v.link(base)) for v in views]
    html = document(sections, "My lecture");  pdf_bytes = pdf(html)   # None without chromium
"""

from __future__ import annotations

from app.core import preload  # noqa: F401  (first: the heavy imports, once, in one thread)

import html as _html
import importlib
import json
import re
import subprocess
import tempfile
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from urllib.parse import urlsplit

import plotly.io as pio

from app.lecture import chromium, deck, qr
from app.core import state
from app.figures import Document, stage_figure, white_template
from app.core.lesson import Stop, direct
from app.core.text import html as esc

# The printed page: A4 landscape, one slide a page. Landscape because a slide's figure is made for a 16:9
# projector (wide heatmaps, three panels side by side): on a portrait page it would be 18 cm wide and its text
# would shrink by a third. The page's box, 257 × 186 mm, also fits inside US Letter landscape (279 × 216 mm) with
# margins, so the HTML printed on Letter paper keeps one slide a page too.
PAGE_MM = (257, 186)  # the content box of every page: width, height (A4 landscape less 20 and 12 mm margins)
FIGURE_HEIGHT = 480  # px: the nominal height of a figure's box on a page (the page's JavaScript measures the real one)
MIN_SCALE = 0.7  # a figure taller than its box is drawn at its own height and shrunk, to no less than this
PLOTLY_CONFIG = {"displayModeBar": False, "displaylogo": False, "responsive": False}  # no toolbar on paper
PDF_SECONDS = 180


@dataclass(frozen=True)
class Section:
    """One view in the handout."""

    number: int
    title: str
    note: str
    lesson: str  # the lesson's title
    url: str  # the live link
    figure: str | None  # HTML of the key figure (a plotly div, or an iframe for a standalone document)
    takeaway: str  # markdown (bold, italics, code), one line
    problem: str | None = None  # why there is no figure


def library(view: deck.View):
    return importlib.import_module(deck.lesson_of(view.page).library)


def key_figure_function(view: deck.View):
    """The lesson's key figure builder, ``app.figures.<slug>:key_figure`` (``Lesson.figure``); None when the
    lesson exposes none."""
    module, _, name = deck.lesson_of(view.page).figure.partition(":")
    return getattr(importlib.import_module(module), name) if module else None


def values_of(view: deck.View) -> dict:
    return state.parse(view.params, library(view).SPEC)[0]


def models_for(view: deck.View) -> tuple[str, ...]:
    """The catalogue keys the view's lesson runs on: its library's ``MODELS``, or the variant it is set to."""
    try:
        lib = library(view)
    except Exception:
        return ()
    if hasattr(lib, "MODELS"):
        return tuple(lib.MODELS)
    variant = values_of(view).get("variant")
    return (variant,) if variant else ()


def load_models(view: deck.View, source: str = "auto") -> dict:
    """The view's models loaded without streamlit (scripts, tests): the bundled stand-ins unless a real
    checkpoint is complete in the local cache (``source="auto"`` never uses the network)."""
    from app.models import loading

    # one that cannot be loaded is left out: the lesson says what is missing, or the section does
    return loading.load_set(models_for(view), source=source, partial=True)


def _figure_html(figure, name: str) -> str:
    """A figure's box on the page: ``data-height`` is the height the figure was made for (its layout's, or
    plotly's 450 px). The page's script (``FIT``) sizes it once the page is laid out: the box takes what the
    title, takeaway, notes and QR code leave of the page; a figure that is taller than the box is drawn at its
    own height and shrunk to fit (no less than ``MIN_SCALE``), so its rows and cell text keep their proportions
    instead of being squashed. A plotly figure is drawn there (its JSON waits in the box), a standalone
    document (bertviz) is an iframe with its scripts inline."""
    if isinstance(figure, Document):
        return (
            f'<div class="figure" data-height="{int(figure.height)}"><iframe class="doc" title="{esc(name)}" '
            f'srcdoc="{_html.escape(figure.html, quote=True)}"></iframe></div>'
        )
    figure.update_layout(template=white_template())
    height = figure.layout.height or 450
    figure.update_layout(height=None, width=None, autosize=True)  # the page sizes it
    data = pio.to_json(figure, validate=False).replace("<", "\\u003c")  # no "</script>" inside: JSON's escape
    return (
        f'<div class="figure" data-height="{int(height)}"><div id="figure-{esc(name)}" class="plotly-graph-div">'
        f'</div><script type="application/json">{data}</script></div>'
    )


def section(view: deck.View, models: dict, url: str, cache=direct, number: int = 0) -> Section:
    """Run the view's lesson on ``models`` and keep what the handout shows of it. Never raises: a lesson that
    stops (``Stop``) or fails gives a section that says why instead of a figure."""
    lesson = deck.lesson_of(view.page)
    title = view.title or lesson.title
    try:
        lib = library(view)
    except Exception as e:
        return Section(number, title, view.note, lesson.title, url, None, "", f"The lesson cannot be loaded ({e}).")
    takeaway = getattr(lib, "TAKEAWAY", "")
    build = key_figure_function(view)
    if build is None:
        return Section(
            number,
            title,
            view.note,
            lesson.title,
            url,
            None,
            takeaway,
            "This lesson has no key figure for a handout yet: open the link.",
        )
    try:
        values = values_of(view)
        result = lib.run(models, lib.Inputs.from_values(values), cache)
        if callable(getattr(lib, "takeaway", None)):  # computed from this view's result, as its page shows it
            takeaway = lib.takeaway(result)
        figure = stage_figure(importlib.import_module(build.__module__), result, values.get(state.FIGURE))
        shown = None if figure is None else _figure_html(figure, f"{number}-{view.page}")
    except Stop as stop:
        return Section(number, title, view.note, lesson.title, url, None, takeaway, stop.note.text)
    except Exception as e:  # a model that could not be loaded, a lesson that fails: said, never a traceback
        missing = [k for k in models_for(view) if k not in models]
        why = (
            f"{', '.join(missing)} could not be loaded on this server"
            if isinstance(e, KeyError) and missing
            else f"{type(e).__name__}: {e}"
        )
        return Section(
            number,
            title,
            view.note,
            lesson.title,
            url,
            None,
            takeaway,
            f"This view could not be computed here ({why}): open the link where it can.",
        )
    if shown is None:
        return Section(
            number,
            title,
            view.note,
            lesson.title,
            url,
            None,
            takeaway,
            "These settings leave nothing to draw: open the link.",
        )
    return Section(number, title, view.note, lesson.title, url, shown, takeaway)


def inline_markdown(text: str) -> str:
    """The little markdown a takeaway uses (**bold**, *italics*, `code`) as HTML; everything else escaped."""
    out = _html.escape(text, quote=False)
    out = re.sub(r"`([^`]+)`", r"<code>\1</code>", out)
    out = re.sub(r"\*\*([^*]+)\*\*", r"<b>\1</b>", out)
    return re.sub(r"(?<![\w*])\*([^*]+)\*(?![\w*])", r"<i>\1</i>", out)


STYLE = """
@page { size: A4 landscape; margin: 12mm 20mm; }
* { box-sizing: border-box; }
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #111; margin: 0;
       line-height: 1.3; }
section { width: 257mm; height: 186mm; display: flex; flex-direction: column; overflow: hidden; background: #fff;
          break-inside: avoid; page-break-inside: avoid; break-after: page; page-break-after: always; }
section:last-of-type { break-after: auto; page-break-after: auto; }
.deck { flex: none; border-bottom: 0.4mm solid #ddd; margin-bottom: 2.5mm; }
.deck h1 { font-size: 17pt; margin: 0; } .deck .meta { color: #555; margin: 0.5mm 0 2mm 0; font-size: 9pt; }
h2 { flex: none; font-size: 15pt; margin: 0; }
.lesson { flex: none; color: #555; margin: 0.5mm 0 1.5mm 0; font-size: 9pt; }
.figure { flex: 1 1 0; min-height: 0; overflow: hidden; }
.figure > iframe.doc { display: block; border: 0; width: 100%; height: 100%; }
.live { flex: none; display: flex; gap: 6mm; align-items: flex-end; border-top: 0.4mm solid #ddd; padding-top: 2mm; }
.live .text { flex: 1 1 auto; min-width: 0; }
.takeaway { font-size: 12pt; margin: 0 0 1.5mm 0; } .note { font-size: 10pt; color: #333; margin: 0 0 1.5mm 0; }
.link { font-size: 8pt; color: #444; margin: 0; word-break: break-all; } .link a { color: #0b4f8a; }
svg.qr { display: block; flex: none; }
.problem { color: #8a4b00; background: #fff4e0; padding: 0.5rem 0.8rem; }
.local { color: #8a4b00; background: #fff4e0; padding: 1.5mm 3mm; margin: 0 0 2mm 0; font-size: 10pt; }
@media screen {
  svg.qr { width: max(var(--print), var(--screen)) !important; height: max(var(--print), var(--screen)) !important;
           min-width: max(var(--print), var(--screen)) !important; }
  html { background: #e4e4e4; } body { padding: 16mm 0 4mm 0; }
  section { margin: 0 auto 28mm auto; outline: 12mm solid #fff; box-shadow: 0 0 0 12.3mm #ccc; }
}
"""

# Sizes every figure to its box once the page is laid out (on screen and before chromium prints): the box is what
# the page's text leaves; a taller figure is drawn at its own height and shrunk (CSS scale), never squashed below
# MIN_SCALE of it; plotly draws from the JSON in the box with the toolbar off.
FIT = """(function () {
  var MIN = %s, CONFIG = %s;
  document.querySelectorAll('.figure[data-height]').forEach(function (box) {
    var el = box.firstElementChild, W = box.clientWidth, B = box.clientHeight;
    if (!el || !W || !B) return;
    if (el.tagName === 'IFRAME') {  // a document draws itself: zoom its drawing to the box, up or down
      el.style.width = W + 'px'; el.style.height = B + 'px';
      var zoomed = false, zoom = function () {
        var d = el.contentDocument;
        if (zoomed || !d || !d.body) return;
        var right = 0, bottom = 0, n, r, view = d.defaultView;
        var walk = d.createTreeWalker(d.body, NodeFilter.SHOW_ELEMENT | NodeFilter.SHOW_TEXT);
        while ((n = walk.nextNode())) {  // what is drawn: text, svg shapes, form controls (not the boxes around them)
          r = null;
          if (n.nodeType === 3 && n.textContent.trim()) {
            var range = d.createRange(); range.selectNodeContents(n); r = range.getBoundingClientRect();
          } else if (n.nodeType === 1 && ((n instanceof view.SVGGraphicsElement && !(n instanceof view.SVGSVGElement))
                     || /^(CANVAS|IMG|SELECT|INPUT|BUTTON)$/.test(n.tagName))) {
            r = n.getBoundingClientRect();
          }
          if (r && r.width && r.height) { right = Math.max(right, r.right); bottom = Math.max(bottom, r.bottom); }
        }
        if (right > 0 && bottom > 0) {
          zoomed = true;
          d.documentElement.style.overflow = 'hidden';
          d.documentElement.style.zoom = Math.max(MIN, Math.min(2.5, (W - 8) / right, (B - 8) / bottom));
        }
      };
      el.addEventListener('load', zoom);
      if (el.contentDocument && el.contentDocument.readyState === 'complete') zoom();
      return;
    }
    var s = Math.max(MIN, Math.min(1, B / (+box.dataset.height || B)));
    var w = Math.floor(W / s), h = Math.floor(B / s);
    el.style.width = w + 'px'; el.style.height = h + 'px';
    if (s < 1) { el.style.transform = 'scale(' + s + ')'; el.style.transformOrigin = '0 0'; }
    var json = box.querySelector('script[type="application/json"]');
    if (json && window.Plotly) {
      var f = JSON.parse(json.textContent);
      f.layout.width = w; f.layout.height = h; f.layout.autosize = false;
      Plotly.newPlot(el, f.data, f.layout, CONFIG);
    }
  });
})();"""


def document(
    sections: list[Section], title: str, plotly_js: str | None = None, answers: list[dict] | None = None
) -> str:
    """One standalone HTML file: plotly.js inlined once in the head, then a page per section (the deck's
    title on the first), then the script that draws the figures at their page's size. Nothing in it is
    fetched from anywhere (tests/e2e opens it with the network blocked). ``answers`` (opt-in): the class's answers
    to the questions asked in this lecture ({"slide", "prompt", "sentence"}: app.ui.classroom), on a last page."""
    if plotly_js is None:
        from plotly.offline import get_plotlyjs

        plotly_js = get_plotlyjs()
    parts = [
        f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>{esc(title)}</title>",
        f"<style>{STYLE}</style><script>{plotly_js}</script></head><body>",
    ]
    header = (
        f"<header class='deck'><h1>{esc(title)}</h1><p class='meta'>{len(sections)} slides · "
        f"{date.today():%d %B %Y} · BERT Variants Explorer. Each slide's link and QR code open the view live, "
        "in exactly this state.</p>" + local_warning(sections) + "</header>"
    )
    for i, s in enumerate(sections):
        parts.append(
            f"<section id='slide-{s.number}'>{header if i == 0 else ''}"
            f"<h2>{s.number}. {esc(s.title)}</h2><p class='lesson'>{esc(s.lesson)}</p>"
        )
        parts.append(
            s.figure
            if s.figure
            else f"<div class='figure'><p class='problem'>{inline_markdown(s.problem or '')}</p></div>"
        )
        text = f"<p class='takeaway'><b>Takeaway:</b> {inline_markdown(s.takeaway)}</p>" if s.takeaway else ""
        if s.note:
            text += f"<p class='note'><b>Notes:</b> {esc(s.note)}</p>"
        parts.append(f"{live_link(s.url, text)}</section>")
    if not sections:
        parts.append(header)
    if answers:
        rows = "".join(
            f"<li><p><b>{esc(a.get('prompt', ''))}</b>"
            + (f" (slide {int(a['slide'])})" if a.get("slide") else "")
            + f"</p><p>{esc(a.get('sentence', ''))}</p></li>"
            for a in answers
        )
        parts.append(f"<section id='class-answers'><h2>The class's answers</h2><ol>{rows}</ol></section>")
    parts.append(f"<script>{FIT % (MIN_SCALE, json.dumps(PLOTLY_CONFIG))}</script></body></html>")
    return "".join(parts)


def local_warning(sections) -> str:
    """A line at the handout's top when its links point at this computer (localhost, 127.0.0.1: the address the
    lecturer's browser used), which no student's device reaches; "" when they do not."""
    local = sorted({qr.host(s.url) or "a relative address" for s in sections if qr.is_loopback(s.url)})
    if not local:
        return ""
    return (
        f"<p class='local'><b>These links point at this computer</b> ({esc(', '.join(local))}): they open only on "
        "the machine that built this handout, not on a student's device. Set the address students use (the app's "
        "sidebar, <i>Lecture</i>, or BVE_PUBLIC_URL) and build the handout again.</p>"
    )


def live_link(url: str, text: str = "") -> str:
    """The foot of a slide's page: ``text`` (its takeaway and notes, HTML), the live link, and the link's QR
    code, square at its printed size (``qr.svg_print``: at least 3 cm). Only an http(s) (or relative) link
    becomes a link: any other scheme is shown as text. A link too long for a QR code is shown without one, with
    the sentence why."""
    if urlsplit(url).scheme.lower() not in ("", "http", "https"):
        return (
            f"<div class='live'><div class='text'>{text}<p class='problem'>Not a web address, so not linked: "
            f"{esc(url)}</p></div></div>"
        )
    try:
        code = qr.svg_print(url, "QR code of this slide's live link")
    except qr.TooLong as too_long:
        code = f"<p class='problem'>{esc(str(too_long))}</p>"
    return (
        f"<div class='live'><div class='text'>{text}<p class='link'>Open it live: <a href='{esc(url)}'>{esc(url)}</a>"
        f"</p></div>{code}</div>"
    )


def build(views, base: str, title: str = "Lecture handout", cache=direct, progress=None) -> str:
    """The handout of ``views`` without streamlit (scripts, tests): models from ``load_models``."""
    sections = []
    for i, view in enumerate(views, 1):
        if progress:
            progress(i, view)
        sections.append(section(view, load_models(view), view.link(base), cache, i))
    return document(sections, title)


def pdf_available() -> bool:
    return chromium.available()


def pdf(html_text: str, timeout: float = PDF_SECONDS) -> bytes | None:
    """The handout printed to PDF by the system's chromium, headless (the test suite's flags; never a
    downloaded browser); None when there is no chromium or it fails."""
    if not pdf_available():
        return None
    with tempfile.TemporaryDirectory(prefix="bve-handout-") as tmp:
        source, out = Path(tmp) / "handout.html", Path(tmp) / "handout.pdf"
        source.write_text(html_text, encoding="utf-8")
        cmd = [
            chromium.CHROMIUM,
            "--headless",
            *chromium.CHROMIUM_ARGS,
            f"--user-data-dir={tmp}/profile",
            "--no-pdf-header-footer",
            "--run-all-compositor-stages-before-draw",
            "--virtual-time-budget=20000",
            f"--print-to-pdf={out}",
            source.as_uri(),
        ]
        try:
            subprocess.run(cmd, capture_output=True, timeout=timeout, check=False)
        except (OSError, subprocess.TimeoutExpired):
            return None
        data = out.read_bytes() if out.exists() else b""
    return data if data.startswith(b"%PDF") else None
