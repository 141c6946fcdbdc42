"""A tab whose session is new keeps the change it just made. When a tab's app process dies (behind a load balancer)
or its websocket reconnects to a fresh session, Streamlit's frontend sends the new session's first rerun with the
address bar the old session wrote — the state *before* the change — and every widget's value, the change included.
The browser's value wins (app/ui/url.py: ``yield_to_client``); a tab that opens a link sends no widget values, so a
shared link still opens the view it names. Browserless sessions (tests/e2e/stclient.py) on one server: a new
websocket is a new session, as after a reconnect. (tests/e2e/test_replicas.py shows the same through nginx with a
killed process and a real browser tab.)"""

from __future__ import annotations

import asyncio
from urllib.parse import parse_qs

import pytest

from tests.e2e.browser import streamlit_server
from tests.e2e.stclient import Session

pytestmark = pytest.mark.e2e

SLUG = "masking"


def _seed_label(run) -> str:
    return next(label for label in run.number_inputs if label.startswith("Seed"))


def test_a_reconnected_tab_keeps_its_first_change_and_a_link_still_opens_its_view():
    with streamlit_server(env={"BVE_WARM_START": "0"}) as (base, _):

        async def scenario():
            async with Session(base) as tab:
                opened = await tab.open(SLUG, "seed=7")
                label = _seed_label(opened)
                assert opened.number_inputs[label][1] == 7
                changed = await tab.set_number(label, 8)
                assert not changed.exceptions and parse_qs(changed.query)["seed"] == ["8"]
                address, widgets = tab.query, tab.last  # what the tab shows: the URL and its widgets

            # the tab reconnects to a new session and the visitor's next change (9) rides on its first rerun
            async with Session(base) as again:
                again.page, again.query, again.last = SLUG, address, widgets  # widget ids are the same in every session
                run = await again.set_number(label, 9)
            assert not run.exceptions, run.exceptions
            assert run.number_inputs[label][1] == 9  # the widget shows the change, not the URL's 8
            assert parse_qs(run.query)["seed"] == ["9"]  # and the page wrote it back to the address bar

            # a tab that opens the link (no widget values sent) gets the view the link names
            async with Session(base) as fresh:
                shown = await fresh.open(SLUG, address)
            assert not shown.exceptions and shown.number_inputs[label][1] == 8
            assert parse_qs(shown.query or address)["seed"] == ["8"]

        asyncio.run(scenario())
