"""The distillation page through the router: soft targets at T, the temperature sweep, the recipe's three
loss terms for the input, the measured size and speed of the pair; bad input and URL state."""

import json

import pytest

from app.models import catalogue
from tests.conftest import shown_text

PAGE = "pages/distillation.py"


@pytest.fixture(autouse=True)
def _pair_built():
    missing = [k for k in ("bert", "distilbert") if not catalogue.get(k).bundled_available()]
    if missing:
        pytest.skip(f"no bundled checkpoint for {', '.join(missing)} yet")


def figures(at) -> dict:
    out = {}
    for chart in at.get("plotly_chart"):
        for name in ("soft-targets", "temperature", "kl-per-token", "claims"):
            if f"fig-distillation-{name}" in chart.proto.id:
                out[name] = json.loads(chart.proto.spec)
    return out


def table(at, column: str):
    return next(d.value for d in at.dataframe if column in d.value.columns)


def test_defaults_show_soft_targets_terms_and_measurements(app_page):
    at = app_page(PAGE)
    assert not at.exception
    text = shown_text(at)
    assert "DistilBERT: distillation" in text and "Takeaway" in text
    figs = figures(at)
    assert set(figs) == {"soft-targets", "temperature", "kl-per-token", "claims"}
    bars = figs["soft-targets"]["data"]
    assert len(bars) == 4 and len(bars[0]["y"]) >= 8  # teacher's top 8 (+ the student's extra ones)
    # at T = 2 the teacher's top token loses probability: flatter than T = 1
    assert max(bars[1]["y"]) < max(bars[0]["y"]) and max(bars[3]["y"]) < max(bars[2]["y"])
    sweep = figs["temperature"]["data"]
    assert all(b >= a - 1e-6 for a, b in zip(sweep[0]["y"], sweep[0]["y"][1:]))  # entropy rises with T
    # the loss table: three terms and their weighted total (α = 5, 2, 1 at T = 2)
    terms = table(at, "weighted, T = 2")
    assert len(terms) == 4
    kl, mlm, cos = terms["at T = 2 (recipe)"][:3]
    assert terms["weighted, T = 2"].iloc[3] == pytest.approx(5 * kl + 2 * mlm + cos, rel=1e-6)
    # the pair, measured: half the layers, fewer parameters, positive latencies
    size = table(at, "layers").set_index("model")
    teacher, student = size.loc["teacher (BERT)"], size.loc["student (DistilBERT)"]
    assert student["layers"] * 2 == teacher["layers"] and student["parameters"] < teacher["parameters"]
    latency = next(c for c in size.columns if c.startswith("forward on"))
    assert teacher[latency] > 0 and student[latency] > 0
    assert "40% smaller, 60% faster, 97%" in text and "retained" in text
    assert list(figs["claims"]["data"][0]["y"]) == pytest.approx([40, 60, 97])


def test_temperature_slider_and_url_round_trip(app_page):
    at = app_page(PAGE, temperature="4.5", top_k="5", word="6")
    assert not at.exception
    assert at.slider(key="temperature").value == 4.5 and at.slider(key="top_k").value == 5
    assert at.selectbox(key="word").value == 6 and "Soft targets for `ball`" in shown_text(at)
    assert "at your T = 4.5" in table(at, "weighted, T = 2").columns
    hot = max(figures(at)["soft-targets"]["data"][1]["y"])
    at.slider(key="temperature").set_value(1.0).run()
    assert not at.exception
    cold = max(figures(at)["soft-targets"]["data"][1]["y"])
    assert cold > hot  # a lower temperature: a sharper teacher
    assert at.query_params["temperature"] in (["1"], "1")


def test_bad_values_in_the_link_get_notes(app_page):
    at = app_page(PAGE, temperature="99", word="x")
    assert not at.exception
    text = shown_text(at)
    assert "Ignored `temperature=99`" in text and "Ignored `word=x`" in text
    assert at.slider(key="temperature").value == 2.0


def test_empty_long_and_strange_input(app_page):
    at = app_page(PAGE, text="\n  \n")
    assert not at.exception
    assert any("Type a sentence" in w.value for w in at.warning)
    at = app_page(PAGE, text=" ".join(["The little girl found a red ball in the park."] * 21))
    assert not at.exception
    assert "reads at most 128" in shown_text(at)
    at = app_page(PAGE, text="</script><img src=x onerror=alert(1)> 😀 שלום", word="0")
    assert not at.exception
    spec = json.dumps(figures(at), ensure_ascii=False)
    assert "<img" not in spec and "</script>" not in spec


def test_values_left_by_other_lessons_under_the_same_keys(app_page):
    # the ELECTRA lesson's temperature goes down to 0.1, the XLNet lesson's top_k is another range, ...
    at = app_page()  # another page first (home), as if the values were left there
    at.session_state["temperature"] = 0.1
    at.session_state["top_k"] = 50
    at.session_state["text"] = "A cat sat on the mat."
    at.switch_page(PAGE).run()
    assert not at.exception
    assert at.slider(key="temperature").value == 2.0 and at.slider(key="top_k").value == 8
    assert at.text_area(key="text").value == "A cat sat on the mat."  # a valid sentence follows the student
