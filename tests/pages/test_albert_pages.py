"""The two ALBERT lessons through the router: exact parameter counts (settings, impossible settings,
presets, the loaded model, URL state) and shared-layer activations (one block, unrolling, bad input)."""

import json

import pytest

from app import params
from app.models import catalogue
from tests.conftest import shown_text

PARAMS_PAGE = "pages/albert_params.py"
ACTIVATIONS_PAGE = "pages/albert_activations.py"


def needs(*keys):
    missing = [k for k in keys if not catalogue.get(k).bundled_available()]
    if missing:
        pytest.skip(f"no bundled checkpoint for {', '.join(missing)} yet")


def figures(at) -> dict:
    """figure name (as given to ui.show_figure) -> plotly spec."""
    return {_name(chart.proto.id): json.loads(chart.proto.spec) for chart in at.get("plotly_chart")}


def _name(element_id: str) -> str:
    for name in ("albert-parameters-by-part", "albert-parameters-vs-E", "albert-parameters-vs-flops",
                 "albert-vs-bert-layers", "albert-vs-bert-cka", "albert-vs-bert-cosine", "albert-unrolled",
                 "albert-vs-bert-trajectory"):
        if f"fig-{name}" in element_id:
            return name
    return element_id


def metric(at, label: str) -> str:
    return next(m.value for m in at.metric if m.label == label)


def query(at, name: str):
    value = at.query_params.get(name)
    return value[-1] if isinstance(value, list) else value


# ----------------------------------------------------------------------------- parameters page


def test_parameters_page_defaults_settings_and_url(app_page):
    needs("albert")
    at = app_page(PARAMS_PAGE)
    assert not at.exception
    text = shown_text(at)
    assert "where the parameters go" in text and "Takeaway" in text
    assert "11,683,584" in text and "agrees with" in text  # ALBERT-base, whole AlbertModel on meta
    assert metric(at, "Parameters (base model)") == "11.7M"
    assert metric(at, "Formula from its config") == metric(at, "Real count: Σ numel over unique tensors")
    presets = at.dataframe[2].value
    row = presets[presets["model"] == "ALBERT-xxlarge"].iloc[0]
    assert row["computed (M)"] == pytest.approx(222.6, abs=0.01) and row["published (M)"] == 235
    assert set(figures(at)) >= {"albert-parameters-by-part", "albert-parameters-vs-E", "albert-parameters-vs-flops"}
    bars = figures(at)["albert-parameters-by-part"]["data"]
    assert sum(t["y"][-1] for t in bars) == 11_683_584  # the last bar: all shared, yours

    # attention-only sharing: composed from modules, and said so; the URL follows
    at.selectbox(key="sharing").set_value("attention").run()
    assert not at.exception
    assert metric(at, "Parameters (base model)") == "63.6M"
    assert "no attention-only or FFN-only sharing" in shown_text(at)
    assert query(at, "sharing") == "attention"

    # impossible settings: a message, no traceback, the presets still shown
    at.number_input(key="num_attention_heads").set_value(7).run()
    assert not at.exception
    assert any("not divisible" in w.value for w in at.warning)
    at.number_input(key="num_attention_heads").set_value(12).run()
    at.number_input(key="embedding_size").set_value(1024).run()
    assert any("larger than H" in w.value for w in at.warning)
    at.number_input(key="embedding_size").set_value(128).run()
    at.number_input(key="num_hidden_layers").set_value(0).run()
    assert not at.exception
    assert any("at least one layer" in w.value for w in at.warning)
    assert "Released models" in shown_text(at)

    # a released model's sizes in one click
    at.number_input(key="num_hidden_layers").set_value(12).run()
    at.selectbox(key="_albert_preset").set_value("BERT-large").run()
    at.button[0].click().run()
    assert at.number_input(key="hidden_size").value == 1024 and at.toggle(key="factorized").value is False
    assert metric(at, "Parameters (base model)") == params.human_count(335_141_888)


def test_parameters_page_restores_from_the_url_and_notes_bad_values(app_page):
    needs("albert")
    at = app_page(PARAMS_PAGE, sharing="ffn", embedding_size="768", num_hidden_layers="abc", seq_len="128")
    assert not at.exception
    assert at.selectbox(key="sharing").value == "ffn"
    assert at.number_input(key="embedding_size").value == 768
    assert at.number_input(key="num_hidden_layers").value == 12
    assert "Ignored `num_hidden_layers=abc`" in shown_text(at)
    assert "57,708,288" in shown_text(at)  # Table 4: E = 768, FFN shared
    assert "sequence length of **128**" in shown_text(at)


# ----------------------------------------------------------------------------- activations page


def test_activations_page_defaults(app_page):
    needs("albert", "bert")
    at = app_page(ACTIVATIONS_PAGE)
    assert not at.exception
    text = shown_text(at)
    assert "one block, applied L times" in text and "Takeaway" in text
    layers = int(metric(at, "…called in one forward pass"))
    assert metric(at, "ALBERT: layer modules") == "1"
    assert metric(at, "…distinct weight storages used") == "1"
    assert "largest difference 0.0e+00" in text  # unrolled L applications == the model's own output
    figs = figures(at)
    assert set(figs) == {"albert-vs-bert-layers", "albert-vs-bert-cka", "albert-unrolled", "albert-vs-bert-trajectory"}
    heat = figs["albert-vs-bert-cka"]["data"][0]["z"]
    assert len(heat) == layers + 1 and all(abs(heat[i][i] - 1) < 1e-5 for i in range(layers + 1))
    assert len(figs["albert-unrolled"]["data"][0]["y"]) == 3 * layers
    assert "%{z:.6f}" in figs["albert-vs-bert-cka"]["data"][0]["hovertemplate"]

    at.radio(key="measure").set_value("cosine").run()
    at.slider(key="repeat").set_value(1).run()
    assert not at.exception
    figs = figures(at)
    assert "albert-vs-bert-cosine" in figs
    assert len(figs["albert-unrolled"]["data"][0]["y"]) == layers
    assert query(at, "measure") == "cosine" and query(at, "repeat") == "1"


def test_activations_page_bad_input(app_page):
    needs("albert", "bert")
    at = app_page(ACTIVATIONS_PAGE, word="40", measure="euclid")
    assert not at.exception
    text = shown_text(at)
    assert "Ignored `measure=euclid`" in text and "does not exist in this text" in text
    assert at.selectbox(key="word").value == 0

    at.text_area(key="text").set_value("   ").run()
    assert not at.exception
    assert any("empty" in w.value for w in at.warning)

    at.text_area(key="text").set_value("猫が好き 🐱 שלום").run()
    assert not at.exception
    assert "outside its vocabulary" in shown_text(at)

    at.text_area(key="text").set_value(" ".join(["the little girl found a red ball"] * 60)).run()
    assert not at.exception
    assert any("only the first" in w.value for w in at.warning)
