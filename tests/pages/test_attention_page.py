"""The attention page through the router: bertviz offline and escaped, layer/head selection, A/B input,
the token cap, mean and rollout maps, bad input, a variant that cannot be loaded, and URL state. Asserts
what the page shows (values, figure data, the document), computed from the library, not its wording."""

import base64
import json
import re

import numpy as np
import pytest

from app.lessons import attention
from app.core import text
from app.models import catalogue
from tests.conftest import require_bundled, shown_text
from tests.test_bertviz_offline import EXPECTED_SCRIPTS, Elements, assert_offline

PAGE = "pages/attention.py"
K = "attention."  # the page's widget keys are scoped to it; sentence A's box is shared ("text")


def needs(*keys):
    require_bundled(*keys)


def bertviz_document(at) -> str:
    frames = at.get("iframe")
    assert len(frames) == 1
    return frames[0].proto.srcdoc


def decode(array):
    """plotly's JSON holds numpy arrays as {"dtype", "bdata" (base64), "shape"}, lists otherwise."""
    if isinstance(array, dict) and "bdata" in array:
        flat = np.frombuffer(base64.b64decode(array["bdata"]), dtype=array["dtype"])
        shape = array.get("shape")
        return flat.reshape([int(n) for n in str(shape).split(",")] if shape else -1).astype(float)
    return np.array(array, dtype=float)


def heatmap(at):
    spec = json.loads(at.get("plotly_chart")[0].proto.spec)
    return decode(spec["data"][0]["z"]), spec


def test_defaults_show_an_offline_bertviz_view_and_a_rollout_map(app_page, bundled):
    needs("bert")
    at = app_page(PAGE)
    assert not at.exception
    text = shown_text(at)
    assert "Attention in every layer" in text and "`[CLS] A [SEP]`" in text
    assert "bundled stand-in for google/bert_uncased_L-4_H-256_A-4" in text  # which model produced it
    document = bertviz_document(at)
    assert_offline(document)
    assert [t for t, _ in Elements(document).tags].count("script") == EXPECTED_SCRIPTS
    assert at.get("download_button")[0].proto.label.startswith("Download this view")
    z, spec = heatmap(at)
    np.testing.assert_allclose(z.sum(1), 1.0, atol=1e-6)  # rollout rows sum to 1
    assert "rollout" in spec["layout"]["title"]["text"] and "%{z:.6f}" in spec["data"][0]["hovertemplate"]
    assert "Abnar & Zuidema" in text
    r = attention.run({"bert": bundled("bert")}, attention.Inputs())
    np.testing.assert_allclose(z, r.weights, atol=1e-6)  # exactly the library's map
    assert at.selectbox(key=K + "variant").value == "bert" and at.slider(key=K + "max_tokens").value == r.encoded.cap
    assert at.selectbox(key=K + "layer").options == [str(n) for n in range(1, r.n_layers + 1)]
    assert len(at.selectbox(key=K + "variant").options) == len(catalogue.CATALOGUE)  # every variant is offered


def test_layer_head_view_and_map_round_trip_through_the_url(app_page):
    needs("bert")
    at = app_page(PAGE, layer="2", head="3", view="model", agg="layer", max_tokens="16")
    assert not at.exception
    assert at.selectbox(key=K + "layer").value == 2 and at.selectbox(key=K + "head").value == 3
    assert at.radio(key=K + "view").value == "model" and at.slider(key=K + "max_tokens").value == 16
    assert "layer 2, head 3" in heatmap(at)[1]["layout"]["title"]["text"]
    assert '"total_heads":' in bertviz_document(at)  # bertviz's model view
    at.selectbox(key=K + "head").set_value(0).run()
    assert "mean of" in heatmap(at)[1]["layout"]["title"]["text"]
    assert at.query_params["layer"] in ("2", ["2"]) and "head" not in at.query_params
    at.radio(key=K + "agg").set_value("mean").run()
    z, spec = heatmap(at)
    np.testing.assert_allclose(z.sum(1), 1.0, atol=1e-6)
    assert "mean over" in spec["layout"]["title"]["text"]
    assert not at.exception


def test_malformed_and_impossible_values_give_notes(app_page):
    needs("distilbert")
    at = app_page(PAGE, variant="distilbert", layer="abc", agg="median", head="64")
    assert not at.exception
    text = shown_text(at)
    assert "Ignored `layer=abc`" in text and "Ignored `agg=median`" in text
    n_heads = len(at.selectbox(key=K + "head").options) - 1  # "every head", then 1..H
    assert at.selectbox(key=K + "head").value == 0 and at.selectbox(key=K + "layer").value == 1
    assert any(f"{n_heads} heads" in i.value and "64" in i.value for i in at.info)
    at = app_page(PAGE, variant="distilbert", layer="64")
    n_layers = len(at.selectbox(key=K + "layer").options)
    assert any(f"{n_layers} layers" in i.value and "64" in i.value for i in at.info)
    assert at.selectbox(key=K + "layer").value == n_layers and ("layer" in at.query_params) == (n_layers != 1)


@pytest.mark.parametrize(
    "key,note",
    [
        ("xlnet", "content stream"),
        ("albert", "ALBERT shares its layers"),
        ("roberta", "no token types"),
        ("distilbert", "no token types"),
        ("electra-discriminator", "reads **token types**"),
        ("electra-generator", "reads **token types**"),
    ],
)
def test_every_variant_renders_with_its_own_note(app_page, key, note):
    needs(key)
    at = app_page(PAGE, variant=key, text_b="She was happy.", max_tokens="24")
    assert not at.exception
    assert note in shown_text(at)
    document = bertviz_document(at)
    assert_offline(document)
    assert "<option value=\"4\">Sentence B -&gt; Sentence A</option>" in document  # bertviz's segment filters
    z, _ = heatmap(at)
    np.testing.assert_allclose(z.sum(1), 1.0, atol=1e-6)


def test_bad_input_gets_clear_messages(app_page):
    needs("bert")
    at = app_page(PAGE, text="   ")
    assert not at.exception
    assert at.warning and not at.get("iframe") and not at.get("plotly_chart")
    at = app_page(PAGE, text="the red ball " * 60, max_tokens="16")
    assert not at.exception
    assert any("16" in w.value for w in at.warning)
    assert len(heatmap(at)[0]) == 16
    at = app_page(PAGE, text="🎈🐶 猫 the ball")
    assert not at.exception
    assert any(text.md("[UNK]") in i.value and "🎈" in i.value for i in at.info)  # the real cause, by name
    at = app_page(PAGE, text="the [MASK] sat on [SEP] the mat")
    assert not at.exception
    assert any(text.md("[MASK]") in i.value and text.md("[SEP]") in i.value for i in at.info)


@pytest.mark.parametrize("key", ["bert", "roberta"])
def test_an_injected_sentence_stays_text(app_page, key):
    needs(key)
    evil = "</script><script>alert(1)</script><!-- <img src=x onerror=alert(2)>"
    at = app_page(PAGE, variant=key, text=evil, text_b="</title>\u2028")
    assert not at.exception
    document = bertviz_document(at)
    parsed = Elements(document)
    assert [t for t, _ in parsed.tags].count("script") == EXPECTED_SCRIPTS
    assert not [t for t, _ in parsed.tags if t == "img"]
    markup = document.split("<script>", 1)[0]
    for piece in ("</script><script>", "<!--", "<img", "</title>", "\u2028"):
        assert piece not in parsed.scripts[-1]
        assert markup.count(piece) == (1 if piece == "</title>" else 0)  # the document's own </title> only
    assert "&lt;/script&gt;&lt;script&gt;alert(1)" in markup  # the sentence is in the escaped <title>
    assert_offline(document)


def test_export_format_reaches_the_heatmap(app_page):
    needs("bert")
    at = app_page(PAGE, export="svg")
    assert not at.exception
    config = json.loads(at.get("plotly_chart")[0].proto.config)
    assert config["toImageButtonOptions"]["format"] == "svg"


def test_a_long_input_sends_bertviz_fewer_layers_and_says_so(app_page, monkeypatch, bundled):
    needs("bert")
    from app import bertviz_fit

    r = attention.run({"bert": bundled("bert")}, attention.Inputs())
    if r.n_layers < 3:
        pytest.skip("needs a model with 3 layers or more")
    per_layer = r.n_heads * len(r.tokens) ** 2
    monkeypatch.setattr(bertviz_fit, "MAX_WEIGHTS", 2 * per_layer + 1)  # as if the input were long for a big model
    at = app_page(PAGE, layer="2", view="model")
    assert not at.exception
    assert any("layers 2–3" in i.value for i in at.info)  # 2 of them fit in the budget
    sent = re.search(r'"include_layers":\[([0-9,]*)\]', bertviz_document(at)).group(1)
    assert sent == "2,3"
    at.radio(key=K + "view").set_value("head").run()
    assert any("layer 2 " in i.value for i in at.info)
    assert re.search(r'"include_layers":\[([0-9,]*)\]', bertviz_document(at)).group(1) == "2"
    np.testing.assert_allclose(heatmap(at)[0], r.weights, atol=1e-6)  # the maps still use every layer


def test_a_paste_longer_than_a_box_is_cut_with_a_note(app_page):
    needs("bert")
    at = app_page(PAGE)
    for box in ("text", K + "text_b"):
        at.text_area(key=box).set_value(("The dog ran. " * 116)[:1500]).run()
        assert not at.exception
        assert len(at.text_area(key=box).value) == 1000
        assert any("1,500" in i.value and "1,000" in i.value for i in at.info), box
        assert at.get("iframe")  # the page goes on with what was kept
    kept = at.query_params["text_b"]
    assert len(kept if isinstance(kept, str) else kept[-1]) == 1000  # the link holds what the box kept


def test_sentence_b_round_trips_through_the_url_and_a_too_long_link_value_gets_a_note(app_page):
    needs("bert")
    at = app_page(PAGE, text_b="She was happy.")
    assert not at.exception
    assert at.text_area(key=K + "text_b").value == "She was happy."
    assert "`[CLS] A [SEP] B [SEP]`" in shown_text(at)
    at = app_page(PAGE, text_b="x" * 1500)
    assert not at.exception
    assert "Ignored `text_b=" in shown_text(at) and at.text_area(key=K + "text_b").value == ""


@pytest.mark.parametrize("key", ["bert", "deberta", "modernbert"])
def test_a_variant_that_cannot_be_loaded_says_so_without_a_traceback(app_page, monkeypatch, tmp_path, key):
    """Every catalogue variant is offered; one whose checkpoint is missing (DeBERTa and ModernBERT while they
    train) gets a clear error and no figure."""
    from app.ui import loading as ui_loading

    monkeypatch.setenv("BVE_BUNDLED_DIR", str(tmp_path))  # no bundled checkpoint at all
    ui_loading._load.clear()
    try:
        at = app_page(PAGE, variant=key)
        assert not at.exception
        assert at.selectbox(key=K + "variant").value == key
        assert any(catalogue.get(key).label in e.value for e in at.error) and not at.get("iframe")
    finally:
        monkeypatch.undo()
        ui_loading._load.clear()  # later tests load the real bundled models again
