"""The presenter console page (app/ui/console.py) under AppTest: an address without a presentation says how to open
one; with the projector's room it shows the slide's note and the next slide, and its Next moves the room's position
(which the projector follows: tests/e2e/test_console.py)."""

from __future__ import annotations

import importlib
import json

from app.classroom.rooms import rooms
from app.core.text import html
from app.figures import stage_figure
from app.lecture import console, deck, handout
from app.models import loading
from tests.conftest import shown_text

DEFAULT = deck.default_deck()


def test_a_console_address_without_a_room_says_how_to_open_it(open_page):
    at = open_page("pages/console.py", room="ABCDEF", key="no-such-room-key")
    assert not at.exception
    assert "open it from the projector's window" in shown_text(at)


def test_the_room_code_without_its_key_opens_no_console(open_page):
    store = rooms()
    code, secret = store.create()
    store.put(code, secret, console.KEY, console.moved(None, 2, len(DEFAULT), "", 0.0).to_dict())
    at = open_page("pages/console.py", room=code, key="a-guessed-key-123")
    assert not at.exception
    assert "open it from the projector's window" in shown_text(at) and html(DEFAULT[1].note) not in shown_text(at)


def test_the_console_shows_the_note_and_next_slide_and_moves_the_room(open_page):
    store = rooms()
    code, secret = store.create()
    store.put(code, secret, console.KEY, console.moved(None, 2, len(DEFAULT), "", 0.0).to_dict())
    at = open_page("pages/console.py", room=code, key=secret)
    assert not at.exception
    text = shown_text(at)
    assert html(DEFAULT[1].note) in text and html(DEFAULT[2].title) in text and f"Slide 2 / {len(DEFAULT)}" in text
    at.button(key="bve-console-next").click().run()
    moved = console.Position.from_dict(store.get(code, console.KEY))
    assert (moved.slide, moved.version) == (3, 2)
    assert html(DEFAULT[2].note) in shown_text(at)
    at.button(key="bve-console-slide-1").click().run()
    assert console.Position.from_dict(store.get(code, console.KEY)).slide == 1


def test_the_console_shows_the_next_slides_stage_figure_small_and_still(open_page):
    """The next slide's stage figure as a thumbnail: the figure the projector will show after →, not a description."""

    store = rooms()
    code, secret = store.create()
    store.put(code, secret, console.KEY, console.moved(None, 1, len(DEFAULT), "", 0.0).to_dict())
    at = open_page("pages/console.py", room=code, key=secret)
    assert not at.exception
    charts = at.get("plotly_chart")
    assert len(charts) == 1 and "Slide 2 will show:" in shown_text(at)
    spec = json.loads(charts[0].proto.spec)
    assert spec["layout"]["height"] == 260 and json.loads(charts[0].proto.config)["staticPlot"] is True
    view = DEFAULT[1]
    lib, values = handout.library(view), handout.values_of(view)
    module = importlib.import_module(handout.key_figure_function(view).__module__)
    models = {k: loading.load(k) for k in handout.models_for(view)}
    expected = stage_figure(module, lib.run(models, lib.Inputs.from_values(values)), values.get("figure"))
    assert spec["layout"]["title"]["text"] == expected.layout.title.text  # the slide's own stage figure
    at.button(key="bve-console-next").click().run()
    assert not at.exception and "Slide 3 will show:" in shown_text(at)
