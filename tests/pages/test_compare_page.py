"""The side-by-side page through the router: every variant's tokens, guesses, ELECTRA's view and measured
cost on one sentence; the guide generated from the numbers; bad input and URL state."""

import json

import pytest

from app.models import catalogue
from tests.conftest import shown_text

PAGE = "pages/compare.py"
LABELS = [v.label for v in catalogue.CATALOGUE.values()]


@pytest.fixture(autouse=True)
def _all_built():
    missing = [k for k, v in catalogue.CATALOGUE.items() if not v.bundled_available()]
    if missing:
        pytest.skip(f"no bundled checkpoint for {', '.join(missing)} yet")


def figures(at) -> dict:
    """name -> plotly spec, for every figure the page showed through ui.show_figure (key fig-compare-<name>)."""
    out = {}
    for chart in at.get("plotly_chart"):
        for name in ("tokens", "fill-mask", "electra", "cost"):
            if f"fig-compare-{name}" in chart.proto.id:
                out[name] = json.loads(chart.proto.spec)
    return out


def cost_table(at):
    return next(d.value for d in at.dataframe if "forward, median (ms)" in d.value.columns)


def test_defaults_show_every_variant_side_by_side(app_page):
    at = app_page(PAGE)
    assert not at.exception
    text = shown_text(at)
    assert "Variants side by side" in text and "Takeaway" in text
    figs = figures(at)
    assert set(figs) == {"tokens", "fill-mask", "electra", "cost"}
    # tokens: one row per variant, one column per word; "ball" is one piece for everyone
    z = figs["tokens"]["data"][0]["z"]
    assert len(z) == len(LABELS) and all(len(row) == 11 for row in z) and all(row[6] == 1 for row in z)
    # guesses: the five masked LMs and XLNet, top-5 each
    fm = figs["fill-mask"]["data"][0]
    assert len(fm["z"]) == 6 and all(len(row) == 5 for row in fm["z"])
    assert any("permutation" in y for y in fm["y"])
    assert all(row == sorted(row, reverse=True) for row in fm["z"])
    # ELECTRA: as written, and with the generator's guess swapped in
    assert len(figs["electra"]["data"][0]["z"]) == 2
    assert all(0 <= p <= 1 for p in figs["electra"]["data"][0]["z"][0])
    # cost: measured, positive, for every variant
    table = cost_table(at)
    assert list(table["variant"]) == LABELS
    assert (table["forward, median (ms)"] > 0).all() and (table["parameters (M)"] > 0).all()
    assert (table["memory (MiB)"] * 2**20 >= table["parameters (M)"] * 1e6 * 4).all()
    assert list(figs["cost"]["data"][2]["y"]) == pytest.approx(list(table["forward, median (ms)"]))
    # the guide names the variant the table measured fastest and the one with fewest parameters
    fastest = table.sort_values("forward, median (ms)")["variant"].iloc[0]
    smallest = table.sort_values("parameters (M)")["variant"].iloc[0]
    assert "Need speed?" in text and fastest in text.split("Need speed?")[1].split("\n")[0]
    assert f"Short on memory?** {smallest} is the smallest" in text


def test_url_restores_the_word_and_k_and_reruns_reuse_the_timings(app_page):
    at = app_page(PAGE, word="2", top_k="3")
    assert not at.exception
    assert at.selectbox(key="word").value == 2 and at.slider(key="top_k").value == 3
    assert "Guessing the hidden word: `girl`" in shown_text(at)
    assert all(len(row) == 3 for row in figures(at)["fill-mask"]["data"][0]["z"])
    before = list(cost_table(at)["forward, median (ms)"])
    at.slider(key="top_k").set_value(4).run()
    assert not at.exception
    assert list(cost_table(at)["forward, median (ms)"]) == before  # cached per sentence: not re-timed
    at.selectbox(key="word").set_value(6).run()
    assert "Guessing the hidden word: `ball`" in shown_text(at)
    assert at.query_params["word"] in (["6"], "6")


def test_malformed_and_out_of_range_word_get_notes(app_page):
    at = app_page(PAGE, word="abc")
    assert not at.exception
    assert "Ignored `word=abc`" in shown_text(at)
    assert at.selectbox(key="word").value == 9
    at = app_page(PAGE, word="40")
    assert not at.exception
    assert "beyond this text's 11 words" in shown_text(at)
    assert at.selectbox(key="word").value == 10


def test_empty_text_asks_for_a_sentence(app_page):
    at = app_page(PAGE, text="   ")
    assert not at.exception
    assert any("Type a sentence" in w.value for w in at.warning)
    assert not at.get("plotly_chart")


def test_emoji_rtl_and_injection_are_shown_as_text(app_page):
    text = '<script>alert(1)</script> 😀 مرحبا the "ball"'
    at = app_page(PAGE, text=text, word="3")
    assert not at.exception
    shown = shown_text(at)
    assert "unknown token" in shown and "Byte-level BPE" in shown
    tokens = figures(at)["tokens"]
    ticks = tokens["layout"]["xaxis"]["ticktext"]
    assert ticks[:3] == ["&lt;", "script", "&gt;"] 
    assert any("&lt;" in row[0] for row in tokens["data"][0]["text"])  # RoBERTa's bytes cover "<"
    assert not any("<" in t and not t.startswith("<b>") for t in ticks)  # only our own markup stays HTML
    assert "<script>" not in json.dumps(figures(at)["fill-mask"], ensure_ascii=False)


def test_long_text_is_cut_for_every_model_with_a_note(app_page):
    at = app_page(PAGE, text=" ".join(["The little girl found a red ball in the park."] * 21))
    assert not at.exception
    assert "reads at most 128" in shown_text(at)
    table = cost_table(at)
    assert (table["tokens"] <= 128).all() and (table["tokens"] > 100).any()


def test_a_split_word_is_explained(app_page):
    at = app_page(PAGE, text="The girl saw a unicode sign.", word="4")
    assert not at.exception
    text = shown_text(at)
    assert "several for" in text and "mask tokens at once" in text


def test_values_left_by_other_lessons_under_the_same_keys(app_page):
    at = app_page()  # another page first (home), as if the values were left there
    at.session_state["top_k"] = 15  # the distillation lesson allows up to 20
    at.session_state["word"] = -1
    at.switch_page(PAGE).run()
    assert not at.exception
    assert at.slider(key="top_k").value == 5 and at.selectbox(key="word").value == 9
