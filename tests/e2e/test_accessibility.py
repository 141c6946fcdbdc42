"""axe-core (vendored: assets/vendor/) on every page at a desktop's 1280×720 and a phone's 390×844, in Debian's
chromium: no serious or critical violation, and no heading level skipped (issue 52). And the keyboard's way past the
sidebar: the first Tab stop is "Skip to the lesson", which moves the focus to the page's title."""

import pytest

from tests.e2e import phone
from tests.e2e.browser import browser, streamlit_server, wait_for_app

pytestmark = pytest.mark.e2e

PAGES = phone.pages()


@pytest.fixture(scope="module")
def server():
    with streamlit_server(env={"BVE_WARM_START": "0"}) as (base, _):
        yield base


@pytest.mark.parametrize("size", [phone.DESKTOP, phone.PHONE], ids=["desktop", "phone"])
def test_no_serious_or_critical_axe_violation_on_any_page(server, size):
    found = {}
    with browser(size) as (context, watcher):
        for slug in PAGES:
            page = phone.open_page(context, watcher, server, slug, phone=size == phone.PHONE)
            for name in filter(None, [phone.KEY_FIGURES.get(slug)]):  # the key figure drawn, checked with the rest
                phone.figure_text(page, name)
            violations = phone.axe(page)
            if violations:
                found[slug] = [(v["id"], v["nodes"], v["targets"][:2]) for v in violations]
            skips = phone.heading_skips(page)  # axe calls a skipped level "moderate": checked here all the same
            if skips:
                found.setdefault(slug, []).append(("heading levels skipped", skips))
            page.close()
    assert found == {}


def test_the_first_tab_stop_skips_the_sidebar_to_the_title(server):
    with browser(phone.DESKTOP) as (context, watcher):
        page = watcher.watch(context.new_page())
        page.goto(server + "/masking")
        wait_for_app(page, timeout_ms=240_000)
        page.wait_for_selector("#bve-skip", state="attached", timeout=30_000)
        page.keyboard.press("Tab")
        assert page.evaluate("() => document.activeElement.id") == "bve-skip"
        assert page.evaluate("() => getComputedStyle(document.activeElement).left") == "8px"  # shown when focused
        page.keyboard.press("Enter")
        focused = page.evaluate("() => [document.activeElement.tagName, document.activeElement.textContent]")
        assert focused[0] == "H1" and "Masking" in focused[1]
