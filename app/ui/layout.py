"""Widths: the layout a page and its figures are drawn for — a desktop window, the projector's stage (presenter
mode, ``app.ui.stage``) or a phone.

A phone is asked for by the link (``?layout=phone``: tests, a link sent to students) or seen from the window: a
small script in the page (a Streamlit component, no iframe) reports whether the window is narrower than
``PHONE_PX`` and reruns the page when that changes (the first draw on a phone is the desktop one, the next the
phone's). ``?layout=desktop`` keeps the desktop layout on any window. Presenter mode always gets the stage's.

On a phone every plotly figure gets :func:`phone_style` (text no smaller than ``MIN_TEXT_PX``, titles wrapped,
the legend under the plot, only the camera button in its toolbar, never over the title), and the key figures are
built for the width (their builders' ``phone=True``: fewer columns, stacked panels, wrapped tokens).

The same script puts a "Skip to the lesson" link first in the page's Tab order (the sidebar's widgets come first
otherwise: ~26 Tab stops).
"""

from __future__ import annotations

import re

import streamlit as st

from app.ui import url

PHONE_PX = 640  # a window narrower than this (CSS px) is a phone: Streamlit itself stacks columns below 640
PHONE_WIDTH = 390  # what a phone figure is built for (an iPhone 13's CSS width); the main column is ~358 px of it
MIN_TEXT_PX = 12  # the least text a figure gets on a phone (tests/e2e/test_phone.py checks the key figures)
TITLE_PX = 15
TITLE_CHARS = 40  # a phone title's line: ~40 characters of TITLE_PX type leave the camera button its corner
SEEN = "_phone_seen"  # session state: what the window said (True: narrower than PHONE_PX; None: not yet said)
SENSOR_KEY = "bve-width"
PHONE_MARK = "bve-layout-phone"  # a rule in the page's style while it is drawn for a phone

_SENSOR_JS = """
export default function (component) {
  const { setStateValue, data } = component;
  let last = data.phone === true;  // not said yet = not a phone: a desktop window never causes a rerun
  const report = () => {
    const phone = window.innerWidth < data.limit;
    if (phone !== last) { last = phone; setStateValue('phone', phone); }
  };
  report();
  if (!document.getElementById('bve-skip')) {
    const style = document.createElement('style');
    style.textContent = '#bve-skip{position:fixed;left:-10000px;top:8px;z-index:1000100;padding:8px 14px;'
      + 'background:#fff;color:#1a1a8c;border:2px solid #1a1a8c;border-radius:6px;font:600 16px sans-serif;}'
      + '#bve-skip:focus{left:8px;}';
    document.head.appendChild(style);
    const link = document.createElement('a');
    link.id = 'bve-skip';
    link.href = '#bve-main';
    link.textContent = 'Skip to the lesson';
    link.addEventListener('click', (event) => {
      event.preventDefault();
      const main = document.querySelector('[data-testid="stMain"]');
      const target = main && (main.querySelector('h1') || main);
      if (target) { target.setAttribute('tabindex', '-1'); target.focus(); target.scrollIntoView(); }
    });
    document.body.prepend(link);
  }
  window.addEventListener('resize', report);
  return () => window.removeEventListener('resize', report);
}
"""

# Every page, every width: captions dark enough to read (Streamlit draws them at 60% opacity: 3.0:1 on white,
# axe-core's "serious" colour-contrast failures on Home, the masking lab, Attention and Lecture mode; this is 6.4:1;
# the theme is light, .streamlit/config.toml), and a formula that may scroll sideways on a phone scrolls inside its
# own box, never the page.
PAGE_CSS = """<style>
[data-testid="stCaptionContainer"] { opacity: 1 !important; color: #5c5e69 !important; }
.katex-display { max-width: 100%; overflow-x: auto; overflow-y: hidden; }
[data-testid="stDataFrame"]:focus-within { outline: 3px solid #1a1a8c; outline-offset: 2px; border-radius: 4px; }
</style>"""  # (a table's cells are drawn on a canvas: while the keyboard is in them, the table shows it has the focus)
PHONE_CSS = """<style>
.katex-display > .katex { font-size: 1.05em !important; }
</style>"""  # on a phone: displayed formulas a little smaller than Streamlit's 1.21 em (they are written to wrap)

_sensor = None


def _mount_sensor(where) -> bool | None:
    global _sensor
    if _sensor is None:
        _sensor = st.components.v2.component("bve_width", js=_SENSOR_JS)
    seen = st.session_state.get(SEEN)
    with where:
        result = _sensor(
            key=SENSOR_KEY,
            data={"phone": seen, "limit": PHONE_PX},
            default={"phone": seen},
            on_phone_change=lambda: None,
            height=0,
        )
    value = getattr(result, "phone", None) if result is not None else None
    return value if isinstance(value, bool) else seen


def sense(where=None) -> None:
    """Mount the window's sensor (and the skip link) — once per run, before the page: the sidebar calls it."""
    where = where or st.sidebar
    try:
        st.session_state[SEEN] = _mount_sensor(where)
    except Exception:  # noqa: BLE001 — no component runtime (a scripted client): the link alone decides
        pass
    # the page's style; on a phone it names the layout (PHONE_MARK: the browser tests wait for the phone's draw)
    where.html(PAGE_CSS + PHONE_CSS.replace("</style>", f".{PHONE_MARK} {{}}\n</style>") if phone() else PAGE_CSS)


def phone() -> bool:
    """Whether this run draws for a phone: asked for by the link (``layout=phone``), or a window narrower than
    ``PHONE_PX`` with ``layout=auto``; never in presenter mode (the projector's stage)."""
    if url.setting("presenter"):
        return False
    chosen = url.setting("layout")
    return chosen == "phone" or (chosen == "auto" and st.session_state.get(SEEN) is True)


def wrap(title: str, width: int = TITLE_CHARS) -> str:
    """A title's lines broken at spaces so that none is longer than ``width`` characters (tags not counted; a
    line break already there is kept)."""
    out = []
    for line in re.split(r"<br\s*/?>", title):
        words, current, length = line.split(" "), [], 0
        for w in words:
            n = len(re.sub(r"<[^>]*>", "", w))
            if current and length + 1 + n > width:
                out.append(" ".join(current))
                current, length = [], 0
            current.append(w)
            length += n + (1 if length else 0)
        out.append(" ".join(current))
    return "<br>".join(out)


def phone_style(fig) -> None:
    """A figure drawn on a phone: no text under ``MIN_TEXT_PX`` (layout, traces, annotations), the title wrapped
    and given room above the plot, a horizontal legend under it, narrow side margins."""
    layout = fig.layout
    if (layout.font.size or 12) < MIN_TEXT_PX:
        layout.font.size = MIN_TEXT_PX
    for trace in fig.data:
        font = getattr(trace, "textfont", None)
        if (
            font is not None
            and font.size is not None
            and not isinstance(font.size, (list, tuple))
            and font.size < MIN_TEXT_PX
        ):
            font.size = MIN_TEXT_PX
    for note in layout.annotations or ():
        if note.font.size is not None and note.font.size < MIN_TEXT_PX:
            note.font.size = MIN_TEXT_PX
    if layout.meta == "phone":  # built for a phone (a key figure's ``phone=True``): its own layout stands
        return
    title = layout.title.text
    if title:
        wrapped = wrap(title)
        lines = wrapped.count("<br>") + 1
        layout.title.text = wrapped
        layout.title.font.size = TITLE_PX
        layout.title.x, layout.title.xanchor = 0, "left"
        layout.title.y, layout.title.yref, layout.title.yanchor = 1, "container", "top"
        layout.title.pad = dict(t=20, l=4)  # plotly places a title of several lines from the top only with pad.t
        top = 28 + int(lines * TITLE_PX * 1.3)
        if (layout.margin.t or 0) < top + 20 or not _title_on_top(layout):
            layout.margin.t = max(layout.margin.t or 0, top + 20)
        if layout.height:
            layout.height = layout.height + max(0, lines - 1) * int(TITLE_PX * 1.3)
    layout.margin.l = min(layout.margin.l if layout.margin.l is not None else 10, 10)
    layout.margin.r = min(layout.margin.r if layout.margin.r is not None else 10, 10)
    stack_panels(fig)
    for name in _axis_names(layout, "x"):  # slanted tick labels overlap their neighbours' boxes: upright on a phone
        angle = layout[name].tickangle
        if isinstance(angle, (int, float)) and 0 < abs(angle) < 90:
            layout[name].tickangle = -90
    if (
        layout.showlegend is not False
        and sum(1 for t in fig.data if getattr(t, "showlegend", None) is not False and getattr(t, "name", None)) > 1
    ):
        _legend_below(fig)
        if (layout.legend.font.size or 12) < MIN_TEXT_PX:
            layout.legend.font.size = MIN_TEXT_PX


PANEL_PX = 260  # a stacked panel's plot height on a phone
PANEL_GAP_PX = 130  # between stacked panels: the upper one's tick labels and axis title, the lower one's title


def _axis_names(layout, letter: str) -> list[str]:
    names = [k for k in layout.to_plotly_json() if re.fullmatch(rf"{letter}axis\d*", k)]
    return sorted(names, key=lambda k: int(k[5:] or 1))


def stack_panels(fig) -> bool:
    """Side-by-side panels (``make_subplots`` columns) put one under the other, each the full width, in reading
    order (top row first, left to right); their titles move with them, and every panel shows its own y tick labels
    (a shared y axis hid them beside the first column). The figure grows to hold them. Returns whether it did."""
    layout = fig.layout
    panels = []
    for x_name in _axis_names(layout, "x"):
        x_axis = layout[x_name]
        y_ref = x_axis.anchor if x_axis.anchor and x_axis.anchor != "free" else "y"
        y_name = "yaxis" + y_ref[1:]
        if y_name not in layout or x_axis.overlaying:
            continue
        panels.append((x_name, y_name, tuple(x_axis.domain or (0, 1)), tuple(layout[y_name].domain or (0, 1))))
    if len({p[2] for p in panels}) < 2:  # one column already (or a single plot)
        return False
    panels.sort(key=lambda p: (-round(p[3][1], 3), p[2][0]))
    titles = {}
    for note in layout.annotations or ():  # make_subplots' titles: centred over a panel, on its top edge
        if note.xref == "paper" and note.yref == "paper" and note.showarrow is False:
            for k, (_, _, xd, yd) in enumerate(panels):
                if abs((note.x or 0) - (xd[0] + xd[1]) / 2) < 1e-3 and abs((note.y or 0) - yd[1]) < 1e-3:
                    titles[k] = note
    n = len(panels)
    top_px, bottom_px = (layout.margin.t or 80), (layout.margin.b or 80)
    plot_px = n * PANEL_PX + (n - 1) * PANEL_GAP_PX
    layout.height = top_px + bottom_px + plot_px
    for k, (x_name, y_name, _, _) in enumerate(panels):
        hi = 1 - k * (PANEL_PX + PANEL_GAP_PX) / plot_px
        lo = max(0.0, hi - PANEL_PX / plot_px)
        layout[x_name].domain = (0, 1)
        layout[y_name].domain = (lo, min(1.0, hi))
        layout[y_name].showticklabels = True
        if k in titles:
            titles[k].x, titles[k].y = 0.5, min(1.0, hi)
    domains = {x_name: layout[y_name].domain for x_name, y_name, _, _ in panels}
    for trace in fig.data:  # a colour bar beside its own panel (it was sized for one row of panels)
        bar = getattr(trace, "colorbar", None)
        x_name = "xaxis" + ((getattr(trace, "xaxis", None) or "x")[1:])
        if bar is not None and bar.orientation != "h" and x_name in domains:
            lo, hi = domains[x_name]
            bar.y, bar.yanchor, bar.len, bar.lenmode = (lo + hi) / 2, "middle", hi - lo, "fraction"
    return True


def _legend_below(fig) -> None:
    """The legend under everything (the figure's foot, not the plot's: tick labels sit under the plot), with room."""
    entries = sum(1 for t in fig.data if t.showlegend is not False and t.name)
    rows = -(-entries // 2) if entries else 0
    legend = fig.layout.legend
    legend.orientation, legend.x, legend.xanchor = "h", 0, "left"
    legend.yref, legend.y, legend.yanchor = "container", 0, "bottom"
    extra = 22 * rows + 10
    fig.layout.margin.b = (fig.layout.margin.b or 10) + extra
    if fig.layout.height:
        fig.layout.height = fig.layout.height + extra


def _title_on_top(layout) -> bool:
    return layout.title.y is None or layout.title.y >= 0.5


#: plotly's toolbar on a phone: the camera alone (saving in the chosen format), in its corner, always shown (a
#: touch screen has no hover to bring it up); the title leaves it room (``phone_style``).
def phone_config(config: dict) -> dict:
    return {**config, "displayModeBar": True, "modeBarButtons": [["toImage"]], "scrollZoom": False}
