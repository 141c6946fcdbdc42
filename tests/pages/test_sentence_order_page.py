"""The NSP vs SOP page through the router: both heads on the typed pair in both orders, the generated
pairs, the accuracy grid, URL state, bad input and a missing head. Asserts what the page shows (figure data,
metrics, table rows, notes), not its wording. Models: tests/test_sentence_order.py's stand-in folder."""

from __future__ import annotations

import html
import json

import pytest

from app.lessons import sentence_order as so
from tests.conftest import app_device_label, shown_text
from tests.test_sentence_order import standin_root  # noqa: F401  (a fixture)

PAGE = "pages/sentence_order.py"
K = "sentence_order."  # the page's widget keys are scoped to it; sentence A is the shared text box ("text")


@pytest.fixture(autouse=True)
def standins(standin_root, monkeypatch):  # noqa: F811
    """The page loads the stand-ins; no model (or failure to load one) cached by an earlier test is reused."""
    from app.ui import loading as ui_loading

    monkeypatch.setenv("BVE_BUNDLED_DIR", str(standin_root))
    ui_loading._load.clear()
    yield
    ui_loading._load.clear()


def chart(at, name: str) -> dict:
    return json.loads(next(c for c in at.get("plotly_chart") if f"fig-{name}" in c.proto.id).proto.spec)


def page_result(inputs):
    """The Result the page drew for ``inputs``: ``so.run`` on the models the page loaded, from the page's own store
    (``app.ui.cache.shared_result``) — the page computed exactly that key, so nothing runs again (the default view's
    pair pools cost 14 s of CPU). Fails if the page did not compute that very key."""
    from app.ui import loading as ui_loading
    from app.ui.cache import result_key, shared_counts, shared_result

    settings = ui_loading.default_settings()
    page_models = {k: ui_loading.shared_model(k, *settings) for k in so.MODELS}
    assert result_key(so.run, page_models, inputs) is not None  # kept, so shared
    computed = shared_counts().get("computed", 0)
    r = shared_result(so.run, page_models, inputs)
    assert shared_counts().get("computed", 0) == computed, "the page did not run so.run on these inputs"
    return r


def test_defaults_show_both_heads_on_the_pair_the_examples_and_the_grid(app_page):
    at = app_page(PAGE)
    assert not at.exception
    r = page_result(so.Inputs())
    order = chart(at, "sentence-order-your-pair")["data"]
    assert [t["y"] for t in order] == [
        pytest.approx([r.user[k][0][1], r.user[k][1][1]]) for k in ("albert", "bert-nsp")
    ]
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["SOP head (ALBERT): P(swapped) for (A, B)"] == f"{r.user['albert'][0][1]:.1%}"
    assert metrics["NSP head (BERT): P(not next) for (A, B)"] == f"{r.user['bert-nsp'][0][1]:.1%}"
    grid = chart(at, "sentence-order-accuracy")["data"][0]["z"]
    assert grid == [pytest.approx([r.accuracy[k]["nsp"], r.accuracy[k]["sop"]]) for k in ("albert", "bert-nsp")]
    table = at.dataframe[0].value
    assert len(table) == 3 * so.DEFAULTS.examples and list(table["A"]) == [s.pair.a for s in r.examples]
    assert list(table["shared words"]) == [s.shared for s in r.examples]
    badge = " ".join(m.value for m in at.sidebar.markdown)
    assert "ALBERT" in badge and "BERT (NSP head)" in badge and app_device_label() in badge
    assert "bundled stand-in for google-bert/bert-base-uncased" in shown_text(at)


def test_url_state_restores_the_widgets_and_a_malformed_value_gets_a_note(app_page):
    at = app_page(PAGE, text_b="The ball was red.", seed="4", examples="2")
    assert not at.exception
    assert at.text_area(key=K + "text_b").value == "The ball was red."
    assert at.number_input(key=K + "seed").value == 4 and at.slider(key=K + "examples").value == 2
    assert len(at.dataframe[0].value) == 6
    pairs = so.generate_pairs(so.load_stories(), so.DEFAULTS.sample_pairs, so.DEFAULTS.pool_seed)
    shown = [p for b in so.shown_bases(4, 2) for p in pairs[3 * b : 3 * b + 3]]  # seed 4 picks two of the pool
    assert list(at.dataframe[0].value["B"]) == [p.b for p in shown]
    bad = app_page(PAGE, examples="99", seed="x")
    assert not bad.exception
    text = shown_text(bad)
    assert "Ignored `examples=99`" in text and "Ignored `seed=x`" in text
    assert bad.slider(key=K + "examples").value == so.DEFAULTS.examples


def test_swapping_the_sentences_swaps_the_bars(app_page):
    at = app_page(PAGE)
    before = [t["y"] for t in chart(at, "sentence-order-your-pair")["data"]]
    at.text_area(key="text").set_value(so.DEFAULT_B)
    at.text_area(key=K + "text_b").set_value(so.DEFAULT_A).run()
    assert not at.exception
    after = [t["y"] for t in chart(at, "sentence-order-your-pair")["data"]]
    assert [y[::-1] for y in before] == [pytest.approx(y) for y in after]


@pytest.mark.parametrize("key", ["text", K + "text_b"])
def test_an_empty_sentence_asks_for_two_and_the_badge_is_still_drawn(app_page, key):
    at = app_page(PAGE)
    at.text_area(key=key).set_value("   ").run()
    assert not at.exception
    assert at.warning and not at.get("plotly_chart")
    assert app_device_label() in " ".join(m.value for m in at.sidebar.markdown)


def test_emoji_cjk_and_a_long_pair_get_notes_not_errors(app_page):
    at = app_page(PAGE)
    at.text_area(key="text").set_value("😀🎉 你好 مرحبا").run()
    assert not at.exception and at.info and at.get("plotly_chart")
    at.text_area(key="text").set_value(" ".join(["The dog ran to the big tree and sat down."] * 12)).run()
    assert not at.exception
    assert any(str(so.DEFAULTS.max_tokens) in w.value for w in at.warning)


def test_a_missing_nsp_checkpoint_leaves_the_sop_head(app_page, standin_root, tmp_path, monkeypatch):  # noqa: F811
    from app.ui import loading as ui_loading

    partial = tmp_path / "models"
    partial.mkdir()
    (partial / "albert").symlink_to(standin_root / "albert", target_is_directory=True)
    monkeypatch.setenv("BVE_BUNDLED_DIR", str(partial))
    ui_loading._load.clear()
    at = app_page(PAGE)
    assert not at.exception
    assert any("NSP head" in w.value for w in at.warning)
    assert [t["name"] for t in chart(at, "sentence-order-your-pair")["data"]] == ["SOP head (ALBERT): P(swapped)"]


def fake_heads(monkeypatch, says):
    """Every head answers P(does not follow) = says(objective, kind of pair) instead of running: a grid chosen
    by the test. kind: "in order" / "other story" / "swapped" for the pool's pairs, "yours" for the typed pair."""
    import streamlit as st

    pool = so.generate_pairs(so.load_stories(), so.DEFAULTS.sample_pairs, so.DEFAULTS.pool_seed)
    kind = {(p.a, p.b): p.kind for p in pool}

    def head_probs(loaded, pairs):
        p = [says(so.OBJECTIVES[loaded.variant.key], kind.get(pair, "yours")) for pair in pairs]
        return tuple((1 - x, x) for x in p)

    monkeypatch.setattr(so, "head_probs", head_probs)
    st.cache_data.clear()  # the page's cache keys a step by its code, the same for every fake: no fake's answers kept


def test_heads_at_chance_are_said_to_be_at_chance_not_the_papers_pattern(app_page, monkeypatch):
    fake_heads(monkeypatch, lambda objective, kind: 0.4)  # always "follows": 50% on both tasks, for both heads
    at = app_page(PAGE)
    assert not at.exception
    text = shown_text(at)
    assert "Why NSP is easy and SOP is not" not in text and "in miniature" not in text
    assert [h.value for h in at.header][1] == "Who solves which task here — not the paper's pattern"
    assert "not the pattern of ALBERT's Table 5" in html.unescape(
        chart(at, "sentence-order-accuracy")["layout"]["title"]["text"]
    )
    assert "50.0% on NSP of 120 pairs" in text and "50.0% on SOP of 120 pairs" in text
    assert text.count("beats chance on neither task") == 2 and text.count("**not** the paper's pattern") == 2
    assert "90.5% on NSP and 52.0% on SOP" in text  # what the paper found, beside what the heads did


def test_heads_that_show_the_papers_pattern_get_its_heading(app_page, monkeypatch):
    def says(objective, kind):  # NSP head: a topic detector; SOP head: an order detector that also sees topics
        return 0.9 if kind == "other story" or (objective == "sop" and kind == "swapped") else 0.1

    fake_heads(monkeypatch, says)
    at = app_page(PAGE)
    assert not at.exception
    text = shown_text(at)
    assert [h.value for h in at.header][1] == "Why NSP is easy and SOP is not"
    assert "in miniature" in html.unescape(chart(at, "sentence-order-accuracy")["layout"]["title"]["text"])
    assert text.count("That is the paper's pattern") == 2 and "**not** the paper's pattern" not in text
    assert "100.0% on NSP of 120 pairs" in text and "50.0% on SOP of 120 pairs" in text


def test_the_own_pair_caption_reports_each_heads_move_on_this_pair(app_page):
    at = app_page(PAGE)
    assert not at.exception
    caption = next(c.value for c in at.caption if c.value.startswith("Bars: each head's softmax probability"))
    assert "On your pair: " in caption and "when swapped" in caption
    assert "An order-aware head goes up when the pair is swapped" not in caption  # a rule, not what happened
