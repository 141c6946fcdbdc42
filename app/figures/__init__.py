"""Plotly figures for the lessons: pure functions from results to figures."""

from app.core import preload  # noqa: F401  (first: the heavy imports, once, in one thread)

import functools
from dataclasses import dataclass


@dataclass(frozen=True)
class Document:
    """A figure that is a standalone HTML document (bertviz's views: their own scripts, inline), with the
    height in pixels it needs: shown in an iframe (``ui.show_html``, the handout)."""

    html: str
    height: int


def stage_figure(module, result, name: str | None = None):
    """The figure a view puts on the stage (and the handout prints), built from its lesson's ``run`` Result:
    ``module.FIGURES[name]`` when the lesson's figures module offers that name (``app.core.state.figure_param``),
    else its key figure — also when the named figure has nothing to draw with these settings (its builder gives
    None), as on the page."""
    build = getattr(module, "FIGURES", {}).get(name) if name else None
    figure = build(result) if build is not None else None
    return figure if figure is not None else module.key_figure(result)


@functools.cache
def white_template():
    """The figures' style on a projector and on paper (presenter mode, the handout): plotly's "simple_white", less
    its shape defaults, which draw a shape's line 0 px wide at 30% opacity — a line a figure marks without giving
    it a width (ALBERT's depth L, the epochs chosen in the masking lab) would vanish."""
    import plotly.graph_objects as go
    import plotly.io as pio

    template = go.layout.Template(pio.templates["simple_white"])
    template.layout.shapedefaults = None
    # only the trace types the app draws: a figure copies its template's defaults for every type it lists (24 in
    # simple_white), 13 ms a figure in presenter mode, 5 ms with these three (ModernBERT's slide styles ten)
    template.data = {k: v for k, v in template.to_plotly_json()["data"].items() if k in DRAWN_TRACES}
    return template


DRAWN_TRACES = ("bar", "heatmap", "scatter")  # every go.<Trace> in app/ (tests/test_stage_figures.py checks)
