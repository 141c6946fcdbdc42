"""The real app in a real browser: every page renders with the network blocked, with no console error
and no exception box."""

import pytest

from app.lessons import LESSONS
from tests.conftest import app_device_label
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
        assert watcher.failed == []


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda lesson: lesson.slug)
def test_a_deep_link_in_a_fresh_browser_goes_through_the_router(server, lesson):
    """A lecturer's prepared link is the first thing a fresh browser opens: the page must come with the
    shared sidebar and the settings from the link, as when reached from the home page."""
    with browser() as (context, watcher):
        page = watcher.watch(context.new_page())
        page.goto(f"{server}/{lesson.slug}?export=svg")
        wait_for_app(page)
        page.wait_for_selector('[data-testid="stSidebar"] [role="switch"]', timeout=60_000)
        sidebar = page.inner_text('[data-testid="stSidebar"]')
        assert "Models" in sidebar and "Presenter mode" in sidebar, "the router did not run"
        assert page.locator('[data-testid="stSidebar"] input[type="radio"]').nth(1).is_checked()  # SVG
        assert "export=svg" in page.url
        assert exception_boxes(page) == []
        assert watcher.console_errors == [] and watcher.failed == [] and watcher.blocked == []


def test_sidebar_shows_device_badge_and_links_reach_lessons(server):
    with browser() as (context, watcher):
        page = watcher.watch(context.new_page())
        page.goto(server)
        wait_for_app(page)
        sidebar = page.inner_text('[data-testid="stSidebar"]')
        assert "Device" in sidebar and app_device_label() in sidebar
        for lesson in LESSONS:
            assert lesson.title in sidebar
        assert watcher.console_errors == [] and watcher.blocked == []


def test_the_first_link_a_fresh_server_sees_is_a_deep_link():
    """The lecture scenario: start the app, open a prepared link. No "Page not found" dialog, and the
    page comes through the router with the link's state."""
    lesson = LESSONS[-1]
    with streamlit_server() as (base, _), browser() as (context, watcher):
        page = watcher.watch(context.new_page())
        page.goto(f"{base}/{lesson.slug}?export=svg")
        wait_for_app(page)
        page.wait_for_selector('[data-testid="stSidebar"] [role="switch"]', timeout=60_000)
        assert page.query_selector('[role="dialog"]') is None, page.inner_text('[role="dialog"]')
        assert lesson.title.split(":")[0] in page.inner_text("h1") or page.inner_text("h1")
        assert "Models" in page.inner_text('[data-testid="stSidebar"]')
        assert watcher.console_errors == [] and watcher.failed == [] and watcher.blocked == []


def test_a_presenter_link_opens_with_the_sidebar_collapsed(server):
    with browser((1280, 720)) as (context, watcher):
        page = watcher.watch(context.new_page())
        page.goto(f"{server}/{LESSONS[0].slug}?presenter=1")
        wait_for_app(page)
        assert page.get_attribute('[data-testid="stSidebar"]', "data-collapsed") == "true"
        assert "presenter=1" in page.url and exception_boxes(page) == []
        assert watcher.console_errors == []
