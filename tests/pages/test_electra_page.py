"""The ELECTRA page through the router: the pipeline, detection numbers, hand edits, the signal count,
URL state and bad input. Asserts what the page shows (values, figure data), not its wording."""

from __future__ import annotations

import json
import re

import pytest

from app.lessons import electra
from tests.conftest import app_device_label, shown_text

PAGE = "pages/electra.py"
K = "electra."  # the page's widget keys are scoped to it; the text box is shared ("text")


def metric(at, label_start: str) -> str:
    return next(m.value for m in at.metric if m.label.startswith(label_start))


def charts(at) -> list:
    return at.get("plotly_chart")


def pipeline_rows(at) -> list[list]:
    """The pipeline figure's z, one list per stage over the whole sentence (its lines joined)."""
    data = json.loads(charts(at)[0].proto.spec)["data"]
    stages = 6
    return [[z for b in range(len(data) // stages) for z in data[b * stages + s]["z"][0]] for s in range(stages)]


def expected(bundled, **inputs) -> electra.Result:
    """What the library computes for the same inputs: the page must show exactly this."""
    models = {k: bundled(k) for k in electra.MODELS}
    return electra.run(models, electra.Inputs(**inputs))


def test_defaults_show_the_game_its_scores_the_signal_count_and_the_curves(app_page, bundled):
    at = app_page(PAGE)
    assert not at.exception
    r = expected(bundled)
    assert "ELECTRA" in at.title[0].value
    rows = pipeline_rows(at)
    assert rows[1] == [float(m) for m in r.round.masked] and rows[4] == pytest.approx(r.round.scores, abs=1e-6)
    assert metric(at, "Replaced tokens") == f"{r.detection.n_replaced} of {r.detection.n_tokens}"
    for label in ("Precision at 0.5", "Recall at 0.5", "ROC-AUC"):
        assert re.fullmatch(r"—|\d\.\d\d", metric(at, label))
    signal = json.loads(next(c for c in charts(at) if "electra-signal" in c.proto.id).proto.spec)["data"][0]
    assert signal["x"] == [r.signal["mlm"], r.signal["rtd"]]
    assert len(charts(at)) >= 3  # pipeline, your edit, signal count (+ curves when bundled curves exist)
    assert f"`{r.edit.piece}` at position {r.edit_pos}" in shown_text(at)
    # the badge says which models ran, on what
    badge = " ".join(m.value for m in at.sidebar.markdown)
    assert "ELECTRA generator" in badge and app_device_label() in badge and "float32" in badge


def test_url_state_restores_the_widgets_and_a_malformed_value_gets_a_note(app_page):
    at = app_page(PAGE, seed="5", temperature="0.5", rate="0.3", edit_pos="3", edit_word="blue")
    assert not at.exception
    assert at.number_input(key=K + "seed").value == 5
    assert at.slider(key=K + "temperature").value == 0.5 and at.slider(key=K + "rate").value == 0.3
    assert at.selectbox(key=K + "edit_pos").value == 3 and at.text_input(key=K + "edit_word").value == "blue"
    assert "`blue` at position 3" in shown_text(at)
    assert at.query_params["seed"] in (["5"], "5")

    bad = app_page(PAGE, temperature="hot", seed="-4")
    assert not bad.exception
    text = shown_text(bad)
    assert "Ignored `temperature=hot`" in text and "Ignored `seed=-4`" in text
    assert bad.slider(key=K + "temperature").value == 1.0 and bad.number_input(key=K + "seed").value == 0


def test_resample_bumps_the_seed_and_a_temperature_change_keeps_the_masked_positions(app_page):
    at = app_page(PAGE)
    before = pipeline_rows(at)
    assert before[1][0] == before[1][-1] == 0.0  # [CLS] and [SEP] are never masked
    next(b for b in at.button if "Resample" in b.label).click().run()
    assert not at.exception and at.number_input(key=K + "seed").value == 1
    resampled = pipeline_rows(at)
    at.slider(key=K + "temperature").set_value(0.2).run()
    assert not at.exception
    colder = pipeline_rows(at)
    assert colder[1] == resampled[1]  # same seed: same masked positions, only the samples can change


@pytest.mark.parametrize("text", ["", "   \n\t "])
def test_empty_or_blank_text_asks_for_a_sentence_and_the_badge_is_still_drawn(app_page, text):
    at = app_page(PAGE)
    at.text_area(key="text").set_value(text).run()
    assert not at.exception
    assert at.warning and not charts(at)
    assert app_device_label() in " ".join(m.value for m in at.sidebar.markdown)


def test_unknown_pieces_are_named_and_a_text_of_nothing_else_has_nothing_to_mask(app_page):
    at = app_page(PAGE)
    at.text_area(key="text").set_value("The cat 😀 sat on the mat. 你好").run()
    assert not at.exception
    assert any("`😀你好`" in i.value or "`😀`" in i.value for i in at.info)
    assert charts(at)
    at.text_area(key="text").set_value("😀🎉 你好 مرحبا").run()
    assert not at.exception
    assert at.warning and not charts(at)


def test_a_long_text_is_capped_and_says_so(app_page):
    at = app_page(PAGE)
    at.text_area(key="text").set_value(" ".join(["The dog ran to the big tree and sat down."] * 12)).run()
    assert not at.exception
    assert any(str(electra.DEFAULTS.max_tokens) in w.value for w in at.warning)
    assert len(pipeline_rows(at)[0]) == electra.DEFAULTS.max_tokens


def test_a_paste_longer_than_the_box_is_cut_with_a_note(app_page):
    at = app_page(PAGE)
    at.text_area(key="text").set_value("The dog ran. " * 10_000).run()
    assert not at.exception
    assert len(at.text_area(key="text").value) == 1000
    assert any("130,000" in i.value and "1,000" in i.value for i in at.info)


def test_hand_edits_explain_pieces_refuse_unknown_words_and_fix_a_stale_position(app_page):
    at = app_page(PAGE)
    at.text_input(key=K + "edit_word").set_value("unbelievably").run()
    assert not at.exception
    assert any("splits into" in i.value for i in at.info)
    at.text_input(key=K + "edit_word").set_value("🙂").run()
    assert not at.exception and at.warning
    at.text_input(key=K + "edit_word").set_value("[MASK]").run()
    assert at.warning and not at.exception

    stale = app_page(PAGE, edit_pos="0")  # [CLS] is not a word piece
    assert not stale.exception
    assert any("Position 0" in i.value for i in stale.info)
    assert stale.selectbox(key=K + "edit_pos").value == 1
