"""The home page's lesson cards and example links show their whole titles in a student's 1280×800 window
(issue 27: "DeBERTa: disentangled attentio…" and "NSP vs SOP: sentence objective…" ended in an ellipsis)."""

import pytest

from tests.e2e.browser import browser, streamlit_server, wait_for_app

pytestmark = pytest.mark.e2e


def test_no_page_link_on_the_home_page_is_cut():
    with streamlit_server() as (base, _), browser((1280, 800)) as (context, watcher):
        page = watcher.watch(context.new_page())
        page.goto(base + "/")
        wait_for_app(page)
        # under load (CI) the cards arrive after the first draw: wait for them and for the fonts they are measured in
        page.wait_for_function(
            """() => [...document.querySelectorAll('[data-testid="stMain"] [data-testid="stPageLink-NavLink"] p')]
            .filter(p => p.offsetParent !== null).length > 12""",
            timeout=60_000,
            polling=200,
        )
        page.evaluate("() => document.fonts.ready.then(() => true)")
        page.wait_for_timeout(500)
        links = page.evaluate("""() => [...document.querySelectorAll(\
'[data-testid="stMain"] [data-testid="stPageLink-NavLink"] p')]
            .filter(p => p.offsetParent !== null).map(p => [p.textContent, p.scrollWidth > p.clientWidth + 1])""")
        assert len(links) > 12
        assert [text for text, cut in links if cut] == []
