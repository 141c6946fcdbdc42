"""The real app in a real browser: every page renders with the network blocked, with no console error
and no exception box."""

import pytest

from app.lessons import LESSONS
from tests.e2e.browser import browser, exception_boxes, streamlit_server, wait_for_app

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def server():
    with streamlit_server() as (base, _):
        yield base


def test_every_page_renders_offline_without_errors(server):
    with browser() as (context, watcher):
        page = watcher.watch(context.new_page())
        visited = []
        for path, title in [("", "BERT Variants Explorer")] + [(lesson.slug, None) for lesson in LESSONS]:
            page.goto(f"{server}/{path}")
            wait_for_app(page)
            heading = page.inner_text("h1")
            if title:
                assert title in heading
            assert exception_boxes(page) == [], f"/{path} shows an exception"
            visited.append(path)
        assert visited[0] == "" and len(visited) == len(LESSONS) + 1
        assert watcher.blocked == [], f"the app tried to reach the network: {watcher.blocked[:5]}"
        assert watcher.page_errors == []
        assert watcher.console_errors == []


def test_sidebar_shows_device_badge_and_links_reach_lessons(server):
    with browser() as (context, watcher):
        page = watcher.watch(context.new_page())
        page.goto(server)
        wait_for_app(page)
        sidebar = page.inner_text('[data-testid="stSidebar"]')
        assert "Device" in sidebar and "CPU" in sidebar
        for lesson in LESSONS:
            assert lesson.title in sidebar
        assert watcher.console_errors == [] and watcher.blocked == []
