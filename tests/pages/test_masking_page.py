"""The masking lab through the router: the epochs × positions grid, coverage, whole words and spans,
live predictions, bad input and URL state."""

import json

import pytest

from app import masking
from app.models import catalogue
from tests.conftest import shown_text

PAGE = "pages/masking.py"


def needs(*keys):
    missing = [k for k in keys if not catalogue.get(k).bundled_available()]
    if missing:
        pytest.skip(f"no bundled checkpoint for {', '.join(missing)} yet")


def figures(at) -> dict:
    """name -> plotly spec of every figure on the page (the key ui.show_figure gives it: fig-<name>)."""
    out = {}
    for chart in at.get("plotly_chart"):
        spec = json.loads(chart.proto.spec)
        out[next(n for n in ("grid", "coverage", "distinct", "span-lengths", "predictions") if f"masking-{n}" in chart.proto.id)] = spec
    return out


def query(at, name: str):
    value = at.query_params.get(name)
    return value[-1] if isinstance(value, list) else value


def metric(at, label: str) -> str:
    return next(m.value for m in at.metric if m.label == label)


def test_defaults_show_grid_coverage_and_predictions(app_page):
    needs("bert")
    at = app_page(PAGE)
    assert not at.exception
    text = shown_text(at)
    assert "Masking lab" in text and "Takeaway" in text
    figs = figures(at)
    assert set(figs) == {"grid", "coverage", "distinct", "predictions"}
    z = figs["grid"]["data"][0]["z"]
    assert len(z) == 20  # default: 20 epochs
    assert all(row[0] == 4 and row[-1] == 4 for row in z)  # [CLS], [SEP]: special, never a target
    assert all(z[e] == z[e + 10] for e in range(10))  # static ×10 repeats every 10 epochs
    assert "customdata" in figs["grid"]["data"][0]["hovertemplate"]
    assert metric(at, "Distinct masks") == "10"
    # coverage: simulated (solid) and analytic (dashed) for three strategies; static stays flat at about p
    cov = figs["coverage"]["data"]
    assert len(cov) == 6 and len(cov[0]["y"]) == masking.LAB.max_epochs
    assert max(cov[0]["y"]) - min(cov[0]["y"]) < 1e-12 and abs(cov[0]["y"][0] - 0.15) < 0.03
    assert cov[4]["y"][-1] > cov[2]["y"][-1] > cov[0]["y"][-1]  # dynamic > static ×10 > static
    # the pieces table marks special tokens
    pieces = at.dataframe[0].value
    assert pieces.iloc[0, 1] == "[CLS]" and pieces.iloc[3, 1] == "★"
    # live predictions: one row per target of epoch 1, probabilities in [0, 1]
    table = at.dataframe[1].value
    n_targets = sum(k != 0 for k in figs["grid"]["data"][0]["z"][0] if k != 4)
    assert len(table) == n_targets > 0
    assert table["p(original)"].between(0, 1).all() and (table["rank of original"] >= 1).all()
    assert len(figs["predictions"]["data"][0]["z"][0]) == 5


def test_strategies_units_and_epochs_drive_the_page(app_page):
    needs("bert")
    at = app_page(PAGE, text="The little girl found a red ball in the park. She kicked it over the puddles.")
    assert not at.exception
    at.radio(key="strategy").set_value("static").run()
    assert metric(at, "Distinct masks") == "1"
    z = figures(at)["grid"]["data"][0]["z"]
    assert all(row == z[0] for row in z)  # the same mask every epoch
    at.radio(key="strategy").set_value("dynamic").run()
    at.slider(key="epochs").set_value(30).run()
    assert metric(at, "Distinct masks") == "30"
    assert int(metric(at, "Words split by a mask")) > 0  # token masking splits 'puddle ##s'
    at.radio(key="unit").set_value("word").run()
    assert metric(at, "Words split by a mask") == "0"
    assert not at.exception
    at.radio(key="unit").set_value("span").run()
    assert not at.exception and metric(at, "Words split by a mask") == "0"
    spans = figures(at)["span-lengths"]
    assert len(spans["data"][2]["y"]) == 10  # the truncated geometric pmf, lengths 1..10
    assert "expected **3.80** words" in shown_text(at)
    at.slider(key="epoch").set_value(7).run()
    grid = figures(at)["grid"]["layout"]["shapes"][0]
    assert grid["y0"] == 5.5  # epoch 7 outlined
    assert "fills the blanks of epoch 7" in shown_text(at)
    assert query(at, "strategy") == "dynamic" and query(at, "unit") == "span" and query(at, "epochs") == "30"


def test_url_restores_the_view_and_reports_bad_values(app_page):
    needs("bert")
    at = app_page(PAGE, strategy="dynamic", epochs="12", unit="word", seed="3", rate="0.3", epoch="40", topk="abc")
    assert not at.exception
    assert at.radio(key="strategy").value == "dynamic" and at.radio(key="unit").value == "word"
    assert at.slider(key="epochs").value == 12 and at.number_input(key="seed").value == 3
    assert at.slider(key="rate").value == pytest.approx(0.3)
    assert at.slider(key="epoch").value == 12  # clamped to the epochs shown
    assert metric(at, "Distinct masks") == "12"
    assert any(i.value.startswith("Ignored `topk=abc") for i in at.info)
    at = app_page(PAGE, rate="2", strategy="sometimes")
    notes = [i.value for i in at.info]
    assert any(n.startswith("Ignored `rate=2") for n in notes) and any(n.startswith("Ignored `strategy=sometimes") for n in notes)
    assert at.slider(key="rate").value == pytest.approx(0.15) and not at.exception


def test_bad_input_gets_clear_messages(app_page):
    needs("bert")
    at = app_page(PAGE, text="   ")
    assert not at.exception and any("Type a sentence" in i.value for i in at.info)
    assert not at.get("plotly_chart")
    at.text_area(key="text").input("The cat 😀 saw 東京 and שלום.").run()
    assert not at.exception
    warning = " ".join(w.value for w in at.warning)
    assert "emoji" in warning and "CJK" in warning and "right-to-left" in warning
    at.text_area(key="text").input("The dog ran to the park. " * 40).run()
    assert not at.exception and any("the lab uses the first **128**" in w.value for w in at.warning)
    assert len(figures(at)["grid"]["data"][0]["z"][0]) == 128
    at.slider(key="mask_frac").set_value(0.8).run()
    at.slider(key="random_frac").set_value(0.5).run()
    assert not at.exception
    assert any("more than 100%" in w.value and "Using random = 20%" in w.value for w in at.warning)
    at.text_area(key="text").input("<script>alert(1)</script> ** _x_").run()
    assert not at.exception
    at.text_area(key="text").input("The [MASK] ran to the park.").run()
    assert not at.exception and any("special tokens" in i.value for i in at.info)
    assert all(row[2] == 4 for row in figures(at)["grid"]["data"][0]["z"])  # the typed [MASK] is never a target


def test_other_tokenizers(app_page):
    needs("roberta")
    at = app_page(PAGE, variant="roberta")
    assert not at.exception
    pieces = at.dataframe[0].value
    assert pieces.iloc[0, 1] == "<s>" and "Ġlittle" in list(pieces.iloc[0]) and "`Ġ`" in shown_text(at)
    grid = figures(at)["grid"]["data"][0]
    assert grid["x"][0] == "0·&lt;s&gt;"  # escaped for plotly
    assert masking.LAB.max_tokens >= len(grid["x"])
