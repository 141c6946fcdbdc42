"""The ELECTRA page through the router: the pipeline, detection numbers, hand edits, the signal count,
URL state and bad input."""

from __future__ import annotations

import json
import re

import pytest

from tests.conftest import shown_text

PAGE = "pages/electra.py"


def metric(at, label_start: str) -> str:
    return next(m.value for m in at.metric if m.label.startswith(label_start))


def charts(at) -> list:
    return at.get("plotly_chart")


def pipeline_rows(at) -> list[list]:
    """The pipeline figure's z, one list per stage over the whole sentence (its lines joined)."""
    data = json.loads(charts(at)[0].proto.spec)["data"]
    stages = 6
    return [[z for b in range(len(data) // stages) for z in data[b * stages + s]["z"][0]] for s in range(stages)]


def test_defaults_show_the_game_its_scores_the_signal_count_and_the_curves(app_page):
    at = app_page(PAGE)
    assert not at.exception
    text = shown_text(at)
    assert "ELECTRA" in at.title[0].value
    assert "One round of the game" in text and "every token" in text
    assert re.fullmatch(r"\d+ of 22", metric(at, "Replaced tokens"))  # the default text has 22 word pieces
    for label in ("Precision at 0.5", "Recall at 0.5", "ROC-AUC"):
        assert re.fullmatch(r"—|\d\.\d\d", metric(at, label))
    assert "loss term at the **3** masked positions" in text and "**all 24** tokens" in text
    assert len(charts(at)) >= 3  # pipeline, your edit, signal count (+ curves when bundled curves exist)
    assert "Your `ran` at position 7" in text


def test_url_state_restores_the_widgets_and_a_malformed_value_gets_a_note(app_page):
    at = app_page(PAGE, seed="5", temperature="0.5", rate="0.3", edit_pos="3", edit_word="blue")
    assert not at.exception
    assert at.number_input(key="seed").value == 5
    assert at.slider(key="temperature").value == 0.5 and at.slider(key="rate").value == 0.3
    assert at.selectbox(key="edit_pos").value == 3 and at.text_input(key="edit_word").value == "blue"
    assert "Your `blue` at position 3" in shown_text(at)
    assert at.query_params["seed"] == ["5"] or at.query_params["seed"] == "5"

    bad = app_page(PAGE, temperature="hot", seed="-4")
    assert not bad.exception
    text = shown_text(bad)
    assert "Ignored `temperature=hot`" in text and "Ignored `seed=-4`" in text
    assert bad.slider(key="temperature").value == 1.0 and bad.number_input(key="seed").value == 0


def test_resample_bumps_the_seed_and_a_temperature_change_keeps_the_masked_positions(app_page):
    at = app_page(PAGE)
    before = pipeline_rows(at)
    assert sum(before[1]) == 3 and len(before[1]) == 24  # 3 of the 22 word pieces masked, [CLS] [SEP] never
    assert before[1][0] == before[1][-1] == 0.0
    next(b for b in at.button if "Resample" in b.label).click().run()
    assert not at.exception and at.number_input(key="seed").value == 1
    resampled = pipeline_rows(at)
    at.slider(key="temperature").set_value(0.2).run()
    assert not at.exception
    colder = pipeline_rows(at)
    assert colder[1] == resampled[1]  # same seed: same masked positions, only the samples can change
    assert "loss term at the **3** masked positions" in shown_text(at)


@pytest.mark.parametrize("text", ["", "   \n\t "])
def test_empty_or_blank_text_asks_for_a_sentence(app_page, text):
    at = app_page(PAGE)
    at.text_area(key="text").set_value(text).run()
    assert not at.exception
    assert any("Type a sentence" in w.value for w in at.warning)
    assert not charts(at)


def test_emoji_and_cjk_are_unknown_pieces_and_a_text_of_nothing_else_has_nothing_to_mask(app_page):
    at = app_page(PAGE)
    at.text_area(key="text").set_value("The cat 😀 sat on the mat. 你好").run()
    assert not at.exception
    assert any("outside the vocabulary" in i.value for i in at.info)
    assert charts(at)
    at.text_area(key="text").set_value("😀🎉 你好 مرحبا").run()
    assert not at.exception
    assert any("nothing to mask" in w.value for w in at.warning)


def test_a_long_text_is_capped_and_says_so(app_page):
    at = app_page(PAGE)
    at.text_area(key="text").set_value(" ".join(["The dog ran to the big tree and sat down."] * 12)).run()
    assert not at.exception
    assert any("the strip shows the first 46" in w.value for w in at.warning)


def test_hand_edits_explain_pieces_refuse_unknown_words_and_fix_a_stale_position(app_page):
    at = app_page(PAGE)
    at.text_input(key="edit_word").set_value("unbelievably").run()
    assert not at.exception
    assert any("splits into" in i.value and "first" in i.value for i in at.info)
    at.text_input(key="edit_word").set_value("🙂").run()
    assert not at.exception
    assert any("outside the vocabulary" in w.value for w in at.warning)
    at.text_input(key="edit_word").set_value("[MASK]").run()
    assert any("special token" in w.value for w in at.warning)

    stale = app_page(PAGE, edit_pos="0")  # [CLS] is not a word piece
    assert not stale.exception
    assert any("Position 0 is not a word piece" in i.value for i in stale.info)
    assert stale.selectbox(key="edit_pos").value == 1
