"""The masking lab through the router: the epochs × positions grid, coverage, whole words and spans, live
predictions, bad input and URL state. Asserts what the page shows (values, tables, figure data), computed
from the library where it depends on the tokenizer, not its wording."""

from __future__ import annotations

import json

import pytest

from app.lessons import masking as lab
from app.masking import KEEP
from app.models import catalogue
from tests.conftest import app_device_label, require_bundled, shown_text

PAGE = "pages/masking.py"
K = "masking."  # the page's widget keys are scoped to it; the text box is shared ("text")
SPECIAL = 4  # the grid's value for a special token


def needs(*keys):
    require_bundled(*keys)


def figures(at) -> dict:
    """name -> plotly spec of every figure on the page (the key ui.show_figure gives it: fig-masking-<name>)."""
    out = {}
    for chart in at.get("plotly_chart"):
        name = chart.proto.id.split("fig-masking-")[-1]
        out[name] = json.loads(chart.proto.spec)
    return out


def query(at, name: str):
    value = at.query_params.get(name)
    return value[-1] if isinstance(value, list) else value


def metric(at, label: str) -> str:
    return next(m.value for m in at.metric if m.label == label)


def expected(bundled, **inputs) -> lab.Result:
    """What the library computes for the same inputs: the page must show exactly this."""
    variant = inputs.get("variant", "bert")
    return lab.run({variant: bundled(variant)}, lab.Inputs(**inputs))


def test_defaults_show_grid_coverage_and_predictions(app_page, bundled):
    needs("bert")
    at = app_page(PAGE)
    assert not at.exception
    r = expected(bundled)
    assert at.title[0].value == "Masking lab" and "Takeaway" in shown_text(at)
    figs = figures(at)
    assert set(figs) == {"grid", "coverage", "distinct", "predictions"}
    grid = figs["grid"]["data"][0]
    z = grid["z"]
    assert len(z) == 20  # default: 20 epochs
    assert z == [[SPECIAL if s else k for k, s in zip(row, r.sentence.special)] for row in r.kinds]
    assert all(row[0] == SPECIAL and row[-1] == SPECIAL for row in z)  # [CLS], [SEP]: special, never a target
    assert all(z[e] == z[e + 10] for e in range(10))  # static ×10 repeats every 10 epochs
    assert "customdata" in grid["hovertemplate"]
    assert metric(at, "Distinct masks") == "10"
    # coverage: simulated (solid) and analytic (dashed) for three strategies; static stays flat at about p
    cov = figs["coverage"]["data"]
    assert len(cov) == 6 and len(cov[0]["y"]) == lab.LAB.max_epochs
    assert cov[0]["y"] == pytest.approx(list(r.coverage.simulated["static"]))
    assert max(cov[0]["y"]) - min(cov[0]["y"]) < 1e-12 and abs(cov[0]["y"][0] - 0.15) < 0.03
    assert cov[4]["y"][-1] > cov[2]["y"][-1] > cov[0]["y"][-1]  # dynamic > static ×10 > static
    # the pieces table marks special tokens
    pieces = at.dataframe[0].value
    assert pieces.iloc[0, 1] == r.sentence.pieces[0] == "[CLS]" and pieces.iloc[3, 1] == "★"
    assert list(pieces.iloc[0, 1:]) == list(r.sentence.pieces)
    # live predictions: one row per target of epoch 1, probabilities in [0, 1]
    table = at.dataframe[1].value
    n_targets = sum(k not in (KEEP, SPECIAL) for k in z[0])
    assert len(table) == n_targets == len(r.predictions) > 0
    assert list(table["position"]) == [p.position for p in r.predictions]
    assert list(table["top guess"]) == [p.guesses.pieces[0] for p in r.predictions]
    assert table["p(original)"].between(0, 1).all() and (table["rank of original"] >= 1).all()
    assert len(figs["predictions"]["data"][0]["z"][0]) == 5
    assert (
        metric(at, "Original token ranked first")
        == f"{sum(p.rank_original == 1 for p in r.predictions)} of {n_targets}"
    )
    # which model produced the guesses, and the badge
    assert r.shown_as in shown_text(at)
    assert app_device_label() in " ".join(m.value for m in at.sidebar.markdown)


def test_strategies_units_and_epochs_drive_the_page(app_page, bundled):
    needs("bert")
    text = "The little girl found a red ball in the park. She kicked it over the puddles."
    at = app_page(PAGE, text=text)
    assert not at.exception
    at.radio(key=K + "strategy").set_value("static").run()
    assert metric(at, "Distinct masks") == "1"
    z = figures(at)["grid"]["data"][0]["z"]
    assert all(row == z[0] for row in z)  # the same mask every epoch
    at.radio(key=K + "strategy").set_value("dynamic").run()
    at.slider(key=K + "epochs").set_value(30).run()
    assert metric(at, "Distinct masks") == "30" and len(figures(at)["grid"]["data"][0]["z"]) == 30
    token = expected(bundled, text=text, strategy="dynamic", epochs=30)
    assert int(metric(at, "Words split by a mask")) == token.coverage.split
    assert (token.coverage.split > 0) == (token.multi_piece_words > 0)  # token masking splits 'puddle ##s'
    at.radio(key=K + "unit").set_value("word").run()
    assert not at.exception and metric(at, "Words split by a mask") == "0"
    at.radio(key=K + "unit").set_value("span").run()
    assert not at.exception and metric(at, "Words split by a mask") == "0"
    spans = figures(at)["span-lengths"]
    assert len(spans["data"][2]["y"]) == 10  # the truncated geometric pmf, lengths 1..10
    assert spans["layout"]["shapes"][0]["x0"] == pytest.approx(3.797, abs=1e-3)  # SpanBERT's mean ≈ 3.8
    at.selectbox(key=K + "epoch").set_value(7).run()
    figs = figures(at)
    assert figs["grid"]["layout"]["shapes"][0]["y0"] == 5.5  # epoch 7 outlined
    r = expected(bundled, text=text, strategy="dynamic", epochs=30, unit="span", epoch=7)
    assert [p.position for p in r.predictions] == [i for i, k in enumerate(r.kinds[6]) if k != KEEP]
    if r.predictions:
        assert list(at.dataframe[1].value["position"]) == [p.position for p in r.predictions]
        at.slider(key=K + "topk").set_value(3).run()
        assert len(figures(at)["predictions"]["data"][0]["z"][0]) == 3
    assert query(at, "strategy") == "dynamic" and query(at, "unit") == "span" and query(at, "epochs") == "30"
    assert query(at, "epoch") == "7"


def test_url_restores_the_view_and_reports_bad_values(app_page):
    needs("bert")
    at = app_page(PAGE, strategy="dynamic", epochs="12", unit="word", seed="3", rate="0.3", epoch="40", topk="abc")
    assert not at.exception
    assert at.radio(key=K + "strategy").value == "dynamic" and at.radio(key=K + "unit").value == "word"
    assert at.slider(key=K + "epochs").value == 12 and at.number_input(key=K + "seed").value == 3
    assert at.slider(key=K + "rate").value == pytest.approx(0.3)
    assert at.selectbox(key=K + "epoch").value == 12  # the inspected epoch is one of the epochs shown
    assert metric(at, "Distinct masks") == "12"
    assert any(i.value.startswith("Ignored `topk=abc") for i in at.info)
    at = app_page(PAGE, rate="2", strategy="sometimes")
    notes = [i.value for i in at.info]
    assert any(n.startswith("Ignored `rate=2") for n in notes) and any(
        n.startswith("Ignored `strategy=sometimes") for n in notes
    )
    assert at.slider(key=K + "rate").value == pytest.approx(0.15) and at.radio(key=K + "strategy").value == "static10"
    assert not at.exception


def test_bad_input_gets_clear_messages(app_page, bundled):
    needs("bert")
    at = app_page(PAGE, text="   ")
    assert not at.exception and at.warning and not at.get("plotly_chart")
    at.text_area(key="text").input("The cat 😀 saw 東京 and שלום.").run()
    assert not at.exception and at.get("plotly_chart")
    notes = " ".join(i.value for i in at.info)
    assert "😀" in notes and "東京" in notes and "שלום" in notes  # named: the vocabulary has no piece for them
    at.text_area(key="text").input("The dog ran to the park. " * 40).run()
    assert not at.exception and any(str(lab.LAB.max_tokens) in w.value for w in at.warning)
    assert len(figures(at)["grid"]["data"][0]["z"][0]) == lab.LAB.max_tokens
    at.slider(key=K + "mask_frac").set_value(0.8).run()
    at.slider(key=K + "random_frac").set_value(0.5).run()
    assert not at.exception
    assert any("20%" in w.value for w in at.warning)  # random lowered to what the mask share leaves
    at.text_area(key="text").input("<script>alert(1)</script> ** _x_").run()
    assert not at.exception
    assert not any("<script>" in x for x in figures(at)["grid"]["data"][0]["x"])  # escaped for plotly
    at.text_area(key="text").input("The [MASK] ran to the park.").run()
    assert not at.exception and any("`[MASK]`" in i.value for i in at.info)
    assert all(row[2] == SPECIAL for row in figures(at)["grid"]["data"][0]["z"])  # the typed [MASK] is never a target
    at.text_area(key="text").input("[MASK]").run()
    assert not at.exception and at.warning and not at.get("plotly_chart")  # nothing left to mask


def test_a_paste_longer_than_the_box_is_cut_with_a_note(app_page):
    needs("bert")
    at = app_page(PAGE)
    at.text_area(key="text").set_value("The dog ran. " * 10_000).run()
    assert not at.exception
    assert len(at.text_area(key="text").value) == 1000
    assert any("130,000" in i.value for i in at.info)
    assert len(figures(at)["grid"]["data"][0]["z"][0]) == lab.LAB.max_tokens


def test_other_tokenizers(app_page, bundled):
    needs("roberta")
    at = app_page(PAGE, variant="roberta")
    assert not at.exception
    r = expected(bundled, variant="roberta")
    pieces = at.dataframe[0].value
    assert pieces.iloc[0, 1] == "<s>" and list(pieces.iloc[0, 1:]) == list(r.sentence.pieces)
    assert "Ġlittle" in list(pieces.iloc[0]) and "`Ġ`" in shown_text(at)
    grid = figures(at)["grid"]["data"][0]
    assert grid["x"][0] == "0·&lt;s&gt;"  # escaped for plotly
    assert len(grid["x"]) == len(r.sentence.ids) <= lab.LAB.max_tokens
    assert r.shown_as in shown_text(at)


@pytest.mark.parametrize("key", ["deberta", "modernbert"])
def test_every_masked_lm_is_offered_and_one_that_cannot_load_says_so(app_page, key):
    at = app_page(PAGE, variant=key)
    assert not at.exception
    assert catalogue.get(key).label in at.selectbox(key=K + "variant").options
    if catalogue.get(key).bundled_available():
        assert at.get("plotly_chart")
    else:
        assert at.error and catalogue.get(key).label in at.error[0].value and not at.get("plotly_chart")


def test_a_quote_or_byte_level_guess_is_shown_as_the_tokenizer_decodes_it_escaped_once(app_page, bundled):
    """Issue 26: BERT's guesses for "." showed as `&quot;` (escaped for HTML, and plotly does not decode that name)
    and `a€`. A guess is escaped exactly once (app.core.text.html) and plotly draws the piece itself; "a€" is a
    piece of the stand-in's own vocabulary (its training text had mojibake quotes), which the tokenizer decodes so."""
    from app.core import text as txt
    from tests.test_text import plotly_shows

    needs("bert")
    at = app_page(PAGE)
    r = expected(bundled)
    tok = bundled("bert").tokenizer
    cells = figures(at)["predictions"]["data"][0]["text"]
    shown = [[plotly_shows(c).removesuffix(" ✓") for c in row] for row in cells]
    assert shown == [list(p.guesses.pieces) for p in r.predictions]
    assert any('"' in row for row in shown)  # the default sentence's "." gets a quote among its guesses
    for p in r.predictions:  # each piece as the tokenizer decodes it, decoded once (mlm: app.core.text.piece_text)
        assert list(p.guesses.words) == [tok.decode([i]).strip() for i in p.guesses.ids]
    # the same guesses through a byte-level tokenizer: its pieces decoded once, and escaped once on the way in
    roberta = bundled("roberta").tokenizer
    for piece in ("\u0120\"", "\u00e2\u0122\u013e", "."):  # 'Ġ"', the first bytes of a curly quote, "."
        i = roberta.convert_tokens_to_ids(piece)
        if i != roberta.unk_token_id:
            word = txt.piece_text(roberta, i)
            assert "\ufffd" not in word and plotly_shows(txt.html(word)) == word


def test_spanberts_boundary_objective_for_the_span_in_the_link(app_page, bundled):
    """Issue 49 item 10: with span masking, the chosen span's boundaries and relative positions (the ``span``
    parameter round-trips the URL), the model's MLM guesses beside them, and what the model cannot show."""
    needs("bert")
    base = dict(strategy="dynamic", unit="span")
    epoch, r = next(
        (e, x)
        for e in range(1, 21)
        for x in [expected(bundled, epoch=e, span=2, **base)]
        if x.sbo is not None and x.sbo.n_spans >= 2
    )
    at = app_page(PAGE, epoch=str(epoch), span="2", **base)
    assert not at.exception
    assert at.selectbox(key=K + "span").value == 2 and query(at, "span") == "2"
    sbo = figures(at)["sbo"]["data"][0]
    assert len(sbo["z"]) == len(r.sbo.span) and sbo["y"] == [
        f"{t.position}·{t.original} (p{t.relative})" for t in r.sbo.targets
    ]
    text = shown_text(at)
    assert "6 · SpanBERT's span-boundary objective" in [h.value for h in at.header]
    assert f"Span 2 of {r.sbo.n_spans} covers positions {r.sbo.span.start}–{r.sbo.span.end}" in text
    assert "None of this lab's models was trained with SBO" in text and "What it cannot show" in text
    at.selectbox(key=K + "span").set_value(1).run()
    assert not at.exception and query(at, "span") is None  # the default stays out of the link
    assert len(figures(at)["sbo"]["data"][0]["z"]) == len(expected(bundled, epoch=epoch, span=1, **base).sbo.span)


def test_without_span_masking_the_boundary_objective_says_how_to_see_it(app_page):
    needs("bert")
    at = app_page(PAGE)
    assert not at.exception and "sbo" not in figures(at)
    assert any("Span (SpanBERT)" in i.value and "span-boundary objective" in i.value for i in at.info)
