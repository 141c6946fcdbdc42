"""The presenter console's rules (app/lecture/console.py): a position round-trips through the room store, a window
follows only a newer version naming another slide, a move keeps the clock, an own deck is stored in parts and read
back only whole and only as the deck the position names."""

from __future__ import annotations

import pytest

from app.classroom.rooms import MAX_STATE_BYTES, InProcessRooms
from app.lecture import console, deck


def test_a_position_round_trips_through_the_room_store():
    store = InProcessRooms()
    code, secret = store.create()
    p = console.moved(None, 3, 13, "", now=100.0)
    assert store.put(code, secret, console.KEY, p.to_dict())
    back = console.Position.from_dict(store.get(code, console.KEY))
    assert back == p and back.version == 1 and back.started == 100.0
    assert not store.put(code, "not-the-secret", console.KEY, p.to_dict())  # only the presenter's windows move it


@pytest.mark.parametrize(
    "bad",
    [
        None,
        [],
        {},
        {"slide": "x", "total": 3},
        {"slide": 0, "total": 3},
        {"slide": 4, "total": 3},
        {"slide": 1, "total": 999},
        {"slide": 1, "total": 3, "version": -1},
    ],
)
def test_anything_but_a_position_reads_as_none(bad):
    assert console.Position.from_dict(bad) is None


def test_a_window_follows_only_a_newer_version_that_names_another_slide():
    p = console.Position(5, 13, "", 0.0, version=7)
    assert console.follow(6, 4, p) == 5  # the console moved since this window looked
    assert console.follow(7, 4, p) is None  # seen already (this window wrote it, or followed it)
    assert console.follow(6, 5, p) is None  # it shows that slide already
    assert console.follow(None, 4, p) == 5  # a window that has seen nothing follows the room
    assert console.follow(3, 4, None) is None


def test_a_move_is_one_version_on_keeps_the_clock_and_stays_in_the_deck():
    first = console.moved(None, 1, 13, "", now=50.0)
    second = console.moved(first, 2, 13, "", now=80.0)
    assert (second.slide, second.version, second.started) == (2, first.version + 1, 50.0)
    assert console.moved(second, 99, 13, "", now=90.0).slide == 13
    assert console.moved(second, 0, 13, "", now=90.0).slide == 1
    other = console.moved(second, 1, 4, "abc", now=95.0)  # another deck: its own clock
    assert other.started == 95.0 and other.version == second.version + 1


def test_the_clock_reads_as_a_lecturer_reads_it():
    assert [console.clock(s) for s in (0, 7, 65, 725, 3729, -3)] == ["0:00", "0:07", "1:05", "12:05", "1:02:09", "0:00"]


def test_neighbours_stop_at_either_end():
    assert console.neighbours(1, 3) == (None, 2)
    assert console.neighbours(2, 3) == (1, 3)
    assert console.neighbours(3, 3) == (2, None)


def test_an_own_deck_of_the_longest_kind_is_stored_in_parts_and_read_back_whole():
    views = tuple(
        deck.view("masking", {"seed": str(i), "text": "x" * 90}, f"Slide {i} " + "t" * 100, "n" * 250)
        for i in range(deck.MAX_VIEWS)
    )
    encoded = deck.encode(views)[: deck.MAX_ENCODED]
    stored = console.parts(encoded)
    assert len(stored) <= console.PARTS
    store = InProcessRooms()
    code, secret = store.create()
    for i, part in enumerate(stored):  # each part fits one state value
        assert store.put(code, secret, console.DECK_KEY.format(i), part)
        assert len(str(part)) < MAX_STATE_BYTES
    read = [store.get(code, console.DECK_KEY.format(i)) for i in range(console.PARTS)]
    name = console.digest(encoded)
    assert console.joined([r for r in read if r is not None], name) == encoded
    assert console.joined([r for r in read if r is not None], console.digest("another")) is None
    assert console.joined(read[1:2], name) is None  # a part missing: not the deck
    assert console.parts("") == [] and console.digest("") == ""


def test_the_console_address_carries_the_room_and_its_key():
    link = console.link("http://10.0.0.5:8501/", "ABCDEF", "s3cr-et_")
    assert link == "http://10.0.0.5:8501/console?room=ABCDEF&key=s3cr-et_"


def test_a_projector_polls_quickly_only_while_a_console_has_been_heard_from():
    """The projector's second-by-second poll cost a slide change ~0.1 s (BENCHMARKS.md): it runs only while a
    console wrote its ``alive`` within ALIVE_S; otherwise the projector looks for one every IDLE_POLL_S."""
    from app.lecture import console

    now = 1_000_000.0
    assert console.console_open(console.alive(now - 1), now)
    assert console.console_open(console.alive(now - console.ALIVE_S), now)
    assert not console.console_open(console.alive(now - console.ALIVE_S - 0.1), now)
    assert not console.console_open(None, now) and not console.console_open({"at": "soon"}, now)
    assert not console.console_open({"at": True}, now) and not console.console_open({"at": now + 60}, now)
    assert console.POLL_S < console.IDLE_POLL_S < console.ALIVE_S
