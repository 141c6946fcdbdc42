"""Plotly figures for the lessons: pure functions from results to figures."""

from app.core import preload  # noqa: F401  (first: the heavy imports, once, in one thread)

from dataclasses import dataclass


@dataclass(frozen=True)
class Document:
    """A figure that is a standalone HTML document (bertviz's views: their own scripts, inline), with the
    height in pixels it needs: shown in an iframe (``ui.show_html``, the handout)."""

    html: str
    height: int
