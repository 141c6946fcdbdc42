"""The ModernBERT page through the router: what it shows on the defaults (figure data equal to the library's
run on the same models), URL state both ways, widgets driven by their scoped keys, and bad input. Asserts
values and figure data, not wording. When the bundled ModernBERT is not there yet, the page and the library
both read a stand-in (tests/test_modernbert.py builds it) through ``BVE_BUNDLED_DIR``."""

from __future__ import annotations

import base64
import json

import numpy as np
import pytest

from app.lessons import modernbert as mbl
from app.models import catalogue, loading
from tests.conftest import app_device_label, shown_text
from tests.test_modernbert import build_standin, bundled_dir

PAGE = "pages/modernbert.py"
K = "modernbert."  # the page's widget keys are scoped to it; the text box is shared ("text")


@pytest.fixture(scope="module", autouse=True)
def standin(tmp_path_factory):
    root = (
        None
        if catalogue.get("modernbert").bundled_available()
        else build_standin(tmp_path_factory.getbasetemp() / "bundled-with-modernbert")
    )
    with bundled_dir(root):
        yield


@pytest.fixture(scope="module")
def models(standin, bundled):
    return {"modernbert": loading.load("modernbert"), "bert": bundled("bert")}


def chart(at, name: str) -> dict:
    """The figure named ``name`` (its ui.show_figure name), as plotly JSON."""
    return json.loads(next(c for c in at.get("plotly_chart") if c.proto.id.endswith(f"fig-{name}")).proto.spec)


def array(value) -> np.ndarray:
    """A figure's data as numpy: plotly writes numpy arrays as typed base64 ({"dtype", "bdata", "shape"})."""
    if isinstance(value, dict) and "bdata" in value:
        flat = np.frombuffer(base64.b64decode(value["bdata"]), dtype=value["dtype"])
        shape = [int(n) for n in str(value.get("shape", len(flat))).split(",")]
        return flat.reshape(shape)
    return np.asarray(value)


def metric(at, label_start: str) -> str:
    return next(m.value for m in at.metric if m.label.startswith(label_start))


def test_defaults_show_every_idea_with_the_librarys_numbers(app_page, models):
    at = app_page(PAGE)
    assert not at.exception
    r = mbl.run(models, mbl.Inputs())
    assert "ModernBERT" in at.title[0].value
    assert len(at.get("plotly_chart")) == 11  # with every layer side by side
    fill = chart(at, "modernbert-fill")["data"][0]
    assert fill["x"] == pytest.approx([p for _, p in r.fill.top][::-1], abs=1e-6)
    attention = chart(at, "modernbert-attention")["data"]
    assert np.array_equal(array(attention[0]["z"]), r.rule.astype(int))
    assert np.allclose(array(attention[1]["z"]), r.attention.maps[r.layer], atol=1e-6)
    assert metric(at, "Largest weight there") == "0"
    assert metric(at, "Blocked cells") == f"{r.attention.checks[r.layer].blocked:,}"
    assert metric(at, "Token slots, padded") == f"{r.unpadding.padded:,}"
    assert metric(at, "Tokens, unpadded") == f"{r.unpadding.unpadded:,}"
    cost = chart(at, "modernbert-cost")["data"]
    assert array(cost[1]["y"]).tolist() == list(r.cost.flops)
    relative = chart(at, "modernbert-rope-relative")["data"]
    assert np.allclose(array(relative[0]["y"]), r.rope.near[0], atol=1e-6)
    assert at.selectbox(key=K + "word").value == mbl.DEFAULT_WORD and at.selectbox(key=K + "layer").value == 1
    assert [len(d.value) for d in at.dataframe] == [len(r.attention.checks)]
    assert [len(t.value) for t in at.table] == [len(r.changes), len(r.published)]
    text = shown_text(at)
    assert models["modernbert"].shown_as in text and models["bert"].shown_as in text
    badge = " ".join(m.value for m in at.sidebar.markdown)
    assert "ModernBERT" in badge and "BERT" in badge and app_device_label() in badge


def test_a_link_restores_every_widget_and_the_view(app_page, models):
    at = app_page(PAGE, word="2", layer="0", seed="5", shift="300", length="128", batch="4")
    assert not at.exception
    assert at.selectbox(key=K + "word").value == 2 and at.selectbox(key=K + "layer").value == 0
    assert at.number_input(key=K + "seed").value == 5 and at.number_input(key=K + "shift").value == 300
    assert at.slider(key=K + "length").value == 128 and at.slider(key=K + "batch").value == 4
    assert {k: at.query_params[k] for k in ("word", "layer", "seed", "shift", "length", "batch")} in (
        {"word": "2", "layer": "0", "seed": "5", "shift": "300", "length": "128", "batch": "4"},
        {"word": ["2"], "layer": ["0"], "seed": ["5"], "shift": ["300"], "length": ["128"], "batch": ["4"]},
    )
    attention = chart(at, "modernbert-attention")["data"]
    assert array(attention[0]["z"]).shape == (128, 128)
    kind = models["modernbert"].model.config.layer_types[0]
    assert array(attention[0]["z"]).all() == (kind == "full_attention")
    assert len(array(chart(at, "modernbert-batch")["data"][0]["z"])) == 4
    r = mbl.run(models, mbl.Inputs(word=2, layer=0, seed=5, shift=300, length=128, batch=4))
    relative = chart(at, "modernbert-rope-relative")["data"]
    assert np.allclose(array(relative[1]["y"]), r.rope.far[0], atol=1e-6)


def test_malformed_link_values_get_notes_and_the_defaults(app_page):
    at = app_page(PAGE, length="long", batch="99", layer="-1")
    assert not at.exception
    text = shown_text(at)
    for bad in ("length=long", "batch=99", "layer=-1"):
        assert f"Ignored `{bad}`" in text
    assert at.slider(key=K + "length").value == 256 and at.slider(key=K + "batch").value == 8
    assert at.selectbox(key=K + "layer").value == 1


def test_a_word_beyond_the_sentence_uses_its_last_content_word_with_a_note(app_page):
    at = app_page(PAGE, word="80")
    assert not at.exception
    words = len(mbl.txt.split_words(mbl.DEFAULT_TEXT))
    assert at.selectbox(key=K + "word").value == words - 2  # "mom", not the full stop
    assert any("80" in i.value for i in at.info)


def test_choosing_a_layer_redraws_its_rule(app_page, models):
    at = app_page(PAGE)
    assert not array(chart(at, "modernbert-attention")["data"][0]["z"]).all()  # layer 1: local
    assert models["modernbert"].model.config.layer_types[0] == "full_attention"
    at.selectbox(key=K + "layer").set_value(0).run()
    assert not at.exception
    assert array(chart(at, "modernbert-attention")["data"][0]["z"]).all()
    assert at.query_params["layer"] in ("0", ["0"])
    assert metric(at, "Blocked cells") == "0"


@pytest.mark.parametrize("text", ["", "   \n\t "])
def test_an_empty_text_asks_for_a_sentence(app_page, text):
    at = app_page(PAGE)
    at.text_area(key="text").set_value(text).run()
    assert not at.exception
    assert at.warning and not at.get("plotly_chart")
    assert app_device_label() in " ".join(m.value for m in at.sidebar.markdown)


def test_emoji_and_cjk_work_with_a_note(app_page):
    at = app_page(PAGE)
    at.text_area(key="text").set_value("The cat 😀 sat on the mat. 你好").run()
    assert not at.exception
    assert any("😀" in i.value for i in at.info)
    assert len(at.get("plotly_chart")) == 11  # with every layer side by side


def test_a_text_longer_than_the_model_reads_is_cut_with_a_note(app_page, models):
    at = app_page(PAGE)
    at.text_area(key="text").set_value("🙂" * 1000).run()
    assert not at.exception
    limit = mbl.txt.token_limit(models["modernbert"].tokenizer, mbl.DEFAULTS.max_tokens)
    assert any(str(limit) in w.value for w in at.warning)
    assert len(at.get("plotly_chart")) == 11  # with every layer side by side


def test_a_paste_longer_than_the_box_is_cut_with_a_note(app_page):
    at = app_page(PAGE)
    at.text_area(key="text").set_value("The dog ran. " * 200).run()
    assert not at.exception
    assert len(at.text_area(key="text").value) == 1000
    assert any("2,600" in i.value and "1,000" in i.value for i in at.info)


def test_a_busy_server_marks_the_timings_provisional_and_a_quiet_one_does_not(app_page, models, monkeypatch):
    """While other visitors' pages compute (ui.other_pages), the timing figure and the unpadding times carry the
    provisional notice and come from the short look (measure.MIN_ROUNDS rounds); alone, neither."""
    from app import measure, ui

    quiet = app_page(PAGE)
    assert not quiet.exception and not any("provisional" in i.value for i in quiet.info)
    monkeypatch.setattr(ui, "other_pages", lambda: 2)
    busy = app_page(PAGE, seed="5")
    assert not busy.exception
    assert sum("provisional" in i.value for i in busy.info) == 2  # above the timing figure and the unpadding times
    assert f"{measure.MIN_ROUNDS} rounds in turns" in shown_text(busy)
    monkeypatch.setattr(ui, "other_pages", lambda: 0)  # the class has gone quiet: "Time again" takes the full look
    again = busy.button(key="retime-window").click().run()
    assert not again.exception and not any("provisional" in i.value for i in again.info)
    assert f"{measure.MIN_ROUNDS} rounds in turns" not in shown_text(again)
