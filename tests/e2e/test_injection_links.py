"""Crafted links in a real browser (issue: link notes were a markdown injection hole): the page shows each
value literally, renders no image, link or colour from it, and makes zero requests to any host but this
machine. The watcher blocks and records every non-loopback request, so an injected ``![](http://...)``
image would show up there."""

from urllib.parse import quote

import pytest

from app.lessons import LESSONS
from tests.e2e.browser import assert_no_injected_markup, browser, streamlit_server, wait_for_app

pytestmark = pytest.mark.e2e

PAYLOADS = [
    "`![](http://evil.invalid/s.png)`",
    "`[Log in again](http://evil.invalid/x)`",
    ":red[**HACKED**]",
    "\u202e5 txet",
]


@pytest.fixture(scope="module")
def server():
    with streamlit_server() as (base, _):
        yield base


@pytest.mark.parametrize("slug", ["", LESSONS[0].slug, "electra"])
def test_injection_links_make_no_request_and_render_no_markup(server, slug):
    with browser() as (context, watcher):
        page = watcher.watch(context.new_page())
        for payload in PAYLOADS:
            page.goto(f"{server}/{slug}?seed={quote(payload)}&dtype={quote(payload)}")
            wait_for_app(page)
            shown = assert_no_injected_markup(page)
            assert ("evil.invalid" in shown) == ("evil.invalid" in payload)  # the value is there, literally
        assert watcher.blocked == [], f"requests to other hosts: {watcher.blocked[:5]}"
        assert watcher.page_errors == []
