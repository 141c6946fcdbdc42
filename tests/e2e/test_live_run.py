"""The claims page's live run in a real browser, with every non-loopback request blocked: one visitor starts
it and watches the progress bar and the live curve; a second visitor, meanwhile, sees the running one with
the start button disabled and no Cancel of their own (one live run per server, whoever asks)."""

from __future__ import annotations

import pytest

from tests.e2e.browser import Watcher, browser, exception_boxes, streamlit_server, wait_for_app
from tests.test_claims import synthetic_corpus

pytestmark = pytest.mark.e2e
START = "Run a small one live"
SNAPSHOT = """(start) => {
    const main = document.querySelector('[data-testid="stMain"]');
    const buttons = [...document.querySelectorAll('button')];
    const button = buttons.find(b => b.textContent.includes(start));
    if (!button) return null;  // not drawn yet: the page is still arriving
    return {main: main.innerText, start_disabled: button.disabled,
            cancel: buttons.some(b => b.textContent.trim().endsWith('Cancel'))};
}"""


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    root = tmp_path_factory.mktemp("live")
    corpus = synthetic_corpus(root / "corpus")  # small made-up stories: the data is ready in seconds
    with streamlit_server({"BVE_CORPUS": str(corpus), "BVE_EXPERIMENTS_WORK": str(root / "work")}) as (base, _):
        yield base


def test_one_live_run_with_a_progress_bar_and_a_second_visitor_who_sees_it(server):
    link = f"{server}/claims?claim=masking&seconds=10&seed=1"
    with browser((1280, 900)) as (context, watcher):
        page = watcher.watch(context.new_page())
        page.goto(link)
        wait_for_app(page)
        start = page.get_by_role("button", name=START)
        assert start.is_enabled()
        start.click()
        page.locator('[data-testid="stProgress"]').first.wait_for(timeout=180_000)  # it trains, and says how far
        assert "by you" in page.inner_text('[data-testid="stMain"]')

        context2 = context.browser.new_context(viewport={"width": 1280, "height": 900})  # another student
        try:
            watcher2 = Watcher(context2)
            other = watcher2.watch(context2.new_page())
            other.goto(link)
            wait_for_app(other)
            # the text and the buttons read at one instant, once the button is drawn: read one by one (a locator
            # waits for its element), the run could end in between and the page's rerun free the button (seen on a
            # slow 2-core machine, where the button was drawn seconds after the text)
            seen = other.wait_for_function(SNAPSHOT, arg=START, timeout=60_000, polling=100).json_value()
            if "was finished" not in seen["main"]:  # still running when the second page drew
                assert "another visitor" in seen["main"]
                assert seen["start_disabled"] is True and seen["cancel"] is False, seen
            assert exception_boxes(other) == [] and watcher2.blocked == []
        finally:
            context2.close()

        page.wait_for_function(
            "() => document.querySelector('[data-testid=\"stMain\"]').innerText.includes('was finished')",
            timeout=180_000,
        )
        # the live curve's caption (.first: during a rerun Streamlit may still show the last run's copy beside the
        # new one)
        page.get_by_text("a live run shows the recipe at work").first.wait_for(timeout=60_000)
        live = page.locator('.js-plotly-plot').last
        assert live.locator(".scatterlayer .trace").count() >= 2  # both arms drawn
        from playwright.sync_api import expect

        # the page reruns once the run ends (the poll stops), and then the button is free again
        expect(page.get_by_role("button", name=START)).to_be_enabled(timeout=60_000)
        wait_for_app(page)
        assert exception_boxes(page) == []
        assert watcher.console_errors == [] and watcher.page_errors == []
        assert watcher.blocked == [] and watcher.failed == []
