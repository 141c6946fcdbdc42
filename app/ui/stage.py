"""How a page shows its figures, and presenter mode.

On a projector (presenter mode) a lesson shows its idea first: its stage figure with a one-line takeaway sits on
the "stage", right under the title, and fills what the title (and a deck's bar) leave of the window, at any
size — 1280x720 or 1920x1080 — without scrolling; the page's intro prose is folded away under it, and widgets
and the rest of the page follow below. Off the projector the same calls draw the figure where it stands.

Which figure is the stage figure: the lesson's key figure (``show_figure(..., key=True)``), unless the lesson
offers others (its SPEC's ``figure`` parameter, ``app.core.state.figure_param``) and the view names one of them
(``show_figure(..., key="coverage")``). A named figure the page does not draw with these settings leaves the key
figure on the stage. Streamlit cannot read the window's size on the server, so the size is CSS: the stage takes
``100vh`` less the header above it, and the figure the part the takeaway leaves (``presenter_css``).
"""

from __future__ import annotations

import functools

import html
import re

import streamlit as st

from app.core import state, text
from app.figures import white_template
from app.figures.words import figure_words
from app.ui import layout, url

PRESENTER_FONT = 22
PRESENTER_TITLE_PX = 900  # what a figure title's line may take on a projector, clear of a legend on its right
PRESENTER_NOTE_FONT = (
    18  # px, the least a figure's annotation gets on a projector (11-13 px on a laptop): readable from the back
)
PRESENTER_FONT_FAMILY = '"Source Sans", "Source Sans Pro", sans-serif'  # Streamlit's, loaded by the page
STAGE_KEY = "bve-stage"  # the stage's container (CSS class st-key-bve-stage: the browser tests find it by it)
FIGURE_BOX = "bve-stage-figure"  # the stage figure's box: CSS class st-key-bve-stage-figure-<its name>
KEY_NAME = "key"  # a stage figure's name when its lesson offers no other
HEADER = 150  # px above the stage in presenter mode: the page's top padding and its title (one line)
DECK_HEADER = 205  # px above it with a deck's bar over the title
MIN_STAGE = 300  # px: the stage never shrinks below this on a very short window (the page scrolls instead)
STAGE = "_stage"  # session state: this run's stage container (None until made)
STAGED = "_staged"  # session state: the name of the figure on this run's stage (None until one is)
FALLBACK = "_stage_fallback"  # session state: draws this run's key figure on the stage, when the view named another
ON_SLIDE = "_on_slide"  # session state: this run draws a deck's slide (the deck bar says so)
FOLDED = "_folded"  # session state: figures this run folded under the stage
FOLD_OFFERED = "_fold_offered"  # session state: this run showed "Fold the lesson's other figures again"
UNFOLD = "_slides_unfolded"  # session state: the lecturer asked slides to draw every figure of their lesson
FOLDED_STYLE = "font-size:0.8em;color:#555"
BELOW = "_stage_below"  # session state: figures under the stage waiting for the stage figure (drawn after it)
HOLD = "_stage_hold"  # session state: a question to the class holds the stage (app.ui.classroom); its figure waits
PLOTLY_LOADED = "_plotly_loaded"  # session state: this session's browser was sent the chart that loads plotly
PRELOAD_KEY = "bve-plotly-preload"  # that chart (hidden: CSS class st-key-bve-plotly-preload)


def presenting() -> bool:
    return bool(url.setting("presenter"))


def clear() -> None:
    """A new run: its stage is made anew under its title, with no figure on it yet."""
    st.session_state[STAGE] = None
    st.session_state[STAGED] = None
    st.session_state[FALLBACK] = None
    st.session_state[ON_SLIDE] = False
    st.session_state[FOLDED] = 0
    st.session_state[FOLD_OFFERED] = False
    st.session_state[BELOW] = []


def _later(draw) -> bool:
    """On a projector, before the stage figure is drawn: keep this figure's place (an empty slot where it stands)
    and draw it once the stage figure is (:func:`draw_below`), so the browser receives and draws the stage first.
    The lessons build their figures in reading order, and the figures below the stage used to reach the browser
    first: the stage stayed blank for ~2 s while they drew. False (draw now) once the stage figure is drawn, or
    off a projector."""
    if not presenting() or st.session_state.get(STAGE) is None or st.session_state.get(STAGED) is not None:
        return False
    slot = st.empty()
    st.session_state.setdefault(BELOW, []).append(lambda: draw(slot))
    return True


def draw_below() -> None:
    """Draw the figures kept for after the stage figure, in their places: right after the stage figure, and at
    the end of the page (the router's ``finish_page``) for a page whose stage figure never came."""
    waiting, st.session_state[BELOW] = st.session_state.get(BELOW) or [], []
    for draw in waiting:
        draw()


def on_slide() -> None:
    """This run draws a deck's slide on a projector (the deck bar calls it): the lesson's figures that are not on
    the stage are folded (:func:`fold`)."""
    st.session_state[ON_SLIDE] = True


def folding() -> bool:
    """Whether this run folds the figures that are not on the stage: a deck's slide on a projector, unless the
    lecturer asked for every figure. A slide is its stage; drawing the rest of the lesson under it was most of a
    slide change (the server building those figures, the browser drawing them): → showed the next slide in
    1.1–2.0 s with them, 0.3–1.1 s without (scripts/benchmark.py --only deck, 2026-11-26)."""
    return presenting() and bool(st.session_state.get(ON_SLIDE)) and not st.session_state.get(UNFOLD)


def _unfold(value: bool) -> None:
    st.session_state[UNFOLD] = value


def fold(title: str) -> None:
    """A folded figure's place: its title, and at the first one of the run the button that draws them all (for
    the rest of the presentation; "Fold them again" then comes back in their place)."""
    n = st.session_state.get(FOLDED, 0)
    st.session_state[FOLDED] = n + 1
    line = f"Folded on this slide: {text.html(title) or 'a figure'}."
    if n == 0:
        line += (
            " The slide shows its stage figure; the lesson's other figures are drawn when asked, so the next "
            "slide comes at once."
        )
        st.markdown(f'<div class="bve-folded" style="{FOLDED_STYLE}">{line}</div>', unsafe_allow_html=True)
        st.button(
            "Draw the lesson's other figures",
            icon=":material/unfold_more:",
            key="bve-unfold",
            on_click=_unfold,
            args=(True,),
            help="On every slide from now on (a slide change then takes longer)",
        )
    else:
        st.markdown(f'<div class="bve-folded" style="{FOLDED_STYLE}">{line}</div>', unsafe_allow_html=True)


def unfolded_note() -> None:
    """Once per run, on a slide whose figures the lecturer unfolded: the button that folds them again."""
    if (
        presenting()
        and st.session_state.get(ON_SLIDE)
        and st.session_state.get(UNFOLD)
        and not st.session_state.get(FOLD_OFFERED)
    ):
        st.session_state[FOLD_OFFERED] = True
        st.button(
            "Fold the lesson's other figures again",
            icon=":material/unfold_less:",
            key="bve-fold",
            on_click=_unfold,
            args=(False,),
            help="Faster slide changes: each slide draws its stage figure only",
        )


def _plain(text: str) -> str:
    """Markup as plain text: tags dropped, entities read, runs of spaces made one."""
    return " ".join(html.unescape(re.sub(r"<[^>]*>", " ", text or "")).split())


def figure_title(fig) -> str:
    """A figure's name as plain text, for the line that stands in its place when folded (tags dropped, entities
    read: the builders escape the words they put in titles, and ``fold`` escapes this once): its title's first
    line; for a figure without one, its panels' titles ("content stream · query stream"), else what its axes
    plot ("share of spans by span length")."""
    title = _plain(re.split(r"<br\s*/?>", fig.layout.title.text or "")[0])
    if title:
        return title
    panels = [
        _plain(a.text)
        for a in fig.layout.annotations or ()
        if a.xref == "paper" and a.yref == "paper" and a.showarrow is False and a.yanchor == "bottom"
    ]
    if any(panels):
        return " · ".join(p for p in panels if p)
    y, x = _plain(fig.layout.yaxis.title.text or ""), _plain(fig.layout.xaxis.title.text or "")
    return f"{y} by {x}" if x and y else y or x


def make() -> None:
    """The key figure's place on a projector, made once per run right under the title (by ``intro`` or, on a
    page without one, by ``bind``)."""
    if presenting() and st.session_state.get(STAGE) is None:
        st.session_state[STAGE] = st.container(key=STAGE_KEY)


def stage():
    """Where the key figure goes: the stage on a projector, else the page where it stands."""
    return (st.session_state.get(STAGE) if presenting() else None) or st


def figure_choice() -> tuple[str, str] | None:
    """(the stage figure this view names, the lesson's key figure) by their names in ``FIGURES``, when the page's
    spec offers a choice (its ``figure`` parameter); None when it offers none."""
    p = next((p for p in url.bound_spec() if p.name == state.FIGURE), None)
    if p is None:
        return None
    return st.session_state.get(url.key_of(p), p.default), p.default


def figure_widget(spec, where=None) -> None:
    """The select that names this view's stage figure, where its spec offers a choice (beside the link to the view
    and "Add this view to my deck": a deck's slide keeps it)."""
    p = next((p for p in spec if p.name == state.FIGURE), None)
    if p is not None:
        (where or st).selectbox(p.label, list(p.choices), key=url.key_of(p), format_func=p.shown, help=p.help)


def staged_name(key: bool | str) -> str | None:
    """The name a figure marked ``key`` goes on the stage under, or None when it is not the stage figure: ``True``
    is the lesson's key figure, a string names one of the lesson's other figures (its ``figure`` parameter)."""
    if not key:
        return None
    choice = figure_choice()
    if choice is None:
        return KEY_NAME if key is True else None
    wanted, key_figure = choice
    name = key_figure if key is True else key
    return name if name == wanted else None


def intro(markdown: str) -> None:
    """The lesson's idea in two or three sentences: shown, or on a projector folded away under the stage (a tool
    page's, such as Lecture mode's, under "What this page shows")."""
    if presenting():
        from app.lessons import TOOLS

        make()
        what = "page" if url.page() in {t.slug for t in TOOLS} else "lesson"
        with st.expander(f"What this {what} shows", icon=":material/menu_book:"):
            st.markdown(markdown)
    else:
        st.markdown(markdown)


def takeaway(markdown: str) -> None:
    """The lesson's one takeaway (one line): at the end of the page, or under the stage figure on a projector. A
    view that named a figure these settings do not draw gets the key figure on the stage, first."""
    fallback = st.session_state.get(FALLBACK)
    if presenting() and st.session_state.get(HOLD):
        return  # the takeaway says what the model did: it waits for the reveal too
    if presenting() and fallback is not None and st.session_state.get(STAGED) is None:
        fallback()
    stage().markdown(f"**Takeaway:** {markdown}")


def user_caption(value, where=None) -> None:
    """A user's text (a deck's speaker note) shown as a caption, exactly as typed: HTML-escaped inside an
    HTML block, so no markdown forms from it — not even the links GitHub-flavoured markdown makes of bare
    addresses, which backslash escapes do not stop. The deck bar shows the same strings the same way."""
    (where or st).markdown(
        f'<div class="bve-user-caption" style="font-size:0.875rem;opacity:0.7">{text.html(value)}</div>',
        unsafe_allow_html=True,
    )


def _figure_box(name: str):
    """The stage figure's box, sized by ``presenter_css`` (the figure in it takes its height: ``height="stretch"``)."""
    st.session_state[STAGED] = name
    return stage().container(key=f"{FIGURE_BOX}-{name}")


class _Wired:
    """A figure already in the form the browser is sent (``app.figures.wire_form``), for ``st.plotly_chart``:
    Streamlit asks a plotly figure for ``to_dict()`` and encodes that; this one hands back the kept form instead of
    copying and packing the figure again (tests/pages check the charts' specs against the lessons' figures)."""

    def __init__(self, wired: dict):
        self._wired = wired

    def to_dict(self) -> dict:
        return self._wired


def _wired(fig):
    """``fig`` for ``st.plotly_chart``: a plotly BaseFigure whose ``to_dict`` is the kept wire form."""
    import plotly.basedatatypes

    from app.figures import wire_form

    cls = _wired_class(plotly.basedatatypes.BaseFigure)
    wired = cls.__new__(cls)  # no BaseFigure.__init__: nothing of the figure machinery is used, only to_dict
    object.__setattr__(wired, "_wired", wire_form(fig))
    return wired


@functools.cache
def _wired_class(base):
    return type("WiredFigure", (_Wired, base), {"__init__": _Wired.__init__, "to_dict": _Wired.to_dict})


def _plotly(where, fig, name: str, **size) -> None:
    fmt = url.setting("export")
    config = {"displaylogo": False, "toImageButtonOptions": {"format": fmt, "filename": name, "scale": 2}}
    where.plotly_chart(  # on a projector the figure's own style (presenter_style); Streamlit's theme greys it
        _wired(fig),
        width="stretch",
        key=f"fig-{name}",
        theme=None if presenting() else "streamlit",
        **size,
        config=layout.phone_config(config) if layout.phone() else config,
    )


def presenter_style(fig) -> None:
    """Large black type on white for a projector (``app.figures.white_template``), in the page's own typeface;
    a figure's smaller notes (subplot titles, a marked line's label) grow to ``PRESENTER_NOTE_FONT`` at least."""
    fig.update_layout(
        font=dict(size=PRESENTER_FONT, color="#000", family=PRESENTER_FONT_FAMILY), template=white_template()
    )
    title = fig.layout.title.text
    if title:  # one line that fits the stage: a long title gets smaller type (a wrapped one collides with legends)
        fig.update_layout(title_font_size=title_size(title))
    for note in fig.layout.annotations or ():
        if note.font.size is not None and note.font.size < PRESENTER_NOTE_FONT:
            note.font.size = PRESENTER_NOTE_FONT


def title_size(title: str) -> int:
    """A figure title's type size on a projector: ``PRESENTER_FONT + 2``, smaller (down to ``PRESENTER_NOTE_FONT``)
    when its longest line would not fit ``PRESENTER_TITLE_PX`` at about half an em a character."""
    longest = max(len(re.sub(r"<[^>]*>", "", line)) for line in re.split(r"<br\s*/?>", title))
    return int(max(PRESENTER_NOTE_FONT, min(PRESENTER_FONT + 2, PRESENTER_TITLE_PX / (0.5 * max(longest, 1)))))


ALT_STYLE = "font-size:0.875rem;color:#3d3f4a;margin:-0.4rem 0 0.4rem 0"


#: read by a screen reader, not drawn: a figure's words when its lesson wrote none (app.figures.words)
HIDDEN_STYLE = (
    "position:absolute;width:1px;height:1px;margin:-1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap"
)
QUOTED = re.compile(r"«([^«»]*)»")


def alt_text(alt: str, where=None, hidden: bool = False) -> None:
    """A figure's text alternative (what it shows and its headline numbers, from its Result), under it: for a
    screen reader and for a phone, where nothing can be hovered. Plain text, escaped here; what it quotes «…» (tokens,
    words a visitor typed) becomes code. ``hidden``: for a screen reader only (the words read off a figure)."""
    words = QUOTED.sub(r"<code>\1</code>", text.html(alt))
    style, cls = (HIDDEN_STYLE, "bve-alt bve-sr") if hidden else (ALT_STYLE, "bve-alt")
    (where or st).markdown(
        f'<p class="{cls}" role="note" style="{style}"><b>In words:</b> {words}</p>', unsafe_allow_html=True
    )


def show_figure(fig, name: str, height: int | None = None, key: bool | str = False, alt: str | None = None) -> None:
    """A plotly figure with the page's export format on its camera button, styled for presenter mode.
    ``key=True`` marks the lesson's key figure, ``key="<name>"`` another figure a view can name as its stage figure
    (``FIGURES``): on a projector the stage figure goes on the stage, as large as the window allows. ``alt``: the
    figure in words (``alt_text``), shown under it off the stage."""
    if presenting():
        staged = staged_name(key) if st.session_state.get(STAGED) is None else None
        if staged and st.session_state.get(HOLD):
            st.session_state[STAGED] = staged  # the class's question has the stage: the figure (the answer) waits
            return
        if staged:
            presenter_style(fig)
            fig.update_layout(height=None, autosize=True)  # the box's height, whatever the figure was made for
            _plotly(_figure_box(staged), fig, name, height="stretch")
            draw_below()
            return
        if key is True:  # the key figure, while the view names another: the stage's if that one is not drawn
            key_name = figure_choice()[1] if figure_choice() else KEY_NAME
            st.session_state[FALLBACK] = lambda: (
                presenter_style(fig),
                _plotly(_figure_box(key_name), fig, f"{name}-stage", height="stretch"),
                draw_below(),
            )
        if folding():
            fold(figure_title(fig))
            return
        unfolded_note()
        presenter_style(fig)
        if height:
            fig.update_layout(height=height)
        if _later(lambda slot: _plotly(slot, fig, name)):
            return
    if height:
        fig.update_layout(height=height)
    if layout.phone():
        layout.phone_style(fig)
    _plotly(st, fig, name)
    if not presenting():  # the lesson's own words, else the figure's read off it, for a screen reader
        alt_text(alt or figure_words(fig), hidden=not alt)


def show_html(document, alt: str, key: bool | str = False) -> None:
    """A figure that is a standalone HTML document (``app.figures.Document``: bertviz's views) in an iframe.
    ``key``: as for ``show_figure``; on the stage the frame fills the box and the document is zoomed, in the
    browser, so that its height (``document.height``) fills the frame."""
    staged = staged_name(key) if presenting() and st.session_state.get(STAGED) is None else None
    if staged and st.session_state.get(HOLD):
        st.session_state[STAGED] = staged  # the class's question has the stage: the figure (the answer) waits
        return
    if staged:
        fit = (
            f"<script>(function () {{ var H = {max(int(document.height), 1)}; function fit() {{ "
            "document.documentElement.style.zoom = Math.max(0.3, Math.min(2.5, (window.innerHeight - 8) / H)); } "
            "fit(); window.addEventListener('resize', fit); })();</script>"
        )
        html_text = document.html.replace("<head>", f"<head>{fit}", 1)
        _figure_box(staged).iframe(html_text, height="stretch", alt=alt)
        draw_below()
        return
    if folding():
        fold(alt)
        return
    if _later(lambda slot: slot.iframe(document.html, height=document.height, alt=alt)):
        return
    st.iframe(document.html, height=document.height, alt=alt)


def show_chart(chart, name: str) -> None:
    """An altair chart: its ••• menu saves SVG and PNG (vega-embed, no network)."""
    if presenting():
        chart = chart.configure_axis(labelFontSize=PRESENTER_FONT - 4, titleFontSize=PRESENTER_FONT).configure_legend(
            labelFontSize=PRESENTER_FONT - 4, titleFontSize=PRESENTER_FONT
        )
    st.altair_chart(chart, width="stretch", key=f"chart-{name}")


def load_plotly(where) -> None:
    """On a projector, once a session, before the page computes: an empty chart, hidden, so that the browser loads
    Streamlit's plotly before the page's figures arrive. The order the server sends figures in (the stage figure
    first: :func:`_later`) is the order the browser draws them only once plotly is loaded. Streamlit loads it (4.7 MB
    of script, 2-3 s to run on two busy cores) when the first chart arrives; a chart that arrives meanwhile waits, and
    once it is ready React draws the charts arriving then before those that waited. ModernBERT sends its figures over
    ~0.5 s: on its first load the stage figure, sent first, drew 1.3-3.1 s after figures sent after it in 5 of 10 cold
    loads (issue 51, measured). Loaded while the page computes, plotly is ready when the figures come, and they are
    drawn as they arrive; had they all come while it loads, they are drawn together, the stage first."""
    if st.session_state.get(PLOTLY_LOADED):
        return
    import plotly.graph_objects as go

    st.session_state[PLOTLY_LOADED] = True
    where.plotly_chart(go.Figure(), key=PRELOAD_KEY, theme=None, config={"staticPlot": True, "displayModeBar": False})


def presenter_css() -> None:
    """Large type and no chrome on a projector; tight margins; the title on one line. The stage (when a figure is
    on it) is the window's height less the header above it (``HEADER``, or ``DECK_HEADER`` under a deck's bar);
    its figure's box takes what the takeaway leaves, however many lines that takes. Written into the sidebar: a
    style element in the page would take a row of the page's spacing."""
    st.sidebar.markdown(
        f"""<style>
        html, body, [data-testid="stAppViewContainer"] {{ font-size: {PRESENTER_FONT}px; }}
        [data-testid="stMarkdownContainer"] p, [data-testid="stMarkdownContainer"] li {{ \
font-size: {PRESENTER_FONT}px; line-height: 1.45; color: #000; }}
        h1 {{ font-size: 2.1rem !important; padding: 0.2rem 0 0.4rem 0 !important; }} \
h2, h3 {{ font-size: 1.6rem !important; }}
        [data-testid="stHeader"], [data-testid="stToolbar"], footer {{ display: none; }}
        .block-container {{ padding: 0.6rem 1.5rem 2rem 1.5rem !important; max-width: 100% !important; }}
        .st-key-{STAGE_KEY} {{ gap: 0.2rem; }}
        .st-key-{STAGE_KEY} [data-testid="stMarkdownContainer"] p {{ margin-bottom: 0; }}
        h1 {{ white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }}
        .st-key-{STAGE_KEY}:has([class*="st-key-{FIGURE_BOX}-"]) {{ flex: none !important;
            height: max({MIN_STAGE}px, calc(100vh - {HEADER}px)) !important; }}
        body:has(.st-key-bve-deck-bar) .st-key-{STAGE_KEY}:has([class*="st-key-{FIGURE_BOX}-"]) {{
            height: max({MIN_STAGE}px, calc(100vh - {DECK_HEADER}px)) !important; }}
        .st-key-{STAGE_KEY} > div:has(> [class*="st-key-{FIGURE_BOX}-"]) {{ flex: 1 1 0 !important; min-height: 0;
            display: flex; flex-direction: column; }}
        .st-key-{STAGE_KEY} [class*="st-key-{FIGURE_BOX}-"] {{ flex: 1 1 0 !important; min-height: 0; }}
        .st-key-{PRELOAD_KEY} {{ display: none !important; }}
        </style>""",
        unsafe_allow_html=True,
    )
    load_plotly(st.sidebar)
