"""Screenshot every page in headless chromium, to look at what a student or a lecturer sees.

    python scripts/screenshots.py [--out screenshots] [--presenter] [--size 1280x720] [--pages home masking ...]
    python scripts/screenshots.py --deck [--size 1280x720]      # every slide of the default lecture deck
    python scripts/screenshots.py --size 390x844 --figures      # a phone: each page, and each of its figures

Presenter screenshots (and --deck, which is presenter mode) print how tall the stage's figure is and where it
ends: it must end inside the window (no scrolling on a projector).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.lecture import deck  # noqa: E402
from app.lessons import LESSONS, TOOLS  # noqa: E402
from tests.e2e.browser import browser, exception_boxes, streamlit_server, wait_for_app  # noqa: E402

STAGE_FIGURE = ".st-key-bve-stage .js-plotly-plot, .st-key-bve-stage iframe"


def figure_box(page) -> tuple[float, float] | None:
    """Where the stage's figure ends, in pixels from the top of the window, and its height (None: no figure on
    the stage)."""
    try:
        page.wait_for_selector(STAGE_FIGURE, timeout=15_000)
    except Exception:
        return None
    page.wait_for_timeout(500)
    return tuple(
        page.evaluate(
            f"() => {{ const r = document.querySelector('{STAGE_FIGURE}').getBoundingClientRect(); "
            "return [r.bottom, r.height]; }"
        )
    )


def where(box, h: int) -> str:
    if box is None:
        return "no figure"
    bottom, tall = box
    return (
        f"figure {tall:.0f} px tall ({tall / h:.0%} of {h}), ends at {bottom:.0f} px "
        f"({'fits' if bottom <= h else 'CUT'})"
    )


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--out", default="screenshots", type=Path)
    p.add_argument("--presenter", action="store_true")
    p.add_argument("--deck", action="store_true", help="walk the default deck with the → key (presenter mode)")
    p.add_argument("--size", default="1280x900")
    p.add_argument("--full", action="store_true", help="the whole page, not only the first screen")
    p.add_argument("--pages", nargs="*", help="slugs (home for the home page); default all")
    p.add_argument(
        "--figures",
        action="store_true",
        help="also each figure of the page on its own (<slug>-fig-NN.png), scrolled into view: the figures "
        "below the first screen, as a phone shows them",
    )
    p.add_argument("--query", default="", help="extra query string, e.g. seed=3")
    a = p.parse_args()
    w, h = (int(x) for x in a.size.split("x"))
    a.out.mkdir(parents=True, exist_ok=True)
    with streamlit_server() as (base, _), browser((w, h)) as (context, watcher):
        page = watcher.watch(context.new_page())
        if a.deck:
            views = deck.default_deck()
            page.goto(views[0].link(base, presenter="1", slide="1"))
            for n, view in enumerate(views, 1):
                page.wait_for_function(
                    f"() => new URLSearchParams(location.search).get('slide') === '{n}'", timeout=120_000
                )
                wait_for_app(page)
                box = figure_box(page)
                file = a.out / f"slide-{n:02d}-{view.page}.png"
                page.screenshot(path=str(file), full_page=a.full)
                print(file, where(box, h), "exceptions:", len(exception_boxes(page)))
                if n < len(views):
                    page.keyboard.press("ArrowRight")
        else:
            slugs = [("home", "")] + [(lesson.slug, lesson.slug) for lesson in (*LESSONS, *TOOLS)]
            if a.pages:
                slugs = [s for s in slugs if s[0] in a.pages]
            query = "&".join(x for x in ["presenter=1" if a.presenter else "", a.query] if x)
            for name, path in slugs:
                page.goto(f"{base}/{path}" + (f"?{query}" if query else ""))
                wait_for_app(page)
                page.wait_for_timeout(1500)
                box = figure_box(page) if a.presenter and path else None
                file = a.out / f"{name}{'-presenter' if a.presenter else ''}.png"
                page.screenshot(path=str(file), full_page=a.full)
                print(file, where(box, h) if a.presenter and path else "", "exceptions:", len(exception_boxes(page)))
                if a.figures:
                    # the page's figures, not the hidden one a projector's sidebar loads plotly with
                    for i, fig in enumerate(page.locator('[data-testid="stMain"] .js-plotly-plot').all(), 1):
                        fig.scroll_into_view_if_needed()
                        page.wait_for_timeout(300)
                        fig.screenshot(path=str(a.out / f"{name}-fig-{i:02d}.png"))
    print("console errors:", watcher.console_errors[:5], "blocked:", watcher.blocked[:5])


if __name__ == "__main__":
    main()
