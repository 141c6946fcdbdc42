"""The handout: a lecture deck as one offline file — for every view its key figure, its takeaway and the link
that opens it live (with a small QR code) — as self-contained HTML (plotly.js inlined once, no request to
anywhere), and as PDF when the system's chromium can print it.

Each view runs its lesson exactly as its page does, without streamlit: the lesson's library parses the
view's URL state with its ``SPEC``, builds ``Inputs``, calls ``run(models, inputs, cache)``; the key figure
comes from the same function the page puts on the stage (``Lesson.figure``, "module:function" taking the
Result), the takeaway from the library's ``TAKEAWAY``.

    sections = [section(v, load_models(v), v.link(base)) for v in views]
    html = document(sections, "My lecture");  pdf_bytes = pdf(html)   # None without chromium
"""

from __future__ import annotations

from app.core import preload  # noqa: F401  (first: the heavy imports, once, in one thread)

import html as _html
import importlib
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
from app.figures import Document
from app.core.lesson import Stop, direct
from app.core.text import html as esc

FIGURE_HEIGHT = 480  # px of each figure in the handout (a landscape page)
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
    if isinstance(figure, Document):  # bertviz: its own frame, its scripts inline, zoomed out to fit the page
        html_text, height = figure.html, figure.height
        if height > FIGURE_HEIGHT:
            html_text = html_text.replace("<head>", f"<head><style>html {{ zoom: {FIGURE_HEIGHT / height:.3f}; }}</style>", 1)
            height = FIGURE_HEIGHT
        return (f'<iframe class="doc" title="{esc(name)}" srcdoc="{_html.escape(html_text, quote=True)}" '
                f'style="height:{height + 10}px"></iframe>')
    figure.update_layout(height=FIGURE_HEIGHT, template=pio.templates["simple_white"])
    return figure.to_html(full_html=False, include_plotlyjs=False, div_id=f"figure-{name}",
                          config={"displaylogo": False, "responsive": True})


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
        return Section(number, title, view.note, lesson.title, url, None, takeaway,
                       "This lesson has no key figure for a handout yet: open the link.")
    try:
        result = lib.run(models, lib.Inputs.from_values(values_of(view)), cache)
        figure = build(result)
        shown = None if figure is None else _figure_html(figure, f"{number}-{view.page}")
    except Stop as stop:
        return Section(number, title, view.note, lesson.title, url, None, takeaway, stop.note.text)
    except Exception as e:  # a model that could not be loaded, a lesson that fails: said, never a traceback
        missing = [k for k in models_for(view) if k not in models]
        why = (f"{', '.join(missing)} could not be loaded on this server" if isinstance(e, KeyError) and missing
               else f"{type(e).__name__}: {e}")
        return Section(number, title, view.note, lesson.title, url, None, takeaway,
                       f"This view could not be computed here ({why}): open the link where it can.")
    if shown is None:
        return Section(number, title, view.note, lesson.title, url, None, takeaway,
                       "These settings leave nothing to draw: open the link.")
    return Section(number, title, view.note, lesson.title, url, shown, takeaway)


def inline_markdown(text: str) -> str:
    """The little markdown a takeaway uses (**bold**, *italics*, `code`) as HTML; everything else escaped."""
    out = _html.escape(text, quote=False)
    out = re.sub(r"`([^`]+)`", r"<code>\1</code>", out)
    out = re.sub(r"\*\*([^*]+)\*\*", r"<b>\1</b>", out)
    return re.sub(r"(?<![\w*])\*([^*]+)\*(?![\w*])", r"<i>\1</i>", out)


STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #111; margin: 2rem auto;
       max-width: 1100px; padding: 0 1.5rem; line-height: 1.45; }
h1 { font-size: 1.8rem; margin-bottom: 0.2rem; } .meta { color: #555; margin-top: 0; }
section { page-break-inside: avoid; break-inside: avoid; border-top: 2px solid #ddd; padding-top: 0.8rem; margin-top: 1.4rem; }
section + section { page-break-before: always; break-before: page; }
h2 { font-size: 1.35rem; margin: 0 0 0.2rem 0; } .lesson { color: #555; margin: 0 0 0.4rem 0; }
.note { font-style: italic; color: #333; margin: 0.2rem 0 0.6rem 0; }
.takeaway { font-size: 1.1rem; margin: 0.6rem 0; } .problem { color: #8a4b00; background: #fff4e0; padding: 0.5rem 0.8rem; }
.live { display: flex; gap: 1rem; align-items: center; } .live a { word-break: break-all; font-size: 0.9rem; }
iframe.doc { width: 100%; border: 1px solid #ddd; }
@page { size: A4 landscape; margin: 12mm; }
"""


def document(sections: list[Section], title: str, plotly_js: str | None = None) -> str:
    """One standalone HTML file: plotly.js inlined once in the head, then every section. Nothing in it is
    fetched from anywhere (tests/e2e opens it with the network blocked)."""
    if plotly_js is None:
        from plotly.offline import get_plotlyjs

        plotly_js = get_plotlyjs()
    parts = [f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>{esc(title)}</title>",
             f"<style>{STYLE}</style><script>{plotly_js}</script></head><body>",
             f"<h1>{esc(title)}</h1><p class='meta'>{len(sections)} slides · {date.today():%d %B %Y} · "
             "BERT Variants Explorer. Each link opens the view live, in exactly this state.</p>"]
    for s in sections:
        parts.append(f"<section id='slide-{s.number}'><h2>{s.number}. {esc(s.title)}</h2>"
                     f"<p class='lesson'>{esc(s.lesson)}</p>")
        if s.note:
            parts.append(f"<p class='note'>{esc(s.note)}</p>")
        parts.append(s.figure if s.figure else f"<p class='problem'>{inline_markdown(s.problem or '')}</p>")
        if s.takeaway:
            parts.append(f"<p class='takeaway'><b>Takeaway:</b> {inline_markdown(s.takeaway)}</p>")
        parts.append(f"{live_link(s.url)}</section>")
    parts.append("</body></html>")
    return "".join(parts)


def live_link(url: str) -> str:
    """The slide's live link with its QR code. Only an http(s) (or relative) link becomes a link: any other
    scheme is shown as text. A link too long for a QR code is shown without one, with the sentence why."""
    if urlsplit(url).scheme.lower() not in ("", "http", "https"):
        return f"<div class='live'><p class='problem'>Not a web address, so not linked: {esc(url)}</p></div>"
    try:
        code = qr.svg(url, 120)
    except qr.TooLong as too_long:
        code = f"<p class='problem'>{esc(str(too_long))}</p>"
    return f"<div class='live'>{code}<a href='{esc(url)}'>{esc(url)}</a></div>"


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
        cmd = [chromium.CHROMIUM, "--headless", *chromium.CHROMIUM_ARGS, f"--user-data-dir={tmp}/profile",
               "--no-pdf-header-footer", "--run-all-compositor-stages-before-draw", "--virtual-time-budget=20000",
               f"--print-to-pdf={out}", source.as_uri()]
        try:
            subprocess.run(cmd, capture_output=True, timeout=timeout, check=False)
        except (OSError, subprocess.TimeoutExpired):
            return None
        data = out.read_bytes() if out.exists() else b""
    return data if data.startswith(b"%PDF") else None
