"""What the browser keeps (issue 51, app/ui/keep.py): an own deck persists across views opened in the same browser
however they were opened — here by pasting each view's address, a new session each time — and so does the address
students use typed in the sidebar; the Lecture mode page then shows both."""

from __future__ import annotations

import pytest

from tests.e2e.browser import CHROMIUM, CHROMIUM_ARGS, exception_boxes, streamlit_server, wait_for_app

pytestmark = pytest.mark.e2e
ADDRESS = "http://192.168.1.20:8501"


def add_this_view(page) -> str:
    """Press "Add this view to my deck" under the lesson's "Link to this view"; the toast's text."""
    page.get_by_text("Link to this view").click()
    page.get_by_role("button", name="Add this view to my deck").click()
    toast = page.locator('[data-testid="stToast"]').filter(has_text="Added as slide")
    toast.first.wait_for(timeout=60_000)
    return toast.first.inner_text()


def test_an_own_deck_and_the_address_persist_across_pasted_addresses():
    from playwright.sync_api import sync_playwright

    with streamlit_server(env={"BVE_WARM_START": "0"}) as (base, _), sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            context = browser.new_context(viewport={"width": 1280, "height": 900})
            page = context.new_page()
            page.goto(f"{base}/masking?seed=3")  # a view's address, pasted
            wait_for_app(page)
            assert "Added as slide 1 " in add_this_view(page)
            page.goto(f"{base}/electra?seed=5")  # another, pasted: a new session
            wait_for_app(page)
            assert "Added as slide 2 " in add_this_view(page)

            page.get_by_text("Lecture: the address students use").click()
            box = page.get_by_role("textbox", name="Public address of this app")
            box.fill(ADDRESS)
            box.press("Enter")
            wait_for_app(page)

            other = context.new_page()  # a third, in another tab
            other.goto(f"{base}/lecture")
            wait_for_app(other)
            other.wait_for_function("() => document.body.innerText.includes('Your deck: 2 slides')", timeout=60_000)
            other.get_by_text("Lecture: the address students use").click()
            assert other.get_by_role("textbox", name="Public address of this app").input_value() == ADDRESS
            assert ADDRESS in other.locator("[data-testid='stCode']").first.inner_text()  # the present link uses it
            other.get_by_role("button", name="Back to the default deck").click()
            other.wait_for_function("() => document.body.innerText.includes('The default deck:')", timeout=60_000)
            wait_for_app(other)

            again = context.new_page()  # the default deck is what this browser keeps now
            again.goto(f"{base}/lecture")
            wait_for_app(again)
            again.wait_for_timeout(1500)
            wait_for_app(again)
            assert "The default deck:" in again.inner_text("body")
            assert exception_boxes(page) == [] and exception_boxes(other) == [] and exception_boxes(again) == []
        finally:
            browser.close()
