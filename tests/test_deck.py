"""The lecture deck (app/lecture/deck.py): the URL form and the file form round-trip, validation drops what a lesson
would refuse and says so, the default deck follows the usual lecture, and editing keeps the deck whole.
Pure: lesson specs come from the libraries (no model is loaded)."""

from __future__ import annotations

import base64
import json
import zlib

import pytest
from hypothesis import given, settings, strategies as st

from app.lecture import deck
from app.lecture.examples import EXAMPLES
from app.lessons import LESSONS
from app.core.state import Param, Spec

SPECS = {  # small stand-ins for the lessons' SPECs, so that these tests import no torch
    "masking": Spec(
        Param("strategy", "choice", "dynamic", choices=("static", "static10", "dynamic")),
        Param("epochs", "int", 20, lo=1, hi=100),
        Param("text", "str", "The little girl.", max_len=1000),
    ),
    "electra": Spec(Param("temperature", "float", 1.0, lo=0.1, hi=3.0), Param("seed", "int", 0, lo=0, hi=2**31 - 1)),
}


def spec_of(slug):
    return SPECS.get(slug, Spec())


def test_a_deck_round_trips_through_its_url_form():
    views = (
        deck.view("masking", {"strategy": "static", "epochs": "40"}, "Static vs dynamic", "Point at the columns."),
        deck.view("electra", {"temperature": "2"}, "A hot generator"),
    )
    s = deck.encode(views)
    assert s.startswith(deck.PREFIX) and all(c.isalnum() or c in "-_." for c in s)  # URL-safe, no escaping needed
    back, notes = deck.decode(s, spec_of)
    assert back == views and notes == []


@settings(max_examples=60, deadline=None)
@given(title=st.text(max_size=200), note=st.text(max_size=400), epochs=st.integers(1, 100))
def test_any_title_and_note_round_trip_cleaned(title, note, epochs):
    v = deck.view("masking", {"epochs": str(epochs)}, title, note)
    (back,), notes = deck.decode(deck.encode([v]), spec_of)
    assert notes == []
    assert back.title == (" ".join(title.split())[: deck.TITLE_LIMIT] or "Masking lab")
    assert back.note == " ".join(note.split())[: deck.NOTE_LIMIT]
    assert back.params == ({} if epochs == 20 else {"epochs": str(epochs)})  # the default stays out of links


def test_a_deck_already_validated_is_trusted_as_it_is():
    views = (deck.view("masking", {"strategy": "static", "anything": "kept"}, "t", "n"),)
    assert deck.decode(deck.encode(views), spec_of=None) == (views, [])


def test_the_file_form_round_trips_and_says_what_it_is():
    views = deck.default_deck()
    text = deck.to_json(views)
    data = json.loads(text)
    assert data["format"] == deck.FORMAT and data["version"] == deck.VERSION and len(data["views"]) == len(views)
    back, notes = deck.from_json(text, lambda slug: None)  # no spec: values cannot be checked, so they are dropped...
    assert [v.page for v in back] == [v.page for v in views]
    assert all("cannot be checked" in n for n in notes)
    back, notes = deck.from_json(
        text.encode(), lambda slug: Spec(*[Param(k, "str", "") for v in views if v.page == slug for k in v.params])
    )
    assert back == views and notes == []  # ... and with specs that take them, all is kept


def test_validation_drops_unknown_pages_refused_values_and_unknown_settings_with_notes():
    entries = [
        {"page": "masking", "query": {"strategy": "static", "epochs": "lots", "colour": "red"}, "title": "One"},
        {"page": "bert-in-space", "query": {}, "title": "Gone"},
        "not a view",
        {"page": "electra", "query": {"seed": "-4", "temperature": "2"}, "title": "", "note": "Fakes"},
        {"page": "electra", "query": ["seed", "3"], "title": "Odd"},
    ]
    views, notes = deck.validate(entries, spec_of)
    assert [v.page for v in views] == ["masking", "electra", "electra"]
    assert views[0].params == {"strategy": "static"}  # epochs=lots and colour dropped, strategy kept
    assert views[1].params == {"temperature": "2"} and views[1].title == "ELECTRA: spot the fake"  # a lesson's title
    assert views[2].params == {}
    text = "\n".join(notes)
    assert "`epochs=lots`" in text and "`colour`" in text and "`bert-in-space`" in text and "`seed=-4`" in text
    assert "view 3 of the deck" in text.lower() and "not a list of values" in text
    assert len(notes) == 6


def test_validation_against_the_real_lessons():
    """The libraries' own SPECs (imports the lessons, which import torch: the real check)."""
    views, notes = deck.validate([{"page": "electra", "query": {"temperature": "9", "seed": "3"}, "title": "t"}])
    assert views[0].params == {"seed": "3"} and len(notes) == 1 and "`temperature=9`" in notes[0]


@pytest.mark.parametrize(
    "bad, why",
    [
        ("", "not a deck"),
        ("2.abc", "not a deck"),
        ("1.!!!", "characters"),
        ("1.", "characters"),
        ("1.AAAA", "damaged"),
        ("1." + "A" * (deck.MAX_ENCODED + 1), "longer than"),
        (deck.encode([deck.view("electra")])[:-6], "cut short"),
    ],
)
def test_an_unreadable_deck_is_a_note_never_an_exception(bad, why):
    views, notes = deck.decode(bad, spec_of)
    assert views == () and len(notes) == 1 and why in notes[0]


def test_a_small_link_cannot_unpack_into_a_huge_deck():
    bomb = zlib.compress(b"[" + b" " * (deck.MAX_JSON * 4) + b"]", 9)
    s = deck.PREFIX + base64.urlsafe_b64encode(bomb).decode().rstrip("=")
    assert len(s) < deck.MAX_ENCODED
    views, notes = deck.decode(s, spec_of)
    assert views == () and "unpacks to more" in notes[0]


def test_json_that_is_not_a_list_of_views_is_refused():
    for payload in ({"a": 1}, 3, "x"):
        s = deck.PREFIX + base64.urlsafe_b64encode(zlib.compress(json.dumps(payload).encode())).decode().rstrip("=")
        views, notes = deck.decode(s, spec_of)
        assert views == () and notes
    for text in (
        "{",
        "[]",
        json.dumps({"format": "something else", "views": []}),
        json.dumps({"format": deck.FORMAT, "version": 99, "views": []}),
    ):
        views, notes = deck.from_json(text, spec_of)
        assert views == () and notes[0].startswith("Could not load that file")


def test_a_deck_keeps_at_most_its_limit_of_views():
    views, notes = deck.validate([{"page": "electra"}] * (deck.MAX_VIEWS + 5), spec_of)
    assert len(views) == deck.MAX_VIEWS and str(deck.MAX_VIEWS) in notes[0]


def test_the_default_deck_follows_the_usual_lecture_then_the_newer_lessons():
    views = deck.default_deck()
    pages = [v.page for v in views]
    order = list(dict.fromkeys(pages))
    assert order[: len(deck.LECTURE)] == list(deck.LECTURE)  # masking → ALBERT ×2 → DistilBERT → ELECTRA → XLNet → ...
    assert set(order) == {lesson.slug for lesson in LESSONS}  # every lesson, the newer ones after
    newer = [lesson.slug for lesson in LESSONS if lesson.slug not in deck.LECTURE]
    assert order[len(deck.LECTURE) :] == newer
    assert pages.count("compare") == 2  # side by side, then the selection guide
    by_label = {ex.label: ex for ex in EXAMPLES}
    for v in views:  # every slide is a gallery example (its label, its query), or a lesson's default view
        ex = by_label.get(v.title)
        lesson = deck.lesson_of(v.page)
        assert (ex is not None and ex.query == v.params and ex.page == lesson.path) or (
            v.params == {} and v.title == lesson.title and not [e for e in EXAMPLES if e.page == lesson.path]
        )
        assert v.title and v.note


def test_editing_moves_removes_and_retitles():
    views = tuple(deck.view("electra", {}, f"slide {i}") for i in range(4))
    assert [v.title for v in deck.move(views, 2, -1)] == ["slide 0", "slide 2", "slide 1", "slide 3"]
    assert [v.title for v in deck.move(views, 0, -1)] == [v.title for v in views]  # kept within the deck
    assert [v.title for v in deck.move(views, 3, 5)] == [v.title for v in views]
    assert [v.title for v in deck.remove(views, 1)] == ["slide 0", "slide 2", "slide 3"]
    assert deck.add(views, views[0])[-1] == views[0]
    retitled = deck.titled(views, ["A", "", "  C  \n c ", None], ["n", "", "x" * 500, None])
    assert [v.title for v in retitled] == ["A", "ELECTRA: spot the fake", "C c", "ELECTRA: spot the fake"]
    assert len(retitled[2].note) == deck.NOTE_LIMIT and retitled[3].note == ""


def test_a_view_links_to_its_page_with_its_state_first():
    v = deck.view("masking", {"strategy": "static", "text": "A & B?"}, "t")
    assert v.link("http://hall:8501/") == "http://hall:8501/masking?strategy=static&text=A+%26+B%3F"
    assert v.link("", slide="2") == "/masking?strategy=static&text=A+%26+B%3F&slide=2"
    assert deck.view("electra").link("http://x") == "http://x/electra"
