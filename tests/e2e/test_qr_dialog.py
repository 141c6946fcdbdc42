"""The QR code dialog fits a projector's 720-px-high screen, in a real browser (issue 27: it ran past the bottom,
so the code's lower rows and the link under it were off screen)."""

import warnings

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from tests.e2e.browser import browser, exception_boxes, streamlit_server, wait_for_app

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def server():
    # without the warm start: this module measures the dialog's layout, and on a fresh server the warm start
    # (every model loaded, every lesson's default view computed, tests/pages/test_warm_start.py) competes with
    # the first clicks; in the full suite on 2 busy cores the first dialog then took over a minute to open
    with streamlit_server(env={"BVE_WARM_START": "0"}) as (base, _):
        yield base


@pytest.mark.parametrize("size", [(1280, 720), (1024, 600)])
@pytest.mark.parametrize("where", ["lesson", "deck"])
def test_the_qr_dialog_fits_the_window(server, size, where):
    """From a lesson's "Link to this view", and from the deck bar in presenter mode (larger type; on 127.0.0.1 the
    dialog also warns that students cannot reach this address)."""
    with browser(size) as (context, watcher):
        page = watcher.watch(context.new_page())
        if where == "lesson":
            page.goto(f"{server}/electra?seed=7")
            wait_for_app(page)
            page.get_by_text("Link to this view").click()
            button = page.get_by_role("button", name="QR code for the class")
        else:
            page.goto(f"{server}/?slide=1&presenter=1")
            wait_for_app(page)
            button = page.get_by_role("button", name="QR", exact=True)
        image = page.locator('[role="dialog"] .st-key-bve-qr img')
        wait_for_app(page)  # the click lands on an idle page, not on a run still under way
        button.click()
        try:
            image.wait_for(timeout=40_000)
        except PlaywrightTimeout:
            # once in a full CI run on 2 busy cores (2026-11-28) the first click of this module's first test opened
            # no dialog in 60 s, and the test passed alone; a second click is what a visitor would do, and is said
            warnings.warn(f"the QR dialog ({where}, {size}) opened only on a second click", stacklevel=1)
            wait_for_app(page)
            button.click()
            image.wait_for(timeout=40_000)
        page.wait_for_function(
            "() => { const i = document.querySelector('[role=\"dialog\"] .st-key-bve-qr img');"
            " return i && i.complete && i.naturalWidth > 0; }",
            timeout=30_000,
        )
        page.wait_for_timeout(500)
        box = image.bounding_box()
        assert box["y"] >= 0 and box["y"] + box["height"] <= size[1], (box, size)  # the whole code is on screen
        assert abs(box["width"] - box["height"]) <= 2 and box["width"] >= 200, box  # square, large enough to scan
        link = page.locator('[role="dialog"] [data-testid="stCode"]').bounding_box()
        assert link["y"] + min(link["height"], 40) <= size[1], (link, size)  # the link's first line too
        assert exception_boxes(page) == []
