"""The XLNet lesson through the router: the order, the two streams, live predictions beside a masked LM,
the attention check, typed orders (good and bad), the context-free target, and state in the URL.
Asserts what the page shows (values, tables, figure data), computed from the library, not its wording."""

import base64
import json

import numpy as np
import pytest

from app.core import text
from app.lessons import xlnet
from tests.conftest import shown_text

PAGE = "pages/xlnet.py"
K = "xlnet."  # the page's widget keys are scoped to it; the text box is shared ("text")
TEXT = xlnet.DEFAULT_TEXT


@pytest.fixture(scope="module")
def pieces():
    """The default sentence's content pieces, from the bundled tokenizer (so the expectations follow it)."""
    from transformers import AutoTokenizer

    from app.models import catalogue

    tok = AutoTokenizer.from_pretrained(catalogue.get("xlnet").bundled_path)
    p = xlnet.xlnet_pieces(tok, TEXT)
    return list(p.pieces[: p.n_content])


def listed(pieces_, positions) -> str:
    return " → ".join(text.md(pieces_[t]) for t in positions)


def expected(bundled, **inputs) -> xlnet.Result:
    """What the library computes for the same inputs: the page must show exactly this."""
    return xlnet.run({k: bundled(k) for k in xlnet.MODELS}, xlnet.Inputs(**inputs))


def figure(at, name: str) -> dict:
    return json.loads(next(c for c in at.get("plotly_chart") if name in c.proto.id).proto.spec)


def z_of(trace) -> np.ndarray:
    """A heatmap's z: plotly's JSON holds numpy arrays as {"dtype", "bdata" (base64), "shape"}, lists otherwise."""
    z = trace["z"]
    if isinstance(z, dict) and "bdata" in z:
        flat = np.frombuffer(base64.b64decode(z["bdata"]), dtype=z["dtype"]).astype(float)
        return flat.reshape([int(n) for n in str(z["shape"]).split(",")]) if z.get("shape") else flat
    return np.array(z, dtype=float)


def test_defaults_show_order_masks_predictions_and_a_passing_check(app_page, bundled, pieces):
    n = len(pieces)
    order = xlnet.make_order("random", n, 0)
    n_targets = xlnet.n_targets_for(n, k=xlnet.DEFAULTS.k)
    targets = order[n - n_targets :]
    r = expected(bundled)
    at = app_page(PAGE)
    assert not at.exception
    text_ = shown_text(at)
    assert f"{n} content pieces" in text_ and "<sep> <cls>" in text_
    assert f"**Order:** {' → '.join(map(str, order))}." in text_  # seed 0
    assert f"({n_targets} = ceil({n} / {xlnet.DEFAULTS.k})), in this order: {listed(pieces, targets)}." in text_
    assert "exactly 0" in at.success[0].value and f"{r.n_layers} layers" in at.success[0].value
    assert len(at.get("plotly_chart")) == 3  # order, stream masks, attention
    xl_table, bert_table, checks = (d.value for d in at.dataframe)
    assert list(xl_table["target"]) == [pieces[t] for t in targets]
    assert list(xl_table["step"]) == list(range(n - n_targets, n))
    assert list(xl_table["p(actual)"]) == pytest.approx([q.actual for q in r.predictions])
    assert list(xl_table["rank"]) == [q.rank for q in r.predictions]
    assert xl_table["top-5"].str.count("·").eq(4).all()
    for target, masked in zip(bert_table["target"], bert_table["masked"]):  # aligned by characters
        assert (
            masked.replace(" ", "").replace("##", "") in target.lstrip("▁").lower()
            or target.lstrip("▁").lower() in masked
        )
    assert list(bert_table["p(actual)"]) == pytest.approx([q.mlm_actual for q in r.predictions])
    assert (checks["max prob on a blocked cell"] == 0).all() and len(checks) == 2 * r.n_layers
    assert not at.warning
    masks = figure(at, "xlnet-stream-masks")
    np.testing.assert_array_equal(z_of(masks["data"][0]), r.masks.content_mask.numpy())
    att = z_of(figure(at, "xlnet-attention")["data"][0])  # the last layer's query stream
    rows = list(r.masks.targets)
    np.testing.assert_allclose(att[rows], r.attention[rows], atol=1e-6)
    assert "bundled stand-in for xlnet/xlnet-base-cased" in text_  # which model produced it
    badge = " ".join(m.value for m in at.sidebar.markdown)
    assert "XLNet" in badge and "BERT" in badge


def test_a_typed_order_round_trips_through_the_url(app_page, pieces):
    n = len(pieces)
    backwards = " ".join(str(i) for i in reversed(range(n)))
    at = app_page(PAGE, order="typed", typed=backwards, split="count", n_targets="3", top_k="3")
    assert not at.exception
    assert at.radio(key=K + "order").value == "typed"
    assert at.text_input(key=K + "typed").value == backwards
    assert at.number_input(key=K + "n_targets").value == 3 and at.slider(key=K + "top_k").value == 3
    assert f"in this order: {listed(pieces, [2, 1, 0])}." in shown_text(at)
    assert list(at.dataframe[0].value["step"]) == [n - 3, n - 2, n - 1]
    assert at.dataframe[0].value["top-3"].str.count("·").eq(2).all()
    # bad typed orders: a warning naming the number, then a fallback to left to right
    for typed, number in [("0 0 1", "0"), (f"{backwards} {n}", str(n)), ("0 1 2", "3"), ("a b", "`a`")]:
        at.text_input(key=K + "typed").set_value(typed).run()
        assert not at.exception
        warning = " ".join(w.value for w in at.warning)
        assert number in warning, (typed, warning)
        assert "**Order:** 0 → 1 → 2" in shown_text(at)
    at.text_input(key=K + "typed").set_value("").run()  # nothing typed yet: a hint, not a complaint
    assert not at.warning and any("empty" in i.value for i in at.info)
    mine = "3 1 4 2 0 " + " ".join(str(i) for i in range(5, n))
    at.text_input(key=K + "typed").set_value(mine).run()
    assert not at.warning and at.query_params["typed"] in (mine, [mine])
    assert "**Order:** 3 → 1 → 4 → 2 → 0" in shown_text(at)


def test_a_target_with_nothing_visible_is_marked_not_predicted(app_page, pieces):
    n = len(pieces)
    at = app_page(PAGE, order="left-to-right", split="count", n_targets=str(xlnet.DEFAULTS.max_pieces), specials="0")
    assert not at.exception
    assert any(f"only {n} pieces" in i.value for i in at.info)
    assert len(at.warning) == 2  # the blocked row, and the uniform row in the check
    table = at.dataframe[0].value
    assert table["top-5"][0].startswith("—") and table["sees"][0] == "nothing" and table["p(actual)"].isna()[0]
    assert table["p(actual)"][1:].notna().all()
    assert "exactly 0" in at.success[0].value and f"{n - 1} target row(s)" in at.success[0].value
    assert at.dataframe[2].value["context-free rows"].max() == 1
    assert at.toggle(key=K + "specials").value is False


def test_stream_and_layer_pick_the_map_and_survive_a_link(app_page, bundled):
    r = expected(bundled, stream="content", layer=1)
    at = app_page(PAGE, stream="content", layer="1")
    assert not at.exception
    assert at.radio(key=K + "stream").value == "content" and at.selectbox(key=K + "layer").value == 1
    att = z_of(figure(at, "xlnet-attention")["data"][0])
    np.testing.assert_allclose(att, r.attention, atol=1e-6)  # every row: the content stream computes them all
    at.selectbox(key=K + "layer").set_value(0).run()
    assert not at.exception and "layer" not in at.query_params


def test_bad_text_and_bad_links_get_messages_not_tracebacks(app_page, bundled):
    at = app_page(PAGE, k="abc", order="sideways", layer="48")
    assert not at.exception
    text_ = shown_text(at)
    assert "Ignored `k=abc`" in text_ and "Ignored `order=sideways`" in text_
    n_layers = expected(bundled).n_layers
    assert any(f"{n_layers} layers" in i.value for i in at.info) and at.selectbox(key=K + "layer").value == 0
    assert at.slider(key=K + "k").value == xlnet.DEFAULTS.k and at.radio(key=K + "order").value == "random"
    for bad in ("   ", "<sep>"):
        at.text_area(key="text").set_value(bad).run()
        assert not at.exception and at.warning and not at.get("plotly_chart")
    tok_unk = bundled("xlnet").tokenizer.unk_token
    at.text_area(key="text").set_value("😀 猫が好き שלום " + "The cat sat on the mat. " * 6).run()
    assert not at.exception
    notes = " ".join(i.value for i in at.info)
    assert str(xlnet.DEFAULTS.max_pieces) in notes and text.md(tok_unk) in notes and "😀" in notes
    assert len(at.dataframe[0].value) == xlnet.n_targets_for(xlnet.DEFAULTS.max_pieces, k=xlnet.DEFAULTS.k)
    at.text_area(key="text").set_value("The dog ran. " * 200).run()  # a paste longer than the box
    assert not at.exception and len(at.text_area(key="text").value) == 1000
    assert any("2,600" in i.value for i in at.info)
