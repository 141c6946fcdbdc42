"""The XLNet lesson through the router: the order, the two streams, live predictions beside a masked LM,
the attention check, typed orders (good and bad), the context-free target, and state in the URL."""

import pytest

from tests.conftest import shown_text

PAGE = "pages/xlnet.py"
TEXT = "The little girl found a red ball in the park."


@pytest.fixture(scope="module")
def pieces():
    """The default sentence's content pieces, from the bundled tokenizer (so the expectations follow it)."""
    from transformers import AutoTokenizer

    from app import xlnet
    from app.models import catalogue

    tok = AutoTokenizer.from_pretrained(catalogue.get("xlnet").bundled_path)
    p = xlnet.xlnet_pieces(tok, TEXT)
    return list(p.pieces[: p.n_content])


def listed(pieces_, positions) -> str:
    return " → ".join(f"`{pieces_[t]}`" for t in positions)


def test_defaults_show_order_masks_predictions_and_a_passing_check(app_page, pieces):
    from app import xlnet

    n = len(pieces)
    order = xlnet.make_order("random", n, 0)
    n_targets = -(-n // 6)
    targets = order[n - n_targets :]
    at = app_page(PAGE)
    assert not at.exception
    text = shown_text(at)
    assert f"{n} content pieces" in text and "<sep> <cls>" in text
    assert f"**Order:** {' → '.join(map(str, order))}." in text  # seed 0
    assert f"**Predicted** ({n_targets} = ceil({n} / 6)), in this order: {listed(pieces, targets)}." in text
    assert "exactly 0" in at.success[0].value and "4 layers" in at.success[0].value
    assert len(at.get("plotly_chart")) == 3  # order, stream masks, attention
    xl_table, bert_table, checks = (d.value for d in at.dataframe)
    assert list(xl_table["target"]) == [pieces[t] for t in targets]
    assert list(xl_table["step"]) == list(range(n - n_targets, n))
    assert xl_table["p(actual)"].between(0, 1).all() and xl_table["top-5"].str.count("·").eq(4).all()
    for target, masked in zip(bert_table["target"], bert_table["masked"]):  # aligned by characters
        assert masked.replace(" ", "").replace("##", "") in target.lstrip("▁").lower() or target.lstrip("▁").lower() in masked
    assert "aligned **by characters**" in text
    assert (checks["max prob on a blocked cell"] == 0).all() and len(checks) == 8
    assert not at.warning


def test_a_typed_order_round_trips_through_the_url(app_page, pieces):
    n = len(pieces)
    backwards = " ".join(str(i) for i in reversed(range(n)))
    at = app_page(PAGE, order="typed", typed=backwards, split="count", n_targets="3", top_k="3")
    assert not at.exception
    assert at.radio(key="order").value == "typed"
    assert at.text_input(key="typed").value == backwards
    assert at.number_input(key="n_targets").value == 3
    assert f"in this order: {listed(pieces, [2, 1, 0])}." in shown_text(at)
    assert list(at.dataframe[0].value["step"]) == [n - 3, n - 2, n - 1]
    assert at.dataframe[0].value["top-3"].str.count("·").eq(2).all()
    # bad typed orders: a clear message, then a fallback to left to right
    for typed, says in [("0 0 1", "appears more than once"), (f"{backwards} {n}", f"{n} is out of range"),
                        ("0 1 2", "are missing"), ("a b", "are not piece numbers")]:
        at.text_input(key="typed").set_value(typed).run()
        assert not at.exception
        warning = " ".join(w.value for w in at.warning)
        assert "Your order can't be used" in warning and says in warning, (typed, warning)
        assert "**Order:** 0 → 1 → 2" in shown_text(at)
    at.text_input(key="typed").set_value("").run()  # nothing typed yet: a hint, not a complaint
    assert not at.warning and "Type your order above: the order is empty" in shown_text(at)
    mine = "3 1 4 2 0 " + " ".join(str(i) for i in range(5, n))
    at.text_input(key="typed").set_value(mine).run()
    assert not at.warning and at.query_params["typed"] in (mine, [mine])
    assert "**Order:** 3 → 1 → 4 → 2 → 0" in shown_text(at)


def test_a_target_with_nothing_visible_is_marked_not_predicted(app_page, pieces):
    n = len(pieces)
    at = app_page(PAGE, order="left-to-right", split="count", n_targets="24", specials="0")
    assert not at.exception
    text = shown_text(at)
    assert f"The text has only {n} pieces, so {n} are predicted" in text
    assert "its query row is fully blocked" in text and "uniform" in text
    table = at.dataframe[0].value
    assert table["top-5"][0].startswith("— no context") and table["p(actual)"].isna()[0]
    assert table["p(actual)"][1:].notna().all()
    assert "exactly 0" in at.success[0].value and f"{n - 1} target row(s)" in at.success[0].value
    assert at.dataframe[2].value["context-free rows"].max() == 1


def test_bad_text_and_bad_links_get_messages_not_tracebacks(app_page):
    at = app_page(PAGE, k="abc", order="sideways", layer="10")
    assert not at.exception
    text = shown_text(at)
    assert "Ignored `k=abc`" in text and "Ignored `order=sideways`" in text
    assert "This model has 4 layers; showing the last one" in text and at.selectbox(key="layer").value == 0
    for bad, says in [("   ", "The text is empty"), ("<sep>", "no pieces the model can use")]:
        at.text_area(key="text").set_value(bad).run()
        assert not at.exception and says in " ".join(w.value for w in at.warning)
    at.text_area(key="text").set_value("😀 猫が好き שלום " + "The cat sat on the mat. " * 6).run()
    assert not at.exception
    text = shown_text(at)
    assert "keeps the first 24" in text and "are `<unk>`" in text and "control tokens" not in text
    assert len(at.dataframe[0].value) == 4  # ceil(24 / 6)
