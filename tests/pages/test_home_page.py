"""The home page through the router: what the app is, the lessons, and the model status."""

import re

from tests.conftest import shown_text


def model_table(at) -> list[dict]:
    """The home page's markdown table of models, as rows by column (markdown escapes undone)."""
    source = next(m.value for m in at.markdown if m.value.startswith("| variant |"))
    lines = source.splitlines()
    cells = lambda line: [re.sub(r"\\(.)", r"\1", c.strip()) for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]  # noqa: E731
    head = cells(lines[0])
    return [dict(zip(head, cells(line))) for line in lines[2:]]


def test_home_shows_purpose_lessons_and_models(app_page):
    from app.lessons import LESSONS

    at = app_page()
    assert not at.exception
    assert at.title[0].value.endswith("BERT Variants Explorer")
    text = shown_text(at)
    assert "offline" in text and "CPU" in text
    from app.models import catalogue

    table = model_table(at)
    assert [row["variant"] for row in table] == [v.label for v in catalogue.CATALOGUE.values()]
    for v, row in zip(catalogue.CATALOGUE.values(), table):
        cell = row["bundled stand-in"]
        assert cell.endswith("M parameters") if v.bundled_available() else cell == "not built"
    assert "google/electra-small-discriminator" in [row["real checkpoint"] for row in table]
    assert len(LESSONS) == 0 or len(at.get("page_link")) >= len(LESSONS)


def test_sidebar_badge_and_settings_round_trip_through_the_url(app_page):
    at = app_page(presenter="1", source="hub", export="svg")
    assert not at.exception
    assert at.toggle(key="presenter").value is True
    assert at.selectbox(key="source").value == "hub"
    assert at.radio(key="export").value == "svg"
    assert "Device" in shown_text(at.sidebar) if hasattr(at, "sidebar") else True


def test_malformed_global_parameters_fall_back_with_a_note(app_page):
    at = app_page(device="tpu", presenter="maybe")
    assert not at.exception
    assert at.selectbox(key="device").value == "auto"
    text = shown_text(at)
    assert "Ignored `device=tpu`" in text and "Ignored `presenter=maybe`" in text


def test_one_session_walks_through_every_lesson(app_page):
    """Lessons share key names (text, word, seed, temperature, ...) with their own ranges: walking from
    page to page in one session must never raise, and a text box never comes up empty."""
    from app.lessons import LESSONS

    at = app_page()
    for lesson in LESSONS + LESSONS[:2]:
        at.switch_page(lesson.path).run()
        assert not at.exception, lesson.path
        for box in list(at.text_area) + list(at.text_input):
            if box.key == "text":
                assert box.value.strip(), f"{lesson.path}: the text box came up empty"


def test_link_to_this_view_carries_the_state_even_when_the_address_is_unknown(app_page):
    """AppTest (like a scripted client) does not tell the server its address: the link is then the query
    alone, never "None?seed=7"."""
    at = app_page("pages/electra.py", seed="7")
    assert not at.exception
    links = [c.value for c in at.code if "seed=" in c.value]
    assert links == ["?seed=7"], [c.value for c in at.code]


def test_link_to_this_view_is_the_view_alone_like_its_qr_code(app_page):
    """Once a deck existed, the link carried ``deck=…`` (and presenter mode) while the QR code did not (issue 27):
    both are the view alone now."""
    from app.lecture import deck

    own = deck.encode([deck.view("electra", {"seed": "3"}, "Mine", "")])
    at = app_page("pages/electra.py", seed="7", deck=own, presenter="1")
    assert not at.exception
    links = [c.value for c in at.code if "seed=" in c.value]
    assert links == ["?seed=7"], [c.value for c in at.code]
