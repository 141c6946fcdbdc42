"""The DeBERTa page through the router: the three terms and their sum, relative positions, the prefix
demonstration, fill-mask, the family link, URL state and bad input. Asserts what the page shows (values,
figure data), not its wording.

Runs on the bundled DeBERTa checkpoint when it is there; while it is still being trained, on a stand-in built
from the training recipe's config with random weights (tests/test_deberta.py's ``build_standin``)."""

from __future__ import annotations

import base64
import json

import numpy as np
import pytest

from app.lessons import deberta
from app.models import catalogue
from app.core.text import split_words
from tests.conftest import app_device_label, shown_text
from tests.test_deberta import build_standin

PAGE = "pages/deberta.py"
# The page's numbers are compared with library runs on the CPU (the bundled fixture), so the page runs there too:
# on a GPU host the default device is CUDA, whose kernels differ from the CPU's by ~3e-6 relative.
CPU = {"device": "cpu"}
K = "deberta."  # the page's widget keys are scoped to it; the text box is shared ("text")


@pytest.fixture(scope="module")
def standin_dir(tmp_path_factory):
    if catalogue.get("deberta").bundled_available():
        return None
    return build_standin(tmp_path_factory.mktemp("deberta-page"))


@pytest.fixture(autouse=True)
def deberta_available(standin_dir, monkeypatch):
    """Point the app at the stand-in when the bundled checkpoint is missing, and forget any model (or failure
    to load one) an earlier test cached under the same key."""
    if standin_dir is not None:
        from app.ui import loading as ui_loading

        monkeypatch.setenv("BVE_BUNDLED_DIR", str(standin_dir))
        ui_loading._load.clear()
    yield
    if standin_dir is not None:
        from app.ui import loading as ui_loading

        ui_loading._load.clear()


@pytest.fixture
def lesson_models():
    from app.models import loading

    return {key: loading.load(key) for key in deberta.MODELS}


def charts(at) -> list:
    return at.get("plotly_chart")


def chart(at, name: str) -> dict:
    return json.loads(next(c for c in charts(at) if f"fig-{name}" in c.proto.id).proto.spec)


def array(value) -> np.ndarray:
    """plotly's JSON holds numpy arrays as {"dtype", "bdata" (base64), "shape"}, lists otherwise."""
    if isinstance(value, dict) and "bdata" in value:
        flat = np.frombuffer(base64.b64decode(value["bdata"]), dtype=value["dtype"])
        shape = value.get("shape")
        return flat.reshape([int(n) for n in str(shape).split(",")] if shape else -1).astype(float)
    return np.array(value, dtype=float)


def metric(at, label_start: str) -> str:
    return next(m.value for m in at.metric if m.label.startswith(label_start))


def test_the_default_view_takes_one_score_apart_as_the_library_does(app_page, lesson_models):
    at = app_page(PAGE, **CPU)
    assert not at.exception
    assert "DeBERTa" in at.title[0].value
    r = deberta.run(lesson_models, deberta.Inputs())
    terms = chart(at, "deberta-terms")["data"]
    assert len(terms) == 4
    for trace, want in zip(terms, (r.terms.c2c, r.terms.c2p, r.terms.p2c, r.terms.total)):
        np.testing.assert_allclose(array(trace["z"]), want, atol=1e-6)
    np.testing.assert_allclose(sum(array(t["z"]) for t in terms[:3]), array(terms[3]["z"]), atol=1e-5)
    assert float(metric(at, "softmax(sum) vs the model")) < 1e-5
    d = r.terms.head_size
    assert metric(at, "Every term is divided by") == f"√(3·{d}) = {(3 * d) ** 0.5:.3f}"
    assert float(metric(at, "DeBERTa, first layer")) < 1e-5 and float(metric(at, "BERT, first layer")) > 1e-3
    np.testing.assert_array_equal(array(chart(at, "deberta-distances")["data"][0]["z"]), r.positions.distance)
    assert list(array(chart(at, "deberta-fill-mask")["data"][0]["x"])) == pytest.approx(
        [p for _, p in r.prediction.first.read][::-1], rel=1e-6
    )
    assert metric(at, "microsoft/deberta-base, all parameters") == "139.2M"
    assert metric(at, "…its backbone") == "100.0M"
    assert any(link.proto.page == "electra" for link in at.get("page_link"))
    text = shown_text(at)
    assert "`girl` (i = " in text and "`ball` (j = " in text
    badge = " ".join(m.value for m in at.sidebar.markdown)
    assert "DeBERTa" in badge and "BERT" in badge and app_device_label() in badge


def test_url_state_restores_the_widgets_and_the_figures_follow(app_page, lesson_models):
    at = app_page(PAGE, **CPU, layer="1", head="2", query="3", key="5", word="4", prefix="One day,")
    assert not at.exception
    assert at.selectbox(key=K + "layer").value == 1 and at.selectbox(key=K + "head").value == 2
    assert at.selectbox(key=K + "query").value == 3 and at.selectbox(key=K + "key").value == 5
    assert at.selectbox(key=K + "word").value == 4 and at.text_input(key=K + "prefix").value == "One day,"
    assert at.query_params["layer"] in (["1"], "1") and at.query_params["prefix"] in (["One day,"], "One day,")
    r = deberta.run(lesson_models, deberta.Inputs(layer=1, head=2, query=3, key=5, word=4, prefix="One day,"))
    np.testing.assert_allclose(array(chart(at, "deberta-terms")["data"][3]["z"]), r.terms.total, atol=1e-6)
    assert "`found` (i = " in shown_text(at)


def test_malformed_link_values_get_a_note_and_the_default(app_page):
    at = app_page(PAGE, **CPU, layer="x", head="1.5", word="-3")
    assert not at.exception
    text = shown_text(at)
    assert "Ignored `layer=x`" in text and "Ignored `head=1.5`" in text and "Ignored `word=-3`" in text
    assert at.selectbox(key=K + "layer").value == 0 and at.selectbox(key=K + "word").value == deberta.DEFAULTS.word


def test_values_beyond_this_model_or_sentence_move_with_a_note(app_page, lesson_models):
    at = app_page(PAGE, **CPU, layer="40", query="200")
    assert not at.exception
    last = lesson_models["deberta"].model.config.num_hidden_layers - 1
    assert at.selectbox(key=K + "layer").value == last
    assert (
        at.selectbox(key=K + "query").value == len(split_words(deberta.DEFAULT_TEXT)) - 2
    )  # "park", not the final "."
    assert sum("layer" in i.value for i in at.info) >= 1


def test_widgets_change_the_view_and_an_empty_prefix_drops_the_demonstration(app_page, lesson_models):
    at = app_page(PAGE, **CPU)
    at.selectbox(key=K + "head").set_value(1).run()
    assert not at.exception
    r = deberta.run(lesson_models, deberta.Inputs(head=1))
    np.testing.assert_allclose(array(chart(at, "deberta-terms")["data"][0]["z"]), r.terms.c2c, atol=1e-6)
    at.text_input(key=K + "prefix").set_value("").run()
    assert not at.exception
    assert len(charts(at)) == 4 and not any(m.label.startswith("BERT, first layer") for m in at.metric)
    at.text_input(key=K + "prefix").set_value("Long ago, in a small town,").run()
    assert not at.exception and float(metric(at, "DeBERTa, first layer")) < 1e-5


@pytest.mark.parametrize("text", ["", "   \n\t ", "[MASK]"])
def test_nothing_to_show_gets_a_clear_message_and_the_badge_is_still_drawn(app_page, text):
    at = app_page(PAGE, **CPU)
    at.text_area(key="text").set_value(text).run()
    assert not at.exception
    assert at.warning and not charts(at)
    assert app_device_label() in " ".join(m.value for m in at.sidebar.markdown)


def test_emoji_and_cjk_are_named_and_still_shown(app_page):
    at = app_page(PAGE, **CPU)
    at.text_area(key="text").set_value("The cat 😀 sat on the mat. 你好").run()
    assert not at.exception
    assert any("`😀你好`" in i.value for i in at.info)
    assert len(charts(at)) == 5


def test_a_long_text_is_cut_to_readable_heatmaps_with_a_note(app_page):
    at = app_page(PAGE, **CPU)
    at.text_area(key="text").set_value(" ".join(["The dog ran to the big tree and sat down."] * 12)).run()
    assert not at.exception
    assert any(str(deberta.DEFAULTS.max_tokens) in w.value for w in at.warning)
    assert len(array(chart(at, "deberta-terms")["data"][0]["z"])) <= deberta.DEFAULTS.max_tokens
