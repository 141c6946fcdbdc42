"""What a lecturer relies on, in a real browser with the network blocked: prepared links reopen their
exact state, presenter mode switches on from the sidebar, and figures download as valid PNG and SVG."""

from urllib.parse import parse_qs, urlencode, urlparse

import pytest

from app.lecture.examples import EXAMPLES
from app.lessons import LESSONS
from tests.e2e.browser import browser, exception_boxes, streamlit_server, wait_for_app

pytestmark = pytest.mark.e2e
SLUG = {lesson.path: lesson.slug for lesson in LESSONS}


@pytest.fixture(scope="module")
def server():
    with streamlit_server() as (base, _):
        yield base


def test_prepared_links_reopen_their_state(server):
    with browser() as (context, watcher):
        page = watcher.watch(context.new_page())
        for ex in EXAMPLES:
            page.goto(f"{server}/{SLUG[ex.page]}?{urlencode(ex.query)}")
            wait_for_app(page)
            shown = page.inner_text('[data-testid="stMain"]')
            assert "in the link (" not in shown, ex.label
            assert exception_boxes(page) == [], ex.label
            kept = {k: v[-1] for k, v in parse_qs(urlparse(page.url).query).items()}
            for key, value in ex.query.items():  # a value equal to the page's default is left out of the URL
                assert kept.get(key, value) == value, (ex.label, key, kept.get(key), value)
        assert watcher.console_errors == [] and watcher.failed == [] and watcher.blocked == []


def test_a_malformed_link_falls_back_with_a_visible_note(server):
    with browser() as (context, watcher):
        page = watcher.watch(context.new_page())
        page.goto(f"{server}/masking?rate=lots&seed=-4")
        wait_for_app(page)
        shown = page.inner_text('[data-testid="stMain"]')
        assert "Ignored rate=lots in the link" in shown and "Ignored seed=-4 in the link" in shown
        assert exception_boxes(page) == []


def test_presenter_mode_from_the_sidebar_enlarges_text(server):
    with browser((1280, 720)) as (context, watcher):
        page = watcher.watch(context.new_page())
        page.goto(f"{server}/masking")
        wait_for_app(page)
        size = lambda: page.evaluate("""() => parseFloat(getComputedStyle(
            document.querySelector('[data-testid="stMain"] [data-testid="stMarkdownContainer"] p')).fontSize)""")  # noqa: E731
        before = size()
        page.locator('[data-testid="stSidebar"]').get_by_text("Presenter mode").click()
        wait_for_app(page)
        page.wait_for_function("() => location.search.includes('presenter=1')", timeout=30_000)
        assert size() >= before * 1.3
        assert watcher.console_errors == []


@pytest.mark.parametrize("fmt,magic", [("png", b"\x89PNG\r\n\x1a\n"), ("svg", b"<svg")])
def test_a_figure_downloads_as_a_valid_file(server, fmt, magic, tmp_path):
    with browser() as (context, watcher):
        page = watcher.watch(context.new_page())
        page.goto(f"{server}/masking?export={fmt}")
        wait_for_app(page)
        chart = page.locator(".js-plotly-plot").first
        chart.scroll_into_view_if_needed()
        chart.hover()
        button = chart.locator('.modebar-btn[data-title^="Download plot"]')
        with page.expect_download(timeout=60_000) as info:
            button.click()
        path = tmp_path / info.value.suggested_filename
        info.value.save_as(path)
        data = path.read_bytes()
        assert path.suffix == f".{fmt}" and len(data) > 1000
        assert data.startswith(magic) or (fmt == "svg" and magic in data[:400])
        assert watcher.console_errors == [] and watcher.blocked == []
