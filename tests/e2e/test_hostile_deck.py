"""A hostile deck in a real browser (issue: lecture mode rendered deck titles and speaker notes as markdown):
titles and notes from a ``deck=`` link or an uploaded deck file show as plain text — no image fetched, no
link, no colour, no bidi override applied — and the browser asks no host but this machine for anything."""

from __future__ import annotations

import json

import pytest

from app.lecture import deck
from tests.e2e.browser import assert_no_injected_markup, browser, streamlit_server, wait_for_app

pytestmark = pytest.mark.e2e

TITLE = "![t](http://evil.invalid/t.png) [Log in](http://evil.invalid/x) :red[**HACKED**] \u202eevil"
NOTE = "<img src=http://evil.invalid/n.png> ![n](http://evil.invalid/n2.png) $\\href{http://evil.invalid}{x}$"
VIEWS = [deck.View("electra", (("seed", "5"),), TITLE, NOTE), deck.View("masking", (), "Plain title", "plain note")]


@pytest.fixture(scope="module")
def server():
    with streamlit_server() as (base, _):
        yield base


def assert_inert(page) -> None:
    # the deck's slides are listed once the link's deck is followed (a fresh server's first deep link reruns
    # through the router first): wait for them, then read what shows
    page.wait_for_function("() => document.body.innerText.includes('evil.invalid')", timeout=60_000, polling=100)
    wait_for_app(page)
    shown = assert_no_injected_markup(page)
    assert "⟨U+202E⟩" in shown and "evil.invalid" in shown  # the title is there, literally


def test_a_deck_links_hostile_titles_and_notes_are_plain_text(server):
    with browser() as (context, watcher):
        page = watcher.watch(context.new_page())
        page.goto(f"{server}/lecture?deck={deck.encode(VIEWS)}")
        wait_for_app(page)
        assert_inert(page)
        assert watcher.blocked == [], f"requests to other hosts: {watcher.blocked[:5]}"
        assert watcher.page_errors == []


def test_an_uploaded_decks_hostile_titles_and_notes_are_plain_text(server, tmp_path):
    upload = tmp_path / "deck.json"
    upload.write_text(deck.to_json(VIEWS), encoding="utf-8")
    assert json.loads(upload.read_text())["views"][0]["title"] == TITLE
    with browser() as (context, watcher):
        page = watcher.watch(context.new_page())
        page.goto(f"{server}/lecture")
        wait_for_app(page)
        page.locator('[data-testid="stFileUploaderDropzoneInput"]').set_input_files(str(upload))
        page.get_by_text("Loaded a deck of 2 slides").wait_for(timeout=60_000)
        wait_for_app(page)
        assert_inert(page)
        assert watcher.blocked == [], f"requests to other hosts: {watcher.blocked[:5]}"
        assert watcher.page_errors == []
