"""How a page shows its figures, and presenter mode.

On a projector (presenter mode) a lesson shows its idea first: its key figure with a one-line takeaway sits on
the "stage", right under the title, in view at 1280x720 without scrolling; the page's intro prose is folded
away under it, and widgets and the rest of the page follow below. Off the projector the same calls draw the
figure where it stands.
"""

from __future__ import annotations

import streamlit as st

from app.core import text
from app.ui import url

PRESENTER_FONT = 22
PRESENTER_FIGURE_HEIGHT = 430  # px: the key figure with the title and one takeaway line fit 1280x720
DECK_FIGURE_HEIGHT = 390  # px: the same with the deck bar above the title
STAGE_KEY = "bve-stage"  # the stage's container (CSS class st-key-bve-stage: the browser tests find it by it)
STAGE = "_stage"  # session state: this run's stage container (None until made)


def presenting() -> bool:
    return bool(url.setting("presenter"))


def clear() -> None:
    """A new run: its stage is made anew under its title."""
    st.session_state[STAGE] = None


def make() -> None:
    """The key figure's place on a projector, made once per run right under the title (by ``intro`` or, on a
    page without one, by ``bind``)."""
    if presenting() and st.session_state.get(STAGE) is None:
        st.session_state[STAGE] = st.container(key=STAGE_KEY)


def stage():
    """Where the key figure goes: the stage on a projector, else the page where it stands."""
    return (st.session_state.get(STAGE) if presenting() else None) or st


def stage_height() -> int:
    return DECK_FIGURE_HEIGHT if url.setting("slide") else PRESENTER_FIGURE_HEIGHT


def intro(markdown: str) -> None:
    """The lesson's idea in two or three sentences: shown, or on a projector folded away under the stage."""
    if presenting():
        make()
        with st.expander("What this lesson shows", icon=":material/menu_book:"):
            st.markdown(markdown)
    else:
        st.markdown(markdown)


def takeaway(markdown: str) -> None:
    """The lesson's one takeaway (one line): at the end of the page, or under the key figure on a projector."""
    stage().markdown(f"**Takeaway:** {markdown}")



def user_caption(value, where=None) -> None:
    """A user's text (a deck's speaker note) shown as a caption, exactly as typed: HTML-escaped inside an
    HTML block, so no markdown forms from it — not even the links GitHub-flavoured markdown makes of bare
    addresses, which backslash escapes do not stop. The deck bar shows the same strings the same way."""
    (where or st).markdown(f'<div class="bve-user-caption" style="font-size:0.875rem;opacity:0.7">'
                           f"{text.html(value)}</div>", unsafe_allow_html=True)


def show_figure(fig, name: str, height: int | None = None, key: bool = False) -> None:
    """A plotly figure with the page's export format on its camera button, styled for presenter mode.
    ``key=True`` marks the lesson's key figure: on a projector it goes on the stage, sized to fit."""
    where = stage() if key else st
    if presenting():
        fig.update_layout(font=dict(size=PRESENTER_FONT, color="#000"), template="simple_white")
        if key:
            height = min(height or fig.layout.height or stage_height(), stage_height())
    if height:
        fig.update_layout(height=height)
    fmt = url.setting("export")
    where.plotly_chart(
        fig, width="stretch", key=f"fig-{name}",
        config={"displaylogo": False, "toImageButtonOptions": {"format": fmt, "filename": name, "scale": 2}},
    )


def show_html(document, alt: str, key: bool = False) -> None:
    """A figure that is a standalone HTML document (``app.figures.Document``: bertviz's views) in an iframe.
    ``key=True``: the lesson's key figure; on a projector it goes on the stage, zoomed out to fit."""
    html_text, height = document.html, document.height
    if key and presenting() and height > stage_height():
        zoom = stage_height() / height
        html_text = html_text.replace("<head>", f"<head><style>html {{ zoom: {zoom:.3f}; }}</style>", 1)
        height = stage_height()
    (stage() if key else st).iframe(html_text, height=height, alt=alt)


def show_chart(chart, name: str) -> None:
    """An altair chart: its ••• menu saves SVG and PNG (vega-embed, no network)."""
    if presenting():
        chart = chart.configure_axis(labelFontSize=PRESENTER_FONT - 4, titleFontSize=PRESENTER_FONT).configure_legend(
            labelFontSize=PRESENTER_FONT - 4, titleFontSize=PRESENTER_FONT)
    st.altair_chart(chart, width="stretch", key=f"chart-{name}")


def presenter_css() -> None:
    """Large type and no chrome on a projector; tight margins so the stage fits 1280x720. Written into the
    sidebar: a style element in the page would take a row of the page's spacing."""
    st.sidebar.markdown(
        f"""<style>
        html, body, [data-testid="stAppViewContainer"] {{ font-size: {PRESENTER_FONT}px; }}
        [data-testid="stMarkdownContainer"] p, [data-testid="stMarkdownContainer"] li {{ font-size: {PRESENTER_FONT}px; line-height: 1.45; color: #000; }}
        h1 {{ font-size: 2.1rem !important; padding: 0.2rem 0 0.4rem 0 !important; }} h2, h3 {{ font-size: 1.6rem !important; }}
        [data-testid="stHeader"], [data-testid="stToolbar"], footer {{ display: none; }}
        .block-container {{ padding: 0.6rem 1.5rem 2rem 1.5rem !important; max-width: 100% !important; }}
        .st-key-{STAGE_KEY} {{ gap: 0.2rem; }}
        .st-key-{STAGE_KEY} [data-testid="stMarkdownContainer"] p {{ margin-bottom: 0; }}
        </style>""",
        unsafe_allow_html=True,
    )
