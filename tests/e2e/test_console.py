"""The presenter console in Debian's chromium (issue 51): two windows of one browser at 1280×720 — the projector
presenting the default deck, and the console opened from the deck bar's Console link. The console shows the note the
projector no longer shows, the next slide and the clock; its Next, the projector's → key and the console's slide list
each move both windows. Screenshots of both land in .e2e-shots/ (console-*.png) to be looked at."""

from __future__ import annotations

from urllib.parse import parse_qs, urlparse

import pytest

from app.lecture import deck
from tests.conftest import ROOT
from tests.e2e.browser import CHROMIUM, CHROMIUM_ARGS, exception_boxes, streamlit_server, wait_for_app

pytestmark = pytest.mark.e2e
W, H = 1280, 720
DEFAULT = deck.default_deck()
SHOTS = ROOT / ".e2e-shots"


def slide_of(page) -> str | None:
    return parse_qs(urlparse(page.url).query).get("slide", [None])[-1]


def wait_slide(page, n: int) -> None:
    page.wait_for_function(
        f"() => new URLSearchParams(location.search).get('slide') === '{n}'", timeout=90_000, polling=200
    )
    wait_for_app(page)


def wait_text(page, selector: str, words: str) -> None:
    page.wait_for_function(
        "([s, w]) => [...document.querySelectorAll(s)].some(e => e.innerText.includes(w))",
        arg=[selector, words],
        timeout=60_000,
        polling=200,
    )


def test_the_console_drives_the_projector_and_follows_it():
    from playwright.sync_api import sync_playwright

    SHOTS.mkdir(exist_ok=True)
    with streamlit_server(env={"BVE_WARM_START": "0"}) as (base, _), sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            context = browser.new_context(viewport={"width": W, "height": H})
            projector = context.new_page()
            projector.goto(DEFAULT[0].link(base, presenter="1", slide="1"))
            wait_slide(projector, 1)
            # the slide's point is the headline, the lesson's name small; the note is not projected
            headline, lesson, h1 = projector.evaluate("""() => [
                parseFloat(getComputedStyle(document.querySelector('.bve-slide-headline')).fontSize),
                parseFloat(getComputedStyle(document.querySelector('.bve-deck-title')).fontSize),
                document.querySelector('[data-testid="stMain"] h1').getBoundingClientRect().height]""")
            assert headline >= 36 and lesson <= headline / 1.5, (headline, lesson)
            assert h1 <= 1  # the page's own title (the lesson's name) is read out, not drawn: the bar names it small
            assert "Masking lab" in projector.inner_text(".bve-deck-title")
            assert DEFAULT[0].title in projector.inner_text(".bve-slide-headline")
            assert DEFAULT[0].note and DEFAULT[0].note not in projector.inner_text("body")

            with context.expect_page() as opened:
                projector.get_by_role("link", name="Console").click()
            console = opened.value
            console.set_viewport_size({"width": W, "height": H})
            wait_for_app(console)
            assert urlparse(console.url).path.endswith("/console")
            wait_text(console, ".bve-console-note", DEFAULT[0].note)
            wait_text(console, ".bve-console-next-title", DEFAULT[1].title)
            assert console.locator(".bve-console-clock").inner_text().count(":") == 1
            projector.mouse.move(640, 700)  # no tooltip on the screenshot
            projector.screenshot(path=str(SHOTS / "console-projector-1.png"))
            console.screenshot(path=str(SHOTS / "console-console-1.png"))
            thumbnail = console.locator(".js-plotly-plot").first  # the next slide's stage figure, small
            thumbnail.wait_for(timeout=150_000)  # computed in the console session (no warm start here)
            thumbnail.scroll_into_view_if_needed()
            assert 200 <= thumbnail.bounding_box()["height"] <= 300
            thumbnail.screenshot(path=str(SHOTS / "console-thumbnail-1.png"))

            console.get_by_role("button", name="Next").click()  # the console drives the projector
            wait_slide(projector, 2)
            assert urlparse(projector.url).path.endswith(f"/{DEFAULT[1].page}")
            assert DEFAULT[1].title in projector.inner_text(".bve-slide-headline")
            wait_text(console, ".bve-console-note", DEFAULT[1].note)

            projector.bring_to_front()
            projector.keyboard.press("ArrowRight")  # the projector's → moves the console too
            wait_slide(projector, 3)
            wait_text(console, ".bve-console-note", DEFAULT[2].note)
            wait_text(console, "[data-testid='stMain']", f"Slide 3 / {len(DEFAULT)}")

            console.bring_to_front()
            console.get_by_role(
                "button", name=f"1. {DEFAULT[0].title}"
            ).first.click()  # the slide list, back to slide 1
            wait_slide(projector, 1)
            wait_text(console, ".bve-console-note", DEFAULT[0].note)
            console.screenshot(path=str(SHOTS / "console-console-back.png"))
            projector.mouse.move(640, 700)
            projector.screenshot(path=str(SHOTS / "console-projector-back.png"))
            assert exception_boxes(projector) == [] and exception_boxes(console) == []
        finally:
            browser.close()


def test_a_console_address_without_a_presentation_says_how_to_open_one():
    from playwright.sync_api import sync_playwright

    with streamlit_server(env={"BVE_WARM_START": "0"}) as (base, _), sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            page = browser.new_context(viewport={"width": W, "height": H}).new_page()
            page.goto(f"{base}/console?room=ABCDEF&key=not-a-room-key")
            wait_for_app(page)
            assert "open it from the projector's window" in page.inner_text("body")
            assert exception_boxes(page) == []
        finally:
            browser.close()
